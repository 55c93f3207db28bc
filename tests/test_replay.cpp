// Report::replay (runtime/src/replay.cpp, whose header states the rules). The default model must
// reproduce the online clocks bit for bit (compared with ==) for many collectives, algorithms,
// topologies and cost models. The extensions, on small cases worked out by hand:
//   half duplex: a receive's data streams in during the tw*m before its arrival a, and the VP
//     takes it only after its earlier operations (b = its clock, or its send half's end in a
//     sendrecv): clock = max(b + tw*m, a). Never earlier than full duplex.
//   store-and-forward: arrival = c + ts + (tw*m + th)*hops.
//   contention: a message enters the network at t >= c + ts and holds link k of its route during
//     [t + o*k, t + o*k + tw*m) (o = th; store-and-forward o = tw*m + th); messages sharing a
//     directed link at overlapping times serialize (a link's idle intervals are used: a message
//     whose links are free goes first), claimed in logical time; the sender's clock becomes
//     t + tw*m.
//   peak link load: a message is in transit on every link of its route during [c, arrival).
//   all ports (cost.all_port): c is the later of the VP's clock and its first link's port being
//     free; the port, not the VP, is busy until t + tw*m; at the end a VP's clock is advanced to
//     its ports' (the run's own rules, which the default replay then reproduces too).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support.hpp"

namespace hc = hypercomm;
using hc::Algo;
using hc::CommOp;
using hc::CostModel;
using hc::Links;
using hc::ReplayModel;
using hc::Topology;

namespace {

hc::Options record_options(CostModel model, Links links = Links::routed) {
  hc::Options o = hctest::test_options();
  o.model = model;
  o.links = links;
  o.record = true;
  return o;
}

ReplayModel replay_model(CostModel cost, bool half = false, bool sf = false, bool cont = false) {
  ReplayModel m;
  m.cost = cost;
  m.half_duplex = half;
  m.store_and_forward = sf;
  m.contention = cont;
  return m;
}

enum class Coll { broadcast, all_reduce, all_gather, all_to_all, scan, barrier };
constexpr Coll kColls[] = {Coll::broadcast,  Coll::all_reduce, Coll::all_gather,
                           Coll::all_to_all, Coll::scan,       Coll::barrier};
constexpr Algo kAlgos[] = {
    Algo::automatic, Algo::hypercube,         Algo::ring, Algo::mesh, Algo::esbt,
    Algo::two_phase, Algo::dimension_exchange};

// A skewing exchange (routed mode only), then the collective twice with different sizes, so that
// the VPs' clocks differ when the collective starts. nullopt when the algorithm cannot run here.
std::optional<hc::Report> run_collective(const Topology& t, Coll coll, Algo a, CostModel model,
                                         Links links) {
  if ((coll == Coll::scan || coll == Coll::barrier) && a != Algo::automatic) return std::nullopt;
  const auto body = [&](hc::Proc& vp) {
    const int p = vp.size(), id = vp.id();
    const auto n = static_cast<std::size_t>(p);
    if (links == Links::routed && p > 1) {
      vp.send((id + 1) % p, std::vector<double>(static_cast<std::size_t>(id) + 1, 1.0));
      std::vector<double> in(static_cast<std::size_t>((id + p - 1) % p) + 1);
      vp.recv((id + p - 1) % p, in);
    }
    for (const std::size_t count : {std::size_t{7}, std::size_t{40}}) {
      std::vector<double> x(count, id), y(count), blocks(count * n, id), out(count * n);
      switch (coll) {
        case Coll::broadcast: hc::broadcast(vp, x, 1 % p, a); break;
        case Coll::all_reduce: hc::all_reduce(vp, x, y, std::plus<>{}, a); break;
        case Coll::all_gather: hc::all_gather(vp, x, out, a); break;
        case Coll::all_to_all: hc::all_to_all(vp, blocks, out, a); break;
        case Coll::scan: hc::scan(vp, x, y, std::plus<>{}); break;
        case Coll::barrier: hc::barrier(vp); break;
      }
    }
  };
  try {
    return hc::run(t, body, record_options(model, links));
  } catch (const hc::AlgorithmError&) {
    return std::nullopt;
  }
}

bool all_at_least(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] >= b[i])) return false;
  return true;
}

