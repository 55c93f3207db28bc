// One-to-all and all-to-one algorithms: broadcast, reduce, scatter, gather. One file each.
// Every function is called by every VP with the same arguments (root is a VP id).
#pragma once

#include "blocks.hpp"
#include "comm.hpp"
#include "ring.hpp"
#include "scratch.hpp"

namespace hypercomm::detail {

// Broadcast: buf holds the message at root on entry and at every VP on return.
void broadcast_hypercube(const Comm& c, Bytes buf, int root);  // Alg 4.1/4.2, p = 2^d
void broadcast_esbt(const Comm& c, Bytes buf, int root, int chunks,
                    bool all_ports = false);                             // Johnsson-Ho, p = 2^d
void broadcast_ring(const Comm& c, Bytes buf, int root, const Ring& g);  // two-way ring over g
struct RingArms;                                                         // rooted_util.hpp
// The broadcast and the reduction along the two arms `arms` of g from the root (a line's arms:
// the neighbour-only forms on a linear array).
void broadcast_arms(const Comm& c, Bytes buf, int root, const Ring& g, const RingArms& arms);
void reduce_arms(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, int root,
                 const Ring& g, const RingArms& arms);
void broadcast_mesh(const Comm& c, Bytes buf, int root, const Grid& grid,
                    bool open = false);  // root's row, then columns
void broadcast_two_phase(const Comm& c, Bytes buf, std::size_t elem_size, int root, Family f);

// Reduce: out at root = the fold over VP ids 0..p-1 of every VP's in (out.size() == in.size());
// elsewhere out may be empty and is not written.
void reduce_hypercube(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, int root);
void reduce_ring(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, int root,
                 const Ring& g);  // over the members of g (root a member of g)
void reduce_mesh(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, int root,
                 const Grid& grid, bool open = false);
void reduce_two_phase(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, int root,
                      Family f);
// The balanced arms' fold toward `root` done by one VP (a meeting's Port::Combine, inputs[k]:
// member k's; n >= 2 members, scratch 2 results): bit for bit what reduce_ring's messages fold.
struct ArmsFold {
  const Reducer* op;
  int root;
};
void fold_ring_arms(const void* context, std::span<const void* const> inputs, Bytes result,
                    Bytes scratch);
// The large ring reduce's shared meeting (as the hypercube's, reduce_hypercube.cpp; from
// kSharedReduceBytes), and the ring all-reduce by reduction then broadcast past kMeetingBytes:
// the call with this VP's own room for a share, p input pointers and the arms' two partial folds
// (each VP brings a ReduceMember, shares.hpp), and whether every member's out takes the result.
struct RingReduceShare {
  ArmsFold fold;
  std::size_t bytes;
  std::span<const void*> at;
  Bytes scratch;
  bool to_every_out;
};
// A member's share of it (Comm::meet_in_parts' part; context: a RingReduceShare).
void ring_reduce_share(const void* context, std::span<const void* const> inputs, int rank);

// Scatter: root's in holds p blocks laid out by `blocks`; every VP's out (blocks.size(id) bytes)
// receives its block. in is read at root only (may be empty elsewhere).
// Gather is the reverse: root's out (all p blocks) is written at root only.
void scatter_hypercube(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root);
void scatter_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root,
                  bool line = false);  // line: a linear array's arms (RingArms::line)
void scatter_mesh(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root,
                  bool open = false);
void gather_hypercube(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root);
void gather_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root,
                 bool line = false);  // line: a linear array's arms (RingArms::line)
void gather_mesh(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root,
                 bool open = false);
// (open: a mesh without wraparound, each row and column a line: RingArms::line.)

}  // namespace hypercomm::detail
