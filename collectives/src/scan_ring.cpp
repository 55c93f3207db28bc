// Prefix (scan, exscan) along a ring, as a pipeline: VP i receives the fold of VPs 0..i-1 from
// VP i-1, combines it with its own vector on the right and sends the fold of 0..i to VP i+1.
// Only the links i -> i+1 are used (no wraparound message), so a linear array would do.
//
//   T = (ts + tw*m) * (p - 1)          (m = bytes of the vector)
//
// Derivation with the clock rules: VP 0 sends at clock 0; VP i's receive arrives at
// i*(ts + tw*m), it sends at once and its clock becomes (i + 1)*(ts + tw*m). VP p-1 receives at
// (p - 1)*(ts + tw*m) and sends nothing; VP p-2's clock after its send is the same, and every
// other clock is smaller. (Combining costs no model time.)
//
// Restrictions: neighbours only (VP i and i+1 adjacent for i < p - 1); any p.
//
// p = 4, inclusive:  VP 0: out = x0,  sends x0
//                    VP 1: out = x0 x1,  sends it
//                    VP 2: out = x0 x1 x2,  sends it
//                    VP 3: out = x0 x1 x2 x3
// Exclusive: VP i receives the fold of 0..i-1 straight into out (its answer) and sends that
// op x_i; VP 0 sends x0 and leaves out untouched. in may be out.
//
// When VPs outnumber cores a vector past kMeetingBytes may instead be scanned in one meeting in
// shared memory (Comm::meet_in_parts): the pipeline's messages on the model clocks and the
// links, and every VP's result bit for bit, folded as the pipeline folds it, but each VP folds
// a share of the elements down the whole pipeline (scan_share), straight from the other VPs'
// ins into their outs: p - 1 folds of the vector over all VPs together, no copy of a message,
// and no VP waits for the one before it. (Smaller vectors are the hypercube's: its meetings
// pipeline calls.)

#include <algorithm>
#include <cstring>
#include <vector>

#include "card.hpp"
#include "shares.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

namespace {

// The pipeline as rounds (Port::Rounds): in round k VP k sends to VP k + 1.
int pipeline_to(int id, int round, int /*p*/) noexcept { return id == round ? id + 1 : -1; }
int pipeline_from(int id, int round, int /*p*/) noexcept { return id == round + 1 ? round : -1; }

// What each VP brings to the meeting (out null: VP 0's exscan out, untouched), and the call.
struct ScanMember {
  const std::byte* in;
  std::byte* out;
};
struct ScanShare {
  const Reducer* op;
  bool exclusive;
  std::size_t bytes;
  std::byte* folds;  // exclusive: 2 * chunk_bytes(op) bytes of the VP's own, else null
};
// The bytes of every VP's vector a share folds at a time: the fold so far stays in L1.
[[nodiscard]] std::size_t chunk_bytes(const Reducer& op) noexcept {
  return share_chunk(op.elem_size, 8 * 1024);
}

// VP `rank`'s share of the meeting (shares.hpp): its elements of every VP's result, VP 0 to
// p - 1 as the pipeline folds them, a chunk at a time. (Its context is its own VP's: its folds
// are that VP's.)
void scan_share(const void* context, std::span<const void* const> inputs, int rank) {
  const auto& [op, exclusive, m, folds] = *static_cast<const ScanShare*>(context);
  const std::size_t p = inputs.size(), me = static_cast<std::size_t>(rank);
  const auto member = [&](std::size_t i) -> const ScanMember& {
    return *static_cast<const ScanMember*>(inputs[i]);
  };
  const auto [first, last] = share_of(m, op->elem_size, p, me);
  const std::size_t chunk = chunk_bytes(*op);
  for (std::size_t at = first; at < last; at += chunk) {
    const std::size_t n = std::min(chunk, last - at);
    if (!exclusive) {
      // out_0 = x_0, out_f = out_{f-1} op x_f (dst may alias x_f).
      std::byte* prefix = member(0).out + at;
      if (prefix != member(0).in + at) std::memcpy(prefix, member(0).in + at, n);
      for (std::size_t f = 1; f < p; ++f) {
        std::byte* const out = member(f).out + at;
        (*op)(out, prefix, member(f).in + at, n);
        prefix = out;
      }
      continue;
    }
    // Exclusive: out_1 = x_0, out_f = out_{f-1} op x_{f-1}, the fold so far and the next in
    // folds, so that each VP's x is read before its out is written (an out may be its VP's in).
    std::byte* fold = folds;
    std::byte* next = fold + chunk;
    std::memcpy(fold, member(0).in + at, n);
    for (std::size_t f = 1; f < p; ++f) {
      if (f + 1 < p) (*op)(next, fold, member(f).in + at, n);
      std::memcpy(member(f).out + at, fold, n);
      std::swap(fold, next);
    }
  }
}

}  // namespace

