// Shared pieces of the rooted family (rooted.hpp): the two arms of a ring rooted at one member,
// and the neighbour-only ring scatter / gather of per-member parts that scatter_ring,
// gather_ring and the row and column phases of scatter_mesh / gather_mesh run.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "blocks.hpp"
#include "comm.hpp"
#include "ring.hpp"
#include "scratch.hpp"

namespace hypercomm::detail {

// A ring of n members rooted at member rank r; relative rank v = (k - r) mod n. The up arm is
// v = 1 .. up (reached through member r+1), the down arm v = n-1 .. n-down (through r-1).
struct RingArms {
  int n;
  int up;
  int down;

  // As even as possible, the longer arm up: up = floor(n/2) = ceil((n-1)/2).
  [[nodiscard]] static RingArms balanced(int n) noexcept { return {n, n / 2, (n - 1) / 2}; }
  // A line (no wraparound) rooted at rank r: the up arm r+1 .. n-1, the down arm r-1 .. 0.
  [[nodiscard]] static RingArms line(int n, int r) noexcept { return {n, n - 1 - r, r}; }
  [[nodiscard]] bool on_up(int v) const noexcept { return v >= 1 && v <= up; }
  [[nodiscard]] int down_end() const noexcept { return n - down; }  // the down arm's far end
};

[[nodiscard]] inline int relative_rank(int k, int r, int n) noexcept {
  return ((k - r) % n + n) % n;
}

// n parts laid out one after another in member order: part k is bytes offsets[k] .. offsets[k+1]
// of a member-order buffer. Seen from root rank r, relative part v is member (r + v) mod n, so a
// range of relative parts is one piece of the buffer or, when it wraps past member n-1, two.
class RelativeParts {
 public:
  RelativeParts(std::span<const std::size_t> offsets, int root_rank) noexcept
      : off_(offsets), n_(static_cast<int>(offsets.size()) - 1), r_(root_rank) {}

  [[nodiscard]] std::size_t size_of_member(int k) const noexcept { return off_[k + 1] - off_[k]; }
  // Bytes of relative parts lo .. hi-1 (0 <= lo <= hi <= n).
  [[nodiscard]] std::size_t bytes(int lo, int hi) const noexcept {
    const int s = r_ + lo, e = r_ + hi;
    if (e <= n_) return off_[e] - off_[s];
    if (s >= n_) return off_[e - n_] - off_[s - n_];
    return (off_[n_] - off_[s]) + off_[e - n_];
  }
  [[nodiscard]] bool contiguous(int lo, int hi) const noexcept {
    return lo == hi || r_ + lo >= n_ || r_ + hi <= n_;
  }
  // The relative parts lo .. hi-1 of member-order `all`, in relative order: a view of `all`
  // when they are contiguous there, else packed into scratch.
  [[nodiscard]] ConstBytes view(ConstBytes all, int lo, int hi, Buffer& scratch) const {
    if (contiguous(lo, hi)) return all.subspan(start(lo), bytes(lo, hi));
    const std::size_t head = off_[n_] - off_[r_ + lo];
    scratch.resize(bytes(lo, hi));
    copy_bytes(Bytes(scratch).first(head), all.subspan(off_[r_ + lo], head));
    copy_bytes(Bytes(scratch).subspan(head), all.first(scratch.size() - head));
    return scratch;
  }
  // Receives the relative parts lo .. hi-1 from src into member-order `all`: straight into
  // place when contiguous, else through scratch.
  void recv_into(const Comm& c, int src, Bytes all, int lo, int hi, Buffer& scratch) const {
    if (contiguous(lo, hi)) {
      c.recv(src, all.subspan(start(lo), bytes(lo, hi)));
      return;
    }
    scratch.resize(bytes(lo, hi));
    c.recv(src, scratch);
    const std::size_t head = off_[n_] - off_[r_ + lo];
    copy_bytes(all.subspan(off_[r_ + lo], head), ConstBytes(scratch).first(head));
    copy_bytes(all.first(scratch.size() - head), ConstBytes(scratch).subspan(head));
  }

