// All-reduce on a ring: a ring reduce-scatter (Grama et al., Algorithm 4.5) followed by a ring
// all-gather (Algorithm 4.4) over the p blocks of the vector (section 4.7's split-message form):
//
//   commutative:     T = 2*(ts*(p - 1) + tw*m*(p - 1)/p)         (m = bytes, m divisible by p)
//   non-commutative: T = 2*ts*(p - 1) + tw*m*(3p - 4)/p           (reduce-scatter in order)
//
// Restrictions: neighbours only (the reduce-scatter sends left, the all-gather right); any p.
//
// The vector is split by Blocks(m, elem_size, p): block k has n/p elements, one more for
// k < n mod p, so the blocks may be uneven and some may be empty (then the steps that carry
// them cost ts only). p = 4, n = 6 elements: blocks of 2 2 1 1 elements.
//
//   reduce-scatter: VP k gets block k folded over VPs 0..p-1, straight into out's block k
//   all-gather:     every VP gets every block, straight into place
//
// in may be out: the reduce-scatter reads in's block k only in its last combine, which writes
// out's block k.
//
// When VPs outnumber cores, the pair on a ring of the whole group in id order (this card's, and
// two_phase's ring family: what automatic runs on a ring of any p that is not a power of two),
// with a commutative operator that cannot throw, may be a meeting in shared memory instead: each
// of the 2(p - 1) steps would cost every VP a switch (12 VPs on 2 cores, 8 B: 143-157 us a call
// against Open MPI yielding's 38-40), the meeting about one. Block j is folded as the ring folds
// it, x_j op (x_(j+1) op (... op (x_(j-2) op x_(j-1)))), ids mod p (the partial starts at VP
// j - 1 and travels left, each VP putting its own block on the left), bit for bit: up to
// kMeetingBytes by the last VP to arrive, which folds every block, beyond it by each VP its own
// block, which it copies into every VP's out (the reduce-scatter's work, then the all-gather's).
// The rounds played on the clocks and counted on the links are the pair's: p - 1 steps to the
// left, each sending the partial of block (id + i) mod p, then p - 1 to the right, each the
// block that came in the step before. A non-commutative operator (the order-preserving form's
// two partials), one that may throw, or the Gray-code ring sends the messages.

#include <cstring>

#include "blocks_meeting.hpp"
#include "card.hpp"
#include "shares.hpp"
#include "symmetric.hpp"
#include "symmetric_util.hpp"

namespace hypercomm::detail {

namespace {

// What each VP brings to the meeting is a BlocksMember (blocks_meeting.hpp); a part, the room
// it folds a chunk in, and where the folded block goes: every member's out at the block's offset
// (the all-reduce), or its own member's out alone (the reduce-scatter's result, that block only).
struct RingFold {
  const Reducer* op;
  Bytes scratch;
  bool to_every_out = true;
};

// Bytes [from, from + n) of block j folded over the p members in the ring's order into acc.
void fold_as_ring(const Reducer& op, std::span<const void* const> members, int j, std::size_t from,
                  std::size_t n, std::byte* acc) {
  const int p = static_cast<int>(members.size());
  const std::size_t at = member_of(members, 0).blocks->offset(j) + from;
  std::memcpy(acc, member_of(members, (j - 1 + p) % p).in + at, n);
  for (int t = 2; t <= p; ++t) op(acc, member_of(members, (j - t + p) % p).in + at, acc, n);
}

// Port::Combine (up to kMeetingBytes): every block, into the result every VP copies.
void fold_every_block(const void* context, std::span<const void* const> members, Bytes result,
                      Bytes /*scratch*/) {
  const Reducer& op = *static_cast<const RingFold*>(context)->op;
  const Blocks& blocks = *member_of(members, 0).blocks;
  for (int j = 0; j < blocks.count(); ++j)
    if (const std::size_t n = blocks.size(j); n != 0)
      fold_as_ring(op, members, j, 0, n, result.data() + blocks.offset(j));
}

// Port::Part: member `rank`'s own block, a chunk at a time, into every member's out, or its own
// (only this member reads or writes these bytes of any in or out, so an in that is its out is
// read first).
void fold_own_block(const void* context, std::span<const void* const> members, int rank) {
  const auto& [op, scratch, to_every_out] = *static_cast<const RingFold*>(context);
  const Blocks& blocks = *member_of(members, 0).blocks;
  const std::size_t size = blocks.size(rank), at = blocks.offset(rank);
  for (std::size_t from = 0; from < size; from += scratch.size()) {
    const std::size_t n = std::min(scratch.size(), size - from);
    fold_as_ring(*op, members, rank, from, n, scratch.data());
    if (!to_every_out) {
      std::memcpy(member_of(members, rank).out + from, scratch.data(), n);
      continue;
    }
    for (std::size_t k = 0; k < members.size(); ++k)
      std::memcpy(member_of(members, static_cast<int>(k)).out + at + from, scratch.data(), n);
  }
}

// The pair's 2(p - 1) steps as one pattern: rounds 0 .. p-2 the reduce-scatter's (to the left),
// rounds p-1 .. 2p-3 the all-gather's (to the right).
int pair_to(int id, int round, int p) noexcept {
  return round < p - 1 ? (id - 1 + p) % p : (id + 1) % p;
}
int pair_from(int id, int round, int p) noexcept {
  return round < p - 1 ? (id + 1) % p : (id - 1 + p) % p;
}
// Uneven blocks: step i of the reduce-scatter sends block (id + i) mod p's partial, step i of the
// all-gather block (id - i + 1) mod p.
std::size_t pair_sent_bytes(const void* member, int id, int round, int p) noexcept {
  const Blocks& blocks = *static_cast<const BlocksMember*>(member)->blocks;
  const int block = round < p - 1 ? (id + round + 1) % p : (id - (round - (p - 1)) + p) % p;
  return blocks.size(block);
}

// Whether a commutative operator that cannot throw folds on a ring of the whole group in id order
// where VPs may meet (the meetings below; the Gray-code ring and a mesh's rows send messages).
bool may_meet_on_ring(const Comm& c, const Reducer& op, const Ring& g) noexcept {
  return op.commutative && op.never_throws && !g.gray_order && g.first == 0 && g.stride == 1 &&
         g.size == c.p() && c.p() >= 2 && c.port.may_meet();
}
}  // namespace

bool meet_reduce_scatter_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                              const Reducer& op, const Ring& g) {
  const int p = c.p();
  if (!(c.is_call(Collective::reduce_scatter) || c.is_call(Collective::reduce_scatterv)) ||
      in.empty() || !may_meet_on_ring(c, op, g))
    return false;
  // The reduce-scatter's p - 1 steps to the left (the pair's first half).
  Port::Rounds rounds{p - 1, 0, pair_to, pair_from};
  if (blocks.all_equal())
    rounds.bytes = blocks.size(0);
  else
    rounds.sent_bytes = pair_sent_bytes;
  const BlocksMember member{in.data(), out.data(), &blocks};
  if (in.size() <= kMeetingBytes && blocks.all_equal()) {  // VP i takes block i of the result
    const RingFold fold{&op, {}};
    return c.meet(rounds, &member, fold_every_block, &fold, out, Port::Results::per_vp, out.size());
  }
  Buffer scratch(std::min(tree_chunk_bytes(op.elem_size), blocks.size(c.id()) + op.elem_size));
  const RingFold fold{&op, scratch, /*to_every_out=*/false};
  return c.meet_in_parts(rounds, &member, fold_own_block, &fold);
}

