#include "mpi_remote.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <hypercomm/errors.hpp>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <string_view>

#include "futex.hpp"
#include "report_wire.hpp"

namespace hypercomm::mpi::detail {

namespace {

using hypercomm::detail::Envelope;
using hypercomm::detail::kFinished;
using Clock = std::chrono::steady_clock;

// Every protocol message carries this tag on the duplicated communicator; a large message's
// payload and a spilled message, which follow their header from the same process, carry the
// payload tag (MPI keeps the order of a sender's messages on each tag, so the n-th header that
// announces a payload goes with the n-th payload), so that no pre-posted receive takes them.
constexpr int kTag = 7;
constexpr int kPayloadTag = 8;
// Receives posted ahead and their size: a protocol message longer than this spills (its header,
// then the message on the payload tag).
constexpr std::size_t kPostedReceives = 32;
// A VP's message of at least this many bytes that no ring takes is sent from its own buffer
// (MpiRemote::send), the VP waiting until it has been read; a shorter one is copied into an MPI
// message at once.
constexpr std::size_t kFromBufferBytes = 64 * 1024;
constexpr std::size_t kPostedBytes = 16 * 1024;
// A VP's message of at most this many bytes, with nothing of this process still being sent, goes
// out in one MPI_Send from the VP's stack (MpiRemote::send_small): below every MPI's eager limit
// (Open MPI's shared memory 4 KiB), so MPI copies it and returns without a receive.
constexpr std::size_t kSentAtOnceBytes = 1024;
// How long a large message whose receiver is about to post its receive may wait for it, holding
// up what came after it, before it goes onto the channel, copied twice more instead of once: a
// broadcast called back to back sends the next call's message before the receiver has taken the
// last one (two in three of 1 MiB were copied so).
constexpr std::chrono::microseconds kHoldLarge{100};
// A message left in place whose copy the two processes share (shared_chunk_bytes) goes in this
// many chunks, of at least this many bytes.
constexpr std::size_t kSharedChunks = 4;
constexpr std::size_t kLeastSharedChunk = 64 * 1024;
// The same for a message of at least this many bytes on a ring (a crowded node's rings take up
// to 128 KiB), and, where the node is crowded, a VP whose message of at least kWaitForRoomBytes
// finds the ring full waits for room (moving the others' messages) instead of queueing it: a
// root that broadcasts back to back ran ahead of its receivers, its messages queued on the
// channel (a block allocated for each) and copied onto the ring later by a pass, theirs copied
// onto the channel for want of a post, a quarter to two thirds of them: four copies instead of
// two. 8 processes of one VP on 2 cores, five alternating rounds (2026-11-28), a broadcast of
// 64 KiB: 27-137 us a call (three rounds under 62) against 107-187; of 16 KiB 7-43 against
// 22-50; all-reduce and all-gather of 16 and 64 KiB alike.
constexpr std::size_t kHeldRecordBytes = 16 * 1024;
// A VP's receive of at least this many bytes from a VP of another process of the node goes on
// the board, where the sender writes the message into it itself (write_into_post).
constexpr std::size_t kBoardBytes = 32 * 1024;
// The board's counts of messages sent take 16 bytes for each VP of this process and each VP of
// the machine: no board beyond this many (64 MiB).
constexpr std::size_t kMostSentCounts = std::size_t{1} << 22;
constexpr std::size_t kWaitForRoomBytes = 4 * 1024;
// How long a message left in place (send_in_place) may wait at the front of its ring for its
// receiver to post (meanwhile only that ring waits): 50 us and 1 ns a byte, 1.1 ms for 1 MiB.
// Measured over 16 processes of 16 cores (2026-11-27), an all-gather of 1 MiB (4 steps of 1-8
// MiB) took 0.88-1.15x Open MPI's time where a message waited only for a receiver that runs or
// waits for its sender, and only 50 us and 0.5 ns a byte; waiting for any receiver that has not
// finished, 0.78-0.86x, fewer than 1% of its messages read onto the channel instead (0.82x and
// none with 2 ns a byte); never waiting, 1.86x (a quarter of them).
std::chrono::nanoseconds hold_in_place(std::size_t bytes) noexcept {
  return std::chrono::microseconds(50) + std::chrono::nanoseconds(bytes);
}
// At most this many forwarded messages in flight; the rest wait on their channels. Without the
// bound a VP sending small messages back to back (a broadcast in a loop) queued thousands in
// Open MPI, whose progress walks its pending sends on every call: 10-17 us a message, not 0.3.
constexpr std::size_t kInFlight = 64;
// After an abort, how long the VPs of this process may take to leave before MPI_Abort ends every
// process: the last resort when a VP does not come back from the body (a long computation
// that never communicates) while the others are gone.
constexpr std::chrono::seconds kAbortGrace{30};
// Where the VPs move their messages on the rings themselves (MpiRemote::vps_take_their_own), the
// server looks at MPI's arrivals this often at most.
constexpr std::chrono::microseconds kQuietLook{100};
// ... and only when no large message was read in place for this long. It naps between looks:
// 20 ms, woken by a VP that reads a large message in place or waits for one that comes over MPI
// (MpiRemote::call_server); but 1 ms while this process read or left large messages in place in
// the last kLargePhase (it reads them for VPs that wait descheduled). Each time it wakes it takes
// a core from a VP where they share one: one VP a process on 2 cores, four alternating rounds
// (2026-12-01), median ratio to Open MPI's time, these naps against naps of 1 ms throughout: an
// all-reduce of 8 B over 16 processes 0.94 against 1.50, over 8 0.99 against 1.13, an
// all-gather of 8 B 0.92 against 1.29 and 0.97 against 1.17; 64 KiB-1 MiB alike or faster
// but for a broadcast of 1 MiB over 8 processes, within its noise (1.09-2.70 against 1.53-2.11
// in one run, 1.21-1.81 against 0.96-1.21 in another).
// Napping 20 ms through large messages too, woken by each read, a broadcast of 1 MiB over 8
// processes took 1.4-3.7x Open MPI's time against 1.0-1.4x. (Naps of 200 us against 1 ms before:
// 4 processes, an all-reduce of 8 B 1.64-1.83x against 1.35-1.46x.)
constexpr std::chrono::milliseconds kQuietAfterLarge{1};
constexpr std::chrono::milliseconds kLargePhase{100};
constexpr std::chrono::microseconds kQuietNapAmidLarge{1000};
constexpr std::chrono::microseconds kQuietNap{20000};

// Whether VP `receiver` will soon post its receive for a large message from `sender` (it runs)
// or take the message it was handed (it still waits for this sender: a sender that runs ahead
// found it so two times in three).
bool about_to_post(const Fabric& fabric, int receiver, int sender) noexcept {
  const auto& state = fabric.state(receiver);
  const std::uint32_t status = state.status.load(std::memory_order_acquire);
  return status == hypercomm::detail::kRunning ||
         (status == hypercomm::detail::kBlocked &&
          state.waiting_for.load(std::memory_order_relaxed) == sender);
}

// A message left in place (MpiRemote::read_in_place): in which process, where, how long; and,
// where its sender shares the copy, the ring's share and the chunk.
struct Place {
  pid_t pid;
  std::uint64_t address;
  int process;
  std::size_t size;
  Ring::InPlaceShare* share = nullptr;
  std::uint64_t sequence = 0;
  std::size_t chunk = 0;
};

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

bool is_deadlock(const std::exception_ptr& error) {
  if (!error) return false;
  try {
    std::rethrow_exception(error);
  } catch (const Deadlock&) {
    return true;
  } catch (...) {
    return false;
  }
}

std::string what_of(const std::exception_ptr& error) {
  if (!error) return {};
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(std::string("hypercomm::mpi: ") + call + " failed: " + std::string(text, length));
}

}  // namespace

MpiRemote::MpiRemote(MPI_Comm comm, Blocks blocks, int rank, bool vps_drive,
                     std::unique_ptr<NodeRings> rings)
    : comm_(comm),
      blocks_(blocks),
      rank_(rank),
      first_(blocks.first(rank)),
      last_(blocks.first(rank + 1)),
      vps_drive_(vps_drive),
      rings_(rings != nullptr && !rings->empty() ? std::move(rings) : nullptr),
      sent_over_mpi_(static_cast<std::size_t>(blocks.processes), 0),
      sent_in_place_(static_cast<std::size_t>(blocks.processes), 0),
      held_since_(static_cast<std::size_t>(blocks.processes)),
      in_place_to_(static_cast<std::size_t>(last_ - first_), -1),
      posted_(kPostedReceives) {
  const auto here = static_cast<std::size_t>(last_ - first_);
  board_ = rings_ != nullptr && rings_->in_place() && !rings_->sources().empty() &&
           rings_->from(rings_->sources().front())->board(here - 1) != nullptr &&
           here * static_cast<std::size_t>(blocks_.vps) <= kMostSentCounts;
  if (board_) {
    published_.resize(here);
    sent_to_.resize(here * static_cast<std::size_t>(blocks_.vps));
  }
  for (Posted& slot : posted_) {
    slot.bytes = std::make_unique_for_overwrite<std::byte[]>(kPostedBytes);
    post_receive(slot);
  }
}

MpiRemote::~MpiRemote() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;  // MPI_Finalize came first: the requests went with it
  for (Posted& slot : posted_) {
    if (slot.request == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&slot.request);
    MPI_Wait(&slot.request, MPI_STATUS_IGNORE);
  }
}