CommOp send_op(int dest, std::uint64_t bytes) { return {CommOp::Kind::send, dest, -1, bytes, 0}; }
CommOp recv_op(int src, std::uint64_t bytes) { return {CommOp::Kind::recv, -1, src, 0, bytes}; }
CommOp sendrecv_op(int peer, std::uint64_t bytes) {
  return {CommOp::Kind::sendrecv, peer, peer, bytes, bytes};
}

hc::Report hand_made(const Topology& t, std::vector<std::vector<CommOp>> ops) {
  hc::Report r;
  r.topology = t.name();
  r.operations = std::move(ops);
  return r;
}

}  // namespace

// Runs every collective with every algorithm that can run on each topology, cost model and
// link mode (run_collective) and hands each report to check; returns how many ran.
template <class Check>
int for_each_run(const std::vector<Topology>& topologies, const std::vector<CostModel>& models,
                 Check&& check) {
  int runs = 0;
  for (const Topology& t : topologies) {
    for (const CostModel& model : models) {
      for (const Links links : {Links::routed, Links::strict}) {
        for (const Coll coll : kColls) {
          for (const Algo a : kAlgos) {
            const auto r = run_collective(t, coll, a, model, links);
            if (!r) continue;
            ++runs;
            CAPTURE(t.name());
            CAPTURE(model.ts);
            CAPTURE(model.tw);
            CAPTURE(model.th);
            const int coll_index = static_cast<int>(coll);
            const std::string algo = hc::to_string(a);
            const bool routed = links == Links::routed;
            CAPTURE(coll_index);
            CAPTURE(algo);
            CAPTURE(routed);
            check(*r, t, model, links);
          }
        }
      }
    }
  }
  return runs;
}

TEST_CASE("the default replay reproduces the online clocks bit for bit") {
  const int runs = for_each_run(
      {Topology::ring(5), Topology::mesh(3, 3), Topology::hypercube(3), Topology::hypercube(4)},
      {{.ts = 1, .tw = 0.01, .th = 0.25},
       {.ts = 1, .tw = 0, .th = 0},
       {.ts = 0.3, .tw = 0.7, .th = 0.1},
       {.ts = 0.1, .tw = 1.0 / 3, .th = 0.2}},
      [](const hc::Report& r, const Topology& t, const CostModel& model, Links links) {
        const hc::Replay plain = r.replay(replay_model(model));
        CHECK(plain.clocks == r.clocks);
        CHECK(plain.model_time == r.model_time);
        CHECK(r.replay(replay_model(model), t).clocks == plain.clocks);
        // The links in use are those the run counted traffic on.
        std::vector<std::pair<int, int>> used, counted;
        for (const auto& entry : plain.peak_link_load) used.push_back(entry.first);
        for (const auto& entry : r.link_traffic) counted.push_back(entry.first);
        CHECK(used == counted);
        // The extensions only add time; neighbour-only messages never contend.
        CHECK(all_at_least(r.replay(replay_model(model, true)).clocks, plain.clocks));
        const hc::Replay contended = r.replay(replay_model(model, false, false, true));
        CHECK(all_at_least(contended.clocks, plain.clocks));
        if (links == Links::strict) CHECK(contended.clocks == plain.clocks);
      });
  CHECK(runs >= 200);
  MESSAGE("compared " << runs << " runs");
}

TEST_CASE("all ports: the default replay reproduces the online clocks bit for bit") {
  // CostModel::all_port: a send occupies the first link of its route, not the VP (proc.cpp's
  // departure and sent); the replay times it so, and the run's end settles the ports.
  const int runs = for_each_run(
      {Topology::ring(5), Topology::mesh(3, 3), Topology::hypercube(3)},
      {{.ts = 1, .tw = 0.01, .th = 0.25, .all_port = true},
       {.ts = 0.3, .tw = 0.7, .th = 0.1, .all_port = true}},
      [](const hc::Report& r, const Topology& /*t*/, const CostModel& model, Links links) {
        const hc::Replay plain = r.replay(replay_model(model));
        CHECK(plain.clocks == r.clocks);
        CHECK(plain.model_time == r.model_time);
        // One port never finishes earlier than all ports.
        CostModel one_port = model;
        one_port.all_port = false;
        CHECK(all_at_least(r.replay(replay_model(one_port)).clocks, plain.clocks));
        // A port sends one message at a time, so neighbour-only messages never contend.
        const hc::Replay contended = r.replay(replay_model(model, false, false, true));
        CHECK(all_at_least(contended.clocks, plain.clocks));
        if (links == Links::strict) CHECK(contended.clocks == plain.clocks);
      });
  CHECK(runs >= 100);
  MESSAGE("compared " << runs << " runs");
}

