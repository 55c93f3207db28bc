// Open MPI peer for bench_collectives: the same operations and sizes, one MPI process per VP.
//
//   broadcast MPI_Bcast (root 0)        reduce MPI_Reduce (root 0, MPI_SUM)
//   all_reduce MPI_Allreduce            all_gather MPI_Allgather (m per rank)
//   reduce_scatter MPI_Reduce_scatter_block (m per rank)
//   scan MPI_Scan                       all_to_all MPI_Alltoall (m per pair)
//   gather MPI_Gather, scatter MPI_Scatter (root 0, m per rank)
//   barrier MPI_Barrier
//   all_to_allv MPI_Alltoallv with skewed counts (peer::skewed_count)
//   gatherv MPI_Gatherv, scatterv MPI_Scatterv (root 0), all_gatherv MPI_Allgatherv, with
//               rank i's block peer::uneven_count(i, bytes) elements
//   row_broadcast MPI_Bcast (root 0) on MPI_Comm_split row communicators of 4 ranks (rank / 4),
//                 every row at once: the groups benchmark (scripts/bench-groups)
//   row_all_reduce MPI_Allreduce (MPI_SUM) on the same row communicators, every row at once
// Data are doubles. Timing: MPI_Wtime around N calls after an MPI_Barrier, N chosen by a
// calibration (rank 0 decides from the slowest rank), the slowest rank's time / N per batch,
// the median over batches. Rank 0 prints one line per measurement (peer_common.hpp).
// Run it as scripts/bench does:
//   mpirun --oversubscribe --allow-run-as-root -np 8 --bind-to none
//          --mca mpi_yield_when_idle 1 mpi_bench --op all_reduce,barrier --bytes 8 --impl mpi-yield
#include <mpi.h>

#include <cstring>

#include "peer_common.hpp"

namespace {

struct Buffers {
  std::vector<double> in, out;
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;  // all_to_allv
  std::vector<int> counts, displs;                                      // gatherv, ...
};

// The row communicator of this rank: ranks r*4 .. r*4+3, as a 4-column mesh's rows.
MPI_Comm row_comm() {
  static MPI_Comm row = MPI_COMM_NULL;
  if (row == MPI_COMM_NULL) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split(MPI_COMM_WORLD, rank / 4, rank, &row);
  }
  return row;
}

