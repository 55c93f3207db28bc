// All-to-all personalized with per-pair counts on a rows x cols mesh: row phase, then column
// phase (Grama et al. 4.5.2, as all_to_all_mesh.cpp), each the ring all-to-allv of
// all_to_allv_ring.cpp along the row or the column, with bundles of several blocks. The sizes of
// a bundle's blocks travel one step ahead of it (all_to_allv_ring.cpp), so a VP that regroups
// the blocks between the phases, and the final receiver, know every block's size.
//
//   T = no closed form for uneven counts (the rows end their phase at different times):
//       textbook_bounds_v bounds it;
//   equal blocks of m: 2*ts + (ts + tw*(m+8)*p/2) * (rows + cols - 2)   (rows, cols >= 2;
//       a phase along a line of 1 costs nothing, its ts included)
//
// Restrictions: mesh topology, any rows x cols; neighbours only on a torus (Links::routed on a
// mesh without wraparound, where the rings' wraparound messages are routed back along the line).
// On a mesh without wraparound under Links::strict each phase is the line's all-to-allv
// (all_to_allv_line.cpp), neighbours only: equal blocks of m, T = L(cols, rows*m, 8*rows) +
// L(rows, cols*m, 8*cols) with L(n, b, e) that file's line time (every column starts its phase
// as its row phase's pattern ends, so the phases add); any counts, cost_all_to_allv.cpp runs the
// clocks.
//
// VP (r, c) has id r*cols + c.
// 1. Row phase: the bundle for column c' holds the blocks for (r', c'), r' = 0..rows-1 (sizes
//    from send_counts). After it, (r, c) holds from every (r, c'') the blocks of (r, c'') for
//    (r', c), r' = 0..rows-1, with their sizes.
// 2. Column phase: regrouped by destination row, the bundle for row r' holds the blocks of
//    (r, c''), c'' = 0..cols-1, for (r', c). After it, (r, c) holds from every (r'', c) the
//    blocks of (r'', c'') for itself, c'' = 0..cols-1: sources r''*cols .. r''*cols + cols-1,
//    which land in out in source order once each size is checked against recv_counts.
// The regroupings are local copies (no model time).

#include <vector>

#include "card.hpp"
#include "exchange.hpp"
#include "exchange_util.hpp"

namespace hypercomm::detail {

namespace {

// The row phase's bundles, kept as they arrive: member c'''s bundle at start[c''], its rows
// block sizes at sizes[c''*rows ...].
class RowBundles final : public BundleSink {
 public:
  RowBundles(int cols, int rows)
      : rows_(static_cast<std::size_t>(rows)),
        start(static_cast<std::size_t>(cols)),
        sizes(static_cast<std::size_t>(cols) * rows_) {}
  void take(int member, std::span<const std::size_t> s, ConstBytes bundle) override {
    const auto k = static_cast<std::size_t>(member);
    start[k] = bytes.size();
    bytes.insert(bytes.end(), bundle.begin(), bundle.end());
    std::copy(s.begin(), s.end(), sizes.begin() + static_cast<std::ptrdiff_t>(k * rows_));
  }

  std::size_t rows_;
  Buffer bytes;
  std::vector<std::size_t> start;
  std::vector<std::size_t> sizes;
};

// The column phase's bundles: row r'''s blocks land at sources r''*cols .. r''*cols + cols-1.
class ColumnLanding final : public BundleSink {
 public:
  ColumnLanding(const Comm& c, int cols, Bytes out, const Blocks& received)
      : c_(c), cols_(cols), out_(out), received_(received) {}
  void take(int member, std::span<const std::size_t> sizes, ConstBytes bundle) override {
    const int first = member * cols_;
    for (int k = 0; k < cols_; ++k) {
      const std::size_t want = received_.size(first + k);
      if (sizes[static_cast<std::size_t>(k)] != want)
        throw_block_size(c_, first + k, sizes[static_cast<std::size_t>(k)], want);
    }
    copy_bytes(received_.range(out_, first, first + cols_), bundle);
  }

