// All-to-one personalized communication (gather) on a ring, neighbours only: the two-way ring
// scatter reversed. Each arm's far end sends its block toward the root; every VP on an arm
// adds its own block to what it received and passes the lot on; the root places both arms'
// blocks and its own into out in id order.
//
//   T = a*ts + tw*m*a(a+1)/2        (a = floor(p/2), the longer arm; m = one block)
//
// The arms run at the same time and the root's two receives overlap, so the longer arm sets
// the time: its far end's message of 1 block, then 2, ..., a blocks into the root. Blocks are
// numbered relative to the root, (id - root) mod p; a range that wraps past VP p-1 is received
// into a temporary at the root and unpacked, any other straight into out.
// Restrictions: VP i and i+1 mod p are neighbours (or routed links). For p = 8, root 0:
//
//   step 1: 4 -> 3 [4],       5 -> 6 [5]
//   step 2: 3 -> 2 [3,4],     6 -> 7 [5,6]
//   step 3: 2 -> 1 [2,3,4],   7 -> 0 [5,6,7]
//   step 4: 1 -> 0 [1,2,3,4]
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

void gather_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root) {
  const int p = c.p();
  const auto offsets = part_offsets(p, [&](int k) { return blocks.size(k); });
  ring_gather_parts(c, Ring::all(p), root, offsets, in, out, RingArms::balanced(p));
}

}  // namespace hypercomm::detail
