// Personalized exchange and synchronisation: all_to_all, circular_shift, barrier.
// Through the public API on every test topology and link mode, and each algorithm of
// collectives/src/exchange.hpp called directly where it can run, with its model time checked
// against its formula.
#include <doctest/doctest.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "exchange.hpp"
#include "group_info.hpp"
#include "support.hpp"

using hypercomm::Algo;
using hypercomm::Links;
using hypercomm::Machine;
using hypercomm::Options;
using hypercomm::Proc;
using hypercomm::Topology;
namespace detail = hypercomm::detail;

namespace {

constexpr Links kLinkModes[] = {Links::routed, Links::strict};
constexpr Algo kAllAlgos[] = {
    Algo::automatic, Algo::hypercube,         Algo::ring, Algo::mesh, Algo::esbt,
    Algo::two_phase, Algo::dimension_exchange};
constexpr std::uint64_t kPoison = 0xdeadbeefdeadbeefULL;

// (doctest prints a const char* in INFO as a pointer: hand it strings.)
std::string name_of(Links links) { return links == Links::routed ? "routed" : "strict"; }
std::string name_of(Algo a) { return hypercomm::to_string(a); }

bool power_of_two(int p) { return std::has_single_bit(static_cast<unsigned>(p)); }

// VP i and i+1 mod p are neighbours.
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

bool is_mesh(const Topology& t) { return t.kind() == Topology::Kind::mesh; }

// Which Algo all_to_all accepts, per the project's table: Algorithm 4.10 (Algo::hypercube) needs
// p = 2^d and routed links, or p <= 2, where its one partner id XOR 1 is a neighbour on every
// topology (ring:2, mesh:1x2, ring:1, ...).
bool all_to_all_valid(Algo a, const Topology& t, Links links) {
  const int p = t.size();
  const bool routed = links == Links::routed;
  switch (a) {
    case Algo::automatic: return true;
    case Algo::hypercube: return power_of_two(p) && (routed || p <= 2);
    case Algo::ring: return ring_adjacent(t) || routed;
    case Algo::mesh: return is_mesh(t);
    case Algo::dimension_exchange:
      return power_of_two(p) && (hctest::xor_partners_adjacent(t) || routed);
    default: return false;
  }
}

Options options_for(Links links, hypercomm::CostModel model = {}) {
  Options opt = hctest::test_options();
  opt.links = links;
  opt.model = model;
  return opt;
}

// The model the formulas are checked under: ts = 1, tw = 0.5 per byte, th = 0.
constexpr hypercomm::CostModel kModel{.ts = 1.0, .tw = 0.5, .th = 0.0};

// ---- all_to_all ---------------------------------------------------------------------------------

// Element i of the block VP src sends to VP dst: misplaced data cannot look right.
std::uint64_t a2a_value(int src, int dst, std::size_t i) {
  return (static_cast<std::uint64_t>(src) << 40) | (static_cast<std::uint64_t>(dst) << 20) | i;
}

std::vector<std::uint64_t> a2a_input(int me, int p, std::size_t count) {
  std::vector<std::uint64_t> in(static_cast<std::size_t>(p) * count);
  for (int dst = 0; dst < p; ++dst)
    for (std::size_t i = 0; i < count; ++i) in[dst * count + i] = a2a_value(me, dst, i);
  return in;
}

// "" when every VP's out holds block src from VP src, else the first wrong element.
std::string a2a_error(const std::vector<std::vector<std::uint64_t>>& got, std::size_t count) {
  const int p = static_cast<int>(got.size());
  for (int me = 0; me < p; ++me) {
    if (got[me].size() != static_cast<std::size_t>(p) * count)
      return "VP " + std::to_string(me) + " did not finish";
    for (int src = 0; src < p; ++src)
      for (std::size_t i = 0; i < count; ++i)
        if (got[me][src * count + i] != a2a_value(src, me, i))
          return "VP " + std::to_string(me) + " block " + std::to_string(src) + " element " +
                 std::to_string(i) + " = " + std::to_string(got[me][src * count + i]);
  }
  return "";
}

std::vector<std::size_t> a2a_counts(int p) {
  if (p <= 8) return {0, 1, 7, 1000};
  return {0, 1, 7};
}

// ---- circular_shift -----------------------------------------------------------------------------

std::uint64_t shift_value(int src, std::size_t i) {
  return (static_cast<std::uint64_t>(src) << 32) | (i + 1);
}

int modulo(int a, int p) { return ((a % p) + p) % p; }

std::string shift_error(const std::vector<std::vector<std::uint64_t>>& got, std::size_t count,
                        int shift) {
  const int p = static_cast<int>(got.size());
  for (int me = 0; me < p; ++me) {
    if (got[me].size() != count) return "VP " + std::to_string(me) + " did not finish";
    const int src = modulo(me - shift, p);
    for (std::size_t i = 0; i < count; ++i)
      if (got[me][i] != shift_value(src, i))
        return "VP " + std::to_string(me) + " element " + std::to_string(i) + " = " +
               std::to_string(got[me][i]) + ", expected from VP " + std::to_string(src);
  }
  return "";
}

std::vector<int> shifts_for(int p) {
  std::vector<int> s;
  if (p <= 9) {
    for (int q = -p; q <= 2 * p; ++q) s.push_back(q);
  } else {
    s = {-p - 1, -p,        -1,    0, 1,     2,         3,    p / 2 - 1,
         p / 2,  p / 2 + 1, p - 1, p, p + 3, 2 * p - 1, 2 * p};
  }
  return s;
}

// Runs a circular shift by `shift` with `count` elements; every VP's out, in id order.
using ShiftFn =
    std::function<void(Proc&, std::span<const std::uint64_t>, std::span<std::uint64_t>)>;
std::vector<std::vector<std::uint64_t>> run_shift(Machine& m, std::size_t count, const ShiftFn& fn,
                                                  double* model_time) {
  std::vector<std::vector<std::uint64_t>> got(static_cast<std::size_t>(m.topology().size()));
  const hypercomm::Report r = m.run([&](Proc& vp) {
    std::vector<std::uint64_t> in(count), out(count, kPoison);
    for (std::size_t i = 0; i < count; ++i) in[i] = shift_value(vp.id(), i);
    fn(vp, in, out);
    got[vp.id()] = std::move(out);
  });
  if (model_time != nullptr) *model_time = r.model_time;
  return got;
}

// Steps of a ring shift by q on n VPs: the shorter way.
int ring_steps(int q, int n) { return std::min(modulo(q, n), n - modulo(q, n)); }

// circular_shift_mesh's step count: row shift, then each column its own shorter way.
int mesh_shift_steps(int q, int rows, int cols) {
  const int qc = q % cols, qr = q / cols;
  int column = ring_steps(qr, rows);
  if (qc > 0) column = std::max(column, ring_steps(qr + 1, rows));
  return ring_steps(qc, cols) + column;
}

// ---- barrier ------------------------------------------------------------------------------------

// Each VP counts itself into arrived[round] before the barrier and, after it, reads the count:
// anything but p means some VP left before everyone entered. One VP per round is made late.
// Returns the number of violations seen (test-side atomics only; the barrier sees none).
int barrier_violations(Machine& m, int rounds, const std::function<void(Proc&)>& barrier,
                       bool delay) {
  const int p = m.topology().size();
  std::vector<std::atomic<int>> arrived(static_cast<std::size_t>(rounds));
  std::vector<int> violations(static_cast<std::size_t>(p), 0);
  std::vector<int> finished(static_cast<std::size_t>(p), 0);
  m.run([&](Proc& vp) {
    for (int round = 0; round < rounds; ++round) {
      if (delay && vp.id() == round % p)
        std::this_thread::sleep_for(std::chrono::microseconds(300));
      arrived[round].fetch_add(1);
      barrier(vp);
      if (arrived[round].load() != p) ++violations[vp.id()];
    }
    finished[vp.id()] = 1;
  });
  int total = 0;
  for (int v : violations) total += v;
  for (int f : finished) total += f == 1 ? 0 : 1000;
  return total;
}

}  // namespace

