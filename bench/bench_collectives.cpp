// Every collective x topology x p x message size x algorithm, timed inside the VP bodies.
//
//   hypercomm/<op>/<topology>/<size>/<algo>[/unpinned]     e.g.
//   hypercomm/all_reduce/hypercube:1/8B/auto
//
// How one benchmark is measured (DESIGN.md, example 9):
//   * the hypercomm::Machine is built once per (topology, pinning) and reused by every benchmark
//     on that topology (benchmarks are registered grouped by it; the cache keeps the one in use);
//   * a calibration run picks N, the number of calls that makes one batch last about
//     --batch_ms; a second run then does: warm-up call, and for each of --batches batches:
//     barrier, N calls, each VP timing its own N calls;
//   * a batch's time is the slowest VP's time / N; the reported (manual, real) time is the median
//     over the batches (state.SetIterationTime, one iteration per benchmark);
//   * a third run makes one call alone: its Report::model_time is the counter model_us, with the
//     cost model calibrated on this machine at start-up (ts = one-way 8-byte latency of two
//     pinned VPs, tw = 1 / one-way bandwidth of 16 MiB messages) unless --model_ts/--model_tw
//     say otherwise; both are in the JSON context.
// Sizes are Grama's m: the bytes each VP contributes (all-gather, gather: one block; all-to-all,
// reduce-scatter, scatter: one of the p blocks). Data are doubles, reductions std::plus.
// Counters: p, bytes (m), GB/s (m / time), model_us, sent_bytes and messages (Report::bytes and
// Report::messages of one call: every VP's point-to-point traffic), reps (N), batches.
//
// Flags (before Google Benchmark's own, which all work: --benchmark_filter, --benchmark_out,
// --benchmark_out_format=json, ...):
//   --full                 the big grid (also: env HYPERCOMM_BENCH_FULL=1); default: the quick set
//   --batches=B            batches per benchmark (default 7)
//   --batch_ms=T           target length of one batch in ms (default 20)
//   --max_total_mib=M      skip shapes whose estimated peak memory (buffers of all VPs plus
//                          messages in flight, see footprint()) exceeds M MiB (default 4096)
//   --model_ts=S --model_tw=S   cost model in seconds and seconds per byte (default: calibrated)
//   --list                 print the registered names and exit (same as --benchmark_list_tests)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace hc = hypercomm;
using Clock = std::chrono::steady_clock;

