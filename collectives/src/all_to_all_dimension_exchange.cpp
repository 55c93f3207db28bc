// All-to-all personalized by dimension exchange: store-and-forward, one hypercube dimension per
// step (textbook.md, "Dimension-by-dimension all-to-all"; Grama et al. 4.5.3, first algorithm).
//
//   T = (ts + tw*m*p/2) * log p        (m = bytes per block)
//
// Restrictions: p = 2^d; neighbours only (partner = my_id XOR 2^k).
//
// For k = d-1 down to 0 each VP exchanges with my_id XOR 2^k the p/2 blocks whose destination
// lies in the partner's half of the k-th dimension. Each block travels with its (source,
// destination) implied by its position in a p-block working buffer: position j holds the block
// whose source agrees with j on the dimensions already exchanged and whose destination agrees
// with j on the others. So the buffer starts as `in` (position = destination) and ends as `out`
// (position = source), blocks kept stay where they are, and a received block lands exactly where
// the sent one left (positions whose bit k is the partner's, packed in increasing order on both
// sides).
//
// p = 8, VP 0 (000); block "s>d" goes from s to d; positions 0..7 of its buffer:
//
//   start        0>0 0>1 0>2 0>3 0>4 0>5 0>6 0>7
//   k=2, with 4  0>0 0>1 0>2 0>3 4>0 4>1 4>2 4>3   (sent positions 4..7)
//   k=1, with 2  0>0 0>1 2>0 2>1 4>0 4>1 6>0 6>1   (sent positions 2,3,6,7)
//   k=0, with 1  0>0 1>0 2>0 3>0 4>0 5>0 6>0 7>0   (sent positions 1,3,5,7) = out
//
// When VPs outnumber cores a small exchange may instead run as one meeting in shared memory
// (Port::meet): the same steps, p/2 blocks each, on the model clocks and the links, and the
// same bytes, the last VP to arrive putting every block where the steps would have taken it.
// A larger one meets too (blocks_meeting.hpp, meet_all_to_all): the last to arrive moves every
// block, each once (the steps copy p/2 blocks a step, log p steps, packed and unpacked), up to
// 24 KiB a VP; past that each VP copies the blocks it receives straight from their senders' ins,
// and no VP leaves before every VP has copied.

#include <cstring>
#include <vector>

#include "blocks_meeting.hpp"
#include "card.hpp"
#include "exchange.hpp"

namespace hypercomm::detail {

namespace {

// A meeting up to kMeetingBytes a VP (comm.hpp) and kMeetingTotal all told (the last VP to
// arrive moves them all).
constexpr std::size_t kMeetingTotal = std::size_t{1} << 20;

// Every VP's out: block i of VP j's is block j of VP i's in.
void transpose(const void* context, std::span<const void* const> inputs, Bytes result,
               Bytes /*scratch*/) {
  const std::size_t block = *static_cast<const std::size_t*>(context);
  const std::size_t p = inputs.size();
  if (block == 0) return;
  for (std::size_t j = 0; j < p; ++j)
    for (std::size_t i = 0; i < p; ++i)
      std::memcpy(result.data() + (j * p + i) * block,
                  static_cast<const std::byte*>(inputs[i]) + j * block, block);
}

}  // namespace

void all_to_all_dimension_exchange(const Comm& c, ConstBytes in, Bytes out, std::size_t block) {
  const int p = c.p();
  const int d = log2_of(p);
  const int my_id = c.id();
  const std::size_t half = static_cast<std::size_t>(p / 2) * block;
  if (c.is_call(Collective::all_to_all) && out.size() <= kMeetingBytes &&
      out.size() * static_cast<std::size_t>(p) <= kMeetingTotal &&
      c.meet({d, half, descending_partner, descending_partner}, in.data(), transpose, &block, out,
             Port::Results::per_vp, out.size()))
    return;
  if (c.is_call(Collective::all_to_all) && out.size() > kMeetingBytes &&
      meet_all_to_all(c, {d, half, descending_partner, descending_partner}, in, out, block))
    return;

  copy_bytes(out, in);  // out is the working buffer: position = destination for now
  Buffer outgoing(half);
  Buffer incoming(d > 1 ? half : 0);  // the first step needs none

  for (int k = d - 1; k >= 0; --k) {
    const int mask = 1 << k;
    const int partner = my_id ^ mask;
    const std::size_t run = static_cast<std::size_t>(mask) * block;  // 2^k consecutive blocks
    // The positions whose bit k is the partner's: runs of 2^k blocks, 2^(k+1) blocks apart.
    const auto runs = [&](auto&& visit) {
      std::size_t packed = 0;
      for (int first = partner & mask; first < p; first += 2 * mask, packed += run) {
        visit(out.subspan(static_cast<std::size_t>(first) * block, run), packed);
      }
    };

    runs([&](Bytes at, std::size_t packed) {
      copy_bytes(std::span(outgoing).subspan(packed, run), at);
    });
    if (2 * mask == p) {
      // One run (the first step): receive straight into it.
      c.sendrecv(partner, outgoing,
                 out.subspan(static_cast<std::size_t>(partner & mask) * block, half));
    } else {
      c.sendrecv(partner, outgoing, incoming);
      runs([&](Bytes at, std::size_t packed) {
        copy_bytes(at, std::span<const std::byte>(incoming).subspan(packed, run));
      });
    }
  }
}

namespace {
double all_to_all_dimension_exchange_cost(const CostQuery& q) {
  double cost = q.dimension_hops();
  for (int k = 0; k < q.d(); ++k) cost += q.w(q.m() / 2 * q.congestion(1 << k));
  return cost;
}
}  // namespace

extern const AlgorithmCard all_to_all_dimension_exchange_card{
    {Collective::all_to_all, Algo::dimension_exchange,
     "Grama et al., section 4.5.3: one dimension per step, store and forward",
     "(ts + tw*m*p/2)*log p + th*H (m = one block)", kHypercubeNeeds, "(ts + tw m p/2) log p"},
    needs_hypercube,
    all_to_all_dimension_exchange_cost,
    [](const Comm& c, const Args& a) {
      all_to_all_dimension_exchange(c, a.in, a.out, a.in.size() / static_cast<std::size_t>(c.p()));
    }};

}  // namespace hypercomm::detail
