// What every algorithm file works with: the group's ranks behind a message header (Comm), the
// partition of a buffer into p blocks (Blocks), and a ring of ranks inside the group (Ring), so
// that the mesh algorithms are the ring algorithms run along rows and then along columns
// (Grama et al. 4.6).
#pragma once

#include <bit>
#include <cstddef>
#include <cstring>
#include <hypercomm/detail/core.hpp>
#include <span>
#include <vector>

#include "group_info.hpp"
#include "port.hpp"
#include "scratch.hpp"

namespace hypercomm::detail {

// One collective call as its algorithm sees it: the group's ranks, size and topology, and the
// header every message of the call carries. Algorithms talk only through this (which talks only
// through the VP's call port, port.hpp): no mailbox, thread or atomic, and no machine id: a rank
// becomes the member's VP id here, so Algorithm 4.1 on a subcube is the same code as on the
// whole hypercube.
struct Comm {
  Port& port;
  const GroupInfo& group;
  MessageTag tag;
  // Where set (the irregular collectives), each receive first writes the rank it receives
  // from here, so that a receive's CollectiveMismatch or SizeMismatch can name the sender.
  int* receiving = nullptr;

  [[nodiscard]] int id() const noexcept { return group.rank; }  // this VP's rank
  [[nodiscard]] int p() const noexcept { return group.size; }
  [[nodiscard]] const Topology& topology() const noexcept { return group.topology; }
  [[nodiscard]] const Options& options() const noexcept { return port.options(); }
  void send(int dest, ConstBytes data) const { port.send_bytes(group.vp_of(dest), data, tag); }
  void recv(int src, Bytes data) const {
    if (receiving != nullptr) *receiving = src;
    port.recv_bytes(group.vp_of(src), data, tag);
  }
  void sendrecv(int partner, ConstBytes out, Bytes in) const {
    sendrecv(partner, out, partner, in);
  }
  void sendrecv(int dest, ConstBytes out, int src, Bytes in) const {
    if (receiving != nullptr) *receiving = src;
    port.sendrecv_bytes(group.vp_of(dest), out, group.vp_of(src), in, tag);
  }
  // The whole collective as one meeting in shared memory, when the runtime finds that cheaper
  // than these rounds of messages (Port::meet; false: send the messages). Meetings are of the
  // whole machine: a smaller group sends its messages.
  [[nodiscard]] bool meet(const Port::Rounds& rounds, const void* input = nullptr,
                          Port::Combine combine = nullptr, const void* context = nullptr,
                          Bytes out = {}) const {
    if (group.shape != GroupInfo::Shape::world) return false;
    return port.meet(tag, rounds, input, combine, context, out);
  }
};

// `total` bytes of `elem_size`-byte elements split into p blocks as evenly as possible: block i
// has n/p elements, one more for i < n mod p. A p-block collective's blocks are all equal. Or
// (the irregular collectives) blocks of any sizes, given by their p + 1 byte offsets.
class Blocks {
 public:
  Blocks(std::size_t total_bytes, std::size_t elem_size, int p) noexcept : elem_(elem_size), p_(p) {
    const std::size_t n = elem_size == 0 ? 0 : total_bytes / elem_size;
    base_ = n / static_cast<std::size_t>(p);
    extra_ = n % static_cast<std::size_t>(p);
  }
  explicit Blocks(std::span<const std::size_t> offsets) noexcept
      : offsets_(offsets), elem_(1), p_(static_cast<int>(offsets.size()) - 1) {}
  [[nodiscard]] int count() const noexcept { return p_; }
  // Byte offset of block i, 0 <= i <= p (offset(p) is the total).
  [[nodiscard]] std::size_t offset(int i) const noexcept {
    const auto k = static_cast<std::size_t>(i);
    if (!offsets_.empty()) return offsets_[k];
    return (k * base_ + (k < extra_ ? k : extra_)) * elem_;
  }
  [[nodiscard]] std::size_t size(int i) const noexcept { return offset(i + 1) - offset(i); }
  // Bytes of blocks first .. last-1 of buf.
  [[nodiscard]] Bytes range(Bytes buf, int first, int last) const noexcept {
    return buf.subspan(offset(first), offset(last) - offset(first));
  }
  [[nodiscard]] ConstBytes range(ConstBytes buf, int first, int last) const noexcept {
    return buf.subspan(offset(first), offset(last) - offset(first));
  }
  [[nodiscard]] Bytes block(Bytes buf, int i) const noexcept { return range(buf, i, i + 1); }
  [[nodiscard]] ConstBytes block(ConstBytes buf, int i) const noexcept {
    return range(buf, i, i + 1);
  }