void MpiRemote::post_receive(Posted& slot) {
  check(MPI_Irecv(slot.bytes.get(), static_cast<int>(kPostedBytes), MPI_BYTE, MPI_ANY_SOURCE, kTag,
                  comm_, &slot.request),
        "MPI_Irecv");
}

void MpiRemote::wake_server() noexcept {
  outbox_.fetch_add(1, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst) != kAwake)
    hypercomm::detail::futex_wake(outbox_, 1);
}

void MpiRemote::outgoing() noexcept {
  if (vps_drive_)
    drive();
  else
    wake_server();
}

void MpiRemote::sleeping() noexcept { wake_server(); }

void MpiRemote::call_server() noexcept {
  if (sleeping_.load(std::memory_order_relaxed) == kQuietNapping) wake_server();
}

bool MpiRemote::remote_sleeper(const Fabric& fabric) const noexcept {
  for (int vp = first_; vp < last_; ++vp) {
    const auto& state = fabric.state(vp);
    const int peer = state.waiting_for.load(std::memory_order_relaxed);
    if (state.sleeping.load(std::memory_order_relaxed) != 0 && peer >= 0 && !fabric.local(peer))
      return true;
  }
  return false;
}

bool MpiRemote::vps_take_their_own(const Fabric& fabric) const noexcept {
  // A large message comes over MPI where it is not read in place.
  if (vps_drive_ || rings_ == nullptr || !rings_->in_place()) return false;
  for (int vp = first_; vp < last_; ++vp) {
    const auto& state = fabric.state(vp);
    if (state.status.load(std::memory_order_relaxed) != hypercomm::detail::kBlocked) continue;
    if (state.sleeping.load(std::memory_order_relaxed) != 0) return false;  // woken by a pass
    const int peer = state.waiting_for.load(std::memory_order_relaxed);
    if (peer >= 0 && !fabric.local(peer) && rings_->from(blocks_.owner(peer)) == nullptr)
      return false;
  }
  return true;
}

