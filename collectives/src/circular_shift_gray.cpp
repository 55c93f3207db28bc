// Circular q-shift on a hypercube as the book writes it (Grama et al., section 4.6.2, Figure
// 4.22): the ring of p = 2^d VPs embedded by the reflected Gray code (section 2.7), ring
// position j at node gray(j), and q written as a sum of distinct powers of two, q = sum 2^i;
// one phase per power, the largest first. It runs on a group whose ranks are those ring
// positions (split(vp.world(), 0, gray_inverse(id)); GroupInfo::gray_ring), and shifts by rank:
// rank j's message goes to rank (j + q) mod p.
//
// Phase 2^0: positions j and j+1 are neighbours (gray codes one bit apart): one step.
// Phase 2^i, i >= 1: gray(j) XOR gray(j + 2^i) has two bits, i-1 and t (t >= i, the top of the
// carry chain of j + 2^i; d-1 when it wraps), so the message crosses two links in two steps:
//   step 1: every node sends across dimension i-1 (one exchange, all in step);
//   step 2: the node holding position j's message, gray(j) XOR 2^(i-1), sends it across
//           dimension t to gray(j + 2^i); j -> j + 2^i is a permutation, so every node sends one
//           message and receives one.
// Every message crosses one link and every step is a permutation: no two messages share a link.
//
//   T = (ts + tw*m + th) * (2 * popcount(q) - [q odd])  <=  (ts + tw*m)(2 log p - 1) + th(...)
//
// p = 8, q = 5 = 4 + 1, ring 0 1 3 2 6 7 5 4 (positions 0..7 at those VPs):
//   phase 4, step 1: across dimension 1 (VP 0 <-> 2, 1 <-> 3, 4 <-> 6, 5 <-> 7)
//   phase 4, step 2: across dimension 2 (gray(j) XOR gray(j+4) = 110 for every j)
//   phase 1:         position j to j + 1, one link each
//
// Restrictions: a group that is such a ring (any 2^k >= 4 VPs of a hypercube in Gray-code order,
// its dimensions in any order); neighbours only, Links::strict included.

#include <bit>

#include "card.hpp"
#include "exchange.hpp"

namespace hypercomm::detail {

namespace {

// The rank whose ring position's gray code is `code` (ranks are ring positions).
int rank_of_code(unsigned code) noexcept { return static_cast<int>(gray_inverse(code)); }

// The steps of one shift by q on a ring of p = 2^d positions: one for the power 2^0, two for
// every other power of two in q.
int gray_shift_steps(unsigned q) noexcept {
  return 2 * std::popcount(q) - static_cast<int>(q & 1u);
}

}  // namespace

void circular_shift_gray(const Comm& c, ConstBytes in, Bytes out, int shift) {
  const int p = c.p();
  const auto q = static_cast<unsigned>(shift);
  if (q == 0) {
    copy_bytes(out, in);
    return;
  }
  const auto mask = static_cast<unsigned>(p - 1);
  const auto me = static_cast<unsigned>(c.id());
  const unsigned my_code = gray(me);
  const int steps = gray_shift_steps(q);

  // Messages in transit alternate between two buffers; the last step lands in out.
  Buffer buffers[2];
  if (steps > 1) {
    buffers[0].resize(in.size());
    buffers[1].resize(in.size());
  }
  ConstBytes msg = in;
  int step = 0;
  const auto move = [&](int dest, int src) {
    ++step;
    const Bytes incoming = step == steps ? out : Bytes(buffers[step % 2]);
    c.sendrecv(dest, msg, src, incoming);
    msg = incoming;
  };
  // The positions whose messages this VP holds: its own before a phase (held == me).
  for (int i = std::bit_width(q) - 1; i >= 0; --i) {
    const unsigned power = 1u << i;
    if ((q & power) == 0) continue;
    if (i == 0) {  // ring neighbours
      move(static_cast<int>((me + 1) & mask), static_cast<int>((me - 1) & mask));
      continue;
    }
    const unsigned across = 1u << (i - 1);
    // Step 1: the exchange across bit i-1 of the code; I now hold the message of position
    // `held`, whose code is mine XOR 2^(i-1).
    const int partner = rank_of_code(my_code ^ across);
    move(partner, partner);
    const auto held = static_cast<unsigned>(partner);
    // Step 2: it goes on to position held + 2^i, one link from me; mine (position me) comes
    // from the holder of position me - 2^i, whose code is gray(me - 2^i) XOR 2^(i-1).
    move(static_cast<int>((held + power) & mask), rank_of_code(gray((me - power) & mask) ^ across));
  }
}

namespace {

double circular_shift_gray_cost(const CostQuery& q) {
  return gray_shift_steps(static_cast<unsigned>(q.shift())) * (q.w(q.m()) + q.th());
}

const char* circular_shift_gray_restriction(const Topology& t, Links) noexcept {
  if (t.kind() != Topology::Kind::ring || !is_power_of_two(t.size()) || t.size() < 4)
    return "it shifts along a ring of 2^k >= 4 VPs embedded in a hypercube";
  return nullptr;
}

}  // namespace

extern const AlgorithmCard circular_shift_gray_card{
    {Collective::circular_shift, Algo::hypercube,
     "Grama et al., section 4.6.2 (Figure 4.22): the q-shift on the ring embedded in the "
     "hypercube by the reflected Gray code, one phase per power of two in q, two steps each "
     "(one for 2^0)",
     "(ts + tw*m + th)*(2*popcount(q) - (q mod 2)) <= (ts + tw*m + th)*(2 log p - 1)",
     "a group whose ranks are a hypercube's 2^k >= 4 VPs in reflected Gray-code order "
     "(split(vp.world(), 0, gray_inverse(id))); neighbours only, Links::strict included",
     "(ts + tw m)(2 log p - 1)", "Gray-code ring q-shift"},
    circular_shift_gray_restriction,
    circular_shift_gray_cost,
    [](const Comm& c, const Args& a) { circular_shift_gray(c, a.in, a.out, a.root); },
    nullptr,
    true,
    true};

}  // namespace hypercomm::detail