void scan_ring(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, bool exclusive) {
  const int my_id = c.id();
  const int p = c.p();
  const std::size_t m = in.size();
  const bool last = my_id == p - 1;

  // A share must not throw (Port::meet's part).
  if (m > kMeetingBytes && op.never_throws && c.port.may_meet() &&
      c.is_call(exclusive ? Collective::exscan : Collective::scan)) {
    const ScanMember member{in.data(), exclusive && my_id == 0 ? nullptr : out.data()};
    Buffer folds(exclusive ? 2 * chunk_bytes(op) : 0);  // here, not in the share: it cannot throw
    const ScanShare share{&op, exclusive, m, folds.data()};
    if (c.meet_in_parts({p - 1, m, pipeline_to, pipeline_from}, &member, scan_share, &share))
      return;
  }

  if (my_id == 0) {
    // Sent first: VP 1 need not wait for this copy (p = 2, 1 MiB: the copy alone is a third of
    // the call).
    c.send(1, in);
    if (!exclusive) copy_bytes(out, in);
    return;
  }

  // Receiving into out would overwrite in when they are the same buffer: keep a copy.
  Buffer own;
  ConstBytes mine = in;
  if (in.data() == out.data() && m > 0) {
    own.assign(in.begin(), in.end());
    mine = own;
  }
  if (last && !exclusive) {
    // The last VP sends nothing on: its sum is folded as the message lands, by whichever VP
    // delivers it (Comm::recv_fold), rather than copied into out and folded again here, which
    // brings every line of out back from the sender's cache (p = 2, 64 KiB back to back: 26 us
    // a call received and folded, against a reduce's 3.1 folded as it lands).
    c.recv_fold(my_id - 1, out, op, out, mine, /*message_left=*/true);
    return;
  }
  c.recv_to_combine(my_id - 1, out);  // the fold of 0..my_id-1
  if (exclusive) {
    if (last) return;
    Buffer prefix(m);
    op(prefix.data(), out.data(), mine.data(), m);
    c.send(my_id + 1, prefix);
  } else {
    op(out.data(), out.data(), mine.data(), m);
    if (!last) c.send(my_id + 1, out);
  }
}

namespace {
double scan_ring_cost(const CostQuery& q) { return (q.p() - 1) * (q.w(q.m()) + q.line_th()); }
// The pipeline's p-1 messages, each folded by its receiver; where VPs share cores (when
// AlgorithmCard::work counts), past kMeetingBytes with an operator that cannot throw, the
// meeting's p - 1 folds and a copy, and no message.
double scan_ring_work(const CostQuery& q) {
  if (q.bytes > kMeetingBytes && q.shape.never_throws)
    return (q.p() - 1) * q.tc * q.m() + q.tw() * q.m();
  return (q.p() - 1) * (q.message_work() + (q.tw() + q.tc) * q.m());
}
}  // namespace

extern const AlgorithmCard scan_ring_card{
    {Collective::scan, Algo::ring, "a pipeline: VP i passes the prefix of 0..i to i+1",
     "(ts + tw*m + th)*(p-1)", kPathNeeds, nullptr},
    needs_path,
    scan_ring_cost,
    [](const Comm& c, const Args& a) { scan_ring(c, a.in, a.out, *a.op, false); },
    line_counts_hops,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/scan_ring_work};

extern const AlgorithmCard exscan_ring_card{
    {Collective::exscan, Algo::ring, "a pipeline (exclusive)", "(ts + tw*m + th)*(p-1)", kPathNeeds,
     nullptr},
    needs_path,
    scan_ring_cost,
    [](const Comm& c, const Args& a) { scan_ring(c, a.in, a.out, *a.op, true); },
    line_counts_hops,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/scan_ring_work};

}  // namespace hypercomm::detail
