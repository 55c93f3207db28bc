// All-to-all personalized with per-pair counts on a ring (Grama et al. 4.5.1, the book's
// one-directional ring, as all_to_all_ring.cpp), every message moving right.
//
// Step i (1..p-1): each VP sends right the p-i blocks still travelling and receives from the left
// those of source my_id-i for destinations my_id, my_id+1, ..., my_id+p-i-1; it keeps the first
// (its own) and forwards the rest. With uneven blocks a forwarding VP does not know their sizes:
// they are the source's send_counts. So the sizes travel one step ahead of the blocks they
// describe. Step 0 sends only the sizes of this VP's own blocks for my_id+1 .. my_id+p-1; every
// later message is the travelling blocks followed by the sizes of the blocks the same neighbour
// will send in the next step (which the sender learnt in the step before). Each receive's size
// is then known before it is posted (the runtime's receives are of an exact size), at the price
// of one more message (step 0) and 8 bytes per travelling block. (Two messages a step, sizes
// then blocks, would cost p-1 more latencies; agreeing on all p*p counts first, an all-gather,
// about as much.)
//
//   T = sum_{i=0}^{p-1} max-path of (ts + tw*bytes_i)   (bytes_0 = 8*(p-1); step i >= 1: the
//       travelling blocks + 8*(p-i-1)); no closed form for uneven counts (the clocks of the
//       sendrecvs wait on the neighbours): textbook_bounds_v bounds it.
//   equal blocks of m: ts + (ts + tw*(m+8)*p/2) * (p - 1)
//
// Restrictions: neighbours only (send to my_id+1, receive from my_id-1, mod p); any p.
//
// Message layout: the travelling blocks in the order they will be dropped off, then the sizes
// of the next step's blocks, the farthest destination's first, so that the receiver forwards
// its message minus its head (its own block) and minus its tail (the size of the block the next
// step brings it): one contiguous subspan, no copy. p = 4, VP 0, "s>d" a block, [s>d] its size:
//
//   step 0: sends [0>3][0>2][0>1]                 receives [3>2][3>1][3>0]
//   step 1: sends 0>1 0>2 0>3 [3>2][3>1]          receives 3>0 3>1 3>2 [2>1][2>0]  keeps 3>0
//   step 2: sends 3>1 3>2 [2>1]                   receives 2>0 2>1 [1>0]           keeps 2>0
//   step 3: sends 2>1                             receives 1>0                     keeps 1>0
//
// The final receiver checks each block's size against its recv_counts (SizeMismatch naming the
// source, irregular.cpp) before it keeps it. The same routine (bundles of several blocks for a
// block) runs along the rows and the columns of all_to_allv_mesh.cpp.

#include <numeric>
#include <utility>
#include <vector>

#include "card.hpp"
#include "exchange.hpp"
#include "exchange_util.hpp"

