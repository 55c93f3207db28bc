// All-to-all personalized on a ring (Grama et al. 4.5.1), in the book's one-directional form:
// every message moves to the right only.
//
//   T = sum_{i=1}^{p-1} (ts + tw*m*(p-i)) = (ts + tw*m*p/2) * (p - 1)     (m = bytes per block)
//
// Restrictions: neighbours only (send to my_id+1, receive from my_id-1, mod p); any p.
// (A two-directional ring would halve the distances but not the book's formula; this is the
// form the book analyses.)
//
// Step i (1..p-1): each VP sends right the p-i blocks still travelling and receives p-i blocks
// from the left: those of source my_id-i for destinations my_id, my_id+1, ..., my_id+p-i-1, in
// that order. It keeps the first (its own) and forwards the rest in the next step.
// p = 4, VP 0 (block "s>d" goes from s to d):
//
//   step 1: sends 0>1 0>2 0>3   receives 3>0 3>1 3>2   keeps 3>0
//   step 2: sends 3>1 3>2       receives 2>0 2>1       keeps 2>0
//   step 3: sends 2>1           receives 1>0           keeps 1>0
//
// The same routine runs along a mesh row or column (a Ring), with bundles for blocks.
//
// When VPs outnumber cores, an all_to_all on the ring of the whole group may instead meet in
// shared memory (blocks_meeting.hpp, meet_all_to_all), as the pairwise exchange's does: each VP
// copies the blocks it receives straight from their senders' ins (the last to arrive copies
// them all up to 24 KiB a VP), and the p - 1 steps, p - i blocks to the right in step i, play
// on the model clocks and the links. 12 VPs on 2 cores, 8 B and 64 KiB blocks back to back:
// 71 us and 5.0 ms a call as messages, 14 us and 0.32 ms met (2026-12-03; README).

#include <utility>
#include <vector>

#include "blocks_meeting.hpp"
#include "card.hpp"
#include "exchange.hpp"
#include "exchange_util.hpp"

namespace hypercomm::detail {

void ring_all_to_all(const Comm& c, const Ring& g, ConstBytes in, Bytes out, std::size_t bundle) {
  const int n = g.size;
  const int my_rank = g.rank_of(c.id());
  const auto bundle_of = [bundle](auto buf, int k) {
    return buf.subspan(static_cast<std::size_t>(k) * bundle, bundle);
  };

  copy_bytes(bundle_of(out, my_rank), bundle_of(in, my_rank));
  if (n == 1) return;
  const int right = g.right(my_rank);
  const int left = g.left(my_rank);

  // Two buffers of p-1 bundles: the one holding the travelling bundles, the one receiving.
  Buffer first_buffer(static_cast<std::size_t>(n - 1) * bundle);
  Buffer second_buffer(first_buffer.size());
  Bytes holding = first_buffer;
  Bytes receiving = second_buffer;
  // msg: my own bundles for my_rank+1, ..., my_rank+n-1, in the order they will be dropped off.
  for (int j = 1; j < n; ++j) {
    copy_bytes(bundle_of(holding, j - 1), bundle_of(in, (my_rank + j) % n));
  }
  ConstBytes msg = holding;

  for (int i = 1; i < n; ++i) {
    const int source = (my_rank - i + n) % n;
    if (i == n - 1) {
      // Only the bundle for me is left: receive it straight into place.
      c.sendrecv(right, msg, left, bundle_of(out, source));
      break;
    }
    const Bytes incoming = receiving.first(static_cast<std::size_t>(n - i) * bundle);
    c.sendrecv(right, msg, left, incoming);
    copy_bytes(bundle_of(out, source), bundle_of(incoming, 0));
    msg = incoming.subspan(bundle);  // the rest travels on
    std::swap(holding, receiving);
  }
}

namespace {
// The steps as Port::Rounds: round i - 1 is step i, p - i blocks to the right.
int to_right(int id, int /*round*/, int p) noexcept { return (id + 1) % p; }
int from_left(int id, int /*round*/, int p) noexcept { return (id - 1 + p) % p; }
std::size_t still_travelling(int round, int p) noexcept {
  return static_cast<std::size_t>(p - 1 - round);
}
}  // namespace

void all_to_all_ring(const Comm& c, ConstBytes in, Bytes out, std::size_t block) {
  const int p = c.p();
  if (c.is_call(Collective::all_to_all) &&
      meet_all_to_all(c, {p - 1, block, to_right, from_left, still_travelling}, in, out, block))
    return;
  ring_all_to_all(c, Ring::all(p), in, out, block);
}

namespace {
double all_to_all_ring_cost(const CostQuery& q) {
  return (q.p() - 1) * (q.w(q.m() / 2) + q.ring_th());
}
}  // namespace

extern const AlgorithmCard all_to_all_ring_card{
    {Collective::all_to_all, Algo::ring,
     "Grama et al., section 4.5.1: one direction round the ring",
     "(ts + tw*m*p/2 + th)*(p-1) (m = one block)", kRingNeeds, "(ts + tw m p/2)(p - 1)"},
    needs_ring,
    all_to_all_ring_cost,
    [](const Comm& c, const Args& a) {
      all_to_all_ring(c, a.in, a.out, a.in.size() / static_cast<std::size_t>(c.p()));
    },
    ring_counts_hops};

}  // namespace hypercomm::detail
