// The irregular gathers and scatters (gatherv, scatterv, all_gatherv) and a large all_to_all as
// meetings in shared memory when VPs outnumber cores, as the small regular forms and all_to_allv
// meet: each message of their rounds would cost its VPs a switch, a meeting about one. The
// model clocks, message counts and link traffic are the rounds' (Rounds::sent_bytes: the blocks
// that the algorithm's messages carry, read from the call's Blocks through a BlocksMember).
//
// gatherv and scatterv (meet_rooted_blocks) meet in the rooted meetings of gather and scatter
// (Port::meet_rooted with Port::Uneven): blocks of at most Port::kPipelinedBytes each in the
// pipelined ones (the VPs that give to the root leave their blocks and go on, those that take
// from it go on once its blocks are there, so that VPs calling them back to back run ahead),
// larger ones by reference (each VP copies its block straight from or into the root's buffer).
// VPs that pass different counts may decide differently, but both kinds take the same slots,
// and the counts' digest is in the call's header, which the seats compare: CollectiveMismatch.
//
// all_gatherv (meet_blocks) meets whatever its counts say, in one meeting of every member (a
// member that decided from counts that differ from another's would send messages to a VP
// waiting in a meeting); the last VP to arrive finds members whose headers, and so counts,
// differ before it reads a block. It moves every block itself when they total at most
// kBlocksMovedByOne bytes; beyond, the meeting's work is shared (Comm::meet_in_parts): each VP
// copies the blocks it receives straight from the other members' buffers, and none leaves
// before all have (a buffer must stay until the others have read it). An all_to_all past 4 KiB
// a VP meets so (meet_all_to_all), moved by one up to kAllToAllMovedByOneEach a member, past that
// each VP copying its blocks from their senders' ins.
#pragma once

#include <cstddef>

#include "blocks.hpp"
#include "comm.hpp"

namespace hypercomm::detail {

// What a member brings to a meeting: its input, its output, and the call's blocks (the same on
// every member whose header agrees: the counts' digest is in it).
struct BlocksMember {
  const std::byte* in;
  std::byte* out;
  const Blocks* blocks;
  int root = 0;  // a rooted meeting's (meet_rooted_blocks), for the ring's Rounds::sent_bytes
};

[[nodiscard]] inline const BlocksMember& member_of(std::span<const void* const> members,
                                                   int i) noexcept {
  return *static_cast<const BlocksMember*>(members[static_cast<std::size_t>(i)]);
}

// Rounds::sent_bytes of the trees and butterflies that double what a VP holds (a gather's, an
// all-gather's): in round k, the blocks of the sender's aligned 2^k-subcube.
[[nodiscard]] inline std::size_t aligned_subcube_bytes(const void* member, int id, int round,
                                                       int /*p*/) noexcept {
  const Blocks& blocks = *static_cast<const BlocksMember*>(member)->blocks;
  const int bit = 1 << round, first = id & ~(bit - 1);
  return blocks.offset(first + bit) - blocks.offset(first);
}

// gatherv (Flow::to_root: in is this VP's block, out the root's whole buffer) or scatterv
// (Flow::from_root: in the root's, out this VP's) on the tree of `rounds`. False: it may not
// meet; send the messages.
[[nodiscard]] bool meet_rooted_blocks(const Comm& c, const Port::Rounds& rounds, Port::Flow flow,
                                      ConstBytes in, Bytes out, const Blocks& blocks);

// Copies every block (the last arriver, only = -1) or what member `only` receives.
using MoveBlocks = void (*)(std::span<const void* const> members, int only);

// The most bytes the last VP to arrive copies for all of them (the rest copy their own).
inline constexpr std::size_t kBlocksMovedByOne = 32 * 1024;
// An all_to_all's: 24 KiB a member (192 KiB at 8 VPs; a meeting has 2 or more). Shared, the
// work costs a second wait of every VP, for the last copy, and where VPs share cores every VP's
// wait is a switch, about what one VP's copy of 16-24 KiB takes (8 VPs on 2 cores, back to back,
// 1.5 / 2 / 3 KiB blocks moved by one: 0.64 / 0.66 / 0.80 the time shared; 16 VPs 0.5 / 1 /
// 1.5 KiB 0.63 / 0.72 / 0.94; at 32 KiB a member 0.81 and 0.99: docs/performance.md, "The
// all_to_all moved by one").
inline constexpr std::size_t kAllToAllMovedByOneEach = 24 * 1024;

// Meets with `rounds` (any sent_bytes read from this member's Blocks); `moved` is the bytes
// that `move` copies for every member at once, by the last VP to arrive up to `by_one`, else
// shared. False: it may not meet; send the messages.
[[nodiscard]] bool meet_blocks(const Comm& c, const Port::Rounds& rounds, const BlocksMember& mine,
                               std::size_t moved, MoveBlocks move,
                               std::size_t by_one = kBlocksMovedByOne);

// An all-gather's move (all_gather, all_gatherv): member i's own block, already in its place in
// its buffer (out), into the same place in every other member's (or member `only`'s).
void all_gather_blocks(std::span<const void* const> members, int only);

// An all_to_all of `block` bytes a pair as meet_blocks (rounds: the algorithm's, uniform): each
// VP copies the blocks it receives straight from their senders' ins. False: it may not meet.
[[nodiscard]] bool meet_all_to_all(const Comm& c, const Port::Rounds& rounds, ConstBytes in,
                                   Bytes out, std::size_t block);

}  // namespace hypercomm::detail
