// The registry (registry.hpp): one line per algorithm, in automatic's preference order within
// each collective. Adding an algorithm is its file (which defines its card) and its line here.
#include "registry.hpp"

#include <array>

namespace hypercomm::detail {

extern const AlgorithmCard broadcast_hypercube_card, broadcast_esbt_card, broadcast_two_phase_card,
    broadcast_mesh_card, broadcast_mesh_open_card, broadcast_mesh_gray_card, broadcast_ring_card,
    broadcast_ring_gray_card, broadcast_line_card;
extern const AlgorithmCard reduce_hypercube_card, reduce_two_phase_card, reduce_mesh_card,
    reduce_mesh_open_card, reduce_mesh_gray_card, reduce_ring_card, reduce_ring_gray_card,
    reduce_line_card;
extern const AlgorithmCard all_reduce_hypercube_card, all_reduce_two_phase_card,
    all_reduce_mesh_card, all_reduce_mesh_open_card, all_reduce_mesh_gray_card,
    all_reduce_ring_card, all_reduce_ring_gray_card, all_reduce_line_card,
    all_reduce_reduce_broadcast_card, all_reduce_reduce_broadcast_ring_card;
extern const AlgorithmCard all_gather_hypercube_card, all_gather_mesh_card,
    all_gather_mesh_open_card, all_gather_mesh_gray_card, all_gather_ring_card,
    all_gather_ring_gray_card, all_gather_line_card;
extern const AlgorithmCard reduce_scatter_hypercube_card, reduce_scatter_mesh_card,
    reduce_scatter_mesh_open_card, reduce_scatter_mesh_gray_card, reduce_scatter_ring_card,
    reduce_scatter_ring_gray_card, reduce_scatter_line_card;
extern const AlgorithmCard scan_hypercube_card, scan_mesh_card, scan_mesh_open_card, scan_ring_card;
extern const AlgorithmCard exscan_hypercube_card, exscan_mesh_card, exscan_mesh_open_card,
    exscan_ring_card;
extern const AlgorithmCard scatter_hypercube_card, scatter_mesh_card, scatter_mesh_open_card,
    scatter_ring_card, scatter_line_card;
extern const AlgorithmCard gather_hypercube_card, gather_mesh_card, gather_mesh_open_card,
    gather_ring_card, gather_line_card;
extern const AlgorithmCard all_to_all_pairwise_card, all_to_all_dimension_exchange_card,
    all_to_all_mesh_card, all_to_all_mesh_open_card, all_to_all_ring_card, all_to_all_line_card;
extern const AlgorithmCard circular_shift_e_cube_card, circular_shift_hypercube_card,
    circular_shift_mesh_card, circular_shift_mesh_open_card, circular_shift_ring_card,
    circular_shift_line_card, circular_shift_gray_card;
extern const AlgorithmCard barrier_hypercube_card, barrier_dissemination_card, barrier_mesh_card,
    barrier_mesh_open_card, barrier_mesh_gray_card, barrier_ring_card, barrier_line_card;
extern const AlgorithmCard all_gatherv_hypercube_card, all_gatherv_mesh_card,
    all_gatherv_mesh_open_card, all_gatherv_ring_card, all_gatherv_line_card;
extern const AlgorithmCard gatherv_hypercube_card, gatherv_mesh_card, gatherv_mesh_open_card,
    gatherv_ring_card, gatherv_line_card;
extern const AlgorithmCard scatterv_hypercube_card, scatterv_mesh_card, scatterv_mesh_open_card,
    scatterv_ring_card, scatterv_line_card;
extern const AlgorithmCard all_to_allv_pairwise_card, all_to_allv_dimension_exchange_card,
    all_to_allv_mesh_card, all_to_allv_mesh_open_card, all_to_allv_ring_card, all_to_allv_line_card;
extern const AlgorithmCard reduce_scatterv_hypercube_card, reduce_scatterv_mesh_card,
    reduce_scatterv_mesh_open_card, reduce_scatterv_ring_card, reduce_scatterv_line_card;

namespace {

constexpr std::array kRegistry{
    // broadcast
    &broadcast_hypercube_card,
    &broadcast_esbt_card,
    &broadcast_two_phase_card,
    &broadcast_mesh_card,
    &broadcast_mesh_open_card,
    &broadcast_mesh_gray_card,
    &broadcast_ring_card,
    &broadcast_ring_gray_card,
    &broadcast_line_card,
    // reduce
    &reduce_hypercube_card,
    &reduce_two_phase_card,
    &reduce_mesh_card,
    &reduce_mesh_open_card,
    &reduce_mesh_gray_card,
    &reduce_ring_card,
    &reduce_ring_gray_card,
    &reduce_line_card,
    // all_reduce
    &all_reduce_hypercube_card,
    &all_reduce_two_phase_card,
    &all_reduce_mesh_card,
    &all_reduce_mesh_open_card,
    &all_reduce_mesh_gray_card,
    &all_reduce_ring_card,
    &all_reduce_ring_gray_card,
    &all_reduce_line_card,
    &all_reduce_reduce_broadcast_card,
    &all_reduce_reduce_broadcast_ring_card,
    // all_gather
    &all_gather_hypercube_card,
    &all_gather_mesh_card,
    &all_gather_mesh_open_card,
    &all_gather_mesh_gray_card,
    &all_gather_ring_card,
    &all_gather_ring_gray_card,
    &all_gather_line_card,
    // reduce_scatter
    &reduce_scatter_hypercube_card,
    &reduce_scatter_mesh_card,
    &reduce_scatter_mesh_open_card,
    &reduce_scatter_mesh_gray_card,
    &reduce_scatter_ring_card,
    &reduce_scatter_ring_gray_card,
    &reduce_scatter_line_card,
    // scan (the ring's pipeline first: where it ties, p = 2, one message beats an exchange, and
    // back-to-back calls pipeline)
    &scan_ring_card,
    &scan_hypercube_card,
    &scan_mesh_card,
    &scan_mesh_open_card,
    // exscan
    &exscan_ring_card,
    &exscan_hypercube_card,
    &exscan_mesh_card,
    &exscan_mesh_open_card,
    // scatter
    &scatter_hypercube_card,
    &scatter_mesh_card,
    &scatter_mesh_open_card,
    &scatter_ring_card,
    &scatter_line_card,
    // gather
    &gather_hypercube_card,
    &gather_mesh_card,
    &gather_mesh_open_card,
    &gather_ring_card,
    &gather_line_card,
    // all_to_all
    &all_to_all_pairwise_card,
    &all_to_all_dimension_exchange_card,
    &all_to_all_mesh_card,
    &all_to_all_mesh_open_card,
    &all_to_all_ring_card,
    &all_to_all_line_card,
    // circular_shift
    &circular_shift_e_cube_card,
    &circular_shift_hypercube_card,
    &circular_shift_mesh_card,
    &circular_shift_mesh_open_card,
    &circular_shift_gray_card,  // before the ring's: a tie goes to the book's hypercube q-shift
    &circular_shift_ring_card,
    &circular_shift_line_card,
    // barrier
    &barrier_hypercube_card,
    &barrier_dissemination_card,
    &barrier_mesh_card,
    &barrier_mesh_open_card,
    &barrier_mesh_gray_card,
    &barrier_ring_card,
    &barrier_line_card,
    // all_gatherv
    &all_gatherv_hypercube_card,
    &all_gatherv_mesh_card,
    &all_gatherv_mesh_open_card,
    &all_gatherv_ring_card,
    &all_gatherv_line_card,
    // gatherv
    &gatherv_hypercube_card,
    &gatherv_mesh_card,
    &gatherv_mesh_open_card,
    &gatherv_ring_card,
    &gatherv_line_card,
    // scatterv
    &scatterv_hypercube_card,
    &scatterv_mesh_card,
    &scatterv_mesh_open_card,
    &scatterv_ring_card,
    &scatterv_line_card,
    // all_to_allv
    &all_to_allv_pairwise_card,
    &all_to_allv_dimension_exchange_card,
    &all_to_allv_mesh_card,
    &all_to_allv_mesh_open_card,
    &all_to_allv_ring_card,
    &all_to_allv_line_card,
    // reduce_scatterv
    &reduce_scatterv_hypercube_card,
    &reduce_scatterv_mesh_card,
    &reduce_scatterv_mesh_open_card,
    &reduce_scatterv_ring_card,
    &reduce_scatterv_line_card,
};

}  // namespace

std::span<const AlgorithmCard* const> registry() noexcept { return kRegistry; }

std::span<const AlgorithmCard* const> cards_of(Collective op) noexcept {
  std::size_t first = 0;
  while (first < kRegistry.size() && kRegistry[first]->text.op != op) ++first;
  std::size_t last = first;
  while (last < kRegistry.size() && kRegistry[last]->text.op == op) ++last;
  return std::span(kRegistry).subspan(first, last - first);
}

}  // namespace hypercomm::detail
