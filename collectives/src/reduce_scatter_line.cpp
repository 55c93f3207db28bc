// Reduce-scatter on a linear array, neighbours only: the line reduction of the whole vector (p
// blocks) into the middle VP c = floor((p-1)/2), then the line scatter of its blocks (the dual
// of all_gather_line.cpp).
//
//   T = R_line(c, p*m) + S_line(c, m)        (m = one block; see reduce and scatter, linear
//                                             array)
//
// Restrictions: VP i and i+1 neighbours for i < p-1 (or routed links).
#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

namespace {

void reduce_scatter_line(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                         const Reducer& op) {
  const int p = c.p(), middle = (p - 1) / 2;
  Buffer whole(c.id() == middle ? in.size() : 0);
  reduce_arms(c, in, whole, op, middle, Ring::all(p), RingArms::line(p, middle));
  ring_scatter_parts(c, Ring::all(p), middle, blocks, whole, out, RingArms::line(p, middle));
}

double reduce_scatter_line_cost(const CostQuery& q) {
  const int middle = (q.p() - 1) / 2;
  return q.line_reduce(middle, q.m() * q.p()) + q.line_scatter(middle, q.m());
}

// Uneven blocks: the reduction of the whole vector into the middle, then its scatter.
double reduce_scatterv_line_cost(const CostQuery& q) {
  const int middle = (q.p() - 1) / 2;
  return q.line_reduce(middle, q.all_bytes()) + q.line_scatterv(middle);
}

}  // namespace

extern const AlgorithmCard reduce_scatter_line_card{
    {Collective::reduce_scatter, Algo::ring,
     "Grama et al., section 4.2 on a linear array: reduce into the middle VP, then scatter",
     "c = floor((p-1)/2): the line reduction of p*m into c plus the line scatter of blocks of m "
     "from c (see reduce and scatter / ring (linear array))",
     kLineNeeds, "(ts + tw m)(p - 1) (ring)", "linear array"},
    needs_line,
    reduce_scatter_line_cost,
    [](const Comm& c, const Args& a) { reduce_scatter_line(c, a.in, a.out, *a.blocks, *a.op); },
    line_counts_hops};

extern const AlgorithmCard reduce_scatterv_line_card{
    {Collective::reduce_scatterv, Algo::ring,
     "Grama et al., section 4.2 on a linear array with uneven blocks: reduce into the middle VP, "
     "then scatter",
     "c = floor((p-1)/2): the line reduction of the whole vector into c plus scatterv / ring "
     "(linear array) from c",
     kLineNeeds, "(ts + tw m)(p - 1) (ring)", "linear array"},
    needs_line,
    reduce_scatterv_line_cost,
    [](const Comm& c, const Args& a) { reduce_scatter_line(c, a.in, a.out, *a.blocks, *a.op); }};

}  // namespace hypercomm::detail
