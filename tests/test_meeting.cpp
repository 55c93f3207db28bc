// Port::meet (runtime/port/port.hpp): when VPs outnumber cores, a barrier or a small hypercube
// all_reduce, scan, exscan, all_gather, reduce_scatter or all_to_all, an all_to_allv of
// the pairwise exchange, a hypercube gatherv, scatterv or all_gatherv, or a ring's collective
// on a ring of the whole group, runs as one meeting in shared memory. It must be indistinguishable
// from the rounds of messages it stands in for: the same results bit for bit, the same model
// clocks, message and byte counts and link traffic, and the same errors, never a hang. A machine
// that records operations (Options::record) always sends the messages, so every case runs on two
// machines, recorded (messages) and not (a meeting, where VPs outnumber cores), and the two must
// agree.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "meeting_support.hpp"

namespace hc = hypercomm;
using hctest::check_same;
using hctest::kSanitized;
using hctest::meets;
using hctest::mismatch_text;
using hctest::model_options;
using hctest::test_options;
using hctest::tricky;

namespace {

// gatherv, scatterv (root `root`) and all_gatherv of count(i) elements from or to rank i,
// VP me's k-th value tricky(seed, k): what each gives this VP, one after the other.
template <class Count>
std::vector<double> gather_scatter_v(hc::Proc& vp, Count count, int root, int seed) {
  std::vector<std::size_t> counts;
  for (int i = 0; i < vp.size(); ++i) counts.push_back(count(i));
  const std::size_t mine = counts[static_cast<std::size_t>(vp.id())];
  const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  std::vector<double> x(std::max(mine, total)), gathered(total, -7.0), all(total, -7.0),
      scattered(mine, -7.0);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = tricky(seed, k);
  const std::span<const double> own = std::span<const double>(x).first(mine);
  hc::gatherv(vp, own, std::span<double>(gathered), counts, root);
  hc::scatterv(vp, std::span<const double>(x).first(vp.id() == root ? total : 0),
               std::span<double>(scattered), counts, root);
  hc::all_gatherv(vp, own, std::span<double>(all), counts);
  std::vector<double> y = vp.id() == root ? gathered : std::vector<double>{};
  y.insert(y.end(), scattered.begin(), scattered.end());
  y.insert(y.end(), all.begin(), all.end());
  return y;
}

// An all_to_allv of count(from, to) elements from rank from to rank to, VP me's k-th value
// tricky(seed, k): what this VP receives.
template <class Count>
std::vector<double> exchange_v(hc::Proc& vp, Count count, int seed) {
  std::vector<std::size_t> send_counts, recv_counts;
  for (int j = 0; j < vp.size(); ++j) {
    send_counts.push_back(count(vp.id(), j));
    recv_counts.push_back(count(j, vp.id()));
  }
  std::vector<double> x(std::accumulate(send_counts.begin(), send_counts.end(), std::size_t{0}));
  std::vector<double> y(std::accumulate(recv_counts.begin(), recv_counts.end(), std::size_t{0}),
                        -7.0);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = tricky(seed, k);
  hc::all_to_allv(vp, std::span<const double>(x), send_counts, std::span<double>(y), recv_counts);
  return y;
}

// Runs body(vp, keep) on t twice, meeting where VPs outnumber cores and recorded (messages),
// checks that the two agree, and returns the first.
template <class Body>
hctest::MeetingResults meeting_as_messages(const hc::Topology& t, Body body,
                                           hc::Options o = model_options()) {
  hctest::MeetingResults meeting = hctest::run_keeping(t, o, body);
  o.record = true;
  check_same(hctest::run_keeping(t, o, body), meeting);
  return meeting;
}

// Uneven clocks, then barriers and all-reduces of every path: a few bytes, the largest a
// meeting takes (4 KiB), one more element (messages), in place, non-commutative.
hctest::MeetingResults run_mix(const hc::Topology& t, hc::Options o) {
  const int p = t.size();
  return hctest::run_keeping(t, o, [&](hc::Proc& vp, auto& keep) {
    const int me = vp.id();
    // Point-to-point messages of VP-dependent sizes first: every clock differs.
    // (Neighbours, so that Links::strict allows them: along the row, or across dimension 0.)
    const bool cube = t.kind() == hc::Topology::Kind::hypercube;
    const int row = t.row_of(me), col = t.col_of(me);
    const int right = cube ? me ^ 1 : t.id_at(row, col + 1);
    const int left = cube ? me ^ 1 : t.id_at(row, col - 1);
    std::vector<char> out(static_cast<std::size_t>(me % 5) * 24 + 8, 'x');
    std::vector<char> in(static_cast<std::size_t>(left % 5) * 24 + 8);
    if (p > 1) vp.sendrecv(right, out, left, in);
    hc::barrier(vp);
    for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{512}, std::size_t{513}}) {
      std::vector<double> x(n), y(n);
      for (std::size_t k = 0; k < n; ++k) x[k] = tricky(me, k);
      hc::all_reduce(vp, std::span<const double>(x), std::span<double>(y), std::plus<>());
      keep(y);
      hc::all_reduce(vp, std::span<const double>(x), std::span<double>(x), std::plus<>());
      keep(x);  // in place
    }
    std::vector<hctest::Mat> m(5), mout(5);
    for (std::size_t k = 0; k < m.size(); ++k) m[k] = hctest::mat_of(me, k);
    hc::all_reduce(vp, std::span<const hctest::Mat>(m), std::span<hctest::Mat>(mout),
                   hctest::MatMul{});
    keep(mout);
    hc::barrier(vp);
    keep(std::vector<long>{hc::all_reduce(vp, long{me}, std::plus<>())});
    // Prefix sums: a meeting on a hypercube (every VP its own result), messages elsewhere.
    for (std::size_t n : {std::size_t{1}, std::size_t{512}, std::size_t{513}}) {
      std::vector<double> x(n), y(n, -7.0);
      for (std::size_t k = 0; k < n; ++k) x[k] = tricky(me, k);
      hc::scan(vp, std::span<const double>(x), std::span<double>(y), std::plus<>());
      keep(y);
      std::fill(y.begin(), y.end(), -7.0);
      hc::exscan(vp, std::span<const double>(x), std::span<double>(y), std::plus<>());
      keep(y);  // VP 0's untouched
      hc::scan(vp, std::span<const double>(x), std::span<double>(x), std::plus<>());
      keep(x);  // in place
    }
    hc::scan(vp, std::span<const hctest::Mat>(m), std::span<hctest::Mat>(mout), hctest::MatMul{});
    keep(mout);
    hc::exscan(vp, std::span<const hctest::Mat>(m), std::span<hctest::Mat>(mout), hctest::MatMul{});
    keep(mout);
    // All-gathers, all-to-alls and reduce-scatters: a meeting on a hypercube up to 4 KiB of
    // a VP's p blocks, messages beyond and elsewhere.
    const std::size_t widest = std::max<std::size_t>(1, 4096 / (sizeof(double) * p));
    for (std::size_t n : {std::size_t{1}, widest, widest + 1}) {
      std::vector<double> x(n * static_cast<std::size_t>(p)), y(x.size(), -7.0);
      for (std::size_t k = 0; k < x.size(); ++k) x[k] = tricky(me, k);
      hc::all_gather(vp, std::span<const double>(x).first(n), std::span<double>(y));
      keep(y);
      hc::all_to_all(vp, std::span<const double>(x), std::span<double>(y));
      keep(y);
      hc::all_to_all(vp, std::span<const double>(x), std::span<double>(x));  // in place
      keep(x);
      std::vector<double> z(n, -7.0);
      hc::reduce_scatter(vp, std::span<const double>(y), std::span<double>(z), std::plus<>());
      keep(z);  // the sums' bits show the order of the additions
      hc::reduce_scatter(vp, std::span<const double>(y),
                         std::span<double>(y).subspan(static_cast<std::size_t>(me) * n, n),
                         std::plus<>());
      keep(y);  // in place: out is in's own block
    }
    {  // non-commutative: the order-preserving form's tree
      std::vector<hctest::Mat> blocks(static_cast<std::size_t>(p) * 2), mine(2);
      for (std::size_t k = 0; k < blocks.size(); ++k) blocks[k] = hctest::mat_of(me, k);
      hc::reduce_scatter(vp, std::span<const hctest::Mat>(blocks), std::span<hctest::Mat>(mine),
                         hctest::MatMul{});
      keep(mine);
    }
    keep(hc::all_gather(vp, long{me}));
    // all_to_allv, blocks of every size (none included): the pairwise exchange meets wherever
    // VPs outnumber cores (its last arriver moves every block), messages elsewhere.
    for (std::size_t scale : {std::size_t{1}, std::size_t{37}})
      keep(exchange_v(
          vp,
          [scale](int from, int to) {
            return static_cast<std::size_t>((3 * from + 5 * to) % 4) * scale;
          },
          me));
    // gatherv, scatterv and all_gatherv, blocks of every size (none included): a meeting on a
    // hypercube wherever VPs outnumber cores (its last arriver moves every block), messages
    // elsewhere.
    for (std::size_t scale : {std::size_t{1}, std::size_t{37}})
      for (int root : {0, p - 1})
        keep(gather_scatter_v(
            vp, [scale](int i) { return static_cast<std::size_t>((3 * i + 1) % 4) * scale; }, root,
            me + root));
    if (cube) {  // a reduce-scatter or all-gather as a phase of a two-phase call: messages
      std::vector<double> x(static_cast<std::size_t>(p) * 2), y(x.size());
      for (std::size_t k = 0; k < x.size(); ++k) x[k] = tricky(me, k);
      hc::all_reduce(vp, std::span<const double>(x), std::span<double>(y), std::plus<>(),
                     hc::Algo::two_phase);
      keep(y);
      hc::reduce(vp, std::span<const double>(x), std::span<double>(y), std::plus<>(), p - 1,
                 hc::Algo::two_phase);
      if (me == p - 1) keep(y);
      hc::broadcast(vp, std::span<double>(x), 0, hc::Algo::two_phase);
      keep(x);
    }
    keep(std::vector<long>{hc::scan(vp, long{me}, std::plus<>())});
    hc::barrier(vp);
  });
}

}  // namespace