// ================================================================================================
// all_to_all through the public API
// ================================================================================================

TEST_CASE("all_to_all: every valid algorithm, every topology, both link modes") {
  for (const Topology& t : hctest::all_topologies()) {
    const int p = t.size();
    for (Links links : kLinkModes) {
      Machine m(t, options_for(links));
      for (Algo a : kAllAlgos) {
        if (!all_to_all_valid(a, t, links)) continue;
        for (std::size_t count : a2a_counts(p)) {
          INFO(hctest::describe(t, count), " links=", name_of(links), " algo=", name_of(a));
          std::vector<std::vector<std::uint64_t>> got(static_cast<std::size_t>(p));
          const auto body = [&](Proc& vp) {
            const auto in = a2a_input(vp.id(), p, count);
            std::vector<std::uint64_t> out(in.size(), kPoison);
            hypercomm::all_to_all(vp, in, out, a);
            got[vp.id()] = std::move(out);
          };
          CHECK_NOTHROW(m.run(body));
          CHECK(a2a_error(got, count) == "");
        }
      }
    }
  }
}

TEST_CASE("all_to_all: an algorithm that cannot run throws AlgorithmError") {
  for (const Topology& t : hctest::all_topologies()) {
    for (Links links : kLinkModes) {
      Machine m(t, options_for(links));
      for (Algo a : kAllAlgos) {
        if (all_to_all_valid(a, t, links)) continue;
        INFO(t.name(), " links=", name_of(links), " algo=", name_of(a));
        const auto body = [&](Proc& vp) {
          const auto in = a2a_input(vp.id(), t.size(), 2);
          std::vector<std::uint64_t> out(in.size());
          hypercomm::all_to_all(vp, in, out, a);
        };
        CHECK_THROWS_AS(m.run(body), hypercomm::AlgorithmError);
      }
    }
  }
}

