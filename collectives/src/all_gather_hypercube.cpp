// All-to-all broadcast (all-gather) on a hypercube: Grama et al., Algorithm 4.7, in place.
//
//   T = ts*log p + tw*m*(p - 1)        (m = bytes per block)
//
// Restrictions: p = 2^d; partners are hypercube neighbours (my_id XOR 2^i).
//
// Step i (0..d-1) doubles what each VP holds: it sends the aligned range of 2^i blocks that
// contains its own block and receives the partner's range straight into its final place in buf
// (the book's result := result U msg). After step i a VP holds the 2^(i+1) blocks of its
// (i+1)-dimensional subcube. p = 8, VP 5 (101):
//
//   step 0: partner 4  sends block 5       receives block 4
//   step 1: partner 7  sends blocks 4-5    receives blocks 6-7
//   step 2: partner 1  sends blocks 4-7    receives blocks 0-3
//
// Step i moves 2^i blocks each way, so the bandwidth term sums to tw*m*(1 + 2 + ... + p/2).
// Step 0 sends the VP's input itself where the front end passes it (`own`, the same bytes as its
// block in buf), as MPI sends from the send buffer: a partner in another process copies the
// message out of the sender's memory, and the front end's copy of the input into buf in the next
// call would write lines that partner's core has just read (an all-gather of 1 MiB over 2
// processes took 4x Open MPI's time in runs where a line between the cores was slow).
// Blocks may be uneven (the all-reduce two-phase split): ranges are taken by Blocks.
//
// When VPs outnumber cores, equal blocks of a small result may instead be gathered in one
// meeting in shared memory (Port::meet): the same rounds, 2^i blocks in step i, on the model
// clocks and the links, and the same bytes, the last VP to arrive laying every VP's block in
// its place. An all_gatherv meets so too, whatever its blocks' sizes (blocks_meeting.hpp): every
// VP's block copied once into each other VP's buffer.

#include <cstring>

#include "blocks_meeting.hpp"
#include "card.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

// The result every VP holds after the last step: block i is VP i's.
void concatenate(const void* /*context*/, std::span<const void* const> inputs, Bytes result,
                 Bytes /*scratch*/) {
  const std::size_t m = result.size() / inputs.size();
  if (m == 0) return;
  for (std::size_t i = 0; i < inputs.size(); ++i) std::memcpy(result.data() + i * m, inputs[i], m);
}

void all_gather_hypercube(const Comm& c, Bytes buf, const Blocks& blocks, ConstBytes own) {
  const int my_id = c.id();
  const int d = log2_of(c.p());
  if (c.is_call(Collective::all_gatherv)) {
    Port::Rounds rounds{d, 0, butterfly_partner, butterfly_partner};
    rounds.sent_bytes = aligned_subcube_bytes;
    const std::size_t moved = blocks.total() * static_cast<std::size_t>(c.p() - 1);
    if (meet_blocks(c, rounds, {buf.data(), buf.data(), &blocks}, moved, all_gather_blocks)) return;
  }
  const Bytes all = blocks.range(buf, 0, c.p());
  if (c.is_call(Collective::all_gather) && all.size() <= kMeetingBytes && blocks.all_equal() &&
      c.meet({d, blocks.size(0), butterfly_partner, butterfly_partner, doubling},
             blocks.block(buf, my_id).data(), concatenate, nullptr, all, Port::Results::shared,
             all.size()))
    return;
  for (int i = 0; i < d; ++i) {
    const int size = 1 << i;  // blocks each side holds before this step
    const int partner = my_id ^ size;
    const int mine = my_id & ~(size - 1);  // first block of my aligned range
    const int theirs = partner & ~(size - 1);
    const ConstBytes out = i == 0 && !own.empty() ? own : blocks.range(buf, mine, mine + size);
    c.sendrecv(partner, out, blocks.range(buf, theirs, theirs + size));
  }
}

// Selection also weighs the congestion of the XOR exchanges mapped onto a ring or mesh. (The
// reduce-scatter, its dual, costs the same: reduce_scatter_hypercube.cpp.)
double all_gather_hypercube_cost(const CostQuery& q) {
  double cost = q.dimension_hops();
  for (int k = 0; k < q.d(); ++k) cost += q.ts() + q.tw() * q.m() * (1 << k) * q.congestion(1 << k);
  return cost;
}
namespace {
// T(g) over the ids first .. first + size - 1 (th = 0): each half's blocks reach the other half
// in one message once the half has them all.
double uneven_all_gather(const CostQuery& q, int first, int size) {
  if (size == 1) return 0;
  const int half = size / 2;
  return std::max(uneven_all_gather(q, first, half) + q.w(q.rank_bytes(first, half)),
                  uneven_all_gather(q, first + half, half) + q.w(q.rank_bytes(first + half, half)));
}
}  // namespace

// Selection: the capped steps; textbook_time_v: equal counts as all_gather, else T (th = 0).
double all_gatherv_hypercube_cost(const CostQuery& q) {
  if (q.selection) {
    double cost = 0;
    for (int k = 0; k < q.d(); ++k) cost += q.w(q.cap(1 << k) * q.congestion(1 << k));
    return cost;
  }
  if (q.equal_counts()) return all_gather_hypercube_cost(q.as_regular());
  if (q.th() != 0) return kNoClosedForm;
  return uneven_all_gather(q, 0, q.p());
}

namespace {
void run(const Comm& c, const Args& a) { all_gather_hypercube(c, a.out, *a.blocks, a.in); }
}  // namespace

extern const AlgorithmCard all_gather_hypercube_card{
    {Collective::all_gather, Algo::hypercube, "Grama et al., Algorithm 4.7",
     "ts*log p + tw*m*(p-1) + th*H", kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    needs_hypercube,
    all_gather_hypercube_cost,
    run};

extern const AlgorithmCard all_gatherv_hypercube_card{
    {Collective::all_gatherv, Algo::hypercube,
     "Grama et al., Algorithm 4.7 with uneven blocks: step i sends the union of the 2^i blocks "
     "the sender holds",
     "uneven: T(all p blocks), T(g) = max over the halves h of g of T(h) + ts + tw*B(h), "
     "T(one block) = 0 (th = 0; th > 0: no closed form); equal blocks of m: ts*log p + "
     "tw*m*(p-1) + th*H",
     kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    needs_hypercube,
    all_gatherv_hypercube_cost,
    run};

}  // namespace hypercomm::detail
