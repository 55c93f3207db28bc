// Shared memory between the processes of one node: for each ordered pair of them, a ring of
// bytes that carries the messages of the VPs of one to the VPs of the other, as MPI's own
// shared-memory transport carries its messages, without a call into MPI on either side (a
// VP's 8-byte message between two processes took two to three times MPI's own collective's
// time through MPI point-to-point: the receiver's test of a posted receive, posting it again,
// the match). MpiRemote (mpi_remote.hpp) decides what goes on a ring and what over MPI.
//
// A ring has one producer and one consumer at a time: whoever holds the sending process's
// MpiRemote mutex writes, whoever holds the receiving one's reads. Records start on a cache line
// (64 bytes) and take whole lines: a word, then the record's bytes; a record that would cross
// the end is preceded by a skip word that fills the rest. The consumer learns of a record from its
// word alone, written last (zero: none yet), so that an 8-byte message, 64 bytes with its header
// and word, moves one line between the cores; with a counter of bytes written beside the records,
// read by the consumer at each record, it moved two. The producer zeroes the word after each
// record it writes (a line is always left free for it), so that where the consumer looks next an
// older record's bytes never read as a record; the consumer writes nothing on the ring. Every
// reservation is committed (its bytes reach lines the consumer may read).
#pragma once

#include <mpi.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace hypercomm::mpi::detail {

// A receive that a VP of the ring's consumer posted for a large message from a VP of its
// producer, offered on the ring's board so that the sender writes the message into it itself
// (MpiRemote::write_into_post): one line of shared memory per VP of the consumer. `state` is
// (generation << 2) | phase; the receiver writes the fields while the phase is empty and then
// posts, a sender claims the post before it reads them, and writes the message while it holds
// it.
struct BoardSlot {
  enum Phase : std::uint64_t { kEmpty = 0, kPosted = 1, kClaimed = 2, kWritten = 3 };
  std::uint64_t state;
  std::uint64_t address;   // the receive buffer, in the consumer's memory
  std::uint64_t size;      // its bytes
  std::uint64_t received;  // messages the receiver has taken from src in this run
  std::int32_t src;        // the sending VP it waits for
  std::int32_t unused;
  std::byte tag[16];  // the MessageTag it waits for
};
static_assert(sizeof(BoardSlot) <= 64);

