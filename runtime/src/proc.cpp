// The call port (port.hpp): point-to-point messaging, the cost-model clock, and how a VP waits;
// and the user's Proc, which forwards to it. The port's error paths, cold, are port_errors.cpp.
// The sends and receives stay in this one file: with the sends in a file of their own, the p = 2
// ping-pong of 8 B took 0.33-0.35 us a message against 0.26-0.28, alternated three times in a
// slow phase of the vCPUs (2026-12-07; the AMD EPYC), though the code did not change; whether
// the functions' placement or the compiler's inlining did it was not found.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <hypercomm/errors.hpp>
#include <limits>
#include <optional>
#include <string>

#include "fabric.hpp"
#include "faults.hpp"
#include "futex.hpp"
#include "group_info.hpp"
#include "port.hpp"
#include "waiter.hpp"

namespace hypercomm {

using detail::Port;

using detail::Envelope;
using detail::Fabric;
using detail::Link;

namespace {
std::atomic<detail::FaultHook> fault_hook{nullptr};
}  // namespace

void detail::set_fault_hook(FaultHook hook) noexcept { fault_hook.store(hook); }

Port::Port(Fabric& fabric, int id)
    : fabric_(&fabric),
      options_(&fabric.options()),
      id_(id),
      size_(fabric.size()),
      shared_cores_(fabric.shared_core_count()),
      groups_(std::make_unique<detail::GroupTable>()),
      neighbours_(fabric.topology().neighbors(id)),
      proc_(*this, id, fabric.size()) {
  groups_->reset(fabric.topology(), id);
}

Port::~Port() = default;

const Topology& Port::topology() const noexcept { return fabric_->topology(); }

void Port::reset_for_run() noexcept {
  clock_ = 0;
  pipelined_calls_ = 0;
  pending_ = 0;
  // A new run's calls are numbered from 1 again (split ids too): nothing published by the last
  // run may meet them in the members' mismatch check.
  call_ = MessageTag{};
  ports_.assign(static_cast<std::size_t>(std::max(1, topology().max_degree())), 0.0);
  groups_->reset(topology(), id_);
  operation_ = nullptr;
  messages_sent_ = 0;
  bytes_sent_ = 0;
  events_.clear();
  open_spans_.clear();
  operations_.clear();
  aside_.clear();
  meetings_.clear();
  last_tally_ = 0;
  // Contention is timed by replaying the run's operations (Fabric::collect).
  recording_ = options().trace || options().record || options().model.contention;
  may_meet_ = options().meetings && !options().model.all_port && fabric_->oversubscribed() &&
              !recording_ && size_ >= 2 && !fabric_->distributed();
}

void Port::check_peer(int peer, const char* op, std::size_t bytes) {
  if (peer < 0 || peer >= size_ || peer == id_ ||
      (options().links == Links::strict && !topology().adjacent(id_, peer))) [[unlikely]]
    throw_bad_peer(peer, op, bytes);
  if (const std::uint32_t attention = fabric_->attention(); attention != 0) [[unlikely]]
    attend(attention, op);
}

void Port::attend(std::uint32_t attention, const char* op) {
  if ((attention & Fabric::kAborted) != 0)
    throw Aborted("VP " + std::to_string(id_) + ": " + op +
                  " abandoned: another VP failed or the run deadlocked");
  if (fault_messages_ < 0) return;
  if (const detail::FaultHook hook = fault_hook.load(std::memory_order_relaxed)) {
    detail::FaultSite site{proc_, detail::FaultPoint::message, call_, ++fault_messages_};
    hook(site);
  }
}

void Port::begin_call(MessageTag tag) {
  detail::publish_call(fabric_->state(id_), tag);
  call_ = tag;  // each from the registers the header came in, not one from the other
  call_destinations_.count = 0;
  call_sources_.count = 0;
  if (const detail::FaultHook hook = fault_hook.load(std::memory_order_relaxed)) [[unlikely]] {
    detail::FaultSite site{proc_, detail::FaultPoint::call_entry, call_};
    hook(site);
    if (site.watch_messages && fault_messages_ < 0) {
      fault_messages_ = 0;
      fabric_->watch_messages(true);
    }
  }
}

// Nothing to publish: the VPs that wait in this call compare with its header whether this VP is
// still in it or has left it (Port::disagreement).
void Port::end_call() noexcept {
  if (fault_messages_ >= 0) [[unlikely]] {
    fault_messages_ = -1;
    fabric_->watch_messages(false);
  }
  call_ = MessageTag{};
  call_destinations_.count = 0;
  call_sources_.count = 0;
}

namespace {

// Where each VP has a core (kSharedCopyBytesShared, where VPs share cores, is larger: there a
// message of kSideWorkBytes may still be copied by its sender alone, the side work after it).
static_assert(detail::kSharedCopyBytes <= Port::kSideWorkBytes,
              "a receiver may copy every message that a sender's side work waits for");

// A large message whose receiver has not posted its receive yet: wait a while for it to, so
// that the payload is copied once, into the receiver's buffer, rather than into a block and out
// again (which also lets a sender in a loop run ahead and pile up blocks). Bounded by about the
// time the receiver takes to copy a message this size (1 ns a byte, at least 200 us), or
// `briefly` by kBriefReceiverWait, and never in a cycle of such waits (closes_wait_cycle);
// afterwards the message is queued as any other.
// True when handed over. A receiver that itself waits so is waited for too: back to back, a
// reduce's leaf whose parent still waited to send the last call's sum gave up at once and
// queued its message, which the parent then copied and folded alone (16 cores, p = 4, 1-4 MiB:
// 470-2250 us a call against 118-560 waiting; gather of 1 MiB at p = 16 2200-3000 against
// 910-970).
bool await_receiver(detail::Fabric& fabric, int me, int dest, detail::Link& channel,
                    const detail::Envelope& envelope, std::span<const std::byte> data,
                    detail::SideWork& work, bool briefly) {
  detail::VpState& mine = fabric.state(me);
  const detail::VpState& peer = fabric.state(dest);
  // Stored before the chain is read, both seq_cst: of the VPs that close a cycle, the last to
  // store sees all the others' waits and gives up (queues its message and goes on to post its
  // own receive).
  mine.lending.store(static_cast<std::uint32_t>(dest) + 1, std::memory_order_seq_cst);
  struct Done {
    detail::VpState& state;
    ~Done() { state.lending.store(0, std::memory_order_release); }
  } done{mine};
  const auto wait = briefly
                        ? detail::kBriefReceiverWait
                        : std::max<std::chrono::nanoseconds>(std::chrono::microseconds(200),
                                                             std::chrono::nanoseconds(data.size()));
  // Spin briefly, then yield: the receiver may need this core (at once when oversubscribed).
  const auto spin = briefly ? wait
                    : fabric.oversubscribed()
                        ? std::chrono::nanoseconds(0)
                        : std::chrono::nanoseconds(std::chrono::microseconds(20));
  const auto poll = [&](detail::Waiter::Phase) { return channel.receiver_posted(); };
  const auto give_up = [&] {
    return detail::closes_wait_cycle(fabric.states(), me, dest) ||
           peer.status.load(std::memory_order_acquire) == detail::kFinished || fabric.aborted();
  };
  const auto no_audit = [] { return false; };
  const auto outcome =
      detail::Waiter{spin, wait - spin}.busy(poll, give_up, no_audit, detail::Waiter::give_core);
  return outcome == detail::Waiter::Outcome::done &&
         channel.try_hand_over_during(envelope, data, work);
}

// Whether a sender whose receiver has not posted yet waits a while for it (the bounds in
// channel.hpp): from rendezvous_bytes always, from keeping_up_rendezvous_bytes where the receiver
// keeps up (lower in an exchange, whose receiver posts at once); a send alone from
// bounded_queue_bytes where its receiver has kMostQueuedSlots of its messages still to take, and
// briefly where it has none (it is about to post, or busy with the last one: then it is queued).
enum class Await { no, briefly, yes };
Await awaits_receiver(const detail::Fabric& fabric, const detail::Link& channel, std::size_t bytes,
                      bool exchange) noexcept {
  if (bytes >= fabric.rendezvous_bytes(exchange) ||
      (bytes >= fabric.keeping_up_rendezvous_bytes(exchange) && channel.receiver_keeps_up()))
    return Await::yes;
  if (exchange || bytes < fabric.bounded_queue_bytes()) return Await::no;
  if (!channel.receiver_within(detail::kMostQueuedSlots)) return Await::yes;
  return channel.receiver_within(1) ? Await::briefly : Await::no;
}

}  // namespace

Port::Route& Port::route_to(int dest) {
  Route& route = out_routes_[static_cast<std::size_t>(dest) % kRoutes];
  if (route.peer != dest) {
    const Topology& topo = topology();
    const int slot = topo.link_slot(id_, dest);
    const int port = slot >= 0 ? slot : topo.link_slot(id_, topo.next_hop(id_, dest));
    route = Route{.peer = dest,
                  .slot = static_cast<std::int16_t>(slot),
                  .port = static_cast<std::int16_t>(port),
                  .hops = slot >= 0 ? 1 : topo.distance(id_, dest),
                  .channel = &fabric_->channel(id_, dest)};
    if (slot < 0 && route.hops <= kCachedHops) {
      int k = 0;
      for (int from = id_; from != dest && k < kCachedHops; ++k) {
        const int to = topo.next_hop(from, dest);
        route.links[static_cast<std::size_t>(k)] = {from, topo.link_slot(from, to)};
        from = to;
      }
    }
  }
  return route;
}

// channel_from(src) where src has ever sent to this VP, else null (without making the channel).
Link* Port::incoming_if_any(int src) noexcept {
  Route& route = in_routes_[static_cast<std::size_t>(src) % kRoutes];
  if (route.peer == src) return route.channel;
  Link* channel = fabric_->existing_channel(src, id_);
  if (channel != nullptr) route = Route{.peer = src, .channel = channel};
  return channel;
}

Link& Port::channel_from(int src) {
  if (Link* channel = incoming_if_any(src)) return *channel;
  Route& route = in_routes_[static_cast<std::size_t>(src) % kRoutes];
  route = Route{.peer = src, .channel = &fabric_->channel(src, id_)};
  return *route.channel;
}

void Port::post_send(int dest, std::span<const std::byte> data, const MessageTag& tag, double start,
                     bool exchange, detail::SideWork* work) {
  const CostModel& model = options().model;
  const auto m = static_cast<double>(data.size());
  // Meetings happen only when VPs outnumber cores: only then can dest be in one.
  // Only the whole machine's meetings publish their calls (a group's are numbered apart).
  if (tag.kind != 0 && tag.group == 0 && fabric_->oversubscribed())
    check_not_meeting(dest, tag, "sends to");
  Route& route = route_to(dest);
  const Envelope envelope{data.size(), model.arrival(start, m, route.hops), tag};

  Link& channel = *route.channel;
  if (!fabric_->local(dest)) {
    // A VP of another process: the Remote sends the message from data itself where it can,
    // else forwards what is queued for dest.
    if (!fabric_->remote()->send(id_, dest, channel, envelope, data)) {
      channel.push(envelope, data);
      fabric_->notify(dest);
    }
  } else {
    detail::SideWork none;
    detail::SideWork& side = work != nullptr ? *work : none;
    bool delivered = false;
    // A sender that has taken no message since its last such to dest streams to it (a root's
    // one-way calls back to back, a pipeline's producer): below the size from which it would wait
    // for a receiver that keeps up, it queues in the ring even where the receiver waits, and runs
    // ahead, rather than claim each post and write into the receiver's buffer at the receiver's
    // pace. A sender that has taken a message since (a ping-pong, a call after a barrier) hands
    // over as before: one copy. (p = 2 on the 2-vCPU AMD EPYC, 2026-12-05, 6 rounds alternated,
    // median of the paired ratios of the time, back to back at 256 B-1.25 KiB: broadcast
    // 0.84-0.87, scatter 0.87-0.91, gather 0.83-0.88, reduce 0.83-0.89, scan 0.87-0.89, windowed
    // bandwidth 0.88-0.93; after a barrier 0.94-1.02; ping-pong 0.96-1.02. Handing over only from
    // 1 KiB instead: after a barrier 1.4x at 256-512 B, ping-pong 3.4x at 256 B.) Not where VPs
    // share cores: there (16 VPs on 2 cores, below 2 KiB) it gained nothing, windowed bandwidth
    // 0.92-1.00, ping-pong 1.03-1.19.
    const std::size_t hand_over_bytes =
        exchange ? detail::kExchangeHandOverBytes : fabric_->hand_over_bytes();
    bool streaming = false;
    if (!exchange && data.size() >= hand_over_bytes && !fabric_->oversubscribed() &&
        data.size() < fabric_->keeping_up_rendezvous_bytes(false)) {
      const std::uint64_t received = fabric_->state(id_).received.load(std::memory_order_relaxed);
      streaming = route.count_at_last == received;
      route.count_at_last = received;
    }
    // Except, on AMD's CPUs from 512 B, to a receiver that keeps up: that one posts again at once,
    // and the sender waits for the post and writes into its buffer (channel.hpp's
    // kStreamingWaitBytesAmd). One that combines is asked again only after a while.
    bool waits = false;
    if (streaming && data.size() >= fabric_->streaming_wait_bytes()) {
      if (route.sends_before_asking > 0)
        --route.sends_before_asking;
      else if (channel.receiver_keeps_up())
        waits = true;
      else
        route.sends_before_asking = detail::kSendsBeforeAskingAgain;
    }
    if ((!streaming || waits) && data.size() >= hand_over_bytes) {
      delivered = channel.try_hand_over_during(envelope, data, side);
      if (!delivered) {
        const Await how =
            waits ? Await::yes : awaits_receiver(*fabric_, channel, data.size(), exchange);
        delivered = how != Await::no && await_receiver(*fabric_, id_, dest, channel, envelope, data,
                                                       side, how == Await::briefly);
      }
    }
    if (!delivered) channel.push(envelope, data);
    fabric_->notify(dest);
  }

  if (tag.kind != 0) call_destinations_.note(dest);
  count_route(route, data.size());
  ++messages_sent_;
  bytes_sent_ += data.size();
}

void Port::count_route(const Route& route, std::uint64_t bytes) noexcept {
  if (route.slot >= 0) return fabric_->count_own_link(id_, route.slot, bytes, 1);
  if (route.hops > kCachedHops) return count_route(route.peer, route.slot, bytes);
  for (int k = 0; k < route.hops; ++k) {
    const auto [from, slot] = route.links[static_cast<std::size_t>(k)];
    fabric_->count_routed_link(from, slot, bytes, 1);
  }
}

// A message to dest counts on the link in `slot` when dest is a neighbour (slot >= 0), else on
// every link of its route: on a grid its straight runs, each in a few steps whatever its length
// (link by link, a ring of 4096 VPs made an all-to-allv of 4096 x 4096 routed messages take
// over 300 s).
void Port::count_route(int dest, int slot, std::uint64_t bytes, std::uint64_t messages) noexcept {
  if (slot >= 0) return fabric_->count_own_link(id_, slot, bytes, messages);
  const Topology& topo = topology();
  if (topo.kind() != Topology::Kind::hypercube) {
    for (const detail::StraightRun& run : detail::straight_runs(topo, id_, dest))
      if (run.length > 0) fabric_->count_straight_run(run, bytes, messages);
    return;
  }
  for (int from = id_; from != dest;) {
    const int to = topo.next_hop(from, dest);
    fabric_->count_link(from, to, bytes, messages);
    from = to;
  }
}

void Port::check_not_meeting(int peer, const MessageTag& tag, const char* what) const {
  const std::uint32_t meeting = fabric_->state(peer).meeting.load(std::memory_order_acquire);
  if (meeting != 0 && meeting >= tag.sequence) throw_meeting_mismatch(peer, tag, what, meeting);
}

void Port::send_bytes(int dest, std::span<const std::byte> data, const MessageTag& tag) {
  send_bytes_during(dest, data, tag, nullptr, nullptr);
}

void Port::send_bytes_during(int dest, std::span<const std::byte> data, const MessageTag& tag,
                             void (*meanwhile)(void*) noexcept, void* context) {
  if (pending_ != 0) [[unlikely]]
    settle_clock();
  check_peer(dest, "send", data.size());
  const double wall_begin = options().trace ? fabric_->seconds_since_start() : 0;
  const double start = departure(dest);
  detail::SideWork work{meanwhile, context};
  post_send(dest, data, tag, start, false, meanwhile != nullptr ? &work : nullptr);
  work();  // unless the channel did it
  sent(dest, start, data.size());
  if (recording_)
    operations_.push_back({CommOp::Kind::send, dest, -1, data.size(), 0, tag.kind != 0});
  if (options().trace) record(Event::Kind::send, dest, data.size(), wall_begin, start, "send");
}

// When a send to dest leaves: one port (the book's default), when the VP is free; all ports
// (CostModel::all_port, Grama et al. section 4.7), when the first link of its route is.
double Port::departure(int dest) {
  if (!options().model.all_port) return clock_;
  const Route& route = route_to(dest);
  return std::max(clock_, ports_[static_cast<std::size_t>(route.port)]);
}

// The send to dest that left at start has taken its ts + tw*m: of the VP (one port) or of the
// first link of its route (all ports: the VP may start another send on another link at once).
void Port::sent(int dest, double start, std::size_t bytes) {
  const CostModel& model = options().model;
  const double done = model.sent(start, static_cast<double>(bytes));
  if (!model.all_port) {
    clock_ = done;
    return;
  }
  ports_[static_cast<std::size_t>(route_to(dest).port)] = done;
}

// All ports: the run ends for a VP when its last send has left too.
void Port::settle_ports() noexcept {
  for (const double free : ports_) clock_ = std::max(clock_, free);
}

// Blocks until ready() holds; Wait::aborted when the run was aborted meanwhile. The wait policy
// is the Waiter's (waiter.hpp): spin with a core to itself, else hand the core to a VP of this
// core that can run (Fabric::core_wanted), or poll when none can; then sleep on the VP's futex
// word with the sleeping flag set, so that a sender wakes it only when it really sleeps.
template <class Ready>
Port::Wait Port::wait_until(int src, const MessageTag& tag, std::uint32_t& peer_meeting,
                            Ready&& ready) {
  detail::VpState& me = fabric_->state(id_);
  const detail::VpState& peer = fabric_->state(src);
  // src meets in this collective call or a later one (Port::meet): it sends no more for this one.
  auto peer_left = [&] {
    if (tag.kind == 0 || tag.group != 0) return false;
    peer_meeting = peer.meeting.load(std::memory_order_acquire);
    return peer_meeting != 0 && peer_meeting >= tag.sequence && !ready();
  };
  std::optional<detail::LookPace> pace;  // made on the first look: most waits end before
  auto disagrees = [&] {
    if (tag.kind == 0) return false;
    if (!pace) {
      const detail::GroupInfo* group = groups_->find(tag.group);
      pace.emplace(group != nullptr ? group->size : 0, fabric_->recheck_time(true));
    }
    if (!pace->due()) return false;
    problem_ = disagreement(tag);
    return !problem_.empty() && !ready();
  };
  me.waiting_for.store(src, std::memory_order_relaxed);
  me.operation.store(operation_name(), std::memory_order_relaxed);
  me.status.store(detail::kBlocked, std::memory_order_release);
  // A VP whose peer finished stays blocked on its way to throw_stuck, which reports every VP's
  // wait: another VP reporting meanwhile must not see it running (receive() unblocks it when
  // the message came after all).
  struct Unblock {
    detail::VpState& state;
    bool keep = false;
    ~Unblock() {
      if (!keep) state.status.store(detail::kRunning, std::memory_order_relaxed);
    }
  } unblock{me};

  Wait stop = Wait::ready;
  const auto poll = [&](detail::Waiter::Phase phase) {
    // Oversubscribed: clear the "a message came" hint that Fabric::core_wanted reads.
    if (phase == detail::Waiter::Phase::yield) {
      me.mail.store(0, std::memory_order_relaxed);
      look();
    }
    if (ready()) return true;
    // src in another process: its message may be in MPI or on a ring, and moved here now (look
    // again before the Waiter yields the core: where VPs share it, a look after the next switch
    // made every message between two processes on one core cost two).
    return fabric_->progress_from(id_, src) && ready();
  };
  const auto check = [&] {
    if (fabric_->aborted())
      stop = Wait::aborted;
    else if (peer_left())
      stop = Wait::peer_meeting;
    else
      return false;
    return true;
  };
  const auto audit = [&] {
    if (!disagrees()) return false;
    stop = Wait::mismatch;
    return true;
  };
  const auto give_core = [&] {
    if (fabric_->core_wanted(id_))
      detail::Waiter::give_core();
    else
      detail::cpu_relax();
  };
  switch (detail::Waiter{fabric_->spin_time(id_, src), fabric_->yield_time()}.busy(
      poll, check, audit, give_core)) {
    case detail::Waiter::Outcome::done: return Wait::ready;
    case detail::Waiter::Outcome::stopped: return stop;
    case detail::Waiter::Outcome::sleep: break;
  }
  for (;;) {
    const std::uint32_t ticket = me.wake.load(std::memory_order_acquire);
    me.sleeping.store(1, std::memory_order_seq_cst);
    detail::sleep_fence(fabric_->asymmetric_fences());  // pairs with Fabric::notify's fence
    look();
    Wait result = Wait::ready;
    if (ready()) {
      result = Wait::ready;
    } else if (fabric_->aborted()) {
      result = Wait::aborted;
    } else if (peer_left()) {
      result = Wait::peer_meeting;
    } else if (disagrees()) {
      result = Wait::mismatch;
    } else if (peer.status.load(std::memory_order_acquire) == detail::kFinished) {
      // A finished VP sends nothing more: unless its last message is here, none will come.
      result = ready() ? Wait::ready : Wait::peer_finished;
    } else {
      fabric_->sleeping_on(src);
      detail::Waiter::sleep(me.wake, ticket, fabric_->recheck_time(tag.kind != 0));
      me.sleeping.store(0, std::memory_order_relaxed);
      continue;
    }
    me.sleeping.store(0, std::memory_order_relaxed);
    unblock.keep = result == Wait::peer_finished;
    return result;
  }
}

void Port::recv_bytes(int src, std::span<std::byte> data, const MessageTag& tag) {
  recv_bytes_during(src, data, tag, nullptr, nullptr);
}

namespace {
// The fold a receive's post carries: none under kFoldLandingBytes (channel.hpp), where the
// message is received as it is and folded by this VP (Port::receive).
const detail::Fold* landing(const detail::Fold* fold, std::size_t bytes) noexcept {
  return fold != nullptr && bytes >= detail::kFoldLandingBytes ? fold : nullptr;
}
}  // namespace

void Port::recv_fold_bytes(int src, std::span<std::byte> scratch, const MessageTag& tag,
                           const Fold& fold) {
  recv_into(src, scratch, tag, nullptr, nullptr, &fold, true);
}

void Port::recv_bytes_during(int src, std::span<std::byte> data, const MessageTag& tag,
                             void (*meanwhile)(void*), void* context) {
  recv_into(src, data, tag, meanwhile, context, nullptr, false);
}

// A receive alone from src posts from the size from which its sender hands over (Fabric's
// hand_over_bytes, at most kHandOverBytes; kHandOverBytes where it combines), unless the sender
// streams to it: then it queues the message in the ring below the size from which it would wait for
// the post (post_send). The sender streams where it has taken no message since its last send here,
// which this VP sees as having sent nothing since its last receive from it: a post there only costs
// the receiver its stores and their withdrawal when the queued message comes (in a back-to-back
// broadcast, reduce or scatter at p = 2 of 81-255 B, posting from 81 B, 1.01-1.08x the time).
// Where the two views differ (more than two VPs), a sender that streams finds a post it does not
// use, or one that does not stream finds none and queues, as below the size.
inline std::size_t Port::post_bytes_from(int src, std::size_t bytes, bool combined) noexcept {
  Route& from = in_routes_[static_cast<std::size_t>(src) % kRoutes];  // channel_from(src)'s
  const bool streamed = from.count_at_last == messages_sent_;
  from.count_at_last = messages_sent_;
  // A VP of another process: its messages come from the Remote, which hands over from
  // kHandOverBytes and never streams.
  if (!fabric_->local(src)) return detail::kHandOverBytes;
  constexpr std::size_t kNever = std::numeric_limits<std::size_t>::max();
  if (streamed && !fabric_->oversubscribed() &&
      bytes <
          std::min(fabric_->streaming_wait_bytes(), fabric_->keeping_up_rendezvous_bytes(false)))
    return kNever;
  return combined ? detail::kHandOverBytes : fabric_->hand_over_bytes();
}

void Port::recv_into(int src, std::span<std::byte> data, const MessageTag& tag,
                     void (*meanwhile)(void*), void* context, const Fold* fold, bool combined) {
  if (pending_ != 0) [[unlikely]]
    settle_clock();
  check_peer(src, "recv", data.size());
  const double wall_begin = options().trace ? fabric_->seconds_since_start() : 0;
  const double model_begin = clock_;
  Link& channel = channel_from(src);
  std::size_t post_bytes = post_bytes_from(src, data.size(), combined);
  bool posted = false;
  if (meanwhile != nullptr) {
    // Work beside the receive (a gather's root placing its own block next to the one it
    // receives) writes lines that a small posted buffer shares: handed over, such a line would
    // cross to the sender and back at every call (p = 2, gathers of 96 B and 200 B after a
    // barrier 1.21x and 1.09x the time of the ring's from 81 B). Such a receive posts only from
    // kHandOverBytes.
    post_bytes = std::max(post_bytes, detail::kHandOverBytes);
    posted = data.size() >= post_bytes && channel.front() == nullptr && none_aside(src, tag);
    if (posted) channel.post(data, tag, landing(fold, data.size()), combined);
    try {
      meanwhile(context);
    } catch (...) {
      if (posted) fabric_->withdraw_post(id_, src);
      if (posted && !channel.cancel_post()) {
        while (!channel.post_done()) detail::cpu_relax();
        (void)channel.take_posted_arrival();
      }
      throw;
    }
  }
  if (tag.kind != 0) call_sources_.note(src);
  const double arrival = receive(channel, src, data, tag, posted, fold, combined, post_bytes);
  clock_ = std::max(clock_, arrival);
  if (recording_)
    operations_.push_back({CommOp::Kind::recv, -1, src, 0, data.size(), tag.kind != 0});
  if (options().trace) record(Event::Kind::recv, src, data.size(), wall_begin, model_begin, "recv");
}

void Port::sendrecv_bytes(int dest, std::span<const std::byte> out, int src,
                          std::span<std::byte> in, const MessageTag& tag) {
  sendrecv_into(dest, out, src, in, tag, nullptr, false);
}

void Port::recv_to_combine_bytes(int src, std::span<std::byte> data, const MessageTag& tag) {
  recv_into(src, data, tag, nullptr, nullptr, nullptr, true);
}

void Port::sendrecv_to_combine_bytes(int dest, std::span<const std::byte> out, int src,
                                     std::span<std::byte> in, const MessageTag& tag) {
  sendrecv_into(dest, out, src, in, tag, nullptr, true);
}

void Port::sendrecv_fold_bytes(int dest, std::span<const std::byte> out, int src,
                               std::span<std::byte> scratch, const MessageTag& tag,
                               const Fold& fold) {
  sendrecv_into(dest, out, src, scratch, tag, &fold, true);
}

void Port::sendrecv_into(int dest, std::span<const std::byte> out, int src, std::span<std::byte> in,
                         const MessageTag& tag, const Fold* fold, bool combined) {
  if (pending_ != 0) [[unlikely]]
    settle_clock();
  check_peer(dest, "sendrecv", out.size());
  check_peer(src, "sendrecv", in.size());
  // A program's own exchange names itself in its errors and waits (a collective's, the
  // collective).
  struct Naming {
    const char*& operation;
    bool named;
    ~Naming() {
      if (named) operation = nullptr;
    }
  } const naming{operation_, operation_ == nullptr};
  if (naming.named) operation_ = "sendrecv";
  const double wall_begin = options().trace ? fabric_->seconds_since_start() : 0;
  const double start = departure(dest);
  Link& in_channel = channel_from(src);
  // Post the receive first, so that a partner sending at the same time copies its message
  // straight into `in`; not where `in` overlaps `out` (an exchange in place): the partner's
  // message would overwrite `out` before it is sent. There the send goes first, as a send alone.
  const bool posted = in.size() >= detail::kExchangeHandOverBytes && !detail::overlaps(out, in) &&
                      in_channel.front() == nullptr && none_aside(src, tag);
  if (posted) in_channel.post(in, tag, landing(fold, in.size()), combined);
  try {
    // A message too small to hand over in an exchange counts as one (it goes through the ring).
    post_send(dest, out, tag, start, posted || out.size() < detail::kExchangeHandOverBytes);
  } catch (...) {
    if (posted) fabric_->withdraw_post(id_, src);
    if (posted && !in_channel.cancel_post()) (void)in_channel.take_posted_arrival();
    throw;
  }
  if (tag.kind != 0) call_sources_.note(src);
  const double arrival =
      receive(in_channel, src, in, tag, posted, fold, combined, detail::kExchangeHandOverBytes);
  sent(dest, start, out.size());
  clock_ = std::max(clock_, arrival);
  if (recording_)
    operations_.push_back(
        {CommOp::Kind::sendrecv, dest, src, out.size(), in.size(), tag.kind != 0});
  if (options().trace)
    record(Event::Kind::sendrecv, src, out.size() + in.size(), wall_begin, start, "sendrecv");
}

// Receives the next message from src into data and returns its model arrival time. `posted`:
// the caller already posted data as a receive buffer on channel (with landing(fold)). With a
// fold, a message that a sender delivers through a post carrying it is folded there; one taken
// from the queue, or through a post without it (under kFoldLandingBytes), is copied into data
// and folded here.
double Port::receive(Link& channel, int src, std::span<std::byte> data, const MessageTag& tag,
                     bool posted, const Fold* fold, bool combined, std::size_t post_bytes) {
  if (!aside_.empty()) [[unlikely]]
    return receive_after_aside(channel, src, data, tag, posted, fold, combined, post_bytes);
  // The message is here already (a sender that runs ahead): taken without the wait's frame.
  if (!posted)
    if (const Envelope* envelope = channel.front();
        envelope != nullptr && envelope->tag == tag && envelope->size == data.size())
      return take_queued(channel, *envelope, data, fold);
  return wait_and_receive(channel, src, data, tag, posted, fold, combined, post_bytes);
}

const Envelope* Port::set_aside(Link& channel, int src, const MessageTag& want) {
  while (const Envelope* envelope = channel.front()) {
    if (same_kind(envelope->tag, want)) return envelope;
    AsideMessage& message = aside_.emplace_back();
    message.src = src;
    message.tag = envelope->tag;
    message.arrival = envelope->arrival;
    message.payload.resize(envelope->size);
    channel.take_front(message.payload);
    note_received();
  }
  return nullptr;
}

// receive() where messages lie aside: one of this kind from src is older than the channel's.
double Port::receive_after_aside(Link& channel, int src, std::span<std::byte> data,
                                 const MessageTag& tag, bool posted, const Fold* fold,
                                 bool combined, std::size_t post_bytes) {
  if (const std::size_t at = aside_from(src, tag); at < aside_.size())
    return take_aside(at, data, tag, fold);  // (nothing was posted: none_aside)
  return wait_and_receive(channel, src, data, tag, posted, fold, combined, post_bytes);
}

// The channel's first message of want's kind, or null; set_aside only where the first is of the
// other kind (rare), so that a wait's poll stays a look at the front.
inline const Envelope* Port::next_of_kind(Link& channel, int src, const MessageTag& want) {
  const Envelope* envelope = channel.front();
  if (envelope == nullptr || same_kind(envelope->tag, want)) [[likely]]
    return envelope;
  return set_aside(channel, src, want);
}

std::size_t Port::aside_from(int src, const MessageTag& tag) const noexcept {
  std::size_t at = 0;
  while (at < aside_.size() && (aside_[at].src != src || !same_kind(aside_[at].tag, tag))) ++at;
  return at;
}

double Port::take_aside(std::size_t at, std::span<std::byte> data, const MessageTag& tag,
                        const Fold* fold) {
  const AsideMessage& message = aside_[at];
  if (!(message.tag == tag)) throw_tag_mismatch(message.src, message.tag, tag);
  if (message.payload.size() != data.size())
    throw_size_mismatch(message.src, operation_name(), message.payload.size(), data.size());
  if (!data.empty()) std::memcpy(data.data(), message.payload.data(), data.size());
  const double arrival = message.arrival;
  aside_.erase(aside_.begin() + static_cast<std::ptrdiff_t>(at));
  if (fold != nullptr) fold->apply(fold->context, 0, data.data(), data.size());
  return arrival;
}

double Port::take_queued(Link& channel, const Envelope& envelope, std::span<std::byte> data,
                         const Fold* fold) {
  const double arrival = envelope.arrival;
  channel.take_front(data);
  note_received();
  if (fold != nullptr) fold->apply(fold->context, 0, data.data(), data.size());
  return arrival;
}

double Port::wait_and_receive(Link& channel, int src, std::span<std::byte> data,
                              const MessageTag& tag, bool posted, const Fold* fold, bool combined,
                              std::size_t post_bytes) {
  auto take = [&](const Envelope& envelope) {
    if (!(envelope.tag == tag)) throw_tag_mismatch(src, envelope.tag, tag);
    if (envelope.size != data.size())
      throw_size_mismatch(src, operation_name(), envelope.size, data.size());
    return take_queued(channel, envelope, data, fold);
  };
  auto posted_arrival = [&] {
    note_received();
    // A post without the fold (a small message) got the message as it is: fold it here.
    if (fold != nullptr && landing(fold, data.size()) == nullptr)
      fold->apply(fold->context, 0, data.data(), data.size());
    return channel.take_posted_arrival();
  };

  if (!posted) {
    if (const Envelope* envelope = next_of_kind(channel, src, tag)) return take(*envelope);
    if (data.size() >= post_bytes && none_aside(src, tag)) {
      channel.post(data, tag, landing(fold, data.size()), combined);
      posted = true;
    }
  }
  const double wall_begin = options().trace ? fabric_->seconds_since_start() : 0;
  std::uint32_t peer_meeting = 0;
  const Wait wait = wait_until(src, tag, peer_meeting, [&] {
    if (posted) channel.help_post();  // a large message's sender may share its copy
    return next_of_kind(channel, src, tag) != nullptr || (posted && channel.post_done());
  });
  if (options().trace) record(Event::Kind::wait, src, 0, wall_begin, clock_, "wait");
  if (posted) fabric_->withdraw_post(id_, src);
  auto running = [&] {
    fabric_->state(id_).status.store(detail::kRunning, std::memory_order_release);
  };
  if (posted) {
    if (channel.post_done()) {
      running();
      return posted_arrival();
    }
    // A queued message is next, or the wait failed: withdraw the post first, unless a sender
    // already took it, in which case its copy is about to complete.
    if (!channel.cancel_post()) {
      while (!channel.post_done()) detail::cpu_relax();
      running();
      return posted_arrival();
    }
  }
  if (wait == Wait::aborted) throw_abandoned(src);
  if (wait == Wait::peer_meeting)
    throw_meeting_mismatch(src, tag, "waits for a message from", peer_meeting);
  if (wait == Wait::mismatch) throw CollectiveMismatch(problem_);
  if (wait == Wait::peer_finished)
    throw_stuck(src, tag.kind != 0,
                "VP " + std::to_string(id_) + ": " + operation_name() +
                    " waits for a message from VP " + std::to_string(src) +
                    ", which has already finished");
  // Ready: a message of this kind is first (one of the other kind may have come since).
  return take(*next_of_kind(channel, src, tag));
}

const char* Port::operation_name() const noexcept {
  return operation_ != nullptr ? operation_ : "recv";
}

void Port::look() noexcept {
  // Sequentially consistent: the look the watchdog counts comes before the look itself, never
  // after it (a relaxed store may wait in the store buffer while the look reads stale state).
  fabric_->state(id_).looks.fetch_add(1, std::memory_order_seq_cst);
}

void Port::note_received() noexcept {
  auto& received = fabric_->state(id_).received;
  received.store(received.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void Port::record(Event::Kind kind, int peer, std::uint64_t bytes, double wall_begin,
                  double model_begin, const char* name) {
  Event e;
  e.kind = kind;
  e.vp = id_;
  e.peer = peer;
  e.bytes = bytes;
  e.wall_begin = wall_begin;
  e.wall_end = fabric_->seconds_since_start();
  e.model_begin = model_begin;
  e.model_end = clock_;
  e.name = name;
  e.depth = static_cast<int>(open_spans_.size());
  events_.push_back(e);
}

void Port::open_span(const char* name, const char* algo, std::uint64_t bytes,
                     std::uint32_t group) noexcept {
  try {
    Event e;
    e.kind = Event::Kind::collective;
    e.vp = id_;
    e.bytes = bytes;
    e.wall_begin = fabric_->seconds_since_start();
    e.model_begin = clock_;
    e.name = name;
    e.algo = algo;
    e.group = group;
    open_spans_.push_back(events_.size());
    events_.push_back(e);
  } catch (...) {  // tracing is best effort: never fail a collective for it
  }
}

void Port::close_span() noexcept {
  Event& e = events_[open_spans_.back()];
  open_spans_.pop_back();
  e.wall_end = fabric_->seconds_since_start();
  e.model_end = clock_;
}

// The user's Proc: the user's API, each call forwarded to the port (defined in this file, so
// that the compiler may fold the two into one).
const Topology& Proc::topology() const noexcept { return port_->topology(); }
const Options& Proc::options() const noexcept { return port_->options(); }
double Proc::clock() const noexcept { return port_->clock(); }

void Proc::send_bytes(int dest, std::span<const std::byte> data) {
  port_->check_thread("send");
  port_->send_bytes(dest, data, MessageTag{});
}
void Proc::recv_bytes(int src, std::span<std::byte> data, std::size_t element) {
  port_->check_thread("recv");
  const detail::Port::Elements elements(*port_, element);
  port_->recv_bytes(src, data, MessageTag{});
}
void Proc::sendrecv_bytes(int dest, std::span<const std::byte> out, int src,
                          std::span<std::byte> in, std::size_t element) {
  port_->check_thread("sendrecv");
  const detail::Port::Elements elements(*port_, element);
  port_->sendrecv_bytes(dest, out, src, in, MessageTag{});
}

}  // namespace hypercomm
