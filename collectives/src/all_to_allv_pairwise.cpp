// All-to-all personalized with blocks of any sizes (all_to_allv): Grama et al., Algorithm 4.10's
// pairwise exchange, each pair swapping the blocks they hold for each other.
//
// Step i is a sendrecv: VP v's clock becomes max(c_v + ts + tw*out_v(i), arrival of in_v(i)), so
// T is the longest path through the p - 1 steps, with no closed form for uneven counts
// (textbook_bounds_v bounds it by the equal-count forms); it also lies between the largest sum
// of one VP's sends and the sum over the steps of their largest message:
//
//   max_v sum_i (ts + tw*out_v(i))  <=  T  <=  sum_i max_v (ts + tw*out_v(i) + th*hops)
//
// and with equal blocks of m it is (ts + tw*m)*(p - 1) (+ th*(p/2)*log p on a hypercube).
//
// Restrictions: Links::routed unless p <= 2 (step i's partner is not a neighbour). On p = 2^d the
// partner of step i is my_id XOR i (E-cube order: no two pairs of a step share a hypercube link
// when routed over a hypercube); otherwise step i sends to my_id + i and receives from my_id - i
// (mod p). Send and receive sizes differ: the receiver's recv_counts say what it expects, and a
// sender whose count disagrees makes the receiver throw SizeMismatch naming both counts
// (irregular.cpp), never deliver a truncated block.
#include "card.hpp"
#include "exchange.hpp"

namespace hypercomm::detail {

void all_to_allv_pairwise(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                          const Blocks& received) {
  const int p = c.p();
  const int my_id = c.id();
  copy_bytes(received.block(out, my_id), sent.block(in, my_id));  // M[my_id, my_id] stays here
  const bool cube = is_power_of_two(p);
  for (int i = 1; i < p; ++i) {
    const int dest = cube ? my_id ^ i : (my_id + i) % p;
    const int src = cube ? my_id ^ i : (my_id - i + p) % p;
    // Send M[my_id, dest]; receive M[src, my_id] straight into its place in out.
    c.sendrecv(dest, sent.block(in, dest), src, received.block(out, src));
  }
}

namespace {
// Selection: one block of at most b a step (each step's congestion where p = 2^d).
// textbook_time_v: equal blocks of m, (p-1)*(ts + tw*m) plus, on a hypercube, th*(p/2)*log p
// (step i's routes have popcount(i) links); uneven, or th > 0 on routes whose lengths differ
// within a step: no closed form.
double all_to_allv_pairwise_cost(const CostQuery& q) {
  const int p = q.p();
  if (q.selection) {
    double cost = 0;
    for (int i = 1; i < p; ++i) cost += q.w(q.cap(1) * q.congestion(i));
    return cost;
  }
  if (!q.equal_counts()) return kNoClosedForm;
  const double block = q.as_regular().m() / p;
  double hops = 0;
  if (q.th() != 0) {
    if (q.t.kind() == Topology::Kind::hypercube)
      hops = (p / 2) * q.d();
    else if (p == 2)
      hops = q.t.distance(0, 1);
    else
      return kNoClosedForm;
  }
  return (p - 1) * q.w(block) + q.th() * hops;
}
const char* all_to_allv_pairwise_restriction(const Topology& t, Links links) noexcept {
  if (links == Links::routed || t.size() <= 2 || (t.size() == 3 && t.ring_adjacent()))
    return nullptr;
  return "its pairwise exchange sends to every other rank, which needs Links::routed";
}
}  // namespace

extern const AlgorithmCard all_to_allv_pairwise_card{
    {Collective::all_to_allv, Algo::hypercube,
     "Grama et al., Algorithm 4.10 with per-pair counts: step i swaps the blocks with id XOR i "
     "(2^d ranks; else sends to id + i, receives from id - i)",
     "uneven: no closed form (each step waits for the partner's clock); equal blocks of m: "
     "(ts + tw*m)*(p-1) + th*(p/2)*log p on a hypercube (th > 0 elsewhere: no closed form)",
     "Links::routed (p > 2); any p", "(ts + tw m)(p - 1)"},
    all_to_allv_pairwise_restriction,
    all_to_allv_pairwise_cost,
    [](const Comm& c, const Args& a) {
      all_to_allv_pairwise(c, a.in, *a.blocks, a.out, *a.received);
    }};

}  // namespace hypercomm::detail
