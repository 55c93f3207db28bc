// The ring embedded in a hypercube by the reflected Gray code (Grama et al. section 2.7): the
// ring algorithms of broadcast, reduce, all-reduce, all-gather and reduce-scatter run on
// hypercube:d under Links::strict (Algo::ring, variant "Gray-code ring"),
// every message between neighbours, with the right data for every root and size, model time
// equal to the card's formula with th counted on every message; the ones that fold refuse a
// non-commutative operator (they fold in ring order, not id order), and automatic never picks
// them for one.
#include <doctest/doctest.h>

#include <algorithm>
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
          const hc::Card* card = hc::find_card(op, Algo::ring, t, Links::strict, bytes);
          REQUIRE(card->variant != nullptr);
          CHECK(std::string(card->variant) == "Gray-code ring");
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
                  hc::broadcast(vp, buf, root, Algo::ring);
                  ok = ok && buf == Vec(n, 7);
                  break;
                }
                case Collective::reduce: {
                  Vec in(n, id + 1), out(vp.id() == root ? n : 0);
                  hc::reduce(vp, in, out, std::plus<>(), root, Algo::ring);
                  if (vp.id() == root) ok = ok && out == Vec(n, p * (p + 1) / 2);
                  break;
                }
                case Collective::all_reduce: {
                  Vec in(n), out(n);
                  std::iota(in.begin(), in.end(), id);
                  hc::all_reduce(vp, in, out, std::plus<>(), Algo::ring);
                  for (std::size_t i = 0; i < n; ++i)
                    ok = ok && out[i] == static_cast<std::int64_t>(i) * p + p * (p - 1) / 2;
                  break;
                }
                case Collective::all_gather: {
                  Vec in(n, id), out(n * static_cast<std::size_t>(p));
                  hc::all_gather(vp, in, out, Algo::ring);
                  for (std::size_t i = 0; i < out.size(); ++i)
                    ok = ok && out[i] == static_cast<std::int64_t>(i / n);
                  break;
                }
                case Collective::reduce_scatter: {
                  Vec in(n * static_cast<std::size_t>(p)), out(n);
                  for (std::size_t i = 0; i < in.size(); ++i)
                    in[i] = static_cast<std::int64_t>(i) / base + id;
                  hc::reduce_scatter(vp, in, out, std::plus<>(), Algo::ring);
                  ok = ok && out == Vec(n, id * p + p * (p - 1) / 2);
                  break;
                }
                default: break;
              }
              ok_slot = ok ? 1 : 0;
            });
            CHECK(std::count(good.begin(), good.end(), 1) == p);
            const double formula = hc::textbook_time(op, Algo::ring, t, Links::strict, bytes, model,
                                                     hc::CallShape{.root = root, .elem_size = 8});
            CHECK(close(r.model_time, formula));
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
