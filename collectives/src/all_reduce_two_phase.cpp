// All-reduce by split messages: Grama et al. section 4.7 (all-reduce = reduce-scatter +
// all-gather). The vector is cut into p blocks by Blocks(m, elem_size, p) (uneven when the
// element count is not a multiple of p; some blocks may be empty); VP k reduces block k over
// all VPs, straight into out, and the all-gather then spreads the blocks, in place in out.
// The family is chosen by select.cpp, so every VP runs the same pair:
//
//   hypercube (p = 2^d): reduce_scatter_hypercube + all_gather_hypercube
//       T = 2*(ts*log p + tw*m*(p - 1)/p)                             (m divisible by p)
//   ring:  reduce_scatter_ring + all_gather_ring over Ring::all(p)
//       T = 2*(ts*(p - 1) + tw*m*(p - 1)/p)
//       non-commutative: T = 2*ts*(p - 1) + tw*m*(3p - 4)/p
//   mesh:  reduce_scatter_mesh + all_gather_mesh
//       T = 2*(ts*(rows + cols - 2) + tw*m*(p - 1)/p)
//       non-commutative: the reduce-scatter costs as on reduce_scatter_mesh's card
//
// Restrictions: those of the family's algorithms.
//
// in may be out: every reduce-scatter here reads in's own block k only in the combine that
// writes out's block k, and writes nothing else of out, so no copy of in is needed.
//
// When VPs outnumber cores, the hypercube pair of a large vector (in equal blocks, or any with a
// commutative operator), with an operator that cannot throw, may be a meeting whose work every VP
// shares (Comm::meet_in_parts): each VP folds its share of the elements of every VP's input in the
// tree the reduce-scatter folds each block in (the butterfly's over the ids, bit-reversed in the
// book's form: fold_blocks in reduce_scatter_hypercube.cpp), and writes that share of the result
// into every VP's out. The rounds played on the clocks and counted on the links are the pair's: the
// reduce-scatter's log p halving exchanges, then the all-gather's log p doubling ones. Each VP
// needs its core twice (to come, then for its share) where the messages need it 2 log p times.

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "card.hpp"
#include "shares.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

namespace {

// What each VP brings to the shared meeting, and the call with this VP's own room for a share:
// p input pointers in the tree's order, the tree's partial folds and the share's result.
struct AllReduceMember {
  const std::byte* in;
  std::byte* out;
  const Blocks* blocks;
};
struct AllReduceShare {
  const Reducer* op;
  std::size_t bytes;
  bool bit_reversed;  // the book's form (a commutative operator)
  std::span<const void*> at;
  Bytes scratch;
  Bytes result;
};

// The least a VP passes to the shared meeting, where automatic takes two_phase on a hypercube:
// 4 to 64 VPs on 2 cores, against the messages, 0.98-1.04x the time at 8 KiB for 4 and 8 VPs and
// 0.43-0.48x for 16, 0.35-0.69x from 16 KiB to 256 KiB (docs/performance.md).
constexpr std::size_t kSharedAllReduceBytes = 8 * 1024;

// VP `rank`'s share (shares.hpp), a chunk at a time: the fold of every VP's elements, then the
// copies into every VP's out. Only this VP reads or writes these bytes of any in or out, so an
// in that is its out is read before it is written.
void all_reduce_share(const void* context, std::span<const void* const> inputs, int rank) {
  const auto& [op, m, reversed, at, scratch, result] = *static_cast<const AllReduceShare*>(context);
  const std::size_t p = inputs.size();
  const int d = std::countr_zero(p);
  const auto member = [&](std::size_t i) -> const AllReduceMember& {
    return *static_cast<const AllReduceMember*>(inputs[i]);
  };
  const auto [first, last] = share_of(m, op->elem_size, p, static_cast<std::size_t>(rank));
  const std::size_t chunk = tree_chunk_bytes(op->elem_size),
                    levels = tree_levels(static_cast<int>(p));
  for (std::size_t from = first; from < last; from += chunk) {
    const std::size_t n = std::min(chunk, last - from);
    for (std::size_t k = 0; k < p; ++k) {
      const auto j = reversed ? bit_reversed(static_cast<int>(k), d) : static_cast<int>(k);
      at[k] = member(static_cast<std::size_t>(j)).in + from;
    }
    fold_butterfly_tree(op, at, result.first(n), scratch.first(levels * n));
    for (std::size_t j = 0; j < p; ++j) std::memcpy(member(j).out + from, result.data(), n);
  }
}

// The pair's rounds as one pattern: rounds 0 .. d-1 the reduce-scatter's (p/2^(k+1) blocks, the
// dimensions from the highest down in the book's form, from the lowest up in order), rounds
// d .. 2d-1 the all-gather's (2^k blocks, the dimensions from the lowest up).
int pair_partner_book(int id, int round, int p) noexcept {
  const int d = std::countr_zero(static_cast<unsigned>(p));
  return round < d ? descending_partner(id, round, p) : butterfly_partner(id, round - d, p);
}
int pair_partner_in_order(int id, int round, int p) noexcept {
  const int d = std::countr_zero(static_cast<unsigned>(p));
  return butterfly_partner(id, round < d ? round : round - d, p);
}
std::size_t pair_scale(int round, int p) noexcept {
  const int d = std::countr_zero(static_cast<unsigned>(p));
  return round < d ? halving(round, p) : doubling(round - d, p);
}
// The bytes VP id sends in a round of the book's form over uneven blocks: in the reduce-scatter's
// round k the partner's aligned 2^(d-1-k) blocks (recursive_halving's senloc), in the
// all-gather's round k its own aligned 2^k.
std::size_t pair_sent_bytes_book(const void* member, int id, int round, int p) noexcept {
  const Blocks& blocks = *static_cast<const AllReduceMember*>(member)->blocks;
  const int d = std::countr_zero(static_cast<unsigned>(p));
  const int size = round < d ? p >> (round + 1) : 1 << (round - d);
  const int first = (round < d ? id ^ size : id) & ~(size - 1);
  return blocks.offset(first + size) - blocks.offset(first);
}

bool meet_in_shares(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                    const Reducer& op) {
  // A share must not throw (Port::meet's part).
  // Uneven blocks: the book's form only, whose rounds send aligned ranges of blocks (the
  // order-preserving form packs strided ones).
  const bool even = blocks.all_equal();
  if (!c.is_call(Collective::all_reduce) || out.size() < kSharedAllReduceBytes ||
      !op.never_throws || (!even && !op.commutative) || !c.port.may_meet())
    return false;
  const int p = c.p();
  const auto partner = op.commutative ? pair_partner_book : pair_partner_in_order;
  Port::Rounds rounds{2 * log2_of(p), blocks.size(0), partner, partner, pair_scale};
  if (!even) rounds.sent_bytes = pair_sent_bytes_book;
  const AllReduceMember member{in.data(), out.data(), &blocks};
  std::vector<const void*, ScratchAllocator<const void*>> at(static_cast<std::size_t>(p));
  const std::size_t chunk = tree_chunk_bytes(op.elem_size), levels = tree_levels(p);
  Buffer scratch((levels + 1) * chunk);
  const AllReduceShare share{&op,
                             out.size(),
                             op.commutative,
                             at,
                             Bytes(scratch).first(levels * chunk),
                             Bytes(scratch).subspan(levels * chunk)};
  return c.meet_in_parts(rounds, &member, all_reduce_share, &share);
}

}  // namespace

