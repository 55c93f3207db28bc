// One-to-all broadcast on a hypercube: Grama et al., Algorithms 4.1 and 4.2.
//
//   T = (ts + tw*m) * log p        (m = buf.size() bytes)
//
// Restrictions: p = 2^d; the partners are hypercube neighbours (Links::strict needs a hypercube).
// Every VP works on my_virtual_id = my_id XOR root, so the root is virtual VP 0 (Algorithm 4.2).
// Step i (i = d-1 down to 0): the VPs whose virtual ids have their lower i+1 bits zero already
// hold X; each sends it across dimension i. For p = 8, root 0:
//
//   i = 2:  0 -> 4
//   i = 1:  0 -> 2, 4 -> 6
//   i = 0:  0 -> 1, 2 -> 3, 4 -> 5, 6 -> 7
//
// When VPs outnumber cores a broadcast may instead be a meeting in shared memory
// (Port::meet_rooted): the root leaves X there (a small X; a large one every other VP copies
// straight from the root's buffer), every other VP takes it as soon as it is there, and the
// model clocks, counts and links are these rounds' (tree_down_to, tree_down_from).
#include "card.hpp"
#include "rooted.hpp"

namespace hypercomm::detail {

void broadcast_hypercube(const Comm& c, Bytes buf, int root) {
  const int d = log2_of(c.p());
  if (c.is_call(Collective::broadcast) &&
      c.meet_rooted({d, buf.size(), tree_down_to, tree_down_from, nullptr, root},
                    Port::Flow::from_root, buf, buf))
    return;
  const int my_id = c.id();
  const int my_virtual_id = my_id ^ root;
  int mask = c.p() - 1;  // all d bits set
  for (int i = d - 1; i >= 0; --i) {
    const int bit = 1 << i;
    mask ^= bit;  // clear bit i
    // Only the VPs whose lower i bits are zero (they hold X or get it now) take part.
    if ((my_virtual_id & mask) != 0) continue;
    const int partner = (my_virtual_id ^ bit) ^ root;
    if ((my_virtual_id & bit) == 0) {
      c.send(partner, buf);
    } else {
      c.recv(partner, buf);
    }
  }
}

namespace {
double broadcast_hypercube_cost(const CostQuery& q) {
  return q.d() * q.w(q.m()) + q.dimension_hops();
}
}  // namespace

extern const AlgorithmCard broadcast_hypercube_card{
    {Collective::broadcast, Algo::hypercube, "Grama et al., Algorithms 4.1 and 4.2",
     "(ts + tw*m)*log p + th*H", kHypercubeNeeds, "(ts + tw m) log p"},
    needs_hypercube,
    broadcast_hypercube_cost,
    [](const Comm& c, const Args& a) { broadcast_hypercube(c, a.out, a.root); },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/broadcast_tree_work};

}  // namespace hypercomm::detail
