// Ring-level pieces shared by the symmetric family (all_gather, reduce_scatter, all_reduce): the
// ring algorithms run over a Ring (the whole machine, a mesh row, a mesh column), so the mesh
// algorithms are the ring algorithms run along the rows and then along the columns (Grama et al.
// 4.6). Each is defined in its ring algorithm's file.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "blocks.hpp"
#include "comm.hpp"
#include "ring.hpp"
#include "scratch.hpp"

namespace hypercomm::detail {

// Ring reduce-scatter among g's members (reduce_scatter_ring.cpp, Algorithm 4.5): in is packed,
// member k's part is parts.block(in, k) (parts has g.size parts); out (the size
// of part rank_of(id)) receives that part folded over the members in rank order, which is id
// order. out may be exactly this member's own part of in (in place). Sends to g.left, receives
// from g.right only. For equal parts of m bytes and n = g.size:
//   commutative:     T = (ts + tw*m) * (n - 1)
//   non-commutative: T = ts*(n - 1) + tw*m*(2n - 3)   (two partials after the wrap, n >= 2)
void reduce_scatter_ring_group(const Comm& c, ConstBytes in, Bytes out, const Blocks& parts,
                               const Ring& g, const Reducer& op);

}  // namespace hypercomm::detail