TEST_CASE("a meeting gives the results, clocks, counts and link traffic of its messages") {
  std::vector<hc::Topology> topologies;
  for (int d = 1; d <= 6; ++d) topologies.push_back(hc::Topology::hypercube(d));
  for (int p : {3, 5, 6, 8, 12, 16, 33}) topologies.push_back(hc::Topology::ring(p));
  for (auto [rows, cols] : {std::pair{2, 3}, {4, 4}, {3, 5}, {8, 8}})
    topologies.push_back(hc::Topology::mesh(rows, cols));
  for (const auto& t : topologies) {
    for (hc::Links links : {hc::Links::routed, hc::Links::strict}) {
      CAPTURE(t.name());
      CAPTURE(links == hc::Links::strict);
      hc::Options o = model_options();
      o.links = links;
      const hctest::MeetingResults meeting = run_mix(t, o);
      o.record = true;
      const hctest::MeetingResults messages = run_mix(t, o);
      check_same(messages, meeting);
      // And the results are the book's: the sum over every VP, the matrix product in id order.
      const int p = t.size();
      const auto& last = meeting.per_vp.back();
      long total = 0;
      std::memcpy(&total, last.data() + last.size() - sizeof(long), sizeof(long));
      CHECK(total == static_cast<long>(p) * (p - 1) / 2);  // VP p-1's scan: every VP's id
    }
  }
}

TEST_CASE("an all_to_allv too large for one VP to move meets, each VP copying its own blocks") {
  // Past 1 MiB in all the pairwise exchange's meeting does not move every block on its last
  // arriver: each VP copies those it receives from the senders' ins, and no VP leaves (and
  // reuses its in) before all have. The results, clocks and counts stay the messages'.
  for (const auto& t : {hc::Topology::hypercube(3), hc::Topology::ring(5)}) {
    CAPTURE(t.name());
    const auto body = [](hc::Proc& vp, auto& keep) {
      const auto count = [](int from, int to) {
        return static_cast<std::size_t>(4096 * ((from + 2 * to) % 5));  // 0 to 128 KiB
      };
      for (int call = 0; call < 3; ++call) keep(exchange_v(vp, count, vp.id() + call));
    };
    const hctest::MeetingResults meeting = meeting_as_messages(t, body);
    // And the blocks are their senders': VP 1's first comes from VP 0, whose in begins with
    // it (VP 0's block for itself is empty).
    double value = 0;
    std::memcpy(&value, meeting.per_vp[1].data(), sizeof value);
    CHECK(value == tricky(0, 0));
  }
}

TEST_CASE("gathers, scatters and all-to-alls too large for one VP to move meet, each VP its own") {
  // With a block past 256 B a gatherv or scatterv meets by reference (each VP copies its block
  // straight from or into the root's buffer; the root leaves when all have), and past 32 KiB in
  // all (its blocks times p - 1) the last VP to arrive at an all_gatherv's meeting does not move
  // every block (each VP copies those it lacks from the others' buffers, and no VP leaves
  // before all have), nor at an all_to_all's past 4 KiB a VP. The results, clocks and counts
  // stay the messages'.
  for (const auto& t : {hc::Topology::hypercube(3), hc::Topology::hypercube(4)}) {
    CAPTURE(t.name());
    const auto body = [](hc::Proc& vp, auto& keep) {
      const auto count = [](int i) { return static_cast<std::size_t>(1024 * ((i + 2) % 5)); };
      for (int call = 0; call < 3; ++call)
        keep(gather_scatter_v(vp, count, call % vp.size(), vp.id() + call));
      // An all_to_all of 8 KiB blocks (Algorithm 4.10's or the dimension exchange's meeting):
      // each VP copies the blocks it receives from the senders' ins.
      const std::size_t n = 1024 * static_cast<std::size_t>(vp.size());
      std::vector<double> x(n), y(n, -7.0);
      for (std::size_t k = 0; k < n; ++k) x[k] = tricky(vp.id(), k);
      hc::all_to_all(vp, std::span<const double>(x), std::span<double>(y));
      keep(y);
      hc::all_to_all(vp, std::span<const double>(x), std::span<double>(x), hc::Algo::hypercube);
      keep(x);  // in place
    };
    const hctest::MeetingResults meeting = meeting_as_messages(t, body);
    // And the blocks are their owners': the root's gathered buffer begins with VP 0's block.
    double value = 0;
    std::memcpy(&value, meeting.per_vp[0].data(), sizeof value);
    CHECK(value == tricky(0, 0));
  }
}

namespace {

// The Heisenberg group's product on integer triples: associative, not commutative, exact, a
// 24-byte element (shares of whole cache lines hold 8 of them), and it cannot throw.
struct Triple {
  long a, b, c;
  bool operator==(const Triple&) const = default;
};
struct HeisenbergProduct {
  Triple operator()(const Triple& x, const Triple& y) const noexcept {
    return {x.a + y.a, x.b + y.b + x.a * y.c, x.c + y.c};
  }
};
// The same product, but an operator that may throw (not noexcept): it sends the messages.
struct MayThrowProduct {
  Triple operator()(const Triple& x, const Triple& y) const { return HeisenbergProduct{}(x, y); }
};
Triple triple_of(int vp, std::size_t k) {
  return {vp + static_cast<long>(k % 7), 2 * vp - static_cast<long>(k % 5), (vp * 3 + 1) % 4 + 1};
}
// Element k of the left fold over VPs 0 .. n-1 of their triple_of inputs.
Triple left_fold(int n, std::size_t k) {
  Triple fold = triple_of(0, k);
  for (int j = 1; j < n; ++j) fold = HeisenbergProduct{}(fold, triple_of(j, k));
  return fold;
}
// How many elements of y and z differ from the left fold over VPs 0 .. n-1 (exact integers).
long off_left_fold(const std::vector<Triple>& y, const std::vector<Triple>& z, int n) {
  long wrong = 0;
  for (std::size_t k = 0; k < y.size(); ++k) {
    const Triple fold = left_fold(n, k);
    wrong += !(y[k] == fold) + !(z[k] == fold);
  }
  return wrong;
}

// All-reduces of Triples (5, and 700: past 4 KiB) by algorithm `a` over g, with the product that
// cannot throw and the one that may: both must be the left fold over VPs 0 .. size-1 (g is the
// world, or a group whose ranks are the ids); keeps the first.
template <class G, class Keep>
void all_reduce_left_folds(G& g, int me, int size, hc::Algo a, Keep& keep) {
  for (std::size_t count : {std::size_t{5}, std::size_t{700}}) {
    std::vector<Triple> x(count), y(count), z(count);
    for (std::size_t k = 0; k < count; ++k) x[k] = triple_of(me, k);
    hc::all_reduce(g, std::span<const Triple>(x), std::span<Triple>(y), HeisenbergProduct{}, a);
    hc::all_reduce(g, std::span<const Triple>(x), std::span<Triple>(z), MayThrowProduct{}, a);
    CHECK(off_left_fold(y, z, size) == 0);
    keep(y);
  }
}

// An all-reduce by algorithm `a` over g of n longs, member r's k-th seed * 1000 + 7r + k: how many
// elements of the result differ from the exact sum.
long off_integer_sum(const hc::Group& g, int seed, std::size_t n, hc::Algo a) {
  std::vector<long> i(n), j(n, -1);
  for (std::size_t k = 0; k < n; ++k) i[k] = seed * 1000 + g.rank() * 7 + static_cast<long>(k);
  hc::all_reduce(g, std::span<const long>(i), std::span<long>(j), std::plus<>(), a);
  long expected = 0;
  for (int r = 0; r < g.size(); ++r) expected += seed * 1000 + r * 7;
  long wrong = 0;
  for (std::size_t k = 0; k < n; ++k) wrong += j[k] != expected + g.size() * static_cast<long>(k);
  return wrong;
}

}  // namespace