namespace hypercomm::detail {

void ring_all_to_allv(const Comm& c, const Ring& g, int width, ConstBytes in,
                      std::span<const std::size_t> sizes, BundleSink& sink) {
  const int n = g.size;
  const int my_rank = g.rank_of(c.id());
  const auto w = static_cast<std::size_t>(width);
  const auto sizes_of = [&](int k) { return sizes.subspan(static_cast<std::size_t>(k) * w, w); };
  const auto bytes_of = [](std::span<const std::size_t> s) {
    return std::accumulate(s.begin(), s.end(), std::size_t{0});
  };
  std::vector<std::size_t> bundle_offset(static_cast<std::size_t>(n) + 1, 0);
  for (int k = 0; k < n; ++k)
    bundle_offset[static_cast<std::size_t>(k) + 1] =
        bundle_offset[static_cast<std::size_t>(k)] + bytes_of(sizes_of(k));
  const auto bundle_of = [&](int k) {
    return in.subspan(bundle_offset[static_cast<std::size_t>(k)],
                      bundle_offset[static_cast<std::size_t>(k) + 1] -
                          bundle_offset[static_cast<std::size_t>(k)]);
  };

  sink.take(my_rank, sizes_of(my_rank), bundle_of(my_rank));
  if (n == 1) return;
  const int right = g.right(my_rank);
  const int left = g.left(my_rank);
  const std::size_t entries = static_cast<std::size_t>(n - 1) * w;

  // Step 0: the sizes of my bundles for my_rank+n-1 down to my_rank+1.
  Buffer first_buffer, second_buffer;
  std::vector<std::size_t> coming;  // the sizes of the next bundles from the left, farthest first
  coming.reserve(entries);
  {
    const Bytes mine = room(first_buffer, entries * kSizeEntry);
    for (int j = n - 1; j >= 1; --j)
      put_sizes(mine.subspan(static_cast<std::size_t>(n - 1 - j) * w * kSizeEntry, w * kSizeEntry),
                sizes_of((my_rank + j) % n));
    const Bytes theirs = room(second_buffer, entries * kSizeEntry);
    c.sendrecv(right, mine, left, theirs);
    get_sizes(theirs, coming);
  }
  // Step 1's message: my bundles for my_rank+1 .. my_rank+n-1, then the sizes just received less
  // the last bundle's (mine).
  const std::size_t own = in.size() - (bundle_of(my_rank).size());
  const Bytes first = room(first_buffer, own + (entries - w) * kSizeEntry);
  std::size_t at = 0;
  for (int j = 1; j < n; ++j) {
    const ConstBytes b = bundle_of((my_rank + j) % n);
    copy_bytes(first.subspan(at, b.size()), b);
    at += b.size();
  }
  put_sizes(first.subspan(own), std::span<const std::size_t>(coming).first(entries - w));
  ConstBytes msg = first;
  Buffer* receiving = &second_buffer;
  Buffer* holding = &first_buffer;

  for (int i = 1; i < n; ++i) {
    const int source = (my_rank - i + n) % n;
    // coming: the sizes of what the left sends now, the bundle for me last.
    const std::span<const std::size_t> mine = std::span<const std::size_t>(coming).last(w);
    const std::size_t data = bytes_of(coming);
    const std::size_t tail = static_cast<std::size_t>(n - i - 1) * w * kSizeEntry;
    const Bytes incoming = room(*receiving, data + tail);
    c.sendrecv(right, msg, left, incoming);
    const std::size_t kept = bytes_of(mine);
    sink.take(source, mine, incoming.first(kept));
    if (i == n - 1) break;
    get_sizes(incoming.subspan(data), coming);  // the next step's, farthest first
    msg = incoming.subspan(kept, incoming.size() - kept - w * kSizeEntry);
    std::swap(holding, receiving);
  }
}

namespace {

// The whole machine's ring (or line): bundles of one block, landing in out after the size check.
class Landing final : public BundleSink {
 public:
  Landing(const Comm& c, Bytes out, const Blocks& received)
      : c_(c), out_(out), received_(received) {}
  void take(int member, std::span<const std::size_t> sizes, ConstBytes bundle) override {
    const std::size_t want = received_.size(member);
    if (sizes[0] != want) throw_block_size(c_, member, sizes[0], want);
    copy_bytes(received_.block(out_, member), bundle);
  }

 private:
  const Comm& c_;
  Bytes out_;
  const Blocks& received_;
};

}  // namespace

void whole_machine_all_to_allv(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                               const Blocks& received, BundleExchange exchange) {
  const int p = c.p();
  std::vector<std::size_t> sizes(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j) sizes[static_cast<std::size_t>(j)] = sent.size(j);
  Landing landing(c, out, received);
  exchange(c, Ring::all(p), 1, in, sizes, landing);
}

void all_to_allv_ring(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                      const Blocks& received) {
  whole_machine_all_to_allv(c, in, sent, out, received, ring_all_to_allv);
}

namespace {
// textbook_time_v: equal blocks exactly; uneven, or th > 0 where VP i and i+1 are not
// neighbours, no closed form.
double all_to_allv_ring_cost(const CostQuery& q) {
  if (q.selection) return q.capped_ring_all_to_allv(q.p(), 1);
  if (!q.equal_counts() || q.ring_th() != q.th()) return kNoClosedForm;
  return q.equal_ring_all_to_allv(q.p(), 1, q.as_regular().m() / q.p(), q.th());
}
}  // namespace

extern const AlgorithmCard all_to_allv_ring_card{
    {Collective::all_to_allv, Algo::ring,
     "Grama et al., section 4.5.1 with per-pair counts: one direction round the ring, the "
     "sizes of the forwarded blocks (8 bytes each) one step ahead of them",
     "uneven: no closed form (each step waits for the left neighbour); equal blocks of m: ts + (ts "
     "+ "
     "tw*(m+8)*p/2)*(p-1) + th*p on a ring",
     kRingNeeds, "(ts + tw m p/2)(p - 1)"},
    needs_ring,
    all_to_allv_ring_cost,
    [](const Comm& c, const Args& a) { all_to_allv_ring(c, a.in, *a.blocks, a.out, *a.received); }};

}  // namespace hypercomm::detail