TEST_CASE(
    "all ports with contention: a VP's sends on different links overlap, a shared link "
    "still serializes") {
  const CostModel one{.ts = 1, .tw = 0.5, .th = 0};
  CostModel all = one;
  all.all_port = true;
  // Ring:4: VP 0 sends 10 B to VP 1 (link 0>1) and to VP 3 (link 0>3).
  const auto fan =
      hand_made(Topology::ring(4),
                {{send_op(1, 10), send_op(3, 10)}, {recv_op(0, 10)}, {}, {recv_op(0, 10)}});
  CHECK(fan.replay(replay_model(one)).clocks == std::vector<double>{12, 6, 0, 12});
  CHECK(fan.replay(replay_model(all)).clocks == std::vector<double>{6, 6, 0, 6});
  CHECK(fan.replay(replay_model(all, false, false, true)).clocks ==
        std::vector<double>{6, 6, 0, 6});
  // Two messages on one link wait for the port: the second leaves at 6.
  const auto twice =
      hand_made(Topology::ring(4),
                {{send_op(1, 10), send_op(1, 10)}, {recv_op(0, 10), recv_op(0, 10)}, {}, {}});
  CHECK(twice.replay(replay_model(all)).clocks == std::vector<double>{12, 12, 0, 0});

  // Routed: 0 -> 2 (links 0>1, 1>2) and 1 -> 2 (1>2) at once, then 1 -> 0 (1>0), which VP 0
  // waits for. One port: VP 1's second send waits for its first, which waits for link 1>2 (held
  // by VP 0's message until 6): it leaves at 11. All ports: it leaves at once on link 1>0.
  const auto body = [](hc::Proc& vp) {
    std::vector<char> buf(10);
    if (vp.id() == 0) {
      vp.send(2, buf);
      vp.recv(1, buf);
    } else if (vp.id() == 1) {
      vp.send(2, buf);
      vp.send(0, buf);
    } else if (vp.id() == 2) {
      vp.recv(0, buf);
      vp.recv(1, buf);
    }
  };
  const auto ops = [&](CostModel model) {
    hc::Options o = record_options(model);
    return hc::run(Topology::ring(4), body, o);
  };
  const hc::Report plain_all = ops(all);
  CHECK(plain_all.clocks == std::vector<double>{6, 6, 6, 0});
  CHECK(plain_all.replay(replay_model(one, false, false, true)).clocks ==
        std::vector<double>{17, 17, 11, 0});
  CHECK(plain_all.replay(replay_model(all, false, false, true)).clocks ==
        std::vector<double>{6, 11, 11, 0});
  // The run itself with both switches: its Report is the contention replay's.
  CostModel both = all;
  both.contention = true;
  const hc::Report contended = ops(both);
  CHECK(contended.clocks == std::vector<double>{6, 11, 11, 0});
  CHECK(contended.model_time == 11);
}

TEST_CASE("ESBT's trees share no link at once: with all ports, contention adds nothing") {
  // Johnsson and Ho's d edge-disjoint spanning binomial trees, fed at once through all ports
  // (README, "The cost model's options"): no two of their messages hold a directed link at
  // overlapping times, so the contention replay gives the all-port times exactly.
  for (const int d : {2, 3, 4}) {
    for (const std::size_t bytes : {std::size_t{64}, std::size_t{4096}, std::size_t{65536}}) {
      CAPTURE(d);
      CAPTURE(bytes);
      const CostModel model{.ts = 1, .tw = 0.01, .th = 0.1, .all_port = true};
      const hc::Report r = hc::run(
          Topology::hypercube(d),
          [&](hc::Proc& vp) {
            std::vector<char> buf(bytes, static_cast<char>(vp.id()));
            hc::broadcast(vp, buf, 0, Algo::esbt);
          },
          record_options(model, Links::strict));
      CHECK(r.replay(replay_model(model, false, false, true)).clocks == r.clocks);
    }
  }
}

