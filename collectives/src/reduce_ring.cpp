// All-to-one reduction over the members of a Ring (the whole machine, a mesh row or a mesh
// column): the two-way ring broadcast reversed (CS 584 lecture notes: "reduction uses the
// broadcast reversed with the operation at each node"). Each arm's far end sends its input
// toward the root; every arm member folds in its own input and passes the partial on; the root
// folds both arms' partials with its own input.
//
//   T = (ts + tw*m) * floor(n/2)          (n = g.size members, m = in.size() bytes)
//     non-commutative op and a root strictly inside the member order (0 < r < n-1):
//   T = (ts + tw*m) * max(r, n-1-r)
//
// The root receives both arms in the same steps (a receive costs the receiver nothing but the
// wait), so T is the longer arm: a = floor(n/2) steps with arms a and n-1-a.
// Order: the result must be the fold over member ranks 0 .. n-1 in order (members of g are in
// increasing id order). An arm whose ranks run past n-1 to 0 would fold a high range before a
// low one, so for a non-commutative op the arms are cut where they cannot wrap: the up arm is
// ranks r+1 .. n-1, the down arm ranks r-1 .. 0 (a one-way chain for each side), unless the root
// is rank 0 or n-1, where the balanced arms never wrap. Up-arm members prepend their input
// (their ranks are below everything farther out), down-arm members append it; the root folds
// (rank 0)   in . U . D,      (rank n-1)   U . D . in,      (otherwise)   D . in . U.
// Restrictions: messages go between ring neighbours of g only.
//
// When VPs outnumber cores, a small reduction (up to 256 B, or whose p inputs fit in the slot's
// wide inputs, 32 KiB or a group's 16) on a ring of the whole group in id order, along the balanced
// arms, may instead be a meeting in shared memory (Port::meet_rooted, as the hypercube's): every VP
// leaves its input there and goes on, and the root folds them as the arms do (fold_ring_arms); the
// arms' steps play on the model clocks and the links (ring_in_to, ring_in_from: ranks relative to
// the root round the ring). A large one (32 KiB or more), with an operator that cannot throw, may
// be a meeting whose work every VP shares (Comm::meet_in_parts): each VP folds its share of the
// elements of every VP's input as the arms do, straight into the root's out (ring_reduce_share), so
// that the p - 1 folds spread over the cores and no VP waits for a message.
#include <algorithm>
#include <cstring>
#include <vector>

#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"
#include "shares.hpp"

