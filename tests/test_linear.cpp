// The linear array and the mesh without wraparound (API.md, "linear:p", "mesh:RxC:open"): the
// neighbour-only line algorithms (broadcast_line.cpp, reduce_line.cpp, scatter_line.cpp,
// gather_line.cpp, all_reduce_line.cpp, all_gather_line.cpp, reduce_scatter_line.cpp,
// barrier_line.cpp, all_to_all_line.cpp, circular_shift_line.cpp, and the scan pipeline) and the
// open-mesh ones (lines along the rows, then the columns: broadcast_mesh.cpp, reduce_mesh.cpp,
// scatter_mesh.cpp, gather_mesh.cpp, all_reduce_mesh_open.cpp, all_to_all_mesh.cpp,
// circular_shift_line.cpp, scan_mesh.cpp) give the right data under Links::strict on every p,
// root, shift and count, a non-commutative operator included, and their model time is their
// card's formula (textbook_time) with and without a hop term, one port and all ports.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <string>
#include <vector>

#include "support.hpp"

namespace hc = hypercomm;
using hc::Algo;
using hc::Collective;
using hc::Links;
using hc::Topology;
using hctest::Mat;
using hctest::MatMul;

namespace {

using Vec = std::vector<std::int64_t>;

std::vector<Topology> lines() {
  std::vector<Topology> t;
  for (int p : {1, 2, 3, 4, 5, 6, 7, 9}) t.push_back(Topology::linear(p));
  t.push_back(Topology::parse("mesh:1x5:open"));
  t.push_back(Topology::parse("mesh:4x1:open"));
  return t;
}

// Meshes without wraparound of more rows and columns than one: the open-mesh cards (lines along
// the rows, then the columns).
std::vector<Topology> open_meshes() {
  std::vector<Topology> t;
  for (const char* name :
       {"mesh:2x2:open", "mesh:2x3:open", "mesh:3x4:open", "mesh:4x4:open", "mesh:4x3:open"})
    t.push_back(Topology::parse(name));
  return t;
}

hc::Options strict_options(hc::CostModel model = {}) {
  hc::Options o = hctest::test_options();
  o.links = Links::strict;
  o.model = model;
  return o;
}

std::int64_t value(int vp, std::size_t i) { return vp * 1000 + static_cast<std::int64_t>(i) + 1; }

Vec filled(std::size_t n, int vp) {
  Vec v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = value(vp, i);
  return v;
}

// The left fold over VPs lo .. hi of `make`.
template <class T, class Make, class Op>
std::vector<T> fold(int lo, int hi, std::size_t n, Make make, Op op) {
  std::vector<T> acc(n);
  for (std::size_t i = 0; i < n; ++i) acc[i] = make(lo, i);
  for (int vp = lo + 1; vp <= hi; ++vp)
    for (std::size_t i = 0; i < n; ++i) acc[i] = op(acc[i], make(vp, i));
  return acc;
}

std::vector<int> roots_of(int p) {
  std::vector<int> r{0};
  if (p > 2) r.push_back(p / 2);
  if (p > 1) r.push_back(p - 1);
  return r;
}

}  // namespace

