// All-to-all personalized with per-pair counts on a linear array, neighbours only (Grama et al.
// section 4.5.1's ring algorithm without the wraparound, as all_to_all_line.cpp): the bundles for
// higher ranks travel up the line, those for lower ranks down, one stream after the other, each
// the book's pipeline, with the sizes of the forwarded blocks one step ahead of them (as
// all_to_allv_ring.cpp: a forwarding VP does not know them, and every receive is of an exact
// size).
//
// Up stream, member k: step 0 sends up the sizes of its own bundles for k+1 .. n-1 and receives
// from k-1 those of member k-1's for k .. n-1. Step i (1 .. k+1) sends up the bundles of member
// k-i+1 for k+1 .. n-1 followed by the sizes of member k-i's for k+1 .. n-1 (learnt in step i-1),
// and receives from k-1 the bundles of member k-i for k .. n-1 (sizes known) followed by the
// sizes of member k-i-1's; it keeps the first bundle and forwards the rest less its own size
// entry. The down stream mirrors it (member k+i's bundles for k .. 0 from k+1), and starts when
// the up stream has ended at this member.
//
//   T = the longest path through the two streams' steps (a sendrecv's clock waits on the
//       neighbour below): line_all_to_allv_clocks (cost_all_to_allv.cpp) runs it exactly, for any
//       counts;
//   equal bundles of b bytes (e = 8 bytes of sizes a bundle), n members:
//     T = 2n*ts + 2(n-1)*th + tw*max_{j=0..n-2} (b*(n(n-1) - 2j) + e*(j+1)*(2n-2-j)),
//   the j = 0 term's when b >= e*(n-2): 2n*ts + 2(n-1)*th + tw*(b*n + 2e)*(n-1), two start-ups
//   and tw*2e*(n-1) more than the regular line all-to-all's (all_to_all_line.cpp). Smaller
//   bundles put the critical path through more of the sizes steps (j > 0).
//
// On a rows x cols mesh without wraparound: all_to_allv_mesh.cpp's row phase, then column phase,
// each this line algorithm with bundles of several blocks.
//
// Restrictions: a linear array (or a 1 x n open mesh), VP i and i+1 neighbours.
//
// Message layout, as the ring's: the travelling blocks in drop-off order, then the sizes of the
// next step's blocks, the farthest destination's first, so that a member forwards its message
// less its head (its own block) and its tail (its own size entry): one contiguous subspan.
// n = 3, up stream, "s>d" a block, [s>d] its size:
//
//   member 0: step 0 sends [0>2][0>1];     step 1 sends 0>1 0>2
//   member 1: step 0 sends [1>2], receives [0>2][0>1];
//             step 1 sends 1>2 [0>2], receives 0>1 0>2 (keeps 0>1); step 2 sends 0>2
//   member 2: step 0 receives [1>2]; step 1 receives 1>2 [0>2]; step 2 receives 0>2

#include <numeric>
#include <utility>
#include <vector>

#include "card.hpp"
#include "exchange.hpp"
#include "exchange_util.hpp"

namespace hypercomm::detail {

namespace {

// One stream along the line. Positions count along the stream: position q is member q of the
// up stream, member n-1-q of the down stream (mirrored), so the bundles always travel to
// higher positions.
class LineStream {
 public:
  LineStream(const Comm& c, const Ring& g, int width, ConstBytes in,
             std::span<const std::size_t> sizes, BundleSink& sink, bool down)
      : c_(c),
        g_(g),
        w_(static_cast<std::size_t>(width)),
        in_(in),
        sizes_(sizes),
        sink_(sink),
        down_(down),
        n_(g.size),
        q_(position_of(g.rank_of(c.id()))) {
    bundle_offset_.assign(static_cast<std::size_t>(n_) + 1, 0);
    for (int k = 0; k < n_; ++k)
      bundle_offset_[static_cast<std::size_t>(k) + 1] =
          bundle_offset_[static_cast<std::size_t>(k)] + bytes_of(sizes_of(k));
  }

  // This member's own bundle, to the sink.
  void keep_own() const {
    const int k = rank_at(q_);
    sink_.take(k, sizes_of(k), bundle_of(k));
  }