TEST_CASE("a scan too large for one VP to fold meets, each VP folding its share of every result") {
  // Past 4 KiB a VP, with an operator that cannot throw, the pipeline's scan (VP i passes the
  // fold of 0..i to i + 1) meets in shared memory where VPs outnumber cores: each VP folds its
  // share of the elements for every VP, straight from the ins into the outs. Its results are
  // the pipeline's bit for bit (doubles whose sums depend on the order), its clocks, counts and
  // link traffic the messages'; in place, exclusive, shares of lines (24-byte elements), of
  // nothing (fewer lines than VPs), a group's.
  std::vector<hc::Topology> topologies{hc::Topology::hypercube(1), hc::Topology::hypercube(3),
                                       hc::Topology::hypercube(4), hc::Topology::ring(3),
                                       hc::Topology::ring(7),      hc::Topology::mesh(4, 4)};
  for (const auto& t : topologies) {
    CAPTURE(t.name());
    const auto body = [&t](hc::Proc& vp, auto& keep) {
      for (std::size_t n :
           {std::size_t{513}, std::size_t{1000}, std::size_t{8192}, std::size_t{70001}}) {
        std::vector<double> x(n), y(n, -7.0), z(n, -7.0);
        for (std::size_t k = 0; k < n; ++k) x[k] = tricky(vp.id(), k);
        hc::scan(vp, std::span<const double>(x), std::span<double>(y), std::plus<>());
        keep(y);
        hc::exscan(vp, std::span<const double>(x), std::span<double>(z), std::plus<>());
        keep(z);
        hc::scan(vp, std::span<const double>(x), std::span<double>(x), std::plus<>());
        keep(x);  // in place
        for (std::size_t k = 0; k < n; ++k) x[k] = tricky(vp.id() + 1, k);
        hc::exscan(vp, std::span<const double>(x), std::span<double>(x), std::plus<>());
        keep(x);  // in place, exclusive
      }
      for (std::size_t n : {std::size_t{171}, std::size_t{3001}}) {
        std::vector<Triple> x(n), y(n), z(n), want(n), below(n);
        for (std::size_t k = 0; k < n; ++k) x[k] = triple_of(vp.id(), k);
        hc::scan(vp, std::span<const Triple>(x), std::span<Triple>(y), HeisenbergProduct{});
        hc::scan(vp, std::span<const Triple>(x), std::span<Triple>(z), MayThrowProduct{});
        // The left fold over ids 0..me, whatever the algorithm (exact integers).
        CHECK(off_left_fold(y, z, vp.id() + 1) == 0);
        keep(y);
        hc::exscan(vp, std::span<const Triple>(x), std::span<Triple>(x), HeisenbergProduct{});
        keep(x);
      }
      if (t.kind() == hc::Topology::Kind::mesh) {
        for (const hc::Group& g : {vp.row(), vp.column()}) {
          std::vector<double> x(6000), y(6000, -7.0);
          for (std::size_t k = 0; k < x.size(); ++k) x[k] = tricky(vp.id(), k);
          hc::scan(g, std::span<const double>(x), std::span<double>(y), std::plus<>());
          keep(y);
        }
      }
    };
    (void)meeting_as_messages(t, body);
  }
}

TEST_CASE("a reduce of 32 KiB or more meets, each VP folding its share into the root's out") {
  // From 32 KiB a VP, with an operator that cannot throw, the hypercube reduce meets in shared
  // memory where VPs outnumber cores: each VP folds its share of the elements of every VP's
  // input, in the tree of aligned blocks that the rounds fold (lower ids on the left), straight
  // into the root's out. Results bit for bit, clocks, counts and link traffic: the messages'.
  for (const auto& t : {hc::Topology::hypercube(1), hc::Topology::hypercube(2),
                        hc::Topology::hypercube(3), hc::Topology::hypercube(4)}) {
    CAPTURE(t.name());
    const int p = t.size();
    const auto body = [p](hc::Proc& vp, auto& keep) {
      for (int root : {0, p - 1, p / 2 + 1 < p ? p / 2 + 1 : 0}) {
        for (std::size_t n : {std::size_t{4096}, std::size_t{8193}, std::size_t{70001}}) {
          std::vector<double> x(n), y(vp.id() == root ? n : 0, -7.0);
          for (std::size_t k = 0; k < n; ++k) x[k] = tricky(vp.id() + root, k);
          hc::reduce(vp, std::span<const double>(x), std::span<double>(y), std::plus<>(), root);
          keep(y);
          if (vp.id() == root) {  // in place at the root
            hc::reduce(vp, std::span<const double>(x), std::span<double>(x), std::plus<>(), root);
            keep(x);
          } else {
            hc::reduce(vp, std::span<const double>(x), std::span<double>(), std::plus<>(), root);
          }
        }
        for (std::size_t n : {std::size_t{1366}, std::size_t{3001}}) {  // 32 784 B, 72 024 B
          std::vector<Triple> x(n), y(vp.id() == root ? n : 0), z(y.size());
          for (std::size_t k = 0; k < n; ++k) x[k] = triple_of(vp.id(), k);
          hc::reduce(vp, std::span<const Triple>(x), std::span<Triple>(y), HeisenbergProduct{},
                     root);
          hc::reduce(vp, std::span<const Triple>(x), std::span<Triple>(z), MayThrowProduct{}, root);
          CHECK(off_left_fold(y, z, vp.size()) == 0);  // the left fold over ids 0..p-1
          keep(y);
        }
      }
    };
    (void)meeting_as_messages(t, body);
  }
}