TEST_CASE("line and open-mesh algorithms: data under Links::strict, every p, root and count") {
  auto machines = lines();
  for (const Topology& t : open_meshes()) machines.push_back(t);
  for (const Topology& t : machines) {
    const int p = t.size();
    hc::Machine m(t, strict_options());
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{100}}) {
      for (int root : roots_of(p)) {
        INFO(t.name(), " count=", n, " root=", root);
        std::vector<Vec> bcast(p), red(p), allred(p), inplace(p), gath(p), scat(p), ag(p), rs(p),
            sc(p), ex(p), a2a(p);
        std::vector<std::vector<Vec>> shifted(p);
        std::vector<std::vector<Mat>> mred(p), mallred(p), mrs(p);
        m.run([&](hc::Proc& vp) {
          const int me = vp.id();
          const auto u = static_cast<std::size_t>(me);
          bcast[u] = vp.id() == root ? filled(n, root) : Vec(n, -1);
          hc::broadcast(vp, bcast[u], root);
          const Vec in = filled(n, me);
          red[u].assign(me == root ? n : 0, 0);
          hc::reduce(vp, in, red[u], std::plus<>(), root);
          allred[u].assign(n, 0);
          hc::all_reduce(vp, in, allred[u], std::plus<>());
          inplace[u] = in;
          hc::all_reduce(vp, inplace[u], std::plus<>());
          gath[u].assign(me == root ? n * p : 0, 0);
          hc::gather(vp, in, gath[u], root);
          Vec all(me == root ? n * p : 0);
          for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i) * 3;
          scat[u].assign(n, -1);
          hc::scatter(vp, all, scat[u], root);
          ag[u].assign(n * p, 0);
          hc::all_gather(vp, in, ag[u]);
          Vec blocks(n * p);
          for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] = value(me, i);
          rs[u].assign(n, 0);
          hc::reduce_scatter(vp, blocks, rs[u], std::plus<>());
          sc[u].assign(n, 0);
          ex[u].assign(n, -7);
          hc::scan(vp, in, sc[u], std::plus<>());
          hc::exscan(vp, in, ex[u], std::plus<>());
          a2a[u].assign(n * p, -1);
          hc::all_to_all(vp, blocks, a2a[u]);
          for (int shift = -1; shift <= p; ++shift) {
            shifted[u].emplace_back(n, -1);
            hc::circular_shift(vp, in, shifted[u].back(), shift);
          }
          hc::barrier(vp);
          // A non-commutative operator: the left fold over VP ids, whatever the root.
          std::vector<Mat> min(n), mout(me == root ? n : 0), mall(n), mblocks(n * p), mone(n);
          for (std::size_t i = 0; i < n; ++i) min[i] = hctest::mat_of(me, i);
          for (std::size_t i = 0; i < n * p; ++i) mblocks[i] = hctest::mat_of(me, i);
          hc::reduce(vp, min, mout, MatMul(), root);
          hc::all_reduce(vp, min, mall, MatMul());
          hc::reduce_scatter(vp, mblocks, mone, MatMul());
          mred[u] = mout;
          mallred[u] = mall;
          mrs[u] = mone;
        });
        const Vec sum = fold<std::int64_t>(0, p - 1, n, value, std::plus<>());
        const auto msum = fold<Mat>(0, p - 1, n, hctest::mat_of, MatMul());
        for (int v = 0; v < p; ++v) {
          CAPTURE(v);
          const auto u = static_cast<std::size_t>(v);
          CHECK(bcast[u] == filled(n, root));
          if (v == root) {
            CHECK(red[u] == sum);
            CHECK(mred[u] == msum);
            Vec want;
            for (int k = 0; k < p; ++k) {
              const Vec b = filled(n, k);
              want.insert(want.end(), b.begin(), b.end());
            }
            CHECK(gath[u] == want);
          }
          CHECK(allred[u] == sum);
          CHECK(inplace[u] == sum);
          CHECK(mallred[u] == msum);
          Vec my_block(n);
          for (std::size_t i = 0; i < n; ++i)
            my_block[i] = static_cast<std::int64_t>(u * n + i) * 3;
          CHECK(scat[u] == my_block);
          Vec want_ag;
          for (int k = 0; k < p; ++k) {
            const Vec b = filled(n, k);
            want_ag.insert(want_ag.end(), b.begin(), b.end());
          }
          CHECK(ag[u] == want_ag);
          const auto block_of = [&](int vp, std::size_t i) { return value(vp, u * n + i); };
          CHECK(rs[u] == fold<std::int64_t>(0, p - 1, n, block_of, std::plus<>()));
          const auto mblock_of = [&](int vp, std::size_t i) {
            return hctest::mat_of(vp, u * n + i);
          };
          CHECK(mrs[u] == fold<Mat>(0, p - 1, n, mblock_of, MatMul()));
          CHECK(sc[u] == fold<std::int64_t>(0, v, n, value, std::plus<>()));
          if (v > 0) CHECK(ex[u] == fold<std::int64_t>(0, v - 1, n, value, std::plus<>()));
          if (v == 0) CHECK(ex[u] == Vec(n, -7));
          // all_to_all: block k of VP v's out is block v of VP k's in.
          Vec want_a2a(n * p);
          for (int k = 0; k < p; ++k)
            for (std::size_t i = 0; i < n; ++i)
              want_a2a[static_cast<std::size_t>(k) * n + i] = value(k, u * n + i);
          CHECK(a2a[u] == want_a2a);
          for (int shift = -1; shift <= p; ++shift) {
            CAPTURE(shift);
            const int from = ((v - shift) % p + p) % p;
            CHECK(shifted[u][static_cast<std::size_t>(shift + 1)] == filled(n, from));
          }
        }
      }
    }
  }
}

