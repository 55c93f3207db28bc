// Two-way ring broadcast over the members of a Ring (the whole machine, a mesh row or a mesh
// column): CS 584 lecture notes, "ring broadcast: send both ways from the source".
//
//   T = (ts + tw*m) * ceil(n/2)      (n = g.size >= 2 members, m = buf.size() bytes)
//     n even: (ts + tw*m) * n/2;  n odd: (ts + tw*m) * (n+1)/2;  n = 1: 0
//
// The root first sends up the longer arm (a = floor(n/2) members: relative ranks 1 .. a), then
// down the other (b = floor((n-1)/2) members: n-1 .. n-b); one send at a time, so the down arm
// starts one step late and its far end receives at step b + 1. T = max(a, b + 1) steps, which
// is the book's p/2 for even p and one more than floor(p/2) for odd p.
// Restrictions: messages go between ring neighbours of g only. For n = 8, root rank 0:
//
//   step 1: 0 -> 1          step 2: 1 -> 2, 0 -> 7
//   step 3: 2 -> 3, 7 -> 6  step 4: 3 -> 4, 6 -> 5
//
// When VPs outnumber cores, a broadcast on a ring of the whole group in id order may instead be
// a meeting in shared memory (Port::meet_rooted, as the hypercube's): each of the ceil(n/2)
// steps would cost the VPs a switch, the meeting about one. The steps above play on the model
// clocks and the links (ring_out_to, ring_out_from: ranks relative to the root round the ring).
#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

void broadcast_ring(const Comm& c, Bytes buf, int root, const Ring& g) {
  const int n = g.size;
  if (whole_group_ring(c, g) && c.is_call(Collective::broadcast) &&
      c.meet_rooted(ring_out_rounds(n, buf.size(), root), Port::Flow::from_root, buf, buf))
    return;
  broadcast_arms(c, buf, root, g, RingArms::balanced(n));
}

// The broadcast along any two arms (a line's included: broadcast_line.cpp), the longer first.
void broadcast_arms(const Comm& c, Bytes buf, int root, const Ring& g, const RingArms& arms) {
  const int n = g.size;
  const int k = g.rank_of(c.id());
  const int v = relative_rank(k, g.rank_of(root), n);  // my rank relative to the root
  if (v == 0) {
    const bool up_first = arms.up >= arms.down;
    if (up_first && arms.up > 0) c.send(g.right(k), buf);
    if (arms.down > 0) c.send(g.left(k), buf);
    if (!up_first && arms.up > 0) c.send(g.right(k), buf);
  } else if (arms.on_up(v)) {
    c.recv(g.left(k), buf);
    if (v < arms.up) c.send(g.right(k), buf);
  } else {
    c.recv(g.right(k), buf);
    if (v > arms.down_end()) c.send(g.left(k), buf);
  }
}

namespace {
double broadcast_ring_cost(const CostQuery& q) {
  return q.ring_broadcast(q.p(), q.m(), q.ring_th(), q.ring_arms());
}
}  // namespace

extern const AlgorithmCard broadcast_ring_card{
    {Collective::broadcast, Algo::ring, "CS 584 lecture: two-way ring broadcast",
     "(ts + tw*m)*ceil(p/2) + th*floor(p/2)", kRingNeeds, "(ts + tw m) log p"},
    needs_ring,
    broadcast_ring_cost,
    [](const Comm& c, const Args& a) { broadcast_ring(c, a.out, a.root, Ring::all(c.p())); },
    ring_counts_hops,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/broadcast_tree_work};

// The same on the ring of a hypercube in reflected Gray-code order (Grama et al. section 2.7):
// every message crosses one link, so th counts on each.
extern const AlgorithmCard broadcast_ring_gray_card{
    {Collective::broadcast, Algo::ring,
     "CS 584 lecture: two-way ring broadcast, on the ring embedded in the hypercube by the "
     "reflected Gray code (Grama et al. section 2.7)",
     "(ts + tw*m)*ceil(p/2) + th*floor(p/2)", kGrayRingNeeds, "(ts + tw m) log p",
     "Gray-code ring"},
    needs_gray_ring,
    [](const CostQuery& q) { return broadcast_ring_cost(on_gray_ring(q)); },
    [](const Comm& c, const Args& a) { broadcast_ring(c, a.out, a.root, Ring::gray_code(c.p())); },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/broadcast_tree_work};

}  // namespace hypercomm::detail