void MpiRemote::progress(int vp, int src) noexcept {
  if (board_) publish_post(vp, src);
  const int from = blocks_.owner(src);
  Ring* const ring = ring_to_look_at(from);
  // A message that comes over MPI: the server, if it naps long, receives it only once woken.
  if (ring == nullptr) call_server();
  if (!vps_drive_ && !fabric_->node_crowded()) return take_from_rings(vp);
  // A VP whose message comes on a ring looks at that ring alone, and takes the mutex only when a
  // record is there: a whole pass at every look (this process's finished VPs, its queued
  // messages, a test of MPI's receives) had the VPs of a process wait for each other at the
  // mutex, each pass reading every other VP's state (2 processes of 8 VPs on 16 cores: an
  // all-reduce of 8 B took 10.8 us, 16 processes of one VP 3.2). Every 16th look is a whole pass,
  // for MPI's arrivals (an abort, a message that went over MPI) and what waits queued, or where
  // the server moves the MPI traffic, a look at every ring (take_from_rings).
  static thread_local unsigned looks = 0;
  if (ring != nullptr && (++looks & 15) != 0) {
    if (!ring->ready()) return;
    {
      const std::unique_lock lock(mutex_, std::try_to_lock);
      if (!lock.owns_lock() || !serving_) return;
      if (vps_drive_) note_vp_pass();  // the server's naps count only these
      bool any = false;
      try {
        (void)drain_ring(*fabric_, *ring, from, vp, any);
      } catch (const std::exception& e) {
        abort_all(e);
      }
    }
    passed();
    return;
  }
  if (!vps_drive_) return take_from_rings(vp);
  {
    const std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) {
      // Another thread polls MPI now. Where that is the server sharing this core (mpirun
      // --bind-to core), and this VP took the core from it while it held the mutex, only a
      // yield lets it finish: 80% of one run's looks failed so, bursts of ms.
      static thread_local unsigned missed = 0;
      if ((++missed & 7) == 0) sched_yield();
      return;
    }
    if (serving_) locked_pass(false, vp);
  }
  passed();
}