TEST_CASE("line and open-mesh algorithms: model time is the card's formula, th = 0 and th > 0") {
  auto machines = lines();
  for (const Topology& t : open_meshes()) machines.push_back(t);
  for (const Topology& t : machines) {
    const int p = t.size();
    for (double th : {0.0, 0.25})
      for (bool all_port : {false, true}) {
        const hc::CostModel model{.ts = 1.0, .tw = 0.01, .th = th, .all_port = all_port};
        hc::Machine m(t, strict_options(model));
        for (std::size_t n : {std::size_t{1}, std::size_t{50}})
          for (int root : roots_of(p)) {
            const std::size_t bytes = n * sizeof(std::int64_t);
            struct Op {
              Collective op;
              std::function<void(hc::Proc&)> body;
            };
            const std::vector<Op> ops{
                {Collective::broadcast,
                 [&](hc::Proc& vp) {
                   Vec b(n, 1);
                   hc::broadcast(vp, b, root);
                 }},
                {Collective::reduce,
                 [&](hc::Proc& vp) {
                   Vec in(n, 1), out(vp.id() == root ? n : 0);
                   hc::reduce(vp, in, out, std::plus<>(), root);
                 }},
                {Collective::all_reduce,
                 [&](hc::Proc& vp) {
                   Vec in(n, 1), out(n);
                   hc::all_reduce(vp, in, out, std::plus<>());
                 }},
                {Collective::scatter,
                 [&](hc::Proc& vp) {
                   Vec in(vp.id() == root ? n * p : 0, 1), out(n);
                   hc::scatter(vp, in, out, root);
                 }},
                {Collective::gather,
                 [&](hc::Proc& vp) {
                   Vec in(n, 1), out(vp.id() == root ? n * p : 0);
                   hc::gather(vp, in, out, root);
                 }},
                {Collective::all_gather,
                 [&](hc::Proc& vp) {
                   Vec in(n, 1), out(n * p);
                   hc::all_gather(vp, in, out);
                 }},
                {Collective::reduce_scatter,
                 [&](hc::Proc& vp) {
                   Vec in(n * p, 1), out(n);
                   hc::reduce_scatter(vp, in, out, std::plus<>());
                 }},
                {Collective::scan,
                 [&](hc::Proc& vp) {
                   Vec in(n, 1), out(n);
                   hc::scan(vp, in, out, std::plus<>());
                 }},
                {Collective::exscan,
                 [&](hc::Proc& vp) {
                   Vec in(n, 1), out(n);
                   hc::exscan(vp, in, out, std::plus<>());
                 }},
                {Collective::all_to_all,
                 [&](hc::Proc& vp) {
                   Vec in(n * p, 1), out(n * p);
                   hc::all_to_all(vp, in, out);
                 }},
                {Collective::circular_shift,
                 [&](hc::Proc& vp) {
                   Vec in(n, 1), out(n);
                   hc::circular_shift(vp, in, out, root + 1);  // shifts 1, p/2 + 1, p
                 }},
                {Collective::barrier, [&](hc::Proc& vp) { hc::barrier(vp); }},
            };
            for (const Op& o : ops) {
              const std::size_t b = o.op == Collective::barrier      ? 0
                                    : o.op == Collective::all_to_all ? bytes * p
                                                                     : bytes;
              INFO(t.name(), " ", hc::to_string(o.op), " count=", n, " root=", root, " th=", th,
                   " all_port=", all_port);
              const hc::Report r = m.run(o.body);
              const double formula =
                  hc::textbook_time(o.op, Algo::automatic, t, Links::strict, b, model,
                                    hc::CallShape{.root = root, .shift = root + 1, .elem_size = 8});
              CHECK(hc::textbook_counts_hops(o.op, Algo::automatic, t, Links::strict, b));
              CHECK(formula == doctest::Approx(r.model_time).epsilon(1e-12));
            }
          }
      }
  }
}

TEST_CASE("line algorithms: the cards that run on a line and an open mesh under Links::strict") {
  const Topology t = Topology::linear(5);
  const auto ring_card = hc::find_card(Collective::broadcast, Algo::ring, t, Links::strict, 8);
  REQUIRE(ring_card != nullptr);
  CHECK(std::string(ring_card->variant) == "linear array");
  for (const Collective op : {Collective::all_to_all, Collective::circular_shift}) {
    CHECK(std::string(hc::find_card(op, Algo::automatic, t, Links::strict, 40, 2)->variant) ==
          "linear array");
  }
  // The line shift takes p steps whatever the shift (the wrapped messages cross the line), the
  // line all-to-all twice the ring's.
  const hc::CostModel model{.ts = 1.0, .tw = 0.01, .th = 0.0};
  CHECK(hc::textbook_time(Collective::circular_shift, Algo::automatic, t, Links::strict, 8, model,
                          1) == doctest::Approx(5 * 1.08));
  CHECK(hc::textbook_time(Collective::all_to_all, Algo::automatic, t, Links::strict, 40, model) ==
        doctest::Approx(4 * (2 + 0.4)));
  const Topology open = Topology::parse("mesh:3x4:open");
  for (const Collective op : {Collective::all_reduce, Collective::scan, Collective::exscan,
                              Collective::all_to_all, Collective::circular_shift})
    CHECK(std::string(hc::find_card(op, Algo::automatic, open, Links::strict, 96, 5)->variant) ==
          "open mesh");
  // Under Links::routed the ring's own algorithms run (their wraparound message routed).
  CHECK(hc::find_card(Collective::broadcast, Algo::ring, t, Links::routed, 8)->variant == nullptr);
}
