// The ring and the 2^floor(d/2) x 2^ceil(d/2) torus embedded in a hypercube by the reflected
// Gray code (Grama et al. section 2.7): the ring and mesh algorithms of broadcast, reduce,
// all-reduce, all-gather and reduce-scatter run on hypercube:d under Links::strict (Algo::ring,
// variant "Gray-code ring"; Algo::mesh, variant "Gray-code mesh"),
// every message between neighbours, with the right data for every root and size, model time
// equal to the card's formula with th counted on every message; the ones that fold refuse a
// non-commutative operator (they fold in ring order, not id order), and automatic never picks
// them for one.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "ring.hpp"
#include "support.hpp"

namespace hc = hypercomm;
using hc::Algo;
using hc::Collective;
using hc::Links;
using hc::Topology;

namespace {

using Vec = std::vector<std::int64_t>;

hc::Options strict_options(double th) {
  hc::Options o;
  o.links = Links::strict;
  o.pinning = hc::Pinning::none;
  o.model = {.ts = 1.0, .tw = 0.01, .th = th};
  return o;
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

}  // namespace

TEST_CASE("the Gray-code ring: consecutive members are hypercube neighbours, dilation 1") {
  for (int d = 1; d <= 10; ++d) {
    const Topology t = Topology::hypercube(d);
    const auto g = hypercomm::detail::Ring::gray_code(t.size());
    for (int k = 0; k < t.size(); ++k) {
      CHECK(g.rank_of(g.member(k)) == k);
      CHECK(t.distance(g.member(k), g.right(k)) == 1);
    }
  }
}

TEST_CASE("the Gray-code mesh: 2^floor(d/2) x 2^ceil(d/2), rows and columns rings of links") {
  for (int d = 2; d <= 10; ++d) {
    const Topology t = Topology::hypercube(d);
    const auto grid = hypercomm::detail::Grid::gray_code(t.size());
    CHECK(grid.rows == 1 << (d / 2));
    CHECK(grid.cols == 1 << (d - d / 2));
    std::vector<int> seen(static_cast<std::size_t>(t.size()), 0);
    for (int id = 0; id < t.size(); ++id) {
      const auto row = grid.row(id), column = grid.column(id);
      CHECK(row.size == grid.cols);
      CHECK(column.size == grid.rows);
      // Mesh node (i, j) = VP gray(i)*cols + gray(j): i = the column ring's rank, j = the row's.
      const int i = column.rank_of(id), j = row.rank_of(id);
      CHECK(id == static_cast<int>(hc::gray(static_cast<unsigned>(i))) * grid.cols +
                      static_cast<int>(hc::gray(static_cast<unsigned>(j))));
      ++seen[static_cast<std::size_t>(id)];
      for (const auto& line : {row, column}) {
        const int k = line.rank_of(id);
        CHECK(line.member(k) == id);
        if (line.size > 1) CHECK(t.distance(id, line.right(k)) == 1);  // the wraparound too
      }
    }
    CHECK(std::count(seen.begin(), seen.end(), 1) == t.size());
  }
}

TEST_CASE("ring algorithms on a hypercube under Links::strict: data and model time") {
  for (int d = 2; d <= 4; ++d) {
    const Topology t = Topology::hypercube(d);
    const int p = t.size();
    for (const double th : {0.0, 0.25}) {
      hc::Machine machine(t, strict_options(th));
      const hc::CostModel model = strict_options(th).model;
      for (const std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{64}}) {
        const std::size_t bytes = n * sizeof(std::int64_t);
        CAPTURE(d);
        CAPTURE(th);
        CAPTURE(n);
        for (const Collective op :
             {Collective::broadcast, Collective::reduce, Collective::all_reduce,
              Collective::all_gather, Collective::reduce_scatter}) {
          CAPTURE(std::string(hc::to_string(op)));
          for (const Algo algo : {Algo::ring, Algo::mesh}) {
            CAPTURE(std::string(hc::to_string(algo)));
            const hc::Card* card = hc::find_card(op, algo, t, Links::strict, bytes);
            REQUIRE(card->variant != nullptr);
            CHECK(std::string(card->variant) ==
                  (algo == Algo::ring ? "Gray-code ring" : "Gray-code mesh"));
            for (const int root : {0, p - 1, p / 2 + 1}) {
              if (root != 0 && op != Collective::broadcast && op != Collective::reduce) continue;
              // One verdict per VP (each VP writes only its own: no data race).
              std::vector<char> good(static_cast<std::size_t>(p), 1);
              const hc::Report r = machine.run([&](hc::Proc& vp) {
                char& ok_slot = good[static_cast<std::size_t>(vp.id())];
                bool ok = true;
                const auto id = static_cast<std::int64_t>(vp.id());
                const auto base = static_cast<std::int64_t>(n);
                switch (op) {
                  case Collective::broadcast: {
                    Vec buf(n, vp.id() == root ? 7 : -1);
                    hc::broadcast(vp, buf, root, algo);
                    ok = ok && buf == Vec(n, 7);
                    break;
                  }
                  case Collective::reduce: {
                    Vec in(n, id + 1), out(vp.id() == root ? n : 0);
                    hc::reduce(vp, in, out, std::plus<>(), root, algo);
                    if (vp.id() == root) ok = ok && out == Vec(n, p * (p + 1) / 2);
                    break;
                  }
                  case Collective::all_reduce: {
                    Vec in(n), out(n);
                    std::iota(in.begin(), in.end(), id);
                    hc::all_reduce(vp, in, out, std::plus<>(), algo);
                    for (std::size_t i = 0; i < n; ++i)
                      ok = ok && out[i] == static_cast<std::int64_t>(i) * p + p * (p - 1) / 2;
                    break;
                  }
                  case Collective::all_gather: {
                    Vec in(n, id), out(n * static_cast<std::size_t>(p));
                    hc::all_gather(vp, in, out, algo);
                    for (std::size_t i = 0; i < out.size(); ++i)
                      ok = ok && out[i] == static_cast<std::int64_t>(i / n);
                    break;
                  }
                  case Collective::reduce_scatter: {
                    Vec in(n * static_cast<std::size_t>(p)), out(n);
                    for (std::size_t i = 0; i < in.size(); ++i)
                      in[i] = static_cast<std::int64_t>(i) / base + id;
                    hc::reduce_scatter(vp, in, out, std::plus<>(), algo);
                    ok = ok && out == Vec(n, id * p + p * (p - 1) / 2);
                    break;
                  }
                  default: break;
                }
                ok_slot = ok ? 1 : 0;
              });
              CHECK(std::count(good.begin(), good.end(), 1) == p);
              const double formula = hc::textbook_time(op, algo, t, Links::strict, bytes, model,
                                                       hc::CallShape{.root = root, .elem_size = 8});
              CHECK(close(r.model_time, formula));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("the folding Gray-code cards refuse a non-commutative operator") {
  const Topology t = Topology::hypercube(3);
  hc::Machine machine(t, strict_options(0));
  const auto mats = [](int vp) { return std::vector<hctest::Mat>(4, hctest::mat_of(vp, 0)); };
  try {
    machine.run([&](hc::Proc& vp) {
      std::vector<hctest::Mat> out(4);
      hc::all_reduce(vp, mats(vp.id()), out, hctest::MatMul{}, Algo::ring);
    });
    FAIL("a non-commutative all_reduce ran on the Gray-code ring");
  } catch (const hc::AlgorithmError& e) {
    CHECK(std::string(e.what()).find("needs a commutative operator") != std::string::npos);
  }
  // Automatic takes another card for it, and the result is the left fold in id order.
  hctest::Mat want = hctest::mat_of(0, 0);
  for (int i = 1; i < t.size(); ++i) want = hctest::MatMul{}(want, hctest::mat_of(i, 0));
  std::vector<std::vector<hctest::Mat>> got(static_cast<std::size_t>(t.size()));
  machine.run([&](hc::Proc& vp) {
    std::vector<hctest::Mat> out(4);
    hc::all_reduce(vp, mats(vp.id()), out, hctest::MatMul{});
    got[static_cast<std::size_t>(vp.id())] = out;
  });
  for (const auto& v : got) CHECK(v == std::vector<hctest::Mat>(4, want));
  // Broadcast and all-gather do not fold: no operator, no restriction.
  CHECK(std::string(
            hc::find_card(Collective::all_gather, Algo::ring, t, Links::strict, 8)->variant) ==
        "Gray-code ring");
}

TEST_CASE("Algo::mesh on a hypercube: a non-commutative fold in id order, routed; refused strict") {
  // API.md: for a non-commutative operator every result is the left fold over ids, whatever the
  // algorithm. Routed, the Gray-code mesh's reductions lay their rows and columns out by id.
  for (const int d : {2, 3, 4}) {
    const Topology t = Topology::hypercube(d);
    const int p = t.size();
    INFO(t.name());
    hc::Options routed = strict_options(0);
    routed.links = Links::routed;
    hc::Machine machine(t, routed);
    const auto mat = [](int vp, std::size_t i) { return hctest::mat_of(vp, i); };
    const auto fold = [&](std::size_t i) {
      hctest::Mat acc = mat(0, i);
      for (int q = 1; q < p; ++q) acc = hctest::MatMul{}(acc, mat(q, i));
      return acc;
    };
    std::vector<std::vector<hctest::Mat>> reduced(static_cast<std::size_t>(p)),
        all(static_cast<std::size_t>(p)), scattered(static_cast<std::size_t>(p));
    for (int root = 0; root < p; ++root) {
      machine.run([&](hc::Proc& vp) {
        std::vector<hctest::Mat> in(3), out(vp.id() == root ? 3 : 0);
        for (std::size_t i = 0; i < 3; ++i) in[i] = mat(vp.id(), i);
        hc::reduce(vp, in, out, hctest::MatMul{}, root, Algo::mesh);
        if (vp.id() == root) reduced[static_cast<std::size_t>(root)] = out;
      });
      CHECK(reduced[static_cast<std::size_t>(root)] ==
            std::vector<hctest::Mat>{fold(0), fold(1), fold(2)});
    }
    machine.run([&](hc::Proc& vp) {
      const auto id = static_cast<std::size_t>(vp.id());
      std::vector<hctest::Mat> in(2 * static_cast<std::size_t>(p)), out(2);
      for (std::size_t i = 0; i < in.size(); ++i) in[i] = mat(vp.id(), i);
      hc::reduce_scatter(vp, in, out, hctest::MatMul{}, Algo::mesh);
      scattered[id] = out;
      in.resize(2);
      hc::all_reduce(vp, in, out, hctest::MatMul{}, Algo::mesh);
      all[id] = out;
    });
    for (int id = 0; id < p; ++id) {
      const auto i = static_cast<std::size_t>(id);
      CHECK(all[i] == std::vector<hctest::Mat>{fold(0), fold(1)});
      CHECK(scattered[i] == std::vector<hctest::Mat>{fold(2 * i), fold(2 * i + 1)});
    }
    // Strict: only the Gray-code layout has its messages on links, and it folds out of order.
    hc::Machine strict(t, strict_options(0));
    try {
      strict.run([&](hc::Proc& vp) {
        std::vector<hctest::Mat> in(1, mat(vp.id(), 0)), out(1);
        hc::all_reduce(vp, in, out, hctest::MatMul{}, Algo::mesh);
      });
      FAIL("a non-commutative all_reduce ran on the Gray-code mesh under Links::strict");
    } catch (const hc::AlgorithmError& e) {
      CHECK(std::string(e.what()).find("needs a commutative operator") != std::string::npos);
    }
  }
}

namespace {

// The rings of a hypercube's VPs that split(world, 0, key(id)) makes, by their keys: the
// reflected Gray code, the same translated (VP gray(r) XOR 5) and with its dimensions reversed,
// all Gray-code rings; and a ring of neighbours that is not one (0 1 3 7 5 4 6 2 on a 3-cube).
struct RingOrder {
  const char* name;
  int (*key)(int id, int d);
  bool gray;
};

int bit_reversed(int id, int d) {
  int r = 0;
  for (int k = 0; k < d; ++k)
    if ((id >> k & 1) != 0) r |= 1 << (d - 1 - k);
  return r;
}

const RingOrder kOrders[] = {
    {"gray",
     [](int id, int) { return static_cast<int>(hc::gray_inverse(static_cast<unsigned>(id))); },
     true},
    {"gray xor 5",
     [](int id, int d) {
       return static_cast<int>(hc::gray_inverse(static_cast<unsigned>((id ^ 5) & ((1 << d) - 1))));
     },
     true},
    {"gray, dimensions reversed",
     [](int id, int d) {
       return static_cast<int>(hc::gray_inverse(static_cast<unsigned>(bit_reversed(id, d))));
     },
     true},
    {"0 1 3 7 5 4 6 2",
     [](int id, int) {
       constexpr int position[8] = {0, 1, 7, 2, 5, 4, 6, 3};  // of VP id in that ring
       return position[id];
     },
     false},
};

// What the book's q-shift takes: one step for 2^0, two for every other power of two in q.
int q_shift_steps(int q) { return 2 * std::popcount(static_cast<unsigned>(q)) - (q & 1); }

}  // namespace

TEST_CASE("the book's q-shift on the Gray-code ring of a hypercube: data, steps, model time") {
  for (int d = 2; d <= 5; ++d) {
    const Topology t = Topology::hypercube(d);
    const int p = t.size();
    for (const RingOrder& order : kOrders) {
      if (!order.gray && d != 3) continue;
      for (const Links links : {Links::strict, Links::routed})
        for (const double th : {0.0, 0.25}) {
          hc::Options opt = strict_options(th);
          opt.links = links;
          hc::Machine machine(t, opt);
          const Topology ring = Topology::ring(p);
          for (int shift = -3; shift <= p + 1; ++shift) {
            const int q = ((shift % p) + p) % p;
            const std::size_t n = 1 + static_cast<std::size_t>(q % 3) * 7;
            const std::size_t bytes = n * sizeof(std::int64_t);
            CAPTURE(d);
            CAPTURE(std::string(order.name));
            CAPTURE(links == Links::strict);
            CAPTURE(th);
            CAPTURE(shift);
            std::vector<char> good(static_cast<std::size_t>(p), 0);
            std::vector<double> before(static_cast<std::size_t>(p)), after(before);
            machine.run([&](hc::Proc& vp) {
              hc::Group g = hc::split(vp.world(), 0, order.key(vp.id(), d));
              before[static_cast<std::size_t>(vp.id())] = vp.clock();
              Vec in(n), out(n, -1);
              for (std::size_t i = 0; i < n; ++i)
                in[i] = g.rank() * 1000 + static_cast<std::int64_t>(i);
              hc::circular_shift(g, in, out, shift);
              after[static_cast<std::size_t>(vp.id())] = vp.clock();
              const int from = ((g.rank() - shift) % p + p) % p;
              bool ok = true;
              for (std::size_t i = 0; i < n; ++i)
                ok = ok && out[i] == from * 1000 + static_cast<std::int64_t>(i);
              good[static_cast<std::size_t>(vp.id())] = ok ? 1 : 0;
            });
            const hc::CallShape shape{.shift = shift, .elem_size = 8, .gray_ring = order.gray};
            const double step = opt.model.ts + opt.model.tw * static_cast<double>(bytes) + th;
            const double ring_steps = std::min(q, p - q);
            CHECK(std::count(good.begin(), good.end(), 1) == p);
            // Routed: the E-cube card's one routed message is the first Algo::hypercube card
            // and the cheapest; the group's formulas leave out th where its ring is routed.
            if (links == Links::routed) {
              if (th == 0 && q != 0)
                CHECK(close(*std::max_element(after.begin(), after.end()) -
                                *std::min_element(before.begin(), before.end()),
                            step));
              continue;
            }
            if (order.gray) {
              // The card states the book's count of steps; automatic takes it where it is no more
              // than the ring's min(q, p - q) (ties: the book's).
              CHECK(hc::textbook_time(Collective::circular_shift, Algo::hypercube, ring, links,
                                      bytes, opt.model, shape) ==
                    doctest::Approx(q == 0 ? 0.0 : q_shift_steps(q) * step));
              CHECK(q_shift_steps(q) <= 2 * d - 1);
            } else {
              CHECK_THROWS_AS((void)hc::textbook_time(Collective::circular_shift, Algo::hypercube,
                                                      ring, links, bytes, opt.model, shape),
                              hc::AlgorithmError);
            }
            const double formula = hc::textbook_time(Collective::circular_shift, Algo::automatic,
                                                     ring, links, bytes, opt.model, shape);
            const double want =
                q == 0 ? 0.0 : std::min(ring_steps, order.gray ? q_shift_steps(q) : 1e9) * step;
            CHECK(close(formula, want));
            // The split leaves every clock alike; the shift's span is the formula.
            const double start = *std::min_element(before.begin(), before.end());
            CHECK(start == *std::max_element(before.begin(), before.end()));
            CHECK(close(*std::max_element(after.begin(), after.end()) - start, formula));
          }
        }
    }
  }
}

TEST_CASE("the book's q-shift: p = 8, q = 4 in two steps where the ring takes four") {
  const Topology t = Topology::hypercube(3);
  hc::Machine machine(t, strict_options(0));
  std::vector<char> good(8, 0);
  std::vector<double> span(8);
  machine.run([&](hc::Proc& vp) {
    hc::Group g = hc::split(vp.world(), 0, static_cast<int>(hc::gray_inverse(vp.id())));
    Vec in(4, g.rank()), out(4);
    const double before = vp.clock();
    hc::circular_shift(g, in, out, 4);
    span[static_cast<std::size_t>(vp.id())] = vp.clock() - before;
    // Rank r is VP gray(r) (rank 3 is VP 2), and gets rank r - 4's message.
    good[static_cast<std::size_t>(vp.id())] =
        g.vp(g.rank()) == vp.id() && g.vp(3) == 2 && out == Vec(4, (g.rank() + 4) % 8) ? 1 : 0;
  });
  CHECK(std::count(good.begin(), good.end(), 1) == 8);
  for (const double s : span) CHECK(s == doctest::Approx(2 * (1 + 0.01 * 32)));
  // On the whole machine (ids, not ring positions) the book's q-shift does not apply.
  CHECK_THROWS_AS(
      (void)hc::textbook_time(Collective::circular_shift, Algo::hypercube, Topology::ring(8),
                              Links::strict, 32, {}, hc::CallShape{.shift = 4}),
      hc::AlgorithmError);
}

TEST_CASE("the book's q-shift on Gray-code rings of subcubes, every subcube at once") {
  // hypercube:4 split by bit 0: two rings of 8 VPs on dimensions 1..3, rank k = VP
  // gray(k)*2 + color, each a Gray-code ring; a shift by 4 takes the book's 2 steps there.
  const Topology t = Topology::hypercube(4);
  hc::Machine machine(t, strict_options(0.25));
  std::vector<char> good(16, 0);
  std::vector<double> span(16, 0);
  machine.run([&](hc::Proc& vp) {
    const int color = vp.id() & 1;
    hc::Group g = hc::split(
        vp.world(), color, static_cast<int>(hc::gray_inverse(static_cast<unsigned>(vp.id() >> 1))));
    Vec in(3, vp.id()), out(3, -1);
    const double before = vp.clock();
    hc::circular_shift(g, in, out, 4);
    span[static_cast<std::size_t>(vp.id())] = vp.clock() - before;
    const int from = g.vp((g.rank() + 4) % 8);  // rank r - 4 = r + 4 (mod 8)
    good[static_cast<std::size_t>(vp.id())] =
        g.size() == 8 && g.vp(g.rank()) == vp.id() && out == Vec(3, from) ? 1 : 0;
  });
  CHECK(std::count(good.begin(), good.end(), 1) == 16);
  const double step = 1 + 0.01 * 24 + 0.25;
  for (const double s : span) CHECK(close(s, 2 * step));
  CHECK(close(hc::textbook_time(Collective::circular_shift, Algo::automatic, Topology::ring(8),
                                Links::strict, 24, {.ts = 1, .tw = 0.01, .th = 0.25},
                                hc::CallShape{.shift = 4, .gray_ring = true}),
              2 * step));
}