namespace {

// ---------------------------------------------------------------------------------------------
// Settings

struct Settings {
  bool full = false;
  int batches = 0;      // 0: by mode
  double batch_ms = 0;  // 0: by mode
  double max_total_mib = 4096;
  double model_ts = -1;  // < 0: calibrate
  double model_tw = -1;
};
Settings g_settings;
hc::CostModel g_model{};

// ---------------------------------------------------------------------------------------------
// The cases

enum class Op {
  broadcast,
  reduce,
  all_reduce,
  all_gather,
  reduce_scatter,
  scan,
  all_to_all,
  barrier,
  gather,
  scatter,
  circular_shift,
};

const char* op_name(Op op) {
  switch (op) {
    case Op::broadcast: return "broadcast";
    case Op::reduce: return "reduce";
    case Op::all_reduce: return "all_reduce";
    case Op::all_gather: return "all_gather";
    case Op::reduce_scatter: return "reduce_scatter";
    case Op::scan: return "scan";
    case Op::all_to_all: return "all_to_all";
    case Op::barrier: return "barrier";
    case Op::gather: return "gather";
    case Op::scatter: return "scatter";
    case Op::circular_shift: return "circular_shift";
  }
  return "?";
}

const char* algo_name(hc::Algo a) { return a == hc::Algo::automatic ? "auto" : hc::to_string(a); }

// The algorithms each collective accepts (API.md, "Algo"); the others choose by themselves.
std::vector<hc::Algo> algorithms_of(Op op) {
  using A = hc::Algo;
  switch (op) {
    case Op::broadcast:
      return {A::automatic, A::hypercube, A::esbt, A::two_phase, A::mesh, A::ring};
    case Op::reduce:
    case Op::all_reduce: return {A::automatic, A::hypercube, A::two_phase, A::mesh, A::ring};
    case Op::all_gather:
    case Op::reduce_scatter: return {A::automatic, A::hypercube, A::mesh, A::ring};
    case Op::all_to_all:
      return {A::automatic, A::hypercube, A::dimension_exchange, A::mesh, A::ring};
    default: return {A::automatic};
  }
}

bool power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

// Whether the algorithm can run on the topology (Links::routed, the default).
bool runs_on(hc::Algo a, const hc::Topology& t) {
  switch (a) {
    case hc::Algo::hypercube:
    case hc::Algo::esbt:
    case hc::Algo::dimension_exchange: return power_of_two(t.size());
    case hc::Algo::mesh: return t.name().rfind("mesh:", 0) == 0;
    default: return true;
  }
}

struct Case {
  Op op;
  std::string topology;
  std::size_t bytes;  // m, per VP (0 for the barrier)
  hc::Algo algo;
  hc::Pinning pinning;
};

std::string size_name(std::size_t b) {
  if (b >= (1u << 20) && b % (1u << 20) == 0) return std::to_string(b >> 20) + "MiB";
  if (b >= (1u << 10) && b % (1u << 10) == 0) return std::to_string(b >> 10) + "KiB";
  return std::to_string(b) + "B";
}

std::string case_name(const Case& c) {
  std::string n = std::string("hypercomm/") + op_name(c.op) + "/" + c.topology + "/" +
                  size_name(c.bytes) + "/" + algo_name(c.algo);
  if (c.pinning == hc::Pinning::none) n += "/unpinned";
  return n;
}

// Elements (doubles) of each VP's in and out buffers.
struct Shape {
  std::size_t in = 0, out = 0, root_only_in = 0, root_only_out = 0;
};

Shape shape_of(Op op, std::size_t n, std::size_t p) {
  switch (op) {
    case Op::broadcast: return {n, 0, 0, 0};
    case Op::reduce: return {n, n, 0, 0};
    case Op::all_reduce: return {n, n, 0, 0};
    case Op::all_gather: return {n, p * n, 0, 0};
    case Op::reduce_scatter: return {p * n, n, 0, 0};
    case Op::scan: return {n, n, 0, 0};
    case Op::all_to_all: return {p * n, p * n, 0, 0};
    case Op::barrier: return {0, 0, 0, 0};
    case Op::gather: return {n, 0, 0, p * n};
    case Op::scatter: return {0, n, p * n, 0};
    case Op::circular_shift: return {n, n, 0, 0};
  }
  return {};
}

double total_bytes(const Case& c, int p) {
  const std::size_t n = c.bytes / sizeof(double);
  const Shape s = shape_of(c.op, n, static_cast<std::size_t>(p));
  return static_cast<double>(sizeof(double)) *
         (static_cast<double>(p) * static_cast<double>(s.in + s.out) +
          static_cast<double>(s.root_only_in + s.root_only_out));
}

// What a call may hold at its peak: the buffers, plus the messages in flight (sends are
// buffered, so a VP can run ahead). Measured peaks at p = 256, m = 4 KiB (mesh:16x16): ring
// all-to-all ~15x the buffers, the other all-to-alls ~3-10x, all-gather and reduce-scatter ~2-7x;
// store-and-forward all-to-all grows with p.
double footprint(const Case& c, int p) {
  double factor = 3;
  switch (c.op) {
    case Op::all_to_all: factor = std::max(4.0, p / 8.0); break;
    case Op::all_gather:
    case Op::reduce_scatter:
    case Op::gather:
    case Op::scatter: factor = 8; break;
    default: break;
  }
  return factor * total_bytes(c, p);
}

// ---------------------------------------------------------------------------------------------
// Machines, cached per (topology, pinning)

// Benchmarks are registered grouped by (topology, pinning), so keeping only the machine in use
// costs no rebuilds; dropping the others frees their threads and their channels' pooled memory.
struct MachineCache {
  std::string key;
  std::unique_ptr<hc::Machine> machine;

