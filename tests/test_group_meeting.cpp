// Meetings of groups (Options::meetings applies to groups as to the whole machine): where VPs
// outnumber cores, a row's, column's, subcube's or split group's barrier, small all-reduce,
// all-gather, all-to-all, reduce-scatter, all_gatherv or all_to_allv meets in shared memory, and
// its small scan, exscan, broadcast, reduce, gather, scatter, gatherv and scatterv (and the large
// rooted ones, by reference) in its pipelined chain, the group's members apart from the others,
// seated by rank. It must be indistinguishable from the group's messages: the same results bit
// for bit, the same model clocks, message and byte counts and link traffic (each message on the
// machine links of its route), and the same errors, never a hang. Every case runs recorded
// (messages) and not (meetings where VPs outnumber cores).
#include <doctest/doctest.h>

#include <cstring>
#include <hypercomm/hypercomm.hpp>
#include <string>
#include <vector>

#include "meeting_support.hpp"

namespace hc = hypercomm;
using hctest::check_same;
using hctest::meets;
using hctest::mismatch_text;
using hctest::model_options;
using hctest::tricky;

namespace {

// Every collective that meets, on group g (automatic, and the hypercube algorithms forced where
// g's size is a power of two), after point-to-point messages that leave every member's clock
// different.
template <class Keep>
void group_mix(hc::Group g, int seed, Keep& keep, bool strict = false) {
  const int p = g.size();
  const int me = g.rank();
  if (const int partner = me ^ 1; partner < p) {  // a neighbour in every group's topology
    std::vector<char> out(static_cast<std::size_t>((me + seed) % 5) * 24 + 8, 'x');
    std::vector<char> in(static_cast<std::size_t>((partner + seed) % 5) * 24 + 8);
    g.sendrecv(partner, out, in);
  }
  // The hypercube algorithms forced where they run (strict links: on a subcube alone).
  const auto width = static_cast<std::size_t>(p);
  const bool cube = p > 0 && (p & (p - 1)) == 0;
  std::vector<hc::Algo> algos{hc::Algo::automatic};
  if (cube && (!strict || g.topology().kind() == hc::Topology::Kind::hypercube))
    algos.push_back(hc::Algo::hypercube);
  hc::barrier(g);
  for (std::size_t n : {std::size_t{1}, std::size_t{100}, std::size_t{513}}) {
    std::vector<double> x(n), y(n);
    for (std::size_t k = 0; k < n; ++k) x[k] = tricky(me + seed, k);
    hc::scan(g, std::span<const double>(x), std::span<double>(y), std::plus<>());
    keep(y);
  }
  for (const hc::Algo algo : algos) {
    for (std::size_t n : {std::size_t{1}, std::size_t{512}, std::size_t{513}}) {
      std::vector<double> x(n), y(n);
      for (std::size_t k = 0; k < n; ++k) x[k] = tricky(me + seed, k);
      hc::all_reduce(g, std::span<const double>(x), std::span<double>(y), std::plus<>(), algo);
      keep(y);
    }
    std::vector<hctest::Mat> m(3), mout(3);
    for (std::size_t k = 0; k < m.size(); ++k) m[k] = hctest::mat_of(me + seed, k);
    hc::all_reduce(g, std::span<const hctest::Mat>(m), std::span<hctest::Mat>(mout),
                   hctest::MatMul{}, algo);
    keep(mout);
    for (std::size_t n : {std::size_t{1}, std::max<std::size_t>(1, 4096 / (8 * width))}) {
      std::vector<double> x(n * width), y(x.size(), -7.0), z(n, -7.0);
      for (std::size_t k = 0; k < x.size(); ++k) x[k] = tricky(me + seed, k);
      hc::all_gather(g, std::span<const double>(x).first(n), std::span<double>(y), algo);
      keep(y);
      hc::all_to_all(g, std::span<const double>(x), std::span<double>(y),
                     algo == hc::Algo::hypercube ? hc::Algo::dimension_exchange : algo);
      keep(y);
      hc::reduce_scatter(g, std::span<const double>(y), std::span<double>(z), std::plus<>(), algo);
      keep(z);
    }
  }
  // Rooted collectives and prefixes, two roots: in a pipelined slot up to 256 B a member, by
  // reference past it where the root's buffer is at least 32 KiB, messages between.
  for (const int root : {0, p - 1}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{32}, std::size_t{33}, std::size_t{4100}}) {
      std::vector<double> buf(n), x(n), y(n, -7.0), all(n * width, -7.0);
      for (std::size_t k = 0; k < n; ++k) buf[k] = x[k] = tricky(me + seed + root, k);
      hc::broadcast(g, std::span<double>(buf), root);
      keep(buf);
      hc::reduce(g, std::span<const double>(x), std::span<double>(y), std::plus<>(), root);
      if (me == root) keep(y);
      hc::gather(g, std::span<const double>(x), std::span<double>(all), root);
      if (me == root) keep(all);
      for (std::size_t k = 0; k < all.size(); ++k) all[k] = tricky(me + root, k);
      hc::scatter(g, std::span<const double>(all), std::span<double>(y), root);
      keep(y);
    }
    std::vector<hctest::Mat> m(2), mout(2);
    for (std::size_t k = 0; k < m.size(); ++k) m[k] = hctest::mat_of(me + seed, k);
    hc::reduce(g, std::span<const hctest::Mat>(m), std::span<hctest::Mat>(mout), hctest::MatMul{},
               root);
    if (me == root) keep(mout);
    hc::exscan(g, std::span<const hctest::Mat>(m), std::span<hctest::Mat>(mout), hctest::MatMul{});
    if (me != 0) keep(mout);
    for (std::size_t scale : {std::size_t{1}, std::size_t{400}}) {
      std::vector<std::size_t> counts(width);
      for (int i = 0; i < p; ++i)
        counts[static_cast<std::size_t>(i)] = static_cast<std::size_t>((3 * i + seed) % 4) * scale;
      std::size_t total = 0;
      for (const std::size_t c : counts) total += c;
      std::vector<double> block(counts[static_cast<std::size_t>(me)]), blocks(total, -7.0);
      for (std::size_t k = 0; k < block.size(); ++k) block[k] = tricky(me + seed, k);
      hc::gatherv(g, std::span<const double>(block), std::span<double>(blocks), counts, root);
      if (me == root) keep(blocks);
      for (std::size_t k = 0; k < blocks.size(); ++k) blocks[k] = tricky(root, k);
      hc::scatterv(g, std::span<const double>(blocks), std::span<double>(block), counts, root);
      keep(block);
    }
  }
  keep(std::vector<long>{hc::scan(g, long{me}, std::plus<>())});
  // Irregular: blocks of every size, none included.
  std::vector<std::size_t> counts(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i)
    counts[static_cast<std::size_t>(i)] = static_cast<std::size_t>((3 * i + seed) % 4) * 5;
  std::size_t total = 0;
  for (const std::size_t c : counts) total += c;
  std::vector<double> mine(counts[static_cast<std::size_t>(me)]), all(total, -7.0);
  for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = tricky(me + seed, k);
  hc::all_gatherv(g, std::span<const double>(mine), std::span<double>(all), counts);
  keep(all);
  std::vector<std::size_t> send(static_cast<std::size_t>(p)), recv(send.size());
  for (int j = 0; j < p; ++j) {
    send[static_cast<std::size_t>(j)] = static_cast<std::size_t>((3 * me + 5 * j + seed) % 4);
    recv[static_cast<std::size_t>(j)] = static_cast<std::size_t>((3 * j + 5 * me + seed) % 4);
  }
  std::size_t sent = 0, received = 0;
  for (int j = 0; j < p; ++j)
    sent += send[static_cast<std::size_t>(j)], received += recv[static_cast<std::size_t>(j)];
  std::vector<double> out(sent), in(received, -7.0);
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = tricky(me + seed, k);
  hc::all_to_allv(g, std::span<const double>(out), send, std::span<double>(in), recv);
  keep(in);
  keep(std::vector<long>{hc::all_reduce(g, long{me}, std::plus<>())});
}

