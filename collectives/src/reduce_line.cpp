// All-to-one reduction on a linear array, neighbours only: the line broadcast reversed. Each
// arm's far end sends its input toward the root; every arm member folds in its own and passes
// the partial on; the root folds the down arm's partial, its own input and the up arm's, in id
// order (so a non-commutative operator is exact).
//
//   T = max(r, p-1-r) * (ts + tw*m + th)        (root r)
//
// Restrictions: VP i and i+1 neighbours for i < p-1 (or routed links).
#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

namespace {
double reduce_line_cost(const CostQuery& q) { return q.line_reduce(q.root(), q.m()); }
}  // namespace

extern const AlgorithmCard reduce_line_card{
    {Collective::reduce, Algo::ring,
     "Grama et al., section 4.1.1 on a linear array: the broadcast reversed",
     "max(r, p-1-r)*(ts + tw*m + th) for root r", kLineNeeds, "(ts + tw m) log p (routed)",
     "linear array"},
    needs_line,
    reduce_line_cost,
    [](const Comm& c, const Args& a) {
      reduce_arms(c, a.in, a.out, *a.op, a.root, Ring::all(c.p()), RingArms::line(c.p(), a.root));
    },
    line_counts_hops,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/reduce_tree_work};

}  // namespace hypercomm::detail