TEST_CASE("all_to_all: odd element size and in-place buffers") {
  struct Rgb {
    std::uint8_t r, g, b;
  };
  static_assert(sizeof(Rgb) == 3);
  for (const char* name : {"ring:5", "mesh:2x3", "hypercube:3"}) {
    const Topology t = Topology::parse(name);
    const int p = t.size();
    for (Links links : kLinkModes) {
      Machine m(t, options_for(links));
      for (Algo a : kAllAlgos) {
        if (!all_to_all_valid(a, t, links)) continue;
        INFO(std::string(name), " links=", name_of(links), " algo=", name_of(a));
        constexpr std::size_t count = 5;
        std::vector<int> bad(static_cast<std::size_t>(p), 1);
        m.run([&](Proc& vp) {
          const auto me = static_cast<std::uint8_t>(vp.id());
          std::vector<Rgb> buf(static_cast<std::size_t>(p) * count);
          for (int dst = 0; dst < p; ++dst)
            for (std::size_t i = 0; i < count; ++i)
              buf[dst * count + i] = {me, static_cast<std::uint8_t>(dst),
                                      static_cast<std::uint8_t>(i)};
          hypercomm::all_to_all(vp, buf, buf, a);  // in == out: the front end separates them
          int wrong = 0;
          for (int src = 0; src < p; ++src)
            for (std::size_t i = 0; i < count; ++i) {
              const Rgb& v = buf[src * count + i];
              wrong += v.r != src || v.g != me || v.b != i;
            }
          bad[vp.id()] = wrong;
        });
        for (int id = 0; id < p; ++id) CHECK_MESSAGE(bad[id] == 0, "VP ", id);
      }
    }
  }
}

