// The one block layout of the collectives (Blocks): a buffer cut into parts by their byte
// offsets, however the parts came about (p equal blocks of a vector, the counts of an irregular
// call, a ring member's run of blocks, a mesh column's bundle), and the parts as seen from a
// root (the rooted ring algorithms number them relative to it).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <hypercomm/detail/core.hpp>
#include <iterator>
#include <span>
#include <utility>
#include <vector>

#include "scratch.hpp"

namespace hypercomm::detail {

// Byte offsets of parts: up to kInline in place, more from the thread's scratch cache
// (scratch.hpp). An irregular call makes them every call, twice for an all_to_allv: malloc and
// free cost as much as its small message, and even the scratch cache's take and give were 8% of
// an 8-byte all_to_allv over 2 VPs.
class Offsets {
 public:
  static constexpr std::size_t kInline = 17;  // the offsets of 16 parts
  Offsets() noexcept = default;
  Offsets(std::size_t n, std::size_t value) : size_(n) {
    if (n > kInline)
      spilled_.assign(n, value);
    else
      std::fill_n(in_place_.data(), n, value);
  }
  template <class It>
  Offsets(It first, It last) : Offsets(static_cast<std::size_t>(std::distance(first, last)), 0) {
    std::copy(first, last, data());
  }
  Offsets(const Offsets& other) : Offsets(other.begin(), other.end()) {}
  Offsets(Offsets&& other) noexcept : spilled_(std::move(other.spilled_)), size_(other.size_) {
    if (size_ <= kInline) std::copy_n(other.in_place_.data(), size_, in_place_.data());
  }
  Offsets& operator=(const Offsets&) = delete;
  Offsets& operator=(Offsets&&) = delete;
  ~Offsets() = default;

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::size_t* data() noexcept {
    return size_ <= kInline ? in_place_.data() : spilled_.data();
  }
  [[nodiscard]] const std::size_t* data() const noexcept {
    return size_ <= kInline ? in_place_.data() : spilled_.data();
  }
  [[nodiscard]] const std::size_t* begin() const noexcept { return data(); }
  [[nodiscard]] const std::size_t* end() const noexcept { return data() + size_; }
  std::size_t& operator[](std::size_t k) noexcept { return data()[k]; }
  // Read only where a Blocks is listed (Blocks::offset), whose offsets are all written; GCC 12
  // under -fsanitize=thread inlines it into other layouts' paths and warns there.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
  std::size_t operator[](std::size_t k) const noexcept { return data()[k]; }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