void all_reduce_two_phase(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, Family f) {
  const int p = c.p();
  const Blocks blocks(out.size(), op.elem_size, p);
  const Bytes mine = blocks.block(out, c.id());
  switch (f) {
    case Family::hypercube:
      if (meet_in_shares(c, in, out, blocks, op)) return;
      reduce_scatter_hypercube(c, in, mine, blocks, op);
      all_gather_hypercube(c, out, blocks);
      break;
    case Family::ring:
      if (meet_all_reduce_ring(c, in, out, blocks, op, Ring::all(p))) return;
      reduce_scatter_ring(c, in, mine, blocks, op);
      all_gather_ring(c, out, blocks, Ring::all(p));
      break;
    case Family::mesh:
      reduce_scatter_mesh(c, in, mine, blocks, op, Grid::of(c.topology()));
      all_gather_mesh(c, out, blocks, Grid::of(c.topology()));
      break;
  }
}

double all_reduce_ring_cost(const CostQuery& q);  // all_reduce_ring.cpp: the ring pair

namespace {
// b = m/p; the hypercube pair's step i moves the aligned 2^i blocks holding block 0 (uneven,
// commutative: B(2^i), the bytes of blocks 0 .. 2^i - 1).
double all_reduce_two_phase_cost(const CostQuery& q) {
  const int p = q.p();
  const Family f = q.family();
  if (f == Family::ring) return all_reduce_ring_cost(q);
  const double block = q.block(q.m(), p), fold = q.reduce_scatter_folds(block);
  const bool even = q.even(q.bytes, p);
  if (f == Family::hypercube && q.shape.commutative) {
    const Blocks b = q.blocks(q.bytes, p);
    double s = 0;
    for (int i = 0; i < q.d(); ++i) {
      const double bytes = q.selection ? block * (1 << i) : static_cast<double>(b.offset(1 << i));
      s += q.ts() + q.tw() * bytes + q.th() * q.t.distance(0, 1 << i);
    }
    return 2 * s + fold;
  }
  if (f == Family::hypercube && even)
    return 2 * (q.d() * q.ts() + q.tw() * block * (p - 1) + q.dimension_hops()) + fold;
  if (f == Family::mesh && even && q.shape.commutative)
    return 2 * ((q.ts() + q.mesh_th()) * (q.t.rows() + q.t.cols() - 2) + q.tw() * block * (p - 1)) +
           fold;
  return kNoClosedForm;
}
}  // namespace

extern const AlgorithmCard all_reduce_two_phase_card{
    {Collective::all_reduce, Algo::two_phase,
     "Grama et al., section 4.7.3: reduce-scatter, then all-gather",
     "hypercube 2*(ts*log p + tw*b*(p-1) + th*H), b = m/p (uneven, commutative: 2*sum_i "
     "(ts + tw*B(2^i) + th*hops(2^i)), B(j) = bytes of blocks 0..j-1); ring as all_reduce "
     "ring; mesh 2*((ts + th)*(rows+cols-2) + tw*b*(p-1)); otherwise no closed form",
     kFamilyNeeds, "about 2 (ts log p + tw m)"},
    needs_family,
    all_reduce_two_phase_cost,
    [](const Comm& c, const Args& a) { all_reduce_two_phase(c, a.in, a.out, *a.op, a.family); },
    family_counts_hops};

}  // namespace hypercomm::detail
