// Prefix (scan, exscan) on a hypercube: Grama et al., Algorithm 4.9.
//
//   T = (ts + tw*m) * log p            (m = bytes of the vector)
//
// Restrictions: p = 2^d; partners are hypercube neighbours (my_id XOR 2^i).
//
//   result := my_number; msg := result
//   for i := 0 to d-1: partner := my_id XOR 2^i
//       send msg to partner; receive number from partner
//       msg := msg + number;  if partner < my_id: result := result + number
//
// msg is the fold over my i-dimensional subcube (a contiguous id range), so the operands stay
// in id order: number is the left operand when partner < my_id. p = 8, VP 5 (101):
//
//   step 0: partner 4   number = x4        msg = x4 x5       result = x4 x5
//   step 1: partner 7   number = x6 x7     msg = x4 .. x7    result unchanged
//   step 2: partner 1   number = x0 .. x3  msg = x0 .. x7    result = x0 .. x5
//
// Exclusive: result starts as nothing (has_result false) instead of my_number, so VP 5 ends
// with x0 .. x4; VP 0 never receives from a lower id and leaves its out untouched.
// in may be out (msg takes a copy of in first).

//
// When VPs outnumber cores a small vector may instead be scanned in shared memory: the same
// rounds on the model clocks and the links as the all-reduce's butterfly, and every VP's result
// bit for bit, folded as these rounds fold it. Up to Port::kPipelinedBytes (or where the p
// inputs fit in the slot's wide inputs, 32 KiB, a group's 16) in a prefix meeting
// (Port::meet_prefix), where VP i leaves once VPs 0..i have come (prefix_step computes its result
// from theirs), so that VPs calling scan after scan pipeline; else up to kMeetingBytes in one
// meeting of every VP (Port::meet), where the last to arrive folds every result (fold_prefixes).

#include <bit>
#include <cstring>
#include <vector>

#include "card.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

namespace {

struct ScanMeeting {
  const Reducer* op;
  bool exclusive;
};

// Every VP's result as the rounds below compute it. After round k a VP's msg is the fold of its
// aligned block of 2^(k+1) ids, lower half on the left (the butterfly's tree, level k+1); in
// round k a VP whose bit k is set receives the fold of the block of 2^k ids below its own and
// puts it on the left of its result (or starts its result with it, exclusive). Level k's blocks
// are the inputs (k = 0) or lie in scratch, level after level.
void fold_prefixes(const void* context, std::span<const void* const> inputs, Bytes results,
                   Bytes scratch) {
  const auto& [op, exclusive] = *static_cast<const ScanMeeting*>(context);
  const std::size_t p = inputs.size();
  const std::size_t m = results.size() / p;
  if (m == 0) return;
  const int d = std::countr_zero(p);
  std::size_t level_start = 0;  // level k's first block, in blocks of m from scratch's start
  auto block = [&](int k, std::size_t b) -> const std::byte* {
    return k == 0 ? static_cast<const std::byte*>(inputs[b])
                  : scratch.data() + (level_start + b) * m;
  };
  if (!exclusive)
    for (std::size_t i = 0; i < p; ++i) std::memcpy(results.data() + i * m, inputs[i], m);
  for (int k = 0; k < d; ++k) {
    for (std::size_t i = std::size_t{1} << k; i < p; ++i) {
      if ((i >> k & 1) == 0) continue;
      std::byte* result = results.data() + i * m;
      const std::byte* below = block(k, (i >> k) ^ 1);
      if (exclusive && std::countr_zero(i) == k)
        std::memcpy(result, below, m);
      else
        (*op)(result, below, result, m);
    }
    if (k + 1 == d) break;
    // Level k+1: each pair of level-k blocks folded, lower on the left.
    const std::size_t next_start = k == 0 ? 0 : level_start + (p >> k);
    for (std::size_t b = 0; b < p >> (k + 1); ++b)
      (*op)(scratch.data() + (next_start + b) * m, block(k, 2 * b), block(k, 2 * b + 1), m);
    level_start = next_start;
  }
}

// Port::PrefixStep: VP f's result, as the rounds below compute it, from the inputs of VPs 0..f
// and the tree's blocks below f, which earlier steps left in folds; then the blocks that end at
// f (level k's block b, of ids [b*2^k, (b+1)*2^k), k >= 1). A later VP reads only the even
// blocks (the one below its own at each level), and the even block that ends at id g is the
// highest level g closes (its trailing ones): each step leaves the one block others read in its
// own place, folds[f * stride], built up level by level there (Port::meet_prefix asks for that
// place ahead). The same operations on the same operands as fold_prefixes, VP by VP.
void prefix_step(const void* context, int f, int p, std::size_t m, std::size_t stride,
                 const std::byte* inputs, std::byte* folds, std::byte* result) {
  const auto& [op, exclusive] = *static_cast<const ScanMeeting*>(context);
  if (m == 0) return;
  const int d = std::countr_zero(static_cast<unsigned>(p));
  // The block of level k that ends at id g, where g closes no higher level but the last: an
  // input (k = 0), else what step g left in its place.
  auto ending_at = [&](int k, std::size_t g) -> const std::byte* {
    return (k == 0 ? inputs : folds) + g * stride;
  };
  const auto me = static_cast<std::size_t>(f);
  if (result != nullptr) {
    bool has_result = !exclusive;
    if (has_result) std::memcpy(result, ending_at(0, me), m);
    for (int k = 0; k < d; ++k) {
      if ((me >> k & 1) == 0) continue;
      const std::byte* below = ending_at(k, ((me >> k) << k) - 1);  // level k's block (me>>k)^1
      if (has_result) {
        (*op)(result, below, result, m);
      } else {
        std::memcpy(result, below, m);
        has_result = true;
      }
    }
  }
  // Level k's block ending at f, for k = 1 .. d-1 while f closes one (the last level is unused):
  // the block below it (ending at f - 2^(k-1)) on the left, level k-1's ending at f on the right.
  std::byte* mine = folds + me * stride;
  for (int k = 1; k < d && ((me + 1) & ((std::size_t{1} << k) - 1)) == 0; ++k) {
    const std::byte* right = k == 1 ? ending_at(0, me) : mine;
    (*op)(mine, ending_at(k - 1, me - (std::size_t{1} << (k - 1))), right, m);
  }
}

}  // namespace