TEST_CASE("an all_reduce of 8 KiB or more meets in two_phase, each VP writing its share to all") {
  // From 8 KiB a VP, in equal blocks or with a commutative operator, and with an operator that
  // cannot throw, the hypercube pair of two_phase (reduce-scatter, then all-gather) meets in
  // shared memory where VPs outnumber cores: each VP folds its share of the elements of every
  // VP's input in the reduce-scatter's tree (bit-reversed ids for a commutative operator, ids in
  // order otherwise) and writes it into every VP's out. Results bit for bit, clocks, counts and
  // link traffic: the pair's messages' (on a ring or mesh of 2^d VPs, Links::routed, the pair's
  // rounds are routed: their hops).
  for (const auto& t :
       {hc::Topology::hypercube(1), hc::Topology::hypercube(2), hc::Topology::hypercube(3),
        hc::Topology::hypercube(4), hc::Topology::ring(8), hc::Topology::mesh(2, 4)}) {
    CAPTURE(t.name());
    const int p = t.size();
    const auto body = [p](hc::Proc& vp, auto& keep) {
      // 8 KiB and 64 KiB of equal blocks; one element more (uneven blocks at every p, whose
      // rounds send aligned ranges of blocks of two sizes) and 9000 (uneven at 16 VPs).
      for (std::size_t n :
           {std::size_t{1024}, std::size_t{8192}, std::size_t{8192 + 1}, std::size_t{1000 * 9}}) {
        std::vector<double> x(n), y(n, -7.0);
        for (std::size_t k = 0; k < n; ++k) x[k] = tricky(vp.id(), k);
        hc::all_reduce(vp, std::span<const double>(x), std::span<double>(y), std::plus<>(),
                       hc::Algo::two_phase);
        keep(y);  // the sums' bits show the order of the additions
        hc::all_reduce(vp, std::span<const double>(x), std::span<double>(y), std::plus<>());
        keep(y);
        hc::all_reduce(vp, std::span<double>(x), std::plus<>());  // in place
        keep(x);
      }
      if (vp.topology().kind() == hc::Topology::Kind::hypercube) {
        // VPs 0..p/2-1 and the others, each half its own subcube (a group's meeting)
        const hc::Group half = vp.subcube(p > 2 ? (p - 1) >> 1 : 0);
        std::vector<double> x(2048), y(x.size());
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = tricky(vp.id() + 7, k);
        hc::all_reduce(half, std::span<const double>(x), std::span<double>(y), std::plus<>(),
                       hc::Algo::two_phase);
        keep(y);
      }
      // p equal blocks of 24 B elements, 8 KiB+ and 64 KiB+ (a meeting); uneven (the messages).
      const std::size_t n = static_cast<std::size_t>(p) * 171;
      for (std::size_t count : {n * 2, n * 16, n * 16 + 1}) {
        std::vector<Triple> x(count), y(x.size()), z(x.size());
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = triple_of(vp.id(), k);
        hc::all_reduce(vp, std::span<const Triple>(x), std::span<Triple>(y), HeisenbergProduct{},
                       hc::Algo::two_phase);
        hc::all_reduce(vp, std::span<const Triple>(x), std::span<Triple>(z), MayThrowProduct{},
                       hc::Algo::two_phase);
        CHECK(off_left_fold(y, z, vp.size()) == 0);  // the left fold over ids 0..p-1
        keep(y);
      }
    };
    (void)meeting_as_messages(t, body);
  }
}

TEST_CASE("an all_gather on a ring of the whole group meets, its n - 1 steps on the clocks") {
  // Where VPs outnumber cores, Algorithm 4.4's all_gather and all_gatherv on a ring of the whole
  // group (a ring's, a split group's or a mesh row's; in Gray-code order on a hypercube) meet,
  // and so does the ring's all_to_all (section 4.5.1):
  // the last to arrive copies every block up to 32 KiB in all, else each VP copies the blocks it
  // lacks. Results, clocks, counts and link traffic: the steps' messages (uneven blocks, empty
  // ones included: each step sends the block that came in the one before).
  for (const auto& t :
       {hc::Topology::ring(3), hc::Topology::ring(5), hc::Topology::ring(6), hc::Topology::ring(12),
        hc::Topology::hypercube(3), hc::Topology::mesh(3, 4)}) {
    CAPTURE(t.name());
    const auto gathers = [](const hc::Group& g, int seed, auto& keep) {
      const int n = g.size(), me = g.rank();
      for (std::size_t m :
           {std::size_t{1}, std::size_t{100}, std::size_t{1000}, std::size_t{8192}}) {
        std::vector<double> x(m), y(m * static_cast<std::size_t>(n), -7.0);
        for (std::size_t k = 0; k < m; ++k) x[k] = tricky(seed + me, k);
        hc::all_gather(g, std::span<const double>(x), std::span<double>(y));
        long wrong = 0;  // block r is rank r's input
        for (std::size_t k = 0; k < y.size(); ++k)
          wrong += y[k] != tricky(seed + static_cast<int>(k / m), k % m);
        CHECK(wrong == 0);
        keep(y);
      }
      for (std::size_t scale : {std::size_t{1}, std::size_t{37}, std::size_t{1500}}) {
        std::vector<std::size_t> counts;
        for (int r = 0; r < n; ++r)
          counts.push_back(static_cast<std::size_t>((3 * r + 1) % 4) * scale);
        std::vector<double> x(counts[static_cast<std::size_t>(me)]);
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = tricky(seed + me, k);
        std::vector<double> y(std::accumulate(counts.begin(), counts.end(), std::size_t{0}), -7.0);
        hc::all_gatherv(g, std::span<const double>(x), std::span<double>(y), counts);
        keep(y);
        keep(hc::all_gatherv(g, std::span<const double>(x)));  // counts found first
      }
      // The ring's all_to_all (section 4.5.1: p - i blocks to the right in step i), in place too.
      for (std::size_t m : {std::size_t{1}, std::size_t{100}, std::size_t{1000}}) {
        std::vector<double> x(m * static_cast<std::size_t>(n)), y(x.size(), -7.0);
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = tricky(seed + me, k);
        hc::all_to_all(g, std::span<const double>(x), std::span<double>(y), hc::Algo::ring);
        long wrong = 0;  // block r is block `me` of rank r's input
        for (std::size_t k = 0; k < y.size(); ++k)
          wrong += y[k] !=
                   tricky(seed + static_cast<int>(k / m), static_cast<std::size_t>(me) * m + k % m);
        CHECK(wrong == 0);
        keep(y);
        hc::all_to_all(g, std::span<const double>(x), std::span<double>(x), hc::Algo::ring);
        keep(x);
      }
    };
    const auto body = [&](hc::Proc& vp, auto& keep) {
      if (vp.topology().kind() == hc::Topology::Kind::hypercube) {
        std::vector<double> x(3000), y(x.size() * static_cast<std::size_t>(vp.size()));
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = tricky(vp.id(), k);
        hc::all_gather(vp, std::span<const double>(x), std::span<double>(y), hc::Algo::ring);
        keep(y);  // the Gray-code ring
        hc::all_gather(vp, std::span<const double>(x).first(10), std::span<double>(y).first(80),
                       hc::Algo::ring);
        keep(y);
        return;  // (a split group's ring under Links::strict: AlgorithmError)
      }
      if (vp.topology().kind() == hc::Topology::Kind::mesh)
        gathers(vp.row(), 1, keep);
      else
        gathers(vp.world(), 0, keep);
      // Ranks not in id order: keys that reverse them.
      gathers(hc::split(vp.world(), vp.id() % 2, -vp.id()), 2, keep);
    };
    hc::Options o = model_options();
    // On a hypercube Algo::ring in id order is routed; under Links::strict the Gray-code ring
    // runs, every message one link.
    if (t.kind() == hc::Topology::Kind::hypercube) o.links = hc::Links::strict;
    (void)meeting_as_messages(t, body, o);
  }
}

