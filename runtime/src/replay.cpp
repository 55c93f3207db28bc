// Report::replay: re-times a recorded run offline under a ReplayModel, on the run's topology or on
// another of the same size. The rules, exactly (m: a message's bytes, h = on.distance(src, dst),
// c: the sender's clock when the send starts; ts, tw, th from model.cost):
//
// Matching. The k-th message VP a sends to VP b (send, or the send half of a sendrecv) is the
// one b's k-th receive from a takes, as online (FIFO per channel), point-to-point messages and
// collectives' apart (CommOp::collective: a receive of one kind sets the other's aside).
//
// Send (and the send half of a sendrecv). Start-up is the sender's alone: the message enters the
// network at t = c + ts and crosses link k (k = 0 .. h-1) of on.route(src, dst) during
// [t + o*k, t + o*k + tw*m), with o = th (cut-through) or o = tw*m + th (store-and-forward).
// It arrives at a = t + tw*m + th*h (cut-through) or a = t + (tw*m + th)*h (store-and-forward);
// the sender's clock becomes t + tw*m. Without contention t = c + ts, so the default model
// evaluates proc.cpp's expressions in proc.cpp's order and reproduces Report::clocks bit for bit.
//
// Contention. A directed link carries one message at a time: t is the earliest time >= c + ts
// at which every link k of the route is free during [t + o*k, t + o*k + tw*m), and the message
// then holds each link k for that interval. So messages sharing a link at overlapping times
// serialize their tw*m (the sender waits for the link); start-up and hop latency still overlap
// (Grama et al.'s congestion analysis: ts + tw*m*congestion). A message whose links are free
// while an earlier-claimed one waits goes first (the links' idle intervals are used: in a
// circular shift every message waits for the one before it otherwise). Links are claimed in
// logical time: a discrete-event loop always runs the next operation of the VP with the smallest
// clock (ties: smallest id) among those whose next operation can run (a send always can; a
// receive once its message was sent), so sends claim links in nondecreasing c, and an interval
// that ended by c is never needed again. Without contention the order changes nothing.
//
// Receive of m bytes arriving at a; b = the VP's clock (recv) or the end of its send half
// (sendrecv). Full duplex: clock = max(b, a), the online rule. Half duplex (one transfer at a
// time, in program order): the data streams into the receiver during the tw*m before a, and a
// half-duplex VP takes it only after its earlier operations, its own send half included. The
// transfer runs from max(b, a - tw*m) for tw*m, so clock = max(b + tw*m, a) (computed so: never
// earlier than full duplex). A sendrecv of m bytes each way between two idle VPs costs
// ts + 2*tw*m instead of ts + tw*m.
//
// All ports (cost.all_port, Grama et al. section 4.7), as the run times it (proc.cpp's departure
// and sent): a send occupies the first link of its route, not the VP. It leaves at c = the later
// of the VP's clock and that link's port being free; the port is then busy until t + tw*m and
// the VP's clock does not move for it (a sendrecv's receive half starts from the VP's clock).
// Sends are taken in order of c, not of the VP's clock. When a VP's operations are done its
// clock is advanced to when its last send has left, as the run's end does.
//
// Peak link load. A message is in transit on every link of its route from c to a (half-open
// [c, a); waiting for a contended link counts). Sends are processed in nondecreasing c, so one
// sweep with a min-heap of arrival times per link finds each link's largest overlap.
//
// Cost: O(ops log p + sum of hops * log(messages in flight on a link)).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <hypercomm/errors.hpp>
#include <hypercomm/report.hpp>
#include <hypercomm/topology.hpp>
#include <limits>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hypercomm {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

using MinHeap = std::priority_queue<double, std::vector<double>, std::greater<>>;

struct Message {
  double arrival = 0;
  int waiter = -1;  // the VP blocked on this message's receive
  bool sent = false;
};

struct Matched {  // the messages an operation sends and receives
  std::size_t send = kNone;
  std::size_t recv = kNone;
};

struct VpState {
  std::size_t next = 0;  // index of the next operation
  double clock = 0;
  double send_end = 0;  // of the current sendrecv's send half
  bool sent = false;    // the current operation's send half is done
};

bool sends(const CommOp& op) { return op.kind != CommOp::Kind::recv; }
bool receives(const CommOp& op) { return op.kind != CommOp::Kind::send; }