TEST_CASE("Options::trace records the operations too, and a plain send/recv program replays") {
  hc::Options o = hctest::test_options();
  o.trace = true;
  o.model = {.ts = 0.5, .tw = 0.125, .th = 0.75};
  const auto r = hc::run(
      Topology::mesh(2, 3),
      [](hc::Proc& vp) {
        const int p = vp.size(), id = vp.id();
        for (int k = 1; k < p; ++k)
          vp.send((id + k) % p, std::vector<char>(static_cast<std::size_t>(k * id + 1)));
        for (int k = 1; k < p; ++k) {
          std::vector<char> in(static_cast<std::size_t>(k * ((id - k + p) % p) + 1));
          vp.recv((id - k + p) % p, in);
        }
      },
      o);
  REQUIRE(r.operations.size() == 6);
  CHECK(r.replay(replay_model(o.model)).clocks == r.clocks);
}

TEST_CASE("half duplex: an exchange costs its send and then its receive") {
  const CostModel model{.ts = 0, .tw = 1, .th = 0};
  // Both VPs exchange 10 bytes: full duplex 10, half duplex 10 + 10.
  const auto exchange = hc::run(
      Topology::ring(2),
      [](hc::Proc& vp) {
        std::vector<char> out(10), in(10);
        vp.sendrecv(1 - vp.id(), out, in);
      },
      record_options(model));
  CHECK(exchange.clocks == std::vector<double>{10, 10});
  CHECK(exchange.replay(replay_model(model)).clocks == std::vector<double>{10, 10});
  const hc::Replay half = exchange.replay(replay_model(model, true));
  CHECK(half.clocks == std::vector<double>{20, 20});
  CHECK(half.model_time == 20);
  // A send then a receive, on both VPs: the same.
  const auto send_recv = hand_made(
      Topology::ring(2), {{send_op(1, 10), recv_op(1, 10)}, {send_op(0, 10), recv_op(0, 10)}});
  CHECK(send_recv.replay(replay_model(model)).clocks == std::vector<double>{10, 10});
  CHECK(send_recv.replay(replay_model(model, true)).clocks == std::vector<double>{20, 20});
  // Ping-pong never overlaps a send with a receive: half duplex costs nothing more.
  const auto ping_pong = hand_made(
      Topology::ring(2), {{send_op(1, 10), recv_op(1, 4)}, {recv_op(0, 10), send_op(0, 4)}});
  CHECK(ping_pong.replay(replay_model(model)).clocks == std::vector<double>{14, 14});
  CHECK(ping_pong.replay(replay_model(model, true)).clocks == std::vector<double>{14, 14});
  // With ts: the receive of a 10-byte exchange starts when the send half ends (ts + 10).
  const CostModel with_ts{.ts = 2, .tw = 1, .th = 0.5};
  const auto exchange_ts =
      hand_made(Topology::ring(2), {{sendrecv_op(1, 10)}, {sendrecv_op(0, 10)}});
  CHECK(exchange_ts.replay(replay_model(with_ts)).clocks == std::vector<double>{12.5, 12.5});
  CHECK(exchange_ts.replay(replay_model(with_ts, true)).clocks == std::vector<double>{22, 22});
}

TEST_CASE("store-and-forward pays tw*m on every hop") {
  const CostModel model{.ts = 1, .tw = 0.5, .th = 0.25};
  const auto r = hc::run(
      Topology::ring(8),
      [](hc::Proc& vp) {
        std::vector<char> buf(10);
        if (vp.id() == 0) vp.send(4, buf);  // 4 hops: 0 1 2 3 4 (ties go up)
        if (vp.id() == 4) vp.recv(0, buf);
      },
      record_options(model));
  CHECK(r.clocks[4] == 1 + 5 + 0.25 * 4);
  CHECK(r.replay(replay_model(model)).clocks == r.clocks);
  const hc::Replay sf = r.replay(replay_model(model, false, true));
  CHECK(sf.clocks[0] == 6);  // the sender's cost does not change
  CHECK(sf.clocks[4] == 1 + (5 + 0.25) * 4);
  CHECK(sf.model_time == 22);
  for (const auto& [link, load] : sf.peak_link_load) CHECK(load == 1);
  CHECK(sf.peak_link_load.size() == 4);
  CHECK(sf.peak_link_load.count({3, 4}) == 1);
  // With contention too: one message alone is not delayed.
  CHECK(r.replay(replay_model(model, false, true, true)).clocks == sf.clocks);
}