// Each VP's groups of machine t, in the order every VP calls them: every row at once, then every
// column (a mesh); subcubes of two masks (a hypercube); then split groups of two colors, with
// world collectives sent as messages between (their calls are numbered apart from the groups').
template <class Keep>
void groups_mix(const hc::Topology& t, hc::Proc& vp, Keep& keep) {
  const bool mesh = t.kind() == hc::Topology::Kind::mesh;
  const bool cube = t.kind() == hc::Topology::Kind::hypercube;
  if (mesh) {
    group_mix(vp.row(), 1, keep);
    group_mix(vp.column(), 2, keep);
  }
  if (cube && t.dimension() >= 2) {
    group_mix(vp.subcube(0b11), 3, keep);
    group_mix(vp.subcube(static_cast<unsigned>(t.size() - 1) & 0b1010110u), 4, keep);
  }
  std::vector<double> big(700, 1.0 + vp.id()), sum(700);  // past a meeting: messages
  hc::all_reduce(vp, std::span<const double>(big), std::span<double>(sum), std::plus<>());
  keep(sum);
  const hc::Group halves = hc::split(vp.world(), vp.id() % 2, -vp.id());
  group_mix(halves, 5, keep);
  hc::barrier(vp);
  // Three colors of uneven sizes, one VP outside every group.
  const int color = vp.id() == 1 ? -1 : vp.id() % 3;
  const hc::Group thirds = hc::split(vp.world(), color, vp.id());
  if (thirds.size() > 0) group_mix(thirds, 6, keep);
  hc::all_reduce(vp, std::span<const double>(big), std::span<double>(sum), std::plus<>());
  keep(sum);
}

}  // namespace

