// The rooted collectives (broadcast, reduce, scatter, gather) through the public API, on every
// test machine, both link modes, every algorithm valid there, against sequential oracles. VP
// bodies write per-VP slots; the test thread compares them after run returns (DESIGN.md ex. 8).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "support.hpp"

using hctest::Mat;
using hctest::MatMul;
using hypercomm::Algo;
using hypercomm::Links;
using hypercomm::Proc;
using hypercomm::Topology;

namespace {

constexpr std::array kLinks{Links::routed, Links::strict};
constexpr std::array kEveryAlgo{
    Algo::automatic, Algo::hypercube,         Algo::ring, Algo::mesh, Algo::esbt,
    Algo::two_phase, Algo::dimension_exchange};

bool power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

bool ring_adjacent(const Topology& t) {
  switch (t.kind()) {
    case Topology::Kind::ring: return true;
    // A line closes only when p <= 2 (p - 1 and 0 are then the same link or the same VP).
    case Topology::Kind::linear: return t.size() <= 2;
    case Topology::Kind::mesh:
      return (t.rows() == 1 || t.cols() == 1) && (t.wraps() || t.size() <= 2);
    case Topology::Kind::hypercube: return t.dimension() <= 1;
  }
  return false;
}

// The table of the brief (the cards' restrictions implement the same, card.cpp).
bool valid(Algo a, bool broadcast, const Topology& t, Links links) {
  const bool routed = links == Links::routed;
  const bool cube = power_of_two(t.size()) && (hctest::xor_partners_adjacent(t) || routed);
  switch (a) {
    case Algo::automatic: return true;
    case Algo::hypercube: return cube;
    // On a hypercube of d >= 2 the ring runs embedded by the Gray code: the broadcast always,
    // the reduction (which folds in ring order) for a commutative operator only, and the
    // reduction suite runs a non-commutative one on every case.
    case Algo::ring:
      return ring_adjacent(t) || routed ||
             (broadcast && t.kind() == Topology::Kind::hypercube && t.dimension() >= 2);
    case Algo::mesh:  // the same for the torus embedded by the Gray code, laid out by id routed
      return t.kind() == Topology::Kind::mesh ||
             ((broadcast || routed) && t.kind() == Topology::Kind::hypercube && t.dimension() >= 2);
    case Algo::esbt: return broadcast && cube;
    case Algo::two_phase: return true;
    default: return false;  // the other collectives' algorithms
  }
  return false;
}

std::vector<int> roots_of(int p) {
  std::vector<int> roots{0, p - 1, p / 2};
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

// Count 1000 only on a few machines (one per family), to keep the ThreadSanitizer run short.
std::vector<std::size_t> counts_for(const Topology& t) {
  static const std::array<std::string, 4> big{"ring:5", "ring:8", "mesh:2x3", "hypercube:3"};
  std::vector<std::size_t> counts{0, 1, 7};
  if (std::find(big.begin(), big.end(), t.name()) != big.end()) counts.push_back(1000);
  return counts;
}

hypercomm::Options options(Links links) {
  hypercomm::Options o = hctest::test_options();
  o.links = links;
  return o;
}

const char* links_name(Links l) { return l == Links::routed ? "routed" : "strict"; }

std::int64_t int_of(int vp, std::size_t i) {
  return static_cast<std::int64_t>(vp) * 1'000'003 + static_cast<std::int64_t>(i) * 7 + 1;
}
double double_of(int vp, std::size_t i) {
  return std::sin(static_cast<double>(vp) * 12.9898 + static_cast<double>(i) * 78.233) * 1000.0;
}

template <class T, class Make>
std::vector<T> filled(std::size_t count, int vp, Make make) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = make(vp, i);
  return v;
}

// The sequential left fold over VP ids 0 .. p-1 of every VP's input.
template <class T, class Make, class Op>
std::vector<T> fold_oracle(int p, std::size_t count, Make make, Op op) {
  std::vector<T> acc = filled<T>(count, 0, make);
  for (int vp = 1; vp < p; ++vp)
    for (std::size_t i = 0; i < count; ++i) acc[i] = op(acc[i], make(vp, i));
  return acc;
}

struct RootedCase {
  std::size_t count;
  int root;
  Algo algo;
};

std::vector<RootedCase> cases_for(const Topology& t, Links links, bool broadcast) {
  std::vector<RootedCase> cases;
  for (std::size_t count : counts_for(t))
    for (int root : roots_of(t.size()))
      for (Algo a : kEveryAlgo)
        if ((broadcast || a != Algo::esbt) && valid(a, broadcast, t, links))
          cases.push_back({count, root, a});
  return cases;
}

}  // namespace

