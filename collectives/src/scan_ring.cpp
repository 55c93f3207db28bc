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

#include <vector>

#include "card.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

void scan_ring(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, bool exclusive) {
  const int my_id = c.id();
  const int p = c.p();
  const std::size_t m = in.size();
  const bool last = my_id == p - 1;

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
// The pipeline's p-1 messages, each folded by its receiver (AlgorithmCard::work).
double scan_ring_work(const CostQuery& q) {
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
