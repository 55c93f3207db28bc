// The header every message carries. The runtime treats it as opaque; the collectives fill it in
// so that a receiver can tell that two VPs disagree on the collective, its root, its count or its
// algorithm (DESIGN.md: mismatches are detected at the receiver, never delivered as wrong data).
#pragma once

#include <cstdint>

namespace hypercomm {

struct MessageTag {
  std::uint32_t sequence = 0;  // the sender's collective call number (0: point-to-point)
  std::uint16_t root = 0;      // the collective's root, or its shift for circular_shift
  std::uint8_t kind = 0;       // which collective (0: point-to-point), see collectives
  std::uint8_t algo = 0;       // the algorithm the sender runs
  std::uint64_t count = 0;     // the sender's element count as the collective defines it

  bool operator==(const MessageTag&) const = default;
};
static_assert(sizeof(MessageTag) == 16);

}  // namespace hypercomm
