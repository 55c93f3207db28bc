// Circular q-shift on a hypercube (Grama et al. 4.6): VP i's message goes to VP (i + q) mod p.
// (Under Links::routed one E-cube-routed message does it: circular_shift_e_cube.cpp.)
//
// On the hypercube's own links (neighbours only): dimension-ordered store-and-forward, the
// E-cube route taken hop by hop. For k = 0 .. d-1, the message a VP holds crosses dimension k
// when its destination's bit k differs from the holder's. After stages 0..k-1 the holder of the
// message of source i is (high bits of i, low k bits of i + q); since (i + q) mod 2^k is a
// bijection on the low bits, every VP holds exactly one message at every stage. Partners
// my_id and my_id XOR 2^k hold the messages of sources i and i XOR 2^k, whose destinations
// differ in bit k (adding 2^k flips bit k of i + q), so both messages cross or neither does:
// every exchange is a pairwise c.sendrecv.
//   T = (ts + tw*m) * (log p - v) <= (ts + tw*m) * log p,   2^v the largest power of 2 dividing q
// (bits below bit v of i + q equal those of i, so nothing crosses those dimensions; in every
// stage from v on some pair crosses, and the clocks of the pairs chain up). A VP skips the
// stages where it keeps its message.
//
// Restrictions: a hypercube topology (its exchanges cross one dimension each).
// p = 8, q = 3, strict: the holder of each source's message after each stage
//
//   source      0 1 2 3 4 5 6 7
//   stage k=0   1 0 3 2 5 4 7 6    (bit 0 of i + 3 differs from bit 0 of i for every i)
//   stage k=1   3 0 1 2 7 4 5 6    (sources 0, 2, 4, 6 cross; 1, 3, 5, 7 stay)
//   stage k=2   3 4 5 6 7 0 1 2    (= i + 3: sources 1, 2, 3, 5, 6, 7 cross)

#include <bit>
#include <vector>

#include "card.hpp"
#include "exchange.hpp"

namespace hypercomm::detail {

void circular_shift_hypercube(const Comm& c, ConstBytes in, Bytes out, int shift) {
  const int p = c.p();
  const int my_id = c.id();
  if (shift == 0) {
    copy_bytes(out, in);
    return;
  }
  const int d = log2_of(p);
  const auto all_bits = static_cast<unsigned>(p - 1);
  const auto id_bits = static_cast<unsigned>(my_id);
  const auto q = static_cast<unsigned>(shift);
  // Destination of the message I hold before stage k: its source shares my bits k and up, and
  // its destination shares my low k bits.
  const auto held_destination = [&](int k) {
    const unsigned low = (1u << k) - 1;
    const unsigned source = (id_bits & ~low) | ((id_bits - q) & low);
    return static_cast<int>((source + q) & all_bits);
  };

  Buffer buffers[2];  // messages in transit alternate between these
  int moves = 0;
  ConstBytes msg = in;
  for (int k = 0; k < d; ++k) {
    const int destination = held_destination(k);
    if (destination == my_id) break;  // mine has arrived: no partner needs me in later stages
    const int mask = 1 << k;
    if (((destination ^ my_id) & mask) == 0) continue;  // neither partner crosses dimension k
    const int partner = my_id ^ mask;
    // The message I get is mine when its destination agrees with me on every bit now.
    Bytes incoming = out;
    if (held_destination(k + 1) != my_id) {
      Buffer& spare = buffers[moves % 2];
      spare.resize(in.size());
      incoming = spare;
    }
    c.sendrecv(partner, msg, incoming);
    msg = incoming;
    ++moves;
  }
  copy_bytes(out, msg);  // no-op when the last message landed in out
}

namespace {
// Stages v .. d-1 each cross one link (2^v the largest power of 2 dividing q).
double circular_shift_hypercube_cost(const CostQuery& q) {
  const int s = q.shift();
  if (s == 0) return 0;
  return (q.d() - std::countr_zero(static_cast<unsigned>(s))) * (q.w(q.m()) + q.th());
}
const char* circular_shift_hypercube_restriction(const Topology& t, Links) noexcept {
  if (t.kind() != Topology::Kind::hypercube)
    return "it exchanges across the dimensions of a hypercube: it needs a hypercube topology";
  return nullptr;
}
}  // namespace

extern const AlgorithmCard circular_shift_hypercube_card{
    {Collective::circular_shift, Algo::hypercube,
     "Grama et al., section 4.6: dimension-ordered store-and-forward (the E-cube route hop by "
     "hop)",
     "q = 0: 0; (ts + tw*m + th)*(log p - v), 2^v the largest power of 2 dividing q",
     "a hypercube topology", "(ts + tw m)(2 log p - 1); E-cube routed: ts + tw m",
     "dimension by dimension"},
    circular_shift_hypercube_restriction,
    circular_shift_hypercube_cost,
    [](const Comm& c, const Args& a) { circular_shift_hypercube(c, a.in, a.out, a.root); }};

}  // namespace hypercomm::detail
