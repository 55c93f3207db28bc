// All-reduce by split messages: Grama et al. section 4.7 (all-reduce = reduce-scatter +
// all-gather). The vector is cut into p blocks by Blocks(m, elem_size, p) (uneven when the
// element count is not a multiple of p; some blocks may be empty); VP k reduces block k over
// all VPs, straight into out, and the all-gather then spreads the blocks, in place in out.
// The family is chosen by select.cpp, so every VP runs the same pair:
//
//   hypercube (p = 2^d): reduce_scatter_hypercube + all_gather_hypercube
//       T = 2*(ts*log p + tw*m*(p - 1)/p)                             (m divisible by p)
//   ring:  reduce_scatter_ring + all_gather_ring over Ring::all(p)
//       T = 2*(ts*(p - 1) + tw*m*(p - 1)/p)
//       non-commutative: T = 2*ts*(p - 1) + tw*m*(3p - 4)/p
//   mesh:  reduce_scatter_mesh + all_gather_mesh
//       T = 2*(ts*(rows + cols - 2) + tw*m*(p - 1)/p)
//       non-commutative: the reduce-scatter costs as on reduce_scatter_mesh's card
//
// Restrictions: those of the family's algorithms.
//
// in may be out: every reduce-scatter here reads in's own block k only in the combine that
// writes out's block k, and writes nothing else of out, so no copy of in is needed.

#include "symmetric.hpp"

namespace hypercomm::detail {

void all_reduce_two_phase(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, Family f) {
  const int p = c.p();
  const Blocks blocks(out.size(), op.elem_size, p);
  const Bytes mine = blocks.block(out, c.id());
  switch (f) {
    case Family::hypercube:
      reduce_scatter_hypercube(c, in, mine, blocks, op);
      all_gather_hypercube(c, out, blocks);
      break;
    case Family::ring:
      reduce_scatter_ring(c, in, mine, blocks, op);
      all_gather_ring(c, out, Segments{blocks, 0, 1, 1}, Ring::all(p));
      break;
    case Family::mesh:
      reduce_scatter_mesh(c, in, mine, blocks, op);
      all_gather_mesh(c, out, blocks);
      break;
  }
}

}  // namespace hypercomm::detail
