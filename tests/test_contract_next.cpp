// The parts of API.md beyond ../shared/contract's check, spelled as a user spells them: the
// linear array and the open mesh, Options::meetings, the cost model's contention and all_port,
// Groups and the irregular collectives. Each is called and its result checked once; the
// families' own tests (test_groups, test_irregular, test_topology, ...) go much further.
#include <doctest/doctest.h>

#include <array>
#include <initializer_list>
#include <numeric>
#include <span>
#include <type_traits>
#include <vector>

#include "support.hpp"

namespace hc = hypercomm;

TEST_CASE("contract: topologies, options and the cost model's new fields") {
  const hc::Topology l = hc::Topology::linear(8);
  const hc::Topology open = hc::Topology::mesh(4, 4, hc::Wrap::none);
  const hc::Topology torus = hc::Topology::mesh(4, 4, hc::Wrap::around);
  CHECK(l.name() == "linear:8");
  CHECK(open.name() == "mesh:4x4:open");
  CHECK(hc::Topology::parse("mesh:4x4:open") == open);
  CHECK(hc::Topology::parse("linear:8") == l);
  CHECK(torus == hc::Topology::mesh(4, 4));
  CHECK_FALSE(l.adjacent(0, 7));
  CHECK_FALSE(open.adjacent(0, 3));
  CHECK(torus.adjacent(0, 3));

  hc::Options opt = hctest::test_options();
  opt.meetings = false;
  opt.model = {.ts = 1.0, .tw = 0.0, .th = 0.0, .contention = true};
  const hc::Report r = hc::run(
      hc::Topology::ring(8), [](hc::Proc& vp) { hc::barrier(vp); }, opt);
  CHECK(r.model_time > 0);
  opt.model = {.ts = 1.0, .tw = 0.0, .th = 0.0, .contention = false, .all_port = true};
  // All ports: the root of a hypercube:3 sends its three messages at once.
  const hc::Report a = hc::run(
      hc::Topology::hypercube(3),
      [](hc::Proc& vp) {
        std::array<int, 1> x{vp.id()};
        if (vp.id() == 0)
          for (int k : {1, 2, 4}) vp.send(k, x);
        else if (vp.id() == 1 || vp.id() == 2 || vp.id() == 4)
          vp.recv(0, x);
      },
      opt);
  CHECK(a.model_time == doctest::Approx(1.0));
  // And the sender's clock() counts its sends as the report does (it said 0 until 2026-11-29).
  opt.model = {.ts = 1.0, .tw = 1.0, .th = 0.0, .contention = false, .all_port = true};
  double after_sends = -1, after_third = -1;
  const hc::Report b = hc::run(
      hc::Topology::hypercube(2),
      [&](hc::Proc& vp) {
        std::array<char, 10> m{};
        if (vp.id() == 0) {
          vp.send(1, m);
          vp.send(2, m);
          after_sends = vp.clock();
          vp.send(1, std::span<const char>(m).first(1));
          after_third = vp.clock();
        } else if (vp.id() != 3) {
          vp.recv(0, m);
          if (vp.id() == 1) vp.recv(0, std::span<char>(m).first(1));
        }
      },
      opt);
  CHECK(after_sends == doctest::Approx(11.0));  // both links busy until 11
  CHECK(after_third == doctest::Approx(13.0));  // link 0 -> 1 again: 11 + 1 + 1
  CHECK(b.clocks[0] == doctest::Approx(after_third));
  opt.model = {.ts = 1.0, .tw = 0.0, .th = 0.0, .contention = false, .all_port = false};
  const hc::Report one = hc::run(
      hc::Topology::hypercube(3),
      [](hc::Proc& vp) {
        std::array<int, 1> x{vp.id()};
        if (vp.id() == 0)
          for (int k : {1, 2, 4}) vp.send(k, x);
        else if (vp.id() == 1 || vp.id() == 2 || vp.id() == 4)
          vp.recv(0, x);
      },
      opt);
  CHECK(one.model_time == doctest::Approx(3.0));
}