TEST_CASE("an all_reduce or reduce_scatter on a ring of any p meets, folding in the ring's order") {
  // Where VPs outnumber cores, the ring pair (Algorithm 4.5, then 4.4: all_reduce's ring card,
  // and two_phase's ring family, what automatic runs on a ring of p not a power of two), with a
  // commutative operator that cannot throw, meets: block j folded x_j + (x_(j+1) + (... +
  // x_(j-1))) as its partial travels left, by the last VP to arrive up to 4 KiB, beyond by each
  // VP its own block into every out. Results bit for bit, clocks, counts and link traffic: the
  // pair's 2(p - 1) steps (uneven blocks and empty ones included). The reduce-scatter alone (its
  // ring card; reduce_scatterv's ring, what automatic runs on these rings) meets alike, its
  // p - 1 steps. A non-commutative operator or one that may throw sends the messages.
  for (const auto& t :
       {hc::Topology::ring(2), hc::Topology::ring(3), hc::Topology::ring(5), hc::Topology::ring(6),
        hc::Topology::ring(12), hc::Topology::hypercube(3)}) {
    CAPTURE(t.name());
    const auto reduces = [](const hc::Group& g, int seed, auto& keep) {
      const int me = g.rank();
      for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{511}, std::size_t{512},
                            std::size_t{513}, std::size_t{8192}, std::size_t{8192 + 5}}) {
        std::vector<double> x(n), y(n, -7.0);
        for (std::size_t k = 0; k < n; ++k) x[k] = tricky(seed + me, k);
        for (hc::Algo a : {hc::Algo::automatic, hc::Algo::ring, hc::Algo::two_phase}) {
          if (g.topology().kind() == hc::Topology::Kind::hypercube && a != hc::Algo::ring)
            continue;  // (the hypercube's own pair)
          hc::all_reduce(g, std::span<const double>(x), std::span<double>(y), std::plus<>(), a);
          keep(y);  // the sums' bits show the order of the additions
        }
        std::vector<double> z = x;
        hc::all_reduce(g, std::span<double>(z), std::plus<>());  // in place
        keep(z);
        z = x;
        hc::all_reduce(g, std::span<const double>(z), std::span<double>(z), std::plus<>(),
                       hc::Algo::ring);  // in is out
        keep(z);
        CHECK(off_integer_sum(g, seed, n, hc::Algo::ring) == 0);
      }
      // The reduce-scatter alone (Algorithm 4.5, its first half): equal blocks in all up to 4 KiB
      // and past it, uneven ones (reduce_scatterv, an empty block among them).
      const auto n_members = static_cast<std::size_t>(g.size());
      for (std::size_t block : {std::size_t{1}, std::size_t{40}, std::size_t{700}}) {
        std::vector<double> x(block * n_members), y(block, -7.0);
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = tricky(seed + me, k);
        hc::reduce_scatter(g, std::span<const double>(x), std::span<double>(y), std::plus<>(),
                           hc::Algo::ring);
        keep(y);
        std::vector<long> i(x.size()), j(block, -1);
        for (std::size_t k = 0; k < i.size(); ++k) i[k] = me * 3 + static_cast<long>(k);
        hc::reduce_scatter(g, std::span<const long>(i), std::span<long>(j), std::plus<>(),
                           hc::Algo::ring);
        long wrong = 0;
        for (std::size_t k = 0; k < block; ++k)
          wrong +=
              j[k] != 3L * g.size() * (g.size() - 1) / 2 +
                          g.size() * static_cast<long>(static_cast<std::size_t>(me) * block + k);
        CHECK(wrong == 0);
      }
      for (std::size_t scale : {std::size_t{1}, std::size_t{300}}) {
        std::vector<std::size_t> counts(n_members);
        for (std::size_t r = 0; r < n_members; ++r) counts[r] = (r * 7 + 3) % 5 * scale;
        std::vector<double> x(std::accumulate(counts.begin(), counts.end(), std::size_t{0}));
        std::vector<double> y(counts[static_cast<std::size_t>(me)], -7.0);
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = tricky(seed + me, k);
        hc::reduce_scatterv(g, std::span<const double>(x), std::span<double>(y), std::plus<>(),
                            std::span<const std::size_t>(counts));
        keep(y);
      }
      // Non-commutative and may-throw: the messages (the left fold over the ranks).
      all_reduce_left_folds(g, me, g.size(), hc::Algo::ring, keep);
    };
    const auto body = [&](hc::Proc& vp, auto& keep) {
      reduces(vp.world(), 0, keep);
      // Groups of every size below p, ranks against id order.
      reduces(hc::split(vp.world(), vp.id() % 3 == 0 ? 0 : 1, -vp.id()), 1, keep);
    };
    (void)meeting_as_messages(t, body);
  }
}

TEST_CASE("an all_reduce on a ring as reduction then broadcast meets, folding as the arms do") {
  // Algo::reduce_broadcast on a ring (the ring's two-way reduction into rank 0, then its two-way
  // broadcast: what automatic runs on a ring of p not a power of two, or under Links::strict,
  // below about 8 KiB) meets up to 4 KiB for any operator: the last VP to arrive folds the
  // inputs as the arms do, x0 . (x1 . ... . xa) . (x(a+1) . ... . x(p-1)), so the sums' bits, a
  // non-commutative left fold and one that may throw come out as the messages give them; past
  // 4 KiB an operator that cannot throw meets with the work shared (each VP folds its share of
  // the elements so), one that may throw sends the messages. Clocks, counts and link traffic: the
  // reduction's floor(p/2) steps, then the broadcast's ceil(p/2).
  for (const auto& t : {hc::Topology::ring(2), hc::Topology::ring(3), hc::Topology::ring(5),
                        hc::Topology::ring(6), hc::Topology::ring(12), hc::Topology::mesh(1, 7)}) {
    CAPTURE(t.name());
    for (const hc::Links links : {hc::Links::routed, hc::Links::strict}) {
      CAPTURE(links == hc::Links::strict);
      hc::Options o = model_options();
      o.links = links;
      const auto reduces = [](const hc::Group& g, int seed, auto& keep) {
        const int me = g.rank();
        for (std::size_t n :
             {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{512}, std::size_t{513}}) {
          std::vector<double> x(n), y(n, -7.0);
          for (std::size_t k = 0; k < n; ++k) x[k] = tricky(seed + me, k);
          hc::all_reduce(g, std::span<const double>(x), std::span<double>(y), std::plus<>(),
                         hc::Algo::reduce_broadcast);
          keep(y);  // the sums' bits show the order of the additions
          std::vector<double> z = x;
          hc::all_reduce(g, std::span<const double>(z), std::span<double>(z), std::plus<>(),
                         hc::Algo::reduce_broadcast);  // in is out
          CHECK(z == y);
          CHECK(off_integer_sum(g, seed, n, hc::Algo::automatic) == 0);
        }
      };
      const auto body = [&](hc::Proc& vp, auto& keep) {
        const int me = vp.id();
        reduces(vp.world(), 0, keep);
        // Groups of every size below p, ranks against id order (split groups are rings; their
        // members are not neighbours, so Links::routed only).
        if (links == hc::Links::routed)
          reduces(hc::split(vp.world(), me % 3 == 0 ? 0 : 1, -me), 1, keep);
        // Non-commutative, and may throw: the left fold over the ids, in a meeting (up to 4 KiB
        // either, past it the one that cannot throw) and not.
        all_reduce_left_folds(vp, me, vp.size(), hc::Algo::reduce_broadcast, keep);
      };
      (void)meeting_as_messages(t, body, o);
      if (t.size() == 12 && links == hc::Links::strict) {
        // automatic's choice for 8 bytes: 6 steps in, 6 out, 22 messages (the ring pair: 22
        // steps, 132 messages).
        const hc::Report r = hc::run(
            t, [](hc::Proc& vp) { (void)hc::all_reduce(vp, 1.0, std::plus<>()); }, o);
        CHECK(r.model_time == doctest::Approx(12 * (o.model.ts + o.model.tw * 8 + o.model.th)));
        CHECK(r.messages == 22);
      }
    }
  }
}

TEST_CASE("a broadcast on a ring of the whole group meets, the two arms' steps on the clocks") {
  // Where VPs outnumber cores, the two-way ring broadcast on a ring of the whole group (a ring's,
  // a split group's, a mesh row's) meets as the hypercube's does: a small buffer pipelined, a
  // large one by reference. The arms' steps, ranks counted round the ring from the root
  // (Rounds::ring_root), on the clocks and links, every root, after uneven clocks: bit for bit
  // the messages' clocks, counts and link traffic. (Pipelined up to the slot's 16 KiB room for a
  // root's input, 2048 doubles; 2049 send the messages, from 32 KiB by reference.)
  for (const auto& t : {hc::Topology::ring(2), hc::Topology::ring(3), hc::Topology::ring(6),
                        hc::Topology::ring(7), hc::Topology::ring(12), hc::Topology::mesh(3, 4)}) {
    CAPTURE(t.name());
    const auto broadcasts = [](const hc::Group& g, int seed, auto& keep) {
      const int me = g.rank(), n = g.size();
      for (std::size_t count :
           {std::size_t{1}, std::size_t{20}, std::size_t{40}, std::size_t{96}, std::size_t{500},
            std::size_t{2048}, std::size_t{2049}, std::size_t{4096}, std::size_t{8192 + 3}})
        for (int root = 0; root < n; root += (count > 600 ? 2 : 1)) {
          std::vector<double> x(count, -7.0);
          if (me == root)
            for (std::size_t k = 0; k < count; ++k) x[k] = tricky(seed + root, k);
          hc::broadcast(g, std::span<double>(x), root);
          long wrong = 0;
          for (std::size_t k = 0; k < count; ++k) wrong += x[k] != tricky(seed + root, k);
          CHECK(wrong == 0);
          keep(x);
        }
      keep(std::vector<double>{g.proc().clock()});
    };
    const auto body = [&](hc::Proc& vp, auto& keep) {
      // Uneven clocks first: messages of VP-dependent sizes round the ring.
      const int p = vp.size(), me = vp.id();
      const bool mesh = vp.topology().kind() == hc::Topology::Kind::mesh;
      const int right =
          mesh ? vp.topology().id_at(vp.topology().row_of(me), vp.topology().col_of(me) + 1)
               : (me + 1) % p;
      const int left =
          mesh ? vp.topology().id_at(vp.topology().row_of(me), vp.topology().col_of(me) - 1)
               : (me - 1 + p) % p;
      std::vector<char> out(static_cast<std::size_t>(me % 5) * 24 + 8, 'x');
      std::vector<char> in(static_cast<std::size_t>(left % 5) * 24 + 8);
      if (p > 1) vp.sendrecv(right, out, left, in);
      if (mesh)
        broadcasts(vp.row(), 0, keep);
      else
        broadcasts(vp.world(), 0, keep);
      broadcasts(hc::split(vp.world(), vp.id() % 3 == 0 ? 0 : 1, -vp.id()), 1, keep);
    };
    (void)meeting_as_messages(t, body);
  }
}

