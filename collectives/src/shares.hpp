// How a meeting whose work every member shares (Comm::meet_in_parts) divides a vector of m
// bytes: each member folds or copies its share for every member.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <numeric>

namespace hypercomm::detail {

// A share's unit: whole cache lines where the element's size allows (lcm of it and a line), so
// that no two members write one line.
[[nodiscard]] inline std::size_t share_unit(std::size_t elem_size) noexcept {
  return std::lcm(elem_size, std::size_t{64});
}
// About `bytes` a piece, in whole units: what a member works on at a time.
[[nodiscard]] inline std::size_t share_chunk(std::size_t elem_size, std::size_t bytes) noexcept {
  const std::size_t unit = share_unit(elem_size);
  return std::max<std::size_t>(1, bytes / unit) * unit;
}
// Member `rank` of p's bytes [first, last) of m: whole units, the last member's up to the end.
struct Share {
  std::size_t first, last;
};
[[nodiscard]] inline Share share_of(std::size_t m, std::size_t elem_size, std::size_t p,
                                    std::size_t rank) noexcept {
  const std::size_t unit = share_unit(elem_size), units = m / unit;
  return {units * rank / p * unit, rank + 1 == p ? m : units * (rank + 1) / p * unit};
}

// A share folded in the butterfly's tree (fold_butterfly_tree) over p inputs: the bytes of each
// input it folds at a time, so that the tree's partial folds stay in L1, and the tree's levels
// (the partial folds' room: levels * chunk bytes).
[[nodiscard]] inline std::size_t tree_chunk_bytes(std::size_t elem_size) noexcept {
  return share_chunk(elem_size, 4 * 1024);
}
[[nodiscard]] inline std::size_t tree_levels(int p) noexcept {
  return static_cast<std::size_t>(std::bit_width(static_cast<unsigned>(p - 1)));
}

// A large reduction's meeting (reduce_hypercube.cpp, reduce_ring.cpp): what each VP brings, its
// in and (the root's; empty elsewhere) its out. (The front end gives every VP an in apart from
// its out.)
struct ReduceMember {
  const std::byte* in;
  std::byte* out;
};
// The least a VP passes to a shared reduce meeting: below, each VP's second turn on its core (its
// share, after every VP has come) costs more than the messages (8 VPs on 2 cores after a
// barrier: 8 KiB 9.9 us against 5.8, 32 KiB 13.4 against 12.4, 64 KiB 16.6 against 22.6; back to
// back the meeting leads from 8 KiB, 10.5 against 15.0).
inline constexpr std::size_t kSharedReduceBytes = 32 * 1024;

}  // namespace hypercomm::detail
