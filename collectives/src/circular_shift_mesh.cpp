// Circular q-shift on a rows x cols torus (Grama et al. 4.6): a row shift, then a column shift,
// each a ring shift (circular_shift_ring.cpp) along the row or the column.
//
// VP (r, c) has id r*cols + c; its message goes to (id + q) mod p. Write q = qr*cols + qc
// (qc = q mod cols, qr = floor(q / cols)):
// 1. Row phase: every row shifts by qc; the message of (r, c) lands at (r, (c + qc) mod cols).
//    Messages that passed the row end (c + qc >= cols; they now sit in columns < qc) must also
//    go one row further: the book's compensating column shift by 1.
// 2. Column phase: column c' shifts by qr + 1 (mod rows) when c' < qc, else by qr. The book's
//    compensating step is folded into the column shift, so each column takes the shorter way
//    for its own total; all members of a column agree on it (it depends on c' only).
//
//   T = (ts + tw*m) * ( min(qc, cols - qc) + max over columns c' of min(s', rows - s') ),
//       s' = qr for c' >= qc, s' = (qr + 1) mod rows for c' < qc
//     <= (ts + tw*m) * (floor(cols/2) + floor(rows/2))
//   which is at most the book's row shift + compensating step + column shift, and at most
//   (ts + tw*m) * sqrt p on a square mesh (the book quotes (ts + tw*m)(sqrt p + 1)).
//
// Restrictions: mesh topology, any rows x cols (1 x n included); neighbours only.
// Example 3 x 4, q = 6 (qc = 2, qr = 1): rows shift by 2 (two steps); columns 0 and 1 (they
// received the wrapped messages) shift by 2, i.e. one step in the -1 direction, columns 2 and 3
// by 1: T = 3 steps (the book's form: 2 + 1 + 1 = 4).

#include <vector>

#include "card.hpp"
#include "exchange.hpp"
#include "exchange_util.hpp"

namespace hypercomm::detail {

void circular_shift_mesh(const Comm& c, ConstBytes in, Bytes out, int shift) {
  const Topology& t = c.topology();
  const int rows = t.rows();
  const int cols = t.cols();
  const int row_shift = shift % cols;  // qc
  const int col_shift = shift / cols;  // qr < rows, since shift < p
  const Ring row = row_group(t, c.id());
  const Ring column = column_group(t, c.id());

  if (row_shift == 0) {
    ring_shift(c, column, in, out, col_shift);
    return;
  }
  Buffer moved(in.size());
  ring_shift(c, row, in, moved, row_shift);
  // Columns 0 .. qc-1 hold the messages that wrapped round the row end: one row further.
  const int wrapped = t.col_of(c.id()) < row_shift ? 1 : 0;
  ring_shift(c, column, moved, out, (col_shift + wrapped) % rows);
}

namespace {
double circular_shift_mesh_cost(const CostQuery& q) {
  const int q_shift = q.shift();
  if (q_shift == 0) return 0;  // the message stays
  const int rows = q.t.rows(), cols = q.t.cols();
  const int qc = q_shift % cols, qr = q_shift / cols;
  const auto shorter = [](int s, int n) { return std::min(s, n - s); };
  int column_steps = shorter(qr, rows);
  if (qc > 0) column_steps = std::max(column_steps, shorter((qr + 1) % rows, rows));
  return (shorter(qc, cols) + column_steps) * (q.w(q.m()) + q.mesh_th());
}
}  // namespace

extern const AlgorithmCard circular_shift_mesh_card{
    {Collective::circular_shift, Algo::mesh,
     "Grama et al., section 4.6: row shift, then column shift (the compensating step folded in)",
     "(ts + tw*m + th)*(min(qc, cols-qc) + max(min(qr, rows-qr), qc > 0: min(qr', "
     "rows-qr'))), qc = q mod cols, qr = floor(q/cols), qr' = (qr+1) mod rows",
     kMeshNeeds, "(ts + tw m)(sqrt p + 1)"},
    needs_mesh,
    circular_shift_mesh_cost,
    [](const Comm& c, const Args& a) { circular_shift_mesh(c, a.in, a.out, a.root); },
    mesh_counts_hops};

}  // namespace hypercomm::detail
