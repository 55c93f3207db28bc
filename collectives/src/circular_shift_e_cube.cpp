// Circular q-shift as one E-cube-routed message per VP (Grama et al. 4.6): VP i sends its message
// straight to VP (i + q) mod p and the runtime routes it. E-cube routing of a shift permutation
// is contention-free on a hypercube (Grama 4.6), so
//
//   T = ts + tw*m + th*hops        (hops: the longest route of the permutation)
//
// Restrictions: Links::routed (any p, any topology).
#include <algorithm>

#include "card.hpp"
#include "exchange.hpp"

namespace hypercomm::detail {

void circular_shift_e_cube(const Comm& c, ConstBytes in, Bytes out, int shift) {
  const int p = c.p();
  const int my_id = c.id();
  if (shift == 0) return copy_bytes(out, in);  // the message stays
  c.sendrecv((my_id + shift) % p, in, (my_id - shift + p) % p, out);
}

namespace {
double circular_shift_e_cube_cost(const CostQuery& q) {
  const int s = q.shift();
  if (s == 0) return 0;  // the message stays
  int hops = 0;
  if (q.th() != 0)
    for (int v = 0; v < q.p(); ++v) hops = std::max(hops, q.t.distance(v, (v + s) % q.p()));
  return q.w(q.m()) + q.th() * hops;
}
const char* circular_shift_e_cube_restriction(const Topology&, Links links) noexcept {
  if (links != Links::routed) return "it sends to i + q directly, which needs Links::routed";
  return nullptr;
}
}  // namespace

extern const AlgorithmCard circular_shift_e_cube_card{
    {Collective::circular_shift, Algo::hypercube,
     "Grama et al., section 4.6: one E-cube-routed message per VP",
     "q = 0: 0; ts + tw*m + th*max over i of hops(i, i+q)", "Links::routed (any p)",
     "(ts + tw m)(2 log p - 1); E-cube routed: ts + tw m", "E-cube routed"},
    circular_shift_e_cube_restriction,
    circular_shift_e_cube_cost,
    [](const Comm& c, const Args& a) { circular_shift_e_cube(c, a.in, a.out, a.root); }};

}  // namespace hypercomm::detail
