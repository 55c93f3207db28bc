// The header every message carries. The runtime treats it as opaque; the collectives fill it in
// so that a receiver can tell that two VPs disagree on the collective, its group, its root, its
// count or its algorithm (DESIGN.md: mismatches are detected at the receiver, never delivered as
// wrong data).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace hypercomm {

class Topology;

struct MessageTag {
  std::uint32_t sequence = 0;  // the sender's call number on the group (0: point-to-point)
  std::uint32_t group = 0;     // the group the collective runs on (0: the whole machine)
  std::uint16_t root = 0;      // the collective's root, or its shift for circular_shift; a
                               // reduction's carries its operator's digest too (collectives)
  std::uint8_t kind = 0;       // which collective (0: point-to-point), see collectives
  std::uint8_t algo = 0;       // the algorithm the sender runs
  std::uint32_t count = 0;     // the sender's byte count as the collective defines it (mod 2^32)

  bool operator==(const MessageTag&) const = default;
};
static_assert(sizeof(MessageTag) == 16);

// A header made in two 8-byte words: written field by field, six narrower stores, a header
// read back whole (its copy, begin_call's two words) waits until they, and every store before
// them, have reached the cache, for the CPU cannot forward several stores to one load (p = 2,
// 8 B back to back, eight rounds alternated: broadcast 0.90x the time, gather 0.92x, reduce
// 0.92-0.96x, scatter 0.94x with this and begin_call taking the header in registers; the
// exchanges' 8 B calls 0.98-1.02x).
[[nodiscard]] inline MessageTag make_tag(std::uint32_t sequence, std::uint32_t group,
                                         std::uint16_t root, std::uint8_t kind, std::uint8_t algo,
                                         std::uint32_t count) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    std::uint64_t low = sequence | std::uint64_t{group} << 32;
    std::uint64_t high =
        root | std::uint64_t{kind} << 16 | std::uint64_t{algo} << 24 | std::uint64_t{count} << 32;
#if defined(__GNUC__)
    // Opaque to the optimizer: with a call's root, kind and count known constants, GCC otherwise
    // stores the header's fields one by one again (a barrier's call: four stores, then
    // begin_call's load of the second word waiting for them all).
    __asm__("" : "+r"(low), "+r"(high));
#endif
    return std::bit_cast<MessageTag>(std::array<std::uint64_t, 2>{low, high});
  } else {
    return MessageTag{sequence, group, root, kind, algo, count};
  }
}

// A copy of a header read as the two words make_tag wrote it in: a copy the compiler makes reads
// it whole in one 16-byte load, which waits for both stores (and every store before them) to
// reach the cache (a call's header, spilled across begin_call, then copied into its Comm).
[[nodiscard]] inline MessageTag copy_tag(const MessageTag& tag) noexcept {
#if defined(__GNUC__)
  std::array<std::uint64_t, 2> words;
  std::memcpy(&words[0], &tag, sizeof words[0]);
  __asm__("" : "+r"(words[0]));
  std::memcpy(&words[1], reinterpret_cast<const std::byte*>(&tag) + sizeof words[0],
              sizeof words[1]);
  __asm__("" : "+r"(words[1]));
  return std::bit_cast<MessageTag>(words);
#else
  return tag;
#endif
}

namespace detail {
// How error messages describe a header: the collectives, which know what its numbers mean,
// install theirs once (the runtime knows nothing about specific collectives).
using TagDescriber = std::string (*)(const MessageTag& tag, const Topology& machine);
void set_tag_describer(TagDescriber describer) noexcept;
// What a difference in two headers' root fields means (the root, a shift, a reduction's
// operator), appended to `fields` unless there: the collectives install theirs once.
using RootNamer = void (*)(const MessageTag& mine, const MessageTag& theirs,
                           std::vector<std::string>& fields);
void set_root_namer(RootNamer namer) noexcept;

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
