// Personalized exchange and synchronisation: all_to_all, circular_shift, barrier. One file each.
// Every function is called by every VP with the same arguments.
#pragma once

#include "blocks.hpp"
#include "comm.hpp"
#include "ring.hpp"
#include "scratch.hpp"

namespace hypercomm::detail {

// All-to-all personalized: in and out hold p blocks of `block` bytes each; block j of VP i's in
// goes to block i of VP j's out (own block copied locally).
void all_to_all_pairwise(const Comm& c, ConstBytes in, Bytes out, std::size_t block);  // Alg 4.10
void all_to_all_dimension_exchange(const Comm& c, ConstBytes in, Bytes out, std::size_t block);
void all_to_all_ring(const Comm& c, ConstBytes in, Bytes out, std::size_t block);
void all_to_all_mesh(const Comm& c, ConstBytes in, Bytes out, std::size_t block,
                     bool open = false);  // open: line phases, a mesh without wraparound
// all_to_allv: block j of in (laid out by `sent`) goes to rank j; block i of out (laid out by
// `received`) comes from rank i.
// The final receiver checks every block against `received` and throws SizeMismatch with
// *c.receiving set to the block's source when they differ.
// (elem_size: the elements' size, which the meeting's SizeMismatch counts in.)
void all_to_allv_pairwise(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                          const Blocks& received, std::size_t elem_size);
void all_to_allv_ring(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                      const Blocks& received);
void all_to_allv_line(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                      const Blocks& received);
void all_to_allv_mesh(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                      const Blocks& received, bool open = false);  // open: line phases
void all_to_allv_dimension_exchange(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                                    const Blocks& received);
// The SizeMismatch of an all_to_allv block from `source` of `got` bytes where this VP expects
// `want` (irregular.cpp rewords it in elements, naming both ranks' counts).
[[noreturn]] void throw_block_size(const Comm& c, int source, std::size_t got, std::size_t want);

// Circular shift: VP i's in goes to VP (i + shift) mod p's out; shift is already in [0, p).
void circular_shift_e_cube(const Comm& c, ConstBytes in, Bytes out, int shift);     // routed
void circular_shift_hypercube(const Comm& c, ConstBytes in, Bytes out, int shift);  // by dimension
void circular_shift_ring(const Comm& c, ConstBytes in, Bytes out, int shift);
void circular_shift_mesh(const Comm& c, ConstBytes in, Bytes out, int shift);

// Barrier: no VP returns before every VP has entered.
void barrier_hypercube(const Comm& c);      // butterfly, p = 2^d
void barrier_dissemination(const Comm& c);  // any p, ceil(log p) rounds (routed)
void barrier_ring(const Comm& c);
void barrier_mesh(const Comm& c, const Grid& grid);

}  // namespace hypercomm::detail