  hc::Machine& get(const std::string& topology, hc::Pinning pinning) {
    const std::string k = topology + (pinning == hc::Pinning::none ? "/none" : "/compact");
    if (machine && key == k) return *machine;
    machine.reset();
    hc::Options o;
    o.pinning = pinning;
    o.model = g_model;
    o.deadlock_timeout = std::chrono::seconds(60);
    machine = std::make_unique<hc::Machine>(hc::Topology::parse(topology), o);
    key = k;
    return *machine;
  }
};
MachineCache g_machines;
constexpr double kDropAfterMiB = 256;

// ---------------------------------------------------------------------------------------------
// One benchmark

struct Buffers {
  std::vector<double> in, out;
};

void call(Op op, hc::Proc& vp, Buffers& b, hc::Algo a) {
  std::span<double> in(b.in), out(b.out);
  switch (op) {
    case Op::broadcast: hc::broadcast(vp, in, 0, a); break;
    case Op::reduce: hc::reduce(vp, in, out, std::plus<>{}, 0, a); break;
    case Op::all_reduce: hc::all_reduce(vp, in, out, std::plus<>{}, a); break;
    case Op::all_gather: hc::all_gather(vp, in, out, a); break;
    case Op::reduce_scatter: hc::reduce_scatter(vp, in, out, std::plus<>{}, a); break;
    case Op::scan: hc::scan(vp, in, out, std::plus<>{}); break;
    case Op::all_to_all: hc::all_to_all(vp, in, out, a); break;
    case Op::barrier: hc::barrier(vp); break;
    case Op::gather: hc::gather(vp, in, out, 0); break;
    case Op::scatter: hc::scatter(vp, in, out, 0); break;
    case Op::circular_shift: hc::circular_shift(vp, in, out, 1); break;
  }
}

void run_case(benchmark::State& state, const Case& c) {
  const int batches = g_settings.batches;
  const double batch_seconds = g_settings.batch_ms * 1e-3;
  try {
    hc::Machine& machine = g_machines.get(c.topology, c.pinning);
    const int p = machine.topology().size();
    const std::size_t n = c.bytes / sizeof(double);
    const Shape shape = shape_of(c.op, n, static_cast<std::size_t>(p));
    std::vector<Buffers> buffers(static_cast<std::size_t>(p));

    // Run 1: allocate (first touch on the VP's own thread), warm up, calibrate N.
    double per_call = 0;
    machine.run([&](hc::Proc& vp) {
      Buffers& b = buffers[static_cast<std::size_t>(vp.id())];
      const bool root = vp.id() == 0;
      b.in.assign(shape.in + (root ? shape.root_only_in : 0), 1.0 + vp.id());
      b.out.assign(shape.out + (root ? shape.root_only_out : 0), 0.0);
      call(c.op, vp, b, c.algo);
      for (int reps = 1;; reps *= 4) {
        hc::barrier(vp);
        const auto t0 = Clock::now();
        for (int r = 0; r < reps; ++r) call(c.op, vp, b, c.algo);
        const double mine = std::chrono::duration<double>(Clock::now() - t0).count();
        const double slowest = hc::all_reduce(vp, mine, hc::max<>{});  // same on every VP
        if (slowest >= std::min(1e-3, batch_seconds) || reps >= (1 << 16)) {
          if (root) per_call = slowest / reps;
          break;
        }
      }
    });
    const int reps =
        static_cast<int>(std::clamp(batch_seconds / std::max(per_call, 1e-9), 1.0, 200000.0));

    // Run 2: the measurement.
    std::vector<double> seconds(static_cast<std::size_t>(batches) * static_cast<std::size_t>(p));
    double t = 0;
    {
      machine.run([&](hc::Proc& vp) {
        Buffers& b = buffers[static_cast<std::size_t>(vp.id())];
        call(c.op, vp, b, c.algo);
        for (int k = 0; k < batches; ++k) {
          hc::barrier(vp);
          const auto t0 = Clock::now();
          for (int r = 0; r < reps; ++r) call(c.op, vp, b, c.algo);
          seconds[static_cast<std::size_t>(k * p + vp.id())] =
              std::chrono::duration<double>(Clock::now() - t0).count();
        }
      });
      std::vector<double> batch(static_cast<std::size_t>(batches));
      for (int k = 0; k < batches; ++k)  // a batch takes as long as its slowest VP
        batch[static_cast<std::size_t>(k)] =
            *std::max_element(seconds.begin() + k * p, seconds.begin() + (k + 1) * p) / reps;
      std::nth_element(batch.begin(), batch.begin() + batches / 2, batch.end());
      t = batch[static_cast<std::size_t>(batches / 2)];
    }

    // Run 3: one call alone, for the model time.
    const hc::Report one = machine.run(
        [&](hc::Proc& vp) { call(c.op, vp, buffers[static_cast<std::size_t>(vp.id())], c.algo); });

    for (auto _ : state) state.SetIterationTime(t);  // every run is done: report
    state.counters["p"] = p;
    state.counters["bytes"] = static_cast<double>(c.bytes);
    state.counters["GB/s"] = t > 0 ? static_cast<double>(c.bytes) / t * 1e-9 : 0;
    state.counters["model_us"] = one.model_time * 1e6;
    state.counters["sent_bytes"] = static_cast<double>(one.bytes);  // all VPs, one call
    state.counters["messages"] = static_cast<double>(one.messages);
    state.counters["reps"] = reps;
    state.counters["batches"] = batches;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    for (auto _ : state) {
    }
  }
  // A machine's channels keep the buffers of the largest messages they carried (measured: a
  // hypercube:3 machine reached 24 GB after the 64 MiB cases of the full grid, though no case
  // alone needs 4 GB). After a large case, drop the machine: the next benchmark builds a fresh
  // one, outside its timing like any other.
  if (footprint(c, hc::Topology::parse(c.topology).size()) > kDropAfterMiB * 1024.0 * 1024.0)
    g_machines.machine.reset();
}

// ---------------------------------------------------------------------------------------------
// Model calibration: ts and tw of two pinned VPs on this machine.

hc::CostModel calibrate() {
  hc::Options o;
  o.pinning = hc::Pinning::compact;
  hc::Machine m(hc::Topology::ring(2), o);
  constexpr int kTrips = 2000;
  double latency = 0;
  m.run([&](hc::Proc& vp) {
    std::vector<std::uint64_t> word(1);
    for (int round = 0; round < 2; ++round) {  // the first round warms up
      const auto t0 = Clock::now();
      for (int i = 0; i < kTrips; ++i) {
        if (vp.id() == 0)
          vp.send(1, word), vp.recv(1, word);
        else
          vp.recv(0, word), vp.send(0, word);
      }
      if (vp.id() == 0)
        latency = std::chrono::duration<double>(Clock::now() - t0).count() / kTrips / 2;
    }
  });
  constexpr std::size_t kBytes = 16u << 20;
  constexpr int kMessages = 8;
  double per_byte = 0;
  m.run([&](hc::Proc& vp) {
    std::vector<std::byte> buf(kBytes, std::byte{1}), ack(1);
    for (int round = 0; round < 2; ++round) {
      const auto t0 = Clock::now();
      if (vp.id() == 0) {
        for (int i = 0; i < kMessages; ++i) vp.send(1, buf);
        vp.recv(1, ack);
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        per_byte = std::max(0.0, s - 2 * latency) / (kMessages * static_cast<double>(kBytes));
      } else {
        for (int i = 0; i < kMessages; ++i) vp.recv(0, buf);
        vp.send(0, ack);
      }
    }
  });
  return {.ts = latency, .tw = per_byte, .th = 0.0};
}

// ---------------------------------------------------------------------------------------------
// Registration

constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;

void add(std::vector<Case>& cases, Op op, const std::string& topology, std::size_t bytes,
         hc::Algo algo = hc::Algo::automatic, hc::Pinning pinning = hc::Pinning::compact) {
  const hc::Topology t = hc::Topology::parse(topology);
  if (!runs_on(algo, t)) return;
  if (op == Op::barrier) bytes = 0;
  Case c{op, topology, bytes, algo, pinning};
  if (footprint(c, t.size()) > g_settings.max_total_mib * MiB) return;
  for (const Case& d : cases)
    if (case_name(d) == case_name(c)) return;
  cases.push_back(c);
}

const std::vector<Op> kAllOps{Op::broadcast,      Op::reduce,  Op::all_reduce,    Op::all_gather,
                              Op::reduce_scatter, Op::scan,    Op::all_to_all,    Op::barrier,
                              Op::gather,         Op::scatter, Op::circular_shift};
const std::vector<std::size_t> kSweep{8,         64,      512,     4 * KiB, 32 * KiB,
                                      256 * KiB, 1 * MiB, 8 * MiB, 64 * MiB};

// The quick set: what scripts/bench's table and scripts/plot need.
std::vector<Case> quick_cases() {
  std::vector<Case> cs;
  const std::string two = "hypercube:1";  // p = 2, one VP per core
  for (Op op : {Op::broadcast, Op::all_reduce})
    for (std::size_t b : kSweep) add(cs, op, two, b);
  for (hc::Algo a : algorithms_of(Op::all_reduce)) add(cs, Op::all_reduce, two, 1 * MiB, a);
  for (Op op : {Op::reduce, Op::all_gather, Op::reduce_scatter, Op::scan, Op::all_to_all})
    for (std::size_t b : {std::size_t{8}, 1 * MiB}) add(cs, op, two, b);
  add(cs, Op::barrier, two, 0);
  // Oversubscribed: hypercube (the table's row), ring and mesh (the plot's other lines).
  for (const char* t :
       {"hypercube:3", "ring:8", "hypercube:4", "ring:16", "mesh:4x4", "hypercube:6", "ring:64",
        "mesh:8x8", "hypercube:8", "ring:256", "mesh:16x16", "hypercube:10", "ring:1024"}) {
    add(cs, Op::all_reduce, t, 8);
    add(cs, Op::barrier, t, 0);
  }
  return cs;
}

// The big grid: every collective, topology, size and algorithm that can run (memory cap aside),
// plus the unpinned machine for every oversubscribed automatic case.
std::vector<Case> full_cases() {
  std::vector<Case> cs = quick_cases();
  const std::vector<std::string> topologies{"hypercube:1", "ring:2",   "hypercube:3", "ring:8",
                                            "hypercube:4", "ring:16",  "mesh:4x4",    "hypercube:6",
                                            "ring:64",     "mesh:8x8", "hypercube:8", "ring:256",
                                            "mesh:16x16"};
  for (const std::string& t : topologies) {
    const int p = hc::Topology::parse(t).size();
    for (Op op : kAllOps)
      for (std::size_t b : kSweep) {
        if (op == Op::barrier && b != kSweep.front()) continue;
        for (hc::Algo a : algorithms_of(op)) {
          add(cs, op, t, b, a);
          if (p > 2 && a == hc::Algo::automatic) add(cs, op, t, b, a, hc::Pinning::none);
        }
      }
  }
  for (const char* t : {"hypercube:10", "ring:1024", "mesh:32x32"})
    for (Op op : kAllOps)
      for (std::size_t b : {std::size_t{8}, 4 * KiB}) add(cs, op, t, b);
  // Group by machine: the cache keeps the machine in use only.
  std::stable_sort(cs.begin(), cs.end(), [](const Case& a, const Case& b) {
    const int pa = hc::Topology::parse(a.topology).size(),
              pb = hc::Topology::parse(b.topology).size();
    if (pa != pb) return pa < pb;
    if (a.topology != b.topology) return a.topology < b.topology;
    return a.pinning < b.pinning;
  });
  return cs;
}

bool take_flag(std::string_view arg, std::string_view name, std::string* value) {
  if (arg.substr(0, name.size()) != name) return false;
  if (arg.size() == name.size()) return true;
  if (arg[name.size()] != '=') return false;
  if (value) *value = std::string(arg.substr(name.size() + 1));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // Our flags first; the rest goes to Google Benchmark.
  std::vector<char*> rest{argv[0]};
  bool list = false;
  if (const char* e = std::getenv("HYPERCOMM_BENCH_FULL"); e && *e && std::string(e) != "0")
    g_settings.full = true;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    std::string v;
    if (a == "--full")
      g_settings.full = true;
    else if (a == "--quick")
      g_settings.full = false;
    else if (a == "--list")
      list = true;
    else if (take_flag(a, "--batches", &v))
      g_settings.batches = std::stoi(v);
    else if (take_flag(a, "--batch_ms", &v))
      g_settings.batch_ms = std::stod(v);
    else if (take_flag(a, "--max_total_mib", &v))
      g_settings.max_total_mib = std::stod(v);
    else if (take_flag(a, "--model_ts", &v))
      g_settings.model_ts = std::stod(v);
    else if (take_flag(a, "--model_tw", &v))
      g_settings.model_tw = std::stod(v);
    else
      rest.push_back(argv[i]);
  }
  if (g_settings.batches <= 0) g_settings.batches = 7;
  if (g_settings.batch_ms <= 0) g_settings.batch_ms = 20;