std::string describe(int v, std::size_t i, const CommOp& op) {
  const auto s = [](auto x) { return std::to_string(x); };
  std::string what = "VP " + s(v) + "'s operation " + s(i) + " (";
  switch (op.kind) {
    case CommOp::Kind::send:
      return what + "send of " + s(op.bytes_out) + " bytes to VP " + s(op.dest) + ")";
    case CommOp::Kind::recv:
      return what + "recv of " + s(op.bytes_in) + " bytes from VP " + s(op.src) + ")";
    case CommOp::Kind::sendrecv:
      return what + "sendrecv of " + s(op.bytes_out) + " bytes to VP " + s(op.dest) + " and " +
             s(op.bytes_in) + " bytes from VP " + s(op.src) + ")";
  }
  return what + "?)";
}

[[noreturn]] void inconsistent(const std::string& why) {
  throw Error("Report::replay: inconsistent operation log: " + why);
}

class Replayer {
 public:
  Replayer(const std::vector<std::vector<CommOp>>& ops, const ReplayModel& model,
           const Topology& on)
      : ops_(ops),
        model_(model),
        cost_(model.cost),
        on_(on),
        p_(on.size()),
        degree_(on.max_degree()),
        // The run's own cost model may ask for it (Options::model passed as ReplayModel::cost).
        contention_(model.contention || model.cost.contention),
        state_(ops.size()) {
    match();
    const auto links = static_cast<std::size_t>(p_) * static_cast<std::size_t>(degree_);
    link_busy_.assign(links, {});
    port_free_.assign(links, 0.0);
    link_to_.assign(links, -1);
    in_transit_.resize(links);
    peak_.assign(links, 0);
  }

  Replay run() {
    for (int v = 0; v < p_; ++v) schedule(v);
    while (!ready_.empty()) {
      const int v = ready_.top().second;
      ready_.pop();
      VpState& s = state_[v];
      const CommOp& op = ops_[v][s.next];
      const Matched& match = matched_[first_[v] + s.next];
      if (sends(op) && !s.sent) {
        s.sent = true;
        s.send_end = send(v, op, match.send);
        if (!receives(op)) {
          s.clock = s.send_end;
          advance(v);
          continue;
        }
      }
      Message& in = messages_[match.recv];
      if (in.sent) {
        receive(v);
      } else {
        in.waiter = v;
      }
    }
    Replay r;
    for (int v = 0; v < p_; ++v) {
      const VpState& s = state_[v];
      if (s.next < ops_[v].size()) {
        const CommOp& op = ops_[v][s.next];
        inconsistent(describe(v, s.next, op) + " waits forever: VP " + std::to_string(op.src) +
                     " sends its message only after a receive that waits, in turn (circular wait)");
      }
      double clock = s.clock;
      if (cost_.all_port)
        for (int k = 0; k < degree_; ++k)
          clock = std::max(clock, port_free_[static_cast<std::size_t>(v * degree_ + k)]);
      r.clocks.push_back(clock);
      r.model_time = std::max(r.model_time, clock);
    }
    for (std::size_t l = 0; l < peak_.size(); ++l)
      if (peak_[l] > 0) r.peak_link_load[{static_cast<int>(l) / degree_, link_to_[l]}] = peak_[l];
    return r;
  }

