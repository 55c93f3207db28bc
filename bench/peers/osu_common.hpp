// What the OSU-style sweep programs share (osu_hypercomm, and osu_mpi built against Open MPI and
// against MPICH): the command line, the sizes, the rules that choose the iteration count, and the
// output line, so that scripts/bench --sweep can put the three side by side.
//
// Benchmarks (--bench LIST, default: all of them), as the OSU micro-benchmarks define them:
//   latency         ping-pong between ranks 0 and 1: half the round trip (osu_latency)
//   bandwidth       rank 0 sends a window of --window messages back to back, rank 1 receives
//                   them and answers with 4 bytes; bytes moved / time (osu_bw)
//   broadcast, reduce, all_reduce, all_gather, reduce_scatter, scan, all_to_all, gather,
//   scatter, barrier   the collectives, root 0, m bytes per rank (Grama's m: all_gather and
//                   gather collect p blocks of m, all_to_all sends m to every rank, scatter
//                   hands m to each, reduce_scatter reduces p blocks of m and leaves one)
// Data: bytes (char) for the collectives that move data, float with a sum for the reductions
// (as OSU: MPI_CHAR and MPI_FLOAT), so the reductions start at 4 bytes.
//
// Timings (--mode), the two ways OSU and IMB time a collective:
//   latency      every call alone: a barrier, then the call timed; the mean per rank, averaged
//                over the ranks (OSU's "Avg Latency")
//   throughput   calls back to back after one barrier; the slowest rank's time / calls (IMB)
// Iterations: doubled from 1 until one batch takes 2 ms, then set so that a batch lasts
// --batch-ms (set again where the batches came out under a quarter of that: measured_batches);
// --batches batches, the median reported. Two warm-up calls before each; before
// the first measurement of a run, the first benchmark at its first size for kWarmUpSeconds.
//
// Options: --bench LIST, --mode latency|throughput, --min-bytes/--max-bytes (default 1 B to
// 16 MiB) or --sizes LIST, --p P (osu_hypercomm's VPs; MPI: the ranks), --window W (64),
// --batches B (3), --batch-ms T (10), --impl NAME.
//
// Output: one JSON line per measurement, e.g.
//   {"impl":"openmpi","bench":"all_reduce","mode":"latency","p":2,"bytes":8,"time_us":0.21,
//    "mbps":38.1,"iters":40960}
// time_us is per call (per message for latency and bandwidth); mbps = bytes / time_us (MB/s,
// 10^6 bytes, as OSU prints bandwidth).
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "peer_common.hpp"

