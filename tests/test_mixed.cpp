// Collectives mixed at random in one run, and VPs that disagree on a collective: the header
// check turns every disagreement into CollectiveMismatch, never a hang or wrong data.
#include <doctest/doctest.h>

#include <cstdint>
#include <hypercomm/hypercomm.hpp>
#include <random>
#include <string>
#include <vector>

#include "support.hpp"

namespace hc = hypercomm;
using hctest::test_options;

namespace {

std::int64_t value(int vp, int call, std::size_t k) {
  return (vp * 131 + call * 17 + static_cast<std::int64_t>(k) * 7) % 1009;
}
std::vector<std::int64_t> input(int vp, int call, std::size_t n) {
  std::vector<std::int64_t> v(n);
  for (std::size_t k = 0; k < n; ++k) v[k] = value(vp, call, k);
  return v;
}

// One VP's part of a random but agreed sequence of collectives, each checked on the spot
// against what the sequential definition gives; returns the number of wrong results.
int mixed_sequence(hc::Proc& vp, int calls, unsigned seed) {
  std::mt19937 rng(seed);  // the same seed on every VP: the same sequence
  const int p = vp.size(), me = vp.id();
  const auto up = static_cast<std::size_t>(p);
  int wrong = 0;
  auto sum_over = [&](int call, std::size_t n, std::size_t offset, int upto) {
    std::vector<std::int64_t> s(n, 0);
    for (int v = 0; v < upto; ++v)
      for (std::size_t k = 0; k < n; ++k) s[k] += value(v, call, offset + k);
    return s;
  };
  const hc::Algo algos[] = {hc::Algo::automatic,
                            hc::Algo::hypercube,
                            hc::Algo::ring,
                            hc::Algo::mesh,
                            hc::Algo::esbt,
                            hc::Algo::two_phase,
                            hc::Algo::dimension_exchange};
  for (int call = 0; call < calls; ++call) {
    const int op = static_cast<int>(rng() % 12);
    const std::size_t n = std::size_t{1} << (rng() % 5);  // 1 .. 16 elements
    const int root = static_cast<int>(rng() % static_cast<unsigned>(p));
    hc::Algo algo = algos[rng() % 7];
    auto valid = [&](hc::Collective c) {
      try {
        (void)hc::resolve(c, algo, vp.topology(), vp.options().links, n * 8);
        return true;
      } catch (const hc::AlgorithmError&) {
        return false;
      }
    };
    const std::vector<std::int64_t> mine = input(me, call, n);
    std::vector<std::int64_t> out(n), big(n * up), big2(n * up);
    switch (op) {
      case 0:
        if (!valid(hc::Collective::broadcast)) algo = hc::Algo::automatic;
        out = me == root ? mine : std::vector<std::int64_t>(n, -1);
        hc::broadcast(vp, out, root, algo);
        wrong += out != input(root, call, n);
        break;
      case 1:
        if (!valid(hc::Collective::reduce)) algo = hc::Algo::automatic;
        hc::reduce(vp, mine, out, std::plus<>(), root, algo);
        if (me == root) wrong += out != sum_over(call, n, 0, p);
        break;
      case 2:
        if (!valid(hc::Collective::all_reduce)) algo = hc::Algo::automatic;
        hc::all_reduce(vp, mine, out, std::plus<>(), algo);
        wrong += out != sum_over(call, n, 0, p);
        break;
      case 3: {
        if (!valid(hc::Collective::all_gather)) algo = hc::Algo::automatic;
        hc::all_gather(vp, mine, big, algo);
        for (int v = 0; v < p; ++v)
          wrong +=
              !std::equal(big.begin() + static_cast<long>(n) * v,
                          big.begin() + static_cast<long>(n) * (v + 1), input(v, call, n).begin());
        break;
      }
      case 4:
        if (!valid(hc::Collective::reduce_scatter)) algo = hc::Algo::automatic;
        hc::reduce_scatter(vp, input(me, call, n * up), out, std::plus<>(), algo);
        wrong += out != sum_over(call, n, n * static_cast<std::size_t>(me), p);
        break;
      case 5:
        hc::scan(vp, mine, out, std::plus<>());
        wrong += out != sum_over(call, n, 0, me + 1);
        break;
      case 6:
        hc::exscan(vp, mine, out, std::plus<>());
        if (me > 0) wrong += out != sum_over(call, n, 0, me);
        break;
      case 7: {
        const auto all = me == root ? input(root, call, n * up) : std::vector<std::int64_t>{};
        hc::scatter(vp, all, out, root);
        const auto full = input(root, call, n * up);
        wrong += !std::equal(out.begin(), out.end(), full.begin() + static_cast<long>(n) * me);
        break;
      }
      case 8:
        hc::gather(vp, mine, big, root);
        if (me == root)
          for (int v = 0; v < p; ++v)
            wrong += !std::equal(big.begin() + static_cast<long>(n) * v,
                                 big.begin() + static_cast<long>(n) * (v + 1),
                                 input(v, call, n).begin());
        break;
      case 9: {
        if (!valid(hc::Collective::all_to_all)) algo = hc::Algo::automatic;
        for (std::size_t k = 0; k < big.size(); ++k)
          big[k] = me * 100000 + static_cast<std::int64_t>(k);
        hc::all_to_all(vp, big, big2, algo);
        for (int j = 0; j < p; ++j)
          for (std::size_t k = 0; k < n; ++k)
            wrong += big2[static_cast<std::size_t>(j) * n + k] !=
                     j * 100000 + static_cast<std::int64_t>(static_cast<std::size_t>(me) * n + k);
        break;
      }
      case 10: {
        const int shift = root - p / 2;
        hc::circular_shift(vp, mine, out, shift);
        wrong += out != input(((me - shift) % p + p) % p, call, n);
        break;
      }
      default: hc::barrier(vp);
    }
  }
  return wrong;
}

}  // namespace

