// Dissemination barrier (Hensgen, Finkel and Manber 1988): any p, ceil(log2 p) rounds.
//
//   T = ts * ceil(log p)          (+ th*hops of each round's route)
//
// Restrictions: none on p; partners are 2^k apart, so links must be routed unless the
// topology happens to make them neighbours.
//
// Round k: send a zero-byte message to (my_id + 2^k) mod p, receive one from (my_id - 2^k) mod p.
// After round k a VP has heard, directly or through the VPs it heard from, from the 2^(k+1) VPs
// my_id - 2^(k+1) + 1 .. my_id, each of which sent only after entering; once 2^(k+1) >= p that
// is everyone. p = 6: VP 0 hears from 5 (round 0: {5, 0}), from 4 (round 1: {3, 4, 5, 0}), from
// 2 (round 2: {1..5, 0}).
//
// When VPs outnumber cores the runtime may hold the barrier as one meeting in shared memory
// instead (Port::meet): the same rounds on the model clocks and the links, one switch per VP.

#include <bit>

#include "card.hpp"
#include "exchange.hpp"

namespace hypercomm::detail {

namespace {

int dissemination_to(int my_id, int round, int p) { return (my_id + (1 << round)) % p; }
int dissemination_from(int my_id, int round, int p) { return (my_id - (1 << round) + p) % p; }

}  // namespace

void barrier_dissemination(const Comm& c) {
  const int p = c.p();
  const int rounds = std::bit_width(static_cast<unsigned>(p - 1));  // ceil(log2 p)
  if (c.meet({rounds, 0, dissemination_to, dissemination_from})) return;
  const int my_id = c.id();
  for (int distance = 1; distance < p; distance *= 2) {
    c.sendrecv((my_id + distance) % p, ConstBytes{}, (my_id - distance + p) % p, Bytes{});
  }
}

namespace {
// Round k's partners are 2^k apart: on a ring every VP's route has min(2^k, p - 2^k) links; on a
// mesh or hypercube the routes of a round differ in length, and with th > 0 the rounds' clocks
// chain unevenly: no closed form.
double barrier_dissemination_cost(const CostQuery& q) {
  if (!q.selection && q.th() != 0 && q.t.kind() != Topology::Kind::ring) return kNoClosedForm;
  double s = 0;
  for (int k = 1; k < q.p(); k *= 2) s += q.ts() + q.th() * q.t.distance(0, k);
  return s;
}
const char* barrier_dissemination_restriction(const Topology&, Links links) noexcept {
  if (links != Links::routed)
    return "its partners i + 2^k are not neighbours: it needs Links::routed";
  return nullptr;
}
}  // namespace

extern const AlgorithmCard barrier_dissemination_card{
    {Collective::barrier, Algo::dissemination,
     "Hensgen, Finkel and Manber 1988: dissemination, ceil(log p) rounds",
     "sum over k < ceil(log p) of (ts + th*min(2^k, p-2^k)) on a ring; on a mesh or hypercube "
     "with th > 0: no closed form",
     "any p; Links::routed", nullptr},
    barrier_dissemination_restriction,
    barrier_dissemination_cost,
    [](const Comm& c, const Args&) { barrier_dissemination(c); }};

}  // namespace hypercomm::detail
