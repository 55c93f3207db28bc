// hypercomm::mpi under mpirun (scripts/test runs it with -np 2 and -np 4): the collective suites
// on machines split over the processes, groups that cross processes, the results compared with
// the same run in one process and with MPI's own collectives, random traffic over the sizes
// where a message changes its way between processes, failures and deadlocks across processes
// (every process gets an exception, none hangs), and a Machine kept across runs.
//
// Every process runs every case in the same order. A failed check is counted, not thrown; at the
// end the counts are summed over the processes and process 0 prints the summary.
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <hypercomm/mpi.hpp>
#include <iterator>
#include <mutex>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"  // kSanitized
#include "traffic.hpp"

namespace hc = hypercomm;

namespace {

int rank_ = 0, processes_ = 1;
std::atomic<int> failures{0};
std::atomic<long> checks{0};
std::mutex print_mutex;

#define CHECK(cond) check_that((cond), #cond, __FILE__, __LINE__)
void check_that(bool ok, const char* what, const char* file, int line) {
  checks.fetch_add(1, std::memory_order_relaxed);
  if (ok) return;
  failures.fetch_add(1);
  const std::lock_guard lock(print_mutex);
  std::fprintf(stderr, "process %d: FAILED %s (%s:%d)\n", rank_, what, file, line);
}

hc::Options quick() {
  hc::Options o;
  o.model = hc::CostModel{.ts = 2.0, .tw = 0.5, .th = 0.25};
  // Short enough for the deadlock cases, long enough that a VP or communication thread kept
  // off the cores for a while (sanitizers, a loaded CI machine) is not taken for a deadlock.
  o.deadlock_timeout = std::chrono::seconds(2);
  return o;
}

// ---------------------------------------------------------------- the collective suite

// Every collective of the chapter with results checked on every VP against a sequential oracle;
// values depend on the VP and the round, so a block from the wrong VP shows.
void collective_suite(hc::Proc& vp) {
  const int p = vp.size(), me = vp.id();
  auto value = [](int vp_id, int i) { return static_cast<long>(vp_id * 1000 + i * 7 + 1); };
  for (const std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{3000}}) {
    std::vector<long> in(n), out(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = value(me, static_cast<int>(i));
    auto sum_of = [&](std::size_t i, int upto) {
      long s = 0;
      for (int v = 0; v < upto; ++v) s += value(v, static_cast<int>(i));
      return s;
    };
    hc::all_reduce(vp, in, out, std::plus<>{});
    for (std::size_t i = 0; i < n; ++i) CHECK(out[i] == sum_of(i, p));

    for (const int root : {0, p - 1, p / 2}) {
      std::vector<long> buf = me == root ? in : std::vector<long>(n, -1);
      hc::broadcast(vp, buf, root);
      for (std::size_t i = 0; i < n; ++i) CHECK(buf[i] == value(root, static_cast<int>(i)));
      std::vector<long> red(me == root ? n : 0);
      hc::reduce(vp, in, red, std::plus<>{}, root);
      if (me == root)
        for (std::size_t i = 0; i < n; ++i) CHECK(red[i] == sum_of(i, p));
    }
    hc::scan(vp, in, out, std::plus<>{});
    for (std::size_t i = 0; i < n; ++i) CHECK(out[i] == sum_of(i, me + 1));

    std::vector<long> all(n * static_cast<std::size_t>(p));
    hc::all_gather(vp, in, all);
    for (int v = 0; v < p; ++v)
      for (std::size_t i = 0; i < n; ++i)
        CHECK(all[static_cast<std::size_t>(v) * n + i] == value(v, static_cast<int>(i)));

    // all_to_all: block j of VP i's in -> block i of VP j's out.
    std::vector<long> blocks(n * static_cast<std::size_t>(p)), got(blocks.size());
    for (int j = 0; j < p; ++j)
      for (std::size_t i = 0; i < n; ++i)
        blocks[static_cast<std::size_t>(j) * n + i] = me * 100000 + j * 100 + static_cast<long>(i);
    hc::all_to_all(vp, blocks, got);
    for (int src = 0; src < p; ++src)
      for (std::size_t i = 0; i < n; ++i)
        CHECK(got[static_cast<std::size_t>(src) * n + i] ==
              src * 100000 + me * 100 + static_cast<long>(i));

    hc::reduce_scatter(vp, blocks, out, std::plus<>{});
    for (std::size_t i = 0; i < n; ++i) {
      long s = 0;
      for (int v = 0; v < p; ++v) s += v * 100000 + me * 100 + static_cast<long>(i);
      CHECK(out[i] == s);
    }
    hc::circular_shift(vp, in, out, 3);
    for (std::size_t i = 0; i < n; ++i)
      CHECK(out[i] == value(((me - 3) % p + p) % p, static_cast<int>(i)));

    std::vector<long> scattered(n);
    hc::scatter(vp, me == 1 % p ? blocks : std::vector<long>{}, scattered, 1 % p);
    for (std::size_t i = 0; i < n; ++i)
      CHECK(scattered[i] == (1 % p) * 100000 + me * 100 + static_cast<long>(i));
    std::vector<long> gathered(me == 0 ? blocks.size() : 0);
    hc::gather(vp, in, gathered, 0);
    if (me == 0)
      for (int v = 0; v < p; ++v)
        for (std::size_t i = 0; i < n; ++i)
          CHECK(gathered[static_cast<std::size_t>(v) * n + i] == value(v, static_cast<int>(i)));
    hc::barrier(vp);
  }
  // Messages large enough for a VP to send them over MPI straight from its buffer (where the
  // VPs drive MPI), in both directions at once and one way.
  {
    const std::size_t n = 40000;  // 320 KB
    std::vector<long> in(n), out(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = value(me, static_cast<int>(i));
    hc::all_reduce(vp, in, out, std::plus<>{});
    for (std::size_t i = 0; i < n; i += 97) {
      long s = 0;
      for (int v = 0; v < p; ++v) s += value(v, static_cast<int>(i));
      CHECK(out[i] == s);
    }
    std::vector<long> buf = me == p - 1 ? in : std::vector<long>(n, -1);
    hc::broadcast(vp, buf, p - 1);
    for (std::size_t i = 0; i < n; ++i) CHECK(buf[i] == value(p - 1, static_cast<int>(i)));
    hc::circular_shift(vp, in, out, 1);
    for (std::size_t i = 0; i < n; ++i)
      CHECK(out[i] == value((me - 1 + p) % p, static_cast<int>(i)));
  }
  // A non-commutative operator: the left fold in VP order.
  struct Affine {  // x -> a * x + b
    long a, b;
  };
  struct Compose {  // f then g
    Affine operator()(Affine f, Affine g) const {
      return {(g.a * f.a) % 1000003, (g.a * f.b + g.b) % 1000003};
    }
  };
  const Affine mine{me + 2, me * 3 + 1};
  const Affine folded = hc::all_reduce(vp, mine, Compose{});
  Affine expect{1, 0};
  for (int v = 0; v < p; ++v) expect = Compose{}(expect, Affine{v + 2, v * 3 + 1});
  CHECK(folded.a == expect.a && folded.b == expect.b);

  // Irregular: uneven counts with zeros.
  std::vector<std::size_t> counts(static_cast<std::size_t>(p));
  for (int v = 0; v < p; ++v)
    counts[static_cast<std::size_t>(v)] = static_cast<std::size_t>((v * 5) % 7);
  std::vector<long> mine_v(counts[static_cast<std::size_t>(me)], me);
  std::vector<long> every(std::accumulate(counts.begin(), counts.end(), std::size_t{0}));
  hc::all_gatherv(vp, mine_v, every, counts);
  std::size_t at = 0;
  for (int v = 0; v < p; ++v)
    for (std::size_t k = 0; k < counts[static_cast<std::size_t>(v)]; ++k) CHECK(every[at++] == v);
  std::vector<std::vector<long>> to(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j)
    to[static_cast<std::size_t>(j)].assign(static_cast<std::size_t>((me + j) % 3), me * 10 + j);
  const auto from = hc::all_to_allv(vp, to);
  for (int i = 0; i < p; ++i) {
    CHECK(from[static_cast<std::size_t>(i)].size() == static_cast<std::size_t>((i + me) % 3));
    for (const long x : from[static_cast<std::size_t>(i)]) CHECK(x == i * 10 + me);
  }
}

// Groups that cross processes: rows, columns, subcubes and a split.
void group_suite(hc::Proc& vp) {
  const hc::Topology& t = vp.topology();
  const int me = vp.id();
  if (t.name().rfind("mesh", 0) == 0) {
    hc::Group row = vp.row(), column = vp.column();
    const long row_sum = hc::all_reduce(row, static_cast<long>(me), std::plus<>{});
    long expect = 0;
    for (int r = 0; r < row.size(); ++r) expect += row.vp(r);
    CHECK(row_sum == expect);
    std::vector<int> buf{column.rank() == 0 ? me : -1};
    hc::broadcast(column, buf, 0);
    CHECK(buf[0] == column.vp(0));
    const auto ids = hc::all_gather(column, me);
    for (int r = 0; r < column.size(); ++r) CHECK(ids[static_cast<std::size_t>(r)] == column.vp(r));
  }
  if (t.name().rfind("hypercube", 0) == 0 && vp.size() >= 4) {
    for (const unsigned mask : {1u, 2u, 3u, static_cast<unsigned>(vp.size() - 1) & 0xAu}) {
      if (mask == 0) continue;
      hc::Group cube = vp.subcube(mask);
      const long s = hc::all_reduce(cube, static_cast<long>(me), std::plus<>{});
      long expect = 0;
      for (int r = 0; r < cube.size(); ++r) expect += cube.vp(r);
      CHECK(s == expect);
    }
  }
  // Split: even and odd VPs, ranked in reverse: each group spans the processes.
  hc::Group half = hc::split(vp.world(), me % 2, -me);
  const auto members = hc::all_gather(half, me);
  for (std::size_t r = 0; r + 1 < members.size(); ++r) CHECK(members[r] > members[r + 1]);
  for (const int m : members) CHECK(m % 2 == me % 2);
  std::vector<int> token{half.rank()};
  hc::circular_shift(half, std::vector<int>{half.rank()}, token, 1);
  CHECK(token[0] == (half.rank() - 1 + half.size()) % half.size());
}

// The Report of the machine split over the processes equals that of one process running it all:
// clocks, counts and link traffic.
void same_report(const hc::Report& a, const hc::Report& b, const char* what) {
  bool ok = a.clocks == b.clocks && a.model_time == b.model_time && a.messages == b.messages &&
            a.bytes == b.bytes && a.link_traffic.size() == b.link_traffic.size() &&
            a.topology == b.topology;
  if (ok)
    for (const auto& [link, stats] : a.link_traffic) {
      auto it = b.link_traffic.find(link);
      ok = ok && it != b.link_traffic.end() && it->second.messages == stats.messages &&
           it->second.bytes == stats.bytes;
    }
  if (!ok && rank_ == 0)
    std::fprintf(stderr, "%s: reports differ: model %g vs %g, messages %llu vs %llu\n", what,
                 a.model_time, b.model_time, static_cast<unsigned long long>(a.messages),
                 static_cast<unsigned long long>(b.messages));
  CHECK(ok);
}

void run_suites() {
  // (hypercube:2 on 2 cores: VPs that share the cores, not more than twice as many, as the
  // post board's use and a crowded node's rings tell apart: mpi_remote.cpp.)
  // Under a sanitizer (7-20x slower) four of them: a split into unequal blocks, an open mesh, VPs
  // that share the cores, one VP per process; the release run takes them all.
  const std::vector<const char*> names =
      hctest::kSanitized
          ? std::vector<const char*>{"ring:5", "mesh:2x3:open", "hypercube:2", "hypercube:1"}
          : std::vector<const char*>{"hypercube:4", "mesh:4x4",      "ring:6",
                                     "ring:5",      "mesh:2x3:open", "linear:7",
                                     "hypercube:3", "hypercube:2",   "hypercube:1"};
  for (const char* name : names) {
    const hc::Topology t = hc::Topology::parse(name);
    if (t.size() < processes_) continue;
    // Automatic chooses as `run` does in one process with the job's cores: here, unless this
    // process may run on fewer (mpirun --bind-to core), where the run alone would choose
    // otherwise and its Report is no reference.
    const bool comparable = hc::mpi::Machine(MPI_COMM_WORLD, t, quick()).shared_core_count() ==
                            hc::shared_core_count(t);
    const auto same_report_here = [&](const hc::Report& a, const hc::Report& b) {
      if (comparable) same_report(a, b, name);
    };
    for (const bool record : {false, true}) {
      hc::Options o = quick();
      o.record = record;
      auto body = [](hc::Proc& vp) {
        collective_suite(vp);
        group_suite(vp);
      };
      const hc::Report spread = hc::mpi::run(MPI_COMM_WORLD, t, body, o);
      const hc::Report alone = hc::run(t, body, o);
      same_report_here(spread, alone);
      if (record) {
        CHECK(spread.operations.size() == static_cast<std::size_t>(t.size()));
        CHECK(spread.replay({.cost = o.model}).model_time == spread.model_time);
      }
    }
    // Contention is timed by replaying every process's operations.
    hc::Options o = quick();
    o.model.contention = true;
    auto body = [](hc::Proc& vp) { collective_suite(vp); };
    same_report_here(hc::mpi::run(MPI_COMM_WORLD, t, body, o), hc::run(t, body, o));
  }
}

// ---------------------------------------------------------------- floods

// One-way traffic far past what the Remote keeps in flight (mpi_remote_protocol.hpp, kInFlight):
// each VP of the lower half sends thousands of small messages, and now and then a large one, to the
// VP half the machine away (another process) and finishes at once, its messages still queued, and
// the VPs of the upper half, which start late, take them in order (a finish announced before
// its VP's last messages have left would make them see a VP gone). Then a broadcast called
// back to back, the root running ahead.
// Every VP sends to every VP of the other processes, all at once, messages whose sizes fall on
// both sides of what a ring between two processes of a node takes (a quarter of the ring with
// the 48-byte header: 64 KiB up to 13 processes, 32 KiB at 14-19, 16 KiB at 20-26;
// node_rings.cpp), in an order no two channels share, with runs of small ones and records of
// up to 64 KiB that fill the rings, and messages that the ring does not take or past 64 KiB,
// which a VP sends from its own buffer where it has a core: whichever way each message went,
// ring or MPI, every channel's must arrive whole and in order.
void mixed_sizes() {
  const hc::Topology t = hc::Topology::hypercube(3);
  if (t.size() < processes_) return;
  const int per_channel = hctest::kSanitized ? 300 : 600;  // a run of small ones, then mixed
  // In longs: 2042, 4090 and 8186 are the most a ring of 64, 128 and 256 KiB takes (16336,
  // 32720 and 65488 bytes and the header), one more the least it does not; 9000 (72 KB) is
  // past 64 KiB.
  const std::size_t sizes[] = {1, 1, 3, 100, 2042, 2043, 4090, 4091, 8186, 8187, 9000};
  auto size_of = [&](int from, int to, int k) -> std::size_t {
    if ((k / 150) % 2 == 0) return 1 + static_cast<std::size_t>(k % 3);  // a run of small ones
    const auto h = static_cast<std::uint32_t>(from * 7919 + to * 104729 + k * 2654435761u);
    return sizes[(h >> 7) % std::size(sizes)];
  };
  auto value = [](int from, int to, int k) { return from * 10000000L + to * 100000L + k; };
  hc::mpi::Machine machine(MPI_COMM_WORLD, t, quick());
  const int first = machine.first_vp(), last = machine.last_vp();
  const auto here = [&](int vp) { return first <= vp && vp < last; };
  for (int repeat = 0; repeat < 2; ++repeat) {
    const hc::Report r = machine.run([&](hc::Proc& vp) {
      const int me = vp.id(), p = vp.size();
      for (int k = 0; k < per_channel; ++k)
        for (int to = 0; to < p; ++to)
          if (!here(to)) vp.send(to, std::vector<long>(size_of(me, to, k), value(me, to, k)));
      for (int k = 0; k < per_channel; ++k)
        for (int from = 0; from < p; ++from) {
          if (here(from)) continue;
          std::vector<long> got(size_of(from, me, k));
          vp.recv(from, got);
          CHECK(got.front() == value(from, me, k) && got.back() == value(from, me, k));
        }
    });
    // Ordered pairs of VPs in different processes (the blocks of API.md: contiguous, the first
    // p mod n processes one VP more).
    const int base = t.size() / processes_, extra = t.size() % processes_;
    const auto owner = [&](int vp) {
      const int big = extra * (base + 1);
      return vp < big ? vp / (base + 1) : extra + (vp - big) / base;
    };
    long remote_channels = 0;
    for (int a = 0; a < t.size(); ++a)
      for (int b = 0; b < t.size(); ++b) remote_channels += owner(a) != owner(b) ? 1 : 0;
    CHECK(r.messages == static_cast<std::uint64_t>(remote_channels * per_channel));
  }
}

// Large messages between processes (on one node: left in the sender's buffer and read by the
// receiving process, mpi_send.cpp's send_in_place; else over MPI from the sender's buffer) in
// the patterns that make a sender wait for its read: blocking sends in a cycle before any
// receive is posted (a ring shift, a pairwise exchange), a receiver that posts late, and the
// exchanges of back-to-back collectives. Every byte must arrive, in order, and nothing hang.
void large_messages() {
  const hc::Topology t = hc::Topology::hypercube(3);
  if (t.size() < processes_) return;
  const auto fill = [](std::vector<long>& x, int from, int round) {
    for (std::size_t k = 0; k < x.size(); ++k)
      x[k] = from * 1000000007L + round * 7919L + static_cast<long>(k);
  };
  const auto whole = [](const std::vector<long>& x, int from, int round) {
    for (std::size_t k = 0; k < x.size(); ++k)
      if (x[k] != from * 1000000007L + round * 7919L + static_cast<long>(k)) return false;
    return true;
  };
  hc::mpi::Machine machine(MPI_COMM_WORLD, t, quick());
  for (const std::size_t longs : {std::size_t{9000}, std::size_t{40000}, std::size_t{131072}}) {
    (void)machine.run([&](hc::Proc& vp) {
      const int me = vp.id(), p = vp.size();
      std::vector<long> out(longs), in(longs);
      for (int round = 0; round < 6; ++round) {
        // Everyone sends to the right, then receives from the left: a cycle of blocked sends.
        fill(out, me, round);
        vp.send((me + 1) % p, out);
        vp.recv((me + p - 1) % p, in);
        CHECK(whole(in, (me + p - 1) % p, round));
        // Partners in the other half (another process where there are 2 or more) both send
        // first, then receive.
        const int partner = me ^ (p / 2);
        fill(out, me, round + 100);
        vp.send(partner, out);
        vp.recv(partner, in);
        CHECK(whole(in, partner, round + 100));
        // The same, as one exchange (the receive posted first).
        fill(out, me, round + 200);
        vp.sendrecv(partner, out, in);
        CHECK(whole(in, partner, round + 200));
        // In place, out and in one buffer: sent before it is written.
        fill(out, me, round + 250);
        vp.sendrecv(partner, out, out);
        CHECK(whole(out, partner, round + 250));
      }
      // A receiver that posts late: the sender waits past any hold, its message queued.
      if (me == 0) {
        fill(out, me, 300);
        vp.send(p - 1, out);
      } else if (me == p - 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        vp.recv(0, in);
        CHECK(whole(in, 0, 300));
      }
      // Two VPs (of one process, where there are up to 4) send to one of another process at
      // once, which takes them in the other order: its receive offered to one sender
      // (mpi_send.cpp, write_into_post) is never filled by the other.
      for (int round = 0; round < 4; ++round) {
        if (me == 0 || me == 1) {
          fill(out, me, 500 + round);
          vp.send(p - 1, out);
        } else if (me == p - 1) {
          for (const int from : {1, 0}) {
            vp.recv(from, in);
            CHECK(whole(in, from, 500 + round));
          }
        }
      }
      // Collectives of large blocks back to back.
      std::vector<long> block(longs / 8), all(longs / 8 * static_cast<std::size_t>(p));
      for (int round = 0; round < 3; ++round) {
        fill(block, me, round);
        hc::all_gather(vp, block, all);
        for (int from = 0; from < p; ++from)
          CHECK(whole(std::vector<long>(all.begin() + from * static_cast<long>(block.size()),
                                        all.begin() + (from + 1) * static_cast<long>(block.size())),
                      from, round));
        if (me == round) fill(out, me, round + 400);
        hc::broadcast(vp, out, round);
        CHECK(whole(out, round, round + 400));
      }
    });
  }
}

// Large messages between the two VPs of hypercube:1 over 2 processes, each VP on a core of its
// own: the copy of a message left in place is shared by the two processes, chunk by chunk
// (mpi_send.cpp, shared_chunk_bytes), where the receiver's own message to the sender does not
// wait for it (an exchange is copied whole by each side). Sizes at and around the least shared
// (two chunks of 64 KiB), not a whole number of chunks or pages; one way with the receive
// posted first or after the message came (read onto the channel then), both ways at once, and
// the rooted collectives back to back. Every byte must arrive.
void shared_copies() {
  if (processes_ != 2) return;
  // Byte k of VP from's message in a round: no two chunks (nor pages) alike.
  const auto byte_of = [](std::size_t k, int from, int round) {
    return static_cast<unsigned char>((k * 131 + k / 4096 + static_cast<std::size_t>(from) * 7 +
                                       static_cast<std::size_t>(round) * 29) &
                                      0xff);
  };
  const auto fill = [&](std::span<unsigned char> x, int from, int round) {
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = byte_of(k, from, round);
  };
  const auto whole = [&](std::span<const unsigned char> x, int from, int round) {
    for (std::size_t k = 0; k < x.size(); ++k)
      if (x[k] != byte_of(k, from, round)) return false;
    return true;
  };
  hc::mpi::Machine machine(MPI_COMM_WORLD, hc::Topology::hypercube(1), quick());
  for (const std::size_t bytes :
       {std::size_t{128} << 10, (std::size_t{128} << 10) - 1, (std::size_t{128} << 10) + 1,
        (std::size_t{256} << 10) + 4093, std::size_t{1} << 20, (std::size_t{5} << 20) + 17}) {
    (void)machine.run([&](hc::Proc& vp) {
      const int me = vp.id(), other = 1 - me;
      std::vector<unsigned char> out(bytes), in(bytes);
      for (int round = 0; round < 4; ++round) {
        fill(out, me, round);
        if (me == round % 2) {
          vp.send(other, out);
        } else {
          if (round >= 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
          vp.recv(other, in);
          CHECK(whole(in, other, round));
        }
        fill(out, me, round + 10);
        vp.sendrecv(other, out, in);
        CHECK(whole(in, other, round + 10));
        const int root = round % 2;
        if (me == root) fill(out, me, round + 20);
        hc::broadcast(vp, std::span<unsigned char>(out), root);
        CHECK(whole(out, root, round + 20));
        std::vector<unsigned char> halves(2 * bytes);
        const auto half = [&](int v) { return std::span(halves).subspan(v * bytes, bytes); };
        if (me == root)
          for (int v = 0; v < 2; ++v) fill(half(v), v, round + 30);
        hc::scatter(vp, std::span<const unsigned char>(halves), std::span<unsigned char>(in), root);
        CHECK(whole(in, me, round + 30));
        fill(out, me, round + 40);
        hc::gather(vp, std::span<const unsigned char>(out), std::span<unsigned char>(halves), root);
        if (me == root)
          for (int v = 0; v < 2; ++v) CHECK(whole(half(v), v, round + 40));
      }
    });
  }
}

// Random traffic between processes (tests/traffic.hpp), over the sizes where a message changes
// its way from one process to another, in longs: 2048 (16 KiB: a record held at the ring's
// front for a receiver about to post), 4096 (32 KiB: written into a post offered on the board)
// and 8192 (64 KiB: left in its sender's buffer), and one fewer; 8186 / 8187 and 16378 / 16379,
// the most a ring of 256 / 512 KiB takes and one more; 1 MiB.
constexpr std::size_t kTrafficSizes[] = {1,    1,    3,    13,   200,  2047,  2048,  4095,  4096,
                                         4100, 8186, 8187, 8191, 8192, 16378, 16379, 40000, 131072};
void traffic(hc::Proc& vp, std::uint64_t seed, int steps, int thrower = -1, int throw_at = -1) {
  hctest::traffic(
      vp, kTrafficSizes, seed, steps,
      [](bool ok, const char* what) { check_that(ok, what, __FILE__, __LINE__); }, thrower,
      throw_at);
}

// MPI_SUITE_SEEDS=n: n plans of random traffic on each topology (6; 1 under a sanitizer, whose
// run checks the same ways a message takes 7-20x slower, the plans' variety left to the release
// run), and 4n runs that fail amid it (24; 4), for a longer soak by hand.
std::uint64_t soak_seeds() {
  const char* const text = std::getenv("MPI_SUITE_SEEDS");
  return text != nullptr ? std::strtoull(text, nullptr, 10)
                         : std::uint64_t{hctest::kSanitized ? 1 : 6};
}

void random_traffic() {
  const std::uint64_t seeds = soak_seeds();
  // Under a sanitizer plans of 60 steps, and not on the 16 VPs of hypercube:4.
  for (const hc::Topology& t :
       {hc::Topology::hypercube(3), hc::Topology::hypercube(4), hc::Topology::ring(6)}) {
    if (t.size() < processes_ || (hctest::kSanitized && t.size() > 8)) continue;
    hc::mpi::Machine machine(MPI_COMM_WORLD, t, quick());
    for (std::uint64_t seed = 11; seed < 11 + seeds; ++seed)
      (void)machine.run([&](hc::Proc& vp) { traffic(vp, seed, hctest::kSanitized ? 60 : 120); });
    // Two split groups at once, across the processes, ranked against the VP ids: their messages
    // share the channels between the same VPs and must not mix.
    (void)machine.run([&](hc::Proc& vp) {
      hc::Group half = hc::split(vp.world(), vp.id() % 2, -vp.id());
      hctest::traffic(half, kTrafficSizes, 41 + static_cast<std::uint64_t>(vp.id() % 2), 60,
                      [](bool ok, const char* what) { check_that(ok, what, __FILE__, __LINE__); });
    });
  }
}

void flood_suite() {
  const hc::Topology t = hc::Topology::hypercube(3);
  if (t.size() < processes_) return;
  const int messages = 3000;
  auto body = [&](hc::Proc& vp) {
    const int p = vp.size(), me = vp.id();
    // 40 KB: on a ring of 256 KiB, else (over MPI alone) a spill.
    auto size_of = [](int k) { return k % 500 == 499 ? 5000 : 1; };
    if (me < p / 2) {
      for (int k = 0; k < messages; ++k)
        vp.send(me + p / 2, std::vector<long>(size_of(k), me * 100000L + k));
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past the spin, asleep
    const int from = me - p / 2;
    for (int k = 0; k < messages; ++k) {
      std::vector<long> got(size_of(k));
      vp.recv(from, got);
      CHECK(got.front() == from * 100000L + k && got.back() == from * 100000L + k);
    }
  };
  const hc::Report r = hc::mpi::run(MPI_COMM_WORLD, t, body, quick());
  CHECK(r.messages == static_cast<std::uint64_t>(t.size() / 2) * messages);
  mixed_sizes();
  large_messages();
  shared_copies();
  (void)hc::mpi::run(
      MPI_COMM_WORLD, t,
      [](hc::Proc& vp) {
        std::vector<long> buf(1);
        for (long k = 0; k < 5000; ++k) {
          if (vp.id() == 0) buf[0] = k;
          hc::broadcast(vp, std::span<long>(buf), 0);
          CHECK(buf[0] == k);
        }
      },
      quick());
}

// ---------------------------------------------------------------- placement

// Where each VP runs (Pinning::compact, the default; runtime/src/machine.cpp): the node's j-th
// VP on the (j mod n)-th of the n CPUs its process may use, or, where the node's VPs outnumber
// the node's CPUs and every process may use them all (mpirun --bind-to none), on the
// (j * n / VPs)-th: the node's VPs in blocks of consecutive ids. Every process of a test runs on
// one node, its VPs after those of the lower ranks. Each VP reads its own affinity mask in the
// body, so a VP pinned elsewhere, or not at all, fails here.
void placement() {
  cpu_set_t mine, node;
  CPU_ZERO(&mine);
  CHECK(sched_getaffinity(0, sizeof mine, &mine) == 0);
  CPU_ZERO(&node);
  MPI_Allreduce(&mine, &node, static_cast<int>(sizeof(cpu_set_t)), MPI_BYTE, MPI_BOR,
                MPI_COMM_WORLD);
  int whole = CPU_EQUAL(&mine, &node) ? 1 : 0, all_whole = 0;
  MPI_Allreduce(&whole, &all_whole, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mine)) cpus.push_back(c);
  const auto n = cpus.size();
  for (const char* name : {"hypercube:1", "hypercube:2", "hypercube:3", "hypercube:4", "ring:6"}) {
    const hc::Topology t = hc::Topology::parse(name);
    if (t.size() < processes_) continue;
    const auto p = static_cast<std::size_t>(t.size());
    std::vector<int> seen(p, -1);
    hc::mpi::Machine machine(MPI_COMM_WORLD, t, quick());
    machine.run([&](hc::Proc& vp) {
      cpu_set_t set;
      CPU_ZERO(&set);
      if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1) return;
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) seen[static_cast<std::size_t>(vp.id())] = c;
    });
    const bool blocks = processes_ > 1 && all_whole == 1 && p > n;
    for (int j = machine.first_vp(); j < machine.last_vp(); ++j) {
      const auto k = static_cast<std::size_t>(j);
      const int expected = all_whole == 1 ? cpus[blocks ? k * n / p : k % n] : -1;
      if (expected < 0) {
        CHECK(seen[k] >= 0 && CPU_ISSET(seen[k], &mine));
        continue;
      }
      CHECK(seen[k] == expected);
      if (seen[k] != expected)
        std::fprintf(stderr, "process %d: %s: VP %d runs on CPU %d, expected %d (%zu CPUs, %s)\n",
                     rank_, name, j, seen[k], expected, n, blocks ? "in blocks" : "round robin");
    }
  }
}

// ---------------------------------------------------------------- against MPI's own collectives

// One VP per process: hypercomm over MPI and MPI itself on the same inputs.
void against_mpi() {
  const int n = 37;
  std::vector<long> in(n);
  for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = rank_ * 7919 + i * 31 + 5;
  std::vector<long> reduced(n), scanned(n), gathered(static_cast<std::size_t>(n * processes_));
  std::vector<long> blocks(static_cast<std::size_t>(n * processes_)), exchanged(blocks.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] = rank_ * 100000 + static_cast<long>(i);
  std::vector<std::string> topologies{"ring:" + std::to_string(processes_),
                                      "linear:" + std::to_string(processes_)};
  if ((processes_ & (processes_ - 1)) == 0) {
    int d = 0;
    while ((1 << d) < processes_) ++d;
    topologies.push_back("hypercube:" + std::to_string(d));
  }
  if (processes_ == 4) topologies.emplace_back("mesh:2x2");
  std::vector<long> mpi_reduced(n), mpi_scanned(n), mpi_gathered(gathered.size()),
      mpi_exchanged(blocks.size());
  MPI_Allreduce(in.data(), mpi_reduced.data(), n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(in.data(), mpi_scanned.data(), n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allgather(in.data(), n, MPI_LONG, mpi_gathered.data(), n, MPI_LONG, MPI_COMM_WORLD);
  MPI_Alltoall(blocks.data(), n, MPI_LONG, mpi_exchanged.data(), n, MPI_LONG, MPI_COMM_WORLD);
  for (const std::string& name : topologies) {
    for (const hc::Algo algo : {hc::Algo::automatic, hc::Algo::ring, hc::Algo::hypercube}) {
      const hc::Topology t = hc::Topology::parse(name);
      if (algo == hc::Algo::hypercube && (t.size() & (t.size() - 1)) != 0) continue;
      hc::mpi::run(
          MPI_COMM_WORLD, t,
          [&](hc::Proc& vp) {
            CHECK(vp.id() == rank_);  // one VP per process, in rank order
            hc::all_reduce(vp, in, reduced, std::plus<>{}, algo);
            hc::scan(vp, in, scanned, std::plus<>{});
            hc::all_gather(vp, in, gathered, algo);
            hc::all_to_all(vp, blocks, exchanged, algo);
          },
          quick());
      CHECK(reduced == mpi_reduced);
      CHECK(scanned == mpi_scanned);
      CHECK(gathered == mpi_gathered);
      CHECK(exchanged == mpi_exchanged);
    }
  }
}

// ---------------------------------------------------------------- failures across processes

struct Outcome {
  int original = 0, aborted = 0, deadlock = 0, mismatch = 0, other = 0, none = 0;
};

template <class Body>
Outcome outcome_of(hc::mpi::Machine& machine, Body&& body) {
  Outcome o;
  try {
    (void)machine.run(body);
    o.none = 1;
  } catch (const hc::Aborted&) {
    o.aborted = 1;
  } catch (const hc::Deadlock&) {
    o.deadlock = 1;
  } catch (const hc::CollectiveMismatch&) {
    o.mismatch = 1;
  } catch (const std::runtime_error& e) {
    o.original = std::string(e.what()).find("injected") != std::string::npos ? 1 : 0;
    o.other = 1 - o.original;
  }
  return o;
}

Outcome summed(const Outcome& mine) {
  Outcome all;
  MPI_Allreduce(&mine, &all, 6, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

int injected = 0, injected_runs_ok = 0;

void failures_suite() {
  int dimension = 3;  // 8 VPs, or one a process past 8 processes
  while ((1 << dimension) < processes_) ++dimension;
  const hc::Topology t = hc::Topology::hypercube(dimension);
  hc::mpi::Machine machine(MPI_COMM_WORLD, t, quick());
  CHECK(machine.processes() == processes_ && machine.process() == rank_);
  // VP `thrower` throws in body: its process gets the original, every other process Aborted
  // naming it; nothing hangs, and the machine runs on.
  const auto injected_run = [&](int thrower, const std::function<void(hc::Proc&)>& body,
                                const std::string& where) {
    std::string text;
    Outcome mine;
    try {
      (void)machine.run(body);
      mine.none = 1;
    } catch (const hc::Aborted& e) {
      mine.aborted = 1;
      text = e.what();
    } catch (const std::runtime_error& e) {
      mine.original = std::string(e.what()).find("injected") != std::string::npos ? 1 : 0;
      mine.other = 1 - mine.original;
      text = e.what();
    }
    const bool owner = machine.first_vp() <= thrower && thrower < machine.last_vp();
    CHECK(owner ? mine.original == 1 : mine.aborted == 1);
    if (!owner) CHECK(text.find("VP " + std::to_string(thrower)) != std::string::npos);
    const Outcome all = summed(mine);
    CHECK(all.original == 1 && all.aborted == processes_ - 1);
    if (all.original != 1 || all.aborted != processes_ - 1)  // what each process saw
      std::fprintf(stderr, "process %d: VP %d throwing %s: %s\n", rank_, thrower, where.c_str(),
                   mine.none != 0 ? "the run returned" : text.c_str());
    ++injected;
    if (all.original == 1 && all.aborted == processes_ - 1) ++injected_runs_ok;
    const hc::Report r = machine.run([](hc::Proc& vp) { hc::barrier(vp); });
    CHECK(r.clocks.size() == static_cast<std::size_t>(t.size()));
  };
  // At each of several points, every VP in turn.
  for (int thrower = 0; thrower < t.size(); ++thrower)
    for (int point = 0; point < 4; ++point)
      injected_run(
          thrower,
          [&](hc::Proc& vp) {
            std::vector<double> x(257, vp.id());
            for (int step = 0; step < 4; ++step) {
              if (vp.id() == thrower && step == point)
                throw std::runtime_error("injected failure in VP " + std::to_string(thrower));
              hc::all_reduce(vp, x, std::plus<>{});
              hc::broadcast(vp, x, step % vp.size());
            }
          },
          "at step " + std::to_string(point));
  // Amid random traffic (random_traffic): messages on the rings, held for their receivers,
  // written into posts, left in their senders' buffers or over MPI when it fails.
  for (std::uint64_t seed = 31; seed < 31 + 4 * soak_seeds(); ++seed) {
    std::mt19937_64 rng(seed);
    const int thrower = static_cast<int>(rng() % static_cast<std::uint64_t>(t.size()));
    const int at = static_cast<int>(rng() % 16);
    injected_run(
        thrower, [&](hc::Proc& vp) { traffic(vp, seed, 16, thrower, at); },
        "at step " + std::to_string(at) + " of random traffic " + std::to_string(seed));
  }
  // A VP that fails while large messages wait for it (left in the senders' buffers, or over
  // MPI): the senders are released, the run ends everywhere.
  for (const int thrower : {0, t.size() - 1}) {
    const Outcome all = summed(outcome_of(machine, [&](hc::Proc& vp) {
      std::vector<long> big(131072, vp.id());
      if (vp.id() == thrower) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        throw std::runtime_error("injected failure in VP " + std::to_string(thrower));
      }
      vp.send(thrower, big);
      vp.recv(thrower, big);
    }));
    CHECK(all.original == 1 && all.aborted == processes_ - 1);
    ++injected;
    if (all.original == 1 && all.aborted == processes_ - 1) ++injected_runs_ok;
    const hc::Report r = machine.run([](hc::Proc& vp) { hc::barrier(vp); });
    CHECK(r.clocks.size() == static_cast<std::size_t>(t.size()));
  }
  // A receive that no one answers, across processes: Deadlock on every process.
  {
    const Outcome all = summed(outcome_of(machine, [](hc::Proc& vp) {
      if (vp.id() == 0) {
        std::vector<int> x(1);
        vp.recv(vp.size() - 1, x);
      }
    }));
    CHECK(all.deadlock == processes_);
  }
  // Everybody waits on somebody in another process: the global watch finds it.
  {
    const Outcome all = summed(outcome_of(machine, [](hc::Proc& vp) {
      std::vector<int> x(1);
      vp.recv((vp.id() + vp.size() / 2) % vp.size(), x);
    }));
    CHECK(all.deadlock == processes_);
  }
  // VPs that disagree on a root across processes: CollectiveMismatch somewhere, never a hang
  // nor wrong data.
  {
    const Outcome all = summed(outcome_of(machine, [](hc::Proc& vp) {
      std::vector<int> x(16, vp.id());
      hc::broadcast(vp, x, vp.id() < vp.size() / 2 ? 0 : vp.size() - 1);
    }));
    CHECK(all.mismatch >= 1 && all.mismatch + all.aborted + all.deadlock == processes_);
  }
  // VPs that reduce with different operators across processes (the digest of the operator's
  // name in the header is the same in every process of one program): CollectiveMismatch.
  // reduce keeps the digest's top four bits beside its root: these two differ there.
  CHECK((hc::detail::operator_digest<long, std::plus<>>() & 0xF000) !=
        (hc::detail::operator_digest<long, hc::max<>>() & 0xF000));
  for (const bool rooted : {false, true}) {
    const Outcome all = summed(outcome_of(machine, [&](hc::Proc& vp) {
      std::vector<long> x(16, vp.id()), y(16);
      const bool odd = vp.id() == vp.size() - 1;
      if (rooted && odd)
        hc::reduce(vp, x, y, hc::max<>{}, 0);
      else if (rooted)
        hc::reduce(vp, x, y, std::plus<>{}, 0);
      else if (odd)
        hc::all_reduce(vp, x, y, hc::max<>{});
      else
        hc::all_reduce(vp, x, y, std::plus<>{});
    }));
    CHECK(all.mismatch >= 1 && all.mismatch + all.aborted + all.deadlock == processes_);
  }
  // One VP passes another root to a reduce and goes on to a ring exchange, where it waits: no
  // VP of its process waits in the reduce to compare headers, so process 0's watch compares
  // the VPs' published calls across processes: CollectiveMismatch, no Deadlock.
  // One VP a process, so that none of the deviant's process stays in the reduce.
  hc::mpi::Machine lone(MPI_COMM_WORLD, hc::Topology::ring(processes_), quick());
  for (const int deviant : {0, 1, processes_ / 2, processes_ - 1}) {
    std::string text;
    Outcome mine;
    try {
      (void)lone.run([&](hc::Proc& vp) {
        const int root = vp.id() == deviant ? 1 : 0;
        std::vector<int> x(2, vp.id()), sum(2);
        hc::reduce(vp, x, sum, std::plus<>{}, root);
        std::vector<int> token{vp.id()}, got(1);
        vp.send((vp.id() + 1) % vp.size(), token);
        vp.recv((vp.id() + vp.size() - 1) % vp.size(), got);
      });
      mine.none = 1;
    } catch (const hc::CollectiveMismatch& e) {
      mine.mismatch = 1;
      text = e.what();
    } catch (const hc::Aborted&) {
      mine.aborted = 1;
    } catch (const hc::Deadlock&) {
      mine.deadlock = 1;
    }
    const Outcome all = summed(mine);
    CHECK(all.mismatch >= 1);
    CHECK(all.deadlock == 0);
    CHECK(all.mismatch + all.aborted == processes_);
    // Named by root, or (a member that finished meanwhile, whose calls were in its process) as
    // a wait for a VP that has finished.
    if (!text.empty())
      CHECK(text.find("root") != std::string::npos ||
            text.find("already finished") != std::string::npos);
  }
  // A wrong size across processes: SizeMismatch where it is found, Aborted elsewhere.
  {
    Outcome mine;
    try {
      (void)machine.run([](hc::Proc& vp) {
        std::vector<int> small(2), big(3);
        if (vp.id() == 0) vp.send(vp.size() - 1, big);
        if (vp.id() == vp.size() - 1) vp.recv(0, small);
      });
      mine.none = 1;
    } catch (const hc::SizeMismatch&) {
      mine.original = 1;
    } catch (const hc::Aborted&) {
      mine.aborted = 1;
    }
    const Outcome all = summed(mine);
    CHECK(all.original == 1 && all.aborted == processes_ - 1);
  }
  // An all_to_allv sender and receiver in different processes that disagree on a block: the
  // receiver's SizeMismatch names both ranks and both counts in elements, though the sender's
  // posted send_counts are in the other process (API.md, Irregular collectives).
  {
    Outcome mine;
    std::string text;
    try {
      (void)machine.run([](hc::Proc& vp) {
        const auto p = static_cast<std::size_t>(vp.size());
        std::vector<std::size_t> send_counts(p, 2), recv_counts(p, 2);
        if (vp.id() == 0) send_counts[p - 1] = 3;
        std::vector<int> in(2 * p + (vp.id() == 0 ? 1 : 0)), out(2 * p);
        hc::all_to_allv(vp, in, send_counts, out, recv_counts);
      });
      mine.none = 1;
    } catch (const hc::SizeMismatch& e) {
      mine.original = 1;
      text = e.what();
    } catch (const hc::Aborted&) {
      mine.aborted = 1;
    }
    const Outcome all = summed(mine);
    CHECK(all.original == 1 && all.aborted == processes_ - 1);
    if (mine.original == 1) {
      const bool named = text.find("rank 0 sends 3 elements") != std::string::npos &&
                         text.find("expects 2") != std::string::npos;
      if (!named) std::fprintf(stderr, "all_to_allv across processes: %s\n", text.c_str());
      CHECK(named);
    }
  }
  // And after all that, the machine still computes.
  const hc::Report r = machine.run([](hc::Proc& vp) { collective_suite(vp); });
  CHECK(r.messages > 0);
}

void misuse() {
  // Fewer VPs than processes: TopologyError on every process.
  if (processes_ > 1) {
    int got = 0;
    try {
      hc::mpi::Machine m(MPI_COMM_WORLD, hc::Topology::ring(processes_ - 1));
    } catch (const hc::TopologyError&) {
      got = 1;
    }
    CHECK(got == 1);
  }
  // Processes that pass different machines: Error on every process, before any VP starts.
  if (processes_ > 1) {
    int got = 0;
    try {
      hc::mpi::Machine m(MPI_COMM_WORLD, hc::Topology::ring(processes_ + (rank_ == 0 ? 0 : 1)));
    } catch (const hc::Error&) {
      got = 1;
    }
    CHECK(got == 1);
  }
  // A value of HYPERCOMM_MPI_RINGS or HYPERCOMM_MPI_PROGRESS that one process does not take:
  // Error on every process, naming the variable there and that process elsewhere (none waits
  // in a collective call the one that threw never makes).
  if (processes_ > 1) {
    for (const char* variable : {"HYPERCOMM_MPI_RINGS", "HYPERCOMM_MPI_PROGRESS"}) {
      const char* before = std::getenv(variable);
      const std::string kept = before != nullptr ? before : "";
      if (rank_ == processes_ - 1) setenv(variable, "sometimes", 1);
      std::string what;
      try {
        hc::mpi::Machine m(MPI_COMM_WORLD, hc::Topology::ring(processes_));
      } catch (const hc::Error& e) {
        what = e.what();
      }
      if (before != nullptr)
        setenv(variable, kept.c_str(), 1);
      else
        unsetenv(variable);
      const std::string last = "process " + std::to_string(processes_ - 1);
      CHECK(what.find(last) != std::string::npos);
      if (rank_ == processes_ - 1)
        CHECK(what.find(std::string(variable) + " is 'sometimes'") != std::string::npos);
    }
  }
  // Blocks: contiguous, p >= n, the first p mod n processes one more.
  const hc::Topology t = hc::Topology::ring(processes_ * 2 + 1);
  hc::mpi::Machine m(MPI_COMM_WORLD, t);
  const int base = t.size() / processes_, extra = t.size() % processes_;
  CHECK(m.first_vp() == rank_ * base + std::min(rank_, extra));
  CHECK(m.last_vp() - m.first_vp() == base + (rank_ < extra ? 1 : 0));
  std::vector<int> owner(static_cast<std::size_t>(t.size()), 0);
  const hc::Report r = m.run([&](hc::Proc& vp) { owner[static_cast<std::size_t>(vp.id())] = 1; });
  for (int v = 0; v < t.size(); ++v)
    CHECK(owner[static_cast<std::size_t>(v)] == (m.first_vp() <= v && v < m.last_vp() ? 1 : 0));
  CHECK(r.clocks.size() == static_cast<std::size_t>(t.size()));
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  // --funneled: only the thread that calls run talks MPI; else the VPs move their own messages
  // (MPI_THREAD_MULTIPLE): the two ways hypercomm::mpi runs (mpi/src/mpi_remote.hpp).
  bool funneled = false;
  for (int k = 1; k < argc; ++k) funneled = funneled || std::strcmp(argv[k], "--funneled") == 0;
  MPI_Init_thread(&argc, &argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &processes_);
  const double start = MPI_Wtime();
  const char* const progress = std::getenv("HYPERCOMM_MPI_PROGRESS");
  const char* const rings = std::getenv("HYPERCOMM_MPI_RINGS");
  const char* const only = std::getenv("MPI_SUITE_ONLY");
  struct Stage {
    const char* name;
    void (*run)();
  };
  for (const Stage& stage :
       {Stage{"collective suites", run_suites}, Stage{"floods", flood_suite},
        Stage{"random traffic", random_traffic}, Stage{"against MPI's collectives", against_mpi},
        Stage{"placement", placement}, Stage{"failures across processes", failures_suite},
        Stage{"misuse", misuse}}) {
    // MPI_SUITE_ONLY=name: that stage alone (by hand, as with MPI_SUITE_SEEDS).
    if (only != nullptr && std::strcmp(only, stage.name) != 0) continue;
    const double t0 = MPI_Wtime();
    stage.run();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank_ == 0)
      std::printf("mpi_suite (%d processes, %s%s%s%s): %-28s %.2f s\n", processes_,
                  funneled ? "MPI_THREAD_FUNNELED" : "MPI_THREAD_MULTIPLE",
                  progress != nullptr ? ", HYPERCOMM_MPI_PROGRESS=" : "",
                  progress != nullptr ? progress : "",
                  rings != nullptr && std::strcmp(rings, "off") == 0
                      ? ", HYPERCOMM_MPI_RINGS=off (every message over MPI)"
                  : rings != nullptr && std::strcmp(rings, "small") == 0
                      ? ", HYPERCOMM_MPI_RINGS=small (large messages over MPI)"
                      : "",
                  stage.name, MPI_Wtime() - t0);
  }
  int failed = failures.load(), all_failed = 0;
  long checked = checks.load(), all_checked = 0;
  MPI_Reduce(&failed, &all_failed, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&checked, &all_checked, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank_ == 0)
    std::printf(
        "mpi_suite (%d processes): %ld checks, %d failed; injected failures: %d runs, %d ended "
        "with the original on its process and Aborted on the others, hangs: 0; %.1f s\n",
        processes_, all_checked, all_failed, injected, injected_runs_ok, MPI_Wtime() - start);
  MPI_Bcast(&all_failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return all_failed == 0 ? 0 : 1;
}
