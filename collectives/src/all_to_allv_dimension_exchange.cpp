// All-to-all personalized with per-pair counts by dimension exchange: store-and-forward, one
// hypercube dimension per step (Grama et al. 4.5.3, first algorithm; textbook.md,
// "Dimension-by-dimension all-to-all"), as all_to_all_dimension_exchange.cpp.
//
// For k = d-1 down to 0 each VP swaps with partner = my_id XOR 2^k the p/2 blocks whose
// destination lies in the partner's half of dimension k. A block's (source, destination) is
// implied by its position j in the p-position working set, as in the regular version: source =
// j's bits above k (the dimensions already exchanged) and my_id's bits up to k, destination = j's
// bits up to k and my_id's above k; the set starts as in (position = destination) and ends as out
// (position = source), and a received block takes the position the sent one left.
//
// With uneven blocks the partner does not know the sizes of the blocks it receives (they are
// other VPs' send_counts, gathered on the way), and the runtime's receives are of an exact size:
// each step is two exchanges with the partner, first the p/2 sizes (8 bytes each, a size both
// know), then the blocks. (The sizes cannot travel a step ahead as on the ring: the next step's
// blocks go to another partner and include blocks still to arrive.)
//
//   T = sum_k [max-path of (ts + tw*4p) then of (ts + tw*bytes_k)]: no closed form for uneven
//       counts (each exchange waits for the partner's clock): textbook_bounds_v bounds it;
//   equal blocks of m: (2*ts + tw*(m+8)*p/2) * log p + 2*th*H
//
// Restrictions: p = 2^d; neighbours only (a hypercube topology, or Links::routed).
//
// p = 8, VP 0 (000); block "s>d" goes from s to d; positions 0..7 of its working set:
//
//   start        0>0 0>1 0>2 0>3 0>4 0>5 0>6 0>7
//   k=2, with 4  0>0 0>1 0>2 0>3 4>0 4>1 4>2 4>3   (sent positions 4..7, their sizes first)
//   k=1, with 2  0>0 0>1 2>0 2>1 4>0 4>1 6>0 6>1   (sent positions 2,3,6,7)
//   k=0, with 1  0>0 1>0 2>0 3>0 4>0 5>0 6>0 7>0   (sent positions 1,3,5,7) = out
//
// At the last step every position's size is checked against recv_counts (SizeMismatch naming
// the source, irregular.cpp) before the blocks are exchanged and land in out.

#include <numeric>
#include <utility>
#include <vector>

#include "card.hpp"
#include "exchange.hpp"
#include "exchange_util.hpp"

namespace hypercomm::detail {

void all_to_allv_dimension_exchange(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                                    const Blocks& received) {
  const int p = c.p();
  const int d = log2_of(p);
  const int my_id = c.id();
  const auto u = [](int k) { return static_cast<std::size_t>(k); };

  // The working set: position j's block is size[j] bytes at offset[j] of `held`.
  std::vector<std::size_t> size(u(p)), offset(u(p) + 1, 0);
  std::vector<std::size_t> kept_offset(u(p) + 1), moved(u(p / 2)), coming(u(p / 2));
  const auto lay_out = [&] {
    for (int j = 0; j < p; ++j) offset[u(j) + 1] = offset[u(j)] + size[u(j)];
  };
  for (int j = 0; j < p; ++j) size[u(j)] = sent.size(j);
  lay_out();
  ConstBytes held = in;
  const auto block = [&](int j) { return held.subspan(offset[u(j)], size[u(j)]); };
  Buffer first_buffer, second_buffer, sizes_out(u(p / 2) * kSizeEntry),
      sizes_in(u(p / 2) * kSizeEntry), packed_buffer, arriving_buffer;
  Buffer* next = &first_buffer;
  Buffer* spare = &second_buffer;

  for (int k = d - 1; k >= 0; --k) {
    const int mask = 1 << k;
    const int partner = my_id ^ mask;
    const auto leaving = [&](int j) { return (j & mask) == (partner & mask); };

    // 1. The sizes of the positions whose bit k is the partner's, in increasing order.
    std::size_t out_bytes = 0;
    for (int j = 0, i = 0; j < p; ++j)
      if (leaving(j)) out_bytes += moved[u(i++)] = size[u(j)];
    put_sizes(sizes_out, moved);
    c.sendrecv(partner, sizes_out, sizes_in);
    get_sizes(sizes_in, coming);

    // 2. The blocks: those leaving packed in the same order; those arriving take their places.
    const Bytes packed = room(packed_buffer, out_bytes);
    std::size_t at = 0;
    for (int j = 0; j < p; ++j) {
      if (!leaving(j)) continue;
      copy_bytes(packed.subspan(at, size[u(j)]), block(j));
      at += size[u(j)];
    }
    kept_offset = offset;  // where the kept blocks lie in `held`
    for (int j = 0, i = 0; j < p; ++j)
      if (leaving(j)) size[u(j)] = coming[u(i++)];
    if (k == 0) {  // position j now holds the block from source j for me
      for (int j = 0; j < p; ++j)
        if (size[u(j)] != received.size(j)) throw_block_size(c, j, size[u(j)], received.size(j));
    }
    const Bytes arriving =
        room(arriving_buffer, std::accumulate(coming.begin(), coming.end(), std::size_t{0}));
    c.sendrecv(partner, packed, arriving);

    lay_out();
    const Bytes now = k == 0 ? out : room(*next, offset[u(p)]);
    at = 0;
    for (int j = 0; j < p; ++j) {
      const Bytes to = now.subspan(offset[u(j)], size[u(j)]);
      if (leaving(j)) {
        copy_bytes(to, ConstBytes(arriving).subspan(at, size[u(j)]));
        at += size[u(j)];
      } else {
        copy_bytes(to, held.subspan(kept_offset[u(j)], size[u(j)]));
      }
    }
    held = now;
    std::swap(next, spare);
  }
}

namespace {
// Selection: the p/2 sizes, then p/2 blocks of at most b, per dimension. textbook_time_v: equal
// blocks of m, (2*ts + tw*(m+8)*p/2)*log p + 2*th*H; uneven, no closed form.
double all_to_allv_dimension_exchange_cost(const CostQuery& q) {
  const int p = q.p();
  if (q.selection) {
    double cost = 0;
    for (int k = 0; k < q.d(); ++k)
      cost += q.w(8.0 * (p / 2) * q.congestion(1 << k)) + q.w(q.cap(p / 2) * q.congestion(1 << k));
    return cost;
  }
  if (!q.equal_counts()) return kNoClosedForm;
  const double block = q.as_regular().m() / p;
  return (2 * q.ts() + q.tw() * (block + 8) * (p / 2)) * q.d() + 2 * q.dimension_hops();
}
}  // namespace

extern const AlgorithmCard all_to_allv_dimension_exchange_card{
    {Collective::all_to_allv, Algo::dimension_exchange,
     "Grama et al., section 4.5.3 with per-pair counts: one dimension per step, each step "
     "the p/2 block sizes (8 bytes each) then the p/2 blocks",
     "uneven: no closed form (each exchange waits for the partner's clock); equal blocks of "
     "m: (2*ts + tw*(m+8)*p/2)*log p + 2*th*H",
     kHypercubeNeeds, "(ts + tw m p/2) log p"},
    needs_hypercube,
    all_to_allv_dimension_exchange_cost,
    [](const Comm& c, const Args& a) {
      all_to_allv_dimension_exchange(c, a.in, *a.blocks, a.out, *a.received);
    }};

}  // namespace hypercomm::detail