TEST_CASE(
    "a reduce, gather or scatter on a ring of the whole group meets, the arms' steps on the "
    "clocks") {
  // Where VPs outnumber cores, the two-way ring reduce (up to 256 B, the balanced arms: a
  // commutative operator, or any with the root at rank 0 or n - 1; from 32 KiB each VP folding
  // its share of the elements, an operator that cannot throw), gather and scatter (equal
  // blocks: up to 256 B pipelined, 32 KiB in all or more by reference) on a ring of the whole
  // group meet as the hypercube's do. For odd n the down arm's last step into the root waits a
  // round (one source a round), which must not change a clock: bit for bit the messages' clocks,
  // counts and link traffic, every root, after uneven clocks; the products of non-commuting
  // matrices in rank order. (Sizes between, and a non-commutative root inside, send messages.)
  // gatherv and scatterv meet whatever their blocks, each message the blocks it carries.
  for (const auto& t : {hc::Topology::ring(2), hc::Topology::ring(3), hc::Topology::ring(5),
                        hc::Topology::ring(6), hc::Topology::ring(7), hc::Topology::ring(12)}) {
    CAPTURE(t.name());
    const auto rooted = [](const hc::Group& g, int seed, auto& keep) {
      const int me = g.rank(), n = g.size();
      for (int root = 0; root < n; ++root) {
        CAPTURE(root);
        for (std::size_t count : {std::size_t{1}, std::size_t{20}, std::size_t{32}, std::size_t{33},
                                  std::size_t{4096}, std::size_t{5003}}) {
          if (count > 40 && root % 3 != 1) continue;
          std::vector<double> x(count), y(me == root ? count : 0, -7.0);
          for (std::size_t k = 0; k < count; ++k) x[k] = tricky(seed + me, k);
          hc::reduce(g, std::span<const double>(x), std::span<double>(y), std::plus<>(), root);
          keep(y);
          std::vector<long> ints(count), sums(me == root ? count : 0, -7);
          for (std::size_t k = 0; k < count; ++k) ints[k] = me * 1000 + static_cast<long>(k);
          hc::reduce(g, std::span<const long>(ints), std::span<long>(sums), std::plus<>(), root);
          long wrong = 0;
          for (std::size_t k = 0; k < sums.size(); ++k)
            wrong += sums[k] != 1000L * n * (n - 1) / 2 + n * static_cast<long>(k);
          CHECK(wrong == 0);
        }
        for (std::size_t count : {std::size_t{1}, std::size_t{8}, std::size_t{9}}) {
          std::vector<hctest::Mat> m(count), product(me == root ? count : 0);
          for (std::size_t k = 0; k < count; ++k) m[k] = hctest::mat_of(me + seed, k);
          hc::reduce(g, std::span<const hctest::Mat>(m), std::span<hctest::Mat>(product),
                     hctest::MatMul{}, root);
          for (std::size_t k = 0; k < product.size(); ++k) {
            hctest::Mat expected = hctest::mat_of(seed, k);
            for (int i = 1; i < n; ++i)
              expected = hctest::MatMul{}(expected, hctest::mat_of(i + seed, k));
            CHECK(product[k] == expected);
          }
        }
        for (std::size_t count :
             {std::size_t{1}, std::size_t{32}, std::size_t{33}, std::size_t{4096}}) {
          if (count > 40 && root % 3 != 0) continue;
          const auto total = count * static_cast<std::size_t>(n);
          std::vector<double> x(count), all(me == root ? total : 0, -7.0);
          for (std::size_t k = 0; k < count; ++k) x[k] = tricky(seed + me, k);
          hc::gather(g, std::span<const double>(x), std::span<double>(all), root);
          long wrong = 0;
          for (std::size_t k = 0; k < all.size(); ++k)
            wrong += all[k] != tricky(seed + static_cast<int>(k / count), k % count);
          CHECK(wrong == 0);
          keep(all);
          std::vector<double> blocks(me == root ? total : 0), mine(count, -7.0);
          for (std::size_t k = 0; k < blocks.size(); ++k)
            blocks[k] = tricky(seed + root + static_cast<int>(k / count), k);
          hc::scatter(g, std::span<const double>(blocks), std::span<double>(mine), root);
          wrong = 0;
          for (std::size_t k = 0; k < count; ++k)
            wrong += mine[k] != tricky(seed + root + me, static_cast<std::size_t>(me) * count + k);
          CHECK(wrong == 0);
          keep(mine);
        }
        // gatherv and scatterv, empty blocks among them: pipelined (up to 256 B a block), by
        // reference (a larger block).
        for (std::size_t scale : {std::size_t{1}, std::size_t{40}}) {
          std::vector<std::size_t> counts;
          for (int i = 0; i < n; ++i)
            counts.push_back(static_cast<std::size_t>((i * 7 + root) % 5) * scale);
          std::vector<std::size_t> offsets(1, 0);
          for (const std::size_t k : counts) offsets.push_back(offsets.back() + k);
          const std::size_t total = offsets.back(), mine = counts[static_cast<std::size_t>(me)];
          std::vector<double> x(mine), all(me == root ? total : 0, -7.0);
          for (std::size_t k = 0; k < mine; ++k) x[k] = tricky(seed + me, k);
          hc::gatherv(g, std::span<const double>(x), std::span<double>(all), counts, root);
          long wrong = 0;
          for (int i = 0; me == root && i < n; ++i)
            for (std::size_t k = 0; k < counts[static_cast<std::size_t>(i)]; ++k)
              wrong += all[offsets[static_cast<std::size_t>(i)] + k] != tricky(seed + i, k);
          CHECK(wrong == 0);
          keep(all);
          std::vector<double> blocks(me == root ? total : 0), got(mine, -7.0);
          for (std::size_t k = 0; k < blocks.size(); ++k) blocks[k] = tricky(seed + root, k);
          hc::scatterv(g, std::span<const double>(blocks), std::span<double>(got), counts, root);
          wrong = 0;
          for (std::size_t k = 0; k < mine; ++k)
            wrong += got[k] != tricky(seed + root, offsets[static_cast<std::size_t>(me)] + k);
          CHECK(wrong == 0);
          keep(got);
        }
      }
      keep(std::vector<double>{g.proc().clock()});
    };
    const auto body = [&](hc::Proc& vp, auto& keep) {
      // Uneven clocks first: messages of VP-dependent sizes round the ring.
      const int p = vp.size(), me = vp.id();
      std::vector<char> out(static_cast<std::size_t>(me % 5) * 24 + 8, 'x');
      std::vector<char> in(static_cast<std::size_t>((me - 1 + p) % p % 5) * 24 + 8);
      if (p > 1) vp.sendrecv((me + 1) % p, out, (me - 1 + p) % p, in);
      rooted(vp.world(), 0, keep);
      rooted(hc::split(vp.world(), vp.id() % 3 == 0 ? 0 : 1, -vp.id()), 1, keep);
    };
    (void)meeting_as_messages(t, body);
  }
}