void scan_hypercube(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, bool exclusive) {
  const int my_id = c.id();
  const int d = log2_of(c.p());
  const std::size_t m = in.size();
  if (m <= kMeetingBytes) {
    const ScanMeeting context{&op, exclusive};
    const Bytes mine = exclusive && my_id == 0 ? Bytes{} : out;  // VP 0's exscan out: untouched
    if (c.meet_prefix({d, m, butterfly_partner, butterfly_partner}, in, prefix_step, &context,
                      mine))
      return;
    if (c.meet({d, m, butterfly_partner, butterfly_partner}, in.data(), fold_prefixes, &context,
               mine, Port::Results::per_vp))
      return;
  }
  Buffer msg(in.begin(), in.end());
  Buffer number(m);
  bool has_result = !exclusive;
  if (has_result) copy_bytes(out, in);  // result lives in out
  for (int i = 0; i < d; ++i) {
    const int partner = my_id ^ (1 << i);
    c.sendrecv_to_combine(partner, msg, number);
    if (partner < my_id) {
      if (i + 1 < d) op(msg.data(), number.data(), msg.data(), m);  // the last msg is unused
      if (has_result) {
        op(out.data(), number.data(), out.data(), m);
      } else {
        copy_bytes(out, number);
        has_result = true;
      }
    } else if (i + 1 < d) {
      op(msg.data(), msg.data(), number.data(), m);
    }
  }
}

namespace {
double scan_hypercube_cost(const CostQuery& q) { return q.d() * q.w(q.m()) + q.dimension_hops(); }
// Where VPs share cores a scan of up to kMeetingBytes is a meeting (above): no message, the
// inputs read and folded once each; beyond, log p exchanges on every VP, each message folded
// into the message and (below the VP) into the result (AlgorithmCard::work).
double scan_hypercube_work(const CostQuery& q) {
  if (q.bytes <= kMeetingBytes) return q.p() * (q.tw() + q.tc) * q.m();
  return q.p() * q.d() * (q.message_work() + (q.tw() + 2 * q.tc) * q.m());
}
}  // namespace

extern const AlgorithmCard scan_hypercube_card{
    {Collective::scan, Algo::hypercube, "Grama et al., Algorithm 4.9", "(ts + tw*m)*log p + th*H",
     kHypercubeNeeds, "(ts + tw m) log p"},
    needs_hypercube,
    scan_hypercube_cost,
    [](const Comm& c, const Args& a) { scan_hypercube(c, a.in, a.out, *a.op, false); },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/scan_hypercube_work};

extern const AlgorithmCard exscan_hypercube_card{
    {Collective::exscan, Algo::hypercube, "Grama et al., Algorithm 4.9 (exclusive)",
     "(ts + tw*m)*log p + th*H", kHypercubeNeeds, "(ts + tw m) log p"},
    needs_hypercube,
    scan_hypercube_cost,
    [](const Comm& c, const Args& a) { scan_hypercube(c, a.in, a.out, *a.op, true); },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/scan_hypercube_work};

}  // namespace hypercomm::detail
