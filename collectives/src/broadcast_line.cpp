// One-to-all broadcast on a linear array, neighbours only (Grama et al., section 4.1.1: the
// linear array without the ring's wraparound): the root sends along both arms of the line, the
// longer first, every VP passing the message on outward.
//
//   T = max(L*(ts + tw*m + th), (S+1)*(ts + tw*m) + S*th)   (L, S: the longer and shorter arm,
//        p-1-r and r for root r; T = L*(ts + tw*m + th) when S = 0)
//
// The book's recursive doubling on a linear array sends over log p distances of p/2, p/4, ...,
// which needs routed links; this form is the one for neighbour links only.
// Restrictions: VP i and i+1 neighbours for i < p-1 (or routed links). For p = 6, root 2:
//
//   step 1: 2 -> 3          step 2: 3 -> 4, 2 -> 1
//   step 3: 4 -> 5, 1 -> 0
#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

namespace {
double broadcast_line_cost(const CostQuery& q) { return q.line_broadcast(q.root(), q.m()); }
}  // namespace

extern const AlgorithmCard broadcast_line_card{
    {Collective::broadcast, Algo::ring, "Grama et al., section 4.1.1 on a linear array: both arms",
     "L = max(r, p-1-r), S = min(r, p-1-r) for root r: max(L*(ts + tw*m + th), (S+1)*(ts + "
     "tw*m) + S*th) (S = 0: L*(ts + tw*m + th))",
     kLineNeeds, "(ts + tw m) log p (recursive doubling, routed)", "linear array"},
    needs_line,
    broadcast_line_cost,
    [](const Comm& c, const Args& a) {
      broadcast_arms(c, a.out, a.root, Ring::all(c.p()), RingArms::line(c.p(), a.root));
    },
    line_counts_hops,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/broadcast_tree_work};

}  // namespace hypercomm::detail
