// The header every message carries. The runtime treats it as opaque; the collectives fill it in
// so that a receiver can tell that two VPs disagree on the collective, its group, its root, its
// count or its algorithm (DESIGN.md: mismatches are detected at the receiver, never delivered as
// wrong data).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hypercomm {

class Topology;

struct MessageTag {
  std::uint32_t sequence = 0;  // the sender's call number on the group (0: point-to-point)
  std::uint32_t group = 0;     // the group the collective runs on (0: the whole machine)
  std::uint16_t root = 0;      // the collective's root, or its shift for circular_shift
  std::uint8_t kind = 0;       // which collective (0: point-to-point), see collectives
  std::uint8_t algo = 0;       // the algorithm the sender runs
  std::uint32_t count = 0;     // the sender's byte count as the collective defines it (mod 2^32)

  bool operator==(const MessageTag&) const = default;
};
static_assert(sizeof(MessageTag) == 16);

namespace detail {
// How error messages describe a header: the collectives, which know what its numbers mean,
// install theirs once (the runtime knows nothing about specific collectives).
using TagDescriber = std::string (*)(const MessageTag& tag, const Topology& machine);
void set_tag_describer(TagDescriber describer) noexcept;

// A receive that folds the message into the receiver's own data as it lands, rather than taking
// a copy to fold afterwards (a reduction's receive): apply(context, offset, bytes, n) folds bytes
// [offset, offset + n) of the message, n a multiple of granule. Each piece is applied once; the
// pieces of a message handed straight to the waiting receiver are applied by the sender's thread,
// or by both threads at once (disjoint pieces), so apply must not throw and must not touch what
// another piece touches.
struct Fold {
  void (*apply)(const void* context, std::size_t offset, const std::byte* bytes,
                std::size_t n) noexcept;
  const void* context;
  std::size_t granule;
};
}  // namespace detail

}  // namespace hypercomm
