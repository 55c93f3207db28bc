// Collecting uneven results on one VP for output. VP i searches its share [i N / p, (i+1) N / p)
// of the integers below N for primes and records each as a Prime {value, the VP that found it,
// the gap to the previous prime}; the shares hold different numbers of primes (fewer as numbers
// grow), so
//   1. the VPs tell each other how many records they have             (all_gather of one count)
//   2. gatherv collects the records on VP 0, in VP order                (uneven blocks)
// and VP 0 prints the first few. The records are checked against a sequential sieve.
//
// Communication (book, p = 2^d; Grama et al. 4.2 and 4.4): all-gather of one 8-byte count
// ts log p + tw 8 (p-1), then the gather ts log p + tw m (p-1) with m the average block (here the
// blocks are uneven: the root receives every block but its own).
//
// Usage: gather_results [N] [topology]     (defaults: N = 1000000, hypercube:3)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <hypercomm/hypercomm.hpp>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace hc = hypercomm;

namespace {

struct Prime {
  std::uint64_t value;
  std::int32_t found_by;  // the VP
  std::int32_t gap;       // to the previous prime (0 for 2)
  bool operator==(const Prime&) const = default;
};

bool is_prime(std::uint64_t x) {
  if (x < 2) return false;
  if (x % 2 == 0) return x == 2;
  for (std::uint64_t d = 3; d * d <= x; d += 2)
    if (x % d == 0) return false;
  return true;
}

std::uint64_t previous_prime(std::uint64_t x) {  // the largest prime below x, 0 if none
  while (x > 2) {
    --x;
    if (is_prime(x)) return x;
  }
  return 0;
}

std::uint64_t first_of(std::uint64_t n, int p, int i) {
  return n * static_cast<std::uint64_t>(i) / static_cast<std::uint64_t>(p);
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t n = 1'000'000;
  std::string shape = "hypercube:3";
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg.find(':') != std::string::npos)
      shape = arg;
    else
      n = std::strtoull(arg.c_str(), nullptr, 10);
  }
  hc::Topology topology = hc::Topology::ring(1);
  try {
    topology = hc::Topology::parse(shape);
  } catch (const hc::TopologyError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  const int p = topology.size();
  std::printf("gathering results: the primes below %llu, found on %s (p = %d), collected on VP 0\n",
              static_cast<unsigned long long>(n), topology.name().c_str(), p);

  hc::Options opt;
  opt.model = {.ts = 1e-6, .tw = 1e-9, .th = 0.0};  // seconds, seconds per byte
  std::vector<Prime> collected;                     // VP 0's out
  std::vector<std::size_t> per_vp;                  // the counts, as VP 0 saw them

  const hc::Report report = hc::run(
      topology,
      [&](hc::Proc& vp) {
        const int me = vp.id();
        std::vector<Prime> mine;
        std::uint64_t last = previous_prime(first_of(n, p, me));
        for (std::uint64_t x = first_of(n, p, me); x < first_of(n, p, me + 1); ++x) {
          if (!is_prime(x)) continue;
          mine.push_back({x, me, last == 0 ? 0 : static_cast<std::int32_t>(x - last)});
          last = x;
        }
        // 1. Every VP learns every count (gatherv's counts are the same on every member).
        const std::vector<std::size_t> counts = hc::all_gather(vp, std::size_t{mine.size()});
        // 2. The records to VP 0; the others pass an empty out.
        std::vector<Prime> out;
        if (me == 0) out.resize(std::accumulate(counts.begin(), counts.end(), std::size_t{0}));
        hc::gatherv(vp, mine, out, counts, 0);
        if (me == 0) {
          collected = std::move(out);
          per_vp = counts;
        }
      },
      opt);

  // Output, as VP 0 would write it.
  std::printf("VP 0 holds %zu records; per VP:", collected.size());
  for (const std::size_t c : per_vp) std::printf(" %zu", c);
  std::printf("\n");
  for (std::size_t i = 0; i < collected.size() && i < 6; ++i)
    std::printf("  %llu (VP %d, gap %d)\n", static_cast<unsigned long long>(collected[i].value),
                collected[i].found_by, collected[i].gap);
  if (collected.size() > 6) {
    const Prime& z = collected.back();
    std::printf("  ...\n  %llu (VP %d, gap %d)\n", static_cast<unsigned long long>(z.value),
                z.found_by, z.gap);
  }

  // Sequential check: a sieve, and who should have found each prime.
  std::vector<char> composite(static_cast<std::size_t>(n), 0);
  std::vector<Prime> expected;
  std::uint64_t last = 0;
  int owner = 0;
  for (std::uint64_t x = 2; x < n; ++x) {
    if (composite[static_cast<std::size_t>(x)]) continue;
    for (std::uint64_t y = x * x; y < n; y += x) composite[static_cast<std::size_t>(y)] = 1;
    while (x >= first_of(n, p, owner + 1)) ++owner;
    expected.push_back({x, owner, last == 0 ? 0 : static_cast<std::int32_t>(x - last)});
    last = x;
  }
  const bool right = collected == expected;
  std::printf("result      %s (%zu records against a sequential sieve)\n",
              right ? "correct" : "WRONG", expected.size());
  std::printf(
      "wall time   %.6f s  (%d VPs on %u cores: the search by trial division, the gather)\n",
      report.wall_seconds, p, std::thread::hardware_concurrency());
  const double ts = opt.model.ts, tw = opt.model.tw;
  std::printf("model time  %.4e s  (ts = %g s, tw = %g s/byte; communication only)\n",
              report.model_time, ts, tw);
  if (p > 1 && (p & (p - 1)) == 0) {
    const double P = p, lg = std::log2(P);
    const double m = static_cast<double>(sizeof(Prime) * expected.size()) / P;
    std::printf(
        "book        ts log p + tw 8 (p-1) + ts log p + tw m (p-1), m = %.0f bytes = %.4e s\n", m,
        2 * ts * lg + tw * 8 * (P - 1) + tw * m * (P - 1));
    std::printf(
        "            (m: the average block; the blocks are uneven, so the model differs)\n");
  } else if (p > 1) {
    std::printf("book        given for p = 2^d (hypercube algorithms) only\n");
  }
  if (!right) {
    std::printf("WRONG: the gathered records differ from the sequential ones\n");
    return 1;
  }
  return 0;
}