TEST_CASE("broadcast: every machine, link mode, count, root and valid algorithm") {
  for (const Topology& t : hctest::all_topologies()) {
    for (Links links : kLinks) {
      const int p = t.size();
      const auto cases = cases_for(t, links, true);
      // slots[case][vp]
      std::vector<std::vector<std::vector<std::int64_t>>> slots(
          cases.size(), std::vector<std::vector<std::int64_t>>(static_cast<std::size_t>(p)));
      hypercomm::run(
          t,
          [&](Proc& vp) {
            for (std::size_t k = 0; k < cases.size(); ++k) {
              const RootedCase& cs = cases[k];
              std::vector<std::int64_t> buf(cs.count, -1);
              if (vp.id() == cs.root) buf = filled<std::int64_t>(cs.count, cs.root, int_of);
              hypercomm::broadcast(vp, buf, cs.root, cs.algo);
              slots[k][static_cast<std::size_t>(vp.id())] = std::move(buf);
            }
          },
          options(links));
      for (std::size_t k = 0; k < cases.size(); ++k) {
        const RootedCase& cs = cases[k];
        INFO(hctest::describe(t, cs.count, cs.root), " algo=", hypercomm::to_string(cs.algo),
             " links=", links_name(links));
        const auto expected = filled<std::int64_t>(cs.count, cs.root, int_of);
        for (int vp = 0; vp < p; ++vp) {
          CAPTURE(vp);
          CHECK(slots[k][static_cast<std::size_t>(vp)] == expected);
        }
      }
    }
  }
}

TEST_CASE("broadcast: ESBT pipelines with several chunk counts") {
  // The chunk count grows with the message (k ~ sqrt(m d tw / ts)); these sizes give k from 1
  // to well above d, with chunks of unequal size.
  for (int d = 1; d <= 5; ++d) {
    const Topology t = Topology::hypercube(d);
    const int p = t.size();
    for (Links links : kLinks) {
      std::vector<RootedCase> cases;
      for (std::size_t count : {std::size_t{0}, std::size_t{3}, std::size_t{3001},
                                std::size_t{15000}, std::size_t{40001}})
        for (int root : roots_of(p)) cases.push_back({count, root, Algo::esbt});
      std::vector<std::vector<std::vector<std::int64_t>>> slots(
          cases.size(), std::vector<std::vector<std::int64_t>>(static_cast<std::size_t>(p)));
      hypercomm::run(
          t,
          [&](Proc& vp) {
            for (std::size_t k = 0; k < cases.size(); ++k) {
              std::vector<std::int64_t> buf(cases[k].count, -1);
              if (vp.id() == cases[k].root)
                buf = filled<std::int64_t>(cases[k].count, cases[k].root, int_of);
              hypercomm::broadcast(vp, buf, cases[k].root, Algo::esbt);
              slots[k][static_cast<std::size_t>(vp.id())] = std::move(buf);
            }
          },
          options(links));
      for (std::size_t k = 0; k < cases.size(); ++k) {
        INFO(hctest::describe(t, cases[k].count, cases[k].root), " links=", links_name(links));
        const auto expected = filled<std::int64_t>(cases[k].count, cases[k].root, int_of);
        for (int vp = 0; vp < p; ++vp) {
          CAPTURE(vp);
          CHECK(slots[k][static_cast<std::size_t>(vp)] == expected);
        }
      }
    }
  }
}