bool meet_all_reduce_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                          const Reducer& op, const Ring& g) {
  const int p = c.p();
  if (!c.is_call(Collective::all_reduce) || out.empty() || !may_meet_on_ring(c, op, g))
    return false;
  Port::Rounds rounds{2 * (p - 1), 0, pair_to, pair_from};
  if (blocks.all_equal())
    rounds.bytes = blocks.size(0);
  else
    rounds.sent_bytes = pair_sent_bytes;
  const BlocksMember member{in.data(), out.data(), &blocks};
  if (out.size() <= kMeetingBytes) {
    const RingFold fold{&op, {}};
    return c.meet(rounds, &member, fold_every_block, &fold, out, Port::Results::shared, out.size());
  }
  Buffer scratch(std::min(tree_chunk_bytes(op.elem_size), blocks.size(c.id()) + op.elem_size));
  const RingFold fold{&op, scratch};
  return c.meet_in_parts(rounds, &member, fold_own_block, &fold);
}

void all_reduce_ring(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, const Ring& g) {
  const Blocks blocks(out.size(), op.elem_size, c.p());
  if (meet_all_reduce_ring(c, in, out, blocks, op, g)) return;
  // Member rank_of(id) reduces the block of its VP (its slot is its id).
  reduce_scatter_ring_group(c, in, blocks.block(out, c.id()), blocks, g, op);
  all_gather_ring(c, out, blocks, g);
}

// Algorithm 4.5 then 4.4: the largest block goes all the way round twice. Routed over a mesh or
// hypercube with th > 0 (routes of different lengths), or non-commutative with uneven blocks or
// th > 0: no closed form.
double all_reduce_ring_cost(const CostQuery& q) {
  const int p = q.p();
  const double block = q.block(q.m(), p), fold = q.tc * block * (p - 1);
  if (q.ring_th() != q.th()) return kNoClosedForm;
  if (q.shape.commutative) return 2 * (p - 1) * (q.w(block) + q.th()) + fold;
  if (q.even(q.bytes, p) && q.th() == 0)
    return 2 * q.ts() * (p - 1) + q.tw() * block * (3 * p - 4) + fold;
  return kNoClosedForm;
}

extern const AlgorithmCard all_reduce_ring_card{
    {Collective::all_reduce, Algo::ring,
     "Grama et al., section 4.7.3 on a ring: Algorithm 4.5, then Algorithm 4.4",
     "2*(p-1)*(ts + tw*b_p + th); non-commutative: 2*ts*(p-1) + tw*b_p*(3p-4) (th = 0, "
     "even blocks; otherwise no closed form)",
     kRingNeeds, nullptr},
    needs_ring,
    all_reduce_ring_cost,
    [](const Comm& c, const Args& a) { all_reduce_ring(c, a.in, a.out, *a.op, Ring::all(c.p())); }};

// The same on the ring of a hypercube in reflected Gray-code order (Grama et al. section 2.7):
// every message one link; the partials fold in ring order, so a commutative operator only.
extern const AlgorithmCard all_reduce_ring_gray_card{
    {Collective::all_reduce, Algo::ring,
     "Grama et al., section 4.7.3 on the ring embedded in the hypercube by the reflected Gray "
     "code (section 2.7): Algorithm 4.5, then Algorithm 4.4",
     "2*(p-1)*(ts + tw*b_p + th)", kGrayRingCommutativeNeeds, nullptr, "Gray-code ring"},
    needs_gray_ring,
    [](const CostQuery& q) { return all_reduce_ring_cost(on_gray_ring(q)); },
    [](const Comm& c, const Args& a) {
      all_reduce_ring(c, a.in, a.out, *a.op, Ring::gray_code(c.p()));
    },
    nullptr,
    false};

}  // namespace hypercomm::detail
