// All-to-all reduction (reduce-scatter) on a hypercube: Grama et al., Algorithm 4.8, recursive
// halving.
//
//   T = ts*log p + tw*m*(p - 1)        (m = bytes per block; both variants below)
//
// Restrictions: p = 2^d; partners are hypercube neighbours (my_id XOR 2^i).
//
// Book form (commutative operators), dimensions d-1 down to 0: a VP's range of blocks halves at
// every step; it sends the partner's half and combines the partner's contribution to its own
// half, so that each step moves half of what the previous one did. p = 8, VP 5 (101):
//
//   step i = 2: partner 1  sends blocks 0-3   keeps blocks 4-7
//   step i = 1: partner 7  sends blocks 6-7   keeps blocks 4-5
//   step i = 0: partner 4  sends block 4      keeps block 5      -> result := msg[5]
//
// After the step of dimension i a VP's blocks hold the fold over the VPs that differ from it in
// bits i..d-1 (VP 5 after i = 2: {1, 5}), a set that is not contiguous in id, so a
// non-commutative operator would be folded out of order (x0 x2 x1 x3 for p = 4).
//
// Order-preserving form (!op.commutative), dimensions 0 up to d-1: after the step of dimension
// i a VP's blocks hold the fold over the 2^(i+1) VPs of its (i+1)-dimensional subcube, a
// contiguous id range, combined with the lower id on the left. It keeps the blocks whose low
// bits agree with its id, which are strided, so each step packs the partner's blocks into a
// send buffer (same messages, same T). p = 8, VP 5:
//
//   step i = 0: partner 4  sends blocks 0 2 4 6   keeps blocks 1 3 5 7
//   step i = 1: partner 7  sends blocks 3 7       keeps blocks 1 5
//   step i = 2: partner 1  sends block 1          keeps block 5
//
// Blocks may be uneven (the all-reduce two-phase split). out may be in's own block (in place).
//
// When VPs outnumber cores, equal blocks of a small vector may instead be reduced in one meeting
// in shared memory (Port::meet): the same rounds on the model clocks and the links, and every
// VP's block bit for bit, since the last VP to arrive folds each block in the tree its rounds
// fold it in: the butterfly's over the ids in order (the order-preserving form), over the ids
// bit-reversed (the book's form: its first split is by bit 0, evens on the left, then by bit 1
// ...).

#include <algorithm>
#include <bit>
#include <utility>
#include <vector>

#include "card.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {
namespace {

// Either form's round i sends p/2^(i+1) blocks (halving, comm.hpp).

struct ScatterMeeting {
  const Reducer* op;
  bool bit_reversed;  // the book's form
};

// Every VP's result: block j of the fold, for VP j. The tree folds many blocks at once: element
// by element it is the tree each block would get alone (the same bits), in a few calls of op
// over whole slices instead of p - 1 calls for each block, reading each input in order. A slice
// holds p / log2 p blocks, so that its tree's partial folds fit the scratch (p blocks).
void fold_blocks(const void* context, std::span<const void* const> inputs, Bytes result,
                 Bytes scratch) {
  const auto& [op, reversed] = *static_cast<const ScatterMeeting*>(context);
  const std::size_t p = inputs.size();
  const std::size_t m = result.size() / p;
  if (m == 0) return;
  const int d = std::countr_zero(p);
  const std::size_t slice = std::max<std::size_t>(1, p / std::max(1, d)) * m;
  thread_local std::vector<const void*> order;  // the slice of each input, in the tree's order
  order.resize(p);
  for (std::size_t at = 0; at < result.size(); at += slice) {
    for (std::size_t k = 0; k < p; ++k) {
      const auto from = static_cast<std::size_t>(reversed ? bit_reversed(static_cast<int>(k), d)
                                                          : static_cast<int>(k));
      order[k] = static_cast<const std::byte*>(inputs[from]) + at;
    }
    fold_butterfly_tree(op, order, result.subspan(at, std::min(slice, result.size() - at)),
                        scratch);
  }
}

// Algorithm 4.8: contiguous halves, dimensions d-1 down to 0.
void recursive_halving(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                       const Reducer& op) {
  const int my_id = c.id();
  const int d = log2_of(c.p());
  Buffer work(in.size());  // my partial sums, at the blocks' own offsets
  // Room for the larger half: every range received is an aligned half, quarter, ... of the blocks.
  const int p = c.p();
  Buffer temp(std::max(blocks.offset(p / 2), blocks.offset(p) - blocks.offset(p / 2)));
  ConstBytes msg = in;  // the book's msg: in before the first combine, work after
  int recloc = 0;       // first block of my current range
  for (int i = d - 1; i >= 0; --i) {
    const int half = 1 << i;
    const int partner = my_id ^ half;
    const int senloc = recloc + (partner & half);
    recloc += my_id & half;
    const Bytes received = Bytes(temp).first(blocks.range(in, recloc, recloc + half).size());
    const ConstBytes mine = blocks.range(msg, recloc, recloc + half);
    const Bytes dst = i == 0 ? out : blocks.range(Bytes(work), recloc, recloc + half);
    // dst = received op mine when the partner holds the lower ids, else mine op received; in the
    // last step (dst is out, not sent on) folded as the partner's half lands (Comm::sendrecv_fold).
    c.sendrecv_fold(partner, blocks.range(msg, senloc, senloc + half), received, op, dst, mine,
                    partner < my_id, i == 0);
    msg = work;
  }
}

// The order-preserving variant: dimensions 0 up to d-1, strided blocks packed in block order.
void recursive_halving_in_order(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                                const Reducer& op) {
  const int my_id = c.id();
  const int p = c.p();
  const int d = log2_of(p);
  Buffer first_buffer(in.size());
  Buffer second_buffer(in.size());
  Buffer send_buffer(in.size());
  Buffer recv_buffer(in.size());
  // Before step i, msg packs blocks low + j*2^i for j = 0 .. p/2^i - 1, low = my_id mod 2^i.
  ConstBytes msg = in;
  Bytes next = first_buffer;
  Bytes spare = second_buffer;
  for (int i = 0; i < d; ++i) {
    const int stride = 1 << i;
    const int partner = my_id ^ stride;
    const int my_bit = (my_id >> i) & 1;
    const int low = my_id & (stride - 1);
    const int count = p >> i;
    // Pack the partner's blocks (odd or even j) for sending; size what comes back.
    std::size_t sent = 0;
    std::size_t kept = 0;
    std::size_t at = 0;  // offset of packed block j in msg
    for (int j = 0; j < count; ++j) {
      const std::size_t size = blocks.size(low + j * stride);
      if ((j & 1) != my_bit) {
        copy_bytes(Bytes(send_buffer).subspan(sent, size), msg.subspan(at, size));
        sent += size;
      } else {
        kept += size;
      }
      at += size;
    }
    const Bytes received = Bytes(recv_buffer).first(kept);
    c.sendrecv_to_combine(partner, ConstBytes(send_buffer).first(sent), received);
    // Combine my kept blocks with the partner's, lower id on the left, into the next packing.
    const Bytes dst = i == d - 1 ? out : next.first(kept);
    at = 0;
    std::size_t done = 0;
    for (int j = 0; j < count; ++j) {
      const std::size_t size = blocks.size(low + j * stride);
      if ((j & 1) == my_bit) {
        const std::byte* mine = msg.data() + at;
        const std::byte* theirs = received.data() + done;
        std::byte* result = dst.data() + done;
        if (partner < my_id) {
          op(result, theirs, mine, size);
        } else {
          op(result, mine, theirs, size);
        }
        done += size;
      }
      at += size;
    }
    msg = next;
    std::swap(next, spare);
  }
}

}  // namespace

