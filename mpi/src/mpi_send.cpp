// A VP's message to a VP of another process (MpiRemote::send): in one MPI message at once, on
// the node's ring, left in place for the receiver to read, or written into the receiver's post
// on the board; and the receiving side of the messages left in place and written.
#include <sched.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <hypercomm/errors.hpp>
#include <mutex>
#include <span>
#include <string_view>

#include "mpi_remote.hpp"
#include "mpi_remote_protocol.hpp"

namespace hypercomm::mpi::detail {

namespace {

// A shared message's claim word before its first chunk is taken (Ring::InPlaceShare).
constexpr std::uint64_t first_claim(std::uint64_t sequence) noexcept {
  return (sequence & 0xffffffffu) << 32;
}

// Copies the chunks of a shared message (Ring::InPlaceShare) that this side claims, while they
// are the message `sequence`'s, with copy(offset, bytes) (false: it failed, errno says why).
template <class Copy>
bool copy_claimed(Ring::InPlaceShare& share, std::uint64_t sequence, Copy&& copy) {
  const std::uint64_t mine = first_claim(sequence);
  auto claim = std::atomic_ref(share.claim);
  for (std::uint64_t now = claim.load(std::memory_order_acquire);
       (now & ~std::uint64_t{0xffffffffu}) == mine;) {
    const auto chunk = static_cast<std::uint32_t>(now);
    if (chunk >= std::atomic_ref(share.chunks).load(std::memory_order_relaxed)) break;
    if (!claim.compare_exchange_weak(now, now + 1, std::memory_order_acquire,
                                     std::memory_order_acquire))
      continue;
    // Claimed: the fields stay this message's until its last chunk is counted.
    const std::size_t offset = chunk * share.chunk_bytes;
    if (!copy(offset, std::min<std::size_t>(share.chunk_bytes, share.size - offset))) return false;
    std::atomic_ref(share.done).fetch_add(1, std::memory_order_release);
    now = claim.load(std::memory_order_acquire);
  }
  return true;
}

// A Link::Fill: reads the message at *context (a Place) into `to`, whole, or in chunks of which
// its sender writes some.
void read_from(void* context, std::span<std::byte> to) {
  const Place& place = *static_cast<const Place*>(context);
  const auto read = [&](std::size_t offset, std::size_t bytes) {
    return read_process(place.pid, place.address + offset, to.subspan(offset, bytes));
  };
  bool read_all = true;
  if (place.share == nullptr) {
    read_all = read(0, to.size());
  } else {
    Ring::InPlaceShare& share = *place.share;
    share.destination = reinterpret_cast<std::uintptr_t>(to.data());
    share.chunk_bytes = place.chunk;
    share.size = to.size();
    const auto chunks = static_cast<std::uint32_t>((to.size() + place.chunk - 1) / place.chunk);
    std::atomic_ref(share.chunks).store(chunks, std::memory_order_relaxed);
    std::atomic_ref(share.done).store(0, std::memory_order_relaxed);
    std::atomic_ref(share.claim).store(first_claim(place.sequence), std::memory_order_release);
    read_all = copy_claimed(share, place.sequence, read);
    // The sender's last chunks: copies under way, which nothing else holds up.
    while (read_all && std::atomic_ref(share.done).load(std::memory_order_acquire) < chunks)
      sched_yield();
  }
  if (read_all) return;
  throw Error("hypercomm::mpi: reading a message of " + std::to_string(place.size) +
              " bytes left in place by process " + std::to_string(place.process) + " (pid " +
              std::to_string(place.pid) + ") failed: " + std::strerror(errno));
}

}  // namespace

// A small message from a VP: header and payload copied onto the ring to dst's process, or, where
// the VP may call MPI, into one MPI message at once, rather than onto the channel and off it
// again in a pass, whose look for arrivals (a test that finds nothing: most of a pass's cost) a
// VP that sends does not need.
bool MpiRemote::send_small(int src, int dst, Link& channel, const Envelope& envelope,
                           std::span<const std::byte> payload) {
  {
    std::unique_lock lock(mutex_, std::try_to_lock);
    // Another thread at MPI, or no run served: queued, and moved by a pass.
    if (!lock.owns_lock() || !serving_) return false;
    // What src queued for dst before, waiting for room, goes first (MPI and the ring keep a
    // sender's messages in order): moved onto the ring now where it fits, else this one is
    // queued behind it. Left to the serving thread's passes, a root that broadcasts 8 B back to
    // back had every later message queued too once one was (a fifth of the CPU in
    // forward_outgoing, new channel segments allocated): 4 processes of one VP on 2 cores,
    // three alternating rounds (2026-11-28), 0.37 us a call against 0.38-0.67 (Open MPI
    // 0.30-0.47), 16 KiB 8.2-10.1 against 13.1-18.6; 8 processes 0.94-1.09 against 1.24-1.30.
    if (channel.front() != nullptr &&
        !ring_queued(Outgoing{src, dst, blocks_.owner(dst), &channel}))
      return false;
    const Header header{Kind::message, src, dst, 0, envelope};
    const std::size_t size = sizeof(Header) + payload.size();
    const auto write = [&](std::byte* to) {
      std::memcpy(to, &header, sizeof(Header));
      if (!payload.empty()) std::memcpy(to + sizeof(Header), payload.data(), payload.size());
    };
    const int process = blocks_.owner(dst);
    const Way way = way_to(process, size);
    if (way == Way::ring) {
      Ring& ring = *rings_->to(process);
      std::span<std::byte> space = ring.reserve(size);
      // Full: where the node is crowded a large message waits for room (kWaitForRoomBytes).
      // Others may send over MPI meanwhile (a message too long for the ring, once it is
      // empty): then this one waits, queued, for them to arrive (way_to).
      if (space.empty() && payload.size() >= kWaitForRoomBytes && fabric_->node_crowded())
        wait_moving_others(lock, [&] {
          if (way_to(process, size) != Way::ring) return true;
          space = ring.reserve(size);
          return !space.empty() || fabric_->aborted();
        });
      if (space.empty()) return false;  // full: queued, and put on it by a later pass
      write(space.data());
      ring.commit();
      if (!vps_drive_) return true;  // the server's naps do not count these
      note_vp_pass();
      return true;
    }
    if (way == Way::later || !vps_drive_) return false;
    if (in_flight_.size() >= kInFlight) {
      complete_sends(false);
      if (in_flight_.size() >= kInFlight) return false;
    }
    ++sent_over_mpi_[static_cast<std::size_t>(process)];
    if (in_flight_.empty() && payload.size() <= kSentAtOnceBytes) {
      // Sent from here and done with on return: an eager send that no receive holds up.
      std::array<std::byte, sizeof(Header) + kSentAtOnceBytes> data;
      write(data.data());
      check(MPI_Send(data.data(), static_cast<int>(size), MPI_BYTE, process, kTag, comm_),
            "MPI_Send");
    } else {
      Buffer data = buffer(size);
      write(data.bytes.get());
      post(process, std::move(data));
      complete_sends(false);
    }
    note_vp_pass();
  }
  passed();
  return true;
}

// A message from a VP that may call MPI: a small one copied into an MPI message or onto the ring
// at once (send_small); a large one, or one to a process of this node that its ring does not
// take, sent from the VP's own buffer, so that it is not copied into the channel and out again:
// its header, then its payload as the next MPI message to that process (the mutex is held
// between the two: nothing comes between them). A message of 16-60 KiB that a ring of 64 KiB
// did not take went through the channel and a spill, copied four times: a broadcast of it
// between 2 processes took 3.6-6.6x Open MPI's time, 1.1-1.2x from the VP's buffer.
bool MpiRemote::send(int src, int dst, Link& channel, const Envelope& envelope,
                     std::span<const std::byte> payload) {
  if (board_) {
    const std::uint64_t sent_before = count_sent(src, dst);
    if (payload.size() >= kBoardBytes && write_into_post(src, dst, envelope, payload, sent_before))
      return true;
  }
  // (The rings' size is compared first: a small message looks up no ring here.) A larger one
  // that the ring to its process takes (a crowded node's rings take up to 128 KiB) goes on it.
  const bool small = payload.size() < kFromBufferBytes;
  const bool fits = rings_ != nullptr && sizeof(Header) + payload.size() <= rings_->most();
  if ((vps_drive_ || rings_ != nullptr) &&
      (small ? fits || rings_ == nullptr || rings_->to(blocks_.owner(dst)) == nullptr
             : fits && rings_->to(blocks_.owner(dst)) != nullptr))
    return send_small(src, dst, channel, envelope, payload);
  const int process = blocks_.owner(dst);
  // To a process of this node that can read this one's memory: left in place, at any thread
  // level, oversubscribed or not (one copy, by the receiving process, when it is ready).
  const bool in_place = rings_ != nullptr && rings_->in_place() && rings_->to(process) != nullptr;
  // Over MPI only where each thread has a core: the sender waits for the whole transfer, which
  // under oversubscription takes a switch to the receiving process per fragment (MPICH's
  // pipeline of shared-memory cells made a suite of 4 processes on 2 cores 7x slower); there
  // the message is queued and moves while the VP goes on.
  if (!in_place && (!vps_drive_ || payload.size() > static_cast<std::size_t>(INT_MAX)))
    return false;
  std::unique_lock lock(mutex_);
  if (!serving_) return false;
  // What src queued for dst before goes first: moved onto the ring now where it fits (as in
  // send_small), else this one is queued behind it. A small message left queued (one that found
  // the mutex taken) sent the next large message over MPI, and every later one followed it there
  // until it had arrived (way_to): over 4 processes on 2 cores the second broadcast of 1 MiB in
  // a run took 1.6-1.9 ms, the others 0.23. Alternated (2026-12-01, three sets of 8-12 rounds,
  // one VP a process), the time of a broadcast of 1 MiB over 4 processes 0.68-0.85 of that
  // before, over 8 0.89 (one set); an all-gather of 1 MiB over 4 1.08-1.21, though its sends
  // found a message queued before them 0-2 times in 1,200 (counted: the rounds' drift). Not
  // where VPs that call MPI share cores (HYPERCOMM_MPI_PROGRESS=vps on an oversubscribed
  // node): the sender's wait, a pass into MPI at every look, made MPICH's suite of 4 processes
  // on 2 cores 4-5x slower (its collective suites 50-67 s, 13 s with the message queued).
  if (in_place && !(vps_drive_ && fabric_->oversubscribed()) &&
      (channel.front() == nullptr || ring_queued(Outgoing{src, dst, process, &channel})) &&
      way_to(process, sizeof(Header) + sizeof(InPlace)) == Way::ring)
    return send_in_place(src, dst, process, envelope, payload, lock);
  if (!vps_drive_ || fabric_->oversubscribed() ||
      payload.size() > static_cast<std::size_t>(INT_MAX))
    return false;
  // What src queued for dst before goes first (one tag: MPI keeps a sender's messages in order);
  // where some of it waits for room, this message is queued behind it.
  bool drained = true;
  (void)forward_outgoing(*fabric_, drained);
  if (!drained) return false;
  const Header header{Kind::large, src, dst, 0, envelope};
  if (way_to(process, sizeof(Header) + payload.size()) != Way::mpi) return false;
  ++sent_over_mpi_[static_cast<std::size_t>(process)];
  post(process, message(&header, sizeof(Header)));
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Isend(payload.data(), static_cast<int>(payload.size()), MPI_BYTE, process, kPayloadTag,
                  comm_, &request),
        "MPI_Isend");
  // The buffer is the VP's: wait until MPI is done with it.
  wait_moving_others(lock, [&] {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  });
  return true;
}

