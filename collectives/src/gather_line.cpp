// Gather on a linear array, neighbours only: the line scatter reversed. Each arm's far end
// sends its block toward the root; every VP adds its own block and passes the lot on.
//
//   T = max over the arms x = p-1-r, r of x*(ts + th) + tw*m*x(x+1)/2   (root r, m = one block)
//
// Restrictions: VP i and i+1 neighbours for i < p-1 (or routed links).
#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

namespace {
double gather_line_cost(const CostQuery& q) { return q.line_gather(q.root(), q.m()); }
}  // namespace

extern const AlgorithmCard gather_line_card{
    {Collective::gather, Algo::ring, "Grama et al., section 4.4 on a linear array: both arms",
     "max over x = p-1-r, r of x*(ts + th) + tw*m*x(x+1)/2 for root r", kLineNeeds,
     "ts log p + tw m (p - 1) (routed)", "linear array"},
    needs_line,
    gather_line_cost,
    [](const Comm& c, const Args& a) { gather_ring(c, a.in, a.out, *a.blocks, a.root, true); },
    line_counts_hops};

// Uneven blocks: each arm's message carries the blocks from it to the arm's far end.
extern const AlgorithmCard gatherv_line_card{
    {Collective::gatherv, Algo::ring,
     "Grama et al., section 4.4 on a linear array with uneven blocks: both arms",
     "the longer of the two arms, each the sum over its members v from the far end in of (ts + "
     "tw*B(v..far end) + th); equal blocks of m: as gather / ring (linear array)",
     kLineNeeds, "ts log p + tw m (p - 1) (routed)", "linear array"},
    needs_line,
    [](const CostQuery& q) { return q.line_gatherv(q.root()); },
    [](const Comm& c, const Args& a) { gather_ring(c, a.in, a.out, *a.blocks, a.root, true); }};

}  // namespace hypercomm::detail