namespace osu {

inline const std::vector<std::string> kCollectives{
    "broadcast", "reduce",     "all_reduce", "all_gather", "reduce_scatter",
    "scan",      "all_to_all", "gather",     "scatter",    "barrier"};

// The collectives as a number, so that a timed loop does not compare strings on every call.
enum class Op {
  broadcast,
  reduce,
  all_reduce,
  all_gather,
  reduce_scatter,
  scan,
  all_to_all,
  gather,
  scatter,
  barrier
};
inline Op op_of(std::string_view bench) {
  for (std::size_t i = 0; i < kCollectives.size(); ++i)
    if (kCollectives[i] == bench) return static_cast<Op>(i);
  throw std::invalid_argument("no collective " + std::string(bench));
}

inline bool is_reduction(std::string_view b) {
  return b == "reduce" || b == "all_reduce" || b == "reduce_scatter" || b == "scan";
}
inline bool is_point_to_point(std::string_view b) { return b == "latency" || b == "bandwidth"; }

struct Args {
  std::vector<std::string> benches;
  std::string mode = "latency";  // latency | throughput (collectives only)
  std::size_t min_bytes = 1;
  std::size_t max_bytes = std::size_t{16} << 20;
  std::vector<std::size_t> sizes;  // --sizes: these instead of the powers of two
  int p = 2;
  int window = 64;
  int batches = 3;
  double batch_ms = 10;
  std::string impl;
};

using peer::parse_size;
using peer::split;

// The bytes of one participant's in and out buffers for `bench` with m bytes per rank.
struct BufferSizes {
  std::size_t in, out;
};
inline BufferSizes buffer_sizes(std::string_view bench, std::size_t m, std::size_t p) {
  BufferSizes b{m, m};
  if (bench == "all_gather" || bench == "gather") b.out = m * p;
  if (bench == "reduce_scatter" || bench == "scatter") b.in = m * p;
  if (bench == "all_to_all") b.in = b.out = m * p;
  return b;
}

inline Args parse(int argc, char** argv, const char* default_impl) {
  Args a;
  a.impl = default_impl;
  for (int i = 1; i < argc; ++i) {
    std::string key = argv[i], value;
    if (const auto eq = key.find('='); eq != std::string::npos)
      value = key.substr(eq + 1), key = key.substr(0, eq);
    else if (i + 1 < argc)
      value = argv[++i];
    else
      throw std::invalid_argument("missing value for " + key);
    if (key == "--bench")
      a.benches = split(value);
    else if (key == "--mode")
      a.mode = value;
    else if (key == "--min-bytes")
      a.min_bytes = parse_size(value);
    else if (key == "--max-bytes")
      a.max_bytes = parse_size(value);
    else if (key == "--sizes") {
      for (const std::string& v : split(value)) a.sizes.push_back(parse_size(v));
    } else if (key == "--p")
      a.p = std::stoi(value);
    else if (key == "--window")
      a.window = std::max(1, std::stoi(value));
    else if (key == "--batches")
      a.batches = std::max(1, std::stoi(value));
    else if (key == "--batch-ms")
      a.batch_ms = std::stod(value);
    else if (key == "--impl")
      a.impl = value;
    else
      throw std::invalid_argument("unknown option " + key);
  }
  if (a.mode != "latency" && a.mode != "throughput")
    throw std::invalid_argument("--mode must be latency or throughput, not " + a.mode);
  if (a.benches.empty()) {
    a.benches = {"latency", "bandwidth"};
    a.benches.insert(a.benches.end(), kCollectives.begin(), kCollectives.end());
  }
  for (const std::string& b : a.benches)
    if (!is_point_to_point(b) &&
        std::find(kCollectives.begin(), kCollectives.end(), b) == kCollectives.end())
      throw std::invalid_argument("no benchmark " + b);
  return a;
}

// The sizes of one benchmark: powers of two from --min-bytes to --max-bytes, or those of
// --sizes (the reductions from 4, one float), and 0 alone for the barrier.
inline std::vector<std::size_t> sizes(const std::string& bench, const Args& a) {
  if (bench == "barrier") return {0};
  std::vector<std::size_t> out;
  if (!a.sizes.empty()) {
    for (const std::size_t m : a.sizes)
      if (m >= (is_reduction(bench) ? 4 : 1)) out.push_back(m);
    return out;
  }
  const std::size_t lowest =
      is_reduction(bench) ? std::max<std::size_t>(a.min_bytes, 4) : a.min_bytes;
  for (std::size_t m = 1; m <= a.max_bytes; m *= 2)
    if (m >= lowest) out.push_back(m);
  return out;
}

// Before the first measurement a program runs its first benchmark, unmeasured, for this long:
// the first sizes measured at once came out 2-4x slow (p = 2, 2026-11-27: windowed bandwidth of
// 1-2 B 0.10-0.26 us a message first in the run, 0.038 after a few others), where an MPI
// program has warmed its cores in MPI_Init.
inline constexpr double kWarmUpSeconds = 0.2;

// Calibration: keep doubling while a batch of `iters` took less than this.
inline constexpr double kCalibrationSeconds = 2e-3;
inline constexpr long kMaxIterations = 1 << 17;

inline long iterations_for(double seconds_per_iteration, const Args& a) {
  const double n = a.batch_ms * 1e-3 / std::max(seconds_per_iteration, 1e-9);
  return static_cast<long>(std::clamp(n, 2.0, static_cast<double>(kMaxIterations)));
}

// The warm-up: batch(iters) runs the run's first benchmark at its first size `iters` times and
// returns the seconds it took (the slowest rank's, so that every rank leaves together), with
// doubling iterations until kWarmUpSeconds have passed. Nothing when the run measures nothing.
template <class Batch>
void warm_up(const Args& a, Batch&& batch) {
  if (a.benches.empty()) return;
  const std::vector<std::size_t> first_sizes = sizes(a.benches.front(), a);
  if (first_sizes.empty()) return;
  long iters = 1;
  for (double spent = 0; spent < kWarmUpSeconds; iters = std::min(2 * iters, kMaxIterations))
    spent += batch(a.benches.front(), first_sizes.front(), iters);
}

inline double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The measured batches: a.batches of `iters` calls (batch(iters) returns its per_op and elapsed,
// the same on every rank), the median per call and the calls a batch. A batch that lasted under
// a quarter of --batch-ms shows a calibration slowed by something else (another program starting
// on the cores): the iterations are set again from the fastest batch and the batches run again,
// up to kRecalibrations times. (2026-12-07, 8 VPs on 2 cores, a program started beside the
// benchmark: scan and broadcast of 8 B calibrated to 2-44 calls a batch, whose machine's start
// alone took longer than the calls, and reported 90-13000 us a call against 0.5-1.)
inline constexpr int kRecalibrations = 3;
template <class Batch>
std::pair<double, long> measured_batches(const Args& a, long iters, Batch&& batch) {
  for (int round = 0;; ++round) {
    std::vector<double> per_op;
    double fastest = 0;
    for (int k = 0; k < a.batches; ++k) {
      const auto b = batch(iters);
      per_op.push_back(b.per_op);
      fastest = k == 0 ? b.elapsed : std::min(fastest, b.elapsed);
    }
    const long again = iterations_for(fastest / static_cast<double>(iters), a);
    if (round == kRecalibrations || fastest >= 0.25 * a.batch_ms * 1e-3 || again <= iters)
      return {median(per_op), iters};
    iters = again;
  }
}

// The timing mode a line reports: the point-to-point benchmarks have one.
inline const char* mode_of(const std::string& bench, const Args& a) {
  return is_point_to_point(bench) ? bench.c_str() : a.mode.c_str();
}

inline void print_line(const Args& a, const std::string& bench, std::size_t bytes, double seconds,
                       long iters) {
  const double us = seconds * 1e6;
  const double mbps = us > 0 ? static_cast<double>(bytes) / us : 0;
  std::printf(
      "{\"impl\":\"%s\",\"bench\":\"%s\",\"mode\":\"%s\",\"p\":%d,\"bytes\":%zu,"
      "\"time_us\":%.6g,\"mbps\":%.6g,\"iters\":%ld}\n",
      a.impl.c_str(), bench.c_str(), mode_of(bench, a), a.p, bytes, us, mbps, iters);
  std::fflush(stdout);
}

}  // namespace osu
