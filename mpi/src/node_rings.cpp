#include "node_rings.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace hypercomm::mpi::detail {

namespace {

// Each ring on pages of its own: its bytes and its counters.
std::size_t stride_of(std::size_t capacity, std::size_t board_slots) noexcept {
  return (Ring::footprint(capacity, board_slots) + 4095) & ~std::size_t{4095};
}

// A ring's bytes for `processes` on the node: 256 KiB each up to 13 of them (a segment of 4 MiB
// at 4, 16 MiB at 8), so that a record of up to 64 KiB (a quarter) takes a ring, halved while the
// segment would pass 48 MiB of /dev/shm: 128 KiB at 16 processes (33 MiB), 8 KiB at 64 (48 MiB;
// more processes, a larger segment). Measured over 2 processes (2026-11-27): a broadcast of
// 16-40 KiB 2.0-5.9 us a call on a ring of 256 KiB, 4.0-7.7 us sent from the VP's buffer (a ring
// of 64 KiB took records up to 16 KiB), Open MPI's 3.3-5.7. On a crowded node 512 KiB up to 9
// processes (41 MiB), records of up to 128 KiB: there a sender waiting for its message to be read
// from its buffer waits for the receiver's turn, and its own VP's (8 processes of one VP on 2
// cores, an all-gather of 16 KiB, whose last round moves 64 KiB: 325-395 us a call with that
// round read in place, 84-85 on the rings; 2026-11-28).
std::size_t ring_capacity(int processes, bool crowded, std::size_t board_slots) noexcept {
  const auto pairs = static_cast<std::size_t>(processes) * static_cast<std::size_t>(processes);
  std::size_t capacity = std::size_t{crowded ? 512U : 256U} << 10;
  while (capacity > (std::size_t{4} << 10) &&
         stride_of(capacity, board_slots) * pairs > (std::size_t{48} << 20))
    capacity /= 2;
  return capacity;
}

std::atomic<unsigned> g_segments{0};  // names this process's segments apart

// The word the other processes of the node read to learn whether they can read this one's memory.
constexpr std::uint64_t kProbeMagic = 0x68797065'72636f6dull;  // "hypercom"
std::uint64_t g_probe_word = 0;

// Whether this process can read a word of each other process of `node` (their ids in `pids`),
// and they all of it, and every one wants to: one answer for all (MPI_Allreduce).
bool node_reads_in_place(MPI_Comm node, int me, bool wanted, std::vector<pid_t>& pids) {
  // Where Yama restricts ptrace to a process's ancestors (ptrace_scope 1, as on Ubuntu), the
  // other processes of the job are not; Open MPI's shared memory does the same for its own
  // single copy. Not where this process does not want it (HYPERCOMM_MPI_RINGS=small or off).
#ifdef PR_SET_PTRACER
  if (wanted) (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
  const pid_t self = getpid();
  std::atomic_ref(g_probe_word).store(kProbeMagic ^ static_cast<std::uint64_t>(self));
  struct Probe {
    std::int64_t pid;
    std::uint64_t address;
  };
  const Probe mine{self, reinterpret_cast<std::uintptr_t>(&g_probe_word)};
  int size = 1;
  MPI_Comm_size(node, &size);
  std::vector<Probe> all(static_cast<std::size_t>(size));
  MPI_Allgather(&mine, sizeof(Probe), MPI_BYTE, all.data(), sizeof(Probe), MPI_BYTE, node);
  int ok = wanted ? 1 : 0;
  for (int j = 0; j < size; ++j) {
    const Probe& theirs = all[static_cast<std::size_t>(j)];
    pids[static_cast<std::size_t>(j)] = static_cast<pid_t>(theirs.pid);
    if (j == me || ok == 0) continue;
    std::uint64_t word = 0;
    if (!read_process(static_cast<pid_t>(theirs.pid), theirs.address,
                      std::as_writable_bytes(std::span(&word, 1))) ||
        word != (kProbeMagic ^ static_cast<std::uint64_t>(theirs.pid)))
      ok = 0;
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node);
  return all_ok != 0;
}

}  // namespace

std::span<std::byte> Ring::reserve(std::size_t bytes) noexcept {
  if (bytes > most()) return {};
  const std::uint64_t record = lines(bytes);
  const std::uint64_t rest = capacity_ - head_ % capacity_;  // a multiple of kLine
  const std::uint64_t skip = rest < record ? rest : 0;
  // And the line after it free, for commit's zero.
  const std::uint64_t needed = head_ + skip + record + kLine;
  if (needed - tail_seen_ > capacity_) {
    tail_seen_ = std::atomic_ref(control().tail).load(std::memory_order_acquire);
    if (needed - tail_seen_ > capacity_) return {};
  }
  reserved_at_ = head_ + skip;
  reserved_end_ = reserved_at_ + record;
  reserved_word_ = bytes + 1;
  return {at(reserved_at_) + sizeof(std::uint64_t), bytes};
}

void Ring::commit() noexcept {
  // The word after the record zero before the record's is written: the consumer, there next,
  // finds no record yet rather than an older record's bytes. The record's word before the skip's:
  // a consumer that sees the skip finds the record.
  word(reserved_end_).store(0, std::memory_order_relaxed);
  word(reserved_at_).store(reserved_word_, std::memory_order_release);
  if (reserved_at_ != head_) word(head_).store(kSkip, std::memory_order_release);  // skipped
  head_ = reserved_end_;
}

std::span<const std::byte> Ring::front() noexcept {
  auto tail_ref = std::atomic_ref(control().tail);
  for (;;) {
    const std::uint64_t tail = tail_ref.load(std::memory_order_relaxed);
    const std::uint64_t found = word(tail).load(std::memory_order_acquire);
    if (found == 0) return {};
    if (found == kSkip) {  // handed back at once: pop() starts at the tail
      tail_ref.store(tail + capacity_ - tail % capacity_, std::memory_order_release);
      continue;
    }
    const std::uint64_t length = found - 1;
    taking_ = tail + lines(length);
    return {at(tail) + sizeof(std::uint64_t), static_cast<std::size_t>(length)};
  }
}

void Ring::pop() noexcept {
  std::atomic_ref(control().tail).store(taking_, std::memory_order_release);
}

namespace {
// process_vm_readv (write false) or process_vm_writev, as often as it returns short.
bool transfer(pid_t pid, std::uint64_t address, std::byte* local_bytes, std::size_t size,
              bool write) noexcept {
  while (size != 0) {
    iovec local{local_bytes, size};
    iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)), size};
    const ssize_t moved = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
                                : process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) {
      if (moved == 0) errno = EFAULT;
      return false;
    }
    local_bytes += moved;
    size -= static_cast<std::size_t>(moved);
    address += static_cast<std::uint64_t>(moved);
  }
  return true;
}
}  // namespace

