// OpenMP peer for bench_collectives: the same operations, sizes and thread counts, in one
// persistent parallel region per measurement (the best case for OpenMP: no fork/join per call).
//
//   all_reduce  a worksharing loop with a reduction clause over an array section: each thread
//               adds its own vector, the implicit barrier publishes the sum, every thread copies
//               it out. Three shared accumulators in rotation, so one barrier per call suffices
//               (the master zeroes the accumulator of call k+2 right after call k's barrier).
//   barrier     #pragma omp barrier
//   broadcast   through a shared buffer: thread 0 writes it, barrier, the others copy it out
//               (two buffers in rotation: one barrier per call).
//
// Waiting is OMP_WAIT_POLICY's (read by libgomp at program start): scripts/bench runs this
// binary twice, with passive and with active, as the peers "openmp-passive"/"openmp-active",
// pinned like hypercomm with OMP_PROC_BIND=close OMP_PLACES=cores.
// The reduction's private copies live on the threads' stacks, so for large sizes the program
// re-executes itself with OMP_STACKSIZE large enough (unless it is already set), and runs its
// master thread on a stack of that size.
// Command line and output: peer_common.hpp.  Example:
//   OMP_WAIT_POLICY=passive omp_bench --op all_reduce,barrier --p 2,8 --bytes 8 --impl
//   openmp-passive
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "peer_common.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Shared {
  int p = 0;
  std::size_t n = 0;            // doubles per call
  double* acc = nullptr;        // 3 * n: all_reduce accumulators in rotation
  double* bcast = nullptr;      // 2 * n: broadcast buffers in rotation
  std::vector<double> elapsed;  // per thread: the last round's time
  std::vector<double> batch;    // per batch: slowest thread's time / reps
  long reps = 0;
};

// One call by thread `id`; `k` counts this thread's calls (the same on every thread).
void one_call(const std::string& op, Shared& s, int id, long k, std::vector<double>& in,
              std::vector<double>& out) {
  const std::size_t n = s.n;
  if (op == "barrier") {
#pragma omp barrier
  } else if (op == "all_reduce") {
    double* acc = s.acc;
    const std::size_t off = static_cast<std::size_t>(k % 3) * n;
    const double* mine = in.data();
#pragma omp for schedule(static, 1) reduction(+ : acc [off:n])
    for (int i = 0; i < s.p; ++i)
      for (std::size_t j = 0; j < n; ++j) acc[off + j] += mine[j];
    // implicit barrier: acc[off..] holds the sum
    std::memcpy(out.data(), acc + off, n * sizeof(double));
    if (id == 0)
      std::memset(acc + static_cast<std::size_t>((k + 2) % 3) * n, 0, n * sizeof(double));
  } else if (op == "broadcast") {
    double* buf = s.bcast + static_cast<std::size_t>(k % 2) * n;
    if (id == 0) std::memcpy(buf, in.data(), n * sizeof(double));
#pragma omp barrier
    if (id != 0) std::memcpy(in.data(), buf, n * sizeof(double));
  }
}

// Measures one (op, p, bytes): returns false if the team was smaller than asked.
bool measure(const std::string& op, int p, std::size_t bytes, const peer::Args& args) {
  Shared s;
  s.p = p;
  s.n = bytes / sizeof(double);
  std::vector<double> acc(3 * s.n, 0.0), bcast(2 * s.n, 0.0);
  s.acc = acc.data();
  s.bcast = bcast.data();
  s.elapsed.assign(static_cast<std::size_t>(p), 0.0);
  s.batch.assign(static_cast<std::size_t>(args.batches), 0.0);
  int team = 0;
  omp_set_dynamic(0);
#pragma omp parallel num_threads(p)
  {
    const int id = omp_get_thread_num();
#pragma omp single
    team = omp_get_num_threads();
    if (team == p) {
      std::vector<double> in(s.n, 1.0 + id), out(s.n, 0.0);  // first touch by the owner
      long k = 0;
      one_call(op, s, id, k++, in, out);  // warm-up, checked
      const double want = op == "all_reduce" ? p * (p + 1) / 2.0 : op == "broadcast" ? 1.0 : 0.0;
      const double got = op == "all_reduce"  ? (s.n ? out[0] : want)
                         : op == "broadcast" ? (s.n ? in[0] : want)
                                             : 0.0;
      if (got != want)
        std::fprintf(stderr, "omp_bench: %s p=%d thread %d: got %g, want %g\n", op.c_str(), p, id,
                     got, want);
      // `reps` calls on every thread; afterwards s.elapsed holds each thread's time.
      const auto timed_calls = [&](long reps) {
#pragma omp barrier
        const auto t0 = Clock::now();
        for (long r = 0; r < reps; ++r) one_call(op, s, id, k++, in, out);
        s.elapsed[static_cast<std::size_t>(id)] =
            std::chrono::duration<double>(Clock::now() - t0).count();
#pragma omp barrier
      };
      // Calibration: rounds of 1, 4, 16, ... calls until the slowest thread took long enough.
      for (long reps = 1;; reps *= 4) {
        timed_calls(reps);
        const double slowest = *std::max_element(s.elapsed.begin(), s.elapsed.end());
#pragma omp barrier
        if (slowest >= peer::calibration_seconds(args) || reps >= (1 << 16) || args.reps > 0) {
          if (id == 0) s.reps = peer::reps_for(slowest / static_cast<double>(reps), args);
          break;
        }
      }
#pragma omp barrier
      const long reps = s.reps;
      for (int b = 0; b < args.batches; ++b) {
        timed_calls(reps);
        if (id == 0)
          s.batch[static_cast<std::size_t>(b)] =
              *std::max_element(s.elapsed.begin(), s.elapsed.end()) / static_cast<double>(reps);
#pragma omp barrier
      }
    }
  }
  if (team != p) return false;
  peer::print_line(args.impl, op, p, bytes, peer::median(s.batch), s.reps, args.batches);
  return true;
}

