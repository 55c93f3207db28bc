// All-to-all broadcast (all-gather) on a ring: Grama et al., Algorithm 4.4, over a Ring.
//
//   T = (ts + tw*m) * (n - 1)          (n = members of the group, m = bytes per part)
//
// Restrictions: neighbours only (send to the group's right, receive from its left); any n.
//
// Step i (1..n-1): each member sends right the part it received last (its own at step 1) and
// receives the next from the left straight into its final place in buf: after step i member k
// holds parts k, k-1, ..., k-i (mod n). n = 4, member 0:
//
//   step 1: sends part 0   receives part 3
//   step 2: sends part 3   receives part 2
//   step 3: sends part 2   receives part 1
//
// Over the whole machine the parts are the p blocks; the mesh all-gather runs it along its row
// (one block a part) and then its column (a row of blocks a part): Blocks::grouped.
//
// When VPs outnumber cores, an all_gather or all_gatherv on a ring of the whole group may
// instead meet in shared memory (blocks_meeting.hpp, meet_blocks), as the hypercube's does:
// each of the n - 1 steps would cost every VP a switch, the meeting about one (12 VPs on 2 cores,
// back to back: 0.24x the time at 8 B, 0.20-0.42x at 64 KiB; README). The same steps on the model
// clocks and the links, block (k - i + 1) mod n sent right in step i; every VP's block copied
// once into each other VP's buffer, by the last to arrive up to kBlocksMovedByOne bytes in all,
// else by each VP for itself. A ring inside a larger group (the mesh's rows and columns, the
// phases of an all-reduce) sends its messages.

#include "blocks_meeting.hpp"
#include "card.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

namespace {

// The steps of a ring of the whole group in id order (Ring::all) and in Gray-code order
// (Ring::gray_code), as Port::Rounds: round i - 1 is step i.
int right_in_order(int id, int /*round*/, int p) { return (id + 1) % p; }
int left_in_order(int id, int /*round*/, int p) { return (id - 1 + p) % p; }
std::size_t sent_in_order(const void* member, int id, int round, int p) {
  return static_cast<const BlocksMember*>(member)->blocks->size((id - round + p) % p);
}
int gray_step(int id, int by, int p) {
  const auto rank = static_cast<int>(gray_inverse(static_cast<unsigned>(id)));
  return static_cast<int>(gray(static_cast<unsigned>((rank + by + p) % p)));
}
int right_in_gray(int id, int /*round*/, int p) { return gray_step(id, 1, p); }
int left_in_gray(int id, int /*round*/, int p) { return gray_step(id, -1, p); }

// The meeting above, if this call may meet; false: send the messages.
bool meet_on_ring(const Comm& c, Bytes buf, const Blocks& parts, const Ring& g) {
  const int n = g.size;
  if (g.first != 0 || g.stride != 1 || n != c.p() ||
      !(c.is_call(Collective::all_gather) || c.is_call(Collective::all_gatherv)))
    return false;
  Port::Rounds rounds = g.gray_order ? Port::Rounds{n - 1, 0, right_in_gray, left_in_gray}
                                     : Port::Rounds{n - 1, 0, right_in_order, left_in_order};
  if (parts.all_equal())
    rounds.bytes = parts.size(0);
  else if (!g.gray_order)  // (the Gray-code ring runs only all_gather: equal blocks)
    rounds.sent_bytes = sent_in_order;
  else
    return false;
  const std::size_t moved = parts.total() * static_cast<std::size_t>(n - 1);
  return meet_blocks(c, rounds, {buf.data(), buf.data(), &parts}, moved, all_gather_blocks);
}

}  // namespace

void all_gather_ring(const Comm& c, Bytes buf, const Blocks& parts, const Ring& g) {
  const int n = g.size;
  if (n == 1) return;
  if (c.port.may_meet() && meet_on_ring(c, buf, parts, g)) return;
  const int my_rank = g.rank_of(c.id());
  const int left = g.left(my_rank);
  const int right = g.right(my_rank);
  for (int i = 1; i < n; ++i) {
    const int outgoing = (my_rank - i + 1 + n) % n;  // received in the previous step
    const int incoming = (my_rank - i + n) % n;
    c.sendrecv(right, parts.block(buf, g.slot(outgoing)), left, parts.block(buf, g.slot(incoming)));
  }
}

// Routed over a mesh or hypercube the hop term is the longest chain of routed messages.
double all_gather_ring_cost(const CostQuery& q) {
  return (q.p() - 1) * q.w(q.m()) + (q.th() == 0 ? 0 : q.th() * q.ring_chain_hops());
}

// Selection: the largest block b every step. textbook_time_v: equal counts as all_gather; else
// the largest block's p-1 steps are a path and no step is longer, (p-1)*(ts + tw*b_max + th)
// where VP i and i+1 are neighbours (or th = 0). reduce_scatterv, the dual, alike.
double all_gatherv_ring_cost(const CostQuery& q) {
  if (q.selection) return (q.p() - 1) * q.w(q.cap(1));
  if (q.equal_counts()) return all_gather_ring_cost(q.as_regular());
  if (q.ring_th() != q.th()) return kNoClosedForm;
  return (q.p() - 1) * (q.w(q.m()) + q.th());
}

namespace {
void run(const Comm& c, const Args& a) { all_gather_ring(c, a.out, *a.blocks, Ring::all(c.p())); }
}  // namespace

extern const AlgorithmCard all_gather_ring_card{
    {Collective::all_gather, Algo::ring, "Grama et al., Algorithm 4.4",
     "(ts + tw*m)*(p-1) + th*(H - min h_i), h_i = hops(i, i+1 mod p), H their sum (on a ring: "
     "(ts + tw*m + th)*(p-1))",
     kRingNeeds, "(ts + tw m)(p - 1)"},
    needs_ring,
    all_gather_ring_cost,
    run};

extern const AlgorithmCard all_gatherv_ring_card{
    {Collective::all_gatherv, Algo::ring,
     "Grama et al., Algorithm 4.4 with uneven blocks: each block goes round in p-1 steps",
     "uneven: (ts + tw*b_max + th)*(p-1), the largest block's p-1 steps (no step is longer); "
     "routed over a mesh or hypercube with th > 0: no closed form",
     kRingNeeds, "(ts + tw m)(p - 1)"},
    needs_ring,
    all_gatherv_ring_cost,
    run};

// The same on the ring of a hypercube in reflected Gray-code order (Grama et al. section 2.7):
// member k is VP gray(k) and passes on the block of VP gray(k - i + 1), every message one link.
extern const AlgorithmCard all_gather_ring_gray_card{
    {Collective::all_gather, Algo::ring,
     "Grama et al., Algorithm 4.4 on the ring embedded in the hypercube by the reflected Gray "
     "code (section 2.7)",
     "(ts + tw*m + th)*(p-1)", kGrayRingNeeds, "(ts + tw m)(p - 1)", "Gray-code ring"},
    needs_gray_ring,
    [](const CostQuery& q) { return all_gather_ring_cost(on_gray_ring(q)); },
    [](const Comm& c, const Args& a) {
      all_gather_ring(c, a.out, *a.blocks, Ring::gray_code(c.p()));
    }};

}  // namespace hypercomm::detail
