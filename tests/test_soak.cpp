// Soak: long random sequences of collectives (every operation, the irregular ones included;
// every algorithm, skipping those that refuse the shape with AlgorithmError on every member;
// sizes 0..64 KiB; random roots and shifts; std::plus, a user commutative operator and the
// non-commutative hctest::MatMul; the whole machine, rows, columns and subcubes; meetings on and
// off), every result checked against a sequential oracle that each VP computes from the
// deterministic inputs of every rank. At least 50,000 collectives within a fixed time budget;
// HYPERCOMM_SOAK_LONG=1 runs 10^6 (the count is printed either way).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "support.hpp"

namespace hc = hypercomm;
using hctest::Mat;
using hctest::MatMul;

namespace {

// A user operator, declared commutative below.
struct Mix {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const { return (a ^ b) + (a & b); }
};

}  // namespace

template <>
struct hypercomm::is_commutative<Mix> : std::true_type {};

namespace {

using I = std::int64_t;
using Counts = std::vector<std::size_t>;

enum Kind : int {
  kBroadcast,
  kReduce,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kScan,
  kExscan,
  kScatter,
  kGather,
  kAllToAll,
  kShift,
  kBarrier,
  kAllGatherv,
  kGatherv,
  kScatterv,
  kAllToAllv,
  kReduceScatterv,
  kKinds
};

// Rank r's element i of collective number `call`.
I value(std::uint64_t call, int r, std::size_t i) {
  std::uint64_t x = call * 0x9E3779B97F4A7C15ull ^ (static_cast<std::uint64_t>(r) << 32) ^ i;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return static_cast<I>(x & 0xFFFFFF);
}
Mat mat(std::uint64_t call, int r, std::size_t i) {
  return hctest::mat_of(r + static_cast<int>(call % 97), i);
}

// One collective as every member sees it: drawn from a generator seeded alike on every VP.
struct Draw {
  Kind kind;
  int group;  // 0 world, 1 row, 2 column, 3 subcube
  unsigned mask;
  hc::Algo algo;
  int op;  // 0 plus, 1 Mix, 2 MatMul (reductions)
  int root;
  int shift;
  std::size_t n;  // elements per block
  Counts counts;  // irregular: per rank
};

std::size_t draw_size(std::mt19937_64& rng, std::size_t elem) {
  const std::size_t most = 65536 / elem;
  const unsigned r = static_cast<unsigned>(rng() % 100);
  if (r < 10) return 0;
  if (r < 80) return 1 + rng() % 16;
  if (r < 96) return 1 + rng() % 256;
  return 1 + rng() % most;
}

constexpr hc::Algo kAlgos[] = {hc::Algo::automatic,
                               hc::Algo::hypercube,
                               hc::Algo::ring,
                               hc::Algo::mesh,
                               hc::Algo::esbt,
                               hc::Algo::two_phase,
                               hc::Algo::dimension_exchange};

Draw draw(std::mt19937_64& rng, const hc::Topology& t, int p_world) {
  Draw d{};
  d.kind = static_cast<Kind>(rng() % kKinds);
  const unsigned g = static_cast<unsigned>(rng() % 4);
  if (t.kind() == hc::Topology::Kind::mesh && (g == 1 || g == 2)) d.group = static_cast<int>(g);
  if (t.kind() == hc::Topology::Kind::hypercube && g == 3 && t.dimension() > 0) {
    d.group = 3;
    d.mask = static_cast<unsigned>(rng() % (1u << t.dimension()));
  }
  d.algo = rng() % 2 == 0 ? hc::Algo::automatic : kAlgos[rng() % std::size(kAlgos)];
  d.op = static_cast<int>(rng() % 3);
  d.root = static_cast<int>(rng() % static_cast<unsigned>(p_world));  // reduced mod group size
  d.shift = static_cast<int>(rng() % 7) - 3;
  const std::size_t elem = d.op == 2 ? sizeof(Mat) : sizeof(I);
  // Block sizes: a p-block collective keeps p * n within 64 KiB.
  d.n = draw_size(rng, elem * static_cast<std::size_t>(p_world));
  d.counts.resize(static_cast<std::size_t>(p_world));
  for (auto& c : d.counts) c = draw_size(rng, elem * static_cast<std::size_t>(p_world));
  return d;
}

hc::Group group_of(hc::Proc& vp, const Draw& d) {
  switch (d.group) {
    case 1: return vp.row();
    case 2: return vp.column();
    case 3: return vp.subcube(d.mask);
    default: return vp.world();
  }
}

// The fold of ranks first..last (inclusive) of element i, left to right.
template <class T, class Op, class Gen>
T fold(Op op, Gen gen, int first, int last, std::size_t i) {
  T acc = gen(first, i);
  for (int r = first + 1; r <= last; ++r) acc = op(acc, gen(r, i));
  return acc;
}

struct Checker {
  std::uint64_t bad = 0;
  template <class T>
  void expect(const std::vector<T>& got, const std::vector<T>& want) {
    if (!(got == want)) ++bad;
  }
};

// A reduction collective with operator Op over element type T.
template <class T, class Op>
void reduction(const hc::Group& g, const Draw& d, Op op, auto gen, Checker& check) {
  const int p = g.size(), r = g.rank();
  const int root = d.root % p;
  const std::size_t n = d.n;
  auto input = [&](int rank, std::size_t count) {
    std::vector<T> v(count);
    for (std::size_t i = 0; i < count; ++i) v[i] = gen(rank, i);
    return v;
  };
  switch (d.kind) {
    case kReduce: {
      const std::vector<T> in = input(r, n);
      std::vector<T> out(r == root ? n : 0);
      hc::reduce(g, in, out, op, root, d.algo);
      if (r == root) {
        std::vector<T> want(n);
        for (std::size_t i = 0; i < n; ++i) want[i] = fold<T>(op, gen, 0, p - 1, i);
        check.expect(out, want);
      }
      break;
    }
    case kAllReduce: {
      const std::vector<T> in = input(r, n);
      std::vector<T> out(n), want(n);
      hc::all_reduce(g, in, out, op, d.algo);
      for (std::size_t i = 0; i < n; ++i) want[i] = fold<T>(op, gen, 0, p - 1, i);
      check.expect(out, want);
      break;
    }
    case kReduceScatter: {
      const std::vector<T> in = input(r, n * static_cast<std::size_t>(p));
      std::vector<T> out(n), want(n);
      hc::reduce_scatter(g, in, out, op, d.algo);
      for (std::size_t i = 0; i < n; ++i)
        want[i] = fold<T>(op, gen, 0, p - 1, static_cast<std::size_t>(r) * n + i);
      check.expect(out, want);
      break;
    }
    case kScan:
    case kExscan: {
      const std::vector<T> in = input(r, n);
      std::vector<T> out = in, want = in;
      if (d.kind == kScan) {
        hc::scan(g, in, out, op);
        for (std::size_t i = 0; i < n; ++i) want[i] = fold<T>(op, gen, 0, r, i);
      } else {
        hc::exscan(g, in, out, op);
        for (std::size_t i = 0; i < n && r > 0; ++i) want[i] = fold<T>(op, gen, 0, r - 1, i);
      }
      check.expect(out, want);
      break;
    }
    default: {  // reduce_scatterv
      Counts counts(d.counts.begin(), d.counts.begin() + p);
      const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
      std::size_t off = 0;
      for (int k = 0; k < r; ++k) off += counts[static_cast<std::size_t>(k)];
      const std::vector<T> in = input(r, total);
      std::vector<T> out(counts[static_cast<std::size_t>(r)]), want(out.size());
      hc::reduce_scatterv(g, in, out, op, counts);
      for (std::size_t i = 0; i < out.size(); ++i) want[i] = fold<T>(op, gen, 0, p - 1, off + i);
      check.expect(out, want);
      break;
    }
  }
}

// Runs collective `call` of the sequence on this VP; false when AlgorithmError refused it (on
// every member alike, before any message).
bool one(hc::Proc& vp, const Draw& d, std::uint64_t call, Checker& check) {
  const hc::Group g = group_of(vp, d);
  const int p = g.size(), r = g.rank();
  const std::size_t n = d.n, pn = n * static_cast<std::size_t>(p);
  auto gen = [call](int rank, std::size_t i) { return value(call, rank, i); };
  auto in_of = [&](int rank, std::size_t count, std::size_t offset = 0) {
    std::vector<I> v(count);
    for (std::size_t i = 0; i < count; ++i) v[i] = value(call, rank, offset + i);
    return v;
  };
  Counts counts(d.counts.begin(), d.counts.begin() + p);
  std::vector<std::size_t> off(static_cast<std::size_t>(p) + 1, 0);
  for (int k = 0; k < p; ++k)
    off[static_cast<std::size_t>(k) + 1] =
        off[static_cast<std::size_t>(k)] + counts[static_cast<std::size_t>(k)];
  const int root = d.root % p;
  try {
    switch (d.kind) {
      case kReduce:
      case kAllReduce:
      case kReduceScatter:
      case kScan:
      case kExscan:
      case kReduceScatterv:
        if (d.op == 0) reduction<I>(g, d, std::plus<>{}, gen, check);
        if (d.op == 1) reduction<I>(g, d, Mix{}, gen, check);
        if (d.op == 2)
          reduction<Mat>(
              g, d, MatMul{}, [call](int rank, std::size_t i) { return mat(call, rank, i); },
              check);
        break;
      case kBroadcast: {
        std::vector<I> buf = r == root ? in_of(root, n) : std::vector<I>(n);
        hc::broadcast(g, buf, root, d.algo);
        check.expect(buf, in_of(root, n));
        break;
      }
      case kAllGather: {
        std::vector<I> out(pn), want(pn);
        hc::all_gather(g, in_of(r, n), out, d.algo);
        for (int k = 0; k < p; ++k)
          for (std::size_t i = 0; i < n; ++i)
            want[static_cast<std::size_t>(k) * n + i] = value(call, k, i);
        check.expect(out, want);
        break;
      }
      case kScatter: {
        std::vector<I> out(n);
        hc::scatter(g, r == root ? in_of(root, pn) : std::vector<I>{}, out, root);
        check.expect(out, in_of(root, n, static_cast<std::size_t>(r) * n));
        break;
      }
      case kGather: {
        std::vector<I> out(r == root ? pn : 0), want(out.size());
        hc::gather(g, in_of(r, n), out, root);
        if (r == root) {
          for (int k = 0; k < p; ++k)
            for (std::size_t i = 0; i < n; ++i)
              want[static_cast<std::size_t>(k) * n + i] = value(call, k, i);
          check.expect(out, want);
        }
        break;
      }
      case kAllToAll: {
        std::vector<I> out(pn), want(pn);
        hc::all_to_all(g, in_of(r, pn), out, d.algo);
        for (int k = 0; k < p; ++k)
          for (std::size_t i = 0; i < n; ++i)
            want[static_cast<std::size_t>(k) * n + i] =
                value(call, k, static_cast<std::size_t>(r) * n + i);
        check.expect(out, want);
        break;
      }
      case kShift: {
        std::vector<I> out(n);
        hc::circular_shift(g, in_of(r, n), out, d.shift);
        const int from = ((r - d.shift) % p + p) % p;
        check.expect(out, in_of(from, n));
        break;
      }
      case kBarrier: hc::barrier(g); break;
      case kAllGatherv: {
        std::vector<I> out(off.back()), want(off.back());
        hc::all_gatherv(g, in_of(r, counts[static_cast<std::size_t>(r)]), out, counts);
        for (int k = 0; k < p; ++k)
          for (std::size_t i = 0; i < counts[static_cast<std::size_t>(k)]; ++i)
            want[off[static_cast<std::size_t>(k)] + i] = value(call, k, i);
        check.expect(out, want);
        break;
      }
      case kGatherv: {
        std::vector<I> out(r == root ? off.back() : 0), want(out.size());
        hc::gatherv(g, in_of(r, counts[static_cast<std::size_t>(r)]), out, counts, root);
        if (r == root) {
          for (int k = 0; k < p; ++k)
            for (std::size_t i = 0; i < counts[static_cast<std::size_t>(k)]; ++i)
              want[off[static_cast<std::size_t>(k)] + i] = value(call, k, i);
          check.expect(out, want);
        }
        break;
      }
      case kScatterv: {
        std::vector<I> out(counts[static_cast<std::size_t>(r)]);
        hc::scatterv(g, r == root ? in_of(root, off.back()) : std::vector<I>{}, out, counts, root);
        check.expect(out, in_of(root, out.size(), off[static_cast<std::size_t>(r)]));
        break;
      }
      default: {  // all_to_allv: rank s sends (counts[s] + k) % 5 elements to rank k
        auto amount = [&](int s, int k) {
          return (counts[static_cast<std::size_t>(s)] + static_cast<std::size_t>(k)) % 5;
        };
        Counts send(static_cast<std::size_t>(p)), recv(static_cast<std::size_t>(p));
        for (int k = 0; k < p; ++k) {
          send[static_cast<std::size_t>(k)] = amount(r, k);
          recv[static_cast<std::size_t>(k)] = amount(k, r);
        }
        std::vector<I> in, out(std::accumulate(recv.begin(), recv.end(), std::size_t{0})), want;
        for (int k = 0; k < p; ++k) {
          const std::vector<I> block =
              in_of(r, send[static_cast<std::size_t>(k)], 1000 * static_cast<std::size_t>(k));
          in.insert(in.end(), block.begin(), block.end());
          const std::vector<I> from =
              in_of(k, recv[static_cast<std::size_t>(k)], 1000 * static_cast<std::size_t>(r));
          want.insert(want.end(), from.begin(), from.end());
        }
        hc::all_to_allv(g, in, send, out, recv);
        check.expect(out, want);
        break;
      }
    }
  } catch (const hc::AlgorithmError&) {
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("soak: random collectives against a sequential oracle") {
  const char* long_mode = std::getenv("HYPERCOMM_SOAK_LONG");
  const bool soak_long = long_mode != nullptr && long_mode[0] == '1';
  const std::uint64_t target = soak_long ? 1'000'000 : (hctest::kSanitized ? 2'000 : 50'000);
  const double budget = soak_long ? 1e9 : (hctest::kSanitized ? 120.0 : 40.0);
  const std::vector<std::pair<const char*, bool>> machines{
      {"ring:5", true},   {"mesh:3x4", false}, {"hypercube:4", true},
      {"mesh:4x4", true}, {"ring:8", false},   {"hypercube:3", false}};
  std::vector<std::unique_ptr<hc::Machine>> pool;
  for (const auto& [name, meetings] : machines) {
    hc::Options o = hctest::test_options();
    o.meetings = meetings;
    o.deadlock_timeout = std::chrono::seconds(30);
    pool.push_back(std::make_unique<hc::Machine>(hc::Topology::parse(name), o));
  }
  constexpr int kPerRun = 100;
  std::uint64_t collectives = 0, refused = 0, bad = 0, runs = 0;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (collectives < target && elapsed() < budget) {
    hc::Machine& machine = *pool[runs % pool.size()];
    const int p = machine.topology().size();
    std::vector<Draw> draws;
    std::mt19937_64 rng(runs * 7919 + 17);
    for (int k = 0; k < kPerRun; ++k) draws.push_back(draw(rng, machine.topology(), p));
    std::vector<std::uint64_t> done(static_cast<std::size_t>(p)), bad_of(done.size());
    const std::uint64_t base = runs * kPerRun;
    machine.run([&](hc::Proc& vp) {
      Checker check;
      std::uint64_t ran = 0;
      for (int k = 0; k < kPerRun; ++k)
        ran +=
            one(vp, draws[static_cast<std::size_t>(k)], base + static_cast<std::uint64_t>(k), check)
                ? 1
                : 0;
      done[static_cast<std::size_t>(vp.id())] = ran;
      bad_of[static_cast<std::size_t>(vp.id())] = check.bad;
    });
    collectives += done[0];
    refused += kPerRun - done[0];
    for (const std::uint64_t b : bad_of) bad += b;
    ++runs;
  }
  std::printf(
      "soak: %llu collectives in %llu runs, %.1f s (%llu refused with AlgorithmError), %llu "
      "wrong results\n",
      static_cast<unsigned long long>(collectives), static_cast<unsigned long long>(runs),
      elapsed(), static_cast<unsigned long long>(refused), static_cast<unsigned long long>(bad));
  std::fflush(stdout);
  CHECK(bad == 0);
  CHECK(collectives >= target);
}
