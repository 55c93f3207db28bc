// All-to-one personalized communication (gather) on a hypercube: Grama et al., section 4.4,
// recursive doubling up a binomial tree on root-relative virtual ids (my_virtual_id = my_id XOR
// root) - the scatter reversed.
//
//   T = ts*log p + tw*m*(p-1)        (m = one block; blocks differ by at most one element)
//
// Step i (i = 0 to d-1): each VP whose virtual id has its lower i bits zero holds the blocks of
// its aligned 2^i-subcube; those with bit i set send them across dimension i and are done. XOR
// with the root keeps aligned subcubes aligned, so every message is one contiguous range of
// real blocks, received straight into place (the root receives into out).
// Restrictions: p = 2^d; partners are hypercube neighbours. For p = 8, root 0 (blocks sent):
//
//   i = 0:  1 -> 0 [1],  3 -> 2 [3],  5 -> 4 [5],  7 -> 6 [7]
//   i = 1:  2 -> 0 [2,3],  6 -> 4 [6,7]
//   i = 2:  4 -> 0 [4..7]
//
// When VPs outnumber cores a gather of equal blocks may instead be a meeting in shared memory
// (Port::meet_rooted): a small one's VPs (blocks up to 256 B, or whose p blocks fit in the
// slot's wide inputs: 32 KiB, a group's 16 KiB) leave their blocks there and go on, the root lays
// them in place (concatenate, as the all-gather's meeting does); a large one's VPs copy their
// blocks straight into the root's out (by reference). The model clocks, counts and links are these
// rounds' (tree_up_to, tree_up_from, 2^i blocks in step i). A gatherv meets so too, whatever
// its blocks' sizes (blocks_meeting.hpp), each VP's block at its own offset of the root's out.
#include <bit>
#include <vector>

#include "blocks_meeting.hpp"
#include "card.hpp"
#include "rooted.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

void gather_hypercube(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root) {
  const int d = log2_of(c.p());
  if (c.is_call(Collective::gatherv)) {
    Port::Rounds rounds{d, 0, tree_up_to, tree_up_from, nullptr, root};
    rounds.sent_bytes = aligned_subcube_bytes;
    if (meet_rooted_blocks(c, rounds, Port::Flow::to_root, in, out, blocks)) return;
  }
  if (c.is_call(Collective::gather) && blocks.all_equal()) {
    const Port::Rounds rounds{d, blocks.size(0), tree_up_to, tree_up_from, doubling, root};
    if (blocks.size(0) <= Port::kPipelinedBytes
            ? c.meet_rooted(rounds, Port::Flow::to_root, in, out, Port::Results::shared,
                            concatenate)
            : c.meet_rooted(rounds, Port::Flow::to_root, in, out, Port::Results::per_vp))
      return;
  }
  const int my_id = c.id();
  const int my_virtual_id = my_id ^ root;

  // held: room for the blocks of real ids held_first .. held_first + 2^t - 1, where 2^t is the
  // lowest set bit of my_virtual_id (all of them at the root): what this VP sends at step t.
  Buffer storage;
  Bytes held = out;
  int held_first = 0;
  if (my_virtual_id != 0) {
    const int subcube = 1 << std::countr_zero(static_cast<unsigned>(my_virtual_id));
    if (subcube == 1) {  // a leaf: sends its own block at step 0, straight from in
      c.send(my_id ^ 1, in);
      return;
    }
    held_first = my_id & ~(subcube - 1);
    storage.resize(blocks.offset(held_first + subcube) - blocks.offset(held_first));
    held = storage;
  }
  auto held_range = [&](int first, int count) {
    return held.subspan(blocks.offset(first) - blocks.offset(held_first),
                        blocks.offset(first + count) - blocks.offset(first));
  };
  // This VP's own block goes into place while the first receive (step 0's, which every VP here
  // takes) is on its way: the two copies of a large gather overlap.
  const auto place_own_block = [&] { copy_bytes(held_range(my_id, 1), in); };
  if (d == 0) place_own_block();

  int mask = 0;
  for (int i = 0; i < d; ++i) {
    const int bit = 1 << i;
    if ((my_virtual_id & mask) == 0) {  // lower i bits zero: still taking part
      const int partner = my_id ^ bit;  // = (my_virtual_id XOR 2^i) XOR root
      if ((my_virtual_id & bit) != 0) {
        c.send(partner, held);
        return;
      }
      const Bytes theirs = held_range(partner & ~(bit - 1), bit);
      if (i == 0)
        c.recv_during(partner, theirs, place_own_block);
      else
        c.recv(partner, theirs);
    }
    mask ^= bit;
  }
}

namespace {
double gather_hypercube_cost(const CostQuery& q) {
  return q.d() * q.ts() + q.tw() * q.m() * (q.p() - 1) + q.dimension_hops();
}
// G(g) over the relative ids first .. first + size - 1 (relative id = id XOR root): the upper
// half's leader sends the half's blocks to the lower half's once it has them all.
double uneven_gather(const CostQuery& q, int first, int size) {
  if (size == 1) return 0;
  const int half = size / 2, root = q.root();
  const int hops = q.th() == 0 ? 0 : q.t.distance((first + half) ^ root, first ^ root);
  return std::max(uneven_gather(q, first, half),
                  uneven_gather(q, first + half, half) +
                      q.w(q.relative_bytes(first + half, half, root)) + q.th() * hops);
}
// Selection: the capped steps; textbook_time_v: G, hops and all (equal counts included).
double gatherv_hypercube_cost(const CostQuery& q) {
  if (q.selection) {
    double cost = 0;
    for (int k = 0; k < q.d(); ++k) cost += q.w(q.cap(1 << k));
    return cost;
  }
  return uneven_gather(q, 0, q.p());
}
void run(const Comm& c, const Args& a) { gather_hypercube(c, a.in, a.out, *a.blocks, a.root); }
}  // namespace

extern const AlgorithmCard gather_hypercube_card{
    {Collective::gather, Algo::hypercube,
     "Grama et al., section 4.4: binomial tree, recursive doubling", "ts*log p + tw*m*(p-1) + th*H",
     kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    needs_hypercube,
    gather_hypercube_cost,
    run};

extern const AlgorithmCard gatherv_hypercube_card{
    {Collective::gatherv, Algo::hypercube,
     "Grama et al., section 4.4 with uneven blocks: binomial tree, each VP sending its whole "
     "subtree's blocks",
     "uneven: G(all p blocks), G(g) = max(G(g_r), G(g_o) + ts + tw*B(g_o) + th*hops) over "
     "g's halves (g_r holds the root, g_o sends to it), G(one block) = 0; equal blocks of m: "
     "ts*log p + tw*m*(p-1) + th*H",
     kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    needs_hypercube,
    gatherv_hypercube_cost,
    run};

}  // namespace hypercomm::detail