TEST_CASE("broadcast: array, span and value forms") {
  for (const Topology& t : hctest::all_topologies()) {
    const int p = t.size();
    struct Slot {
      std::array<double, 3> array{};
      std::vector<std::uint16_t> through_span;
      Mat value{};
    };
    std::vector<std::vector<Slot>> slots(roots_of(p).size(),
                                         std::vector<Slot>(static_cast<std::size_t>(p)));
    hypercomm::run(
        t,
        [&](Proc& vp) {
          const auto roots = roots_of(p);
          for (std::size_t k = 0; k < roots.size(); ++k) {
            const int root = roots[k];
            Slot& s = slots[k][static_cast<std::size_t>(vp.id())];
            if (vp.id() == root) s.array = {1.5, -2.25, double_of(root, 0)};
            hypercomm::broadcast(vp, s.array, root);
            std::vector<std::uint16_t> storage(5, 0);
            if (vp.id() == root)
              for (std::size_t i = 0; i < 5; ++i)
                storage[i] = static_cast<std::uint16_t>(root * 10 + i);
            hypercomm::broadcast(vp, std::span<std::uint16_t>(storage), root, Algo::two_phase);
            s.through_span = storage;
            s.value =
                hypercomm::broadcast(vp, vp.id() == root ? hctest::mat_of(root, 9) : Mat{}, root);
          }
        },
        hctest::test_options());
    const auto roots = roots_of(p);
    for (std::size_t k = 0; k < roots.size(); ++k) {
      const int root = roots[k];
      INFO(hctest::describe(t, 0, root));
      std::vector<std::uint16_t> span_expected(5);
      for (std::size_t i = 0; i < 5; ++i)
        span_expected[i] = static_cast<std::uint16_t>(root * 10 + i);
      for (int vp = 0; vp < p; ++vp) {
        CAPTURE(vp);
        const Slot& s = slots[k][static_cast<std::size_t>(vp)];
        CHECK(s.array == std::array<double, 3>{1.5, -2.25, double_of(root, 0)});
        CHECK(s.through_span == span_expected);
        CHECK(s.value == hctest::mat_of(root, 9));
      }
    }
  }
}

TEST_CASE("reduce: plus, max and a non-commutative product, every valid algorithm") {
  constexpr std::int64_t kUntouched = -77;
  for (const Topology& t : hctest::all_topologies()) {
    for (Links links : kLinks) {
      const int p = t.size();
      const auto cases = cases_for(t, links, false);
      const auto vps = static_cast<std::size_t>(p);
      std::vector<std::vector<std::vector<std::int64_t>>> sums(
          cases.size(), std::vector<std::vector<std::int64_t>>(vps));
      std::vector<std::vector<std::vector<double>>> maxima(cases.size(),
                                                           std::vector<std::vector<double>>(vps));
      std::vector<std::vector<std::vector<Mat>>> products(cases.size(),
                                                          std::vector<std::vector<Mat>>(vps));
      hypercomm::run(
          t,
          [&](Proc& vp) {
            const int id = vp.id();
            for (std::size_t k = 0; k < cases.size(); ++k) {
              const RootedCase& cs = cases[k];
              // Off the root, out is empty in every other case and a full, untouchable buffer
              // in the rest.
              const bool full = id == cs.root || k % 2 == 0;
              const std::size_t out_count = full ? cs.count : 0;

              std::vector<std::int64_t> sum(out_count, kUntouched);
              hypercomm::reduce(vp, filled<std::int64_t>(cs.count, id, int_of), sum, std::plus<>{},
                                cs.root, cs.algo);
              sums[k][static_cast<std::size_t>(id)] = std::move(sum);

              std::vector<double> maximum(out_count, kUntouched);
              hypercomm::reduce(vp, filled<double>(cs.count, id, double_of), maximum,
                                hypercomm::max<>{}, cs.root, cs.algo);
              maxima[k][static_cast<std::size_t>(id)] = std::move(maximum);

              std::vector<Mat> product(out_count, Mat{});
              hypercomm::reduce(vp, filled<Mat>(cs.count, id, hctest::mat_of), product, MatMul{},
                                cs.root, cs.algo);
              products[k][static_cast<std::size_t>(id)] = std::move(product);
            }
          },
          options(links));
      for (std::size_t k = 0; k < cases.size(); ++k) {
        const RootedCase& cs = cases[k];
        INFO(hctest::describe(t, cs.count, cs.root), " algo=", hypercomm::to_string(cs.algo),
             " links=", links_name(links));
        const auto sum = fold_oracle<std::int64_t>(p, cs.count, int_of, std::plus<>{});
        const auto maximum = fold_oracle<double>(p, cs.count, double_of, hypercomm::max<>{});
        const auto product = fold_oracle<Mat>(p, cs.count, hctest::mat_of, MatMul{});
        const auto root = static_cast<std::size_t>(cs.root);
        CHECK(sums[k][root] == sum);
        CHECK(maxima[k][root] == maximum);
        CHECK(products[k][root] == product);
        for (int vp = 0; vp < p; ++vp) {
          if (vp == cs.root) continue;
          CAPTURE(vp);
          const auto v = static_cast<std::size_t>(vp);
          const std::size_t out_count = k % 2 == 0 ? cs.count : 0;
          CHECK(sums[k][v] == std::vector<std::int64_t>(out_count, kUntouched));
          CHECK(maxima[k][v] == std::vector<double>(out_count, kUntouched));
          CHECK(products[k][v] == std::vector<Mat>(out_count, Mat{}));
        }
      }
    }
  }
}