class Ring {
 public:
  // Space for a record of `bytes` (nullptr-empty when there is no room now); commit() publishes
  // it. One reservation at a time.
  [[nodiscard]] std::span<std::byte> reserve(std::size_t bytes) noexcept;
  void commit() noexcept;
  // Whether every record written has been taken (the producer's view).
  [[nodiscard]] bool empty() const noexcept {
    return std::atomic_ref(control().tail).load(std::memory_order_acquire) == head_;
  }
  // Whether a record (or a skip) waits at the consumer's tail: a look by any thread, without the
  // consumer's mutex, that writes nothing (a stale answer is set right by the next look).
  [[nodiscard]] bool ready() const noexcept {
    const std::uint64_t tail = std::atomic_ref(control().tail).load(std::memory_order_acquire);
    return word(tail).load(std::memory_order_relaxed) != 0;
  }
  // The oldest record, or an empty span (the consumer's view); pop() takes it.
  [[nodiscard]] std::span<const std::byte> front() noexcept;
  void pop() noexcept;
  // Messages the producer sent over MPI to the consumer, and how many of them the consumer has
  // delivered: the producer puts a message on the ring only when the two agree, and sends one
  // over MPI only when the ring is empty, so that a channel's messages stay in order.
  [[nodiscard]] std::uint64_t delivered_over_mpi() const noexcept {
    return std::atomic_ref(control().mpi_delivered).load(std::memory_order_acquire);
  }
  void note_delivered_over_mpi() noexcept {  // the consumer
    auto delivered = std::atomic_ref(control().mpi_delivered);
    delivered.store(delivered.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  // The largest record the ring takes (longer messages go over MPI).
  [[nodiscard]] std::size_t most() const noexcept { return capacity_ / 4; }
  // The last message left in its sender's buffer (MpiRemote::send_in_place) that the consumer
  // has read, by the producer's count of them: the producer's buffer is free again.
  [[nodiscard]] std::uint64_t read_in_place() const noexcept {
    return std::atomic_ref(control().in_place_read).load(std::memory_order_acquire);
  }
  // The message left in place that the consumer reads now, in chunks that its producer may
  // share (MpiRemote::read_in_place): `claim` is (sequence << 32) | the next chunk, for the
  // producer's sequence of that message (its low 32 bits), so that a producer late for one
  // message takes no chunk of the next; the other fields are the consumer's, set before `claim`.
  struct InPlaceShare {
    std::uint64_t claim;
    std::uint64_t destination;  // in the consumer's memory
    std::uint64_t chunk_bytes;
    std::uint64_t size;
    std::uint32_t chunks;
    std::uint32_t done;  // chunks copied, by either side
  };
  [[nodiscard]] InPlaceShare& in_place_share() const noexcept { return control().share; }
  void note_read_in_place(std::uint64_t sequence) noexcept {  // the consumer
    std::atomic_ref(control().in_place_read).store(sequence, std::memory_order_release);
  }

  // The board's slot of the consumer's VP `index` (its VPs counted from 0), or nullptr when the
  // ring has none.
  [[nodiscard]] BoardSlot* board(std::size_t index) const noexcept {
    if (index >= board_slots_) return nullptr;
    return reinterpret_cast<BoardSlot*>(memory_ + sizeof(Control) + index * kLine);
  }

  // `board_slots`: the consumer's VPs that may post on the board (none: no board).
  Ring(std::byte* memory, std::size_t capacity, std::size_t board_slots = 0) noexcept
      : memory_(memory), capacity_(capacity), board_slots_(board_slots) {}
  [[nodiscard]] static std::size_t footprint(std::size_t capacity,
                                             std::size_t board_slots = 0) noexcept {
    return sizeof(Control) + board_slots * kLine + capacity;
  }

 private:
  // In shared memory (zero when created): each counter on its own line.
  struct Control {
    alignas(64) std::uint64_t tail;  // bytes taken (the consumer's)
    alignas(64) std::uint64_t mpi_delivered;
    alignas(64) std::uint64_t in_place_read;
    alignas(64) InPlaceShare share;
  };
  static constexpr std::uint64_t kLine = 64;
  static constexpr std::uint64_t kSkip =
      ~std::uint64_t{0};  // a skip's word; a record's: length + 1
  [[nodiscard]] Control& control() const noexcept { return *reinterpret_cast<Control*>(memory_); }
  [[nodiscard]] std::byte* at(std::uint64_t position) const noexcept {
    return memory_ + sizeof(Control) + board_slots_ * kLine + position % capacity_;
  }
  // A record's bytes on the ring: its word and `bytes`, in whole lines.
  [[nodiscard]] static constexpr std::uint64_t lines(std::uint64_t bytes) noexcept {
    return (sizeof(std::uint64_t) + bytes + kLine - 1) & ~(kLine - 1);
  }
  [[nodiscard]] std::atomic_ref<std::uint64_t> word(std::uint64_t position) const noexcept {
    return std::atomic_ref(*reinterpret_cast<std::uint64_t*>(at(position)));
  }

  std::byte* memory_;
  std::size_t capacity_;  // a multiple of kLine
  std::size_t board_slots_;
  // The producer's: the bytes of the records committed (head_), the reserved one's place (past
  // head_ where it skips the ring's end) and word, and the consumer's tail as last read (read
  // again only when it does not suffice, so that the line the consumer writes crosses between
  // the cores rarely: every message's read of it had the producer spend a quarter of its time in
  // reserve).
  std::uint64_t head_ = 0;
  std::uint64_t reserved_at_ = 0;
  std::uint64_t reserved_end_ = 0;
  std::uint64_t reserved_word_ = 0;
  std::uint64_t tail_seen_ = 0;
  // The consumer's: the tail after the front record.
  std::uint64_t taking_ = 0;
};

class NodeRings {
 public:
  // Collective over `node`, the processes of comm that share this node's memory (every one of
  // them calls it). No rings (empty()) when this process is alone there, when `wanted` is false
  // anywhere, or when the shared memory cannot be had on some process (then the messages all go
  // over MPI, as between nodes). Large messages are read in place (in_place()) unless
  // `in_place_wanted` is false anywhere on the node. `crowded` (the same on every process): the
  // node's VPs are more than twice its cores, and the rings are larger (ring_capacity).
  // `board_slots`: the most VPs a process runs (each ring's board has a slot for each, where
  // large messages are read in place).
  NodeRings(MPI_Comm node, int rank, bool wanted, bool in_place_wanted = true, bool crowded = false,
            int board_slots = 0);
  ~NodeRings();
  NodeRings(const NodeRings&) = delete;
  NodeRings& operator=(const NodeRings&) = delete;

  [[nodiscard]] bool empty() const noexcept { return to_.empty(); }
  // This process's ring to process `rank` of comm, or from it; nullptr when that process is
  // elsewhere (or there are no rings).
  [[nodiscard]] Ring* to(int rank) noexcept { return find(to_, rank); }
  [[nodiscard]] Ring* from(int rank) noexcept { return find(from_, rank); }
  // The processes of comm that this one has a ring from.
  [[nodiscard]] const std::vector<int>& sources() const noexcept { return sources_; }
  // The largest record each of its rings takes (all have one size; Ring::most).
  [[nodiscard]] std::size_t most() const noexcept { return most_; }
  // Whether every process of the node can read the memory of every other (Linux cross-memory
  // attach, process_vm_readv: same user, ptrace allowed, the call not filtered out), so that a
  // large message is read straight from its sender's buffer; checked once, by reading a word of
  // each. pid(rank): that process's id, to read from.
  [[nodiscard]] bool in_place() const noexcept { return in_place_; }
  [[nodiscard]] pid_t pid(int rank) const noexcept { return pids_[static_cast<std::size_t>(rank)]; }

 private:
  [[nodiscard]] static Ring* find(std::vector<std::unique_ptr<Ring>>& rings, int rank) noexcept {
    const auto k = static_cast<std::size_t>(rank);
    return k < rings.size() ? rings[k].get() : nullptr;
  }

  void* mapping_ = nullptr;
  std::size_t mapped_ = 0;
  std::vector<std::unique_ptr<Ring>> to_, from_;  // by rank of comm; null where none
  std::vector<int> sources_;
  std::size_t most_ = 0;
  std::vector<pid_t> pids_;  // by rank of comm; 0 where elsewhere
  bool in_place_ = false;
};

// Reads `to.size()` bytes at `address` in process `pid` into `to` (process_vm_readv, as often as
// it returns short); false, errno set, when it cannot.
[[nodiscard]] bool read_process(pid_t pid, std::uint64_t address, std::span<std::byte> to) noexcept;
// Writes `from` at `address` in process `pid` (process_vm_writev); false, errno set, when it
// cannot.
[[nodiscard]] bool write_process(pid_t pid, std::uint64_t address,
                                 std::span<const std::byte> from) noexcept;

}  // namespace hypercomm::mpi::detail
