// Ring-level pieces shared by the exchange family (all_to_all, circular_shift, barrier): each
// ring algorithm runs over a Ring (the whole machine, a mesh row, a mesh column), so the mesh
// algorithms are the ring algorithms run along the rows and then along the columns (Grama et
// al. 4.5.2, 4.6). Each is defined in its ring algorithm's file.
#pragma once

#include "kit.hpp"

namespace hypercomm::detail {

// All-to-all personalized among g's members, one direction round the ring (all_to_all_ring.cpp):
// in and out hold g.size bundles of `bundle` bytes indexed by group rank; bundle k of member j's
// in goes to bundle j of member k's out. Sends to g.right, receives from g.left only.
// T = (ts + tw*bundle*g.size/2) * (g.size - 1).
void ring_all_to_all(const Comm& c, const Ring& g, ConstBytes in, Bytes out, std::size_t bundle);

// Circular shift among g's members (circular_shift_ring.cpp): member k's in goes to member
// (k + shift) mod g.size's out, shift in [0, g.size). min(shift, g.size - shift) neighbour
// steps the shorter way round (ties go up). T = (ts + tw*m) * min(shift, g.size - shift).
void ring_shift(const Comm& c, const Ring& g, ConstBytes in, Bytes out, int shift);

// Barrier among g's members (barrier_ring.cpp): g.size - 1 rounds of zero-byte messages to
// g.right. No member returns before every member has entered. T = ts * (g.size - 1).
void ring_barrier(const Comm& c, const Ring& g);

}  // namespace hypercomm::detail