TEST_CASE("contention serializes transfers on a shared directed link, in logical-time order") {
  const CostModel model{.ts = 1, .tw = 0.5, .th = 0};
  // Ring:4, routed: 0 -> 2 (links 0>1, 1>2) and 1 -> 2 (link 1>2) start together.
  const auto r = hc::run(
      Topology::ring(4),
      [](hc::Proc& vp) {
        std::vector<char> buf(10);
        if (vp.id() == 0 || vp.id() == 1) vp.send(2, buf);
        if (vp.id() == 2) {
          vp.recv(0, buf);
          vp.recv(1, buf);
        }
      },
      record_options(model));
  CHECK(r.clocks == std::vector<double>{6, 6, 6, 0});
  const hc::Replay plain = r.replay(replay_model(model));
  CHECK(plain.clocks == r.clocks);
  const hc::Replay cont = r.replay(replay_model(model, false, false, true));
  // VP 0 goes first (same clock, smaller id); VP 1 waits for link 1>2 until 6: arrives 5 later.
  CHECK(cont.clocks == std::vector<double>{6, 11, 11, 0});
  // Both are in transit on 1>2 at once (VP 1's message waits there from 0 on).
  CHECK(plain.peak_link_load == std::map<std::pair<int, int>, int>{{{0, 1}, 1}, {{1, 2}, 2}});
  CHECK(cont.peak_link_load == plain.peak_link_load);

  // With hop latency: VP 0's data holds link 1>2 during [1 + th, 1 + th + 5).
  const CostModel hop{.ts = 1, .tw = 0.5, .th = 0.25};
  const hc::Replay cont_hop = r.replay(replay_model(hop, false, false, true));
  CHECK(cont_hop.clocks == std::vector<double>{6, 11.25, 11.5, 0});

  // Opposite directions and disjoint links do not contend.
  const auto apart = hand_made(
      Topology::ring(4),
      {{sendrecv_op(1, 10)}, {sendrecv_op(0, 10)}, {sendrecv_op(3, 10)}, {sendrecv_op(2, 10)}});
  const hc::Replay apart_plain = apart.replay(replay_model(model));
  CHECK(apart_plain.clocks == std::vector<double>{6, 6, 6, 6});
  CHECK(apart.replay(replay_model(model, false, false, true)).clocks == apart_plain.clocks);
  for (const auto& [link, load] : apart_plain.peak_link_load) CHECK(load == 1);
  CHECK(apart_plain.peak_link_load.size() == 4);

  // Three messages over one link at once: ts + tw*m, + tw*m, + tw*m (Grama's ts + tw*m*3).
  const auto three = hand_made(Topology::ring(8), {{send_op(3, 10)},
                                                   {send_op(3, 10)},
                                                   {send_op(3, 10)},
                                                   {recv_op(0, 10), recv_op(1, 10), recv_op(2, 10)},
                                                   {},
                                                   {},
                                                   {},
                                                   {}});
  const hc::Replay three_cont = three.replay(replay_model(model, false, false, true));
  CHECK(three_cont.clocks[3] == 1 + 5 * 3);
  CHECK(three.replay(replay_model(model)).peak_link_load.at({2, 3}) == 3);
}