TEST_CASE("a group's meeting gives the results, clocks, counts and link traffic of its messages") {
  std::vector<hc::Topology> topologies{hc::Topology::mesh(4, 4),   hc::Topology::mesh(3, 5),
                                       hc::Topology::mesh(2, 8),   hc::Topology::hypercube(3),
                                       hc::Topology::hypercube(5), hc::Topology::ring(12)};
  if (!hctest::kSanitized) topologies.push_back(hc::Topology::mesh(8, 8));
  for (const auto& t : topologies) {
    for (hc::Links links : {hc::Links::routed, hc::Links::strict}) {
      CAPTURE(t.name());
      CAPTURE(links == hc::Links::strict);
      hc::Options o = model_options();
      o.links = links;
      // Under strict links a split group's algorithms that send past neighbours throw
      // AlgorithmError: only rows, columns and subcubes there.
      const auto body = [&](hc::Proc& vp, auto& keep) {
        if (links == hc::Links::strict) {
          if (t.kind() == hc::Topology::Kind::mesh) {
            group_mix(vp.row(), 1, keep, true);
            group_mix(vp.column(), 2, keep, true);
          } else if (t.kind() == hc::Topology::Kind::hypercube) {
            group_mix(vp.subcube(0b11), 3, keep, true);
          }
          return;
        }
        groups_mix(t, vp, keep);
      };
      const hctest::MeetingResults meeting = hctest::run_keeping(t, o, body);
      o.record = true;
      check_same(hctest::run_keeping(t, o, body), meeting);
      // And the results are the book's: a row's sum of member ranks.
      if (t.kind() == hc::Topology::Kind::mesh && links == hc::Links::strict) {
        const auto& last = meeting.per_vp.front();
        long total = 0;
        std::memcpy(&total, last.data() + last.size() - sizeof(long), sizeof(long));
        CHECK(total == static_cast<long>(t.rows()) * (t.rows() - 1) / 2);  // column 0's ranks
      }
    }
  }
}

