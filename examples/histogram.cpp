// A distributed histogram with uneven bins. n values lie in [0, 1000) with density rising
// towards 0 (value = 1000 u^2, u uniform); the B bins have uneven widths, bin k covering
// [1000 (k/B)^2, 1000 ((k+1)/B)^2), so that each holds about n/B values. VP i holds the values
// [i n / p, (i+1) n / p); then
//   1. every VP counts its values into all B bins                    (local, n/p binary searches)
//   2. reduce_scatterv sums the p histograms, each VP getting the totals of its own range of bins:
//      B is not divisible by p, so the ranges are uneven (the first B mod p VPs get one more bin)
// and the totals are checked against the sequential histogram of all values.
//
// Communication (book, the reduce-scatter of Grama et al. 4.2-4.3 with m = 8 B/p bytes a block;
// here blocks differ by one bin): p = 2^d: ts log p + tw m (p-1) (Algorithm 4.8, recursive
// halving); a mesh: ts (rows + cols - 2) + tw m (p-1) (4.6); a ring: (ts + tw m)(p-1) (4.5).
//
// Usage: histogram [values] [bins] [topology]     (defaults: 1000000 values, 1003 bins,
// hypercube:3)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace hc = hypercomm;

namespace {

// Value number i: 1000 u^2 with u from splitmix64 of i.
double value_of(std::uint64_t i) {
  std::uint64_t x = i + 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  const double u = static_cast<double>(x >> 11) * 0x1.0p-53;  // [0, 1)
  return 1000.0 * u * u;
}

// B + 1 bin edges, uneven: bin k is [edges[k], edges[k+1]).
std::vector<double> edges_of(int bins) {
  std::vector<double> e(static_cast<std::size_t>(bins) + 1);
  for (int k = 0; k <= bins; ++k) {
    const double f = static_cast<double>(k) / bins;
    e[static_cast<std::size_t>(k)] = 1000.0 * f * f;
  }
  e.back() = 1000.0;
  return e;
}

std::size_t bin_of(const std::vector<double>& edges, double v) {
  const auto it = std::upper_bound(edges.begin(), edges.end(), v);
  return static_cast<std::size_t>(it - edges.begin()) - 1;  // v in [0, 1000): 0 .. B-1
}

std::size_t first_of(std::size_t n, int p, int i) {
  return n * static_cast<std::size_t>(i) / static_cast<std::size_t>(p);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 1'000'000;
  int bins = 1003;
  std::string shape = "hypercube:3";
  int numbers = 0;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg.find(':') != std::string::npos) {
      shape = arg;
    } else if (numbers++ == 0) {
      n = std::strtoull(arg.c_str(), nullptr, 10);
    } else {
      bins = std::atoi(arg.c_str());
    }
  }
  hc::Topology topology = hc::Topology::ring(1);
  try {
    topology = hc::Topology::parse(shape);
  } catch (const hc::TopologyError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  if (bins < 1) {
    std::fprintf(stderr, "usage: histogram [values] [bins >= 1] [topology]\n");
    return 2;
  }
  const int p = topology.size();
  const auto B = static_cast<std::size_t>(bins);
  const std::vector<double> edges = edges_of(bins);

  // Rank i's range of bins: B/p, one more for the first B mod p ranks.
  std::vector<std::size_t> counts(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i)
    counts[static_cast<std::size_t>(i)] =
        B / static_cast<std::size_t>(p) +
        (static_cast<std::size_t>(i) < B % static_cast<std::size_t>(p) ? 1 : 0);
  std::vector<std::size_t> first_bin(static_cast<std::size_t>(p) + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), first_bin.begin() + 1);

  std::printf("histogram: %zu values into %d uneven bins on %s, p = %d: %zu or %zu bins a VP%s\n",
              n, bins, topology.name().c_str(), p, counts.back(), counts.front(),
              B % static_cast<std::size_t>(p) != 0 ? " (B not divisible by p)" : "");

  hc::Options opt;
  opt.model = {.ts = 1e-6, .tw = 1e-9, .th = 0.0};  // seconds, seconds per byte
  std::vector<std::vector<std::uint64_t>> totals(static_cast<std::size_t>(p));

  const hc::Report report = hc::run(
      topology,
      [&](hc::Proc& vp) {
        const int me = vp.id();
        // 1. This VP's values into all B bins.
        std::vector<std::uint64_t> local(B, 0);
        for (std::size_t i = first_of(n, p, me); i < first_of(n, p, me + 1); ++i)
          ++local[bin_of(edges, value_of(i))];
        // 2. The totals of this VP's bins.
        std::vector<std::uint64_t> mine(counts[static_cast<std::size_t>(me)]);
        hc::reduce_scatterv(vp, local, mine, std::plus<>(), counts);
        totals[static_cast<std::size_t>(me)] = std::move(mine);
      },
      opt);

  // Sequential check.
  std::vector<std::uint64_t> sequential(B, 0);
  for (std::size_t i = 0; i < n; ++i) ++sequential[bin_of(edges, value_of(i))];
  int wrong = 0;
  for (int r = 0; r < p; ++r) {
    const auto& got = totals[static_cast<std::size_t>(r)];
    if (got.size() != counts[static_cast<std::size_t>(r)]) {
      ++wrong;
      std::printf("  VP %d holds %zu bins, not %zu\n", r, got.size(),
                  counts[static_cast<std::size_t>(r)]);
      continue;
    }
    for (std::size_t k = 0; k < got.size(); ++k) {
      const std::size_t bin = first_bin[static_cast<std::size_t>(r)] + k;
      if (got[k] != sequential[bin] && wrong++ < 5)
        std::printf("  bin %zu (VP %d): %llu, sequential %llu\n", bin, r,
                    static_cast<unsigned long long>(got[k]),
                    static_cast<unsigned long long>(sequential[bin]));
    }
  }
  const auto [lo, hi] = std::minmax_element(sequential.begin(), sequential.end());
  std::printf(
      "bins        %zu values each on average, %llu to %llu; bin 0 = [%.4f, %.4f), bin %d = [%.1f, "
      "%.1f)\n",
      n / B, static_cast<unsigned long long>(*lo), static_cast<unsigned long long>(*hi), edges[0],
      edges[1], bins - 1, edges[B - 1], edges[B]);
  std::printf("result      %s (every VP's bins against the sequential histogram, exact)\n",
              wrong == 0 ? "correct" : "WRONG");
  std::printf(
      "wall time   %.6f s  (%d VPs on %u cores: counting, the reduction, thread switches)\n",
      report.wall_seconds, p, std::thread::hardware_concurrency());
  const double ts = opt.model.ts, tw = opt.model.tw;
  std::printf("model time  %.4e s  (ts = %g s, tw = %g s/byte; communication only)\n",
              report.model_time, ts, tw);
  const double m = 8.0 * static_cast<double>(B) / p;  // bytes of an average block of bins
  const double P = p;
  if (p == 1) {
    std::printf("book        0 (one VP: nothing to send)\n");
  } else if ((p & (p - 1)) == 0) {
    std::printf(
        "book        ts log p + tw m (p-1), m = 8 B/p bytes            = %.4e s (Alg. 4.8)\n",
        ts * std::log2(P) + tw * m * (P - 1));
  } else if (topology.kind() == hc::Topology::Kind::mesh) {
    std::printf("book        ts (rows + cols - 2) + tw m (p-1), m = 8 B/p bytes = %.4e s (4.6)\n",
                ts * (topology.rows() + topology.cols() - 2) + tw * m * (P - 1));
  } else {
    std::printf(
        "book        (ts + tw m)(p-1), m = 8 B/p bytes                 = %.4e s (Alg. 4.5)\n",
        (ts + tw * m) * (P - 1));
  }
  std::printf("            (blocks here differ by one bin: m is their average)\n");
  if (wrong != 0) {
    std::printf("WRONG: %d bins differ from the sequential histogram\n", wrong);
    return 1;
  }
  return 0;
}
