// The MPI side of scripts/bench --sweep: OSU-style point-to-point and collective sweeps
// (osu_common.hpp says what each benchmark and timing is). One source, built twice: against
// Open MPI (bench/CMakeLists.txt, osu_mpi) and against MPICH (scripts/bench-sweep compiles it with
// mpicxx.mpich into osu_mpich). Run it as the sweep does:
//   mpirun -np 2 --bind-to core osu_mpi --bench all_reduce --mode latency --impl openmpi
//   mpiexec.mpich -np 2 -bind-to core osu_mpich --bench latency,bandwidth --impl mpich
#include <mpi.h>

#include <cstring>
#include <optional>

#include "osu_common.hpp"

namespace {

struct Buffers {
  std::vector<char> in, out;
};

Buffers buffers_for(const std::string& bench, std::size_t m, std::size_t p) {
  const auto [in, out] = osu::buffer_sizes(bench, m, p);
  Buffers b;
  b.in.assign(std::max<std::size_t>(in, 4), 1);
  b.out.assign(std::max<std::size_t>(out, 4), 0);
  for (std::size_t i = 0; i + 4 <= b.in.size() && osu::is_reduction(bench); i += 4) {
    const float one = 1.0F;
    std::memcpy(b.in.data() + i, &one, 4);
  }
  return b;
}

void collective(osu::Op op, Buffers& b, int m) {
  char* in = b.in.data();
  char* out = b.out.data();
  const int floats = m / 4;
  switch (op) {
    case osu::Op::barrier: MPI_Barrier(MPI_COMM_WORLD); return;
    case osu::Op::broadcast: MPI_Bcast(in, m, MPI_CHAR, 0, MPI_COMM_WORLD); return;
    case osu::Op::reduce:
      MPI_Reduce(in, out, floats, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
      return;
    case osu::Op::all_reduce:
      MPI_Allreduce(in, out, floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      return;
    case osu::Op::all_gather:
      MPI_Allgather(in, m, MPI_CHAR, out, m, MPI_CHAR, MPI_COMM_WORLD);
      return;
    case osu::Op::reduce_scatter:
      MPI_Reduce_scatter_block(in, out, floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      return;
    case osu::Op::scan: MPI_Scan(in, out, floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); return;
    case osu::Op::all_to_all:
      MPI_Alltoall(in, m, MPI_CHAR, out, m, MPI_CHAR, MPI_COMM_WORLD);
      return;
    case osu::Op::gather: MPI_Gather(in, m, MPI_CHAR, out, m, MPI_CHAR, 0, MPI_COMM_WORLD); return;
    case osu::Op::scatter:
      MPI_Scatter(in, m, MPI_CHAR, out, m, MPI_CHAR, 0, MPI_COMM_WORLD);
      return;
  }
}

struct Batch {
  double per_op;   // what a line reports, seconds (the same on every rank)
  double elapsed;  // the slowest rank's whole batch, seconds
};

Batch run_batch(const std::string& bench, const osu::Args& a, Buffers& b, int m, long iters,
                int rank, int p) {
  std::vector<MPI_Request> requests(static_cast<std::size_t>(a.window));
  const osu::Op op = osu::is_point_to_point(bench) ? osu::Op::barrier : osu::op_of(bench);
  double measured = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  if (bench == "latency") {
    for (long i = 0; i < iters; ++i) {
      if (rank == 0) {
        MPI_Send(b.in.data(), m, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(b.out.data(), m, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(b.out.data(), m, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(b.in.data(), m, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
      }
    }
    measured = (MPI_Wtime() - start) / (2.0 * static_cast<double>(iters));
  } else if (bench == "bandwidth") {
    for (long i = 0; i < iters; ++i) {
      if (rank == 0) {
        for (int w = 0; w < a.window; ++w)
          MPI_Isend(b.in.data(), m, MPI_CHAR, 1, 2, MPI_COMM_WORLD,
                    &requests[static_cast<std::size_t>(w)]);
        MPI_Waitall(a.window, requests.data(), MPI_STATUSES_IGNORE);
        MPI_Recv(b.out.data(), 4, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        for (int w = 0; w < a.window; ++w)
          MPI_Irecv(b.out.data(), m, MPI_CHAR, 0, 2, MPI_COMM_WORLD,
                    &requests[static_cast<std::size_t>(w)]);
        MPI_Waitall(a.window, requests.data(), MPI_STATUSES_IGNORE);
        MPI_Send(b.in.data(), 4, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
      }
    }
    measured = (MPI_Wtime() - start) / (static_cast<double>(iters) * a.window);
  } else if (a.mode == "latency") {
    for (long i = 0; i < iters; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      collective(op, b, m);
      measured += MPI_Wtime() - t0;
    }
    measured /= static_cast<double>(iters);
  } else {
    for (long i = 0; i < iters; ++i) collective(op, b, m);
    measured = (MPI_Wtime() - start) / static_cast<double>(iters);
  }
  const double elapsed = MPI_Wtime() - start;
  Batch out{};
  MPI_Allreduce(&elapsed, &out.elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (osu::is_point_to_point(bench)) {  // rank 0's figure
    out.per_op = measured;
    MPI_Bcast(&out.per_op, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  } else if (a.mode == "latency") {  // the mean over the ranks
    MPI_Allreduce(&measured, &out.per_op, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    out.per_op /= p;
  } else {  // the slowest rank
    MPI_Allreduce(&measured, &out.per_op, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  return out;
}

void measure(const std::string& bench, std::size_t bytes, const osu::Args& a, int rank, int p) {
  Buffers b = buffers_for(bench, bytes, static_cast<std::size_t>(p));
  const int m = static_cast<int>(bytes);
  run_batch(bench, a, b, m, 2, rank, p);  // warm-up
  long iters = 1;
  Batch t = run_batch(bench, a, b, m, iters, rank, p);
  while (t.elapsed < osu::kCalibrationSeconds && iters < osu::kMaxIterations) {
    iters *= 2;
    t = run_batch(bench, a, b, m, iters, rank, p);
  }
  iters = osu::iterations_for(t.elapsed / static_cast<double>(iters), a);
  const auto [per_op, calls] = osu::measured_batches(
      a, iters, [&](long n) { return run_batch(bench, a, b, m, n, rank, p); });
  if (rank == 0) osu::print_line(a, bench, bytes, per_op, calls);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int rc = 0;
  try {
    osu::Args a = osu::parse(argc, argv, "mpi");
    a.p = p;
    for (const std::string& bench : a.benches)
      if (osu::is_point_to_point(bench) && p < 2)
        throw std::invalid_argument(bench + " needs two ranks");
    std::optional<Buffers> warm;  // the warm-up's, made at its first batch
    osu::warm_up(a, [&](const std::string& bench, std::size_t bytes, long iters) {
      if (!warm) warm = buffers_for(bench, bytes, static_cast<std::size_t>(p));
      return run_batch(bench, a, *warm, static_cast<int>(bytes), iters, rank, p).elapsed;
    });
    for (const std::string& bench : a.benches)
      for (const std::size_t bytes : osu::sizes(bench, a)) measure(bench, bytes, a, rank, p);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "osu_mpi: %s\n", e.what());
    rc = 2;
  }
  MPI_Finalize();
  return rc;
}
