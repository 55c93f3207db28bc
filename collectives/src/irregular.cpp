// The irregular collectives (API.md, "Irregular collectives"): the regular collectives' book
// algorithms run with blocks of any sizes. The counts become a Blocks of byte offsets, and the
// algorithm files, which already address every block through Blocks, move the uneven blocks as
// they are: the hypercube all-gather (Algorithm 4.7) sends the union of the blocks it holds, the
// hypercube gather and scatter send whole subtrees, the ring (4.4, 4.5) and mesh (4.6) phases
// carry each member's block whatever its size. all_to_allv runs the pairwise exchange of 4.10.
// Members that must pass the same counts carry a digest of them in every message header, so a
// member whose counts differ gets CollectiveMismatch instead of wrong data.
#include <numeric>
#include <string>
#include <vector>

#include "call.hpp"
#include "exchange.hpp"
#include "rooted.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

namespace {

void check_counts(const Group& g, Collective op, Counts counts, const char* what) {
  if (counts.size() != static_cast<std::size_t>(g.size()))
    size_error(g, op,
               std::string(what) + " has " + std::to_string(counts.size()) +
                   " entries but the group has " + std::to_string(g.size()) + " members");
}

// Byte offsets of the blocks: p + 1 entries, the last the total.
std::vector<std::size_t> offsets_of(Counts counts, std::size_t elem_size) {
  std::vector<std::size_t> off(counts.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) off[i + 1] = off[i] + counts[i] * elem_size;
  return off;
}

// FNV-1a over the counts: equal on every member that passes the same counts.
std::uint32_t digest(Counts counts) {
  std::uint32_t h = 2166136261u;
  for (const std::size_t c : counts) {
    for (int k = 0; k < 8; ++k) {
      h ^= static_cast<std::uint32_t>((c >> (8 * k)) & 0xFFu);
      h *= 16777619u;
    }
  }
  return h;
}

void check_block(const Group& g, Collective op, const char* name, std::size_t bytes,
                 std::size_t want, std::size_t elem_size, const std::string& why) {
  if (bytes != want)
    size_error(g, op,
               std::string(name) + " holds " + std::to_string(elements(bytes, elem_size)) +
                   " elements but " + why + " is " + std::to_string(elements(want, elem_size)));
}

// The average block of the call, for the algorithm table (its costs are per block).
std::size_t mean_block(std::size_t total, int p) { return total / static_cast<std::size_t>(p); }

}  // namespace

void throw_rank_count(const Group& g, const char* op, std::size_t entries) {
  throw SizeMismatch(vp_name(g) + ": " + op + ": out_per_rank has " + std::to_string(entries) +
                     " entries but the group has " + std::to_string(g.size()) + " members");
}

void all_gatherv(const Group& g, ConstBytes in, Bytes out, Counts counts, std::size_t elem_size) {
  const Collective op = Collective::all_gatherv;
  check_member(g, op);
  check_counts(g, op, counts, "counts");
  const std::vector<std::size_t> off = offsets_of(counts, elem_size);
  const int me = g.rank();
  check_block(g, op, "in", in.size(), off[me + 1] - off[me], elem_size,
              "counts[" + std::to_string(me) + "] (this rank's count)");
  check_block(g, op, "out", out.size(), off.back(), elem_size, "the sum of counts");
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, op, Algo::automatic, mean_block(off.back(), g.size()), 0, digest(counts));
  const Blocks blocks(off);
  copy_bytes(blocks.block(out, me), in);  // received blocks land in place around it
  if (call.alone()) return;
  const Comm c = call.comm();
  switch (call.algo()) {
    case Algo::hypercube: return all_gather_hypercube(c, out, blocks);
    case Algo::mesh: return all_gather_mesh(c, out, blocks);
    default: return all_gather_ring(c, out, Segments{blocks, 0, 1, 1}, Ring::all(g.size()));
  }
}

