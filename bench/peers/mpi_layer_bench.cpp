// hypercomm::mpi: the cost of a collective when the machine is spread over processes, and the
// layer's overhead over plain MPI (scripts/bench-mpi runs it):
//   mpirun -np N mpi_layer_bench --vps P [--peer] [--iters K] [--sizes LIST] [--bytes N]
//                                [--op NAME,...] [--algo NAME] [--funneled] [--one-by-one]
// runs all_reduce, broadcast and all_gather of 8 B and 1 MiB (--sizes: these instead, as
// 8,16K,64K,1M) on hypercube(log2 P) spread over the N processes (P/N VPs each) and prints one
// markdown row per measurement: microseconds per call, the median of 5 batches of K calls each
// (default 2000 up to 8 B, 200 up to 64 KiB, 10 above). --bytes N: only that size. --peer (with
// P == N: one VP per process) also times MPI_Allreduce, MPI_Bcast and MPI_Allgather on the same
// processes, back to back, batch by batch, and prints the ratio hypercomm / MPI. --one-by-one
// instead times each of K calls (default 20000) of one run on VP 0 (and, with --peer, of MPI on
// rank 0) and prints their mean, median, 99th percentile, maximum and how many took over 10 us:
// what a rare slow call costs, which a batch's mean hides. --algo runs hypercomm's collectives
// with that algorithm instead of automatic's choice (the layout column names it).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <hypercomm/mpi.hpp>
#include <string>
#include <utility>
#include <vector>

namespace hc = hypercomm;