void MpiRemote::passed() noexcept {
  // A VP that queued a message while this thread held the mutex left it to this one (drive).
  if (requested_.load(std::memory_order_seq_cst)) drive();
}

Ring* MpiRemote::ring_to_look_at(int from) noexcept {
  // Only where large messages are read in place: else they come over MPI, which a look at the
  // ring alone would leave for the next pass.
  if (rings_ == nullptr || !rings_->in_place()) return nullptr;
  return rings_->from(from);
}

// The VPs of a process served by its thread (they call no MPI) take their messages off the
// rings themselves while they wait, rather than wait for the server to (it looks every 20 us
// at best once it has nothing to do). At every look, unless the node is crowded: a look at the
// mutex only where the ring of the awaited message held a record (Ring::ready) made 4 processes
// on 2 cores, whose VPs yield between looks, slower (all-reduce of 8 B 14.0-16.5 us against
// 7.7-11.7, all-gather 15.1-18.1 against 7.8-12.6; two runs of three rounds). Where the node is
// crowded (progress) that look is taken: from three VPs a core every look at every ring cost
// more than the message (one VP a process on 2 cores, two alternating rounds, 2026-11-28: over
// 8 processes an all-reduce of 8 B 27.6-36.9 us -> 17.6-18.5, 1.63-1.81x -> 0.97-1.06x Open
// MPI's time; over 16, 118-122 -> 70-73 us, 1.96-2.14x -> 1.13-1.14x; 16 KiB and 1 MiB alike or
// faster).
void MpiRemote::take_from_rings(int vp) noexcept {
  if (rings_ == nullptr) return;
  const std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || !serving_) return;
  try {
    bool any = false;
    (void)drain_rings(*fabric_, vp, any);
  } catch (const std::exception& e) {
    abort_all(e);
  }
}

MpiRemote::Way MpiRemote::way_to(int process, std::size_t bytes) const noexcept {
  Ring* ring = rings_ != nullptr ? rings_->to(process) : nullptr;
  if (ring == nullptr) return Way::mpi;
  // Some of what went over MPI is still on its way: this one follows it, once the ring is empty
  // too (a sender that waited for room put a message on it meanwhile: send_small).
  if (sent_over_mpi_[static_cast<std::size_t>(process)] != ring->delivered_over_mpi())
    return ring->empty() ? Way::mpi : Way::later;
  if (bytes <= ring->most()) return Way::ring;
  return ring->empty() ? Way::mpi : Way::later;
}

void MpiRemote::delivered_over_mpi(int from) noexcept {
  if (rings_ == nullptr) return;
  if (Ring* ring = rings_->from(from)) ring->note_delivered_over_mpi();
}

