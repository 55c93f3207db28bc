// Collectives mixed at random in one run, and VPs that disagree on a collective: the header
// check turns every disagreement into CollectiveMismatch, never a hang or wrong data.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
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

namespace {

// A user operator, for a mismatch against std::plus<>.
struct Larger {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a > b ? a : b; }
};

// Runs body with meetings on or off and returns the CollectiveMismatch's text ("" if none).
std::string mismatch_text(const hc::Topology& t, bool meetings,
                          const std::function<void(hc::Proc&)>& body) {
  hc::Options o = test_options();
  o.meetings = meetings;
  o.deadlock_timeout = std::chrono::milliseconds(500);
  try {
    hc::run(t, body, o);
  } catch (const hc::CollectiveMismatch& e) {
    return e.what();
  }
  return "";
}

// Whether a CollectiveMismatch says that the operators differ: by name where the two headers
// met, in the list of what may differ where a VP found the other in another meeting or message.
bool names_operator(const std::string& what) {
  return what.find("disagree on the operator") != std::string::npos ||
         what.find("count, operator or algorithm") != std::string::npos;
}

}  // namespace

TEST_CASE(
    "VPs that reduce with different operators or element types get CollectiveMismatch naming "
    "both") {
  // reduce keeps only the digest's top four bits beside its root: the pairs below differ there.
  using hc::detail::operator_digest;
  REQUIRE((operator_digest<std::int64_t, std::plus<>>() & 0xF000) !=
          (operator_digest<std::int64_t, Larger>() & 0xF000));
  REQUIRE((operator_digest<std::int64_t, std::plus<>>() & 0xF000) !=
          (operator_digest<double, std::plus<>>() & 0xF000));
  for (const char* shape : {"hypercube:3", "ring:5", "mesh:3x3", "linear:4", "ring:2"}) {
    const hc::Topology t = hc::Topology::parse(shape);
    const int p = t.size();
    const int odd = p - 1;  // the VP that reduces otherwise
    for (const bool meetings : {true, false}) {
      CAPTURE(shape);
      CAPTURE(meetings);
      // Each collective with the odd VP's operator and with the others'.
      const auto each = [&](auto reduction) {
        const std::string what = mismatch_text(t, meetings, [&](hc::Proc& vp) {
          if (vp.id() == odd)
            reduction(vp, Larger{});
          else
            reduction(vp, std::plus<>());
        });
        CAPTURE(what);
        CHECK(names_operator(what));
        CHECK(
            (what.find(hctest::operator_text("std::plus<void>", "long int")) != std::string::npos ||
             what.find(hctest::operator_text("Larger", "long int")) != std::string::npos));
        CHECK(what.find("disagree on the root") == std::string::npos);
      };
      each([](hc::Proc& vp, auto op) { (void)hc::all_reduce(vp, std::int64_t{vp.id()}, op); });
      each([](hc::Proc& vp, auto op) { (void)hc::scan(vp, std::int64_t{vp.id()}, op); });
      each([](hc::Proc& vp, auto op) {
        std::vector<std::int64_t> in(4, vp.id()), out(4);
        hc::exscan(vp, in, out, op);
      });
      each([&](hc::Proc& vp, auto op) {
        std::vector<std::int64_t> in(static_cast<std::size_t>(2 * p), vp.id()), out(2);
        hc::reduce_scatter(vp, in, out, op);
      });
      each([&](hc::Proc& vp, auto op) {
        std::vector<std::size_t> counts(static_cast<std::size_t>(p), 1);
        std::vector<std::int64_t> in(static_cast<std::size_t>(p), vp.id()), out(1);
        hc::reduce_scatterv(vp, in, out, op, counts);
      });
      for (const int root : {0, p / 2}) {
        const std::string what = mismatch_text(t, meetings, [&](hc::Proc& vp) {
          std::vector<std::int64_t> in(3, vp.id()), out(3);
          if (vp.id() == odd)
            hc::reduce(vp, in, out, Larger{}, root);
          else
            hc::reduce(vp, in, out, std::plus<>(), root);
        });
        CAPTURE(what);
        CHECK(names_operator(what));
        CHECK(what.find("root " + std::to_string(root)) != std::string::npos);
      }
      // One operator on another element type of the same size.
      const std::string what = mismatch_text(t, meetings, [&](hc::Proc& vp) {
        if (vp.id() == odd)
          (void)hc::all_reduce(vp, double{1}, std::plus<>());
        else
          (void)hc::all_reduce(vp, std::int64_t{1}, std::plus<>());
      });
      CAPTURE(what);
      CHECK(names_operator(what));
      CHECK((what.find(hctest::operator_text("std::plus<void>", "double")) != std::string::npos ||
             what.find(hctest::operator_text("std::plus<void>", "long int")) != std::string::npos));
      // A root and an operator at once.
      const std::string both = mismatch_text(t, meetings, [&](hc::Proc& vp) {
        std::vector<std::int64_t> in(3, vp.id()), out(3);
        if (vp.id() == odd)
          hc::reduce(vp, in, out, Larger{}, 1 % p);
        else
          hc::reduce(vp, in, out, std::plus<>(), 0);
      });
      CAPTURE(both);
      CHECK((both.find("disagree on the root and operator") != std::string::npos ||
             both.find("its root, count, operator or algorithm") != std::string::npos ||
             both.find("its count, operator or algorithm") != std::string::npos));
    }
  }
  // On groups: every row of a mesh at once, one row's member with another operator.
  const std::string what = mismatch_text(hc::Topology::mesh(3, 3), true, [](hc::Proc& vp) {
    const hc::Group row = vp.row();
    if (vp.id() == 4)
      (void)hc::all_reduce(row, std::int64_t{1}, Larger{});
    else
      (void)hc::all_reduce(row, std::int64_t{1}, std::plus<>());
  });
  CAPTURE(what);
  CHECK(names_operator(what));
  CHECK(what.find("row 1 of mesh:3x3") != std::string::npos);
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

namespace {

// Point-to-point messages sent before a collective and received after it, by a program that
// keeps them outstanding across it: the collective's messages go by them (MPI keeps the two in
// contexts apart). Each VP sends three messages (small, inline-sized and large) to the next VP,
// runs the collective `which`, then receives the previous VP's three, in order. `reverse`: then
// a broadcast's root sends a point-to-point message after it, which the root's partner receives
// before it enters the broadcast, whose message came first (a program MPI calls unsafe: a
// broadcast may hold its root until every VP has come, as a meeting does; with messages it does
// not). Returns the wrong values.
long outstanding_across(hc::Proc& vp, int which, int round, bool reverse) {
  const int p = vp.size();
  const int me = vp.id();
  const int next = (me + 1) % p;
  const int prev = (me + p - 1) % p;
  long bad = 0;
  const auto sized = [&](int from, std::size_t n) {
    std::vector<std::int64_t> v(n);
    for (std::size_t k = 0; k < n; ++k) v[k] = from * 1000003 + round * 7919 + static_cast<int>(k);
    return v;
  };
  const std::size_t sizes[] = {1, 40, 20000};
  for (const std::size_t n : sizes) vp.send(next, sized(me, n));
  switch (which) {
    case 0: bad += hc::all_reduce(vp, std::int64_t{me}, std::plus<>()) != p * (p - 1) / 2; break;
    case 1: {
      std::vector<std::int64_t> buf(3, me == round % p ? round : -1);
      hc::broadcast(vp, std::span<std::int64_t>(buf), round % p);
      for (std::int64_t x : buf) bad += x != round;
      break;
    }
    case 2: hc::barrier(vp); break;
    case 3: {
      const std::vector<std::int64_t> all = hc::all_gather(vp, std::int64_t{me * 3});
      for (int k = 0; k < p; ++k) bad += all[static_cast<std::size_t>(k)] != k * 3;
      break;
    }
    case 4: bad += hc::scan(vp, std::int64_t{me}, std::plus<>()) != me * (me + 1) / 2; break;
    case 5: {
      std::vector<std::int64_t> in(static_cast<std::size_t>(p)), out(in.size());
      for (int k = 0; k < p; ++k) in[static_cast<std::size_t>(k)] = me * 100 + k;
      hc::all_to_all(vp, std::span<const std::int64_t>(in), std::span<std::int64_t>(out));
      for (int k = 0; k < p; ++k) bad += out[static_cast<std::size_t>(k)] != k * 100 + me;
      break;
    }
    default: {
      std::vector<std::int64_t> in(2048, me), sum(me == 0 ? 2048 : 0);
      hc::reduce(vp, std::span<const std::int64_t>(in), std::span<std::int64_t>(sum), std::plus<>(),
                 0);
      for (std::int64_t x : sum) bad += x != p * (p - 1) / 2;
    }
  }
  for (const std::size_t n : sizes) {
    std::vector<std::int64_t> got(n);
    vp.recv(prev, std::span<std::int64_t>(got));
    bad += got != sized(prev, n);
  }
  if (!reverse) return bad;
  // The collective's message first, then the point-to-point one, taken the other way round.
  const int root = round % p;
  const int partner = (root + 1) % p;
  std::vector<std::int64_t> value(5, me == root ? round + 1 : -1);
  if (me == root) {
    hc::broadcast(vp, std::span<std::int64_t>(value), root);
    vp.send(partner, sized(root, 300));
  } else if (me == partner) {
    std::vector<std::int64_t> got(300);
    vp.recv(root, std::span<std::int64_t>(got));
    bad += got != sized(root, 300);
    hc::broadcast(vp, std::span<std::int64_t>(value), root);
  } else {
    hc::broadcast(vp, std::span<std::int64_t>(value), root);
  }
  for (std::int64_t x : value) bad += x != round + 1;
  return bad;
}

}  // namespace

TEST_CASE("point-to-point messages outstanding across collectives are taken in order after them") {
  for (const char* shape : {"ring:2", "ring:5", "hypercube:3", "mesh:2x3", "linear:4"}) {
    const hc::Topology t = hc::Topology::parse(shape);
    for (const bool meetings : {true, false}) {
      for (const bool record : {false, true}) {
        CAPTURE(shape);
        CAPTURE(meetings);
        CAPTURE(record);
        hc::Options o = test_options();
        o.meetings = meetings;
        o.record = record;
        o.model = {.ts = 1.0, .tw = 0.01, .th = 0.5};
        std::vector<long> wrong(static_cast<std::size_t>(t.size()), 0);
        const hc::Report r = hc::run(
            t,
            [&](hc::Proc& vp) {
              for (int round = 0; round < 14; ++round)
                wrong[static_cast<std::size_t>(vp.id())] +=
                    outstanding_across(vp, round % 7, round, !meetings);
            },
            o);
        for (long w : wrong) CHECK(w == 0);
        if (record) {  // the replay pairs each receive with its own kind's message
          const hc::Replay again = r.replay(hc::ReplayModel{.cost = o.model});
          CHECK(again.clocks == r.clocks);
        }
      }
    }
  }
}

TEST_CASE("a collective's message set aside and never taken is reported at the run's end") {
  // VP 1 takes VP 0's point-to-point message, setting aside the broadcast's message before it,
  // and never calls the broadcast: CollectiveMismatch, not a run that ends as if all was well.
  CHECK_THROWS_AS(hc::run(
                      hc::Topology::ring(2),
                      [](hc::Proc& vp) {
                        std::int64_t x = 7;
                        if (vp.id() == 0) {
                          hc::broadcast(vp, std::span<std::int64_t>(&x, 1), 0);
                          vp.send(1, std::vector<std::int64_t>{x});
                        } else {
                          std::vector<std::int64_t> got(1);
                          vp.recv(0, std::span<std::int64_t>(got));
                        }
                      },
                      [] {
                        hc::Options o = test_options();
                        o.meetings = false;
                        return o;
                      }()),
                  hc::CollectiveMismatch);
}