namespace {

enum class Op { all_reduce, broadcast, all_gather };
const char* name(Op op) {
  return op == Op::all_reduce ? "all_reduce" : op == Op::broadcast ? "broadcast" : "all_gather";
}

// "8 B", "16 KiB", "1 MiB"; and back: 8, 16K, 1M (0 where it is not a size).
std::string size_text(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}
std::size_t parse_size(const std::string& text) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return 0;
  const std::string unit = end;
  if (unit.empty() || unit == "B") return n;
  if (unit == "K" || unit == "KiB") return n << 10;
  if (unit == "M" || unit == "MiB") return n << 20;
  return 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

hc::Algo g_algo = hc::Algo::automatic;  // --algo

// One call of op by a VP, and the same by an MPI rank (n doubles each, in and out).
void hypercomm_call(hc::Proc& vp, Op op, std::vector<double>& in, std::vector<double>& out) {
  if (op == Op::all_reduce) hc::all_reduce(vp, in, out, std::plus<>{}, g_algo);
  if (op == Op::broadcast) hc::broadcast(vp, in, 0, g_algo);
  if (op == Op::all_gather) hc::all_gather(vp, in, out, g_algo);
}
void mpi_call(Op op, std::vector<double>& in, std::vector<double>& out) {
  const int n = static_cast<int>(in.size());
  if (op == Op::all_reduce)
    MPI_Allreduce(in.data(), out.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (op == Op::broadcast) MPI_Bcast(in.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (op == Op::all_gather)
    MPI_Allgather(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, MPI_COMM_WORLD);
}
// The buffers of a call of op: n doubles in, n (p * n for the all-gather) out.
std::pair<std::vector<double>, std::vector<double>> buffers(Op op, std::size_t bytes, int p,
                                                            double value) {
  const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(double));
  return {std::vector<double>(n, value),
          std::vector<double>(op == Op::all_gather ? n * static_cast<std::size_t>(p) : n)};
}

// One batch of `iters` calls on every VP; VP 0's seconds per call (between two barriers).
double hypercomm_batch(hc::mpi::Machine& machine, Op op, std::size_t bytes, int iters) {
  double per_call = 0;
  (void)machine.run([&](hc::Proc& vp) {
    auto [in, out] = buffers(op, bytes, vp.size(), vp.id());
    hc::barrier(vp);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) hypercomm_call(vp, op, in, out);
    hc::barrier(vp);
    if (vp.id() == 0)
      per_call =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
  });
  MPI_Bcast(&per_call, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);  // VP 0 lives in process 0
  return per_call;
}

double mpi_batch(Op op, std::size_t bytes, int iters) {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  auto [in, out] = buffers(op, bytes, p, 1.0);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) mpi_call(op, in, out);
  MPI_Barrier(MPI_COMM_WORLD);
  double per_call = (MPI_Wtime() - t0) / iters;
  MPI_Bcast(&per_call, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return per_call;
}

// The calls' microseconds, one by one: mean, median, 99th percentile, max, and calls over 10 us.
std::string distribution(std::vector<double> us) {
  if (us.empty()) return "| | | | |";
  double sum = 0;
  int slow = 0;
  for (const double t : us) {
    sum += t;
    slow += t > 10 ? 1 : 0;
  }
  std::sort(us.begin(), us.end());
  char text[160];
  std::snprintf(text, sizeof text, "%.2f | %.2f | %.2f | %.1f | %d",
                sum / static_cast<double>(us.size()), us[us.size() / 2], us[us.size() * 99 / 100],
                us.back(), slow);
  return text;
}

// One run of `calls` calls, each timed on VP 0; then, with `peer`, as many MPI calls on rank 0.
void one_by_one(hc::mpi::Machine& machine, Op op, std::size_t bytes, int calls, bool peer,
                const std::string& layout) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> ours, theirs;
  (void)machine.run([&](hc::Proc& vp) {
    auto [in, out] = buffers(op, bytes, vp.size(), vp.id());
    std::vector<double> times(vp.id() == 0 ? static_cast<std::size_t>(calls) : 0);
    hc::barrier(vp);
    for (int i = 0; i < calls; ++i) {
      const auto t0 = Clock::now();
      hypercomm_call(vp, op, in, out);
      if (vp.id() == 0)
        times[static_cast<std::size_t>(i)] =
            std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    }
    if (vp.id() == 0) ours = std::move(times);
  });
  if (peer) {
    int p = 1, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    auto [in, out] = buffers(op, bytes, p, 1.0);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < calls; ++i) {
      const double t0 = MPI_Wtime();
      mpi_call(op, in, out);
      if (rank == 0) theirs.push_back((MPI_Wtime() - t0) * 1e6);
    }
  }
  if (!ours.empty())  // process 0, which runs VP 0
    std::printf("| %s | %s | %s | %s | %s |\n", layout.c_str(), name(op), size_text(bytes).c_str(),
                distribution(ours).c_str(), distribution(theirs).c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0, rank = 0, processes = 1;
  // --funneled: only the thread that calls run talks MPI (every message crosses to it and back);
  // by default the VPs move their own messages (MPI_THREAD_MULTIPLE).
  bool funneled = false;
  for (int k = 1; k < argc; ++k) funneled = funneled || std::strcmp(argv[k], "--funneled") == 0;
  MPI_Init_thread(&argc, &argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  int vps = 16, iters = 0;
  bool peer = false, by_call = false;
  long only_bytes = 0;  // --bytes N: only that size
  std::string only_op;  // --op NAME[,NAME...]: only those collectives (in the usual order)
  std::vector<std::size_t> sizes{8, std::size_t{1} << 20};  // --sizes
  for (int k = 1; k < argc; ++k) {
    if (std::strcmp(argv[k], "--vps") == 0 && k + 1 < argc) vps = std::atoi(argv[++k]);
    if (std::strcmp(argv[k], "--iters") == 0 && k + 1 < argc) iters = std::atoi(argv[++k]);
    if (std::strcmp(argv[k], "--peer") == 0) peer = true;
    if (std::strcmp(argv[k], "--one-by-one") == 0) by_call = true;
    if (std::strcmp(argv[k], "--bytes") == 0 && k + 1 < argc) only_bytes = std::atol(argv[++k]);
    if (std::strcmp(argv[k], "--op") == 0 && k + 1 < argc) only_op = argv[++k];
    if (std::strcmp(argv[k], "--sizes") == 0 && k + 1 < argc) {
      sizes.clear();
      const std::string list = argv[++k];
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const std::size_t size = parse_size(list.substr(at, comma - at));
        if (size == 0) {
          if (rank == 0)
            std::fprintf(stderr, "mpi_layer_bench: --sizes %s: not a size list\n", list.c_str());
          MPI_Finalize();
          return 2;
        }
        sizes.push_back(size);
        at = comma + 1;
      }
    }
    if (std::strcmp(argv[k], "--algo") == 0 && k + 1 < argc) {
      const auto algo = hc::parse_algo(argv[++k]);
      if (!algo) {
        if (rank == 0) std::fprintf(stderr, "mpi_layer_bench: unknown algorithm %s\n", argv[k]);
        MPI_Finalize();
        return 2;
      }
      g_algo = *algo;
    }
  }
  int d = 0;
  while ((1 << d) < vps) ++d;
  hc::Options options;
  options.deadlock_timeout = std::chrono::seconds(60);
  hc::mpi::Machine machine(MPI_COMM_WORLD, hc::Topology::hypercube(d), options);
  const std::string layout =
      std::to_string(processes) + " x " + std::to_string(vps / processes) +
      " (hypercube:" + std::to_string(d) +
      (g_algo == hc::Algo::automatic ? "" : ", " + std::string(hc::to_string(g_algo))) + ")";
  if (by_call && rank == 0)
    std::printf(
        "| processes x VPs | collective | size | hypercomm mean | median | p99 | max | over 10 us "
        "| MPI mean | median | p99 | max | over 10 us |\n"
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Op op : {Op::all_reduce, Op::broadcast, Op::all_gather}) {
    if (!only_op.empty() &&
        ("," + only_op + ",").find("," + std::string(name(op)) + ",") == std::string::npos)
      continue;
    for (const std::size_t bytes : sizes) {
      if (only_bytes > 0 && bytes != static_cast<std::size_t>(only_bytes)) continue;
      // A batch is a run of its own, whose first calls wait for the VPs of the other processes
      // to come in (10-30 us): 2000 calls of 8 B make that a few percent, 200 made it a third.
      const int k = iters > 0 ? iters : bytes <= 8 ? 2000 : bytes <= (64u << 10) ? 200 : 10;
      if (by_call) {
        (void)hypercomm_batch(machine, op, bytes, k);  // warm-up
        one_by_one(machine, op, bytes, iters > 0 ? iters : bytes <= 8 ? 20000 : 200, peer, layout);
        continue;
      }
      (void)hypercomm_batch(machine, op, bytes, k);  // warm-up: channels, pages, MPI connections
      if (peer) (void)mpi_batch(op, bytes, k);
      std::vector<double> ours, theirs;
      for (int batch = 0; batch < 5; ++batch) {
        ours.push_back(hypercomm_batch(machine, op, bytes, k));
        if (peer) theirs.push_back(mpi_batch(op, bytes, k));
      }
      if (rank != 0) continue;
      if (peer)
        std::printf("| %s | %s | %s | %.2f | %.2f | %.2f |\n", layout.c_str(), name(op),
                    size_text(bytes).c_str(), median(ours) * 1e6, median(theirs) * 1e6,
                    median(ours) / median(theirs));
      else
        std::printf("| %s | %s | %s | %.2f | | |\n", layout.c_str(), name(op),
                    size_text(bytes).c_str(), median(ours) * 1e6);
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}