bool MpiRemote::drain_rings(Fabric& fabric, int waiting, bool& any) {
  for (const int from : rings_->sources())
    if (drain_ring(fabric, *rings_->from(from), from, waiting, any)) return true;
  return false;
}

bool MpiRemote::drain_ring(Fabric& fabric, Ring& ring, int from, int waiting, bool& any,
                           bool may_hold) {
  for (std::span<const std::byte> data = ring.front(); !data.empty(); data = ring.front()) {
    Header header;  // every record begins with one (handle rejects one too short for it)
    const bool whole = data.size() >= sizeof(Header);
    if (whole) std::memcpy(&header, data.data(), sizeof(Header));
    const std::span<const std::byte> body =
        whole ? data.subspan(sizeof(Header)) : std::span<const std::byte>{};
    // A large message (left in place, written into a post, or on the ring) goes into its
    // receiver's post, or waits at the front of the ring for one about to post.
    Large taken = Large::straight;
    InPlace where;
    if (header.kind == Kind::in_place && body.size() == sizeof(InPlace)) {
      std::memcpy(&where, body.data(), sizeof(InPlace));
      taken = read_in_place(fabric, from, header, where, may_hold);
    } else if (header.kind == Kind::written && body.empty()) {
      taken = take_written(fabric, ring, from, header, may_hold);
    } else if (header.kind == Kind::message && body.size() >= kHeldRecordBytes) {
      taken = take_large_record(fabric, from, header, body, may_hold);
    } else {
      any = true;
      const bool reached = handle(fabric, from, data, waiting, true);
      ring.pop();
      if (reached) return true;  // its VP takes it now; the rest waits for the next look
      continue;
    }
    if (taken == Large::held) return false;  // this ring waits (the others go on)
    any = true;
    ring.pop();
    if (header.kind == Kind::in_place) ring.note_read_in_place(where.sequence);  // buffer free
    if (taken == Large::dropped) continue;
    if (header.dst == waiting) return true;
    fabric.notify(header.dst);
  }
  return false;
}

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

void MpiRemote::drive() noexcept {
  requested_.store(true, std::memory_order_seq_cst);
  // Whoever holds the mutex looks at requested_ again after releasing it: either this thread
  // passes, or the holder passes once more after what this one queued.
  while (requested_.load(std::memory_order_seq_cst)) {
    const std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;
    requested_.store(false, std::memory_order_seq_cst);
    if (serving_) locked_pass(false);  // else the server's first pass takes it
  }
}

void MpiRemote::locked_pass(bool watching, int waiting) noexcept {
  try {
    (void)pass(*fabric_, watching, waiting);
  } catch (const std::exception& e) {
    abort_all(e);
  }
}

void MpiRemote::abort_all(const std::exception& error) const noexcept {
  std::fprintf(stderr, "hypercomm::mpi: process %d: %s; calling MPI_Abort\n", rank_, error.what());
  MPI_Abort(comm_, 1);
  std::abort();  // MPI_Abort does not return; MPI does not declare it so
}

MpiRemote::Buffer MpiRemote::buffer(std::size_t size) {
  Buffer b;
  if (!spare_.empty()) {
    b = std::move(spare_.back());
    spare_.pop_back();
  }
  if (b.capacity < size) {
    b.capacity = std::max<std::size_t>(size, 256);
    b.bytes = std::make_unique_for_overwrite<std::byte[]>(b.capacity);
  }
  b.size = size;
  return b;
}

MpiRemote::Buffer MpiRemote::message(const void* header, std::size_t header_size,
                                     std::span<const std::byte> text) {
  Buffer data = buffer(header_size + text.size());
  std::memcpy(data.bytes.get(), header, header_size);
  if (!text.empty()) std::memcpy(data.bytes.get() + header_size, text.data(), text.size());
  return data;
}

