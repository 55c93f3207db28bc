// How far apart the machine's first two cores are right now: two threads, pinned to the first
// two CPUs this process may use, pass one cache line back and forth; each sample is the mean
// round trip of --trips passes, in ns. scripts/bench-sweep runs it at every round's start and
// end and writes what it saw beside the sweep's tables.
//
// Why: on the shared VMs this project is measured on, the host now and then places the two vCPUs
// far apart for a fraction of a second to a few seconds (2026-11-27, 2-vCPU Firecracker VM, AMD
// EPYC: round trip 55-85 ns, and 280-440 ns in one sample of five to twenty), and then every
// message between them costs three to six times as much, for every implementation alike.
//
//   core_probe [--samples N] [--trips T] [--gap-ms G]
// Output: one JSON line, {"cpus":[0,1],"round_trip_ns":[58,57,...]}.
//
//   core_probe --switch [--samples N] [--trips T] [--gap-ms G]
// What a switch between two threads of one core costs: two threads pinned to the first CPU hand
// a turn back and forth, each yielding the core (sched_yield) until the turn is its own; each
// sample is the mean time of one hand-off. The floor of a collective that every VP must join,
// called where VPs share cores: each VP of a core runs at least once per call, one switch each.
// Output: {"cpu":0,"switch_ns":[1380,...]}.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cpus.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// The line passed back and forth: the ping side writes odd values, the pong side even ones.
struct alignas(64) Line {
  std::atomic<long> value{0};
};

// Two threads on `cpu` pass the turn: each hand-off is a switch (the holder yields the core to
// the other, which finds the turn its own).
int switch_probe(int cpu, int samples, long trips, int gap_ms) {
  Line turn;
  const long passes = static_cast<long>(std::max(samples, 1)) * std::max(trips, 1L);
  std::thread other([&] {
    peers::pin(cpu);
    for (long i = 1; i < 2 * passes; i += 2) {
      while (turn.value.load(std::memory_order_acquire) != i) sched_yield();
      turn.value.store(i + 1, std::memory_order_release);
    }
  });
  peers::pin(cpu);
  std::vector<double> ns;
  long next = 0;
  for (int s = 0; s < std::max(samples, 1); ++s) {
    if (s > 0) std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
    const auto t0 = Clock::now();
    for (long k = 0; k < std::max(trips, 1L); ++k, next += 2) {
      turn.value.store(next + 1, std::memory_order_release);
      while (turn.value.load(std::memory_order_acquire) != next + 2) sched_yield();
    }
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
                 (2.0 * static_cast<double>(std::max(trips, 1L))));
  }
  other.join();
  std::printf("{\"cpu\":%d,\"switch_ns\":[", cpu);
  for (std::size_t i = 0; i < ns.size(); ++i) std::printf("%s%.0f", i ? "," : "", ns[i]);
  std::printf("]}\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int samples = 10;
  long trips = 2000;
  int gap_ms = 20;
  bool switches = false;
  for (int i = 1; i < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--switch") {
      switches = true;
      --i;
      continue;
    }
    if (i + 1 == argc) {
      std::fprintf(stderr, "core_probe: %s needs a value\n", key.c_str());
      return 2;
    }
    if (key == "--samples")
      samples = std::atoi(argv[i + 1]);
    else if (key == "--trips")
      trips = std::atol(argv[i + 1]);
    else if (key == "--gap-ms")
      gap_ms = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "core_probe: unknown option %s\n", key.c_str());
      return 2;
    }
  }
  const std::vector<int>& cpus = peers::allowed_cpus();
  if (switches) return switch_probe(cpus[0], samples, trips, gap_ms);
  if (cpus.size() < 2 || samples < 1 || trips < 1) {
    std::printf("{\"cpus\":[],\"round_trip_ns\":[]}\n");
    return 0;
  }
  Line line;
  const long passes = static_cast<long>(samples) * trips;
  std::thread pong([&] {
    peers::pin(cpus[1]);
    for (long i = 1; i < 2 * passes; i += 2) {
      while (line.value.load(std::memory_order_acquire) != i) {
      }
      line.value.store(i + 1, std::memory_order_release);
    }
  });
  peers::pin(cpus[0]);
  std::vector<double> ns;
  long next = 0;
  for (int s = 0; s < samples; ++s) {
    if (s > 0) std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
    const auto t0 = Clock::now();
    for (long k = 0; k < trips; ++k, next += 2) {
      line.value.store(next + 1, std::memory_order_release);
      while (line.value.load(std::memory_order_acquire) != next + 2) {
      }
    }
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
                 static_cast<double>(trips));
  }
  pong.join();
  std::printf("{\"cpus\":[%d,%d],\"round_trip_ns\":[", cpus[0], cpus[1]);
  for (std::size_t i = 0; i < ns.size(); ++i) std::printf("%s%.0f", i ? "," : "", ns[i]);
  std::printf("]}\n");
  return 0;
}