TEST_CASE("VPs that pass a large scan different lengths get CollectiveMismatch, never a hang") {
  const auto t = hc::Topology::hypercube(3);
  const std::string what = mismatch_text(t, [](hc::Proc& vp) {
    std::vector<double> x(vp.id() == 5 ? 8193 : 8192, 1.0), y(x.size());
    hc::scan(vp, std::span<const double>(x), std::span<double>(y), std::plus<>());
  });
  CAPTURE(what);
  CHECK(what.find("VP 5") != std::string::npos);
  CHECK(what.find("deadlock") == std::string::npos);
  CHECK(what.find("8193 elements") != std::string::npos);
}

TEST_CASE("a VP that fails while a group folds its shares aborts it once they are done") {
  // Half the VPs scan and all-reduce large vectors in their group's meetings, where each member
  // writes into the others' outs; a VP of the other half fails meanwhile. A member aborted while it
  // waits for the others' shares leaves only once they are done (no share writes into an out that
  // is gone: the sanitizers' builds would see it), the body's error comes out, and the machine
  // runs on.
  hc::Machine machine(hc::Topology::hypercube(4), test_options());
  for (int attempt = 0; attempt < (kSanitized ? 3 : 20); ++attempt) {
    try {
      machine.run([attempt](hc::Proc& vp) {
        const hc::Group half = vp.subcube(0b0111);  // VPs 0-7, VPs 8-15
        if (vp.id() >= 8) {
          for (int i = 0; i < attempt; ++i) hc::barrier(half);
          if (vp.id() == 12) throw std::runtime_error("VP 12 gives up");
          hc::barrier(half);
          return;
        }
        for (int i = 0; i < 1000; ++i) {
          std::vector<double> x(16384, 1.0 + vp.id()), y(x.size());
          hc::scan(half, std::span<const double>(x), std::span<double>(y), std::plus<>());
          hc::all_reduce(half, std::span<const double>(x), std::span<double>(y), std::plus<>(),
                         hc::Algo::two_phase);
        }
      });
      FAIL("no error");
    } catch (const hc::Error& e) {
      FAIL("a hypercomm error instead of the body's: " << e.what());
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "VP 12 gives up");
    }
  }
  std::vector<double> last(static_cast<std::size_t>(machine.topology().size()));
  machine.run([&](hc::Proc& vp) {
    std::vector<double> x(16384, 1.0 + vp.id()), y(x.size());
    hc::scan(vp, std::span<const double>(x), std::span<double>(y), std::plus<>());
    last[static_cast<std::size_t>(vp.id())] = y.back();
  });
  for (std::size_t i = 0; i < last.size(); ++i)
    CHECK(last[i] == static_cast<double>((i + 1) * (i + 2) / 2));
}

TEST_CASE("a member aborted while the last arriver concludes a shared meeting does its share") {
  // Seven VPs scan large vectors in their group's meetings, each writing its share into every
  // member's out; the eighth fails after a wait that changes from attempt to attempt, so that the
  // abort lands at every point of the meetings. A member that sees the abort while the last
  // arriver concludes is released all the same: it does its share and waits for the others'
  // before it leaves (else their shares write into an out that is gone, and they wait for its
  // share for ever). The body's error comes out each time, and the machine runs on.
  hc::Machine machine(hc::Topology::hypercube(3), test_options());
  for (int attempt = 0; attempt < (kSanitized ? 60 : 300); ++attempt) {
    try {
      machine.run([attempt](hc::Proc& vp) {
        const hc::Group seven = hc::split(vp.world(), vp.id() == 7 ? 1 : 0, vp.id());
        if (vp.id() == 7) {
          const auto until =
              std::chrono::steady_clock::now() + std::chrono::microseconds((attempt * 37) % 400);
          while (std::chrono::steady_clock::now() < until) {
          }
          throw std::runtime_error("VP 7 gives up");
        }
        for (int i = 0; i < 100000; ++i) {
          std::vector<double> x(8192 + 7, 1.0 + vp.id()), y(x.size());
          hc::scan(seven, std::span<const double>(x), std::span<double>(y), std::plus<>());
        }
      });
      FAIL("no error");
    } catch (const hc::Error& e) {
      FAIL("a hypercomm error instead of the body's: " << e.what());
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "VP 7 gives up");
    }
  }
  std::vector<double> last(8);
  machine.run([&](hc::Proc& vp) {
    std::vector<double> x(8192 + 7, 1.0 + vp.id()), y(x.size());
    hc::scan(vp, std::span<const double>(x), std::span<double>(y), std::plus<>());
    last[static_cast<std::size_t>(vp.id())] = y.back();
  });
  for (std::size_t i = 0; i < last.size(); ++i)
    CHECK(last[i] == static_cast<double>((i + 1) * (i + 2) / 2));
}

TEST_CASE("1024 VPs meet in a barrier and an all_reduce as their messages would") {
  // Under a sanitizer, 256 and 200 VPs: a thousand threads there take minutes.
  for (const auto& t : {hc::Topology::hypercube(kSanitized ? 8 : 10),
                        hc::Topology::ring(kSanitized ? 200 : 1000)}) {
    CAPTURE(t.name());
    auto body = [](hc::Proc& vp) {
      hc::barrier(vp);
      const long sum = hc::all_reduce(vp, long{vp.id()}, std::plus<>());
      if (sum != static_cast<long>(vp.size()) * (vp.size() - 1) / 2)
        throw std::logic_error("wrong sum on VP " + std::to_string(vp.id()));
      hc::barrier(vp);
    };
    hc::Options o = model_options();
    const hc::Report meeting = hc::run(t, body, o);
    o.record = true;
    const hc::Report messages = hc::run(t, body, o);
    CHECK(meeting.clocks == messages.clocks);
    CHECK(meeting.messages == messages.messages);
    CHECK(meeting.bytes == messages.bytes);
    CHECK(meeting.link_traffic.size() == messages.link_traffic.size());
  }
}

TEST_CASE("barriers and small all-reduces in a long loop, arriving in every order") {
  const int iterations = kSanitized ? 300 : 3000;
  for (const auto& t : {hc::Topology::hypercube(4), hc::Topology::ring(12)}) {
    CAPTURE(t.name());
    const long p = t.size();
    hctest::check_loop(t, iterations, 7, [p](hc::Proc& vp, long i) {  // 7: vary who comes last
      const int me = vp.id();
      long bad = 0;
      hc::barrier(vp);
      const long sum = hc::all_reduce(vp, me + i, std::plus<>());
      bad += sum != p * (p - 1) / 2 + p * i;
      if (i % 97 == 0) {  // a large one between: messages, with the meetings around it
        std::vector<int> x(3000, me), y(3000);
        hc::all_reduce(vp, std::span<const int>(x), std::span<int>(y), std::plus<>());
        bad += y.front() != p * (p - 1) / 2 || y.back() != p * (p - 1) / 2;
      }
      return bad;
    });
  }
}