void MpiRemote::post(int process, Buffer data) {
  if (data.size > static_cast<std::size_t>(INT_MAX))
    throw Error("hypercomm::mpi: a message of " + std::to_string(data.size) +
                " bytes is larger than one MPI message carries here (2^31 - 1 bytes)");
  int tag = kTag;
  if (data.size > kPostedBytes) {  // longer than a pre-posted receive: announce it, then send
    const Header spill{Kind::spill, -1, -1, static_cast<std::uint32_t>(data.size), {}};
    post(process, message(&spill, sizeof(Header)));
    tag = kPayloadTag;
  }
  InFlight& sending = in_flight_.emplace_back();
  sending.data = std::move(data);
  check(MPI_Isend(sending.data.bytes.get(), static_cast<int>(sending.data.size), MPI_BYTE, process,
                  tag, comm_, &sending.request),
        "MPI_Isend");
}

void MpiRemote::to_all(const Header& header, std::span<const std::byte> text) {
  for (int process = 0; process < blocks_.processes; ++process)
    if (process != rank_) post(process, message(&header, sizeof(Header), text));
}

namespace {
std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}
}  // namespace

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

void MpiRemote::aborted_by(Fabric& fabric, int process, int vp, std::uint32_t kind,
                           std::span<const std::byte> body) {
  const std::string text(reinterpret_cast<const char*>(body.data()), body.size());
  if (!abort_announced_) {
    abort_announced_ = true;
    abort_since_ = Clock::now();
  }
  if (abort_relay_.empty()) {  // the first heard of: sent on with this process's finishes
    const Relay relay{vp, kind};
    abort_relay_.resize(sizeof(Relay) + body.size());
    std::memcpy(abort_relay_.data(), &relay, sizeof(Relay));
    if (!body.empty()) std::memcpy(abort_relay_.data() + sizeof(Relay), body.data(), body.size());
    relay_from_ = process;
  }
  std::exception_ptr error;
  if (kind == kDeadlock)
    error = std::make_exception_ptr(Deadlock(text));
  else if (kind == kMismatch)
    error = std::make_exception_ptr(CollectiveMismatch(text));
  else
    error = std::make_exception_ptr(
        Aborted("the run was abandoned on every process: VP " + std::to_string(vp) + " (process " +
                std::to_string(process) + " of " + std::to_string(blocks_.processes) +
                ") failed: " + text));
  fabric.fail(error, -1);  // the first error stays (a relayed abort may come after its original)
}

void MpiRemote::complete_sends(bool wait) {
  while (!in_flight_.empty()) {
    int done = 0;
    MPI_Request& request = in_flight_.front().request;
    if (wait)
      check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
    else
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (!wait && done == 0) return;  // sends complete in order, near enough: look again later
    // Kept for the next messages, up to 64 of at most 256 KiB (a few MiB a process at most).
    if (spare_.size() < 64 && in_flight_.front().data.capacity <= (std::size_t{256} << 10))
      spare_.push_back(std::move(in_flight_.front().data));
    in_flight_.pop_front();
  }
}

void MpiRemote::announce_abort(Fabric& fabric) {
  abort_announced_ = true;
  abort_since_ = Clock::now();
  const int vp = fabric.failed_vp();
  if (vp < 0) return;  // another process's abort, already everywhere
  // A VP that found its wait could never end (the VP it waits for has finished) raised
  // Deadlock: the other processes raise it too, as they do for a deadlock the watch finds.
  const Header header{Kind::abort, vp, -1, is_deadlock(fabric.error()) ? kDeadlock : kVpError, {}};
  to_all(header, bytes_of(what_of(fabric.error())));
}

void MpiRemote::note_status(int process, const Status& status, std::string text,
                            std::vector<PublishedCall> calls, Clock::time_point now) {
  statuses_[static_cast<std::size_t>(process)] = status;
  wait_texts_[static_cast<std::size_t>(process)] = std::move(text);
  stalled_calls_[static_cast<std::size_t>(process)] = std::move(calls);
  heard_[static_cast<std::size_t>(process)] = now;
  quiet_since_ = now;
}

std::vector<MpiRemote::PublishedCall> MpiRemote::published_calls(const Fabric& fabric) const {
  std::vector<PublishedCall> calls;
  for (int vp = first_; vp < last_; ++vp) {
    hypercomm::detail::PublishedCalls recent;
    if (!hypercomm::detail::read_calls(fabric.state(vp), recent)) continue;
    for (const auto& tag : recent.recent) {
      if (tag.kind == 0) break;
      calls.push_back({vp, 0, tag});
    }
  }
  return calls;
}

