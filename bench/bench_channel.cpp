// VP-to-VP messaging against its floor, in one binary so the ratios come from one run:
//   * one-way latency of an 8-byte message between two pinned VPs (hypercomm send/recv),
//   * the same ping-pong over a raw boost::lockfree::spsc_queue pair,
//   * the same over a bare atomic flag per direction (the floor: one cache-line handoff),
//   * bandwidth for 1 KiB .. 64 MiB messages, beside single-thread memcpy of the same size.
// Real time throughout; the Machine is built once, outside the timing loop.
#include <benchmark/benchmark.h>

#include <atomic>
#include <boost/lockfree/spsc_queue.hpp>
#include <chrono>
#include <cstring>
#include <hypercomm/hypercomm.hpp>
#include <thread>
#include <vector>

#include "futex.hpp"
#include "pinning.hpp"

namespace hc = hypercomm;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kRoundTrips = 2000;
constexpr int kWarmUp = 20000;  // round trips before the clock starts: threads placed, lines hot

int second_cpu() {
  const auto cpus = hc::detail::allowed_cpus();
  return cpus.size() > 1 ? cpus[1] : cpus[0];
}

// Runs `partner(first, last)` on another pinned thread while the calling thread (pinned) runs
// `self(first, last)`, round trips first..last: kWarmUp of them untimed, then kRoundTrips timed.
template <class Self, class Partner>
double ping_pong_seconds(Self self, Partner partner) {
  const auto& cpus = hc::detail::allowed_cpus();
  std::thread other([&] {
    hc::detail::pin_current_thread(second_cpu());
    partner(1, kWarmUp + kRoundTrips);
  });
  hc::detail::pin_current_thread(cpus[0]);
  self(1, kWarmUp);
  const auto start = Clock::now();
  self(kWarmUp + 1, kWarmUp + kRoundTrips);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  other.join();
  return seconds;
}

void report_one_way(benchmark::State& state, double seconds, int round_trips) {
  state.SetIterationTime(seconds / round_trips / 2);  // one iteration = one one-way message
}

void BM_AtomicFlagFloor(benchmark::State& state) {
  for (auto _ : state) {
    alignas(128) std::atomic<int> ping{0};  // 128: apart from the adjacent-line prefetcher
    alignas(128) std::atomic<int> pong{0};
    const double s = ping_pong_seconds(
        [&](int first, int last) {
          for (int i = first; i <= last; ++i) {
            ping.store(i, std::memory_order_release);
            while (pong.load(std::memory_order_acquire) != i) hc::detail::cpu_relax();
          }
        },
        [&](int first, int last) {
          for (int i = first; i <= last; ++i) {
            while (ping.load(std::memory_order_acquire) != i) hc::detail::cpu_relax();
            pong.store(i, std::memory_order_release);
          }
        });
    report_one_way(state, s, kRoundTrips);
  }
}

void BM_BoostSpscQueue(benchmark::State& state) {
  for (auto _ : state) {
    boost::lockfree::spsc_queue<std::uint64_t, boost::lockfree::capacity<1024>> there, back;
    const double s = ping_pong_seconds(
        [&](int first, int last) {
          std::uint64_t v = 0;
          for (int i = first; i <= last; ++i) {
            while (!there.push(static_cast<std::uint64_t>(i))) hc::detail::cpu_relax();
            while (!back.pop(v)) hc::detail::cpu_relax();
          }
        },
        [&](int first, int last) {
          std::uint64_t v = 0;
          for (int i = first; i <= last; ++i) {
            while (!there.pop(v)) hc::detail::cpu_relax();
            while (!back.push(v)) hc::detail::cpu_relax();
          }
        });
    report_one_way(state, s, kRoundTrips);
  }
}

hc::Options pinned() {
  hc::Options o;
  o.pinning = hc::Pinning::compact;
  return o;
}

void BM_HypercommSendRecv(benchmark::State& state) {
  hc::Machine machine(hc::Topology::ring(2), pinned());
  for (auto _ : state) {
    double seconds = 0;
    machine.run([&](hc::Proc& vp) {
      std::uint64_t word = 0;
      std::span<std::uint64_t, 1> msg(&word, 1);
      if (vp.id() == 0) {
        for (int i = 0; i < kWarmUp; ++i) vp.send(1, msg), vp.recv(1, msg);
        const auto start = Clock::now();
        for (int i = 0; i < kRoundTrips; ++i) vp.send(1, msg), vp.recv(1, msg);
        seconds = std::chrono::duration<double>(Clock::now() - start).count();
      } else {
        for (int i = 0; i < kWarmUp + kRoundTrips; ++i) vp.recv(0, msg), vp.send(0, msg);
      }
    });
    report_one_way(state, seconds, kRoundTrips);
  }
}

int repeats_for(std::size_t bytes) {
  return static_cast<int>(std::clamp<std::size_t>((std::size_t{256} << 20) / bytes, 4, 4096));
}

void BM_HypercommBandwidth(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const int repeats = repeats_for(bytes);
  hc::Machine machine(hc::Topology::ring(2), pinned());
  std::vector<std::byte> a(bytes, std::byte{1}), b(bytes);
  for (auto _ : state) {
    double seconds = 0;
    machine.run([&](hc::Proc& vp) {
      std::vector<std::byte> ack(1);
      if (vp.id() == 0) {
        vp.send(1, a), vp.recv(1, ack);  // warm up: buffers touched, pools filled
        const auto start = Clock::now();
        for (int i = 0; i < repeats; ++i) vp.send(1, a);
        vp.recv(1, ack);
        seconds = std::chrono::duration<double>(Clock::now() - start).count();
      } else {
        vp.recv(0, b), vp.send(0, ack);
        for (int i = 0; i < repeats; ++i) vp.recv(0, b);
        vp.send(0, ack);
      }
    });
    // One iteration is the whole batch: timing it per message would make Google Benchmark run
    // `repeats` times as many batches as it means to.
    state.SetIterationTime(seconds);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * repeats *
                          static_cast<std::int64_t>(bytes));
  state.counters["messages_per_iteration"] = repeats;
}

void BM_Memcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<std::byte> a(bytes, std::byte{1}), b(bytes, std::byte{0});
  hc::detail::pin_current_thread(hc::detail::allowed_cpus()[0]);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

}  // namespace

BENCHMARK(BM_AtomicFlagFloor)->UseManualTime()->Unit(benchmark::kNanosecond)->Iterations(30);
BENCHMARK(BM_BoostSpscQueue)->UseManualTime()->Unit(benchmark::kNanosecond)->Iterations(30);
BENCHMARK(BM_HypercommSendRecv)->UseManualTime()->Unit(benchmark::kNanosecond)->Iterations(30);
BENCHMARK(BM_HypercommBandwidth)
    ->UseManualTime()
    ->RangeMultiplier(8)
    ->Range(1 << 10, 64 << 20)
    ->Arg(16 << 20)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Memcpy)
    ->RangeMultiplier(8)
    ->Range(1 << 10, 64 << 20)
    ->Arg(16 << 20)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

BENCHMARK_MAIN();
