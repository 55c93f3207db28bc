// Shared pieces of the rooted family (rooted.hpp): the two arms of a ring rooted at one member,
// and the neighbour-only ring scatter / gather of per-member parts that scatter_ring,
// gather_ring and the row and column phases of scatter_mesh / gather_mesh run.
#pragma once

#include <algorithm>
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

// A ring of the whole group in id order, not a mesh row nor the Gray-code ring: where a rooted
// ring collective may meet (Port::meet_rooted) in place of its messages.
[[nodiscard]] inline bool whole_group_ring(const Comm& c, const Ring& g) noexcept {
  return g.first == 0 && g.stride == 1 && !g.gray_order && g.size == c.p() && g.size > 1;
}

// The balanced arms' steps as Port::Rounds (ranks v relative to the root round the ring:
// Rounds::ring_root), for the meetings that stand in for them where VPs outnumber cores. A
// round's messages must carry the same number of parts (Rounds::scale) and a VP may receive
// once a round, so the steps are spread over the rounds; a VP's clock depends only on the order
// of its own sends and receives, which stays the messages'. a = floor(n/2) members on the up arm
// (v = 1 .. a), b = floor((n-1)/2) on the down arm (v = n - j, j = 1 .. b); n >= 2.
[[nodiscard]] inline int ring_arm_rounds(int n) noexcept { return n / 2 + n % 2; }

// Out from the root (broadcast, scatter): the root sends up in round 0, down in round 1; down
// member j receives in round j. Even n: up member v receives in round v - 1 (each round's
// messages carry a - k parts). Odd n (b = a): up member 1 waits out round 1 and member v >= 2
// receives in round v, so that both arms' messages of a - k + 1 parts share round k >= 1.
[[nodiscard]] inline int ring_out_up_round(int v, int n) noexcept {
  return n % 2 == 1 && v >= 2 ? v : v - 1;
}
[[nodiscard]] inline int ring_out_to(int v, int round, int n) noexcept {
  const int a = n / 2, b = (n - 1) / 2;
  if (v == 0) return round == 0 && a > 0 ? 1 : round == 1 && b > 0 ? n - 1 : -1;
  if (v <= a) return v < a && round == ring_out_up_round(v + 1, n) ? v + 1 : -1;
  const int j = n - v;
  return j < b && round == j + 1 ? v - 1 : -1;
}
[[nodiscard]] inline int ring_out_from(int v, int round, int n) noexcept {
  if (v == 0) return -1;
  if (v <= n / 2) return round == ring_out_up_round(v, n) ? v - 1 : -1;
  return round == n - v ? (v + 1) % n : -1;
}
[[nodiscard]] inline std::size_t ring_out_parts(int round, int n) noexcept {
  const int a = n / 2;
  return static_cast<std::size_t>(n % 2 == 1 ? a - std::max(0, round - 1) : a - round);
}

// In to the root (reduce, gather), the out steps reversed: up member v sends in round a - v,
// down member j in round b - j, each round's messages k + 1 parts; for odd n both arms would
// reach the root in round a - 1, so down member 1 sends in round a instead (a parts).
[[nodiscard]] inline int ring_in_down_round(int j, int n) noexcept {
  return n % 2 == 1 && j == 1 ? n / 2 : (n - 1) / 2 - j;
}
[[nodiscard]] inline int ring_in_to(int v, int round, int n) noexcept {
  const int a = n / 2;
  if (v == 0) return -1;
  if (v <= a) return round == a - v ? v - 1 : -1;
  return round == ring_in_down_round(n - v, n) ? (v + 1) % n : -1;
}
[[nodiscard]] inline int ring_in_from(int v, int round, int n) noexcept {
  const int a = n / 2, b = (n - 1) / 2;
  if (v == 0) return round == a - 1 ? 1 : b > 0 && round == ring_in_down_round(1, n) ? n - 1 : -1;
  if (v <= a) return v < a && round == a - v - 1 ? v + 1 : -1;
  const int j = n - v;
  return j < b && round == ring_in_down_round(j + 1, n) ? v - 1 : -1;
}
[[nodiscard]] inline std::size_t ring_in_parts(int round, int n) noexcept {
  return static_cast<std::size_t>(std::min(round + 1, n / 2));
}

// Those steps rooted at rank `root`: messages of `bytes`, or of parts of `bytes` (scale:
// ring_out_parts, ring_in_parts).
using PartsOfRound = std::size_t (*)(int round, int n);
[[nodiscard]] inline Port::Rounds ring_out_rounds(int n, std::size_t bytes, int root,
                                                  PartsOfRound scale = nullptr) noexcept {
  Port::Rounds rounds{ring_arm_rounds(n), bytes, ring_out_to, ring_out_from, scale, root};
  rounds.ring_root = true;
  return rounds;
}
[[nodiscard]] inline Port::Rounds ring_in_rounds(int n, std::size_t bytes, int root,
                                                 PartsOfRound scale = nullptr) noexcept {
  Port::Rounds rounds{ring_arm_rounds(n), bytes, ring_in_to, ring_in_from, scale, root};
  rounds.ring_root = true;
  return rounds;
}