std::string MpiRemote::published_disagreement(const Fabric& fabric) const {
  using hypercomm::detail::TagHolders;
  // By call (group, number): each header and the VPs that hold it.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<TagHolders>> calls;
  for (const auto& process : stalled_calls_) {
    for (const PublishedCall& call : process) {
      auto& seen = calls[{call.tag.group, call.tag.sequence}];
      auto it = std::find_if(seen.begin(), seen.end(),
                             [&](const TagHolders& entry) { return entry.first == call.tag; });
      if (it == seen.end()) it = seen.insert(seen.end(), {call.tag, {}});
      if (std::find(it->second.begin(), it->second.end(), call.vp) == it->second.end())
        it->second.push_back(call.vp);
    }
  }
  for (auto& [call, seen] : calls) {
    if (seen.size() < 2) continue;
    for (auto& entry : seen) std::sort(entry.second.begin(), entry.second.end());
    // Reported by the first VP of the largest set, in its call's words.
    std::stable_sort(seen.begin(), seen.end(), [](const TagHolders& a, const TagHolders& b) {
      return a.second.size() > b.second.size();
    });
    const hypercomm::MessageTag& mine = seen.front().first;
    std::string op = hypercomm::detail::describe_tag(mine, fabric.topology());
    op = op.substr(0, op.find(' '));
    return hypercomm::detail::describe_disagreement(seen.front().second.front(), op.c_str(), mine,
                                                    seen, fabric.topology());
  }
  return {};
}

