// MpiRemote (mpi_remote.hpp), the transport between the processes of an MPI run: its setup, the
// node's rings and how a pass moves their messages, the posted receives and the messages this
// process sends over MPI. A VP's sends: mpi_send.cpp; the server's loop: mpi_server.cpp; aborts,
// the watch and the Report: mpi_failures.cpp.
#include "mpi_remote.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <hypercomm/errors.hpp>
#include <mutex>
#include <span>
#include <string_view>

#include "futex.hpp"
#include "mpi_remote_protocol.hpp"

namespace hypercomm::mpi::detail {

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

}  // namespace hypercomm::mpi::detail