// The relative parts lo .. hi-1 (seen from part r, Blocks::relative_bytes) of the member-order
// buffer `all`, in relative order: a view of `all` when they are contiguous there, else packed
// into scratch.
[[nodiscard]] inline ConstBytes relative_view(const Blocks& parts, int r, ConstBytes all, int lo,
                                              int hi, Buffer& scratch) {
  if (parts.relative_contiguous(r, lo, hi))
    return all.subspan(parts.relative_start(r, lo), parts.relative_bytes(r, lo, hi));
  const std::size_t head = parts.total() - parts.offset(r + lo);
  scratch.resize(parts.relative_bytes(r, lo, hi));
  copy_bytes(Bytes(scratch).first(head), all.subspan(parts.offset(r + lo), head));
  copy_bytes(Bytes(scratch).subspan(head), all.first(scratch.size() - head));
  return scratch;
}

// Receives the relative parts lo .. hi-1 from src into the member-order buffer `all`: straight
// into place when contiguous, else through scratch.
inline void relative_recv(const Comm& c, int src, const Blocks& parts, int r, Bytes all, int lo,
                          int hi, Buffer& scratch) {
  if (parts.relative_contiguous(r, lo, hi)) {
    c.recv(src, all.subspan(parts.relative_start(r, lo), parts.relative_bytes(r, lo, hi)));
    return;
  }
  scratch.resize(parts.relative_bytes(r, lo, hi));
  c.recv(src, scratch);
  const std::size_t head = parts.total() - parts.offset(r + lo);
  copy_bytes(all.subspan(parts.offset(r + lo), head), ConstBytes(scratch).first(head));
  copy_bytes(all.first(scratch.size() - head), ConstBytes(scratch).subspan(head));
}

// Ring scatter over g (every member calls it): the root (member root_rank) holds all parts in
// member order in `all` and sends each arm its parts in one message, the longer (up) arm first;
// each arm member keeps its own part and passes the rest on. own receives this member's part
// (at the root own may alias its part of all).
// Cost (a = arms.up, b = arms.down): the up arm's far end receives after
// a*ts + tw*m*a(a+1)/2, the down arm's after (b+1)*ts + tw*m*(a + b(b+1)/2) (m: one part).
inline void ring_scatter_parts(const Comm& c, const Ring& g, int root_rank, const Blocks& parts,
                               ConstBytes all, Bytes own, const RingArms& arms) {
  const int n = g.size;
  const int k = g.rank_of(c.id());
  const int v = relative_rank(k, root_rank, n);
  if (v == 0) {
    Buffer scratch;  // send copies the message, so one scratch serves both
    if (arms.up > 0)
      c.send(g.right(k), relative_view(parts, root_rank, all, 1, arms.up + 1, scratch));
    if (arms.down > 0)
      c.send(g.left(k), relative_view(parts, root_rank, all, arms.down_end(), n, scratch));
    copy_bytes(own, all.subspan(parts.offset(k), own.size()));
    return;
  }
  if (arms.on_up(v)) {  // holds relative parts v .. up, its own first
    if (v == arms.up) {
      c.recv(g.left(k), own);
      return;
    }
    Buffer held(parts.relative_bytes(root_rank, v, arms.up + 1));
    c.recv(g.left(k), held);
    c.send(g.right(k), ConstBytes(held).subspan(own.size()));
    copy_bytes(own, ConstBytes(held).first(own.size()));
  } else {  // holds relative parts n-down .. v, its own last
    if (v == arms.down_end()) {
      c.recv(g.right(k), own);
      return;
    }
    Buffer held(parts.relative_bytes(root_rank, arms.down_end(), v + 1));
    c.recv(g.right(k), held);
    c.send(g.left(k), ConstBytes(held).first(held.size() - own.size()));
    copy_bytes(own, ConstBytes(held).last(own.size()));
  }
}

// Ring gather over g, the scatter reversed: each arm's far end sends its part toward the root,
// each arm member adds its own and passes the lot on; the root places both arms' parts and its
// own into member-order `all`. Cost: max over the arms of a*ts + tw*m*a(a+1)/2.
inline void ring_gather_parts(const Comm& c, const Ring& g, int root_rank, const Blocks& parts,
                              ConstBytes own, Bytes all, const RingArms& arms) {
  const int n = g.size;
  const int k = g.rank_of(c.id());
  const int v = relative_rank(k, root_rank, n);
  if (v == 0) {
    Buffer scratch;
    if (arms.up > 0) relative_recv(c, g.right(k), parts, root_rank, all, 1, arms.up + 1, scratch);
    if (arms.down > 0)
      relative_recv(c, g.left(k), parts, root_rank, all, arms.down_end(), n, scratch);
    copy_bytes(all.subspan(parts.offset(k), own.size()), own);
    return;
  }
  if (arms.on_up(v)) {  // relative parts v .. up, its own first
    if (v == arms.up) {
      c.send(g.left(k), own);
      return;
    }
    Buffer held(parts.relative_bytes(root_rank, v, arms.up + 1));
    copy_bytes(Bytes(held).first(own.size()), own);
    c.recv(g.right(k), Bytes(held).subspan(own.size()));
    c.send(g.left(k), held);
  } else {  // relative parts n-down .. v, its own last
    if (v == arms.down_end()) {
      c.send(g.right(k), own);
      return;
    }
    Buffer held(parts.relative_bytes(root_rank, arms.down_end(), v + 1));
    c.recv(g.left(k), Bytes(held).first(held.size() - own.size()));
    copy_bytes(Bytes(held).last(own.size()), own);
    c.send(g.right(k), held);
  }
}

}  // namespace hypercomm::detail
