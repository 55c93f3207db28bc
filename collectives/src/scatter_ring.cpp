// One-to-all personalized communication (scatter) on a ring, neighbours only: Grama et al.,
// section 4.4 on a ring, in the lecture's two-way form. The root sends each half of the ring
// all its blocks in one message, the longer (up) arm first; every VP on an arm keeps its own
// block and passes the rest on to the next VP outward.
//
//   a = floor(p/2) VPs on the up arm, b = floor((p-1)/2) on the down arm, m = one block:
//   p even: T = a*ts + tw*m*a(a+1)/2                 (both arms' far ends receive then)
//   p odd:  T = (a+1)*ts + tw*m*(a + a(a+1)/2)       (the down arm, which starts one send late)
//
// The up arm's far end waits for sends of a, a-1, ..., 1 blocks; the down arm's for the root's
// first send (a blocks) and then b, b-1, ..., 1 blocks. The book's ts*log p + tw*m*(p-1) needs
// routed links; this form trades tw for neighbour-only messages. Blocks are numbered relative to
// the root, (id - root) mod p; a range that wraps past VP p-1 is packed at the root.
// Restrictions: VP i and i+1 mod p are neighbours (or routed links). For p = 8, root 0:
//
//   step 1: 0 -> 1 [1,2,3,4]
//   step 2: 1 -> 2 [2,3,4],  0 -> 7 [5,6,7]
//   step 3: 2 -> 3 [3,4],    7 -> 6 [5,6]
//   step 4: 3 -> 4 [4],      6 -> 5 [5]
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

void scatter_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root) {
  const int p = c.p();
  const auto offsets = part_offsets(p, [&](int k) { return blocks.size(k); });
  ring_scatter_parts(c, Ring::all(p), root, offsets, in, out, RingArms::balanced(p));
}

}  // namespace hypercomm::detail