void one_call(const std::string& op, Buffers& b, int n, int p) {
  double* in = b.in.data();
  double* out = b.out.data();
  (void)p;
  if (op == "barrier")
    MPI_Barrier(MPI_COMM_WORLD);
  else if (op == "broadcast")
    MPI_Bcast(in, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  else if (op == "all_to_allv")
    MPI_Alltoallv(in, b.send_counts.data(), b.send_displs.data(), MPI_DOUBLE, out,
                  b.recv_counts.data(), b.recv_displs.data(), MPI_DOUBLE, MPI_COMM_WORLD);
  else if (op == "row_broadcast")
    MPI_Bcast(in, n, MPI_DOUBLE, 0, row_comm());
  else if (op == "row_all_reduce")
    MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, row_comm());
  else if (op == "gatherv" || op == "scatterv" || op == "all_gatherv") {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int mine = b.counts[static_cast<std::size_t>(rank)];
    if (op == "gatherv")
      MPI_Gatherv(in, mine, MPI_DOUBLE, out, b.counts.data(), b.displs.data(), MPI_DOUBLE, 0,
                  MPI_COMM_WORLD);
    else if (op == "scatterv")
      MPI_Scatterv(in, b.counts.data(), b.displs.data(), MPI_DOUBLE, out, mine, MPI_DOUBLE, 0,
                   MPI_COMM_WORLD);
    else
      MPI_Allgatherv(in, mine, MPI_DOUBLE, out, b.counts.data(), b.displs.data(), MPI_DOUBLE,
                     MPI_COMM_WORLD);
  } else if (op == "reduce")
    MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  else if (op == "all_reduce")
    MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  else if (op == "all_gather")
    MPI_Allgather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, MPI_COMM_WORLD);
  else if (op == "reduce_scatter")
    MPI_Reduce_scatter_block(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  else if (op == "scan")
    MPI_Scan(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  else if (op == "all_to_all")
    MPI_Alltoall(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, MPI_COMM_WORLD);
  else if (op == "gather")
    MPI_Gather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  else if (op == "scatter")
    MPI_Scatter(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

Buffers buffers_for(const std::string& op, std::size_t n, std::size_t p, int rank) {
  Buffers b;
  std::size_t in = n, out = n;
  if (op == "all_gather" || op == "gather") out = n * p;
  if (op == "reduce_scatter" || op == "scatter") in = n * p;
  if (op == "all_to_all") in = out = n * p;
  if (op == "barrier" || op == "broadcast" || op == "row_broadcast") out = 0;
  if (op == "all_to_allv") {
    const int np = static_cast<int>(p);
    in = out = 0;
    for (int j = 0; j < np; ++j) {
      b.send_displs.push_back(static_cast<int>(in));
      b.recv_displs.push_back(static_cast<int>(out));
      b.send_counts.push_back(static_cast<int>(peer::skewed_count(rank, j, np, n * 8)));
      b.recv_counts.push_back(static_cast<int>(peer::skewed_count(j, rank, np, n * 8)));
      in += static_cast<std::size_t>(b.send_counts.back());
      out += static_cast<std::size_t>(b.recv_counts.back());
    }
  }
  if (op == "gatherv" || op == "scatterv" || op == "all_gatherv") {
    std::size_t total = 0;
    for (int j = 0; j < static_cast<int>(p); ++j) {
      b.displs.push_back(static_cast<int>(total));
      b.counts.push_back(static_cast<int>(peer::uneven_count(j, n * 8)));
      total += static_cast<std::size_t>(b.counts.back());
    }
    const auto mine = static_cast<std::size_t>(b.counts[static_cast<std::size_t>(rank)]);
    in = op == "scatterv" ? total : mine;
    out = op == "scatterv" ? mine : total;
  }
  b.in.assign(std::max<std::size_t>(in, 1), 1.0 + rank);
  b.out.assign(std::max<std::size_t>(out, 1), 0.0);
  return b;
}

const std::vector<std::string> kOps{
    "broadcast",  "reduce",   "all_reduce",  "all_gather",    "reduce_scatter", "scan",
    "all_to_all", "gather",   "scatter",     "barrier",       "row_broadcast",  "all_to_allv",
    "gatherv",    "scatterv", "all_gatherv", "row_all_reduce"};

void measure(const std::string& op, std::size_t bytes, int rank, int p, const peer::Args& args) {
  const std::size_t n = bytes / sizeof(double);
  if (n > static_cast<std::size_t>(INT32_MAX)) {
    if (rank == 0) peer::print_skip(args.impl, op, p, bytes, "skipped");
    return;
  }
  Buffers b = buffers_for(op, n, static_cast<std::size_t>(p), rank);
  const int count = static_cast<int>(n);
  one_call(op, b, count, p);  // warm-up, checked
  if (op == "all_reduce" && n > 0 && b.out[0] != p * (p + 1) / 2.0)
    std::fprintf(stderr, "mpi_bench: all_reduce rank %d: got %g\n", rank, b.out[0]);

  long reps = 1;
  for (;; reps *= 4) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (long k = 0; k < reps; ++k) one_call(op, b, count, p);
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (slowest >= peer::calibration_seconds(args) || reps >= (1 << 16) || args.reps > 0) {
      reps = peer::reps_for(slowest / static_cast<double>(reps), args);
      break;
    }
  }
  MPI_Bcast(&reps, 1, MPI_LONG, 0, MPI_COMM_WORLD);  // identical already; make it certain

  std::vector<double> batch;
  for (int k = 0; k < args.batches; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (long r = 0; r < reps; ++r) one_call(op, b, count, p);
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    batch.push_back(slowest / static_cast<double>(reps));
  }
  if (rank == 0) peer::print_line(args.impl, op, p, bytes, peer::median(batch), reps, args.batches);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int rc = 0;
  try {
    const peer::Args args = peer::parse(argc, argv, "mpi");
    if (!args.ps.empty() && (args.ps.size() != 1 || args.ps[0] != p))
      throw std::invalid_argument("--p must be the number of ranks (" + std::to_string(p) + ")");
    for (const std::string& op : args.ops)
      if (std::find(kOps.begin(), kOps.end(), op) == kOps.end())
        throw std::invalid_argument("no operation " + op);
    for (const std::string& op : args.ops)
      for (std::size_t bytes : peer::sizes_for(op, args)) {
        if (peer::too_big(op, bytes, p, args)) {
          if (rank == 0) peer::print_skip(args.impl, op, p, bytes, "skipped");
          continue;
        }
        measure(op, bytes, rank, p, args);
      }
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "mpi_bench: %s\n", e.what());
    rc = 2;
  }
  MPI_Finalize();
  return rc;
}