bool read_process(pid_t pid, std::uint64_t address, std::span<std::byte> to) noexcept {
  return transfer(pid, address, to.data(), to.size(), false);
}

bool write_process(pid_t pid, std::uint64_t address, std::span<const std::byte> from) noexcept {
  // (process_vm_writev reads the local side only.)
  return transfer(pid, address, const_cast<std::byte*>(from.data()), from.size(), true);
}

NodeRings::NodeRings(MPI_Comm node, int rank, bool wanted, bool in_place_wanted, bool crowded,
                     int board_slots) {
  int size = 1, me = 0;
  MPI_Comm_size(node, &size);
  MPI_Comm_rank(node, &me);
  std::vector<int> ranks(static_cast<std::size_t>(size));
  MPI_Allgather(&rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, node);
  int want = wanted ? 1 : 0, everyone = 0;
  MPI_Allreduce(&want, &everyone, 1, MPI_INT, MPI_MIN, node);
  if (size < 2 || everyone == 0) return;

  // Every process passes the same board_slots (the machine's blocks).
  const auto slots = static_cast<std::size_t>(std::max(board_slots, 0));
  const std::size_t capacity = ring_capacity(size, crowded, slots);
  const std::size_t stride = stride_of(capacity, slots);  // ring i -> j at (i * size + j) * stride
  const std::size_t total =
      stride * static_cast<std::size_t>(size) * static_cast<std::size_t>(size);
  char name[64] = {};
  int ok = 1, fd = -1;
  if (me == 0) {
    std::snprintf(name, sizeof name, "/hypercomm-%d-%u", static_cast<int>(getpid()),
                  g_segments.fetch_add(1));
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    // Reserved now, so that a full /dev/shm fails here rather than fault at a ring's first use.
    ok = fd >= 0 && posix_fallocate(fd, 0, static_cast<off_t>(total)) == 0 ? 1 : 0;
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, node);
  MPI_Bcast(&ok, 1, MPI_INT, 0, node);
  if (ok != 0 && me != 0) {
    fd = shm_open(name, O_RDWR, 0);
    ok = fd >= 0 ? 1 : 0;
  }
  if (ok != 0) {
    void* mapping = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapping == MAP_FAILED) {
      ok = 0;
    } else {
      mapping_ = mapping;
      mapped_ = total;
    }
  }
  if (fd >= 0) close(fd);
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, node);  // every process has it mapped, or not
  if (me == 0 && name[0] != '\0') shm_unlink(name);     // it lives on while mapped
  if (all == 0) {
    if (mapping_ != nullptr) munmap(mapping_, mapped_);
    mapping_ = nullptr;
    return;
  }
  std::vector<pid_t> node_pids(static_cast<std::size_t>(size), 0);
  in_place_ = node_reads_in_place(node, me, in_place_wanted, node_pids);
  auto* base = static_cast<std::byte*>(mapping_);
  const auto ring = [&](int from, int to) {
    return std::make_unique<Ring>(
        base + (static_cast<std::size_t>(from) * static_cast<std::size_t>(size) +
                static_cast<std::size_t>(to)) *
                   stride,
        capacity, in_place_ ? slots : 0);
  };
  const auto ranks_end =
      static_cast<std::size_t>(*std::max_element(ranks.begin(), ranks.end())) + 1;
  to_.resize(ranks_end);
  from_.resize(ranks_end);
  pids_.assign(ranks_end, 0);
  for (int j = 0; j < size; ++j) {
    if (j == me) continue;
    const auto other = static_cast<std::size_t>(ranks[static_cast<std::size_t>(j)]);
    to_[other] = ring(me, j);
    from_[other] = ring(j, me);
    sources_.push_back(ranks[static_cast<std::size_t>(j)]);
    pids_[other] = node_pids[static_cast<std::size_t>(j)];
    most_ = to_[other]->most();
  }
}

NodeRings::~NodeRings() {
  if (mapping_ != nullptr) munmap(mapping_, mapped_);
}

}  // namespace hypercomm::mpi::detail
