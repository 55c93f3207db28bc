// The irregular collectives' uneven blocks: the longest path of the algorithm's message schedule
// on the cost model's clocks, step by step, without moving data, and its simple bounds. These
// schedules restate what the algorithm files send; tests/test_fidelity_irregular.cpp checks every
// one against the model time of real runs. (The regular collectives have none: where a card
// states no closed form, cost_bounds in card.hpp bounds the call by closed forms.)
#pragma once

#include <span>

#include "card.hpp"

namespace hypercomm::detail {

// An irregular collective's schedule: counts per rank in elements of shape.elem_size bytes,
// all_to_allv's p x p row-major. finish: its model time; own_sends: the most any VP's sends add
// up to (a lower bound); rounds: the sum over its steps of the step's longest message (an upper
// bound where it is a schedule of rounds: all_gatherv, reduce_scatterv, all_to_allv).
struct ScheduleTimes {
  double finish = 0;
  double own_sends = 0;
  double rounds = 0;
};
[[nodiscard]] ScheduleTimes irregular_schedule(Collective op, Algo algo, const Topology& t,
                                               std::span<const std::size_t> counts,
                                               const CostModel& model, const CallShape& shape);

}  // namespace hypercomm::detail
