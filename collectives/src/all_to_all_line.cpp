// All-to-all personalized on a linear array, neighbours only (Grama et al. section 4.5.1's ring
// algorithm without the wraparound): the bundles for higher ranks travel up the line, those for
// lower ranks down, one stream after the other, each the book's pipeline.
//
// Up stream, steps i = 1 .. n-1: member k sends up the bundles of member k-i+1 still travelling
// (those for k+1 .. n-1; its own at step 1) and receives from k-1 those of member k-i for
// k .. n-1, keeping the first. The bundles of member 0 are the last to arrive: at member j after
// sum_{i=1}^{j} (ts + tw*b*(n-i) + th). The down stream mirrors it and starts at the top member
// when the up stream has ended there, so with b the bytes of one bundle:
//
//   T = 2*(n-1)*(ts + th) + tw*b*n*(n-1)    (p = n, b = m/p: (p-1)*(2*ts + 2*th + tw*m))
//
// twice the ring's (ts + tw*m/2)(p-1): the line has half the ring's links across any cut.
//
// On a rows x cols mesh without wraparound: all_to_all_mesh.cpp's row phase, then column phase,
// each this line algorithm: T = (rows + cols - 2)*(2*ts + 2*th + tw*m).
//
// Restrictions: a linear array (or a 1 x n open mesh), VP i and i+1 neighbours. n = 3, member 1:
//
//   up:   step 1: sends 1>2, receives 0>1 0>2 (keeps 0>1); step 2: sends 0>2
//   down: step 1: sends 1>0, receives 2>0 2>1 (keeps 2>1); step 2: sends 2>0

#include <utility>

#include "card.hpp"
#include "exchange.hpp"
#include "exchange_util.hpp"

namespace hypercomm::detail {

void line_all_to_all(const Comm& c, const Ring& g, ConstBytes in, Bytes out, std::size_t bundle) {
  const int n = g.size;
  const int k = g.rank_of(c.id());
  const auto bundles = [bundle](auto buf, int first, int count) {
    return buf.subspan(static_cast<std::size_t>(first) * bundle,
                       static_cast<std::size_t>(count) * bundle);
  };
  copy_bytes(bundles(out, k, 1), bundles(in, k, 1));
  if (n == 1) return;
  Buffer first_buffer(static_cast<std::size_t>(n - 1) * bundle);
  Buffer second_buffer(first_buffer.size());

  // Up: in step i, the bundles of member k-i+1 for k+1 .. n-1 go to k+1 (k+1 < n), those of
  // member k-i for k .. n-1 come from k-1 (k-i >= 0); the first of them is mine.
  Bytes holding = first_buffer, receiving = second_buffer;
  ConstBytes travelling = bundles(in, k + 1, n - 1 - k);
  for (int i = 1; i < n && i <= k + 1; ++i) {
    const bool sends = k + 1 < n;
    const bool receives = k - i >= 0;
    const Bytes incoming =
        receives ? receiving.first(static_cast<std::size_t>(n - k) * bundle) : Bytes{};
    if (sends && receives)
      c.sendrecv(g.member(k + 1), travelling, g.member(k - 1), incoming);
    else if (sends)
      c.send(g.member(k + 1), travelling);
    else if (receives)
      c.recv(g.member(k - 1), incoming);
    if (!receives) break;  // the bundles of member 0 have gone on
    copy_bytes(bundles(out, k - i, 1), bundles(ConstBytes(incoming), 0, 1));
    travelling = bundles(ConstBytes(incoming), 1, n - 1 - k);
    std::swap(holding, receiving);
  }

  // Down: in step i, the bundles of member k+i-1 for 0 .. k-1 go to k-1 (k > 0), those of
  // member k+i for 0 .. k come from k+1 (k+i < n); the last of them is mine.
  travelling = bundles(in, 0, k);
  for (int i = 1; i < n && i <= n - k; ++i) {
    const bool sends = k > 0;
    const bool receives = k + i < n;
    const Bytes incoming =
        receives ? receiving.first(static_cast<std::size_t>(k + 1) * bundle) : Bytes{};
    if (sends && receives)
      c.sendrecv(g.member(k - 1), travelling, g.member(k + 1), incoming);
    else if (sends)
      c.send(g.member(k - 1), travelling);
    else if (receives)
      c.recv(g.member(k + 1), incoming);
    if (!receives) break;
    copy_bytes(bundles(out, k + i, 1), bundles(ConstBytes(incoming), k, 1));
    travelling = bundles(ConstBytes(incoming), 0, k);
    std::swap(holding, receiving);
  }
}

namespace {

double all_to_all_line_cost(const CostQuery& q) {
  return (q.p() - 1) * (2 * q.ts() + 2 * q.line_th() + q.tw() * q.m());
}

}  // namespace

extern const AlgorithmCard all_to_all_line_card{
    {Collective::all_to_all, Algo::ring,
     "Grama et al., section 4.5.1 on a linear array: the ring's pipeline up the line, then down",
     "(p-1)*(2*ts + 2*th + tw*m*p) (m = one block)", kLineNeeds, "(ts + tw m p/2)(p - 1) (ring)",
     "linear array"},
    needs_line,
    all_to_all_line_cost,
    [](const Comm& c, const Args& a) {
      line_all_to_all(c, Ring::all(c.p()), a.in, a.out,
                      a.in.size() / static_cast<std::size_t>(c.p()));
    },
    line_counts_hops};

}  // namespace hypercomm::detail