TEST_CASE("all_to_all: SizeMismatch for wrong local sizes") {
  for (const char* name : {"ring:1", "ring:4", "mesh:2x3", "hypercube:3"}) {
    const Topology t = Topology::parse(name);
    const int p = t.size();
    Machine m(t, options_for(Links::routed));
    INFO(std::string(name));
    const auto short_out = [&](Proc& vp) {  // out one block short
      std::vector<int> in(static_cast<std::size_t>(p) * 3);
      std::vector<int> out(static_cast<std::size_t>(p - 1) * 3);
      hypercomm::all_to_all(vp, in, out);
    };
    CHECK_THROWS_AS(m.run(short_out), hypercomm::SizeMismatch);
    const auto uneven = [&](Proc& vp) {  // not p equal blocks
      std::vector<int> in(static_cast<std::size_t>(p) * 3 + 1);
      std::vector<int> out(in.size());
      hypercomm::all_to_all(vp, in, out);
    };
    if (p > 1) CHECK_THROWS_AS(m.run(uneven), hypercomm::SizeMismatch);
  }
}

TEST_CASE("all_to_all: model time equals the formula") {
  for (std::size_t count : {0, 1, 7}) {
    const double m = 8.0 * static_cast<double>(count);  // bytes per block
    const auto model_time = [&](const char* name, Links links, Algo a) {
      const Topology t = Topology::parse(name);
      Machine machine(t, options_for(links, kModel));
      return machine
          .run([&](Proc& vp) {
            const auto in = a2a_input(vp.id(), t.size(), count);
            std::vector<std::uint64_t> out(in.size());
            hypercomm::all_to_all(vp, in, out, a);
          })
          .model_time;
    };
    CAPTURE(count);
    // Algorithm 4.10: (ts + tw m)(p - 1).
    CHECK(model_time("hypercube:3", Links::routed, Algo::hypercube) ==
          doctest::Approx((1 + 0.5 * m) * 7).epsilon(1e-12));
    // Dimension exchange: (ts + tw m p/2) log p.
    CHECK(model_time("hypercube:3", Links::strict, Algo::dimension_exchange) ==
          doctest::Approx((1 + 0.5 * m * 4) * 3).epsilon(1e-12));
    CHECK(model_time("hypercube:4", Links::routed, Algo::dimension_exchange) ==
          doctest::Approx((1 + 0.5 * m * 8) * 4).epsilon(1e-12));
    // Ring: (ts + tw m p/2)(p - 1).
    CHECK(model_time("ring:6", Links::strict, Algo::ring) ==
          doctest::Approx((1 + 0.5 * m * 3) * 5).epsilon(1e-12));
    CHECK(model_time("ring:7", Links::strict, Algo::ring) ==
          doctest::Approx((1 + 0.5 * m * 3.5) * 6).epsilon(1e-12));
    // Mesh: (ts + tw m p/2)(rows + cols - 2); square: (2 ts + tw m p)(sqrt p - 1).
    CHECK(model_time("mesh:3x3", Links::strict, Algo::mesh) ==
          doctest::Approx((2 + 0.5 * m * 9) * 2).epsilon(1e-12));
    CHECK(model_time("mesh:2x3", Links::strict, Algo::mesh) ==
          doctest::Approx((1 + 0.5 * m * 3) * 3).epsilon(1e-12));
  }
}

// ================================================================================================
// circular_shift through the public API
// ================================================================================================

TEST_CASE("circular_shift: every topology, both link modes, many shifts") {
  for (const Topology& t : hctest::all_topologies()) {
    const int p = t.size();
    for (Links links : kLinkModes) {
      Machine m(t, options_for(links));
      for (int shift : shifts_for(p)) {
        for (std::size_t count : {0, 1, 7}) {
          INFO(hctest::describe(t, count), " links=", name_of(links), " shift=", shift);
          const auto got = run_shift(
              m, count,
              [shift](Proc& vp, auto in, auto out) {
                hypercomm::circular_shift(vp, in, out, shift);
              },
              nullptr);
          CHECK(shift_error(got, count, shift) == "");
        }
      }
      // Large messages on a few shifts.
      for (int shift : {1, -1, p / 2, p + 2}) {
        constexpr std::size_t count = 1000;
        INFO(hctest::describe(t, count), " links=", name_of(links), " shift=", shift);
        const auto got = run_shift(
            m, count,
            [shift](Proc& vp, auto in, auto out) { hypercomm::circular_shift(vp, in, out, shift); },
            nullptr);
        CHECK(shift_error(got, count, shift) == "");
      }
    }
  }
}

