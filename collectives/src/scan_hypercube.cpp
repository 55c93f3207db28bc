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

#include <vector>

#include "card.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

void scan_hypercube(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, bool exclusive) {
  const int my_id = c.id();
  const int d = log2_of(c.p());
  const std::size_t m = in.size();
  Buffer msg(in.begin(), in.end());
  Buffer number(m);
  bool has_result = !exclusive;
  if (has_result) copy_bytes(out, in);  // result lives in out
  for (int i = 0; i < d; ++i) {
    const int partner = my_id ^ (1 << i);
    c.sendrecv(partner, msg, number);
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
}  // namespace

extern const AlgorithmCard scan_hypercube_card{
    {Collective::scan, Algo::hypercube, "Grama et al., Algorithm 4.9", "(ts + tw*m)*log p + th*H",
     kHypercubeNeeds, "(ts + tw m) log p"},
    needs_hypercube,
    scan_hypercube_cost,
    [](const Comm& c, const Args& a) { scan_hypercube(c, a.in, a.out, *a.op, false); }};

extern const AlgorithmCard exscan_hypercube_card{
    {Collective::exscan, Algo::hypercube, "Grama et al., Algorithm 4.9 (exclusive)",
     "(ts + tw*m)*log p + th*H", kHypercubeNeeds, "(ts + tw m) log p"},
    needs_hypercube,
    scan_hypercube_cost,
    [](const Comm& c, const Args& a) { scan_hypercube(c, a.in, a.out, *a.op, true); }};

}  // namespace hypercomm::detail