TEST_CASE("scatter and gather: blocks in id order, empty buffers off the root") {
  constexpr std::int64_t kUntouched = -5;
  for (const Topology& t : hctest::all_topologies()) {
    for (Links links : kLinks) {
      const int p = t.size();
      const auto vps = static_cast<std::size_t>(p);
      struct Case {
        std::size_t count;  // elements per block
        int root;
      };
      std::vector<Case> cases;
      for (std::size_t count : counts_for(t))
        for (int root : roots_of(p)) cases.push_back({count, root});
      // The root's p blocks: block j of VP root's in is int_of(j, i) for its elements i.
      auto all_blocks = [&](std::size_t count) {
        std::vector<std::int64_t> v(count * vps);
        for (std::size_t j = 0; j < vps; ++j)
          for (std::size_t i = 0; i < count; ++i) v[j * count + i] = int_of(static_cast<int>(j), i);
        return v;
      };
      std::vector<std::vector<std::vector<std::int64_t>>> scattered(
          cases.size(), std::vector<std::vector<std::int64_t>>(vps));
      std::vector<std::vector<std::vector<std::int64_t>>> gathered(
          cases.size(), std::vector<std::vector<std::int64_t>>(vps));
      hypercomm::run(
          t,
          [&](Proc& vp) {
            const int id = vp.id();
            for (std::size_t k = 0; k < cases.size(); ++k) {
              const Case& cs = cases[k];
              const bool root = id == cs.root;
              // scatter: in is empty off the root, or (every other case) a stale full buffer.
              std::vector<std::int64_t> in;
              if (root)
                in = all_blocks(cs.count);
              else if (k % 2 == 1)
                in.assign(cs.count * vps, kUntouched);
              std::vector<std::int64_t> out(cs.count, kUntouched);
              hypercomm::scatter(vp, in, out, cs.root);
              scattered[k][static_cast<std::size_t>(id)] = std::move(out);
              // gather: out is empty off the root, or (every other case) full and untouched.
              std::vector<std::int64_t> all((root || k % 2 == 0) ? cs.count * vps : 0, kUntouched);
              hypercomm::gather(vp, filled<std::int64_t>(cs.count, id, int_of), all, cs.root);
              gathered[k][static_cast<std::size_t>(id)] = std::move(all);
            }
          },
          options(links));
      for (std::size_t k = 0; k < cases.size(); ++k) {
        const Case& cs = cases[k];
        INFO(hctest::describe(t, cs.count, cs.root), " links=", links_name(links));
        for (int vp = 0; vp < p; ++vp) {
          CAPTURE(vp);
          const auto v = static_cast<std::size_t>(vp);
          CHECK(scattered[k][v] == filled<std::int64_t>(cs.count, vp, int_of));
          if (vp == cs.root)
            CHECK(gathered[k][v] == all_blocks(cs.count));
          else
            CHECK(gathered[k][v] ==
                  std::vector<std::int64_t>(k % 2 == 0 ? cs.count * vps : 0, kUntouched));
        }
      }
    }
  }
}