void reduce_scatter_hypercube(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                              const Reducer& op) {
  if ((c.is_call(Collective::reduce_scatter) || c.is_call(Collective::reduce_scatterv)) &&
      in.size() <= kMeetingBytes && blocks.all_equal()) {
    const ScatterMeeting context{&op, op.commutative};
    const Port::Rounds rounds{log2_of(c.p()), blocks.size(0),
                              op.commutative ? descending_partner : butterfly_partner,
                              op.commutative ? descending_partner : butterfly_partner, halving};
    if (c.meet(rounds, in.data(), fold_blocks, &context, out, Port::Results::per_vp, out.size()))
      return;
  }
  if (op.commutative) {
    recursive_halving(c, in, out, blocks, op);
  } else {
    recursive_halving_in_order(c, in, out, blocks, op);
  }
}

// The dual of the all-gather (Grama et al. section 4.2) costs what it costs:
// all_gather_hypercube.cpp.
double all_gather_hypercube_cost(const CostQuery& q);
double all_gatherv_hypercube_cost(const CostQuery& q);

namespace {
// R(g) over the ids first .. first + size - 1 (commutative, th = 0): the halves exchange their
// partials of each other's blocks, the larger message setting the step.
double uneven_reduce_scatter(const CostQuery& q, int first, int size) {
  if (size == 1) return 0;
  const int half = size / 2;
  return q.w(std::max(q.rank_bytes(first, half), q.rank_bytes(first + half, half))) +
         std::max(uneven_reduce_scatter(q, first, half),
                  uneven_reduce_scatter(q, first + half, half));
}
// Selection: the all-gather's; textbook_time_v: equal counts as reduce_scatter, else R
// (commutative, th = 0).
double reduce_scatterv_hypercube_cost(const CostQuery& q) {
  if (q.selection) return all_gatherv_hypercube_cost(q);
  if (q.equal_counts()) return all_gather_hypercube_cost(q.as_regular());
  if (q.th() != 0 || !q.shape.commutative) return kNoClosedForm;
  return uneven_reduce_scatter(q, 0, q.p());
}
void run(const Comm& c, const Args& a) {
  reduce_scatter_hypercube(c, a.in, a.out, *a.blocks, *a.op);
}
}  // namespace

extern const AlgorithmCard reduce_scatter_hypercube_card{
    {Collective::reduce_scatter, Algo::hypercube,
     "Grama et al., Algorithm 4.8 (non-commutative: dimensions 0 .. d-1, strided blocks)",
     "ts*log p + tw*m*(p-1) + th*H", kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    needs_hypercube,
    all_gather_hypercube_cost,
    run};

extern const AlgorithmCard reduce_scatterv_hypercube_card{
    {Collective::reduce_scatterv, Algo::hypercube,
     "Grama et al., Algorithm 4.8 with uneven blocks (non-commutative: dimensions 0 .. d-1, "
     "strided blocks)",
     "uneven, commutative: R(all p blocks), R(g) = ts + tw*max(B(g1), B(g2)) + max(R(g1), "
     "R(g2)) over g's halves, R(one block) = 0 (th = 0; th > 0 or non-commutative: no closed "
     "form); equal blocks of m: ts*log p + tw*m*(p-1) + th*H",
     kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    needs_hypercube,
    reduce_scatterv_hypercube_cost,
    run};

}  // namespace hypercomm::detail