  void run(Buffer& first_buffer, Buffer& second_buffer) {
    const int n = n_, q = q_;
    const int up = q + 1 < n ? g_.member(rank_at(q + 1)) : -1;
    const int below = q > 0 ? g_.member(rank_at(q - 1)) : -1;
    // Step 0: the sizes of my bundles for positions n-1 down to q+1; those of position q-1's
    // for n-1 down to q.
    std::vector<std::size_t> coming;  // the sizes of the next bundles from below, farthest first
    {
      const Bytes mine = room(first_buffer, static_cast<std::size_t>(n - 1 - q) * entries());
      for (int j = n - 1; j > q; --j)
        put_sizes(mine.subspan(static_cast<std::size_t>(n - 1 - j) * entries(), entries()),
                  sizes_of(rank_at(j)));
      const Bytes theirs =
          below >= 0 ? room(second_buffer, static_cast<std::size_t>(n - q) * entries()) : Bytes{};
      exchange(up, mine, below, theirs);
      get_sizes(theirs, coming);
    }
    // Step 1's message: my bundles for positions q+1 .. n-1, then the sizes just received less
    // mine (the last).
    std::size_t own = 0;
    for (int j = q + 1; j < n; ++j) own += bundle_of(rank_at(j)).size();
    const std::size_t ahead = coming.empty() ? 0 : coming.size() - w_;
    const Bytes first = room(first_buffer, own + ahead * kSizeEntry);
    std::size_t at = 0;
    for (int j = q + 1; j < n; ++j) {
      const ConstBytes b = bundle_of(rank_at(j));
      copy_bytes(first.subspan(at, b.size()), b);
      at += b.size();
    }
    put_sizes(first.subspan(own), std::span<const std::size_t>(coming).first(ahead));
    ConstBytes msg = first;
    Buffer* receiving = &second_buffer;
    Buffer* holding = &first_buffer;

    for (int i = 1; i < n && i <= q + 1; ++i) {
      const bool receives = q - i >= 0;
      const bool sizes_follow = q - i - 1 >= 0;  // the sizes of position q-i-1's bundles
      Bytes incoming{};
      std::size_t data = 0;
      if (receives) {
        data = bytes_of(coming);
        const std::size_t tail = sizes_follow ? static_cast<std::size_t>(n - q) * entries() : 0;
        incoming = room(*receiving, data + tail);
      }
      exchange(up, msg, receives ? below : -1, incoming);
      if (!receives) break;  // the bundles of position 0 have gone on
      const std::span<const std::size_t> mine = std::span<const std::size_t>(coming).last(w_);
      const std::size_t kept = bytes_of(mine);
      sink_.take(rank_at(q - i), mine, incoming.first(kept));
      msg = incoming.subspan(kept, incoming.size() - kept - (sizes_follow ? entries() : 0));
      if (sizes_follow) get_sizes(incoming.subspan(data), coming);  // the next step's
      std::swap(holding, receiving);
    }
  }

 private:
  [[nodiscard]] int position_of(int rank) const noexcept { return down_ ? n_ - 1 - rank : rank; }
  [[nodiscard]] int rank_at(int position) const noexcept { return position_of(position); }
  [[nodiscard]] std::size_t entries() const noexcept { return w_ * kSizeEntry; }
  [[nodiscard]] std::span<const std::size_t> sizes_of(int rank) const noexcept {
    return sizes_.subspan(static_cast<std::size_t>(rank) * w_, w_);
  }
  [[nodiscard]] static std::size_t bytes_of(std::span<const std::size_t> s) noexcept {
    return std::accumulate(s.begin(), s.end(), std::size_t{0});
  }
  [[nodiscard]] ConstBytes bundle_of(int rank) const noexcept {
    const auto k = static_cast<std::size_t>(rank);
    return in_.subspan(bundle_offset_[k], bundle_offset_[k + 1] - bundle_offset_[k]);
  }
  // Sends `out` to `to` and receives `in` from `from` (-1: none), together where both.
  void exchange(int to, ConstBytes out, int from, Bytes in) const {
    if (to >= 0 && from >= 0)
      c_.sendrecv(to, out, from, in);
    else if (to >= 0)
      c_.send(to, out);
    else if (from >= 0)
      c_.recv(from, in);
  }

  const Comm& c_;
  const Ring& g_;
  std::size_t w_;
  ConstBytes in_;
  std::span<const std::size_t> sizes_;
  BundleSink& sink_;
  bool down_;
  int n_;
  int q_;
  std::vector<std::size_t> bundle_offset_;
};

}  // namespace

void line_all_to_allv(const Comm& c, const Ring& g, int width, ConstBytes in,
                      std::span<const std::size_t> sizes, BundleSink& sink) {
  LineStream up(c, g, width, in, sizes, sink, false);
  up.keep_own();
  if (g.size == 1) return;
  Buffer first_buffer, second_buffer;
  up.run(first_buffer, second_buffer);
  LineStream(c, g, width, in, sizes, sink, true).run(first_buffer, second_buffer);
}

void all_to_allv_line(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                      const Blocks& received) {
  whole_machine_all_to_allv(c, in, sent, out, received, line_all_to_allv);
}

namespace {
// textbook_time_v: the two streams' clocks run step by step (line_all_to_allv_clocks), exact
// for any counts where VP i and i+1 are neighbours; selection: every block the largest, each
// message capped at the bytes of all blocks.
double all_to_allv_line_cost(const CostQuery& q) {
  if (q.selection) return q.capped_line_all_to_allv();
  if (q.line_th() != q.th()) return kNoClosedForm;
  return q.exact_line_all_to_allv();
}
}  // namespace

extern const AlgorithmCard all_to_allv_line_card{
    {Collective::all_to_allv, Algo::ring,
     "Grama et al., section 4.5.1 on a linear array with per-pair counts: the ring's pipeline up "
     "the line, then down, the sizes of the forwarded blocks (8 bytes each) one step ahead of them",
     "the two streams' steps along the longest path, exact for any counts; equal blocks of m: "
     "2p*ts + 2(p-1)*th + tw*max_{j=0..p-2}(m*(p(p-1) - 2j) + 8(j+1)(2p-2-j)), which is "
     "2p*ts + 2(p-1)*th + tw*(m*p + 16)*(p-1) for m >= 8(p-2)",
     kLineNeeds, "(ts + tw m p/2)(p - 1) (ring)", "linear array"},
    needs_line,
    all_to_allv_line_cost,
    [](const Comm& c, const Args& a) { all_to_allv_line(c, a.in, *a.blocks, a.out, *a.received); },
    line_counts_hops};

}  // namespace hypercomm::detail