TEST_CASE("contract: groups and irregular collectives as a user spells them") {
  std::vector<int> row_sums(16), splits(16), gathered(16), shifts(16);
  hc::run(
      hc::Topology::mesh(4, 4),
      [&](hc::Proc& vp) {
        hc::Group w = vp.world();
        hc::Group r = vp.row();
        hc::Group c = vp.column();
        CHECK(w.size() == 16);
        CHECK(r.topology() == hc::Topology::ring(4));
        CHECK(c.vp(c.rank()) == vp.id());
        row_sums[static_cast<std::size_t>(vp.id())] = hc::all_reduce(r, vp.id(), std::plus<>());
        hc::Group h = hc::split(w, vp.id() % 2, -vp.id());
        splits[static_cast<std::size_t>(vp.id())] = h.rank();
        std::vector<int> out(2), in(2, vp.id());
        hc::circular_shift(r, in, out, 1);
        shifts[static_cast<std::size_t>(vp.id())] = out[0];
        if (r.rank() == 0) r.send(1, in);
        if (r.rank() == 1) r.recv(0, out);
        std::vector<std::size_t> counts{1, 2, 3, 4};
        std::vector<int> mine(counts[static_cast<std::size_t>(r.rank())], vp.id()), all(10);
        hc::all_gatherv(r, std::span<const int>(mine), std::span<int>(all),
                        std::span<const std::size_t>(counts));
        gathered[static_cast<std::size_t>(vp.id())] = std::accumulate(all.begin(), all.end(), 0);
        std::vector<int> everyone = hc::all_gatherv(c, mine);
        CHECK(everyone.size() == static_cast<std::size_t>(c.size() * (r.rank() + 1)));
        std::vector<std::vector<int>> to(4);
        for (int j = 0; j < 4; ++j) to[static_cast<std::size_t>(j)].assign(j, vp.id());
        std::vector<std::vector<int>> from = hc::all_to_allv(r, to);
        CHECK(from[0].size() == static_cast<std::size_t>(r.rank()));
        std::vector<int> red(counts[static_cast<std::size_t>(r.rank())]), sum_in(10, 1);
        hc::reduce_scatterv(r, sum_in, red, std::plus<>(), counts);
        CHECK(red.front() == 4);
        std::vector<int> root_out(r.rank() == 0 ? 10 : 0),
            part(counts[static_cast<std::size_t>(r.rank())]);
        hc::gatherv(r, mine, root_out, counts, 0);
        hc::scatterv(r, root_out, part, counts, 0);
        CHECK(part == mine);
        std::vector<std::size_t> sc{1, 1, 1, 1}, rc{1, 1, 1, 1};
        std::vector<int> a2a(4, vp.id()), b2b(4);
        hc::all_to_allv(r, a2a, sc, b2b, rc);
        CHECK(b2b[static_cast<std::size_t>(r.rank())] == vp.id());
      },
      hctest::test_options());
  for (int id = 0; id < 16; ++id) {
    const int row = id / 4;
    CAPTURE(id);
    CHECK(row_sums[static_cast<std::size_t>(id)] == 4 * (4 * row) + 6);
    CHECK(splits[static_cast<std::size_t>(id)] == (15 - id) / 2);
    CHECK(shifts[static_cast<std::size_t>(id)] == row * 4 + (id % 4 + 3) % 4);
    CHECK(gathered[static_cast<std::size_t>(id)] == 4 * row * 10 + (0 * 1 + 1 * 2 + 2 * 3 + 3 * 4));
  }
  std::vector<int> ranks(16, -2);
  hc::run(
      hc::Topology::hypercube(4),
      [&](hc::Proc& vp) {
        hc::Group s = vp.subcube(0b0101);
        CHECK(s.topology() == hc::Topology::hypercube(2));
        ranks[static_cast<std::size_t>(vp.id())] = s.rank();
        hc::Group none = hc::split(vp, vp.id() == 3 ? -1 : 0, 0);
        if (vp.id() == 3) {
          CHECK(none.size() == 0);
          CHECK(none.rank() == -1);
        }
      },
      hctest::test_options());
  for (int id = 0; id < 16; ++id)
    CHECK(ranks[static_cast<std::size_t>(id)] == ((id & 1) | ((id >> 2) & 1) << 1));
}

