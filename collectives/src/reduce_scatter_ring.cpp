// All-to-all reduction (reduce-scatter) on a ring: Grama et al., Algorithm 4.5, over a Ring.
//
//   commutative:     T = (ts + tw*m) * (p - 1)                 (m = bytes per block)
//   non-commutative: T = ts*(p - 1) + tw*m*(2p - 3)            (p >= 2; see below)
//
// Restrictions: neighbours only (send to the left, receive from the right); any p.
//
// Step i (1..p-1): j := my_id + i; temp := msg[j] op recv; send temp to the left; receive recv
// from the right. Finally result := msg[my_id] op recv. Block j's partial starts at VP j-1 and
// travels left, every VP prepending its own block (own value as the left operand), so VP j
// receives x[j-1]...: p = 4, block 2 goes 1 -> 0 -> 3 -> 2:
//
//   VP 1: x1    VP 0: x0 x1    VP 3: x3 x0 x1    VP 2: x2 x3 x0 x1
//
// That fold wraps around the ring (3 before 0), which a non-commutative operator does not allow.
// The order-preserving variant (used when !op.commutative) keeps two partials per block j: "low"
// = x0 .. x(j-1), complete once it leaves VP 0, and "high" = x(i) .. x(p-1), started by VP p-1.
// A message that has crossed the wrap carries both ([low | high], 2m bytes); the owner combines
// result := (low op x[j]) op high. p = 4, block 2:
//
//   VP 1: low = x1   VP 0: low = x0 x1   VP 3: [x0 x1 | x3]   VP 2: (x0 x1 x2) x3
//
// VP p-1 sends two partials at steps 2..p-1, which makes the bandwidth term tw*m*(1 + 2(p-2)).
// Blocks 0 (no low part) and p-1 (no high part) always travel as one partial.
//
// When VPs outnumber cores, the commutative form on a ring of the whole group in id order, with
// an operator that cannot throw, may instead meet in shared memory (meet_reduce_scatter_ring, in
// all_reduce_ring.cpp beside the all-reduce's meeting, whose first half this is): each of the
// p - 1 steps would cost every VP a switch, the meeting about one. Block j folded as above, bit
// for bit: in all up to 4 KiB of equal blocks by the last VP to arrive, else by each VP its own
// block into its out; the steps on the clocks and links.

#include <algorithm>
#include <utility>
#include <vector>

#include "card.hpp"
#include "symmetric.hpp"
#include "symmetric_util.hpp"

namespace hypercomm::detail {

void reduce_scatter_ring_group(const Comm& c, ConstBytes in, Bytes out, const Blocks& parts,
                               const Ring& g, const Reducer& op) {
  const int n = g.size;
  const int my_rank = g.rank_of(c.id());
  // Member k's part (its VP's place among the members in id order: g.slot).
  const auto size_of = [&](int k) { return parts.size(g.slot(k)); };
  const auto msg = [&](int k) { return parts.block(in, g.slot(k)); };
  if (n == 1) {
    copy_bytes(out, msg(0));
    return;
  }
  const int left = g.left(my_rank);
  const int right = g.right(my_rank);
  const bool split = !op.commutative;
  // How many partials member `sender` sends for part j: two once block j's path has wrapped
  // (sender above j) and it has a low part (j > 0).
  const auto partials = [split](int sender, int j) { return split && j > 0 && j < sender ? 2 : 1; };

  std::size_t largest = 0;
  for (int k = 0; k < n; ++k) largest = std::max(largest, size_of(k));
  const std::size_t room = split ? 2 * largest : largest;
  Buffer first_buffer(room);
  Buffer second_buffer(room);
  Bytes recv = first_buffer;    // the partial received in the previous step, built on in place
  Bytes spare = second_buffer;  // where the next one is received

  const int from = (my_rank + 1) % n;  // the right neighbour's rank
  for (int i = 1; i < n; ++i) {
    const int j = (my_rank + i) % n;
    const std::size_t m = size_of(j);
    const int sent = partials(my_rank, j);
    ConstBytes temp;
    if (i == 1) {
      temp = msg(j);  // the first sender of block j sends its own block as it is
    } else if (sent == 1) {
      op(recv.data(), msg(j).data(), recv.data(), m);  // prepend mine: temp := msg[j] op recv
      temp = recv.first(m);
    } else {
      // [low | high]: low passes through; mine starts (VP n-1) or is prepended to high.
      const Bytes high = recv.subspan(m, m);
      if (partials(from, j) == 1) {
        copy_bytes(high, msg(j));
      } else {
        op(high.data(), msg(j).data(), high.data(), m);
      }
      temp = recv.first(2 * m);
    }
    const int next = (my_rank + i + 1) % n;  // the part the right neighbour sends now
    const Bytes incoming =
        spare.first(static_cast<std::size_t>(partials(from, next)) * size_of(next));
    c.sendrecv_to_combine(left, temp, right, incoming);
    std::swap(recv, spare);
  }

  // recv holds my part's partial from the right neighbour: combine with msg[my_rank].
  const std::size_t m = size_of(my_rank);
  const std::byte* mine = msg(my_rank).data();  // may be out itself: each combine is in place
  if (!split || my_rank == 0) {
    op(out.data(), mine, recv.data(), m);  // x0 op high (or the book's msg[my_id] + recv)
  } else if (my_rank == n - 1) {
    op(out.data(), recv.data(), mine, m);  // low op x(n-1)
  } else {
    op(recv.data(), recv.data(), mine, m);            // low op x
    op(out.data(), recv.data(), recv.data() + m, m);  // (low op x) op high
  }
}

void reduce_scatter_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                         const Reducer& op) {
  if (meet_reduce_scatter_ring(c, in, out, blocks, op, Ring::all(c.p()))) return;
  reduce_scatter_ring_group(c, in, out, blocks, Ring::all(c.p()), op);
}