TEST_CASE("circular_shift: SizeMismatch when in and out differ") {
  for (const char* name : {"ring:1", "ring:5", "mesh:3x3", "hypercube:2"}) {
    Machine m(Topology::parse(name), options_for(Links::strict));
    INFO(std::string(name));
    const auto body = [](Proc& vp) {
      std::vector<int> in(4);
      std::vector<int> out(5);
      hypercomm::circular_shift(vp, in, out, 1);
    };
    CHECK_THROWS_AS(m.run(body), hypercomm::SizeMismatch);
  }
}

TEST_CASE("circular_shift: ring model time is (ts + tw m) min(q, p - q)") {
  for (int p : {6, 7}) {
    const Topology t = Topology::ring(p);
    Machine m(t, options_for(Links::strict, kModel));
    for (int shift = -p; shift <= 2 * p; ++shift) {
      for (std::size_t count : {0, 7}) {
        INFO(hctest::describe(t, count), " shift=", shift);
        double model_time = -1;
        const auto got = run_shift(
            m, count,
            [shift](Proc& vp, auto in, auto out) { hypercomm::circular_shift(vp, in, out, shift); },
            &model_time);
        CHECK(shift_error(got, count, shift) == "");
        const double msg = 8.0 * static_cast<double>(count);
        CHECK(model_time == doctest::Approx((1 + 0.5 * msg) * ring_steps(shift, p)).epsilon(1e-12));
      }
    }
  }
}

// ================================================================================================
// barrier through the public API
// ================================================================================================

TEST_CASE("barrier: no VP leaves before every VP entered, every topology and link mode") {
  for (const Topology& t : hctest::all_topologies()) {
    for (Links links : kLinkModes) {
      INFO(t.name(), " links=", name_of(links));
      Machine m(t, options_for(links));
      CHECK(barrier_violations(
                m, 24, [](Proc& vp) { hypercomm::barrier(vp); }, true) == 0);
    }
  }
}

TEST_CASE("barrier: 200 back-to-back barriers") {
  for (const char* name : {"ring:7", "mesh:3x3", "hypercube:4", "ring:16"}) {
    for (Links links : kLinkModes) {
      INFO(std::string(name), " links=", name_of(links));
      Machine m(Topology::parse(name), options_for(links));
      CHECK(barrier_violations(
                m, 200, [](Proc& vp) { hypercomm::barrier(vp); }, false) == 0);
    }
  }
}

// ================================================================================================
// Each algorithm called directly (the front end picks one per machine; these reach the others)
// ================================================================================================

namespace {

detail::Comm comm_of(Proc& vp) {
  return detail::Comm{detail::Port::of(vp), vp.world().info(), hypercomm::MessageTag{}};
}

using AllToAllFn = void (*)(const detail::Comm&, detail::ConstBytes, detail::Bytes, std::size_t);

// Runs fn on t with links; checks the data and returns the model time.
double check_all_to_all(const Topology& t, Links links, AllToAllFn fn, std::size_t count,
                        hypercomm::CostModel model = kModel) {
  const int p = t.size();
  Machine m(t, options_for(links, model));
  std::vector<std::vector<std::uint64_t>> got(static_cast<std::size_t>(p));
  const hypercomm::Report r = m.run([&](Proc& vp) {
    const auto in = a2a_input(vp.id(), p, count);
    std::vector<std::uint64_t> out(in.size(), kPoison);
    fn(comm_of(vp), std::as_bytes(std::span(in)), std::as_writable_bytes(std::span(out)),
       count * sizeof(std::uint64_t));
    got[vp.id()] = std::move(out);
  });
  CHECK(a2a_error(got, count) == "");
  return r.model_time;
}

}  // namespace

