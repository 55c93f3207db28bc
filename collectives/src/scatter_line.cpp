// Scatter on a linear array, neighbours only (Grama et al., section 4.4 on a linear array):
// the root sends each arm all its blocks in one message, the up arm (r+1 .. p-1) first; every
// VP keeps its own block and passes the rest on outward.
//
//   a = p-1-r, b = r (root r), m = one block:
//   T = max(a*(ts + th) + tw*m*a(a+1)/2, [a > 0: ts + tw*m*a] + b*(ts + th) + tw*m*b(b+1)/2)
//
// Restrictions: VP i and i+1 neighbours for i < p-1 (or routed links).
#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

namespace {
double scatter_line_cost(const CostQuery& q) { return q.line_scatter(q.root(), q.m()); }
}  // namespace

extern const AlgorithmCard scatter_line_card{
    {Collective::scatter, Algo::ring,
     "Grama et al., section 4.4 on a linear array: one message per arm, each VP keeps its block",
     "a = p-1-r, b = r: max(a*(ts + th) + tw*m*a(a+1)/2, (a > 0: ts + tw*m*a) + b*(ts + th) + "
     "tw*m*b(b+1)/2)",
     kLineNeeds, "ts log p + tw m (p - 1) (routed)", "linear array"},
    needs_line,
    scatter_line_cost,
    [](const Comm& c, const Args& a) { scatter_ring(c, a.in, a.out, *a.blocks, a.root, true); },
    line_counts_hops};

// Uneven blocks: the root's message to each arm carries all its blocks, each member keeps its own.
extern const AlgorithmCard scatterv_line_card{
    {Collective::scatterv, Algo::ring,
     "Grama et al., section 4.4 on a linear array with uneven blocks: one message per arm",
     "up arm: the sum over its members u of (ts + tw*B(u..p-1) + th); down arm: the same from "
     "the root's other side, after the up arm's first message (one port); the longer; equal "
     "blocks of m: as scatter / ring (linear array)",
     kLineNeeds, "ts log p + tw m (p - 1) (routed)", "linear array"},
    needs_line,
    [](const CostQuery& q) { return q.line_scatterv(q.root()); },
    [](const Comm& c, const Args& a) { scatter_ring(c, a.in, a.out, *a.blocks, a.root, true); }};

}  // namespace hypercomm::detail
