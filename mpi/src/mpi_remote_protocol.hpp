// What the files of the MPI transport (MpiRemote: mpi_remote.cpp, mpi_send.cpp, mpi_server.cpp,
// mpi_failures.cpp) share: the protocol's tags, sizes and times, and the small pieces each of
// them uses.
#pragma once

#include <mpi.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <hypercomm/errors.hpp>
#include <span>
#include <string>
#include <string_view>

#include "mpi_remote.hpp"

namespace hypercomm::mpi::detail {

using hypercomm::detail::Envelope;
using hypercomm::detail::kFinished;
using Clock = std::chrono::steady_clock;

// Every protocol message carries this tag on the duplicated communicator; a large message's
// payload and a spilled message, which follow their header from the same process, carry the
// payload tag (MPI keeps the order of a sender's messages on each tag, so the n-th header that
// announces a payload goes with the n-th payload), so that no pre-posted receive takes them.
inline constexpr int kTag = 7;
inline constexpr int kPayloadTag = 8;
// Receives posted ahead and their size: a protocol message longer than this spills (its header,
// then the message on the payload tag).
inline constexpr std::size_t kPostedReceives = 32;
// A VP's message of at least this many bytes that no ring takes is sent from its own buffer
// (MpiRemote::send), the VP waiting until it has been read; a shorter one is copied into an MPI
// message at once.
inline constexpr std::size_t kFromBufferBytes = 64 * 1024;
inline constexpr std::size_t kPostedBytes = 16 * 1024;
// A VP's message of at most this many bytes, with nothing of this process still being sent, goes
// out in one MPI_Send from the VP's stack (MpiRemote::send_small): below every MPI's eager limit
// (Open MPI's shared memory 4 KiB), so MPI copies it and returns without a receive.
inline constexpr std::size_t kSentAtOnceBytes = 1024;
// How long a large message whose receiver is about to post its receive may wait for it, holding
// up what came after it, before it goes onto the channel, copied twice more instead of once: a
// broadcast called back to back sends the next call's message before the receiver has taken the
// last one (two in three of 1 MiB were copied so).
inline constexpr std::chrono::microseconds kHoldLarge{100};
// A message left in place whose copy the two processes share (shared_chunk_bytes) goes in this
// many chunks, of at least this many bytes.
inline constexpr std::size_t kSharedChunks = 4;
inline constexpr std::size_t kLeastSharedChunk = 64 * 1024;
// The same for a message of at least this many bytes on a ring (a crowded node's rings take up
// to 128 KiB), and, where the node is crowded, a VP whose message of at least kWaitForRoomBytes
// finds the ring full waits for room (moving the others' messages) instead of queueing it: a
// root that broadcasts back to back ran ahead of its receivers, its messages queued on the
// channel (a block allocated for each) and copied onto the ring later by a pass, theirs copied
// onto the channel for want of a post, a quarter to two thirds of them: four copies instead of
// two. 8 processes of one VP on 2 cores, five alternating rounds (2026-11-28), a broadcast of
// 64 KiB: 27-137 us a call (three rounds under 62) against 107-187; of 16 KiB 7-43 against
// 22-50; all-reduce and all-gather of 16 and 64 KiB alike.
inline constexpr std::size_t kHeldRecordBytes = 16 * 1024;
// A VP's receive of at least this many bytes from a VP of another process of the node goes on
// the board, where the sender writes the message into it itself (write_into_post).
inline constexpr std::size_t kBoardBytes = 32 * 1024;
// The board's counts of messages sent take 16 bytes for each VP of this process and each VP of
// the machine: no board beyond this many (64 MiB).
inline constexpr std::size_t kMostSentCounts = std::size_t{1} << 22;
inline constexpr std::size_t kWaitForRoomBytes = 4 * 1024;
// How long a message left in place (send_in_place) may wait at the front of its ring for its
// receiver to post (meanwhile only that ring waits): 50 us and 1 ns a byte, 1.1 ms for 1 MiB.
// Measured over 16 processes of 16 cores (2026-11-27), an all-gather of 1 MiB (4 steps of 1-8
// MiB) took 0.88-1.15x Open MPI's time where a message waited only for a receiver that runs or
// waits for its sender, and only 50 us and 0.5 ns a byte; waiting for any receiver that has not
// finished, 0.78-0.86x, fewer than 1% of its messages read onto the channel instead (0.82x and
// none with 2 ns a byte); never waiting, 1.86x (a quarter of them).
inline std::chrono::nanoseconds hold_in_place(std::size_t bytes) noexcept {
  return std::chrono::microseconds(50) + std::chrono::nanoseconds(bytes);
}
// At most this many forwarded messages in flight; the rest wait on their channels. Without the
// bound a VP sending small messages back to back (a broadcast in a loop) queued thousands in
// Open MPI, whose progress walks its pending sends on every call: 10-17 us a message, not 0.3.
inline constexpr std::size_t kInFlight = 64;
// After an abort, how long the VPs of this process may take to leave before MPI_Abort ends every
// process: the last resort when a VP does not come back from the body (a long computation
// that never communicates) while the others are gone.
inline constexpr std::chrono::seconds kAbortGrace{30};
// Where the VPs move their messages on the rings themselves (MpiRemote::vps_take_their_own), the
// server looks at MPI's arrivals this often at most.
inline constexpr std::chrono::microseconds kQuietLook{100};
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
inline constexpr std::chrono::milliseconds kQuietAfterLarge{1};
inline constexpr std::chrono::milliseconds kLargePhase{100};
inline constexpr std::chrono::microseconds kQuietNapAmidLarge{1000};
inline constexpr std::chrono::microseconds kQuietNap{20000};

// Whether VP `receiver` will soon post its receive for a large message from `sender` (it runs)
// or take the message it was handed (it still waits for this sender: a sender that runs ahead
// found it so two times in three).
inline bool about_to_post(const Fabric& fabric, int receiver, int sender) noexcept {
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

// An MPI call's return code: MPI_SUCCESS, else Error with MPI's text.
inline void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(std::string("hypercomm::mpi: ") + call + " failed: " + std::string(text, length));
}

// A text's bytes, as the abort and status messages carry it.
inline std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

}  // namespace hypercomm::mpi::detail