TEST_CASE("all_to_all algorithms directly: data and model time") {
  for (std::size_t count : {0, 1, 7}) {
    const double m = 8.0 * static_cast<double>(count);
    for (int d = 1; d <= 4; ++d) {
      const int p = 1 << d;
      const Topology cube = Topology::hypercube(d);
      INFO("hypercube:", d, " count=", count);
      CHECK(check_all_to_all(cube, Links::routed, detail::all_to_all_pairwise, count) ==
            doctest::Approx((1 + 0.5 * m) * (p - 1)).epsilon(1e-12));
      CHECK(check_all_to_all(cube, Links::strict, detail::all_to_all_dimension_exchange, count) ==
            doctest::Approx((1 + 0.5 * m * p / 2) * d).epsilon(1e-12));
    }
    for (int p = 2; p <= 9; ++p) {
      INFO("ring:", p, " count=", count);
      CHECK(check_all_to_all(Topology::ring(p), Links::strict, detail::all_to_all_ring, count) ==
            doctest::Approx((1 + 0.5 * m * p / 2) * (p - 1)).epsilon(1e-12));
    }
    for (auto [rows, cols] : {std::pair{1, 4}, {4, 1}, {2, 2}, {2, 3}, {3, 2}, {3, 3}, {2, 5}}) {
      const Topology t = Topology::mesh(rows, cols);
      INFO(t.name(), " count=", count);
      const auto torus = [](const detail::Comm& c, detail::ConstBytes in, detail::Bytes out,
                            std::size_t block) { detail::all_to_all_mesh(c, in, out, block); };
      CHECK(check_all_to_all(t, Links::strict, torus, count) ==
            doctest::Approx((1 + 0.5 * m * rows * cols / 2) * (rows + cols - 2)).epsilon(1e-12));
      // Without wraparound: the line's all-to-all along the rows, then the columns.
      const auto open = [](const detail::Comm& c, detail::ConstBytes in, detail::Bytes out,
                           std::size_t block) { detail::all_to_all_mesh(c, in, out, block, true); };
      CHECK(check_all_to_all(Topology::mesh(rows, cols, hypercomm::Wrap::none), Links::strict, open,
                             count) ==
            doctest::Approx((2 + 0.5 * m * rows * cols) * (rows + cols - 2)).epsilon(1e-12));
    }
  }
  // Pairwise exchange over E-cube routes: step i crosses popcount(i) links, + th per hop.
  // hypercube:3, th = 0.25: sum of popcount(1..7) = 12.
  const double m = 8.0 * 7;
  CHECK(check_all_to_all(Topology::hypercube(3), Links::routed, detail::all_to_all_pairwise, 7,
                         {.ts = 1.0, .tw = 0.5, .th = 0.25}) ==
        doctest::Approx((1 + 0.5 * m) * 7 + 0.25 * 12).epsilon(1e-12));
}