TEST_CASE("group meetings in a long loop, rows and columns at once, arriving in every order") {
  const hc::Topology t = hc::Topology::mesh(4, 4);
  hctest::check_loop(t, hctest::kSanitized ? 200 : 3000, 7, [](hc::Proc& vp, long i) {
    const hc::Group g = i % 2 == 0 ? vp.row() : vp.column();
    long bad = 0;
    const long sum = hc::all_reduce(g, long{vp.id()} + i, std::plus<>());
    long want = 0;
    for (int r = 0; r < g.size(); ++r) want += g.vp(r) + i;
    bad += sum != want;
    hc::barrier(g);
    const auto gathered = hc::all_gather(g, vp.id());
    for (int r = 0; r < g.size(); ++r) bad += gathered[static_cast<std::size_t>(r)] != g.vp(r);
    if (i % 50 == 0) hc::barrier(vp);
    return bad;
  });
}

TEST_CASE("members of a group that disagree around its meeting get CollectiveMismatch at once") {
  const hc::Topology t = hc::Topology::mesh(4, 4);
  SUBCASE("a row's barrier against its all_reduce") {
    const std::string what = mismatch_text(t, [](hc::Proc& vp) {
      const hc::Group row = vp.row();
      if (vp.id() == 5)
        hc::barrier(row);
      else
        (void)hc::all_reduce(row, 1.0, std::plus<>());
    });
    CAPTURE(what);
    CHECK(what.find("row 1") != std::string::npos);
    CHECK(what.find("deadlock") == std::string::npos);  // found at once, not by the watchdog
    if (meets(t.size())) CHECK(what.find("VP 5 calls barrier") != std::string::npos);
  }
  SUBCASE("a member that skips its column's barrier while the other columns meet") {
    const std::string what = mismatch_text(t, [](hc::Proc& vp) {
      if (vp.id() != 6) hc::barrier(vp.column());
    });
    CAPTURE(what);
    CHECK(what.find("column 2") != std::string::npos);
    CHECK(what.find("VP 6") != std::string::npos);
    CHECK(what.find("deadlock") == std::string::npos);
  }
  SUBCASE("a row's broadcast against its reduce, and roots that differ") {
    for (const int deviant : {4, 7}) {
      CAPTURE(deviant);
      const std::string what = mismatch_text(t, [deviant](hc::Proc& vp) {
        const hc::Group row = vp.row();
        std::vector<double> x(3, vp.id()), y(3);
        if (vp.id() == deviant)
          hc::reduce(row, std::span<const double>(x), std::span<double>(y), std::plus<>(), 0);
        else
          hc::broadcast(row, std::span<double>(x), 0);
      });
      CAPTURE(what);
      CHECK(what.find("row 1") != std::string::npos);
      CHECK(what.find("deadlock") == std::string::npos);
      const std::string roots = mismatch_text(t, [deviant](hc::Proc& vp) {
        std::vector<double> x(3, vp.id());
        hc::broadcast(vp.row(), std::span<double>(x), vp.id() == deviant ? 1 : 0);
      });
      CAPTURE(roots);
      CHECK(roots.find("row 1") != std::string::npos);
      CHECK(roots.find("deadlock") == std::string::npos);
    }
  }
  SUBCASE("a member that skips its row's scan and gather while the other rows go on") {
    const std::string what = mismatch_text(t, [](hc::Proc& vp) {
      if (vp.id() == 9) return;
      const hc::Group row = vp.row();
      for (int i = 0; i < 3; ++i) {
        (void)hc::scan(row, 1.0, std::plus<>());
        std::vector<double> x(2, 1.0), all(8);
        hc::gather(row, std::span<const double>(x), std::span<double>(all), 1);
      }
    });
    CAPTURE(what);
    CHECK(what.find("row 2") != std::string::npos);
    CHECK(what.find("VP 9") != std::string::npos);
    CHECK(what.find("deadlock") == std::string::npos);
  }
  SUBCASE("a split group's small all_reduce against a large one") {
    const std::string what = mismatch_text(t, [](hc::Proc& vp) {
      const hc::Group g = hc::split(vp.world(), vp.id() % 2, 0);
      std::vector<double> x(vp.id() == 3 ? 2000 : 1, 1.0), y(x.size());
      hc::all_reduce(g, std::span<const double>(x), std::span<double>(y), std::plus<>());
    });
    CAPTURE(what);
    CHECK(what.find("deadlock") == std::string::npos);
  }
}

