// All-to-all personalized on a rows x cols torus: row phase, then column phase (Grama et al.
// 4.5.2), each a ring all-to-all (all_to_all_ring.cpp) along the row or the column.
//
//   T = (ts + tw*m*p/2) * (cols - 1)  +  (ts + tw*m*p/2) * (rows - 1)
//     = (ts + tw*m*p/2) * (rows + cols - 2)                                (m = bytes per block)
//   square mesh (rows = cols = sqrt p): T = (2 ts + tw*m*p) * (sqrt p - 1), the book's formula.
//
// Restrictions: mesh topology, any rows x cols (1 x n included); neighbours only.
// On a mesh without wraparound (neighbours only) each phase is the line's all-to-all
// (all_to_all_line.cpp): T = (rows + cols - 2)*(2*ts + 2*th + tw*m*p).
//
// VP (r, c) has id r*cols + c.
// 1. Row phase: group the p blocks by destination column; the bundle for column c' holds the
//    blocks for r'*cols + c', r' = 0..rows-1. A ring all-to-all in the row with bundles of rows
//    blocks leaves at (r, c) one bundle from every (r, c''): the blocks of (r, c'') for column c.
// 2. Column phase: regroup by destination row; the bundle for row r' holds the blocks of
//    (r, c''), c'' = 0..cols-1, for (r', c). A ring all-to-all in the column with bundles of
//    cols blocks leaves at (r, c) the bundle from (r'', c) = the blocks of (r'', c'') for
//    c'' = 0..cols-1, i.e. of sources r''*cols .. r''*cols + cols-1: out in source-id order.
// The two regroupings are local transposes (no model time).

#include <vector>

#include "card.hpp"
#include "exchange.hpp"
#include "exchange_util.hpp"

namespace hypercomm::detail {

void all_to_all_mesh(const Comm& c, ConstBytes in, Bytes out, std::size_t block, bool open) {
  const Topology& t = c.topology();
  const int rows = t.rows();
  const int cols = t.cols();
  const auto at = [block](auto buf, int k) {
    return buf.subspan(static_cast<std::size_t>(k) * block, block);
  };

  // by_column[c'][r'] = in[r'*cols + c']: bundles for the row phase.
  Buffer by_column(in.size());
  for (int r = 0; r < rows; ++r) {
    for (int col = 0; col < cols; ++col) {
      copy_bytes(at(Bytes(by_column), col * rows + r), at(in, r * cols + col));
    }
  }
  // from_row[c''][r'] = the block of (my row, c'') for (r', my column).
  Buffer from_row(in.size());
  const auto phase = open ? line_all_to_all : ring_all_to_all;
  phase(c, row_group(t, c.id()), by_column, from_row, static_cast<std::size_t>(rows) * block);

  // by_row[r'][c''] = from_row[c''][r']: bundles for the column phase (by_column is free again).
  Buffer& by_row = by_column;
  for (int r = 0; r < rows; ++r) {
    for (int col = 0; col < cols; ++col) {
      copy_bytes(at(Bytes(by_row), r * cols + col), at(ConstBytes(from_row), col * rows + r));
    }
  }
  phase(c, column_group(t, c.id()), by_row, out, static_cast<std::size_t>(cols) * block);
}

namespace {
double all_to_all_mesh_cost(const CostQuery& q) {
  return (q.t.rows() + q.t.cols() - 2) * (q.w(q.m() / 2) + q.mesh_th());
}
}  // namespace

extern const AlgorithmCard all_to_all_mesh_card{
    {Collective::all_to_all, Algo::mesh,
     "Grama et al., section 4.5.2: row phase, then column phase",
     "(ts + tw*m*p/2 + th)*(rows+cols-2) (m = one block)", kMeshNeeds,
     "(2 ts + tw m p)(sqrt p - 1)"},
    needs_mesh,
    all_to_all_mesh_cost,
    [](const Comm& c, const Args& a) {
      all_to_all_mesh(c, a.in, a.out, a.in.size() / static_cast<std::size_t>(c.p()));
    },
    mesh_counts_hops};

// On a mesh without wraparound: the phases along lines (all_to_all_line.cpp), each row's (and
// each column's) finishing last at its end, so the phases add.
extern const AlgorithmCard all_to_all_mesh_open_card{
    {Collective::all_to_all, Algo::mesh,
     "Grama et al., section 4.5.2 on a mesh without wraparound: row phase, then column phase, "
     "each the line's all-to-all (up, then down)",
     "(rows+cols-2)*(2*ts + 2*th + tw*m*p) (m = one block)", kOpenMeshNeeds,
     "(2 ts + tw m p)(sqrt p - 1) (torus)", "open mesh"},
    needs_open_mesh,
    [](const CostQuery& q) {
      return (q.t.rows() + q.t.cols() - 2) * (2 * q.ts() + 2 * q.th() + q.tw() * q.m());
    },
    [](const Comm& c, const Args& a) {
      all_to_all_mesh(c, a.in, a.out, a.in.size() / static_cast<std::size_t>(c.p()), true);
    }};

}  // namespace hypercomm::detail