TEST_CASE("contention: a message whose links are idle does not wait behind one that waits") {
  const CostModel model{.ts = 0, .tw = 1, .th = 0};
  // Ring:8, all at 0, 4 bytes: C = 0 -> 2 (links 0>1, 1>2), B = 1 -> 3 (1>2, 2>3), A = 2 -> 3
  // (2>3). C holds 1>2 during [0, 4), so B waits and holds 2>3 during [4, 8); A's link is idle
  // during [0, 4), overlapping nothing: A goes then, though B claimed 2>3 first.
  const auto r = hand_made(Topology::ring(8), {{send_op(2, 4)},
                                               {send_op(3, 4)},
                                               {send_op(3, 4), recv_op(0, 4)},
                                               {recv_op(1, 4), recv_op(2, 4)},
                                               {},
                                               {},
                                               {},
                                               {}});
  const hc::Replay cont = r.replay(replay_model(model, false, false, true));
  CHECK(cont.clocks == std::vector<double>{4, 8, 4, 8, 0, 0, 0, 0});
  CHECK(cont.model_time == 8);
  // The run's own cost model, contention set there, asks for the same replay.
  hc::ReplayModel own{.cost = model};
  own.cost.contention = true;
  CHECK(r.replay(own).clocks == cont.clocks);

  // A shift by 2 down ring:5 (each message over 2 links, every link in 2 routes): at most 2 of
  // the 5 messages can hold their 2 links at once, so 3 rounds of tw*m = 4: 12, not the 20 of
  // each waiting for the one before it.
  std::vector<std::vector<CommOp>> shift(5);
  for (int v = 0; v < 5; ++v) {
    shift[static_cast<std::size_t>(v)] = {send_op((v + 3) % 5, 4), recv_op((v + 2) % 5, 4)};
  }
  const auto ring5 = hand_made(Topology::ring(5), shift);
  const hc::Replay shifted = ring5.replay(replay_model(model, false, false, true));
  CHECK(shifted.model_time == 12);
  CHECK(ring5.replay(replay_model(model)).model_time == 4);  // without contention: one round

  // The run itself under contention reports the replay's clocks.
  hc::Options opt;
  opt.model = {.ts = 0, .tw = 1, .th = 0, .contention = true};
  const auto online = hc::run(
      Topology::ring(5),
      [](hc::Proc& vp) {
        const int out = vp.id();
        int in = -1;
        vp.send((vp.id() + 3) % 5, std::span<const int>(&out, 1));
        vp.recv((vp.id() + 2) % 5, std::span<int>(&in, 1));
        CHECK(in == (vp.id() + 2) % 5);
      },
      opt);
  CHECK(online.model_time == 12);
}

TEST_CASE("peak link load of the ring all-to-all is one message per link") {
  const CostModel model{.ts = 1, .tw = 0.01, .th = 0.25};
  const auto r = hc::run(
      Topology::ring(4),
      [](hc::Proc& vp) {
        std::vector<int> in(4 * 5, vp.id()), out(4 * 5);
        hc::all_to_all(vp, in, out, Algo::ring);
      },
      record_options(model));
  const hc::Replay plain = r.replay(replay_model(model));
  CHECK(plain.clocks == r.clocks);
  CHECK(plain.peak_link_load ==
        std::map<std::pair<int, int>, int>{{{0, 1}, 1}, {{1, 2}, 1}, {{2, 3}, 1}, {{3, 0}, 1}});
  // Nothing shares a link: contention changes nothing.
  CHECK(r.replay(replay_model(model, false, false, true)).clocks == r.clocks);
}

TEST_CASE("replay on another topology of the same size") {
  for (const double th : {0.25, 0.0}) {
    const CostModel model{.ts = 1, .tw = 0.01, .th = th};
    CAPTURE(th);
    const auto r = hc::run(
        Topology::hypercube(3),
        [](hc::Proc& vp) {
          std::vector<double> in(64, vp.id()), out(64 * 8);
          hc::all_gather(vp, in, out, Algo::hypercube);
        },
        record_options(model));
    const hc::Replay cube = r.replay(replay_model(model));
    CHECK(cube.clocks == r.clocks);
    CHECK(r.replay(replay_model(model), Topology::hypercube(3)).clocks == cube.clocks);
    const hc::Replay ring = r.replay(replay_model(model), Topology::ring(8));
    if (th > 0) {
      CHECK(ring.model_time > cube.model_time);
    } else {
      CHECK(ring.clocks == cube.clocks);  // hops cost nothing
    }
    // On the cube every step uses its own links; on the ring, partners 2 and 4 away share them.
    const hc::Replay cube_cont = r.replay(replay_model(model, false, false, true));
    CHECK(cube_cont.clocks == cube.clocks);
    const hc::Replay ring_cont =
        r.replay(replay_model(model, false, false, true), Topology::ring(8));
    CHECK(ring_cont.model_time > ring.model_time);
    CHECK(ring.peak_link_load.at({1, 2}) > 1);
    for (const auto& [link, load] : cube.peak_link_load) CHECK(load == 1);
    CHECK(cube.peak_link_load.size() == 24);
  }
}