 private:
  // Pairs every receive with its send (FIFO per channel); checks ids and sizes.
  void match() {
    first_.resize(ops_.size() + 1, 0);
    for (std::size_t v = 0; v < ops_.size(); ++v) first_[v + 1] = first_[v] + ops_[v].size();
    matched_.assign(first_.back(), Matched{});
    std::vector<std::uint64_t> bytes;  // per message
    struct Channel {
      std::vector<std::size_t> messages;
      std::size_t taken = 0;
    };
    std::unordered_map<std::uint64_t, Channel> channels;
    // A channel's point-to-point and collective messages are matched apart (CommOp::collective).
    const auto key = [this](int src, int dst, bool collective) {
      return (static_cast<std::uint64_t>(src) * static_cast<std::uint64_t>(p_) +
              static_cast<std::uint64_t>(dst)) *
                 2 +
             (collective ? 1 : 0);
    };
    const auto check_peer = [this](int v, std::size_t i, const CommOp& op, int peer) {
      if (peer < 0 || peer >= p_ || peer == v)
        inconsistent(describe(v, i, op) + " names a VP outside [0, " + std::to_string(p_) +
                     ") or itself");
    };
    for (int v = 0; v < p_; ++v) {
      for (std::size_t i = 0; i < ops_[v].size(); ++i) {
        const CommOp& op = ops_[v][i];
        if (!sends(op)) continue;
        check_peer(v, i, op, op.dest);
        matched_[first_[v] + i].send = bytes.size();
        channels[key(v, op.dest, op.collective)].messages.push_back(bytes.size());
        bytes.push_back(op.bytes_out);
      }
    }
    for (int v = 0; v < p_; ++v) {
      for (std::size_t i = 0; i < ops_[v].size(); ++i) {
        const CommOp& op = ops_[v][i];
        if (!receives(op)) continue;
        check_peer(v, i, op, op.src);
        const auto it = channels.find(key(op.src, v, op.collective));
        const std::size_t sent = it == channels.end() ? 0 : it->second.messages.size();
        if (it == channels.end() || it->second.taken == sent)
          inconsistent(describe(v, i, op) + " has no matching send: VP " + std::to_string(op.src) +
                       " sends VP " + std::to_string(v) + " only " + std::to_string(sent) +
                       " messages");
        const std::size_t msg = it->second.messages[it->second.taken++];
        if (bytes[msg] != op.bytes_in)
          inconsistent(describe(v, i, op) + " takes a message of " + std::to_string(bytes[msg]) +
                       " bytes");
        matched_[first_[v] + i].recv = msg;
      }
    }
    messages_.resize(bytes.size());
  }

  // VPs run in order of when their next operation starts: an all-port send when its port is free.
  void schedule(int v) {
    const VpState& s = state_[v];
    if (s.next >= ops_[v].size()) return;
    const CommOp& op = ops_[v][s.next];
    ready_.push({cost_.all_port && sends(op) ? departure(v, op.dest) : s.clock, v});
  }

  // The first link of the route from v to dest (index from * degree + slot).
  [[nodiscard]] std::size_t first_link(int v, int dest) const {
    return static_cast<std::size_t>(v) * static_cast<std::size_t>(degree_) +
           static_cast<std::size_t>(on_.link_slot(v, on_.next_hop(v, dest)));
  }

  // When v's send to dest leaves: one port, at v's clock; all ports, when its first link is free.
  [[nodiscard]] double departure(int v, int dest) const {
    const double c = state_[v].clock;
    return cost_.all_port ? std::max(c, port_free_[first_link(v, dest)]) : c;
  }

  void advance(int v) {
    state_[v].sent = false;
    ++state_[v].next;
    schedule(v);
  }

  // Completes v's receive (recv or sendrecv), whose message has been sent.
  void receive(int v) {
    VpState& s = state_[v];
    const CommOp& op = ops_[v][s.next];
    const Message& in = messages_[matched_[first_[v] + s.next].recv];
    const double base = op.kind == CommOp::Kind::recv ? s.clock : s.send_end;
    if (model_.half_duplex) {
      s.clock = std::max(base + cost_.tw * static_cast<double>(op.bytes_in), in.arrival);
    } else {
      s.clock = std::max(base, in.arrival);
    }
    advance(v);
  }

  // Contention: the earliest t >= earliest at which every link k of route_ is idle during
  // [t + step*k, t + step*k + hold), each link's busy intervals then taking that one. A link's
  // intervals are disjoint and sorted; those that ended by now (the send's c) are dropped.
  double claim_links(double now, double earliest, double step, double hold) {
    for (const std::size_t l : route_) {
      std::vector<Busy>& busy = link_busy_[l];
      const auto done =
          std::find_if(busy.begin(), busy.end(), [now](const Busy& b) { return b.to > now; });
      busy.erase(busy.begin(), done);
    }
    if (!(hold > 0)) return earliest;  // an empty transfer holds no link
    const auto first_after = [](const std::vector<Busy>& busy, double from) {
      return std::upper_bound(busy.begin(), busy.end(), from,
                              [](double x, const Busy& b) { return x < b.to; });
    };
    double t = earliest;
    for (bool moved = true; moved;) {
      moved = false;
      for (std::size_t k = 0; k < route_.size(); ++k) {
        const double offset = step * static_cast<double>(k);
        const std::vector<Busy>& busy = link_busy_[route_[k]];
        const auto next = first_after(busy, t + offset);  // the first interval ending after it
        if (next != busy.end() && next->from < t + offset + hold) {
          // After it; nextafter where rounding would give t back (the loop must move on).
          const double after = next->to - offset;
          t = after > t ? after : std::nextafter(t, std::numeric_limits<double>::infinity());
          moved = true;
        }
      }
    }
    for (std::size_t k = 0; k < route_.size(); ++k) {
      const double from = t + step * static_cast<double>(k);
      std::vector<Busy>& busy = link_busy_[route_[k]];
      busy.insert(first_after(busy, from), Busy{from, from + hold});
    }
    return t;
  }