TEST_CASE("VPs that finish while other groups meet are no sign of a mismatch") {
  // Row 0 finishes at once; the other rows meet again and again after it.
  const hc::Topology t = hc::Topology::mesh(4, 4);
  hc::Options o = hctest::test_options();
  std::vector<long> sums(static_cast<std::size_t>(t.size()));
  hc::run(
      t,
      [&](hc::Proc& vp) {
        if (t.row_of(vp.id()) == 0) return;
        const hc::Group row = vp.row();
        long sum = 0;
        for (int i = 0; i < 200; ++i) sum += hc::all_reduce(row, long{1}, std::plus<>());
        hc::barrier(row);
        sums[static_cast<std::size_t>(vp.id())] = sum;
      },
      o);
  for (int id = 0; id < t.size(); ++id)
    CHECK(sums[static_cast<std::size_t>(id)] == (t.row_of(id) == 0 ? 0 : 200 * t.cols()));
}

TEST_CASE("a split in a loop: new groups meet until their chains fill 64 MiB, then send") {
  // Past 64 MiB of group chains a run's new groups' rooted collectives and prefixes send their
  // messages, every member alike.
  const hc::Topology t = hc::Topology::hypercube(4);
  const int splits = hctest::kSanitized ? 150 : 1500;
  std::vector<long> wrong(static_cast<std::size_t>(t.size()), 0);
  hc::run(
      t,
      [&](hc::Proc& vp) {
        long& bad = wrong[static_cast<std::size_t>(vp.id())];
        for (int i = 0; i < splits; ++i) {
          const hc::Group g = hc::split(vp.world(), (vp.id() + i) % 2, vp.id());
          std::vector<long> buf(3, g.rank() == i % g.size() ? i : -1);
          hc::broadcast(g, std::span<long>(buf), i % g.size());
          bad += buf != std::vector<long>(3, i);
          bad += hc::scan(g, long{1}, std::plus<>()) != g.rank() + 1;
        }
      },
      hctest::test_options());
  CHECK(wrong == std::vector<long>(static_cast<std::size_t>(t.size()), 0));
}

// A group's chain is kept for the next run's group of the same members (Fabric::group_chain):
// runs of few and of many calls (past its 64 slots), aborted ones among them, rows and columns,
// and splits whose colors stay or change from run to run, each find every slot they reach free.
TEST_CASE("runs after runs of the same groups, some aborted, take their chains again whole") {
  const hc::Topology t = hc::Topology::mesh(4, 4);
  hc::Machine machine(t, hctest::test_options());
  const int p = t.size();
  struct Plan {
    int calls;
    int colors;   // a split of the machine into this many groups (by id mod colors)
    int fail_at;  // -1: the run ends whole
  };
  const std::vector<Plan> plans{{3, 2, -1},  {150, 2, -1}, {1, 2, -1}, {0, 3, -1},
                                {40, 3, 33}, {90, 3, -1},  {5, 2, -1}, {130, 2, 101},
                                {2, 2, -1},  {200, 4, -1}, {7, 4, -1}};
  for (const Plan& plan : plans) {
    CAPTURE(plan.calls);
    CAPTURE(plan.colors);
    std::vector<long> wrong(static_cast<std::size_t>(p), 0);
    const auto body = [&](hc::Proc& vp) {
      const int me = vp.id();
      const hc::Group split = hc::split(vp.world(), me % plan.colors, -me);
      for (int i = 0; i < plan.calls; ++i) {
        if (me == 6 && i == plan.fail_at) throw std::runtime_error("VP 6 gives up");
        const hc::Group g = i % 3 == 0 ? vp.row() : i % 3 == 1 ? vp.column() : split;
        const int r = g.rank(), n = g.size(), root = i % n;
        if (i % 2 == 0) {
          const long got = hc::scan(g, long{r + i}, std::plus<>());
          wrong[static_cast<std::size_t>(me)] += got != long{r} * (r + 1) / 2 + long{r + 1} * i;
        } else {
          const long got = hc::broadcast(g, long{r == root ? i : -1}, root);
          wrong[static_cast<std::size_t>(me)] += got != i;
        }
      }
    };
    if (plan.fail_at < 0) {
      machine.run(body);
      CHECK(wrong == std::vector<long>(static_cast<std::size_t>(p), 0));
    } else {
      CHECK_THROWS_WITH_AS(machine.run(body), "VP 6 gives up", std::runtime_error);
    }
  }
}