TEST_CASE("a random sequence of 1200 mixed collectives in one run gives every result right") {
  const int calls = hctest::kSanitized ? 400 : 1200;
  struct Machine {
    hc::Topology topology;
    hc::Links links;
  };
  for (const Machine& m : {Machine{hc::Topology::ring(6), hc::Links::routed},
                           Machine{hc::Topology::mesh(2, 3), hc::Links::strict},
                           Machine{hc::Topology::hypercube(3), hc::Links::strict},
                           Machine{hc::Topology::hypercube(2), hc::Links::routed},
                           Machine{hc::Topology::ring(5), hc::Links::strict}}) {
    CAPTURE(m.topology.name());
    hc::Options o = test_options();
    o.links = m.links;
    std::vector<int> wrong(static_cast<std::size_t>(m.topology.size()), -1);
    hc::run(
        m.topology,
        [&](hc::Proc& vp) {
          wrong[static_cast<std::size_t>(vp.id())] = mixed_sequence(vp, calls, 2026);
        },
        o);
    for (int i = 0; i < m.topology.size(); ++i) CHECK(wrong[static_cast<std::size_t>(i)] == 0);
  }
}

namespace {

// Runs body and expects CollectiveMismatch naming a VP.
void expect_mismatch(const hc::Topology& t, const std::function<void(hc::Proc&)>& body) {
  hc::Options o = test_options();
  o.deadlock_timeout = std::chrono::milliseconds(500);
  try {
    hc::run(t, body, o);
    FAIL("no error");
  } catch (const hc::CollectiveMismatch& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("VP ") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("VPs that disagree on the root, count, operation or algorithm get CollectiveMismatch") {
  for (const auto& t :
       {hc::Topology::hypercube(3), hc::Topology::ring(5), hc::Topology::mesh(3, 3)}) {
    CAPTURE(t.name());
    const int p = t.size();
    SUBCASE("root") {
      expect_mismatch(t, [&](hc::Proc& vp) {
        std::vector<int> buf(4, vp.id());
        hc::broadcast(vp, buf, vp.id() == p - 1 ? 1 : 0);
        hc::barrier(vp);
      });
    }
    SUBCASE("count") {
      expect_mismatch(t, [&](hc::Proc& vp) {
        std::vector<double> in(vp.id() == 1 ? 5 : 4, 1.0), out(in.size());
        hc::all_reduce(vp, in, out, std::plus<>());
      });
    }
    SUBCASE("operation") {
      expect_mismatch(t, [&](hc::Proc& vp) {
        std::vector<int> buf(2, 0);
        if (vp.id() == 0)
          hc::barrier(vp);
        else
          hc::broadcast(vp, buf, 0);
      });
    }
    SUBCASE("algorithm") {
      expect_mismatch(t, [&](hc::Proc& vp) {
        std::vector<int> buf(64, vp.id());
        hc::broadcast(vp, buf, 0, vp.id() == 2 ? hc::Algo::two_phase : hc::Algo::ring);
      });
    }
    SUBCASE("a VP that skips a collective") {
      expect_mismatch(t, [&](hc::Proc& vp) {
        if (vp.id() != p / 2) hc::barrier(vp);
      });
    }
    SUBCASE("a different number of calls") {
      expect_mismatch(t, [&](hc::Proc& vp) {
        const int rounds = vp.id() == 0 ? 3 : 2;
        for (int r = 0; r < rounds; ++r) (void)hc::all_reduce(vp, 1, std::plus<>());
      });
    }
  }
}

TEST_CASE("a mismatch leaves the machine usable") {
  hc::Options o = test_options();
  o.deadlock_timeout = std::chrono::milliseconds(500);
  hc::Machine machine(hc::Topology::hypercube(2), o);
  CHECK_THROWS_AS(machine.run([](hc::Proc& vp) {
    std::vector<int> buf(3, 0);
    hc::broadcast(vp, buf, vp.id() == 3 ? 2 : 0);
  }),
                  hc::CollectiveMismatch);
  std::vector<long> sums(4);
  machine.run([&](hc::Proc& vp) {
    sums[static_cast<std::size_t>(vp.id())] = hc::all_reduce(vp, long{vp.id()}, std::plus<>());
  });
  for (long s : sums) CHECK(s == 6);
}
