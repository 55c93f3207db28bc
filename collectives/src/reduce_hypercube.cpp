// All-to-one reduction on a hypercube: Grama et al., Algorithm 4.3, on root-relative virtual ids
// (my_virtual_id = my_id XOR root, as Algorithm 4.2 does for the broadcast).
//
//   T = (ts + tw*m) * log p        (m = in.size() bytes; the combine is not charged)
//
// Restrictions: p = 2^d; partners are hypercube neighbours. Any associative operator: at step i
// the receiver holds the fold of one aligned 2^i-subcube of REAL ids and the partner the fold of
// the other half of their aligned 2^(i+1)-subcube (XOR with root maps aligned subcubes onto
// aligned subcubes). The half whose real ids have bit i clear is all lower ids, so it goes on the
// left; the receiver's real bit i equals root's bit i. For p = 8, root 0:
//
//   i = 0:  1 -> 0, 3 -> 2, 5 -> 4, 7 -> 6   (sum of {0,1}, {2,3}, {4,5}, {6,7})
//   i = 1:  2 -> 0, 6 -> 4                   (sum of {0..3}, {4..7})
//   i = 2:  4 -> 0                           (sum of {0..7} at the root)
//
// When VPs outnumber cores a small reduction (up to 256 B, or whose p inputs fit in the slot's wide
// inputs, 32 KiB or a group's 16) may instead be a meeting in shared memory (Port::meet_rooted):
// every VP leaves its input there and goes on, the root folds them as these rounds do (the tree of
// aligned blocks of real ids, lower on the left: fold_butterfly_tree), and the model clocks, counts
// and links are these rounds' (tree_up_to, tree_up_from). A larger one, with an operator that
// cannot throw, may be a meeting whose work every VP shares (Comm::meet_in_parts): each VP folds a
// share of the elements of every VP's input in that tree, straight into the root's out
// (reduce_share), so that the p - 1 folds spread over the cores and no VP waits for a message.
#include <algorithm>
#include <vector>

#include "card.hpp"
#include "rooted.hpp"
#include "shares.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

namespace {

// A large reduction's shared meeting: the call with this VP's own room for a share, p input
// pointers and the tree's partial folds (each VP brings a ReduceMember, shares.hpp).
struct ReduceShare {
  const Reducer* op;
  std::size_t bytes;
  int root;
  std::span<const void*> at;
  Bytes scratch;
};

// VP `rank`'s share (shares.hpp): its elements of the root's result, a chunk at a time, folded
// by fold_butterfly_tree as the rounds fold them.
void reduce_share(const void* context, std::span<const void* const> inputs, int rank) {
  const auto& [op, m, root, at, scratch] = *static_cast<const ReduceShare*>(context);
  const std::size_t p = inputs.size();
  const auto member = [&](std::size_t i) -> const ReduceMember& {
    return *static_cast<const ReduceMember*>(inputs[i]);
  };
  const auto [first, last] = share_of(m, op->elem_size, p, static_cast<std::size_t>(rank));
  const std::size_t chunk = tree_chunk_bytes(op->elem_size),
                    levels = tree_levels(static_cast<int>(p));
  const ReduceMember& to = member(static_cast<std::size_t>(root));
  for (std::size_t from = first; from < last; from += chunk) {
    const std::size_t n = std::min(chunk, last - from);
    for (std::size_t i = 0; i < p; ++i) at[i] = member(i).in + from;
    fold_butterfly_tree(op, at, Bytes(to.out + from, n), scratch.first(levels * n));
  }
}

}  // namespace

void reduce_hypercube(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, int root) {
  const int d = log2_of(c.p());
  const int my_id = c.id();
  const int my_virtual_id = my_id ^ root;
  const std::size_t m = in.size();
  if (c.is_call(Collective::reduce) && m < kSharedReduceBytes &&
      c.meet_rooted({d, m, tree_up_to, tree_up_from, nullptr, root}, Port::Flow::to_root, in, out,
                    Port::Results::shared, fold_butterfly_tree, &op))
    return;
  // A share must not throw (Port::meet's part).
  if (c.is_call(Collective::reduce) && m >= kSharedReduceBytes && op.never_throws &&
      c.port.may_meet()) {
    const ReduceMember member{in.data(), out.data()};
    std::vector<const void*, ScratchAllocator<const void*>> at(static_cast<std::size_t>(c.p()));
    Buffer scratch(tree_levels(c.p()) * tree_chunk_bytes(op.elem_size));
    const ReduceShare share{&op, m, root, at, scratch};
    if (c.meet_in_parts({d, m, tree_up_to, tree_up_from, nullptr, root}, &member, reduce_share,
                        &share))
      return;
  }

  // sum: the fold so far. It starts as this VP's own input; the first combine moves it to the
  // root's out or to a temporary (VPs with an odd virtual id send before receiving anything).
  Buffer sum_storage;
  Buffer msg;
  Bytes sum = out;
  if (my_virtual_id != 0 && (my_virtual_id & 1) == 0) {
    sum_storage.resize(m);
    sum = sum_storage;
  }
  if ((my_virtual_id & 1) == 0) msg.resize(m);
  ConstBytes partial = in;

  int mask = 0;
  for (int i = 0; i < d; ++i) {
    const int bit = 1 << i;
    if ((my_virtual_id & mask) == 0) {  // lower i bits are zero: still taking part
      const int partner = (my_virtual_id ^ bit) ^ root;
      if ((my_virtual_id & bit) != 0) {
        c.send(partner, partial);
        return;  // this VP's subcube is folded into the partner's
      }
      // sum = partial op msg when the own half holds the lower ids, else msg op partial; folded
      // as the message lands (Comm::recv_fold).
      c.recv_fold(partner, msg, op, sum, partial, (my_id & bit) != 0);
      partial = sum;
    }
    mask ^= bit;  // set bit i
  }
  // Only the root (virtual id 0) gets here; p >= 2, so partial already is out.
}

namespace {
double reduce_hypercube_cost(const CostQuery& q) {
  return q.d() * (q.w(q.m()) + q.landing_tc() * q.m()) + q.dimension_hops();
}
// The tree's p - 1 messages, each folded (AlgorithmCard::work, where VPs share cores); from
// kSharedReduceBytes with an operator that cannot throw a shared meeting: p - 1 folds, no message.
double reduce_hypercube_work(const CostQuery& q) {
  if (q.bytes >= kSharedReduceBytes && q.shape.never_throws) return (q.p() - 1) * q.tc * q.m();
  return reduce_tree_work(q);
}
}  // namespace

extern const AlgorithmCard reduce_hypercube_card{
    {Collective::reduce, Algo::hypercube, "Grama et al., Algorithm 4.3 (any root via id XOR root)",
     "(ts + tw*m)*log p + th*H", kHypercubeNeeds, "(ts + tw m) log p"},
    needs_hypercube,
    reduce_hypercube_cost,
    [](const Comm& c, const Args& a) { reduce_hypercube(c, a.in, a.out, *a.op, a.root); },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/reduce_hypercube_work};

}  // namespace hypercomm::detail