TEST_CASE("replay errors: nothing recorded, another size, inconsistent logs, bad models") {
  const CostModel model{.ts = 1, .tw = 0.01, .th = 0.25};
  hc::Options o = hctest::test_options();
  const auto unrecorded = hc::run(
      Topology::ring(3), [](hc::Proc& vp) { hc::barrier(vp); }, o);
  CHECK(unrecorded.operations.empty());
  CHECK_THROWS_WITH_AS(std::ignore = unrecorded.replay(replay_model(model)),
                       doctest::Contains("Options::record"), hc::Error);
  CHECK_THROWS_AS(std::ignore = unrecorded.replay(replay_model(model), Topology::ring(3)),
                  hc::Error);

  const auto r = hc::run(
      Topology::ring(4), [](hc::Proc& vp) { hc::barrier(vp); }, record_options(model));
  CHECK_THROWS_WITH_AS(std::ignore = r.replay(replay_model(model), Topology::ring(5)),
                       doctest::Contains("ring:5"), hc::Error);
  CHECK_THROWS_AS(std::ignore = r.replay(replay_model({.ts = -1, .tw = 0, .th = 0})), hc::Error);

  const Topology two = Topology::ring(2);
  CHECK_THROWS_WITH_AS(
      std::ignore = hand_made(two, {{}, {recv_op(0, 8)}}).replay(replay_model(model)),
      doctest::Contains("no matching send"), hc::Error);
  CHECK_THROWS_WITH_AS(std::ignore = hand_made(two, {{send_op(1, 8), send_op(1, 8)},
                                                     {recv_op(0, 8), recv_op(0, 8), recv_op(0, 8)}})
                                         .replay(replay_model(model)),
                       doctest::Contains("only 2 messages"), hc::Error);
  CHECK_THROWS_WITH_AS(
      std::ignore = hand_made(two, {{send_op(1, 8)}, {recv_op(0, 16)}}).replay(replay_model(model)),
      doctest::Contains("8 bytes"), hc::Error);
  CHECK_THROWS_WITH_AS(
      std::ignore = hand_made(two, {{recv_op(1, 8), send_op(1, 8)}, {recv_op(0, 8), send_op(0, 8)}})
                        .replay(replay_model(model)),
      doctest::Contains("circular"), hc::Error);
  CHECK_THROWS_AS(std::ignore = hand_made(two, {{send_op(0, 8)}, {}}).replay(replay_model(model)),
                  hc::Error);
  CHECK_THROWS_AS(std::ignore = hand_made(two, {{send_op(2, 8)}, {}}).replay(replay_model(model)),
                  hc::Error);
  // Unreceived messages are fine (online too).
  CHECK(hand_made(two, {{send_op(1, 8)}, {}}).replay(replay_model(model)).clocks ==
        std::vector<double>{0 + model.ts + model.tw * 8, 0});
}

// Recursive doubling on hypercube:dim, `rounds` times over: sendrecv of 100 bytes per step.
hc::Report recursive_doubling(int dim, int rounds) {
  const int p = 1 << dim;
  std::vector<std::vector<CommOp>> ops(static_cast<std::size_t>(p));
  for (int v = 0; v < p; ++v)
    for (int round = 0; round < rounds; ++round)
      for (int k = 0; k < dim; ++k)
        ops[static_cast<std::size_t>(v)].push_back(sendrecv_op(v ^ (1 << k), 100));
  return hand_made(Topology::hypercube(dim), std::move(ops));
}

TEST_CASE("replay of 1024 VPs x 300 operations is quick") {
  constexpr int kDim = 10, kRounds = 30;  // 307,200 operations
  const auto report = recursive_doubling(kDim, kRounds);
  const CostModel model{.ts = 1, .tw = 0.01, .th = 0.25};
  const auto begin = std::chrono::steady_clock::now();
  const hc::Replay plain = report.replay(replay_model(model));
  const hc::Replay all = report.replay(replay_model(model, true, true, true));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  MESSAGE("two replays of 307,200 operations: " << seconds << " s");
  // A step: max(ts + tw*m, ts + tw*m + th) = 2.25; half duplex: max(ts + 2*tw*m, ...) = 3.
  CHECK(plain.model_time == doctest::Approx(kRounds * kDim * 2.25));
  CHECK(all.model_time == doctest::Approx(kRounds * kDim * 3.0));
  CHECK(seconds < 60);
  // Routed on a ring of 1024, partners up to 512 hops away share links.
  const auto few = recursive_doubling(kDim, 2);
  const hc::Replay cube = few.replay(replay_model(model, false, false, true));
  const hc::Replay ring =
      few.replay(replay_model(model, false, false, true), Topology::ring(1 << kDim));
  CHECK(cube.model_time == doctest::Approx(2 * kDim * 2.25));
  CHECK(ring.model_time > cube.model_time);
}