TEST_CASE("an algorithm that cannot run throws AlgorithmError") {
  for (const Topology& t : hctest::all_topologies()) {
    for (Links links : kLinks) {
      for (Algo a : kEveryAlgo) {
        INFO(t.name(), " algo=", hypercomm::to_string(a), " links=", links_name(links));
        if (!valid(a, true, t, links)) {
          CHECK_THROWS_AS(hypercomm::run(
                              t,
                              [&](Proc& vp) {
                                std::vector<int> buf(3, vp.id());
                                hypercomm::broadcast(vp, buf, 0, a);
                              },
                              options(links)),
                          hypercomm::AlgorithmError);
        }
        if (!valid(a, false, t, links)) {
          CHECK_THROWS_AS(hypercomm::run(
                              t,
                              [&](Proc& vp) {
                                const std::vector<Mat> in(2, hctest::mat_of(vp.id(), 0));
                                std::vector<Mat> out(2);
                                hypercomm::reduce(vp, in, out, MatMul{}, 0, a);
                              },
                              options(links)),
                          hypercomm::AlgorithmError);
        }
      }
    }
  }
}

TEST_CASE("wrong local buffer sizes throw SizeMismatch") {
  for (const char* name : {"ring:5", "mesh:2x3", "hypercube:3"}) {
    const Topology t = Topology::parse(name);
    const int p = t.size();
    const int root = p / 2;
    INFO(name);
    // The root's reduce out must match in; a non-root's out must be empty or match.
    CHECK_THROWS_AS(hypercomm::run(t,
                                   [&](Proc& vp) {
                                     const std::vector<int> in(4, 1);
                                     std::vector<int> out(vp.id() == root ? 3 : 0);
                                     hypercomm::reduce(vp, in, out, std::plus<>{}, root);
                                   }),
                    hypercomm::SizeMismatch);
    CHECK_THROWS_AS(hypercomm::run(t,
                                   [&](Proc& vp) {
                                     const std::vector<int> in(4, 1);
                                     std::vector<int> out(vp.id() == root ? 4 : 2);
                                     hypercomm::reduce(vp, in, out, std::plus<>{}, root);
                                   }),
                    hypercomm::SizeMismatch);
    // The root's scatter in must hold p blocks of out; the root's gather out p blocks of in.
    CHECK_THROWS_AS(hypercomm::run(t,
                                   [&](Proc& vp) {
                                     std::vector<int> in(vp.id() == root ? 2 * p + 1 : 0);
                                     std::vector<int> out(2);
                                     hypercomm::scatter(vp, in, out, root);
                                   }),
                    hypercomm::SizeMismatch);
    CHECK_THROWS_AS(hypercomm::run(t,
                                   [&](Proc& vp) {
                                     const std::vector<int> in(2, vp.id());
                                     std::vector<int> out(vp.id() == root ? 2 * p - 1 : 0);
                                     hypercomm::gather(vp, in, out, root);
                                   }),
                    hypercomm::SizeMismatch);
  }
}

// ---------------------------------------------------------------------------------------------
// Model time equals each card's formula (ts = 1, tw = 0.5, th = 0; m in bytes).

