// C++20 std::barrier peer for bench_collectives, and the single-thread memcpy floor.
//
//   barrier     p std::threads, one arrive_and_wait per call
//   all_reduce  each thread writes its vector into its own slot, arrive_and_wait; the barrier's
//               completion function (run by one thread while the others wait) sums the slots
//               into the result, which every thread then copies out. One barrier per call: the
//               next completion runs only after every thread has arrived again, so after every
//               thread has copied the previous result.
//   memcpy      one thread, memcpy of `bytes` between two buffers (impl "memcpy", p = 1): the
//               bandwidth a 64 MiB broadcast is compared with.
//   transpose   one thread, the copies of an all_to_all of p ranks, `bytes` a block: block j
//               of each rank i's in into block i of rank j's out, p (p - 1) memcpys from p ins
//               of p blocks into p outs (impl "memcpy"): the floor of a meeting that copies
//               each block once, when its copies are spread over c cores, this time / c.
// Threads are pinned like hypercomm's Pinning::compact (thread i on the (i mod n)-th allowed
// CPU); --bind none leaves them to the scheduler. libstdc++'s std::barrier spins briefly, then
// sleeps on a futex (atomic wait).
// Command line and output: peer_common.hpp.  Example:
//   barrier_bench --op barrier,all_reduce --p 2,8,64 --bytes 8
//   barrier_bench --op memcpy --bytes 64M
//   barrier_bench --op transpose --p 8,16 --bytes 64K

#include <barrier>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include "cpus.hpp"
#include "peer_common.hpp"

namespace {

using Clock = std::chrono::steady_clock;

using peers::allowed_cpus;
using peers::pin;

struct Reduction {
  std::vector<std::vector<double>>* slots = nullptr;
  std::vector<double>* result = nullptr;
  void operator()() noexcept {
    auto& r = *result;
    std::fill(r.begin(), r.end(), 0.0);
    for (const auto& slot : *slots)
      for (std::size_t j = 0; j < r.size(); ++j) r[j] += slot[j];
  }
};

void measure(const std::string& op, int p, std::size_t bytes, const peer::Args& args) {
  const std::size_t n = bytes / sizeof(double);
  std::vector<std::vector<double>> slots(static_cast<std::size_t>(p));
  std::vector<double> result(n, 0.0);
  std::barrier<Reduction> reduce_bar(p, Reduction{&slots, &result});
  std::barrier<> bar(p);  // the measured barrier
  std::barrier<> ctl(p);  // the harness's own synchronisation
  std::vector<double> elapsed(static_cast<std::size_t>(p), 0.0);
  std::vector<double> batch(static_cast<std::size_t>(args.batches), 0.0);
  long reps = 0;
  const auto& cpus = allowed_cpus();

  auto body = [&](int id) {
    if (args.bind != "none") pin(cpus[static_cast<std::size_t>(id) % cpus.size()]);
    auto& mine = slots[static_cast<std::size_t>(id)];
    mine.assign(n, 1.0 + id);
    std::vector<double> out(n, 0.0);
    auto call = [&] {
      if (op == "barrier") {
        bar.arrive_and_wait();
      } else {  // all_reduce; the slot keeps this thread's vector
        reduce_bar.arrive_and_wait();
        std::memcpy(out.data(), result.data(), n * sizeof(double));
      }
    };
    call();  // warm-up, checked
    if (op == "all_reduce" && n > 0 && out[0] != p * (p + 1) / 2.0)
      std::fprintf(stderr, "barrier_bench: all_reduce p=%d thread %d: got %g\n", p, id, out[0]);
    for (long r = 1;; r *= 4) {
      ctl.arrive_and_wait();
      const auto t0 = Clock::now();
      for (long k = 0; k < r; ++k) call();
      elapsed[static_cast<std::size_t>(id)] =
          std::chrono::duration<double>(Clock::now() - t0).count();
      ctl.arrive_and_wait();
      const double slowest = *std::max_element(elapsed.begin(), elapsed.end());
      ctl.arrive_and_wait();
      if (slowest >= peer::calibration_seconds(args) || r >= (1 << 16) || args.reps > 0) {
        if (id == 0) reps = peer::reps_for(slowest / static_cast<double>(r), args);
        break;
      }
    }
    ctl.arrive_and_wait();
    const long my_reps = reps;
    for (int b = 0; b < args.batches; ++b) {
      ctl.arrive_and_wait();
      const auto t0 = Clock::now();
      for (long k = 0; k < my_reps; ++k) call();
      elapsed[static_cast<std::size_t>(id)] =
          std::chrono::duration<double>(Clock::now() - t0).count();
      ctl.arrive_and_wait();
      if (id == 0)
        batch[static_cast<std::size_t>(b)] =
            *std::max_element(elapsed.begin(), elapsed.end()) / static_cast<double>(my_reps);
      ctl.arrive_and_wait();
    }
  };
  std::vector<std::thread> threads;
  for (int id = 1; id < p; ++id) threads.emplace_back(body, id);
  body(0);
  for (auto& t : threads) t.join();
  peer::print_line(args.impl, op, p, bytes, peer::median(batch), reps, args.batches);
}

// One thread calling once() as the peers' calls are timed; printed as impl "memcpy".
template <class Once>
void measure_one_thread(const std::string& op, int p, std::size_t bytes, const peer::Args& args,
                        Once&& once) {
  pin(allowed_cpus()[0]);
  once();
  long reps = 1;
  for (;; reps *= 4) {
    const auto t0 = Clock::now();
    for (long k = 0; k < reps; ++k) once();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s >= peer::calibration_seconds(args) || reps >= (1 << 20) || args.reps > 0) {
      reps = peer::reps_for(s / static_cast<double>(reps), args);
      break;
    }
  }
  std::vector<double> batch(static_cast<std::size_t>(args.batches));
  for (auto& t : batch) {
    const auto t0 = Clock::now();
    for (long k = 0; k < reps; ++k) once();
    t = std::chrono::duration<double>(Clock::now() - t0).count() / static_cast<double>(reps);
  }
  peer::print_line(args.impl == "std-barrier" ? "memcpy" : args.impl, op, p, bytes,
                   peer::median(batch), reps, args.batches);
}