// Until done(): moves the other messages of this process (a pass where the VPs call MPI, else
// the rings alone: the server moves the MPI traffic), letting other threads at the mutex between
// looks, and yields the core now and then (at every look where VPs share cores: the receiving
// process may need this one to run).
template <class Done>
void MpiRemote::wait_moving_others(std::unique_lock<std::mutex>& lock, Done&& done) {
  for (unsigned looks = 1; !done(); ++looks) {
    if (vps_drive_) {
      (void)pass(*fabric_, false);
    } else {
      bool any = false;
      (void)drain_rings(*fabric_, -1, any);
    }
    lock.unlock();
    if ((looks & 15) == 0 || fabric_->oversubscribed()) sched_yield();
    lock.lock();
  }
}

// A large message between processes of one node, as Open MPI's shared memory moves one with
// cross-memory attach: the receiving process reads it from the sender's buffer straight into
// the receiver's post, one copy (Open MPI without it, or MPICH, copy it into shared memory and
// out again), and no MPI call on either side. The sender waits for that, as for an MPI send
// from its buffer, moving the others' messages meanwhile.
bool MpiRemote::send_in_place(int src, int dst, int process, const Envelope& envelope,
                              std::span<const std::byte> payload,
                              std::unique_lock<std::mutex>& lock) {
  Ring& ring = *rings_->to(process);
  const std::span<std::byte> space = ring.reserve(sizeof(Header) + sizeof(InPlace));
  if (space.empty()) return false;  // full: queued, and sent by a pass (rare: records are short)
  const std::uint64_t sequence = ++sent_in_place_[static_cast<std::size_t>(process)];
  int& waiting_for_read = in_place_to_[static_cast<std::size_t>(src - first_)];
  waiting_for_read = dst;
  const Header header{Kind::in_place, src, dst, 0, envelope};
  const InPlace where{reinterpret_cast<std::uintptr_t>(payload.data()), sequence};
  std::memcpy(space.data(), &header, sizeof(Header));
  std::memcpy(space.data() + sizeof(Header), &where, sizeof(InPlace));
  ring.commit();
  if (vps_drive_) note_vp_pass();
  large_sent_at_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  // Even after an abort: the receiving process reads or drops every record before its run ends
  // (it serves until every VP everywhere has finished), and this buffer must stay until then.
  // Where the receiving process shares the copy with this one, this VP writes the chunks it
  // claims meanwhile (without the mutex).
  const bool shared = shared_chunk_bytes(src, dst, payload.size()) != 0;
  const auto write = [&](std::size_t offset, std::size_t bytes) {
    const Ring::InPlaceShare& share = ring.in_place_share();
    return write_process(rings_->pid(process), share.destination + offset,
                         payload.subspan(offset, bytes));
  };
  wait_moving_others(lock, [&] {
    if (shared && ring.read_in_place() < sequence) {
      lock.unlock();
      const bool written = copy_claimed(ring.in_place_share(), sequence, write);
      lock.lock();
      if (!written)
        abort_all(Error("hypercomm::mpi: VP " + std::to_string(src) +
                        " could not write a chunk of its message of " +
                        std::to_string(payload.size()) + " bytes into VP " + std::to_string(dst) +
                        " in process " + std::to_string(process) + ": " + std::strerror(errno)));
    }
    return ring.read_in_place() >= sequence;
  });
  waiting_for_read = -1;
  return true;
}