 private:
  std::array<std::size_t, kInline> in_place_;
  std::vector<std::size_t, ScratchAllocator<std::size_t>> spilled_;
  std::size_t size_ = 0;
};

class Blocks {
 public:
  using Offsets = detail::Offsets;
  // `total_bytes` of `elem_size`-byte elements split into p blocks as evenly as possible: block
  // i has n/p elements, one more for i < n mod p. A p-block collective's blocks are all equal.
  Blocks(std::size_t total_bytes, std::size_t elem_size, int p) noexcept : p_(p) {
    const std::size_t n = elem_size == 0 ? 0 : total_bytes / elem_size;
    const std::size_t base = n / static_cast<std::size_t>(p);
    extra_ = n % static_cast<std::size_t>(p);
    if (extra_ == 0) {
      base_ = base * elem_size;
    } else {
      layout_ = Layout::uneven;
      base_ = base;
      elem_ = elem_size;
    }
  }
  // p blocks of `block_bytes` each (a scatter's, gather's, all_gather's or reduce_scatter's),
  // with no division: the constructor above divides twice, 64-bit, in every such call (p = 2,
  // 8 B back to back: a quarter of a scatter's own samples).
  [[nodiscard]] static Blocks equal(std::size_t block_bytes, int p) noexcept {
    return Blocks(Layout::equal, block_bytes, p);
  }
  // Parts of any sizes, given by their count + 1 byte offsets (the irregular collectives).
  explicit Blocks(Offsets offsets) noexcept
      : offsets_(std::move(offsets)),
        layout_(Layout::listed),
        p_(static_cast<int>(offsets_.size()) - 1) {}
  explicit Blocks(std::span<const std::size_t> offsets)
      : Blocks(Offsets(offsets.begin(), offsets.end())) {}
  // n parts one after another, part k of size_of(k) bytes.
  template <class SizeOf>
  [[nodiscard]] static Blocks of_sizes(int n, SizeOf size_of) {
    Offsets offsets(static_cast<std::size_t>(n) + 1, 0);
    for (int k = 0; k < n; ++k) offsets[k + 1] = offsets[k] + size_of(k);
    return Blocks(std::move(offsets));
  }
  // `count` parts of `width` consecutive blocks of `parent` each, from its block `first`: part k
  // is blocks first + k*width .. first + (k+1)*width - 1. A ring member's part of the p blocks:
  // the whole machine's ring takes the blocks themselves; the row phase of a mesh all-gather
  // grouped(blocks, r*cols, 1, cols), its column phase grouped(blocks, 0, cols, rows).
  [[nodiscard]] static Blocks grouped(const Blocks& parent, int first, int width,
                                      int count) noexcept {
    Blocks b(Layout::grouped, 0, count);
    b.parent_ = &parent;
    b.first_ = first;
    b.width_ = width;
    b.start_ = parent.offset(first);
    return b;
  }

  [[nodiscard]] int count() const noexcept { return p_; }
  // Byte offset of block i, 0 <= i <= count() (offset(count()) is the total).
  [[nodiscard]] std::size_t offset(int i) const noexcept {
    const auto k = static_cast<std::size_t>(i);
    if (layout_ == Layout::equal) [[likely]]
      return k * base_;
    if (layout_ == Layout::listed) return offsets_[k];
    if (layout_ == Layout::uneven) return (k * base_ + (k < extra_ ? k : extra_)) * elem_;
    return offset_in_parent(i);
  }
  [[nodiscard]] std::size_t size(int i) const noexcept { return offset(i + 1) - offset(i); }
  [[nodiscard]] std::size_t total() const noexcept { return offset(p_); }
  [[nodiscard]] bool all_equal() const noexcept {
    if (layout_ == Layout::equal) return true;
    for (int i = 1; i < p_; ++i)
      if (size(i) != size(0)) return false;
    return true;
  }
  // Bytes of blocks first .. last-1 of buf.
  [[nodiscard]] Bytes range(Bytes buf, int first, int last) const noexcept {
    return buf.subspan(start_ + offset(first), offset(last) - offset(first));
  }
  [[nodiscard]] ConstBytes range(ConstBytes buf, int first, int last) const noexcept {
    return buf.subspan(start_ + offset(first), offset(last) - offset(first));
  }
  [[nodiscard]] Bytes block(Bytes buf, int i) const noexcept { return range(buf, i, i + 1); }
  [[nodiscard]] ConstBytes block(ConstBytes buf, int i) const noexcept {
    return range(buf, i, i + 1);
  }

  // Seen from part r: relative part v is part (r + v) mod count(), so a range of relative parts
  // is one piece of the buffer or, when it wraps past the last part, two.
  // Bytes of relative parts lo .. hi-1 (0 <= lo <= hi <= count()).
  [[nodiscard]] std::size_t relative_bytes(int r, int lo, int hi) const noexcept {
    const int s = r + lo, e = r + hi;
    if (e <= p_) return offset(e) - offset(s);
    if (s >= p_) return offset(e - p_) - offset(s - p_);
    return (total() - offset(s)) + offset(e - p_);
  }
  [[nodiscard]] bool relative_contiguous(int r, int lo, int hi) const noexcept {
    return lo == hi || r + lo >= p_ || r + hi <= p_;
  }
  // Where relative part lo starts in the buffer.
  [[nodiscard]] std::size_t relative_start(int r, int lo) const noexcept {
    return offset((r + lo) % p_);
  }

