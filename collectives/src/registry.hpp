// The registry: every algorithm's card (card.hpp), in automatic's preference order.
#pragma once

#include <span>

#include "card.hpp"

namespace hypercomm::detail {

// Every card, grouped by collective in Collective's order; within a collective the order
// automatic prefers on equal cost.
[[nodiscard]] std::span<const AlgorithmCard* const> registry() noexcept;

// The cards of one collective, in preference order.
[[nodiscard]] std::span<const AlgorithmCard* const> cards_of(Collective op) noexcept;

}  // namespace hypercomm::detail
