// The server's loop (MpiRemote::serve, serve_until_done): forwards what the VPs queue for other
// processes, takes what MPI delivers and hands it to the VPs (handle), and naps when there is
// nothing to do, woken by a VP that needs it.
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <hypercomm/errors.hpp>
#include <mutex>
#include <span>
#include <string_view>

#include "futex.hpp"
#include "mpi_remote.hpp"
#include "mpi_remote_protocol.hpp"

namespace hypercomm::mpi::detail {

// The channels created since the last look that lead from a VP here to one elsewhere (a
// channel's receiver creates it as often as its sender: both ends look it up).
void MpiRemote::add_outgoing(Fabric& fabric) {
  outgoing_epoch_ = fabric.channel_epoch();
  channels_seen_ = fabric.channels_since(channels_seen_, [&](int src, int dst, Link& channel) {
    if (fabric.local(src) && !fabric.local(dst))
      outgoing_.push_back({src, dst, blocks_.owner(dst), &channel});
  });
}

bool MpiRemote::ring_queued(const Outgoing& out) {
  while (const Envelope* envelope = out.channel->front()) {
    const std::size_t size = sizeof(Header) + envelope->size;
    if (way_to(out.process, size) != Way::ring) return false;
    Ring& ring = *rings_->to(out.process);
    const std::span<std::byte> space = ring.reserve(size);
    if (space.empty()) return false;
    const Header header{Kind::message, out.src, out.dst, 0, *envelope};
    std::memcpy(space.data(), &header, sizeof(Header));
    out.channel->take_front(space.subspan(sizeof(Header)));
    ring.commit();
  }
  return true;
}

bool MpiRemote::forward_outgoing(Fabric& fabric, bool& drained) {
  if (fabric.channel_epoch() != outgoing_epoch_) add_outgoing(fabric);
  bool moved = false;
  drained = true;
  for (const Outgoing& out : outgoing_) {
    while (const Envelope* envelope = out.channel->front()) {
      const Header header{Kind::message, out.src, out.dst, 0, *envelope};
      const std::size_t size = sizeof(Header) + envelope->size;
      const Way way = way_to(out.process, size);
      if (way == Way::ring) {
        Ring& ring = *rings_->to(out.process);
        const std::span<std::byte> space = ring.reserve(size);
        if (!space.empty()) {
          std::memcpy(space.data(), &header, sizeof(Header));
          out.channel->take_front(space.subspan(sizeof(Header)));
          ring.commit();
          moved = true;
          continue;
        }
      }
      if (way != Way::mpi) {  // the ring is full, or a long message waits for it to empty
        drained = false;
        break;
      }
      if (in_flight_.size() >= kInFlight) {
        complete_sends(false);
        if (in_flight_.size() >= kInFlight) {
          drained = false;
          return moved;
        }
      }
      Buffer data = buffer(size);
      std::memcpy(data.bytes.get(), &header, sizeof(Header));
      out.channel->take_front(data.span().subspan(sizeof(Header)));
      ++sent_over_mpi_[static_cast<std::size_t>(out.process)];
      post(out.process, std::move(data));
      moved = true;
    }
  }
  return moved;
}

void MpiRemote::post_taken() {
  // The taken receives are the `taken_` before next_posted_: posted again in that order, after
  // every other (MPI matches receives in the order posted).
  for (std::size_t k = posted_.size() - taken_; k < posted_.size(); ++k)
    post_receive(posted_[(next_posted_ + k) % posted_.size()]);
  taken_ = 0;
}

bool MpiRemote::receive_all(Fabric& fabric, int waiting) {
  if (taken_ != 0) post_taken();
  bool any = false;
  for (;;) {
    Posted& slot = posted_[next_posted_];
    if (taken_ == posted_.size()) post_taken();  // every one taken in this call
    if (!slot.held) {
      int flag = 0;
      MPI_Status status;
      check(MPI_Test(&slot.request, &flag, &status), "MPI_Test");
      if (flag == 0) return any;
      slot.source = status.MPI_SOURCE;
      check(MPI_Get_count(&status, MPI_BYTE, &slot.count), "MPI_Get_count");
    }
    const std::span<const std::byte> data(slot.bytes.get(), static_cast<std::size_t>(slot.count));
    Header header;
    std::memcpy(&header, data.data(), sizeof(Header));
    // Taken before the slot is posted again (a receive posted now would come after the others).
    bool straight = false, reached = false;
    if (header.kind == Kind::large) {
      const Large taken = receive_large(fabric, slot, header);
      if (taken == Large::held) return any;  // what follows waits too
      straight = taken == Large::straight;
    } else if (header.kind == Kind::spill) {
      MPI_Message found = MPI_MESSAGE_NULL;
      const int size = probe_payload(slot.source, found);
      if (static_cast<std::size_t>(size) != header.aux)
        throw Error("hypercomm::mpi: a spilled message from process " +
                    std::to_string(slot.source) + " has " + std::to_string(size) +
                    " bytes where its header says " + std::to_string(header.aux));
      if (staging_.size() < static_cast<std::size_t>(size))
        staging_.resize(static_cast<std::size_t>(size));  // kept at its largest: no refill
      check(MPI_Mrecv(staging_.data(), size, MPI_BYTE, &found, MPI_STATUS_IGNORE), "MPI_Mrecv");
      handle(fabric, slot.source, std::span(staging_).first(static_cast<std::size_t>(size)));
    } else {
      reached = handle(fabric, slot.source, data, waiting);
    }
    // Posted again by the next call, not now: a VP whose message this was takes it first.
    ++taken_;
    next_posted_ = (next_posted_ + 1) % posted_.size();
    any = true;
    // Its receiver has yet to take it and post the next receive: a sender that runs ahead (a
    // broadcast called back to back) has the next one on its way, found by the next pass. And a
    // VP that has its message takes it now; a test of the next receive (a call into MPI's
    // progress) would only delay it.
    if (straight || reached) return any;
  }
}

int MpiRemote::probe_payload(int from, MPI_Message& found) {
  MPI_Status status;
  check(MPI_Mprobe(from, kPayloadTag, comm_, &found, &status), "MPI_Mprobe");
  int count = 0;
  check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
  return count;
}

// The payload of a large message follows its header from the same process: into the receiver's
// posted buffer when it waits for it (no copy here), else onto the channel. A receiver that runs
// (it has not yet posted its receive, but will soon) is waited for a little, the payload probed
// and held in the slot, the passes meanwhile taking nothing after it.
MpiRemote::Large MpiRemote::receive_large(Fabric& fabric, Posted& slot, const Header& header) {
  const int from = slot.source;
  MPI_Message found = slot.payload;
  const int count = slot.held ? static_cast<int>(header.envelope.size) : probe_payload(from, found);
  const auto size = static_cast<std::size_t>(count);
  if (size != header.envelope.size)
    throw Error("hypercomm::mpi: a large message from process " + std::to_string(from) + " has " +
                std::to_string(size) + " bytes where its header says " +
                std::to_string(header.envelope.size));
  Link& channel = fabric.channel(header.src, header.dst);
  struct Matched {
    MPI_Message* found;
    int count;
  } matched{&found, count};
  const bool straight = channel.try_hand_over_with(
      header.envelope,
      [](void* context, std::span<std::byte> to) {
        const Matched& m = *static_cast<const Matched*>(context);
        check(MPI_Mrecv(to.data(), m.count, MPI_BYTE, m.found, MPI_STATUS_IGNORE), "MPI_Mrecv");
      },
      &matched);
  if (!straight) {
    const auto now = Clock::now();
    if (!slot.held) slot.held_since = now;
    if (about_to_post(fabric, header.dst, header.src) && !fabric.aborted() &&
        now - slot.held_since < kHoldLarge) {
      slot.held = true;
      slot.payload = found;
      return Large::held;
    }
    if (staging_.size() < size) staging_.resize(size);
    check(MPI_Mrecv(staging_.data(), count, MPI_BYTE, &found, MPI_STATUS_IGNORE), "MPI_Mrecv");
    channel.push(header.envelope, std::span(staging_).first(size));
  }
  slot.held = false;
  slot.payload = MPI_MESSAGE_NULL;
  delivered_over_mpi(from);
  fabric.notify(header.dst);
  ++delivered_;
  return straight ? Large::straight : Large::staged;
}

bool MpiRemote::handle(Fabric& fabric, int from, std::span<const std::byte> data, int waiting,
                       bool from_ring) {
  const auto foreign = [&] {
    return Error("hypercomm::mpi: a message of " + std::to_string(data.size()) +
                 " bytes from process " + std::to_string(from) + " is not one hypercomm sent");
  };
  if (data.size() < sizeof(Header)) throw foreign();
  Header header;
  std::memcpy(&header, data.data(), sizeof(Header));
  // Only messages and the records of those written into a post take a ring.
  if (from_ring && header.kind != Kind::message) throw foreign();  // only messages take a ring
  const std::span<const std::byte> body = data.subspan(sizeof(Header));
  switch (header.kind) {
    case Kind::message: {
      if (!from_ring) delivered_over_mpi(from);
      // This thread is the only producer of the channels from VPs of other processes.
      Link& channel = fabric.channel(header.src, header.dst);
      if (body.size() < hypercomm::detail::kHandOverBytes ||
          !channel.try_hand_over(header.envelope, body))
        channel.push(header.envelope, body);
      ++delivered_;
      if (header.dst == waiting) return true;  // this thread: it polls its channels
      fabric.notify(header.dst);
      return false;
    }
    case Kind::finished:  // aux VP ids follow
      // Their messages on the ring came before: delivered first, so that a VP that waits for one
      // of them does not find its sender gone without it.
      if (Ring* ring = rings_ != nullptr ? rings_->from(from) : nullptr) {
        bool any = false;
        (void)drain_ring(fabric, *ring, from, -1, any, false);  // nothing held: all delivered
      }
      if (body.size() < header.aux * sizeof(int)) throw foreign();
      if (header.dst >= 0) {  // they left for an abort, which this process may not have had yet
        const std::span<const std::byte> relay = body.subspan(header.aux * sizeof(int));
        if (relay.size() < sizeof(Relay)) throw foreign();
        Relay what;
        std::memcpy(&what, relay.data(), sizeof(Relay));
        aborted_by(fabric, header.dst, what.vp, what.kind, relay.subspan(sizeof(Relay)));
      }
      for (std::uint32_t k = 0; k < header.aux; ++k) {
        int vp = 0;
        std::memcpy(&vp, body.data() + k * sizeof(int), sizeof(int));
        fabric.remote_finished(vp);
      }
      remote_finished_ += static_cast<int>(header.aux);
      if (rank_ == 0) finished_of_[static_cast<std::size_t>(from)] += static_cast<int>(header.aux);
      return false;
    case Kind::abort: aborted_by(fabric, from, header.src, header.aux, body); return false;
    case Kind::status: {
      if (header.aux == kBeat) {
        heard_[static_cast<std::size_t>(from)] = Clock::now();
        return false;
      }
      Status status;
      std::memcpy(&status, body.data(), sizeof(Status));
      std::vector<PublishedCall> calls(status.calls);
      const std::size_t calls_bytes = calls.size() * sizeof(PublishedCall);
      if (calls_bytes != 0) std::memcpy(calls.data(), body.data() + sizeof(Status), calls_bytes);
      const std::size_t text_at = sizeof(Status) + calls_bytes;
      note_status(
          from, status,
          std::string(reinterpret_cast<const char*>(body.data()) + text_at, body.size() - text_at),
          std::move(calls), Clock::now());
      return false;
    }
    case Kind::large:  // receive_all takes these, with what follows on the payload tag
    case Kind::spill: return false;
    case Kind::in_place: throw foreign();  // drain_ring takes these (on rings only)
    case Kind::written: throw foreign();   // drain_ring takes these (on rings only)
  }
  return false;
}

void MpiRemote::idle(unsigned& idle_rounds) noexcept {
  // Yield first, for about a millisecond: a message from another process is seen within one
  // pass of the loop while the VPs of this process still get the core whenever they can run;
  // then sleep in short naps, woken at once by a VP that queues a message for another process,
  // and looking for arrivals after each.
  if (++idle_rounds < 4096) {
    sched_yield();
    return;
  }
  const std::uint32_t seen = outbox_.load(std::memory_order_seq_cst);
  sleeping_.store(kNapping, std::memory_order_seq_cst);
  hypercomm::detail::futex_wait(outbox_, seen, std::chrono::microseconds(20));
  sleeping_.store(kAwake, std::memory_order_relaxed);
}

void MpiRemote::prepare(Fabric& fabric) {
  {
    const std::lock_guard lock(mutex_);
    const auto here = static_cast<std::size_t>(last_ - first_);
    announced_.assign(here, false);
    finished_.clear();
    remaining_seen_ = ~std::uint32_t{0};
    remote_finished_ = 0;
    delivered_ = 0;
    abort_announced_ = false;
    abort_relay_.clear();
    outgoing_.clear();
    channels_seen_ = 0;
    outgoing_epoch_ = ~0ull;
    status_sent_ = false;
    last_status_ = {};
    const auto processes = static_cast<std::size_t>(blocks_.processes);
    statuses_.assign(processes, Status{});
    wait_texts_.assign(processes, {});
    stalled_calls_.assign(processes, {});
    heard_.assign(processes, Clock::time_point{});
    finished_of_.assign(processes, 0);
    quiet_since_ = next_tick_ = Clock::now();
    fabric_ = &fabric;
    done_ = false;
    serving_ = true;
    std::atomic_ref(run_).store(run_ + 1, std::memory_order_relaxed);
  }
}

void MpiRemote::serve(Fabric& fabric) {
  const auto grace =
      std::max<std::chrono::nanoseconds>(kAbortGrace, 2 * fabric.options().deadlock_timeout);
  try {
    serve_until_done(fabric, grace);
  } catch (const std::exception& e) {
    abort_all(e);
  }
}

bool MpiRemote::pass(Fabric& fabric, bool watching, int waiting, bool arrivals) {
  if (!watching) note_vp_pass();
  // VPs seen finished before their last messages are forwarded, so that the finish follows
  // them; an abort goes before the finishes of the VPs it released (who waits for one of those
  // learns of the abort first, not of a VP that left).
  // Looked for only when a VP has finished since the last look (Fabric::finish marks it, then
  // counts it off remaining), or one seen then still waits to be announced: each VP's state is
  // written at its every wait, and a look at all of them in each pass cost a miss each.
  if (const std::uint32_t remaining = fabric.remaining();
      remaining != remaining_seen_ || !finished_.empty()) {
    remaining_seen_ = remaining;
    finished_.clear();
    for (int vp = first_; vp < last_; ++vp)
      if (!announced_[static_cast<std::size_t>(vp - first_)] &&
          fabric.state(vp).status.load(std::memory_order_acquire) == kFinished)
        finished_.push_back(vp);
  }
  bool drained = true;
  bool busy = forward_outgoing(fabric, drained);
  if (fabric.aborted() && !abort_announced_) announce_abort(fabric);
  // One message for the VPs that finished since the last pass, once their messages have left.
  if (!finished_.empty() && drained) {
    for (const int vp : finished_) announced_[static_cast<std::size_t>(vp - first_)] = true;
    const Header header{Kind::finished,
                        -1,
                        abort_relay_.empty() ? -1 : relay_from_,
                        static_cast<std::uint32_t>(finished_.size()),
                        {}};
    const std::span<const std::byte> ids = std::as_bytes(std::span(finished_));
    if (abort_relay_.empty()) {
      to_all(header, ids);
    } else {
      std::vector<std::byte> body(ids.begin(), ids.end());
      body.insert(body.end(), abort_relay_.begin(), abort_relay_.end());
      to_all(header, body);
    }
    if (rank_ == 0) finished_of_[0] += static_cast<int>(finished_.size());
    finished_.clear();
    busy = true;
  }
  // A VP whose message came on a ring takes it now; the look at MPI waits for its next pass.
  bool took = false;
  const bool reached = rings_ != nullptr && drain_rings(fabric, waiting, took);
  busy = took || busy;
  if (!reached && arrivals) busy = receive_all(fabric, waiting) || busy;
  busy = busy || !drained;  // what waits for room: pass again soon
  room_wanted_ = !drained;
  complete_sends(false);
  if (!done_ && remote_finished_ == blocks_.vps - (last_ - first_) &&
      std::find(announced_.begin(), announced_.end(), false) == announced_.end()) {
    done_ = true;
    wake_server();  // it may nap
  }
  if (watching) watch(fabric, Clock::now());  // the server's passes: a VP's reads no clock
  return busy;
}

void MpiRemote::nap(const Fabric& fabric, bool quiet) noexcept {
  // The VPs move their messages themselves (and call MPI while they wait, which moves the large
  // ones; or, where this thread moves the MPI traffic, every message they wait for comes on a
  // ring, and they take it off): look now and then, for a VP asleep in a long wait whose message
  // has come (often, while there is one: Remote::sleeping wakes this thread), for messages queued
  // while every VP computes, and for the deadlock watch. Never spin: this thread may share its core
  // with the VPs (mpirun --bind-to core). While the VPs pass themselves, rarely: each time this
  // thread wakes it takes a VP's core from it; naps of 200 us made 60-170 of 20000 all-reduces
  // of 8 B between two processes take 10-800 us, a third to half of the calls' time.
  using std::chrono::microseconds;
  const std::uint64_t passes = vp_passes_.load(std::memory_order_relaxed);
  const bool vps_pass = passes != vp_passes_seen_;
  vp_passes_seen_ = passes;
  const std::uint32_t seen = outbox_.load(std::memory_order_seq_cst);
  microseconds length = vps_pass ? microseconds(20000) : microseconds(200);
  bool long_quiet = false;  // a VP that needs this thread wakes it (call_server)
  if (quiet && !vps_pass) {
    const Clock::time_point large_moved{
        Clock::duration(std::max(large_read_at_.load(std::memory_order_relaxed),
                                 large_sent_at_.load(std::memory_order_relaxed)))};
    long_quiet = Clock::now() - large_moved >= kLargePhase;
    length = long_quiet ? kQuietNap : kQuietNapAmidLarge;
  }
  if (remote_sleeper(fabric)) {
    length = microseconds(20);
    long_quiet = false;
  }
  sleeping_.store(long_quiet ? kQuietNapping : kNapping, std::memory_order_seq_cst);
  hypercomm::detail::futex_wait(outbox_, seen, length);
  sleeping_.store(kAwake, std::memory_order_relaxed);
}

void MpiRemote::serve_until_done(Fabric& fabric, std::chrono::nanoseconds grace) {
  unsigned idle_rounds = 0, missed = 0;
  for (;;) {
    bool busy = false, sending = false, wants_room = false;
    // The VPs move their messages on the rings: MPI brings only the other processes' finishes,
    // an abort, a deadlock report. A test of MPI's receives yields the core inside MPI where
    // Open MPI yields when idle (as under --oversubscribe), with the mutex held, and a VP that
    // finds it held queues its message for this thread instead of putting it on the ring.
    // Not while large messages move: this thread, on whichever core is free, reads them for VPs
    // that wait descheduled (4 processes on 2 cores, 1 MiB, four alternating pairs: broadcast
    // 0.80-1.22x Open MPI's time, all-gather 0.74-1.19x; napping through them, 1.13-1.46x and
    // 0.70-1.42x).
    bool quiet = fabric.remaining() != 0 && vps_take_their_own(fabric);
    bool arrivals = true;
    if (quiet) {
      const auto now = Clock::now();
      const Clock::time_point large_read{
          Clock::duration(large_read_at_.load(std::memory_order_relaxed))};
      quiet = now - large_read >= kQuietAfterLarge;
      arrivals = !quiet || now - arrivals_looked_ >= kQuietLook;
      if (arrivals) arrivals_looked_ = now;
    }
    {
      // Where the VPs move their messages, one that passes now is left alone (a few times in a
      // row at most): blocked on the mutex, this thread would be woken by the VP's unlock and
      // take the VP's core from it mid-wait (mpirun --bind-to core gives the process one core).
      std::unique_lock lock(mutex_, std::defer_lock);
      if (vps_drive_ && missed < 8 && fabric.remaining() != 0) {
        if (!lock.try_lock()) {
          ++missed;
          nap(fabric);
          continue;
        }
      } else {
        lock.lock();
      }
      missed = 0;
      requested_.store(false, std::memory_order_seq_cst);
      busy = pass(fabric, true, -1, arrivals);
      if (done_) {
        serving_ = false;  // from now on the VPs leave MPI alone
        complete_sends(true);
        return;
      }
      sending = !in_flight_.empty();
      wants_room = room_wanted_;
      if (abort_announced_ && Clock::now() - abort_since_ > grace) {
        std::fprintf(stderr,
                     "hypercomm::mpi: process %d: the VPs have not all left %.0f s after the run "
                     "aborted; calling MPI_Abort\n",
                     rank_, std::chrono::duration<double>(grace).count());
        MPI_Abort(comm_, 1);
      }
    }
    if (busy || requested_.load(std::memory_order_seq_cst)) {
      idle_rounds = 0;
      // Waiting for room (a full ring, MPI's window): the receiving process, which makes it,
      // may need this core.
      if (wants_room) sched_yield();
    } else if (vps_drive_ && fabric.remaining() != 0) {
      nap(fabric);
    } else if (quiet && !sending) {
      // Polling here would only take the core from the VPs where they share it (4 processes on
      // 2 cores: each core cycled through two VPs and two servers, an all-reduce of 8 B took
      // 5-6x Open MPI's time).
      idle_rounds = 0;
      nap(fabric, true);
    } else if (sending) {
      // A large message moves only while MPI is called on both sides: keep calling it.
      idle_rounds = 0;
      sched_yield();
    } else {
      idle(idle_rounds);
    }
  }
}

}  // namespace hypercomm::mpi::detail