TEST_CASE("contract: a C array is a range, never a value form's value") {
  // API.md: a value form applies only when the argument is not a contiguous range; a C array
  // is one, and must not decay to a pointer and take the value form.
  std::vector<long> wrong(4, 0);
  hc::run(hc::Topology::ring(4), [&](hc::Proc& vp) {
    long& bad = wrong[static_cast<std::size_t>(vp.id())];
    int buf[4] = {vp.id(), vp.id(), vp.id(), vp.id()};
    hc::broadcast(vp, buf, 2);
    for (int x : buf) bad += x != 2;
    int sum[3] = {vp.id(), 1, 2};
    hc::all_reduce(vp, sum, std::plus<>());
    bad += sum[0] != 6 || sum[1] != 4 || sum[2] != 8;
    int all[4] = {};
    const int mine[1] = {vp.id() * 10};
    hc::all_gather(vp, mine, all);
    for (int k = 0; k < 4; ++k) bad += all[k] != k * 10;
    // The value forms with lvalues, const lvalues and temporaries still take values.
    const long c = vp.id();
    long l = vp.id();
    bad += hc::broadcast(vp, c, 1) != 1;
    bad += hc::all_reduce(vp, l, std::plus<>()) != 6;
    bad += hc::scan(vp, long{vp.id()}, std::plus<>()) != vp.id() * (vp.id() + 1) / 2;
    bad += hc::all_gather(vp, l).size() != 4;
    bad += l != vp.id();
  });
  for (long w : wrong) CHECK(w == 0);
}

namespace {
// API.md: T is any trivially copyable type; one without a default constructor is one.
struct Tally {
  long value;
  long scale;  // 10 to the number of digits in value, for ConcatTallies
  explicit Tally(long v) : value(v), scale(10) {}
  Tally(long v, long s) : value(v), scale(s) {}
};
static_assert(std::is_trivially_copyable_v<Tally> && !std::is_default_constructible_v<Tally>);
struct AddTallies {
  Tally operator()(const Tally& a, const Tally& b) const { return Tally(a.value + b.value); }
};
// Associative, not commutative: the digits of a, then those of b (the left fold over ranks
// reads 0123...).
struct ConcatTallies {
  Tally operator()(const Tally& a, const Tally& b) const {
    return {a.value * b.scale + b.value, a.scale * b.scale};
  }
};

// Runs body(vp, bad, p) on every VP of each topology; every VP's count of wrong results is 0.
template <class Body>
void on_each(std::initializer_list<hc::Topology> topologies, Body body) {
  for (const hc::Topology& t : topologies) {
    CAPTURE(t.name());
    std::vector<long> wrong(static_cast<std::size_t>(t.size()), 0);
    hc::run(t, [&](hc::Proc& vp) { body(vp, wrong[static_cast<std::size_t>(vp.id())], t.size()); });
    for (long w : wrong) CHECK(w == 0);
  }
}
}  // namespace

