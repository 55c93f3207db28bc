// All-reduce on a ring as the book first builds it (Grama et al., section 4.3: "a simple method
// ... is to perform an all-to-one reduction followed by a one-to-all broadcast"), with the ring's
// own rooted algorithms: the two-way ring reduction into rank 0 (reduce_ring.cpp), then the
// two-way ring broadcast from it (broadcast_ring.cpp).
//
//   T = (ts + tw*m + th)*floor(p/2) + (ts + tw*m)*ceil(p/2) + th*floor(p/2)
//
// p steps of the whole vector, where the ring all-reduce (all_reduce_ring.cpp) takes 2(p - 1)
// steps of m/p bytes: below about ts/tw bytes it is the faster (p = 7, 8 B: 7 steps against 12),
// and it sends 2(p - 1) messages in all where the pair sends 2p(p - 1) (a split group of 585
// members: 1168 against 683,280). Rooted at rank 0, the arms never wrap past rank p-1 to 0, so a
// non-commutative operator gets the left fold in id order: x0 . (x1 . ... . xa) . (x(a+1) ...
// x(p-1)), a = floor(p/2).
//
// Restrictions: any p; VP i and i+1 neighbours (a ring, a 1 x n torus) or Links::routed.
//
// When VPs outnumber cores a vector of up to kMeetingBytes may instead be reduced in one meeting
// in shared memory (Port::meet): the last VP to arrive folds every input as the arms fold them
// (fold_ring_arms, bit for bit). A larger one, with an operator that cannot throw, meets with the
// work shared (Comm::meet_in_parts): each VP folds its share of the elements of every input as
// the arms fold them and copies it into every VP's out. Either way the two phases' steps play on
// the model clocks and the links (ring_in_to, then ring_out_to: ranks round the ring from rank 0).
#include <vector>

#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"
#include "shares.hpp"

namespace hypercomm::detail {

namespace {

// The reduction's rounds, then the broadcast's, as one pattern (each ring_arm_rounds(n) long).
int reduce_broadcast_to(int v, int round, int n) noexcept {
  const int half = ring_arm_rounds(n);
  return round < half ? ring_in_to(v, round, n) : ring_out_to(v, round - half, n);
}
int reduce_broadcast_from(int v, int round, int n) noexcept {
  const int half = ring_arm_rounds(n);
  return round < half ? ring_in_from(v, round, n) : ring_out_from(v, round - half, n);
}

void all_reduce_reduce_broadcast_ring(const Comm& c, ConstBytes in, Bytes out, const Reducer& op) {
  const int p = c.p();
  if (p >= 2 && c.is_call(Collective::all_reduce) && c.port.may_meet()) {
    Port::Rounds rounds{2 * ring_arm_rounds(p), in.size(), reduce_broadcast_to,
                        reduce_broadcast_from};
    rounds.ring_root = true;  // root 0: ranks round the ring are the ids
    const ArmsFold fold{&op, 0};
    if (in.size() <= kMeetingBytes) {
      if (c.meet(rounds, in.data(), fold_ring_arms, &fold, out)) return;
    } else if (op.never_throws) {  // a share must not throw (Port::meet's part)
      const ReduceMember member{in.data(), out.data()};
      std::vector<const void*, ScratchAllocator<const void*>> at(static_cast<std::size_t>(p));
      Buffer scratch(2 * tree_chunk_bytes(op.elem_size));
      const RingReduceShare share{fold, in.size(), at, scratch, /*to_every_out=*/true};
      if (c.meet_in_parts(rounds, &member, ring_reduce_share, &share)) return;
    }
  }
  // in may be out: the reduction writes only the root's out, after reading its in, and the
  // broadcast writes the others' after they sent their in.
  reduce_ring(c, in, out, op, 0, Ring::all(p));
  broadcast_ring(c, out, 0, Ring::all(p));
}

double all_reduce_reduce_broadcast_ring_cost(const CostQuery& q) {
  const int p = q.p();
  return q.ring_reduce_steps(p, 0) * (q.w(q.m()) + q.ring_th() + q.landing_tc() * q.m()) +
         q.ring_broadcast(p, q.m(), q.ring_th(), q.ring_arms());
}

}  // namespace

extern const AlgorithmCard all_reduce_reduce_broadcast_ring_card{
    {Collective::all_reduce, Algo::reduce_broadcast,
     "Grama et al., section 4.3: all-to-one reduction, then one-to-all broadcast, on a ring "
     "(CS 584 lecture: the two-way ring broadcast reversed, then the two-way ring broadcast)",
     "(ts + tw*m + th)*floor(p/2) + (ts + tw*m)*ceil(p/2) + th*floor(p/2)", kRingNeeds,
     "2 (ts + tw m) log p", "ring"},
    needs_ring,
    all_reduce_reduce_broadcast_ring_cost,
    [](const Comm& c, const Args& a) { all_reduce_reduce_broadcast_ring(c, a.in, a.out, *a.op); },
    ring_counts_hops};

}  // namespace hypercomm::detail