TEST_CASE("VPs that disagree around a meeting get CollectiveMismatch at once") {
  for (const auto& t :
       {hc::Topology::hypercube(3), hc::Topology::ring(6), hc::Topology::mesh(4, 4)}) {
    CAPTURE(t.name());
    const int p = t.size();
    SUBCASE("a barrier against an all_reduce") {
      const std::string what = mismatch_text(t, [](hc::Proc& vp) {
        if (vp.id() == 0)
          hc::barrier(vp);
        else
          (void)hc::all_reduce(vp, 1.0, std::plus<>());
      });
      CAPTURE(what);
      CHECK(what.find("VP ") != std::string::npos);
      CHECK(what.find("deadlock") == std::string::npos);  // found at once, not by the watchdog
      if (meets(p) && t.kind() == hc::Topology::Kind::hypercube) {
        // The last arriver finds it in the seats ("VPs 1-7 call all_reduce (call 1 ..."), or a VP
        // that waits long enough for it (a sanitizer's build, a busy box) in the headers the
        // others published ("... but VP 1 calls all_reduce (call 1 ..."): both name both calls.
        CHECK(what.find("all_reduce (call 1") != std::string::npos);
        CHECK(what.find("VP 0 calls barrier (call 1") != std::string::npos);
      }
    }
    SUBCASE("a VP that skips the barrier") {
      const std::string what = mismatch_text(t, [p](hc::Proc& vp) {
        if (vp.id() != p / 2) hc::barrier(vp);
      });
      CAPTURE(what);
      CHECK(what.find("VP ") != std::string::npos);
      CHECK(what.find("deadlock") == std::string::npos);
    }
    SUBCASE("a large all_reduce (messages) against a small one (a meeting)") {
      const std::string what = mismatch_text(t, [](hc::Proc& vp) {
        std::vector<double> x(vp.id() == 1 ? 2000 : 1, 1.0), y(x.size());
        hc::all_reduce(vp, std::span<const double>(x), std::span<double>(y), std::plus<>());
      });
      CAPTURE(what);
      CHECK(what.find("deadlock") == std::string::npos);
    }
    SUBCASE("a broadcast against a barrier") {
      const std::string what = mismatch_text(t, [](hc::Proc& vp) {
        std::vector<int> buf(4, vp.id());
        if (vp.id() == 1)
          hc::broadcast(vp, buf, 1);
        else
          hc::barrier(vp);
      });
      CAPTURE(what);
      CHECK(what.find("deadlock") == std::string::npos);
    }
    SUBCASE("irregular gathers and scatters whose members pass different counts") {
      // One member's counts make it meet otherwise than the rest (in a pipelined slot or by
      // reference, rooted or not): every combination is found, naming the counts.
      const bool cube = t.kind() == hc::Topology::Kind::hypercube;
      for (const std::size_t base : {std::size_t{1}, std::size_t{30}, std::size_t{3000}})
        for (const std::size_t odd : {std::size_t{40}, std::size_t{5000}})
          for (const int op : {0, 1, 2})
            for (const int deviant : {0, p - 1}) {
              if (!cube) continue;  // the irregular meetings are the hypercube's
              CAPTURE(base);
              CAPTURE(odd);
              CAPTURE(op);
              CAPTURE(deviant);
              const std::string what = mismatch_text(t, [&](hc::Proc& vp) {
                std::vector<std::size_t> counts(static_cast<std::size_t>(p), base);
                if (vp.id() == deviant) counts[1] = odd;
                const std::size_t total =
                    std::accumulate(counts.begin(), counts.end(), std::size_t{0});
                const std::size_t mine = counts[static_cast<std::size_t>(vp.id())];
                std::vector<double> in(total, 1.0), out(total);
                const auto own = std::span<const double>(in).first(mine);
                // The root comes last: the others have left their blocks in the slot and gone.
                if (vp.id() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
                for (int call = 0; call < 3; ++call) {
                  if (op == 0)
                    hc::gatherv(vp, own, std::span<double>(out), counts, 0);
                  else if (op == 1)
                    hc::scatterv(vp, std::span<const double>(in),
                                 std::span<double>(out).first(mine), counts, 0);
                  else
                    hc::all_gatherv(vp, own, std::span<double>(out), counts);
                }
              });
              CAPTURE(what);
              CHECK(what.find("deadlock") == std::string::npos);
            }
    }
    SUBCASE("an all_to_all whose VPs pass blocks of other sizes") {
      for (const std::size_t odd : {std::size_t{1}, std::size_t{600}, std::size_t{2000}}) {
        CAPTURE(odd);
        const std::string what = mismatch_text(t, [&](hc::Proc& vp) {
          const std::size_t block = vp.id() == p - 1 ? odd : 300;
          std::vector<double> x(block * static_cast<std::size_t>(p), 1.0), y(x.size());
          for (int call = 0; call < 2; ++call)
            hc::all_to_all(vp, std::span<const double>(x), std::span<double>(y));
        });
        CAPTURE(what);
        CHECK(what.find("deadlock") == std::string::npos);
      }
    }
    SUBCASE("one more barrier on one VP, after agreed ones") {
      const std::string what = mismatch_text(t, [](hc::Proc& vp) {
        for (int i = 0; i < (vp.id() == 0 ? 4 : 3); ++i) hc::barrier(vp);
      });
      CAPTURE(what);
      CHECK(what.find("deadlock") == std::string::npos);
    }
  }
}

// VPs that leave a pipelined meeting (a broadcast's non-roots, a reduce's) may end their bodies
// before the disagreement shows: a VP still in a call reports it there, where the program can
// catch it, and those that left wait for it a while (Port::wait_in_meeting) before they report it
// from the run's end.
TEST_CASE("a disagreement around a pipelined meeting is thrown in a call, not only by run") {
  struct Case {
    const char* name;
    std::function<void(hc::Proc&)> call;
  };
  const Case cases[] = {
      {"a barrier against a broadcast",
       [](hc::Proc& vp) {
         if (vp.id() == 1)
           hc::barrier(vp);
         else
           (void)hc::broadcast(vp, 5, 0);
       }},
      {"a reduce on the ring against an automatic one",
       [](hc::Proc& vp) {
         std::vector<int> x(3, vp.id()), y(3);
         hc::reduce(vp, x, y, std::plus<>(), 0,
                    vp.id() % 3 == 1 ? hc::Algo::ring : hc::Algo::automatic);
       }},
  };
  for (const auto& t : {hc::Topology::ring(4), hc::Topology::mesh(3, 3)}) {
    if (!meets(t.size())) continue;
    for (const Case& c : cases) {
      CAPTURE(t.name());
      CAPTURE(std::string(c.name));
      int caught_in_a_call = 0;
      constexpr int kRuns = 10;
      for (int run = 0; run < kRuns; ++run) {
        std::atomic<int> in_call{0};
        hc::Options o = test_options();
        o.deadlock_timeout = std::chrono::seconds(60);
        CHECK_THROWS_AS(hc::run(
                            t,
                            [&](hc::Proc& vp) {
                              try {
                                c.call(vp);
                              } catch (const hc::CollectiveMismatch&) {
                                ++in_call;
                                throw;
                              }
                            },
                            o),
                        hc::CollectiveMismatch);
        caught_in_a_call += in_call.load() > 0 ? 1 : 0;
      }
      // (A sanitizer's build may leave a VP unscheduled past the wait.)
      if (kSanitized)
        CHECK(caught_in_a_call > 0);
      else
        CHECK(caught_in_a_call == kRuns);
    }
  }
}

TEST_CASE("a VP that fails while the others meet aborts them, and the machine runs on") {
  hc::Machine machine(hc::Topology::hypercube(3), test_options());
  const int p = machine.topology().size();
  try {
    machine.run([](hc::Proc& vp) {
      hc::barrier(vp);
      if (vp.id() == 5) throw std::runtime_error("VP 5 gives up");
      hc::barrier(vp);
    });
    FAIL("no error");
  } catch (const hc::Error& e) {
    FAIL("a hypercomm error instead of the body's: " << e.what());
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "VP 5 gives up");
  }
  CHECK_THROWS_AS(machine.run([](hc::Proc& vp) {
    if (vp.id() == 0)
      hc::barrier(vp);
    else
      (void)hc::all_reduce(vp, 1, std::plus<>());
  }),
                  hc::CollectiveMismatch);
  std::vector<long> sums(static_cast<std::size_t>(p));
  machine.run([&](hc::Proc& vp) {
    for (int i = 0; i < 10; ++i) hc::barrier(vp);
    sums[static_cast<std::size_t>(vp.id())] = hc::all_reduce(vp, long{vp.id()}, std::plus<>());
  });
  for (long s : sums) CHECK(s == p * (p - 1) / 2);
}

TEST_CASE("a Deadlock report says that a VP in a meeting waits for every VP") {
  hc::Options o = test_options();
  o.deadlock_timeout = std::chrono::milliseconds(300);
  const auto t = hc::Topology::hypercube(3);
  try {
    hc::run(
        t,
        [](hc::Proc& vp) {
          int x = 0;
          if (vp.id() == 0)
            vp.recv(1, std::span(&x, 1));  // never sent
          else
            hc::barrier(vp);
        },
        o);
    FAIL("no error");
  } catch (const hc::Error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("VP 0 waits in recv for VP 1") != std::string::npos);
    // ... and names the VPs that have not come to it.
    if (meets(t.size()))
      CHECK(what.find("for every VP to join it (not in it: VP 0)") != std::string::npos);
  }
}