TEST_CASE(
    "a VP that leaves one group's prefix or rooted meeting early keeps its clock in another") {
  // Rank 0 of a scan and the root of a broadcast leave before the others come: the clock that
  // meeting sets is this VP's next seat's, in whichever chain (the machine's, another group's).
  for (const auto& t : {hc::Topology::mesh(4, 4), hc::Topology::hypercube(4)}) {
    CAPTURE(t.name());
    const auto body = [&](hc::Proc& vp, auto& keep) {
      const bool mesh = t.kind() == hc::Topology::Kind::mesh;
      const hc::Group a = mesh ? vp.row() : vp.subcube(0b0011);
      const hc::Group b = mesh ? vp.column() : vp.subcube(0b1100);
      for (int i = 0; i < 20; ++i) {
        std::vector<double> x(1 + i % 3, tricky(vp.id(), static_cast<std::size_t>(i)));
        keep(std::vector<double>{hc::scan(a, x[0], std::plus<>())});
        hc::broadcast(vp, std::span<double>(x), i % t.size());
        keep(x);
        keep(std::vector<double>{hc::scan(b, x[0] * 3, std::plus<>())});
        hc::broadcast(a, std::span<double>(x), i % a.size());
        keep(x);
        hc::reduce(b, std::span<const double>(x), std::span<double>(x), std::plus<>(), 0);
        keep(x);
        keep(std::vector<double>{vp.clock()});
      }
    };
    hc::Options o = model_options();
    const hctest::MeetingResults meeting = hctest::run_keeping(t, o, body);
    o.record = true;
    check_same(hctest::run_keeping(t, o, body), meeting);
  }
}

TEST_CASE(
    "a VP that fails while other groups meet: they leave their meetings, nothing read after") {
  // Row 0's VP throws in the middle of a loop that the other rows run through meetings whose
  // last arriver reads every member's input (all_to_allv's counts, all_reduce's vector) or
  // writes their results (a scan's chain): the members that leave on the abort must not be read
  // or written after they go (ASan and TSan watch). The run reports the VP's own error.
  const hc::Topology t = hc::Topology::mesh(4, 4);
  hc::Machine machine(t, hctest::test_options());
  for (int round = 0; round < (hctest::kSanitized ? 10 : 40); ++round) {
    CAPTURE(round);
    try {
      machine.run([&](hc::Proc& vp) {
        const hc::Group row = vp.row();
        const int n = row.size();
        std::vector<std::size_t> counts(static_cast<std::size_t>(n), 3);
        std::vector<double> out(3 * static_cast<std::size_t>(n), 1.0), in(out.size());
        for (int i = 0;; ++i) {
          if (vp.id() == 1 && i == 20 + round % 7) throw std::runtime_error("VP 1 fails");
          hc::all_to_allv(row, std::span<const double>(out), counts, std::span<double>(in), counts);
          (void)hc::scan(row, 1.0 * i, std::plus<>());
          (void)hc::all_reduce(row, 1.0, std::plus<>());
        }
      });
      FAIL("the run returned");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).find("VP 1 fails") != std::string::npos);
    }
  }
}