namespace hypercomm::detail {

// The balanced arms' fold, by the root of a meeting (Port::Combine; inputs[k]: member k's):
// U = in(1) . (in(2) . ( ... . in(a))) from the up arm,
// D = ((in(n-b) . in(n-b+1)) . ... ) . in(n-1) from the down arm (in(v): the input of the member
// v ranks past the root), then the root's fold of the two with its own input, each as
// reduce_arms folds it. scratch: 2 results (n >= 3).
void fold_ring_arms(const void* context, std::span<const void* const> inputs, Bytes result,
                    Bytes scratch) {
  // Not a structured binding: the lambda below uses root, which Clang before 16 cannot capture.
  const ArmsFold& fold = *static_cast<const ArmsFold*>(context);
  const Reducer* const op = fold.op;
  const int root = fold.root;
  const int n = static_cast<int>(inputs.size()), a = n / 2, b = (n - 1) / 2;
  const std::size_t m = result.size();
  const auto in = [&](int v) {
    return static_cast<const std::byte*>(inputs[static_cast<std::size_t>((root + v) % n)]);
  };
  const std::byte* up = in(a);
  for (int v = a - 1; v >= 1; --v) {
    (*op)(scratch.data(), in(v), up, m);
    up = scratch.data();
  }
  const std::byte* down = b > 0 ? in(n - b) : nullptr;
  for (int v = n - b + 1; v < n; ++v) {
    (*op)(scratch.data() + m, down, in(v), m);
    down = scratch.data() + m;
  }
  std::byte* const out = result.data();
  if (root == 0) {  // in . U . D
    (*op)(out, in(0), up, m);
    if (down != nullptr) (*op)(out, out, down, m);
  } else if (root == n - 1) {  // U . (D . in)
    if (down != nullptr) {
      (*op)(out, down, in(0), m);
      (*op)(out, up, out, m);
    } else {
      (*op)(out, up, in(0), m);
    }
  } else {  // (D . in) . U, n >= 3
    (*op)(out, down, in(0), m);
    (*op)(out, out, up, m);
  }
}

// VP `rank`'s share (shares.hpp): its elements of the root's result, a chunk at a time, folded
// by fold_ring_arms as the arms fold them, and copied into every other member's out where the
// call asks (the all-reduce). No other share reads or writes these bytes of any in or out, and
// each chunk is read whole before any out is written.
void ring_reduce_share(const void* context, std::span<const void* const> inputs, int rank) {
  const auto& [fold, m, at, scratch, to_every_out] = *static_cast<const RingReduceShare*>(context);
  const std::size_t p = inputs.size();
  const auto member = [&](std::size_t i) -> const ReduceMember& {
    return *static_cast<const ReduceMember*>(inputs[i]);
  };
  const std::size_t elem = fold.op->elem_size;
  const auto [first, last] = share_of(m, elem, p, static_cast<std::size_t>(rank));
  const std::size_t chunk = tree_chunk_bytes(elem);
  const auto root = static_cast<std::size_t>(fold.root);
  std::byte* const root_out = member(root).out;
  for (std::size_t from = first; from < last; from += chunk) {
    const std::size_t n = std::min(chunk, last - from);
    for (std::size_t i = 0; i < p; ++i) at[i] = member(i).in + from;
    fold_ring_arms(&fold, at, Bytes(root_out + from, n), scratch.first(2 * n));
    if (to_every_out)
      for (std::size_t i = 0; i < p; ++i)
        if (i != root) std::memcpy(member(i).out + from, root_out + from, n);
  }
}

void reduce_ring(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, int root,
                 const Ring& g) {
  const int n = g.size, r = g.rank_of(root);
  const bool ordered_arms = !op.commutative && r != 0 && r != n - 1;
  if (!ordered_arms && whole_group_ring(c, g) && c.is_call(Collective::reduce) &&
      in.size() < kSharedReduceBytes) {
    const ArmsFold fold{&op, root};
    if (c.meet_rooted(ring_in_rounds(n, in.size(), root), Port::Flow::to_root, in, out,
                      Port::Results::shared, fold_ring_arms, &fold))
      return;
  }
  // A share must not throw (Port::meet's part).
  if (!ordered_arms && whole_group_ring(c, g) && c.is_call(Collective::reduce) &&
      in.size() >= kSharedReduceBytes && op.never_throws && c.port.may_meet()) {
    const ReduceMember member{in.data(), out.data()};
    std::vector<const void*, ScratchAllocator<const void*>> at(static_cast<std::size_t>(n));
    Buffer scratch(2 * tree_chunk_bytes(op.elem_size));
    const RingReduceShare share{{&op, root}, in.size(), at, scratch, /*to_every_out=*/false};
    if (c.meet_in_parts(ring_in_rounds(n, in.size(), root), &member, ring_reduce_share, &share))
      return;
  }
  reduce_arms(c, in, out, op, root, g, ordered_arms ? RingArms::line(n, r) : RingArms::balanced(n));
}

// The reduction along two arms that do not wrap past rank n-1 to 0 for a non-commutative op
// (reduce_ring's cut arms; a line's arms, reduce_line.cpp).
void reduce_arms(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, int root,
                 const Ring& g, const RingArms& arms) {
  const int n = g.size;
  const int k = g.rank_of(c.id());
  const int r = g.rank_of(root);
  const int v = relative_rank(k, r, n);  // my rank relative to the root
  const std::size_t m = in.size();

  Buffer msg(v != 0 && (v == arms.up || v == arms.down_end()) ? 0 : m);
  if (v == 0) {
    if (n == 1) {
      copy_bytes(out, in);
      return;
    }
    // Every branch starts with a combine that reads in and writes out, so in may alias out.
    // U = the up arm's fold (from the right), D = the down arm's fold (from the left).
    if (r == 0) {  // in . U . D
      if (arms.up > 0) {
        c.recv_fold(g.right(k), msg, op, out, in, false);
      } else {
        copy_bytes(out, in);
      }
      if (arms.down > 0) {
        c.recv_fold(g.left(k), msg, op, out, out, false);
      }
    } else if (r == n - 1) {  // U . (D . in)
      ConstBytes right_side = in;
      if (arms.down > 0) {
        c.recv_fold(g.left(k), msg, op, out, in, true);
        right_side = out;
      }
      if (arms.up > 0) {
        c.recv_fold(g.right(k), msg, op, out, right_side, true);
      } else {
        copy_bytes(out, right_side);
      }
    } else {  // (D . in) . U; here n >= 3 and both arms are non-empty
      c.recv_fold(g.left(k), msg, op, out, in, true);
      c.recv_fold(g.right(k), msg, op, out, out, false);
    }
    return;
  }
  if (arms.on_up(v)) {  // fold of relative ranks v .. up, sent left toward the root
    if (v == arms.up) {
      c.send(g.left(k), in);
      return;
    }
    c.recv_fold(g.right(k), msg, op, msg, in, false);  // msg := in op msg
    c.send(g.left(k), msg);
  } else {  // fold of relative ranks n-down .. v, sent right toward the root
    if (v == arms.down_end()) {
      c.send(g.right(k), in);
      return;
    }
    c.recv_fold(g.left(k), msg, op, msg, in, true);  // msg := msg op in
    c.send(g.right(k), msg);
  }
}

namespace {
double reduce_ring_cost(const CostQuery& q) {
  return q.ring_reduce_steps(q.p(), q.root()) * (q.w(q.m()) + q.ring_th() + q.landing_tc() * q.m());
}
}  // namespace

extern const AlgorithmCard reduce_ring_card{
    {Collective::reduce, Algo::ring, "CS 584 lecture: the two-way ring broadcast reversed",
     "(ts + tw*m + th)*floor(p/2); non-commutative, root 0 < r < p-1: (ts + tw*m + "
     "th)*max(r, p-1-r)",
     kRingNeeds, "(ts + tw m) log p"},
    needs_ring,
    reduce_ring_cost,
    [](const Comm& c, const Args& a) {
      reduce_ring(c, a.in, a.out, *a.op, a.root, Ring::all(c.p()));
    },
    ring_counts_hops,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/reduce_tree_work};

// The same on the ring of a hypercube in reflected Gray-code order (Grama et al. section 2.7):
// every message one link; the fold follows the ring, so a commutative operator only.
extern const AlgorithmCard reduce_ring_gray_card{
    {Collective::reduce, Algo::ring,
     "CS 584 lecture: the two-way ring broadcast reversed, on the ring embedded in the "
     "hypercube by the reflected Gray code (Grama et al. section 2.7)",
     "(ts + tw*m + th)*floor(p/2)", kGrayRingCommutativeNeeds, "(ts + tw m) log p",
     "Gray-code ring"},
    needs_gray_ring,
    [](const CostQuery& q) { return reduce_ring_cost(on_gray_ring(q)); },
    [](const Comm& c, const Args& a) {
      reduce_ring(c, a.in, a.out, *a.op, a.root, Ring::gray_code(c.p()));
    },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/false,
    /*needs_gray_ring_group=*/false,
    /*work=*/reduce_tree_work};

}  // namespace hypercomm::detail