 private:
  std::span<const std::size_t> offsets_;
  std::size_t elem_;
  int p_;
  std::size_t base_ = 0;
  std::size_t extra_ = 0;
};

// A ring of `size` ranks inside the group: member k is rank first + k*stride. The whole group
// is {0, p, 1}; on a group of mesh shape, row r of rows x cols is {r*cols, cols, 1} and column c
// is {c, rows, cols}.
struct Ring {
  int first;
  int size;
  int stride;

  [[nodiscard]] static Ring all(int p) noexcept { return {0, p, 1}; }
  [[nodiscard]] int member(int k) const noexcept { return first + k * stride; }
  [[nodiscard]] int rank_of(int id) const noexcept { return (id - first) / stride; }
  [[nodiscard]] int right(int k) const noexcept { return member((k + 1) % size); }
  [[nodiscard]] int left(int k) const noexcept { return member((k - 1 + size) % size); }
};

// The row and the column of a mesh VP (ring and hypercube: one row of p).
[[nodiscard]] inline Ring row_group(const Topology& t, int id) noexcept {
  return {t.row_of(id) * t.cols(), t.cols(), 1};
}
[[nodiscard]] inline Ring column_group(const Topology& t, int id) noexcept {
  return {t.col_of(id), t.rows(), t.cols()};
}

[[nodiscard]] inline bool is_power_of_two(int p) noexcept {
  return p > 0 && std::has_single_bit(static_cast<unsigned>(p));
}
[[nodiscard]] inline int log2_of(int p) noexcept {  // p = 2^d
  return std::countr_zero(static_cast<unsigned>(p));
}

// The partner of my_id in round i of a butterfly (Port::Rounds' pattern of the hypercube
// algorithms that exchange with my_id XOR 2^i).
[[nodiscard]] inline int butterfly_partner(int my_id, int round, int /*p*/) noexcept {
  return my_id ^ (1 << round);
}

inline void copy_bytes(Bytes dst, ConstBytes src) noexcept {
  if (!src.empty() && dst.data() != src.data()) std::memmove(dst.data(), src.data(), src.size());
}

}  // namespace hypercomm::detail

namespace hypercomm::detail {

// The family of sub-algorithms a composite algorithm (two_phase, the mesh phases) uses on this
// machine; select.cpp decides it, so every VP agrees.
enum class Family : std::uint8_t { hypercube, ring, mesh };

// Part k of a p-block buffer as seen by a Ring's member k: blocks base + k*stride, ...,
// base + k*stride + width - 1. The whole machine's ring: {blocks, 0, 1, 1}; the row phase of a
// mesh all-gather: {blocks, r*cols, 1, 1}; its column phase: {blocks, 0, cols, cols}.
struct Segments {
  const Blocks& blocks;
  int base;
  int stride;
  int width;

  [[nodiscard]] Bytes of(Bytes buf, int k) const noexcept {
    const int first = base + k * stride;
    return blocks.range(buf, first, first + width);
  }
  [[nodiscard]] ConstBytes of(ConstBytes buf, int k) const noexcept {
    const int first = base + k * stride;
    return blocks.range(buf, first, first + width);
  }
};

}  // namespace hypercomm::detail