namespace {

constexpr double kTs = 1.0;
constexpr double kTw = 0.5;

hypercomm::Options model_options(Links links) {
  hypercomm::Options o = options(links);
  o.model = {.ts = kTs, .tw = kTw, .th = 0.0};
  return o;
}

double model_time(const Topology& t, Links links, const std::function<void(Proc&)>& body) {
  return hypercomm::run(t, body, model_options(links)).model_time;
}

double broadcast_time(const Topology& t, Links links, std::size_t count, int root, Algo a) {
  return model_time(t, links, [&](Proc& vp) {
    std::vector<std::int64_t> buf(count, vp.id());
    hypercomm::broadcast(vp, buf, root, a);
  });
}

template <class T, class Op>
double reduce_time(const Topology& t, Links links, std::size_t count, int root, Algo a, Op op) {
  return model_time(t, links, [&](Proc& vp) {
    const std::vector<T> in(count, T{});
    std::vector<T> out(vp.id() == root ? count : 0);
    hypercomm::reduce(vp, in, out, op, root, a);
  });
}

double scatter_time(const Topology& t, Links links, std::size_t count, int root) {
  return model_time(t, links, [&](Proc& vp) {
    const std::vector<std::int64_t> in(vp.id() == root ? count * t.size() : 0);
    std::vector<std::int64_t> out(count);
    hypercomm::scatter(vp, in, out, root);
  });
}

double gather_time(const Topology& t, Links links, std::size_t count, int root) {
  return model_time(t, links, [&](Proc& vp) {
    const std::vector<std::int64_t> in(count);
    std::vector<std::int64_t> out(vp.id() == root ? count * t.size() : 0);
    hypercomm::gather(vp, in, out, root);
  });
}

// Steps of the two-way ring broadcast over n members: ceil(n/2), none for n = 1.
double ring_broadcast_steps(int n) { return n == 1 ? 0 : (n + 1) / 2; }
// The two-way ring scatter over n members (rooted_util.hpp): m is one part in bytes.
double ring_scatter(int n, double m) {
  const int a = n / 2;
  if (n == 1) return 0;
  if (n % 2 == 0) return a * kTs + kTw * m * a * (a + 1) / 2;
  return (a + 1) * kTs + kTw * m * (a + a * (a + 1) / 2.0);
}
double ring_gather(int n, double m) {
  const int a = n / 2;
  return a * kTs + kTw * m * a * (a + 1) / 2;
}

}  // namespace