double all_gatherv_ring_cost(const CostQuery& q);  // the dual's: all_gather_ring.cpp

namespace {
// Routed over a mesh or hypercube the hop term is the longest chain of routed messages (the
// all-gather's, reversed); the non-commutative form's uneven partials have no closed form there.
double reduce_scatter_ring_cost(const CostQuery& q) {
  if (q.ring_th() == q.th()) return q.ring_reduce_scatter(q.p(), q.m(), q.th());
  if (!q.shape.commutative) return kNoClosedForm;
  return (q.p() - 1) * q.w(q.m()) + q.th() * q.ring_chain_hops();
}
// Selection: the all-gather's; textbook_time_v: equal counts as reduce_scatter, else the
// all-gatherv's closed form where commutative (the largest block's partial going round).
double reduce_scatterv_ring_cost(const CostQuery& q) {
  if (q.selection) return all_gatherv_ring_cost(q);
  if (q.equal_counts()) return reduce_scatter_ring_cost(q.as_regular());
  return q.shape.commutative ? all_gatherv_ring_cost(q) : kNoClosedForm;
}
void run(const Comm& c, const Args& a) { reduce_scatter_ring(c, a.in, a.out, *a.blocks, *a.op); }
}  // namespace

extern const AlgorithmCard reduce_scatter_ring_card{
    {Collective::reduce_scatter, Algo::ring,
     "Grama et al., Algorithm 4.5 (non-commutative: two partials)",
     "(ts + tw*m + th)*(p-1); non-commutative: (ts + th)*(p-1) + tw*m*(2p-3); routed over a "
     "mesh or hypercube: (ts + tw*m)*(p-1) + th*(H - min h_i), h_i = hops(i, i+1 mod p), H their "
     "sum (non-commutative with th > 0 there: no closed form)",
     kRingNeeds, "(ts + tw m)(p - 1)"},
    needs_ring,
    reduce_scatter_ring_cost,
    run};

extern const AlgorithmCard reduce_scatterv_ring_card{
    {Collective::reduce_scatterv, Algo::ring,
     "Grama et al., Algorithm 4.5 with uneven blocks (non-commutative: two partials)",
     "uneven, commutative: (ts + tw*b_max + th)*(p-1), the largest block's partial going "
     "round (no step is longer); non-commutative, or routed over a mesh or hypercube with th "
     "> 0: no closed form",
     kRingNeeds, "(ts + tw m)(p - 1)"},
    needs_ring,
    reduce_scatterv_ring_cost,
    run};

// The same on the ring of a hypercube in reflected Gray-code order (Grama et al. section 2.7):
// every message one link; the partials fold in ring order, so a commutative operator only.
extern const AlgorithmCard reduce_scatter_ring_gray_card{
    {Collective::reduce_scatter, Algo::ring,
     "Grama et al., Algorithm 4.5 on the ring embedded in the hypercube by the reflected Gray "
     "code (section 2.7)",
     "(ts + tw*m + th)*(p-1)", kGrayRingCommutativeNeeds, "(ts + tw m)(p - 1)", "Gray-code ring"},
    needs_gray_ring,
    [](const CostQuery& q) { return reduce_scatter_ring_cost(on_gray_ring(q)); },
    [](const Comm& c, const Args& a) {
      reduce_scatter_ring_group(c, a.in, a.out, *a.blocks, Ring::gray_code(c.p()), *a.op);
    },
    nullptr,
    false};

}  // namespace hypercomm::detail