 private:
  [[nodiscard]] std::size_t start(int lo) const noexcept { return off_[(r_ + lo) % n_]; }
  std::span<const std::size_t> off_;
  int n_;
  int r_;
};

// Offsets of n parts whose sizes are size_of(k), k = 0 .. n-1.
template <class SizeOf>
[[nodiscard]] std::vector<std::size_t> part_offsets(int n, SizeOf size_of) {
  std::vector<std::size_t> off(static_cast<std::size_t>(n) + 1, 0);
  for (int k = 0; k < n; ++k) off[k + 1] = off[k] + size_of(k);
  return off;
}

// Ring scatter over g (every member calls it): the root (member root_rank) holds all parts in
// member order in `all` and sends each arm its parts in one message, the longer (up) arm first;
// each arm member keeps its own part and passes the rest on. own receives this member's part
// (at the root own may alias its part of all).
// Cost (a = arms.up, b = arms.down): the up arm's far end receives after
// a*ts + tw*m*a(a+1)/2, the down arm's after (b+1)*ts + tw*m*(a + b(b+1)/2) (m: one part).
inline void ring_scatter_parts(const Comm& c, const Ring& g, int root_rank,
                               std::span<const std::size_t> offsets, ConstBytes all, Bytes own,
                               const RingArms& arms) {
  const int n = g.size;
  const int k = g.rank_of(c.id());
  const int v = relative_rank(k, root_rank, n);
  const RelativeParts rel(offsets, root_rank);
  if (v == 0) {
    Buffer scratch;  // send copies the message, so one scratch serves both
    if (arms.up > 0) c.send(g.right(k), rel.view(all, 1, arms.up + 1, scratch));
    if (arms.down > 0) c.send(g.left(k), rel.view(all, arms.down_end(), n, scratch));
    copy_bytes(own, all.subspan(offsets[k], own.size()));
    return;
  }
  if (arms.on_up(v)) {  // holds relative parts v .. up, its own first
    if (v == arms.up) {
      c.recv(g.left(k), own);
      return;
    }
    Buffer held(rel.bytes(v, arms.up + 1));
    c.recv(g.left(k), held);
    c.send(g.right(k), ConstBytes(held).subspan(own.size()));
    copy_bytes(own, ConstBytes(held).first(own.size()));
  } else {  // holds relative parts n-down .. v, its own last
    if (v == arms.down_end()) {
      c.recv(g.right(k), own);
      return;
    }
    Buffer held(rel.bytes(arms.down_end(), v + 1));
    c.recv(g.right(k), held);
    c.send(g.left(k), ConstBytes(held).first(held.size() - own.size()));
    copy_bytes(own, ConstBytes(held).last(own.size()));
  }
}

// Ring gather over g, the scatter reversed: each arm's far end sends its part toward the root,
// each arm member adds its own and passes the lot on; the root places both arms' parts and its
// own into member-order `all`. Cost: max over the arms of a*ts + tw*m*a(a+1)/2.
inline void ring_gather_parts(const Comm& c, const Ring& g, int root_rank,
                              std::span<const std::size_t> offsets, ConstBytes own, Bytes all,
                              const RingArms& arms) {
  const int n = g.size;
  const int k = g.rank_of(c.id());
  const int v = relative_rank(k, root_rank, n);
  const RelativeParts rel(offsets, root_rank);
  if (v == 0) {
    Buffer scratch;
    if (arms.up > 0) rel.recv_into(c, g.right(k), all, 1, arms.up + 1, scratch);
    if (arms.down > 0) rel.recv_into(c, g.left(k), all, arms.down_end(), n, scratch);
    copy_bytes(all.subspan(offsets[k], own.size()), own);
    return;
  }
  if (arms.on_up(v)) {  // relative parts v .. up, its own first
    if (v == arms.up) {
      c.send(g.left(k), own);
      return;
    }
    Buffer held(rel.bytes(v, arms.up + 1));
    copy_bytes(Bytes(held).first(own.size()), own);
    c.recv(g.right(k), Bytes(held).subspan(own.size()));
    c.send(g.left(k), held);
  } else {  // relative parts n-down .. v, its own last
    if (v == arms.down_end()) {
      c.send(g.right(k), own);
      return;
    }
    Buffer held(rel.bytes(arms.down_end(), v + 1));
    c.recv(g.left(k), Bytes(held).first(held.size() - own.size()));
    copy_bytes(Bytes(held).last(own.size()), own);
    c.send(g.right(k), held);
  }
}

// The column bundles of a rows x cols mesh's p blocks (the mesh scatter's row phase and the mesh
// gather's): bundle c holds blocks r*cols + c for r = 0 .. rows-1, in row order.
struct ColumnBundles {
  const Blocks& blocks;
  int rows;
  int cols;

  // The cols + 1 offsets of the bundles one after another.
  [[nodiscard]] std::vector<std::size_t> offsets() const {
    return part_offsets(cols, [&](int col) {
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