void measure_memcpy(std::size_t bytes, const peer::Args& args) {
  std::vector<char> a(bytes, 1), b(bytes, 0);
  measure_one_thread("memcpy", 1, bytes, args, [&] {
    std::memcpy(b.data(), a.data(), bytes);
    asm volatile("" : : "r"(b.data()) : "memory");
  });
}

void measure_transpose(int p, std::size_t bytes, const peer::Args& args) {
  const auto ranks = static_cast<std::size_t>(p);
  std::vector<std::vector<char>> ins(ranks, std::vector<char>(ranks * bytes, 1));
  std::vector<std::vector<char>> outs(ranks, std::vector<char>(ranks * bytes, 0));
  measure_one_thread("transpose", p, bytes, args, [&] {
    for (std::size_t j = 0; j < ranks; ++j)
      for (std::size_t i = 0; i < ranks; ++i)
        if (i != j) std::memcpy(outs[j].data() + i * bytes, ins[i].data() + j * bytes, bytes);
    asm volatile("" : : "r"(outs.data()) : "memory");
  });
}

}  // namespace

int main(int argc, char** argv) {
  try {
    peer::Args args = peer::parse(argc, argv, "std-barrier");
    if (args.ps.empty()) args.ps = {static_cast<int>(std::thread::hardware_concurrency())};
    for (const std::string& op : args.ops)
      if (op != "barrier" && op != "all_reduce" && op != "memcpy" && op != "transpose")
        throw std::invalid_argument("no operation " + op +
                                    " (it has barrier, all_reduce, memcpy, transpose)");
    for (const std::string& op : args.ops) {
      if (op == "memcpy") {
        for (std::size_t b : args.bytes) measure_memcpy(b, args);
        continue;
      }
      if (op == "transpose") {
        for (int p : args.ps)
          for (std::size_t b : args.bytes) measure_transpose(p, b, args);
        continue;
      }
      for (int p : args.ps)
        for (std::size_t b : peer::sizes_for(op, args)) {
          if (peer::too_big(op, b, p, args))
            peer::print_skip(args.impl, op, p, b, "skipped");
          else
            measure(op, p, b, args);
        }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "barrier_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