 private:
  const Comm& c_;
  int cols_;
  Bytes out_;
  const Blocks& received_;
};

}  // namespace

void all_to_allv_mesh(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                      const Blocks& received, bool open) {
  const Topology& t = c.topology();
  const int rows = t.rows();
  const int cols = t.cols();
  const auto u = [](int k) { return static_cast<std::size_t>(k); };

  // by_column[c'][r'] = the block for r'*cols + c'.
  Buffer by_column(in.size());
  std::vector<std::size_t> column_sizes(u(rows) * u(cols));
  std::size_t at = 0;
  for (int col = 0; col < cols; ++col) {
    for (int r = 0; r < rows; ++r) {
      const ConstBytes b = sent.block(in, r * cols + col);
      copy_bytes(Bytes(by_column).subspan(at, b.size()), b);
      at += b.size();
      column_sizes[u(col) * u(rows) + u(r)] = b.size();
    }
  }
  const auto phase = open ? line_all_to_allv : ring_all_to_allv;
  RowBundles from_row(cols, rows);
  phase(c, row_group(t, c.id()), rows, by_column, column_sizes, from_row);

  // by_row[r'][c''] = the block of (my row, c'') for (r', my column).
  std::vector<std::size_t> offset_in(u(cols) * u(rows));  // of block (c'', r') in from_row
  for (int col = 0; col < cols; ++col) {
    std::size_t first = from_row.start[u(col)];
    for (int r = 0; r < rows; ++r) {
      offset_in[u(col) * u(rows) + u(r)] = first;
      first += from_row.sizes[u(col) * u(rows) + u(r)];
    }
  }
  const Bytes by_row = room(by_column, from_row.bytes.size());  // by_column is free again
  std::vector<std::size_t> row_sizes(u(rows) * u(cols));
  at = 0;
  for (int r = 0; r < rows; ++r) {
    for (int col = 0; col < cols; ++col) {
      const std::size_t k = u(col) * u(rows) + u(r);
      const std::size_t size = from_row.sizes[k];
      copy_bytes(by_row.subspan(at, size), ConstBytes(from_row.bytes).subspan(offset_in[k], size));
      at += size;
      row_sizes[u(r) * u(cols) + u(col)] = size;
    }
  }
  ColumnLanding landing(c, cols, out, received);
  phase(c, column_group(t, c.id()), cols, by_row, row_sizes, landing);
}

namespace {
// The ring all-to-allv's cost along the rows with bundles of `rows` blocks, then along the
// columns with bundles of `cols`: a 1 x n mesh costs exactly what the ring of n does.
// textbook_time_v: equal blocks, the two phases exactly (every row ends its phase together);
// uneven, or th > 0 where the rings are not made of links, no closed form.
double all_to_allv_mesh_cost(const CostQuery& q) {
  const int rows = q.t.rows(), cols = q.t.cols();
  if (q.selection)
    return q.capped_ring_all_to_allv(cols, rows) + q.capped_ring_all_to_allv(rows, cols);
  if (!q.equal_counts() || (q.th() != 0 && !q.t.lines_ring_adjacent())) return kNoClosedForm;
  const double block = q.as_regular().m() / q.p();
  return q.equal_ring_all_to_allv(cols, rows, block, q.th()) +
         q.equal_ring_all_to_allv(rows, cols, block, q.th());
}
}  // namespace

extern const AlgorithmCard all_to_allv_mesh_card{
    {Collective::all_to_allv, Algo::mesh,
     "Grama et al., section 4.5.2 with per-pair counts: the ring all-to-allv (sizes a step "
     "ahead) along the rows with column bundles, then along the columns",
     "uneven: no closed form (the rows end at different times); equal blocks of m (rows, cols >= "
     "2): 2*ts + (ts + tw*(m+8)*p/2)*(rows+cols-2) "
     "+ th*(rows+cols) on a torus",
     kMeshNeeds, "(2 ts + tw m p)(sqrt p - 1)"},
    needs_mesh,
    all_to_allv_mesh_cost,
    [](const Comm& c, const Args& a) { all_to_allv_mesh(c, a.in, *a.blocks, a.out, *a.received); }};

// On a mesh without wraparound: the phases along lines (all_to_allv_line.cpp). textbook_time_v:
// the rows' streams, then the columns' from each VP's clock, run step by step (exact for any
// counts); selection: every block the largest, each message capped.
extern const AlgorithmCard all_to_allv_mesh_open_card{
    {Collective::all_to_allv, Algo::mesh,
     "Grama et al., section 4.5.2 on a mesh without wraparound with per-pair counts: row phase, "
     "then column phase, each the line's all-to-allv (up, then down, the sizes a step ahead)",
     "the row streams, then the column streams, along the longest path, exact for any counts; "
     "equal blocks of m: L(cols, rows*m, 8*rows) + L(rows, cols*m, 8*cols), L(n, b, e) = 2n*ts "
     "+ 2(n-1)*th + tw*max_{j=0..n-2}(b*(n(n-1) - 2j) + e(j+1)(2n-2-j)) (the line all-to-allv's "
     "n bundles of b bytes, e bytes of sizes each)",
     kOpenMeshNeeds, "(2 ts + tw m p)(sqrt p - 1) (torus)", "open mesh"},
    needs_open_mesh,
    [](const CostQuery& q) {
      return q.selection ? q.capped_open_mesh_all_to_allv() : q.exact_open_mesh_all_to_allv();
    },
    [](const Comm& c, const Args& a) {
      all_to_allv_mesh(c, a.in, *a.blocks, a.out, *a.received, true);
    }};

}  // namespace hypercomm::detail
