// The reductions' operators by name, for CollectiveMismatch (core.hpp: operator_digest), and the
// header's root field of a reduction, which carries the operator's digest beside the root.
#pragma once

#include <cstdint>
#include <hypercomm/detail/core.hpp>
#include <string>

namespace hypercomm::detail {

// A group has at most 4096 members: a root or shift takes the header's low 12 bits.
inline constexpr int kRootBits = 12;
inline constexpr std::uint16_t kRootMask = (1u << kRootBits) - 1;

// The root field (MessageTag::root) of a reduction's header: a reduction without a root
// (all_reduce, reduce_scatter, scan, exscan, reduce_scatterv) carries the operator's whole
// digest, reduce its root and the digest's top four bits (a mismatch of operators found 15 times
// in 16 there).
[[nodiscard]] inline int reduction_root(const Reducer& op) noexcept { return op.digest; }
[[nodiscard]] inline int reduction_root(const Reducer& op, int root) noexcept {
  return (op.digest & ~kRootMask) | root;
}

// "std::plus<void> on double" for the operator whose digest's bits under `mask` are `digest`'s:
// the names of all that have them ("... or ...") where the mask is the whole digest, nothing
// where several have reduce's four bits, "with digest 0x1f2e" where none has them.
[[nodiscard]] std::string operator_name(std::uint16_t digest, std::uint16_t mask = 0xFFFF);

}  // namespace hypercomm::detail
