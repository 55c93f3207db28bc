// The irregular gathers' and scatters' meetings (blocks_meeting.hpp).
#include "blocks_meeting.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "scratch.hpp"

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

// The last arriver's part of meet_blocks (its own context: every member's header agreed).
struct Conclusion {
  MoveBlocks move;
  bool by_one;
};

// What the meeting tells every VP: whether the blocks have moved (a 64-bit flag), then where
// every member's are (p pointers to BlocksMember).
[[nodiscard]] constexpr std::size_t told_bytes(int p) noexcept {
  return sizeof(std::uint64_t) + static_cast<std::size_t>(p) * sizeof(const void*);
}

void conclude(const void* context, std::span<const void* const> inputs, Bytes result,
              Bytes /*scratch*/) {
  const auto& [move, by_one] = *static_cast<const Conclusion*>(context);
  if (by_one) move(inputs, -1);
  const std::uint64_t flag = by_one ? 1 : 0;
  std::memcpy(result.data(), &flag, sizeof flag);
  std::memcpy(result.data() + sizeof flag, inputs.data(), inputs.size() * sizeof(const void*));
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

bool meet_all_to_all(const Comm& c, const Port::Rounds& rounds, ConstBytes in, Bytes out,
                     std::size_t block) {
  if (block == 0) return false;
  const Blocks blocks(out.size(), block, c.p());  // p blocks of `block` bytes
  return meet_blocks(c, rounds, {in.data(), out.data(), &blocks},
                     out.size() * static_cast<std::size_t>(c.p()), transpose_blocks);
}

bool meet_rooted_blocks(const Comm& c, const Port::Rounds& rounds, Port::Flow flow, ConstBytes in,
                        Bytes out, const Blocks& blocks) {
  const BlocksMember mine{in.data(), out.data(), &blocks};
  const Port::Uneven uneven{&mine, blocks.offset(c.id()), blocks.total(),
                            largest_block(blocks) > Port::kPipelinedBytes};
  const bool gathering = flow == Port::Flow::to_root;
  return c.meet_rooted(rounds, flow, in, out, Port::Results::per_vp,
                       gathering ? place_blocks : nullptr, gathering ? &blocks : nullptr, &uneven);
}

bool meet_blocks(const Comm& c, const Port::Rounds& rounds, const BlocksMember& mine,
                 std::size_t moved, MoveBlocks move) {
  const int p = c.p();
  const Conclusion context{move, moved <= kBlocksMovedByOne};
  Buffer told(told_bytes(p));
  if (!c.meet(rounds, &mine, conclude, &context, told, Port::Results::shared, told.size()))
    return false;
  std::uint64_t flag = 0;
  std::memcpy(&flag, told.data(), sizeof flag);
  if (flag != 0) return true;
  // Too much for one VP: what this member receives, straight from the others' buffers; then
  // nobody leaves (and reuses a buffer) before every member has copied.
  std::vector<const void*> members(static_cast<std::size_t>(p));
  std::memcpy(members.data(), told.data() + sizeof flag, members.size() * sizeof(const void*));
  move(members, c.id());
  const bool met = c.meet({0, 0, rounds.to, rounds.from, nullptr, rounds.root});
  (void)met;  // it met above, and every meeting of a run may
  return true;
}

}  // namespace hypercomm::detail