MpiRemote::Large MpiRemote::read_in_place(Fabric& fabric, int from, const Header& header,
                                          const InPlace& where, bool may_hold) {
  auto& held_since = held_since_[static_cast<std::size_t>(from)];
  if (fabric.aborted()) {  // nobody will take it: not read (its sender waits only for this)
    held_since = {};
    return Large::dropped;
  }
  large_read_at_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  // Large messages move: the server reads them for VPs that wait descheduled; out of its long
  // nap (4 processes on 2 cores, a broadcast of 1 MiB took 6x Open MPI's time napping through).
  call_server();
  Place place{rings_->pid(from), where.address, from, header.envelope.size};
  // Not where the receiver's own message to the sender waits for the sender's process to read
  // it: an exchange, whose two copies keep both cores busy already (shared, 2 processes on 2
  // cores, 2026-12-01: all-gather of 512 KiB 115 us a call against 94, all-reduce 121 against
  // 108).
  if (const std::size_t chunk = shared_chunk_bytes(header.src, header.dst, place.size);
      chunk != 0 && in_place_to_[static_cast<std::size_t>(header.dst - first_)] != header.src) {
    place.share = &rings_->from(from)->in_place_share();
    place.sequence = where.sequence;
    place.chunk = chunk;
  }
  Link& channel = fabric.channel(header.src, header.dst);
  const bool straight = channel.try_hand_over_with(header.envelope, read_from, &place);
  if (!straight) {
    const auto now = Clock::now();
    if (held_since == Clock::time_point{}) held_since = now;
    // Any receiver that has not finished will post, unless it waits for its own message left
    // in place to be read by this sender (both would wait until the hold ran out).
    const auto receiver = static_cast<std::size_t>(header.dst - first_);
    const bool will_post = fabric.state(header.dst).status.load(std::memory_order_acquire) !=
                               hypercomm::detail::kFinished &&
                           in_place_to_[receiver] != header.src;
    if (may_hold && will_post && now - held_since < hold_in_place(place.size)) return Large::held;
    // Read straight onto the channel: two copies in all, as a message queued in one process.
    channel.push_with(header.envelope, read_from, &place);
  }
  held_since = {};
  ++delivered_;
  return straight ? Large::straight : Large::staged;
}