 private:
  Offsets offsets_;
  // A grouped layout's offset, out of line: inline, GCC unrolled offset's recursion through the
  // parents eight deep into every caller (scatter_hypercube: 13 KiB of code, its two offset
  // lookups a call spilling a dozen registers).
  [[gnu::noinline]] std::size_t offset_in_parent(int i) const noexcept {
    return parent_->offset(first_ + i * width_) - start_;
  }

  // equal: p blocks of base_ bytes; uneven: p blocks of base_ elements of elem_ bytes, one more
  // for the first extra_; listed: offsets_; grouped: parts of parent_'s blocks. Equal, the layout
  // of nearly every call, is the first that offset tests, and one multiply (p = 2, 8 B back to
  // back: a scatter's offsets, ten a call, were 51 instructions of its 1000 with parent_ and
  // offsets_ tested first and the uneven formula for every layout).
  enum class Layout : std::uint8_t { equal, uneven, listed, grouped };
  Blocks(Layout layout, std::size_t base, int p) noexcept : layout_(layout), p_(p), base_(base) {}

  Layout layout_ = Layout::equal;
  const Blocks* parent_ = nullptr;
  int first_ = 0;
  int width_ = 1;
  std::size_t start_ = 0;  // where a grouped layout's first part starts in its parent's buffer
  std::size_t elem_ = 1;
  int p_;
  std::size_t base_ = 0;
  std::size_t extra_ = 0;
};

// 8-16 bytes (a scatter's or gather's own block of one or two words) without a call to memmove:
// both ends are loaded before either is stored, so overlapping spans copy as memmove's do (p = 2,
// 8 B back to back, with all_equal's shortcut: scatter 0.97 / 0.98x the time, eight rounds'
// fastest / third fastest; gather and broadcast 0.99-1.04x).
inline void copy_bytes(Bytes dst, ConstBytes src) noexcept {
  const std::size_t n = src.size();
  if (n == 0 || dst.data() == src.data()) return;
  if (n >= 8 && n <= 16) {
    std::uint64_t head = 0, tail = 0;
    std::memcpy(&head, src.data(), 8);
    std::memcpy(&tail, src.data() + n - 8, 8);
    std::memcpy(dst.data(), &head, 8);
    std::memcpy(dst.data() + n - 8, &tail, 8);
    return;
  }
  std::memmove(dst.data(), src.data(), n);
}

// The column bundles of a rows x cols mesh's p blocks (the mesh scatter's row phase and the mesh
// gather's): bundle c holds blocks r*cols + c for r = 0 .. rows-1, in row order.
struct ColumnBundles {
  const Blocks& blocks;
  int rows;
  int cols;

  // The bundles one after another.
  [[nodiscard]] Blocks layout() const {
    return Blocks::of_sizes(cols, [&](int col) {
      std::size_t bytes = 0;
      for (int r = 0; r < rows; ++r) bytes += blocks.size(r * cols + col);
      return bytes;
    });
  }
  // The blocks of `all` (id order) into `packed` (bundle order), or back.
  void pack(ConstBytes all, Bytes packed) const noexcept { move(all, packed, true); }
  void unpack(ConstBytes packed, Bytes all) const noexcept { move(packed, all, false); }

 private:
  void move(ConstBytes from, Bytes to, bool packing) const noexcept {
    std::size_t at = 0;
    for (int col = 0; col < cols; ++col)
      for (int r = 0; r < rows; ++r) {
        const std::size_t size = blocks.size(r * cols + col), id_at = blocks.offset(r * cols + col);
        if (packing)
          copy_bytes(to.subspan(at, size), from.subspan(id_at, size));
        else
          copy_bytes(to.subspan(id_at, size), from.subspan(at, size));
        at += size;
      }
  }
};

}  // namespace hypercomm::detail