  const std::vector<Case> cases = g_settings.full ? full_cases() : quick_cases();
  for (const Case& c : cases)
    benchmark::RegisterBenchmark(case_name(c).c_str(), [c](benchmark::State& s) { run_case(s, c); })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  if (list) {
    for (const Case& c : cases) std::printf("%s\n", case_name(c).c_str());
    return 0;
  }

  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;

  // Calibrate the cost model only when something will run (not for --benchmark_list_tests).
  bool listing = false;
  for (int i = 1; i < rest_argc; ++i) {
    const std::string_view a = rest[static_cast<std::size_t>(i)];
    if (a.rfind("--benchmark_list_tests", 0) == 0 && a.find("false") == std::string_view::npos)
      listing = true;
  }
  const bool given = g_settings.model_ts >= 0 && g_settings.model_tw >= 0;
  g_model = (given || listing) ? hc::CostModel{} : calibrate();
  if (g_settings.model_ts >= 0) g_model.ts = g_settings.model_ts;
  if (g_settings.model_tw >= 0) g_model.tw = g_settings.model_tw;
  g_model.th = 0;
  benchmark::AddCustomContext("hypercomm_mode", g_settings.full ? "full" : "quick");
  auto g = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return std::string(buf);
  };
  benchmark::AddCustomContext("model_ts_seconds", g(g_model.ts));
  benchmark::AddCustomContext("model_tw_seconds_per_byte", g(g_model.tw));
  benchmark::AddCustomContext("batches", std::to_string(g_settings.batches));
  benchmark::AddCustomContext("batch_ms", std::to_string(g_settings.batch_ms));
  benchmark::AddCustomContext("hardware_concurrency",
                              std::to_string(std::thread::hardware_concurrency()));

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_machines.machine.reset();
  return 0;
}