namespace {

// gatherv and scatterv: the same checks and the same call, mirrored. Gather's own block is `in`
// and the root's whole buffer `out`; scatter's the other way round.
using RootedAlgorithm = void (*)(const Comm&, ConstBytes, Bytes, const Blocks&, int);
struct RootedAlgorithms {
  RootedAlgorithm hypercube, mesh, ring;
};

void rooted_v(const Group& g, Collective op, ConstBytes in, Bytes out, Counts counts,
              std::size_t elem_size, int root, const RootedAlgorithms& algorithms) {
  const bool gathering = op == Collective::gatherv;
  check_member(g, op);
  check_root(g, op, root);
  check_counts(g, op, counts, "counts");
  const std::vector<std::size_t> off = offsets_of(counts, elem_size);
  const int me = g.rank();
  check_block(g, op, gathering ? "in" : "out", gathering ? in.size() : out.size(),
              off[me + 1] - off[me], elem_size,
              "counts[" + std::to_string(me) + "] (this rank's count)");
  if (me == root)
    check_block(g, op, gathering ? "the root's out" : "the root's in",
                gathering ? out.size() : in.size(), off.back(), elem_size, "the sum of counts");
  Buffer storage;
  if (me == root) in = separate(in, out, storage);
  const Call call(g, op, Algo::automatic, mean_block(off.back(), g.size()), root, digest(counts));
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  const Blocks blocks(off);
  switch (call.algo()) {
    case Algo::hypercube: return algorithms.hypercube(c, in, out, blocks, root);
    case Algo::mesh: return algorithms.mesh(c, in, out, blocks, root);
    default: return algorithms.ring(c, in, out, blocks, root);
  }
}

}  // namespace

void gatherv(const Group& g, ConstBytes in, Bytes out, Counts counts, std::size_t elem_size,
             int root) {
  rooted_v(g, Collective::gatherv, in, out, counts, elem_size, root,
           {gather_hypercube, gather_mesh, gather_ring});
}

void scatterv(const Group& g, ConstBytes in, Bytes out, Counts counts, std::size_t elem_size,
              int root) {
  rooted_v(g, Collective::scatterv, in, out, counts, elem_size, root,
           {scatter_hypercube, scatter_mesh, scatter_ring});
}

void all_to_allv(const Group& g, ConstBytes in, Counts send_counts, Bytes out, Counts recv_counts,
                 std::size_t elem_size) {
  const Collective op = Collective::all_to_allv;
  check_member(g, op);
  check_counts(g, op, send_counts, "send_counts");
  check_counts(g, op, recv_counts, "recv_counts");
  const std::vector<std::size_t> sent = offsets_of(send_counts, elem_size);
  const std::vector<std::size_t> received = offsets_of(recv_counts, elem_size);
  check_block(g, op, "in", in.size(), sent.back(), elem_size, "the sum of send_counts");
  check_block(g, op, "out", out.size(), received.back(), elem_size, "the sum of recv_counts");
  const int me = g.rank();
  if (send_counts[static_cast<std::size_t>(me)] != recv_counts[static_cast<std::size_t>(me)])
    size_error(g, op,
               "send_counts[" + std::to_string(me) +
                   "] = " + std::to_string(send_counts[static_cast<std::size_t>(me)]) +
                   " but recv_counts[" + std::to_string(me) +
                   "] = " + std::to_string(recv_counts[static_cast<std::size_t>(me)]) +
                   " (the block a rank sends itself)");
  Buffer storage;
  in = separate(in, out, storage);
  // Counts differ from member to member: each receive checks its size.
  const Call call(g, op, Algo::automatic, mean_block(sent.back(), g.size()), 0, 0);
  const Blocks sent_blocks(sent), received_blocks(received);
  if (call.alone()) return copy_bytes(out, in);
  all_to_allv_pairwise(call.comm(), in, sent_blocks, out, received_blocks);
}

void reduce_scatterv(const Group& g, ConstBytes in, Bytes out, const Reducer& op, Counts counts) {
  const Collective kind = Collective::reduce_scatterv;
  check_member(g, kind);
  check_counts(g, kind, counts, "counts");
  const std::vector<std::size_t> off = offsets_of(counts, op.elem_size);
  const int me = g.rank();
  check_block(g, kind, "in", in.size(), off.back(), op.elem_size, "the sum of counts");
  check_block(g, kind, "out", out.size(), off[me + 1] - off[me], op.elem_size,
              "counts[" + std::to_string(me) + "] (this rank's count)");
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, kind, Algo::automatic, mean_block(off.back(), g.size()), 0, digest(counts));
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  const Blocks blocks(off);
  switch (call.algo()) {
    case Algo::hypercube: return reduce_scatter_hypercube(c, in, out, blocks, op);
    case Algo::mesh: return reduce_scatter_mesh(c, in, out, blocks, op);
    default: return reduce_scatter_ring(c, in, out, blocks, op);
  }
}

}  // namespace hypercomm::detail