void MpiRemote::watch(Fabric& fabric, Clock::time_point now) {
  if (now < next_tick_) return;
  using namespace std::chrono;
  const nanoseconds timeout = fabric.options().deadlock_timeout;
  next_tick_ = now + std::clamp<nanoseconds>(timeout / 8, milliseconds(1), milliseconds(50));

  // This process's report, while it has a VP whose finish it has not sent.
  if (std::find(announced_.begin(), announced_.end(), false) != announced_.end()) {
    Status status;
    bool collective = false;
    status.stalled = fabric.stalled(status.progress, collective) ? 1 : 0;
    // A message put on a channel here is progress too, before its VP (maybe not yet scheduled,
    // on a loaded machine) takes it.
    status.progress += delivered_;
    status.collective = collective ? 1 : 0;
    for (int vp = first_; vp < last_; ++vp)
      status.entered += fabric.state(vp).entered.load(std::memory_order_relaxed);
    const bool same = status_sent_ && status == last_status_;  // both with calls 0
    if (same && status.stalled != 0) {
      if (rank_ == 0) {
        heard_[0] = now;
      } else {
        Buffer data = buffer(sizeof(Header));
        const Header header{Kind::status, -1, -1, kBeat, {}};
        std::memcpy(data.bytes.get(), &header, sizeof(Header));
        post(0, std::move(data));
      }
    } else if (!same) {
      status_sent_ = true;
      last_status_ = status;
      std::vector<PublishedCall> calls;
      if (status.stalled != 0) calls = published_calls(fabric);
      status.calls = static_cast<std::uint32_t>(calls.size());
      const std::string text = status.stalled != 0 ? fabric.describe_waits() : std::string();
      if (rank_ == 0) {
        note_status(0, status, text, std::move(calls), now);
      } else {
        const std::size_t calls_bytes = calls.size() * sizeof(PublishedCall);
        Buffer data = buffer(sizeof(Header) + sizeof(Status) + calls_bytes + text.size());
        const Header header{Kind::status, -1, -1, 0, {}};
        std::byte* at = data.bytes.get();
        std::memcpy(at, &header, sizeof(Header));
        at += sizeof(Header);
        std::memcpy(at, &status, sizeof(Status));
        at += sizeof(Status);
        if (calls_bytes != 0) std::memcpy(at, calls.data(), calls_bytes);
        at += calls_bytes;
        std::memcpy(at, text.data(), text.size());
        post(0, std::move(data));
      }
    }
  }
  if (rank_ != 0 || abort_announced_) return;

  // Process 0: has every process waited, with nothing delivered, for the timeout?
  bool all_stalled = true, all_collective = true;
  std::string waits;
  for (int process = 0; process < blocks_.processes && all_stalled; ++process) {
    const auto k = static_cast<std::size_t>(process);
    const int vps = blocks_.first(process + 1) - blocks_.first(process);
    if (finished_of_[k] == vps) continue;  // all gone: they wait for nothing
    all_stalled = statuses_[k].stalled != 0;
    all_collective = all_collective && statuses_[k].collective != 0;
    waits += (waits.empty() ? "" : "; ") + std::string("process ") + std::to_string(process) +
             ": " + wait_texts_[k];
  }
  if (!all_stalled) {
    quiet_since_ = now;
    return;
  }
  if (now - quiet_since_ < timeout) return;
  for (int process = 0; process < blocks_.processes; ++process) {
    const auto k = static_cast<std::size_t>(process);
    const int vps = blocks_.first(process + 1) - blocks_.first(process);
    if (finished_of_[k] != vps && heard_[k] - quiet_since_ < timeout) return;  // not since
  }
  const std::string what = "nothing delivered for " +
                           std::to_string(duration<double>(now - quiet_since_).count()) +
                           " s while every unfinished VP of every process waits: " + waits;
  Header header{Kind::abort, -1, -1, kDeadlock, {}};
  std::string text = "deadlock: " + what;
  if (const std::string disagreement = published_disagreement(fabric); !disagreement.empty()) {
    // VPs that went on past a call they disagree on (a reduce's other root, then a receive).
    header.aux = kMismatch;
    text = disagreement + " (found when " + what + ")";
    fabric.fail(std::make_exception_ptr(CollectiveMismatch(text)), -1);
  } else if (all_collective) {
    header.aux = kMismatch;
    text = "deadlock inside collectives, the VPs disagree on the collective sequence: " + what;
    fabric.fail(std::make_exception_ptr(CollectiveMismatch(text)), -1);
  } else {
    fabric.fail(std::make_exception_ptr(Deadlock(text)), -1);
  }
  abort_announced_ = true;
  abort_since_ = now;
  to_all(header, bytes_of(text));
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

Report MpiRemote::combine(Report local, std::exception_ptr error, const std::string& problem) {
  ReportPart part{std::move(local), error ? what_of(error) : std::string(), error != nullptr,
                  problem};
  const std::vector<std::byte> mine = encode(part);
  const int size = static_cast<int>(mine.size());
  std::vector<int> sizes(static_cast<std::size_t>(blocks_.processes));
  check(MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm_), "MPI_Allgather");
  std::vector<int> offsets(sizes.size(), 0);
  for (std::size_t k = 1; k < sizes.size(); ++k) offsets[k] = offsets[k - 1] + sizes[k - 1];
  std::vector<std::byte> all(static_cast<std::size_t>(offsets.back() + sizes.back()));
  check(MPI_Allgatherv(mine.data(), size, MPI_BYTE, all.data(), sizes.data(), offsets.data(),
                       MPI_BYTE, comm_),
        "MPI_Allgatherv");

  Report merged;
  merged.topology = part.report.topology;
  std::string elsewhere;
  bool elsewhere_failed = false;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    ReportPart theirs = decode(std::span(all).subspan(static_cast<std::size_t>(offsets[k]),
                                                      static_cast<std::size_t>(sizes[k])));
    if (elsewhere.empty() && (theirs.failed || !theirs.problem.empty())) {
      elsewhere_failed = theirs.failed;
      elsewhere =
          "process " + std::to_string(k) + ": " + (theirs.failed ? theirs.error : theirs.problem);
    }
    merge(merged, std::move(theirs.report));
  }
  if (error) std::rethrow_exception(error);
  if (!problem.empty()) throw CollectiveMismatch(problem);
  if (elsewhere_failed) throw Aborted("the run failed on another process: " + elsewhere);
  if (!elsewhere.empty()) throw CollectiveMismatch(elsewhere);
  return merged;
}

}  // namespace hypercomm::mpi::detail