TEST_CASE("model time: hypercube broadcast and reduce are (ts + tw*m) log p") {
  for (int d : {3, 4}) {
    const Topology t = Topology::hypercube(d);
    for (std::size_t count : {std::size_t{1}, std::size_t{100}}) {
      for (int root : roots_of(t.size())) {
        INFO(hctest::describe(t, count, root));
        const double m = static_cast<double>(count * sizeof(std::int64_t));
        const double formula = (kTs + kTw * m) * d;
        CHECK(broadcast_time(t, Links::strict, count, root, Algo::hypercube) ==
              doctest::Approx(formula).epsilon(1e-12));
        CHECK(reduce_time<std::int64_t>(t, Links::strict, count, root, Algo::hypercube,
                                        std::plus<>{}) == doctest::Approx(formula).epsilon(1e-12));
        CHECK(reduce_time<Mat>(t, Links::strict, count / 4 + 1, root, Algo::hypercube, MatMul{}) ==
              doctest::Approx((kTs + kTw * static_cast<double>((count / 4 + 1) * sizeof(Mat))) * d)
                  .epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("megabyte blocks: a gather and a scatter arrive whole, every root, again and again") {
  // Blocks past the shared copy's threshold (both VPs copy) and past a posted receive's: the
  // gather places each VP's own block while its first partner's arrives.
  constexpr std::size_t kCount = (1 << 20) / sizeof(std::int64_t) + 3;  // 1 MiB + 24 bytes
  for (const Topology& t : {Topology::hypercube(1), Topology::hypercube(2)}) {
    CAPTURE(t.name());
    const int p = t.size();
    const auto vps = static_cast<std::size_t>(p);
    std::vector<long> wrong(vps, 0);
    hypercomm::run(
        t,
        [&](hypercomm::Proc& vp) {
          const int me = vp.id();
          for (int k = 0; k < (hctest::kSanitized ? 2 : 6); ++k) {
            const int root = k % p;
            std::vector<std::int64_t> mine(kCount), all(me == root ? kCount * vps : 0, -1);
            for (std::size_t i = 0; i < kCount; ++i) mine[i] = int_of(me, i) + k;
            hypercomm::gather(vp, std::span<const std::int64_t>(mine), std::span(all), root);
            for (std::size_t j = 0; j < all.size(); ++j)
              wrong[static_cast<std::size_t>(me)] +=
                  all[j] != int_of(static_cast<int>(j / kCount), j % kCount) + k;
            std::vector<std::int64_t> back(kCount, -1);
            hypercomm::scatter(vp, std::span<const std::int64_t>(all), std::span(back), root);
            wrong[static_cast<std::size_t>(me)] += back != mine;
          }
        },
        hctest::test_options());
    for (long w : wrong) CHECK(w == 0);
  }
}

TEST_CASE("model time: scatter and gather on a hypercube are ts log p + tw m (p-1)") {
  for (int d : {3, 4}) {
    const Topology t = Topology::hypercube(d);
    const int p = t.size();
    for (int root : roots_of(p)) {
      INFO(hctest::describe(t, 10, root));
      const double m = 10.0 * sizeof(std::int64_t);
      const double formula = kTs * d + kTw * m * (p - 1);
      CHECK(scatter_time(t, Links::strict, 10, root) == doctest::Approx(formula).epsilon(1e-12));
      CHECK(gather_time(t, Links::strict, 10, root) == doctest::Approx(formula).epsilon(1e-12));
    }
  }
}

TEST_CASE("model time: ring and mesh broadcast, reduce, scatter and gather") {
  const std::size_t count = 5;
  const double m = static_cast<double>(count * sizeof(std::int64_t));
  const double unit = kTs + kTw * m;
  for (int p = 2; p <= 9; ++p) {
    const Topology t = Topology::ring(p);
    for (int root : roots_of(p)) {
      INFO(hctest::describe(t, count, root));
      CHECK(broadcast_time(t, Links::strict, count, root, Algo::ring) ==
            doctest::Approx(unit * ring_broadcast_steps(p)).epsilon(1e-12));
      CHECK(reduce_time<std::int64_t>(t, Links::strict, count, root, Algo::ring, std::plus<>{}) ==
            doctest::Approx(unit * (p / 2)).epsilon(1e-12));
      // Neighbour-only scatter and gather (automatic picks the ring on a ring under strict).
      CHECK(scatter_time(t, Links::strict, count, root) ==
            doctest::Approx(ring_scatter(p, m)).epsilon(1e-12));
      CHECK(gather_time(t, Links::strict, count, root) ==
            doctest::Approx(ring_gather(p, m)).epsilon(1e-12));
    }
  }
  for (int p = 2; p <= 9; ++p) {
    // Non-commutative: the arms stop at the id wrap unless the root is the first or last VP.
    const Topology t = Topology::ring(p);
    const double mat_unit = kTs + kTw * static_cast<double>(count * sizeof(Mat));
    for (int root = 0; root < p; ++root) {
      INFO(hctest::describe(t, count, root));
      const int steps = root == 0 || root == p - 1 ? p / 2 : std::max(root, p - 1 - root);
      CHECK(reduce_time<Mat>(t, Links::strict, count, root, Algo::ring, MatMul{}) ==
            doctest::Approx(mat_unit * steps).epsilon(1e-12));
    }
  }
  for (auto [rows, cols] : {std::pair{3, 3}, {2, 3}, {4, 4}, {3, 2}}) {
    const Topology t = Topology::mesh(rows, cols);
    for (int root : roots_of(t.size())) {
      INFO(hctest::describe(t, count, root));
      CHECK(broadcast_time(t, Links::strict, count, root, Algo::mesh) ==
            doctest::Approx(unit * (ring_broadcast_steps(rows) + ring_broadcast_steps(cols)))
                .epsilon(1e-12));
      CHECK(reduce_time<std::int64_t>(t, Links::strict, count, root, Algo::mesh, std::plus<>{}) ==
            doctest::Approx(unit * (rows / 2 + cols / 2)).epsilon(1e-12));
      CHECK(scatter_time(t, Links::strict, count, root) ==
            doctest::Approx(ring_scatter(cols, m * rows) + ring_scatter(rows, m)).epsilon(1e-12));
      CHECK(gather_time(t, Links::strict, count, root) ==
            doctest::Approx(ring_gather(rows, m) + ring_gather(cols, m * rows)).epsilon(1e-12));
    }
  }
}

TEST_CASE("model time: ESBT is (k + d)(ts + tw m/k), two-phase 2 (ts log p + tw m (p-1)/p)") {
  for (int d : {2, 3, 4}) {
    const Topology t = Topology::hypercube(d);
    const int p = t.size();
    // ESBT picks k from the run's model (ts = 1, tw = 0.5: k* = sqrt(8 d tw / ts) > 1 for 8
    // bytes): its card's time, and no worse than one chunk's k + d = 1 + d steps of the whole.
    const double unit = kTs + kTw * 8.0;
    const double esbt = broadcast_time(t, Links::strict, 1, 0, Algo::esbt);
    CHECK(esbt == doctest::Approx(hypercomm::textbook_time(hypercomm::Collective::broadcast,
                                                           Algo::esbt, t, Links::strict, 8,
                                                           {.ts = kTs, .tw = kTw, .th = 0.0}))
                      .epsilon(1e-12));
    CHECK(esbt <= (1 + d) * unit);
    // Two-phase with p blocks of 3 int64 each.
    const double m = 3.0 * 8.0 * p;
    const double two_phase = 2 * (kTs * d + kTw * m * (p - 1) / p);
    for (int root : roots_of(p)) {
      INFO(hctest::describe(t, 3 * static_cast<std::size_t>(p), root));
      CHECK(broadcast_time(t, Links::strict, 3 * static_cast<std::size_t>(p), root,
                           Algo::two_phase) == doctest::Approx(two_phase).epsilon(1e-12));
    }
  }
}

TEST_CASE(
    "where VPs share cores, automatic broadcasts and reduces large messages by the tree, and "
    "scans them by the pipeline") {
  using hypercomm::CallShape;
  using hypercomm::Collective;
  const std::size_t bytes = std::size_t{64} << 10;
  for (int d : {3, 4}) {
    const Topology t = Topology::hypercube(d);
    INFO(t.name());
    // The choice on the reference machine: a core each against two shared cores.
    const auto chosen = [&](Collective op, std::size_t size, int cores) {
      return hypercomm::find_card(op, Algo::automatic, t, Links::routed, size,
                                  CallShape{.shared_cores = cores})
          ->algo;
    };
    for (Collective op : {Collective::broadcast, Collective::reduce}) {
      CHECK(chosen(op, bytes, 0) == Algo::two_phase);
      CHECK(chosen(op, bytes, 2) == Algo::hypercube);
    }
    // The scans: the hypercube's log p exchanges with a core each, the pipeline on shared cores
    // (p - 1 messages against p log p), and the hypercube's meeting again at 8 bytes.
    for (Collective op : {Collective::scan, Collective::exscan}) {
      CHECK(chosen(op, bytes, 0) == Algo::hypercube);
      CHECK(chosen(op, bytes, 2) == Algo::ring);
      CHECK(chosen(op, 8, 2) == Algo::hypercube);
    }
    // A machine runs what its cores make of it, and textbook_time and resolve without a
    // CallShape say the same (this process's cores: hypercomm::shared_core_count).
    hypercomm::Machine machine(t, model_options(Links::routed));
    CHECK(machine.shared_core_count() == hypercomm::shared_core_count(t));
    const Algo expected = machine.shared_core_count() > 0 ? Algo::hypercube : Algo::two_phase;
    CHECK(hypercomm::resolve(Collective::broadcast, Algo::automatic, t, Links::routed, bytes) ==
          expected);
    const std::size_t count = bytes / sizeof(std::int64_t);
    std::vector<std::int64_t> last(static_cast<std::size_t>(t.size()), -1);
    const double model = machine
                             .run([&](Proc& vp) {
                               std::vector<std::int64_t> buf(count, vp.id());
                               hypercomm::broadcast(vp, buf, 0);
                               last[static_cast<std::size_t>(vp.id())] = buf[count - 1];
                             })
                             .model_time;
    CHECK(std::all_of(last.begin(), last.end(), [](std::int64_t x) { return x == 0; }));
    const hypercomm::CostModel cost = model_options(Links::routed).model;
    CHECK(model == doctest::Approx(hypercomm::textbook_time(Collective::broadcast, expected, t,
                                                            Links::routed, bytes, cost))
                       .epsilon(1e-12));
    CHECK(model == doctest::Approx(hypercomm::textbook_time(Collective::broadcast, Algo::automatic,
                                                            t, Links::routed, bytes, cost))
                       .epsilon(1e-12));
  }
}
