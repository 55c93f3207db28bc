// All-to-all broadcast and reduction algorithms: all_gather, reduce_scatter, all_reduce, scan.
// One file each. Every function is called by every VP with the same arguments.
#pragma once

#include "blocks.hpp"
#include "comm.hpp"
#include "ring.hpp"
#include "scratch.hpp"

namespace hypercomm::detail {

// All-gather in place: buf holds p blocks laid out by `blocks`; on entry block id() is filled,
// on return every block is. The ring form runs over the members of g with parts `parts`
// (member k owns parts.of(buf, k)), so the mesh runs it along its row and then its column.
void all_gather_hypercube(const Comm& c, Bytes buf, const Blocks& blocks,
                          ConstBytes own = {});  // Alg 4.7, p = 2^d
void all_gather_ring(const Comm& c, Bytes buf, const Blocks& parts, const Ring& g);      // 4.4
void all_gather_mesh(const Comm& c, Bytes buf, const Blocks& blocks, const Grid& grid);  // 4.6

// Reduce-scatter: in holds p blocks laid out by `blocks`; out (blocks.size(id) bytes) receives
// block id() of the fold over VP ids 0..p-1 of every VP's in.
void reduce_scatter_hypercube(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                              const Reducer& op);  // Alg 4.8, p = 2^d
void reduce_scatter_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                         const Reducer& op);  // Alg 4.5 (order-preserving when non-commutative)
void reduce_scatter_mesh(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                         const Reducer& op, const Grid& grid);

// All-reduce: out = the fold over VP ids 0..p-1 of every VP's in, at every VP; in may be out.
void all_reduce_hypercube(const Comm& c, ConstBytes in, Bytes out, const Reducer& op);  // butterfly
void all_reduce_ring(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, const Ring& g);
// The pair above as one meeting where VPs outnumber cores (all_reduce_ring.cpp; false: send the
// messages): a ring of the whole group in id order, a commutative operator that cannot throw.
bool meet_all_reduce_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                          const Reducer& op, const Ring& g);
// Its first half alone, the reduce-scatter, as one meeting (all_reduce_ring.cpp, beside it: the
// same fold): VP i's out is block i folded in the ring's order.
bool meet_reduce_scatter_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                              const Reducer& op, const Ring& g);
void all_reduce_mesh(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, const Grid& grid);
void all_reduce_two_phase(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, Family f);

// The butterfly's tree folded by one VP (a meeting's Port::Combine; context: the Reducer):
// result = the fold of inputs[0..n) as the butterfly's rounds fold them, after round i the
// aligned blocks of 2^(i+1) inputs, (left half) op (right half). scratch: log2(n) results.
void fold_butterfly_tree(const void* context, std::span<const void* const> inputs, Bytes result,
                         Bytes scratch);

// The blocks laid side by side (a meeting's Port::Combine): result holds inputs.size() blocks of
// equal size, block i from inputs[i] (an all-gather's result at every VP, a gather's at the root).
void concatenate(const void* context, std::span<const void* const> inputs, Bytes result,
                 Bytes scratch);

// A reducer for calls that carry no data (the barriers built on an all-reduce): it folds nothing.
[[nodiscard]] const Reducer& no_data_reducer() noexcept;

// Prefix: out at VP i = fold of in over VP ids 0..i (exclusive: 0..i-1, VP 0's out untouched).
void scan_hypercube(const Comm& c, ConstBytes in, Bytes out, const Reducer& op,
                    bool exclusive);  // Alg 4.9, p = 2^d
void scan_ring(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, bool exclusive);
// The mesh prefix (row chains, then the last column, then the rows again), for meshes where VP i
// and i+1 are not all neighbours.
void scan_mesh(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, bool exclusive,
               bool open = false);  // open: a mesh without wraparound, neighbours only

}  // namespace hypercomm::detail