  // Sends message `msg` of op from v when it leaves (departure); returns the sender's new clock.
  double send(int v, const CommOp& op, std::size_t msg) {
    const double c = departure(v, op.dest);
    const auto m = static_cast<double>(op.bytes_out);
    const double step = model_.store_and_forward ? cost_.tw * m + cost_.th : cost_.th;

    route_.clear();
    for (int from = v; from != op.dest;) {
      const int to = on_.next_hop(from, op.dest);
      const auto l = static_cast<std::size_t>(from) * static_cast<std::size_t>(degree_) +
                     static_cast<std::size_t>(on_.link_slot(from, to));
      link_to_[l] = to;
      route_.push_back(l);
      from = to;
    }
    const auto hops = static_cast<int>(route_.size());

    double t = c + cost_.ts;
    if (contention_) t = claim_links(c, t, step, cost_.tw * m);
    const double arrival = model_.store_and_forward ? t + (cost_.tw * m + cost_.th) * hops
                                                    : t + cost_.tw * m + cost_.th * hops;
    for (const std::size_t l : route_) {
      MinHeap& heap = in_transit_[l];
      while (!heap.empty() && heap.top() <= c) heap.pop();
      heap.push(arrival);
      peak_[l] = std::max(peak_[l], static_cast<int>(heap.size()));
    }

    const double left = t + cost_.tw * m;
    if (cost_.all_port) port_free_[route_.front()] = left;
    Message& out = messages_[msg];
    out.arrival = arrival;
    out.sent = true;
    if (out.waiter >= 0) receive(out.waiter);
    return cost_.all_port ? state_[v].clock : left;
  }

  const std::vector<std::vector<CommOp>>& ops_;
  const ReplayModel& model_;
  const CostModel& cost_;
  const Topology& on_;
  int p_;
  int degree_;
  bool contention_;
  std::vector<std::size_t> first_;  // VP v's operations are [first_[v], first_[v + 1])
  std::vector<Matched> matched_;    // per operation
  std::vector<Message> messages_;
  std::vector<VpState> state_;
  std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>, std::greater<>>
      ready_;                       // (clock, VP) of the VPs whose next operation can run
  std::vector<std::size_t> route_;  // scratch: link indices (from * degree + slot) of a route
  struct Busy {
    double from, to;  // [from, to)
  };
  std::vector<std::vector<Busy>> link_busy_;  // contention: when each link carries a message
  std::vector<double> port_free_;  // all ports: when each VP's outgoing link is free for its sends
  std::vector<int> link_to_;
  std::vector<MinHeap> in_transit_;  // arrival times of the messages in transit, per link
  std::vector<int> peak_;
};

}  // namespace

Replay Report::replay(const ReplayModel& model) const {
  if (operations.empty())
    throw Error(
        "Report::replay: the report has no recorded operations; run with Options::record (or "
        "Options::trace) set");
  return replay(model, Topology::parse(topology));
}

Replay Report::replay(const ReplayModel& model, const Topology& on) const {
  if (operations.empty())
    throw Error(
        "Report::replay: the report has no recorded operations; run with Options::record (or "
        "Options::trace) set");
  if (static_cast<std::size_t>(on.size()) != operations.size())
    throw Error("Report::replay: cannot replay a run of " + std::to_string(operations.size()) +
                " VPs on " + on.name() + " (" + std::to_string(on.size()) + " VPs)");
  const CostModel& c = model.cost;
  for (const double x : {c.ts, c.tw, c.th})
    if (!std::isfinite(x) || x < 0)
      throw Error("Report::replay: the cost model needs finite ts, tw, th >= 0 (got ts = " +
                  std::to_string(c.ts) + ", tw = " + std::to_string(c.tw) +
                  ", th = " + std::to_string(c.th) + ")");
  return Replayer(operations, model, on).run();
}

}  // namespace hypercomm
