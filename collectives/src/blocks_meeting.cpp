// The irregular gathers' and scatters' meetings (blocks_meeting.hpp).
#include "blocks_meeting.hpp"

#include <algorithm>
#include <cstring>

namespace hypercomm::detail {

namespace {

// A gatherv's small blocks, each VP's at its place in the slot (inputs[i]), into the root's out.
void place_blocks(const void* context, std::span<const void* const> inputs, Bytes result,
                  Bytes /*scratch*/) {
  const Blocks& blocks = *static_cast<const Blocks*>(context);
  for (int i = 0; i < blocks.count(); ++i)
    if (const std::size_t n = blocks.size(i); n != 0)
      std::memcpy(result.data() + blocks.offset(i), inputs[static_cast<std::size_t>(i)], n);
}

[[nodiscard]] std::size_t largest_block(const Blocks& blocks) noexcept {
  std::size_t largest = 0;
  for (int i = 0; i < blocks.count(); ++i) largest = std::max(largest, blocks.size(i));
  return largest;
}

// meet_blocks' moves: every member's blocks by the last arriver (context: the MoveBlocks), or
// each member's own in its part.
void move_every_block(const void* context, std::span<const void* const> inputs, Bytes /*result*/,
                      Bytes /*scratch*/) {
  (*static_cast<const MoveBlocks*>(context))(inputs, -1);
}
void move_own_blocks(const void* context, std::span<const void* const> inputs, int rank) {
  (*static_cast<const MoveBlocks*>(context))(inputs, rank);
}

// An all_to_all's blocks: block i of VP j's out is block j of VP i's in (every VP's, or VP
// only's).
void transpose_blocks(std::span<const void* const> members, int only) {
  const int p = static_cast<int>(members.size());
  const int first = only < 0 ? 0 : only, last = only < 0 ? p : only + 1;
  for (int j = first; j < last; ++j) {
    const BlocksMember& to = member_of(members, j);
    const Blocks& blocks = *to.blocks;
    for (int i = 0; i < p; ++i)
      if (const std::size_t n = blocks.size(j); n != 0)
        std::memcpy(to.out + blocks.offset(i), member_of(members, i).in + blocks.offset(j), n);
  }
}

}  // namespace

void all_gather_blocks(std::span<const void* const> members, int only) {
  const Blocks& blocks = *member_of(members, 0).blocks;
  const int p = blocks.count();
  const int first = only < 0 ? 0 : only, last = only < 0 ? p : only + 1;
  for (int j = first; j < last; ++j)
    for (int i = 0; i < p; ++i)
      if (const std::size_t n = blocks.size(i); i != j && n != 0)
        std::memcpy(member_of(members, j).out + blocks.offset(i),
                    member_of(members, i).out + blocks.offset(i), n);
}

bool meet_all_to_all(const Comm& c, const Port::Rounds& rounds, ConstBytes in, Bytes out,
                     std::size_t block) {
  if (block == 0) return false;
  const Blocks blocks(out.size(), block, c.p());  // p blocks of `block` bytes
  const auto p = static_cast<std::size_t>(c.p());
  return meet_blocks(c, rounds, {in.data(), out.data(), &blocks}, out.size() * p, transpose_blocks,
                     p * kAllToAllMovedByOneEach);
}

bool meet_rooted_blocks(const Comm& c, const Port::Rounds& rounds, Port::Flow flow, ConstBytes in,
                        Bytes out, const Blocks& blocks) {
  const BlocksMember mine{in.data(), out.data(), &blocks, rounds.root};
  const Port::Uneven uneven{&mine, blocks.offset(c.id()), blocks.total(),
                            largest_block(blocks) > Port::kPipelinedBytes};
  const bool gathering = flow == Port::Flow::to_root;
  return c.meet_rooted(rounds, flow, in, out, Port::Results::per_vp,
                       gathering ? place_blocks : nullptr, gathering ? &blocks : nullptr, &uneven);
}

bool meet_blocks(const Comm& c, const Port::Rounds& rounds, const BlocksMember& mine,
                 std::size_t moved, MoveBlocks move, std::size_t by_one) {
  if (moved <= by_one) return c.meet(rounds, &mine, move_every_block, &move);
  // Too much for one VP: each copies what it receives straight from the others' buffers, and
  // nobody leaves (and reuses a buffer) before every member has copied.
  return c.meet_in_parts(rounds, &mine, move_own_blocks, &move);
}

}  // namespace hypercomm::detail