// A large message on a ring: into its receiver's post, or held at the front of the ring a
// little for a receiver about to post it, or else copied onto the channel.
MpiRemote::Large MpiRemote::take_large_record(Fabric& fabric, int from, const Header& header,
                                              std::span<const std::byte> body, bool may_hold) {
  auto& held_since = held_since_[static_cast<std::size_t>(from)];
  Link& channel = fabric.channel(header.src, header.dst);
  const bool straight = channel.try_hand_over(header.envelope, body);
  if (!straight) {
    const auto now = Clock::now();
    if (held_since == Clock::time_point{}) held_since = now;
    if (may_hold && !fabric.aborted() && about_to_post(fabric, header.dst, header.src) &&
        now - held_since < kHoldLarge)
      return Large::held;
    channel.push(header.envelope, body);
  }
  held_since = {};
  ++delivered_;
  return straight ? Large::straight : Large::staged;
}

std::uint64_t MpiRemote::count_sent(int src, int dst) noexcept {
  Sent& sent =
      sent_to_[static_cast<std::size_t>(src - first_) * static_cast<std::size_t>(blocks_.vps) +
               static_cast<std::size_t>(dst)];
  const std::uint64_t run = std::atomic_ref(run_).load(std::memory_order_relaxed);
  if (sent.run != run) sent = {run, 0};
  return sent.count++;
}

