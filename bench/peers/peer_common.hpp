// What the peer programs (omp_bench, barrier_bench, mpi_bench) share: the command line, the
// sizes, the batch timing rule and the output line, so their results line up with
// bench_collectives' (scripts/bench joins them by op, p and bytes).
//
// Command line (every program):
//   --op LIST       comma-separated: broadcast, all_reduce, barrier, ... (what the program has)
//   --p LIST        thread counts (mpi_bench: must be the communicator's size; may be omitted)
//   --bytes LIST    message sizes m in bytes, per participant (Grama's m), e.g. 8,1048576;
//                   suffixes K/M (KiB, MiB) accepted; the barrier ignores them
//   --reps N        calls per batch; 0 (default): chosen so that a batch lasts --batch-ms
//   --batches B     batches (default 7); the result is the median over batches of the
//                   slowest participant's batch time / N
//   --batch-ms T    target batch length for the automatic N (default 20)
//   --impl NAME     the name written into each line (default: the program's)
//   --max-total-mib M   skip shapes whose buffers (all participants together) exceed M MiB
//
// Output: one JSON object per line and per measurement:
//   {"impl":"openmp-passive","op":"all_reduce","p":8,"bytes":8,"time_us":1.234,
//    "gbps":0.00648,"reps":4096,"batches":5,"status":"ok"}
// gbps = bytes / time (the same "algorithm bandwidth" as bench_collectives' GB/s counter).
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace peer {

struct Args {
  std::vector<std::string> ops;
  std::vector<int> ps;
  std::vector<std::size_t> bytes{8};
  long reps = 0;
  int batches = 7;
  double batch_ms = 20;
  std::string impl;
  double max_total_mib = 2048;
  std::string bind = "compact";  // barrier_bench: compact (thread i on CPU i mod n) or none
};

inline std::vector<std::string> split(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t comma = s.find(',', start);
    const std::size_t end = comma == std::string_view::npos ? s.size() : comma;
    if (end > start) out.emplace_back(s.substr(start, end - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

inline std::size_t parse_size(const std::string& s) {
  std::size_t pos = 0;
  const double v = std::stod(s, &pos);
  std::string suffix = s.substr(pos);
  double mult = 1;
  if (suffix == "K" || suffix == "KiB" || suffix == "k")
    mult = 1024;
  else if (suffix == "M" || suffix == "MiB")
    mult = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GiB")
    mult = 1024.0 * 1024 * 1024;
  else if (!suffix.empty() && suffix != "B")
    throw std::invalid_argument("bad size: " + s);
  return static_cast<std::size_t>(v * mult);
}

inline Args parse(int argc, char** argv, const char* default_impl) {
  Args a;
  a.impl = default_impl;
  for (int i = 1; i < argc; ++i) {
    std::string key = argv[i], value;
    if (const auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1), key = key.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw std::invalid_argument("missing value for " + key);
    }
    if (key == "--op")
      a.ops = split(value);
    else if (key == "--p") {
      a.ps.clear();
      for (auto& v : split(value)) a.ps.push_back(std::stoi(v));
    } else if (key == "--bytes") {
      a.bytes.clear();
      for (auto& v : split(value)) a.bytes.push_back(parse_size(v));
    } else if (key == "--reps")
      a.reps = std::stol(value);
    else if (key == "--batches")
      a.batches = std::max(1, std::stoi(value));
    else if (key == "--batch-ms")
      a.batch_ms = std::stod(value);
    else if (key == "--impl")
      a.impl = value;
    else if (key == "--max-total-mib")
      a.max_total_mib = std::stod(value);
    else if (key == "--bind")
      a.bind = value;
    else
      throw std::invalid_argument("unknown option " + key);
  }
  if (a.ops.empty()) throw std::invalid_argument("--op is required");
  return a;
}

// Sizes per operation: the barrier moves no data and is measured once (bytes = 0).
inline std::vector<std::size_t> sizes_for(const std::string& op, const Args& a) {
  if (op == "barrier") return {0};
  return a.bytes;
}

// Bytes each participant holds for one call (in + out), for the memory cap.
inline double bytes_per_participant(const std::string& op, std::size_t m, int p) {
  const double b = static_cast<double>(m);
  if (op == "all_gather" || op == "reduce_scatter" || op == "gather" || op == "scatter")
    return b * (p + 1);
  if (op == "all_to_all") return 2.0 * b * p;
  if (op == "barrier") return 0;
  return 2 * b;
}

inline bool too_big(const std::string& op, std::size_t m, int p, const Args& a) {
  return bytes_per_participant(op, m, p) * p > a.max_total_mib * 1024 * 1024;
}

// all_to_allv with skewed counts (hypercomm_bench, mpi_bench): doubles rank i sends rank j, a
// share of `bytes` falling as 1/(1 + (j - i) mod p) (zipf over the distance), at least one.
inline std::size_t skewed_count(int i, int j, int p, std::size_t bytes) {
  double total = 0;
  for (int k = 0; k < p; ++k) total += 1.0 / (1 + k);
  const double share = 1.0 / (1 + ((j - i) % p + p) % p) / total;
  return std::max<std::size_t>(1, static_cast<std::size_t>(share * static_cast<double>(bytes) / 8));
}

// The uneven counts (elements of 8 bytes) of the rooted and all-gathering irregular collectives
// (gatherv, scatterv, all_gatherv): rank i holds half of `bytes`, plus a quarter for each step
// of i mod 3 (0.5, 0.75 and 1x `bytes`, at least 1, 2 and 3 elements), the same on every rank.
inline std::size_t uneven_count(int i, std::size_t bytes) {
  const std::size_t n = bytes / 8;
  return std::max<std::size_t>(1, n / 2) +
         static_cast<std::size_t>(i % 3) * std::max<std::size_t>(1, n / 4);
}

// Calls per batch from a calibration (seconds per call).
inline long reps_for(double per_call, const Args& a) {
  if (a.reps > 0) return a.reps;
  const double n = a.batch_ms * 1e-3 / std::max(per_call, 1e-9);
  return static_cast<long>(std::clamp(n, 1.0, 200000.0));
}

// A calibration round of `reps` calls is long enough once its slowest participant took this.
inline double calibration_seconds(const Args& a) { return std::min(1e-3, a.batch_ms * 1e-3); }

// Median of the per-batch times (each already the slowest participant's time / reps).
inline double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

inline void print_line(const std::string& impl, const std::string& op, int p, std::size_t bytes,
                       double seconds, long reps, int batches, const char* status = "ok") {
  const double us = seconds * 1e6;
  const double gbps = seconds > 0 ? static_cast<double>(bytes) / seconds * 1e-9 : 0;
  std::printf(
      "{\"impl\":\"%s\",\"op\":\"%s\",\"p\":%d,\"bytes\":%zu,\"time_us\":%.6g,\"gbps\":%.6g,"
      "\"reps\":%ld,\"batches\":%d,\"status\":\"%s\"}\n",
      impl.c_str(), op.c_str(), p, bytes, us, gbps, reps, batches, status);
  std::fflush(stdout);
}

inline void print_skip(const std::string& impl, const std::string& op, int p, std::size_t bytes,
                       const char* status) {
  std::printf("{\"impl\":\"%s\",\"op\":\"%s\",\"p\":%d,\"bytes\":%zu,\"status\":\"%s\"}\n",
              impl.c_str(), op.c_str(), p, bytes, status);
  std::fflush(stdout);
}

}  // namespace peer