TEST_CASE("circular_shift algorithms directly: data and model time") {
  const auto check = [](const Topology& t, Links links, auto fn, std::size_t count, int shift,
                        double steps) {
    const int p = t.size();
    INFO(hctest::describe(t, count), " links=", name_of(links), " shift=", shift);
    Machine m(t, options_for(links, kModel));
    double model_time = -1;
    const auto got = run_shift(
        m, count,
        [&](Proc& vp, std::span<const std::uint64_t> in, std::span<std::uint64_t> out) {
          fn(comm_of(vp), std::as_bytes(in), std::as_writable_bytes(out), modulo(shift, p));
        },
        &model_time);
    CHECK(shift_error(got, count, shift) == "");
    const double msg = 8.0 * static_cast<double>(count);
    CHECK(model_time == doctest::Approx((1 + 0.5 * msg) * steps).epsilon(1e-12));
  };
  for (std::size_t count : {0, 7}) {
    for (int d = 1; d <= 4; ++d) {
      const int p = 1 << d;
      for (int q = 0; q < p; ++q) {
        // Strict: store-and-forward over the dimensions from the lowest set bit of q up.
        const double stages = q == 0 ? 0 : d - std::countr_zero(static_cast<unsigned>(q));
        check(Topology::hypercube(d), Links::strict, detail::circular_shift_hypercube, count, q,
              stages);
        // Routed: one E-cube-routed message (th = 0).
        check(Topology::hypercube(d), Links::routed, detail::circular_shift_e_cube, count, q,
              q == 0 ? 0 : 1);
      }
    }
    for (int p = 2; p <= 9; ++p)
      for (int q = 0; q < p; ++q)
        check(Topology::ring(p), Links::strict, detail::circular_shift_ring, count, q,
              ring_steps(q, p));
    for (auto [rows, cols] :
         {std::pair{1, 4}, {4, 1}, {2, 2}, {2, 3}, {3, 2}, {3, 3}, {3, 4}, {4, 4}, {5, 2}}) {
      const int p = rows * cols;
      for (int q = 0; q < p; ++q)
        check(Topology::mesh(rows, cols), Links::strict, detail::circular_shift_mesh, count, q,
              mesh_shift_steps(q, rows, cols));
    }
  }
  // The large-message fast paths (last step straight into out) on a few cases.
  check(Topology::hypercube(3), Links::strict, detail::circular_shift_hypercube, 1000, 3, 3);
  check(Topology::ring(7), Links::strict, detail::circular_shift_ring, 1000, 4, 3);
  check(Topology::mesh(3, 4), Links::strict, detail::circular_shift_mesh, 1000, 7,
        mesh_shift_steps(7, 3, 4));
}

TEST_CASE("circular_shift_mesh: the worked example of its header") {
  // 3 x 4, q = 6: rows shift by 2, columns 0-1 by 2 (one step the other way), 2-3 by 1.
  CHECK(mesh_shift_steps(6, 3, 4) == 3);
}

TEST_CASE("barrier algorithms directly: correctness and model time") {
  const auto check = [](const Topology& t, Links links, void (*fn)(const detail::Comm&),
                        double rounds) {
    INFO(t.name(), " links=", name_of(links));
    Machine m(t, options_for(links, kModel));
    CHECK(barrier_violations(
              m, 12, [fn](Proc& vp) { fn(comm_of(vp)); }, true) == 0);
    // One barrier alone: ts per round.
    const double model_time = m.run([fn](Proc& vp) { fn(comm_of(vp)); }).model_time;
    CHECK(model_time == doctest::Approx(rounds).epsilon(1e-12));
  };
  for (int d = 1; d <= 5; ++d) {
    check(Topology::hypercube(d), Links::strict, detail::barrier_hypercube, d);
    check(Topology::ring(1 << d), Links::routed, detail::barrier_hypercube, d);
  }
  for (int p = 2; p <= 12; ++p) {
    check(Topology::ring(p), Links::routed, detail::barrier_dissemination, std::ceil(std::log2(p)));
    check(Topology::ring(p), Links::strict, detail::barrier_ring, p - 1);
  }
  check(Topology::mesh(3, 3), Links::routed, detail::barrier_dissemination, 4);
  for (auto [rows, cols] : {std::pair{1, 3}, {3, 1}, {2, 2}, {2, 3}, {3, 3}, {4, 4}, {2, 5}})
    check(
        Topology::mesh(rows, cols), Links::strict,
        [](const detail::Comm& c) { detail::barrier_mesh(c, detail::Grid::of(c.topology())); },
        rows + cols - 2);
  // The torus embedded in a hypercube by the Gray code: 2^floor(d/2) x 2^ceil(d/2).
  for (int d = 2; d <= 5; ++d)
    check(
        Topology::hypercube(d), Links::strict,
        [](const detail::Comm& c) { detail::barrier_mesh(c, detail::Grid::gray_code(c.p())); },
        (1 << (d / 2)) + (1 << (d - d / 2)) - 2);
}
