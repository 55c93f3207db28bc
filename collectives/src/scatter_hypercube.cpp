// One-to-all personalized communication (scatter) on a hypercube: Grama et al., section 4.4,
// recursive halving down a binomial tree on root-relative virtual ids (my_virtual_id = my_id
// XOR root, as in Algorithm 4.2).
//
//   T = ts*log p + tw*m*(p-1)        (m = one block; blocks differ by at most one element)
//
// Step i (i = d-1 down to 0): each VP that holds the blocks of its virtual 2^(i+1)-subcube sends
// the half destined for the partner's 2^i-subcube across dimension i (2^i blocks). XOR with the
// root maps an aligned subcube of virtual ids onto an aligned subcube of real ids, so every
// message is one contiguous range of real blocks: no packing, whatever the root.
// Restrictions: p = 2^d; partners are hypercube neighbours. For p = 8, root 0 (blocks sent):
//
//   i = 2:  0 -> 4 [4..7]
//   i = 1:  0 -> 2 [2,3],  4 -> 6 [6,7]
//   i = 0:  0 -> 1 [1],  2 -> 3 [3],  4 -> 5 [5],  6 -> 7 [7]
//
// When VPs outnumber cores a scatter of equal blocks may instead be a meeting in shared memory
// (Port::meet_rooted): the root leaves its p blocks there (a small one's; a large one's each VP
// copies straight from the root's buffer), every other VP takes its own as soon as they are
// there, and the model clocks, counts and links are these rounds' (tree_down_to,
// tree_down_from, 2^i blocks in step i). A scatterv meets so too, whatever its blocks' sizes
// (blocks_meeting.hpp), each VP's block at its own offset of the root's in.
#include <vector>

#include "blocks_meeting.hpp"
#include "card.hpp"
#include "rooted.hpp"

namespace hypercomm::detail {

namespace {

// What a VP sends in round k of the tree (step i = d-1-k): its partner's aligned 2^i-subcube's
// blocks.
std::size_t partner_subcube_bytes(const void* member, int id, int round, int p) noexcept {
  const Blocks& blocks = *static_cast<const BlocksMember*>(member)->blocks;
  const int bit = p >> (round + 1), first = (id ^ bit) & ~(bit - 1);
  return blocks.offset(first + bit) - blocks.offset(first);
}

// A large scatter's last message (step 0's), sent while this VP puts its own block in place:
// the receiver copies the message meanwhile, so the two copies overlap. Apart from the loop
// below, whose small messages run as they did (an 8-byte scatter back to back at p = 2 took
// 0.077 us a call with the loop as it is and 0.11-0.12 with this inside it).
[[gnu::noinline]] void send_last_during_own_copy(const Comm& c, int partner, ConstBytes theirs,
                                                 Bytes out, ConstBytes own) {
  c.send_during(partner, theirs, [&]() noexcept { copy_bytes(out, own); });
}

}  // namespace

void scatter_hypercube(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root) {
  const int d = log2_of(c.p());
  if (c.is_call(Collective::scatterv)) {
    Port::Rounds rounds{d, 0, tree_down_to, tree_down_from, nullptr, root};
    rounds.sent_bytes = partner_subcube_bytes;
    if (meet_rooted_blocks(c, rounds, Port::Flow::from_root, in, out, blocks)) return;
  }
  if (c.is_call(Collective::scatter) && blocks.all_equal() &&
      c.meet_rooted({d, blocks.size(0), tree_down_to, tree_down_from, halving, root},
                    Port::Flow::from_root, in, out, Port::Results::per_vp))
    return;
  const int my_id = c.id();
  const int my_virtual_id = my_id ^ root;

  // held: the blocks of real ids held_first .. held_first + held_count - 1, in id order.
  Buffer storage;
  ConstBytes held = in;
  int held_first = 0;
  auto held_range = [&](int first, int count) {
    return held.subspan(blocks.offset(first) - blocks.offset(held_first),
                        blocks.offset(first + count) - blocks.offset(first));
  };

  int mask = c.p() - 1;
  for (int i = d - 1; i >= 0; --i) {
    const int bit = 1 << i;
    mask ^= bit;
    if ((my_virtual_id & mask) != 0) continue;  // lower i bits not zero: not in this step
    const int partner = my_id ^ bit;            // = (my_virtual_id XOR 2^i) XOR root
    if ((my_virtual_id & bit) == 0) {
      const ConstBytes theirs = held_range(partner & ~(bit - 1), bit);
      if (i == 0 && theirs.size() >= Port::kSideWorkBytes) [[unlikely]]
        return send_last_during_own_copy(c, partner, theirs, out, held_range(my_id, 1));
      c.send(partner, theirs);
    } else if (bit == 1) {
      c.recv(partner, out);  // a leaf: its own block is all it gets
      return;
    } else {
      held_first = my_id & ~(bit - 1);  // this VP's aligned 2^i-subcube of real ids
      storage.resize(blocks.offset(held_first + bit) - blocks.offset(held_first));
      c.recv(partner, storage);
      held = storage;
    }
  }
  copy_bytes(out, held_range(my_id, 1));  // at the root out may be its own block of in
}

namespace {
double scatter_hypercube_cost(const CostQuery& q) {
  return q.d() * q.ts() + q.tw() * q.m() * (q.p() - 1) + q.dimension_hops();
}
// S(g, t) over the relative ids first .. first + size - 1 (relative id = id XOR root), whose
// lower half's leader holds all their blocks at t: it sends the upper half's to its leader.
double uneven_scatter(const CostQuery& q, int first, int size, double at) {
  if (size == 1) return at;
  const int half = size / 2, root = q.root();
  const double sent = at + q.w(q.relative_bytes(first + half, half, root));
  const int hops = q.th() == 0 ? 0 : q.t.distance(first ^ root, (first + half) ^ root);
  return std::max(uneven_scatter(q, first, half, sent),
                  uneven_scatter(q, first + half, half, sent + q.th() * hops));
}
// Selection: the capped steps; textbook_time_v: S, hops and all (equal counts included).
double scatterv_hypercube_cost(const CostQuery& q) {
  if (q.selection) {
    double cost = 0;
    for (int k = 0; k < q.d(); ++k) cost += q.w(q.cap(1 << k));
    return cost;
  }
  return uneven_scatter(q, 0, q.p(), 0);
}
void run(const Comm& c, const Args& a) { scatter_hypercube(c, a.in, a.out, *a.blocks, a.root); }
}  // namespace

extern const AlgorithmCard scatter_hypercube_card{
    {Collective::scatter, Algo::hypercube,
     "Grama et al., section 4.4: binomial tree, recursive halving", "ts*log p + tw*m*(p-1) + th*H",
     kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    needs_hypercube,
    scatter_hypercube_cost,
    run};

extern const AlgorithmCard scatterv_hypercube_card{
    {Collective::scatterv, Algo::hypercube,
     "Grama et al., section 4.4 with uneven blocks: binomial tree, recursive halving",
     "uneven: S(all p blocks, 0), S(g, t) = max(S(g_r, t + c), S(g_o, t + c + th*hops)), c = "
     "ts + tw*B(g_o) (g_r holds the root, g_o receives from it), S(one block, t) = t; equal "
     "blocks of m: ts*log p + tw*m*(p-1) + th*H",
     kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    needs_hypercube,
    scatterv_hypercube_cost,
    run};

}  // namespace hypercomm::detail