TEST_CASE("contract: elements without a default constructor, and a mutable operator") {
  on_each({hc::Topology::ring(3), hc::Topology::hypercube(2), hc::Topology::hypercube(3)},
          [](hc::Proc& vp, long& bad, int p) {
            const int me = vp.id();
            const auto n = static_cast<std::size_t>(p);
            const long sum = static_cast<long>(p) * (p - 1) / 2;
            std::vector<Tally> in(3, Tally(me)), out(3, Tally(-1));
            hc::all_reduce(vp, in, out, AddTallies{});
            for (const Tally& x : out) bad += x.value != sum;
            hc::reduce(vp, in, out, AddTallies{}, 1);
            bad += me == 1 && out[0].value != sum;
            bad += hc::all_reduce(vp, Tally(me), AddTallies{}).value != sum;
            long digits = 0, all = 0;  // ranks 0..me and 0..p-1, digit by digit
            for (int r = 0; r < p; ++r) {
              all = all * 10 + r;
              if (r == me) digits = all;
            }
            bad += hc::scan(vp, Tally(me), ConcatTallies{}).value != digits;
            bad += hc::all_reduce(vp, Tally(me), ConcatTallies{}).value != all;
            std::vector<Tally> one{Tally(me)}, before{Tally(-7)};
            hc::exscan(vp, one, before, ConcatTallies{});
            bad += before[0].value != (me == 0 ? -7 : (digits - me) / 10);
            std::vector<Tally> blocks(n, Tally(me)), mine{Tally(-1)};
            hc::reduce_scatter(vp, blocks, mine, AddTallies{});
            bad += mine[0].value != sum;
            // An operator callable only as non-const: a mutable lambda that counts its calls.
            int calls = 0;
            bad += hc::all_reduce(vp, Tally(me), [calls](const Tally& a, const Tally& b) mutable {
                     ++calls;
                     return Tally(a.value + b.value);
                   }).value != sum;
            const std::vector<Tally> ids = hc::all_gather(vp, Tally(me));
            for (int r = 0; r < p; ++r) bad += ids[static_cast<std::size_t>(r)].value != r;
            const std::vector<Tally> gathered =
                hc::all_gatherv(vp, std::vector<Tally>(1, Tally(me)));
            for (int r = 0; r < p; ++r) bad += gathered[static_cast<std::size_t>(r)].value != r;
            std::vector<std::vector<Tally>> to(n);
            for (int r = 0; r < p; ++r)
              to[static_cast<std::size_t>(r)].assign(static_cast<std::size_t>(r), Tally(me));
            const auto from = hc::all_to_allv(vp, to);
            for (int r = 0; r < p; ++r)
              for (const Tally& x : from[static_cast<std::size_t>(r)]) bad += x.value != r;
            bad += from[0].size() != static_cast<std::size_t>(me);
          });
}

namespace {
// Trivially copyable, not assignable.
struct Fixed {
  const int v;
};
static_assert(std::is_trivially_copyable_v<Fixed>);
}  // namespace

TEST_CASE("contract: bool elements (std::vector<bool> holds bits) and unassignable ones") {
  on_each({hc::Topology::ring(3), hc::Topology::hypercube(2)}, [](hc::Proc& vp, long& bad, int p) {
    const int me = vp.id();
    const auto n = static_cast<std::size_t>(p);
    const std::vector<bool> odd = hc::all_gather(vp, me % 2 == 1);
    bad += odd.size() != n;
    for (int r = 0; r < p; ++r) bad += odd[static_cast<std::size_t>(r)] != (r % 2 == 1);
    const std::array<bool, 2> pair{true, me == 0};
    const std::vector<bool> both = hc::all_gatherv(vp.world(), pair);
    bad += both.size() != 2 * n;
    for (int r = 0; r < p; ++r)
      bad += !both[2 * static_cast<std::size_t>(r)] ||
             both[2 * static_cast<std::size_t>(r) + 1] != (r == 0);
    std::vector<std::vector<bool>> to(n);  // rank r gets r bits: whether it is odd, alternately
    for (int r = 0; r < p; ++r)
      for (int i = 0; i < r; ++i) to[static_cast<std::size_t>(r)].push_back((i + me) % 2 == 1);
    const std::vector<std::vector<bool>> bits = hc::all_to_allv(vp, to);
    for (int r = 0; r < p; ++r) {
      const auto& got = bits[static_cast<std::size_t>(r)];
      bad += got.size() != static_cast<std::size_t>(me);
      for (std::size_t i = 0; i < got.size(); ++i)
        bad += got[i] != ((static_cast<int>(i) + r) % 2 == 1);
    }
    std::vector<std::vector<Fixed>> fixed(n);
    for (int r = 0; r < p; ++r)
      for (int i = 0; i <= r; ++i) fixed[static_cast<std::size_t>(r)].push_back(Fixed{me * 10 + i});
    const std::vector<std::vector<Fixed>> from = hc::all_to_allv(vp, fixed);
    for (int r = 0; r < p; ++r) {
      const auto& got = from[static_cast<std::size_t>(r)];
      bad += got.size() != static_cast<std::size_t>(me) + 1;
      for (std::size_t i = 0; i < got.size(); ++i) bad += got[i].v != r * 10 + static_cast<int>(i);
    }
  });
}