void MpiRemote::publish_post(int vp, int src) noexcept {
  Published& mine = published_[static_cast<std::size_t>(vp - first_)];
  if (mine.ring != nullptr) return;
  Link::OwnPost post;
  if (!fabric_->channel(src, vp).own_post(post) || post.buffer.size() < kBoardBytes) return;
  Ring* ring = rings_->from(blocks_.owner(src));
  if (ring == nullptr) return;
  BoardSlot& slot = *ring->board(static_cast<std::size_t>(vp - first_));
  auto state = std::atomic_ref(slot.state);
  const std::uint64_t now = state.load(std::memory_order_acquire);
  if ((now & 3) != BoardSlot::kEmpty) return;  // (never: each post is withdrawn)
  slot.address = reinterpret_cast<std::uintptr_t>(post.buffer.data());
  slot.size = post.buffer.size();
  slot.received = post.received;
  slot.src = src;
  std::memcpy(slot.tag, &post.tag, sizeof slot.tag);
  const std::uint64_t posted = (((now >> 2) + 1) << 2) | BoardSlot::kPosted;
  state.store(posted, std::memory_order_release);
  mine = {ring, src, posted};
}

void MpiRemote::withdraw_post(int vp, int src) noexcept {
  if (!board_) return;
  Published& mine = published_[static_cast<std::size_t>(vp - first_)];
  if (mine.ring == nullptr || mine.src != src) return;
  BoardSlot& slot = *mine.ring->board(static_cast<std::size_t>(vp - first_));
  auto state = std::atomic_ref(slot.state);
  const std::uint64_t empty = mine.state & ~std::uint64_t{3};
  const std::uint64_t written = empty | BoardSlot::kWritten;
  Link& channel = fabric_->channel(src, vp);
  const int from = blocks_.owner(src);
  for (unsigned looks = 1;; ++looks) {
    std::uint64_t seen = mine.state;
    // Not taken (a sender that claimed it for another message gave it back): withdrawn.
    if (state.compare_exchange_strong(seen, empty, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
      break;
    // A sender took it: the message is in the buffer once the record that says so, on the ring
    // from its process, has completed the post (or the run has aborted: the record is then
    // dropped, and the post withdrawn as any other). Until then the buffer is not the VP's.
    if (seen == written && (channel.post_done() || fabric_->aborted())) {
      state.store(empty, std::memory_order_release);
      break;
    }
    if (seen == written) {
      const std::unique_lock lock(mutex_, std::try_to_lock);
      if (lock.owns_lock() && serving_) {
        bool any = false;
        try {
          (void)drain_ring(*fabric_, *mine.ring, from, vp, any);
        } catch (const std::exception& e) {
          abort_all(e);
        }
      }
    }
    if ((looks & 15) == 0 || fabric_->oversubscribed()) sched_yield();
  }
  mine.ring = nullptr;
}

// The record goes on the ring first, under the mutex, where a message would (Way::ring: it keeps
// its place among what this process sends to dst's, over MPI or on the ring), and the message is
// written after it, without the mutex; the receiving process holds the record at the front of
// its ring until the slot says written (take_written).
bool MpiRemote::write_into_post(int src, int dst, const Envelope& envelope,
                                std::span<const std::byte> payload, std::uint64_t sent_before) {
  const int process = blocks_.owner(dst);
  Ring* ring = rings_->to(process);
  if (ring == nullptr) return false;
  BoardSlot* slot = ring->board(static_cast<std::size_t>(dst - blocks_.first(process)));
  if (slot == nullptr) return false;
  auto state = std::atomic_ref(slot->state);
  std::uint64_t posted = state.load(std::memory_order_acquire);
  if ((posted & 3) != BoardSlot::kPosted) return false;
  {
    std::unique_lock lock(mutex_);
    if (!serving_ || way_to(process, sizeof(Header)) != Way::ring) return false;
    const std::uint64_t claimed = (posted & ~std::uint64_t{3}) | BoardSlot::kClaimed;
    // Claimed first: the receiver then neither withdraws nor rewrites the post.
    if (!state.compare_exchange_strong(posted, claimed, std::memory_order_acquire,
                                       std::memory_order_relaxed))
      return false;
    // For this message only: from src, of its size and tag, and every earlier one taken.
    const bool ours = slot->src == src && slot->size == payload.size() &&
                      std::memcmp(slot->tag, &envelope.tag, sizeof slot->tag) == 0 &&
                      slot->received == sent_before;
    const std::span<std::byte> space =
        ours ? ring->reserve(sizeof(Header)) : std::span<std::byte>{};
    if (space.empty()) {
      state.store(posted, std::memory_order_release);
      return false;
    }
    const Header header{Kind::written, src, dst, static_cast<std::uint32_t>(posted >> 2), envelope};
    std::memcpy(space.data(), &header, sizeof(Header));
    ring->commit();
    if (vps_drive_) note_vp_pass();
  }
  if (!write_process(rings_->pid(process), slot->address, payload))
    abort_all(Error("hypercomm::mpi: VP " + std::to_string(src) +
                    " could not write its message of " + std::to_string(payload.size()) +
                    " bytes into the receive of VP " + std::to_string(dst) + " in process " +
                    std::to_string(process) + ": " + std::strerror(errno)));
  state.store((posted & ~std::uint64_t{3}) | BoardSlot::kWritten, std::memory_order_release);
  passed();
  return true;
}

// A record of a message written into a post (write_into_post), at the front of the ring from
// `from`: held there until its sender has written the message (unless `may_hold` is false: then
// waited for, the few microseconds of a copy), then completes the post.
MpiRemote::Large MpiRemote::take_written(Fabric& fabric, Ring& ring, int from, const Header& header,
                                         bool may_hold) {
  BoardSlot* slot = ring.board(static_cast<std::size_t>(header.dst - first_));
  if (slot == nullptr)
    throw Error("hypercomm::mpi: process " + std::to_string(from) + " wrote into a receive of VP " +
                std::to_string(header.dst) + ", which has none on the board");
  // Held while its sender writes (the slot claimed for this post); written, or withdrawn by a
  // receiver that left after an abort (then its hand-over fails: dropped).
  for (auto state = std::atomic_ref(slot->state);;) {
    const std::uint64_t now = state.load(std::memory_order_acquire);
    if (static_cast<std::uint32_t>(now >> 2) != header.aux || (now & 3) != BoardSlot::kClaimed)
      break;
    if (may_hold) return Large::held;
    sched_yield();
  }
  // The payload is in the post already: the post is completed as it stands.
  Link& channel = fabric.channel(header.src, header.dst);
  if (!channel.try_hand_over_with(
          header.envelope, [](void*, std::span<std::byte>) {}, nullptr)) {
    if (fabric.aborted()) return Large::dropped;  // its receiver left (withdraw_post)
    throw Error("hypercomm::mpi: VP " + std::to_string(header.src) + " of process " +
                std::to_string(from) + " wrote a message of " +
                std::to_string(header.envelope.size) + " bytes into the receive of VP " +
                std::to_string(header.dst) + ", which no longer waits for it");
  }
  ++delivered_;
  return Large::straight;
}

// The chunks in which the copy of a message of `bytes` left in place by VP src for VP dst is
// shared between the two processes (read_from, send_in_place): where src and dst run on cores
// of their own, two different ones, the sender, which would wait idle for the read, writes
// some. 0: not shared (on a core that others share, the copy takes the core's time either way).
// 2 processes on 2 cores, four alternating rounds (2026-12-01), a broadcast of 128 KiB, 1 MiB
// and 16 MiB: 0.67, 0.68 and 0.55x Open MPI's time, 1.01, 0.97 and 1.04x read whole; shared where
// 4 and 8 processes share the cores too, the broadcast of 1 MiB moved both ways within its
// noise and that of 512 KiB was slower.
std::size_t MpiRemote::shared_chunk_bytes(int src, int dst, std::size_t bytes) const noexcept {
  if (bytes < 2 * kLeastSharedChunk || fabric_->oversubscribed()) return 0;
  const std::span<const int> cpus = fabric_->vp_cpus();
  const int mine = cpus[static_cast<std::size_t>(src)];
  const int theirs = cpus[static_cast<std::size_t>(dst)];
  if (mine < 0 || theirs < 0 || mine == theirs) return 0;
  return std::max(kLeastSharedChunk, (bytes / kSharedChunks + 4095) & ~std::size_t{4095});
}

}  // namespace hypercomm::mpi::detail
