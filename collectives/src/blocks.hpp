// The partition of a buffer into p blocks (Blocks) and the part of it a ring member handles
// (Segments).
#pragma once

#include <cstddef>
#include <cstring>
#include <hypercomm/detail/core.hpp>
#include <span>

namespace hypercomm::detail {

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

inline void copy_bytes(Bytes dst, ConstBytes src) noexcept {
  if (!src.empty() && dst.data() != src.data()) std::memmove(dst.data(), src.data(), src.size());
}

}  // namespace hypercomm::detail
