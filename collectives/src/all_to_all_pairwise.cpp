// All-to-all personalized by pairwise exchange (Grama et al., Algorithm 4.10).
//
//   T = (ts + tw*m) * (p - 1)      (+ th*hops of each step's route; m = bytes per block)
//
// Restrictions: p = 2^d; routed links (partners are up to d hops apart: every message is
// E-cube routed). On a hypercube E-cube routing of the pairing my_id XOR i is contention-free,
// so each of the p - 1 steps costs one message time. With p = 2 the one partner is a neighbour.
//
// Step i pairs my_id with my_id XOR i; each sends the other its block and receives its own.
// p = 8, the partner of each VP per step:
//
//   step i  | VP 0 1 2 3 4 5 6 7
//   --------+-------------------
//   1       |    1 0 3 2 5 4 7 6
//   2       |    2 3 0 1 6 7 4 5
//   3       |    3 2 1 0 7 6 5 4
//   ...     |
//   7       |    7 6 5 4 3 2 1 0
//
// When VPs outnumber cores the exchange may instead run as one meeting in shared memory
// (blocks_meeting.hpp, meet_all_to_all): the p - 1 steps on the model clocks and the links, and
// the last VP to arrive moves every block (up to 24 KiB a VP), or each VP copies the blocks it
// receives straight from their senders' ins and no VP leaves before every VP has copied.

#include "blocks_meeting.hpp"
#include "card.hpp"
#include "exchange.hpp"

namespace hypercomm::detail {

namespace {
// The partner of step i = round + 1.
[[nodiscard]] int step_partner(int my_id, int round, int /*p*/) noexcept {
  return my_id ^ (round + 1);
}
}  // namespace

void all_to_all_pairwise(const Comm& c, ConstBytes in, Bytes out, std::size_t block) {
  const int p = c.p();
  const int my_id = c.id();
  if (c.is_call(Collective::all_to_all) &&
      meet_all_to_all(c, {p - 1, block, step_partner, step_partner}, in, out, block))
    return;
  const auto block_of = [block](auto buf, int k) {
    return buf.subspan(static_cast<std::size_t>(k) * block, block);
  };

  // M[my_id, my_id] stays here.
  copy_bytes(block_of(out, my_id), block_of(in, my_id));

  for (int i = 1; i < p; ++i) {
    const int partner = step_partner(my_id, i - 1, p);
    // Send M[my_id, partner]; receive M[partner, my_id] straight into its place in out.
    c.sendrecv(partner, block_of(in, partner), block_of(out, partner));
  }
}

namespace {
// m is the whole in (p blocks of m/p). On a hypercube step i's routes have popcount(i) links for
// every VP, and the popcounts of 1 .. p-1 add up to (p/2)*log p; routed over a ring or mesh with
// th > 0 the steps' routes differ in length: no closed form. Selection also weighs each step's
// congestion.
double all_to_all_pairwise_cost(const CostQuery& q) {
  const int p = q.p();
  if (!q.selection && q.t.kind() != Topology::Kind::hypercube && p != 2 && q.th() != 0)
    return kNoClosedForm;
  double cost = q.th() * (p / 2) * q.d();
  for (int i = 1; i < p; ++i) cost += q.w(q.m() / p * q.congestion(i));
  return cost;
}
const char* all_to_all_pairwise_restriction(const Topology& t, Links links) noexcept {
  if (!is_power_of_two(t.size())) return "it needs p = 2^d VPs";
  if (links != Links::routed && t.size() > 2)
    return "Algorithm 4.10 sends to id XOR i, which needs Links::routed";
  return nullptr;
}
}  // namespace

extern const AlgorithmCard all_to_all_pairwise_card{
    {Collective::all_to_all, Algo::hypercube,
     "Grama et al., Algorithm 4.10: pairwise exchange, E-cube routed",
     "(ts + tw*m)*(p-1) + th*(p/2)*log p on a hypercube (m = one block; step i's routes have "
     "popcount(i) links); routed over a ring or mesh with th > 0: no closed form",
     "p = 2^d; Links::routed (p > 2)", "(ts + tw m)(p - 1)"},
    all_to_all_pairwise_restriction,
    all_to_all_pairwise_cost,
    [](const Comm& c, const Args& a) {
      all_to_all_pairwise(c, a.in, a.out, a.in.size() / static_cast<std::size_t>(c.p()));
    }};

}  // namespace hypercomm::detail