int run(const peer::Args& args) {
  for (const std::string& op : args.ops) {
    if (op != "all_reduce" && op != "barrier" && op != "broadcast") {
      std::fprintf(stderr, "omp_bench: no operation %s (it has all_reduce, barrier, broadcast)\n",
                   op.c_str());
      return 2;
    }
  }
  for (int p : args.ps)
    for (const std::string& op : args.ops)
      for (std::size_t bytes : peer::sizes_for(op, args)) {
        if (peer::too_big(op, bytes, p, args)) {
          peer::print_skip(args.impl, op, p, bytes, "skipped");
          continue;
        }
        if (!measure(op, p, bytes, args))
          peer::print_skip(args.impl, op, p, bytes, "team too small");
      }
  return 0;
}

// The largest all_reduce message: each thread's private copy of it lives on its stack.
std::size_t stack_needed(const peer::Args& args) {
  std::size_t biggest = 0;
  for (const std::string& op : args.ops)
    if (op == "all_reduce")
      for (std::size_t b : args.bytes) biggest = std::max(biggest, b);
  return biggest + (16u << 20);
}

}  // namespace

int main(int argc, char** argv) {
  peer::Args args;
  try {
    args = peer::parse(argc, argv, "openmp");
    if (args.ps.empty()) args.ps = {static_cast<int>(std::thread::hardware_concurrency())};
  } catch (const std::exception& e) {
    std::fprintf(stderr, "omp_bench: %s\n", e.what());
    return 2;
  }
  const std::size_t stack = stack_needed(args);
  // libgomp reads OMP_STACKSIZE when it loads: set it and start again when large messages
  // need more than its default.
  if (stack > (32u << 20) && std::getenv("OMP_STACKSIZE") == nullptr) {
    const std::string mib = std::to_string((stack >> 20) + 1) + "M";
    setenv("OMP_STACKSIZE", mib.c_str(), 1);
    execv("/proc/self/exe", argv);
    std::perror("omp_bench: execv");  // fall through: run with what we have
  }
  if (stack <= (8u << 20)) return run(args);
  // The master thread of every team is this one: run it on a thread with the same stack,
  // pinned where OMP_PROC_BIND would have put the initial thread (the first allowed CPU).
  int rc = 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, std::max<std::size_t>(stack, 8u << 20));
  struct Job {
    const peer::Args* args;
    int* rc;
  } job{&args, &rc};
  pthread_t thread;
  if (pthread_create(
          &thread, &attr,
          [](void* j) -> void* {
            auto* jb = static_cast<Job*>(j);
            const char* bind = std::getenv("OMP_PROC_BIND");
            cpu_set_t allowed;
            if (bind && std::string(bind) != "false" &&
                sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
              for (int c = 0; c < CPU_SETSIZE; ++c)
                if (CPU_ISSET(c, &allowed)) {
                  cpu_set_t one;
                  CPU_ZERO(&one);
                  CPU_SET(c, &one);
                  sched_setaffinity(0, sizeof one, &one);
                  break;
                }
            }
            *jb->rc = run(*jb->args);
            return nullptr;
          },
          &job) != 0) {
    rc = run(args);
  } else {
    pthread_join(thread, nullptr);
  }
  pthread_attr_destroy(&attr);
  return rc;
}
