// Circular q-shift on a linear array and on a mesh without wraparound, neighbours only (after
// Grama et al. section 4.6, whose ring and torus forms need the wraparound links).
//
// Along a line of n members the message of member k goes to member (k + q) mod n: the members
// k < n - q send theirs q members up, the others n - q members down. Two streams, one after the
// other, each a pipeline in which every travelling message moves one member a step:
//   up:   q steps; in step i member k passes on the message of member k - i + 1;
//   down: n - q steps; in step i member k passes on the message of member k + i - 1.
// The down stream's first message leaves the top member when the up stream's last has reached it,
// so with h = ts + tw*m + th:
//
//   T = n * h   (0 < q < n; q = 0: 0)
//
// and member k is done at F(k) = (n - 1 - k + q)*h + (ts + tw*m) for k >= q (its last act a
// send), n*h for 2q - n <= k < q, (k + 2n - 2q)*h + (ts + tw*m) for k < 2q - n (all ports:
// without the last term where the next send goes out on another link).
//
// On a rows x cols mesh without wraparound (q = qr*cols + qc, as circular_shift_mesh.cpp): every
// row shifts by qc along its line, then column c' by (qr + 1) mod rows when c' < qc (its
// messages passed the row's end), else by qr. Column c' starts when its members finish the row
// phase, at F(c') (every row alike), and takes rows*h when it shifts:
//
//   T = max over c' of F_cols,qc(c') + (column c' shifts ? rows*h : 0)   (qc = 0: rows*h, or 0)
//
// Restrictions: a linear array (or a 1 x n open mesh), VP i and i+1 neighbours; a mesh without
// wraparound, neighbours only. Example n = 5, q = 2: up, 2 steps (0 -> 2, 1 -> 3, 2 -> 4);
// down, 3 steps (3 -> 0, 4 -> 1); 5 steps in all.

#include <algorithm>

#include "card.hpp"
#include "exchange.hpp"
#include "exchange_util.hpp"

namespace hypercomm::detail {

namespace {

// One stream of the line shift: `steps` steps; in step i member k sends the message of member
// sent(i) (valid when travelling(sent(i))) to member k + dir and receives that of member
// received(i) from k - dir; the message received in the last step is k's own (to out).
template <class Sent, class Received, class Travelling>
void line_stream(const Comm& c, const Ring& g, int k, int dir, int steps, ConstBytes in, Bytes out,
                 Buffer (&buffers)[2], Sent sent, Received received, Travelling travelling) {
  ConstBytes held = in;
  for (int i = 1; i <= steps; ++i) {
    const bool sends = travelling(sent(i));
    const bool receives = travelling(received(i));
    const Bytes incoming = i == steps ? out : Bytes(buffers[i % 2]);
    if (sends && receives)
      c.sendrecv(g.member(k + dir), held, g.member(k - dir), incoming);
    else if (sends)
      c.send(g.member(k + dir), held);
    else if (receives)
      c.recv(g.member(k - dir), incoming);
    if (receives) held = incoming;
  }
}

}  // namespace

void line_shift(const Comm& c, const Ring& g, ConstBytes in, Bytes out, int shift) {
  const int n = g.size;
  const int q = shift;
  if (q == 0 || n == 1) {
    copy_bytes(out, in);
    return;
  }
  const int k = g.rank_of(c.id());
  Buffer buffers[2];
  buffers[0].resize(in.size());
  buffers[1].resize(in.size());
  // Up: the members below n - q, q steps.
  line_stream(
      c, g, k, +1, q, in, out, buffers, [k](int i) { return k - i + 1; },
      [k](int i) { return k - i; }, [n, q](int source) { return source >= 0 && source < n - q; });
  // Down: the members from n - q on, n - q steps.
  line_stream(
      c, g, k, -1, n - q, in, out, buffers, [k](int i) { return k + i - 1; },
      [k](int i) { return k + i; }, [n, q](int source) { return source >= n - q && source < n; });
}

namespace {

void circular_shift_line(const Comm& c, ConstBytes in, Bytes out, int shift) {
  line_shift(c, Ring::all(c.p()), in, out, shift);
}

void circular_shift_mesh_open(const Comm& c, ConstBytes in, Bytes out, int shift) {
  const Topology& t = c.topology();
  const Grid grid = Grid::of(t);
  const int qc = shift % grid.cols, qr = shift / grid.cols;
  if (qc == 0) {
    line_shift(c, grid.column(c.id()), in, out, qr);
    return;
  }
  Buffer moved(in.size());
  line_shift(c, grid.row(c.id()), in, moved, qc);
  const int wrapped = grid.col_of(c.id()) < qc ? 1 : 0;
  line_shift(c, grid.column(c.id()), moved, out, (qr + wrapped) % grid.rows);
}

// When member k of a line of n is done with a shift by 0 < q < n (h a step, w a send alone):
// the members from q on end with a send alone (one port: their clock moves on by w; all ports:
// it occupies their down link only, and a column phase after it starts without waiting for it);
// the others with the receive of their message.
struct LineFinish {
  double next;     // when the member may start sending on other links
  double settled;  // when its last send is done too
};
LineFinish line_shift_finish(int n, int q, int k, double h, double w, bool all_port) {
  if (k >= q) {
    const double sent = (n - 1 - k + q) * h;
    return {all_port ? sent : sent + w, sent + w};
  }
  if (k >= 2 * q - n) return {n * h, n * h};
  // The message arrives through member k + n - q, whose last up-stream act is a send alone.
  const double received = (k + 2 * n - 2 * q) * h + (all_port ? 0 : w);
  return {received, received};
}

double circular_shift_line_cost(const CostQuery& q) {
  return q.shift() == 0 ? 0 : q.p() * (q.w(q.m()) + q.line_th());
}

double circular_shift_mesh_open_cost(const CostQuery& q) {
  const int shift = q.shift();
  if (shift == 0) return 0;
  const int rows = q.t.rows(), cols = q.t.cols();
  const int qc = shift % cols, qr = shift / cols;
  const double h = q.w(q.m()) + q.th();
  if (qc == 0) return rows * h;  // qr > 0
  double cost = 0;
  for (int col = 0; col < cols; ++col) {
    const bool shifts = (qr + (col < qc ? 1 : 0)) % rows != 0;
    const LineFinish row = line_shift_finish(cols, qc, col, h, q.w(q.m()), q.model.all_port);
    cost = std::max(cost, shifts ? row.next + rows * h : row.settled);
  }
  return cost;
}

}  // namespace

extern const AlgorithmCard circular_shift_line_card{
    {Collective::circular_shift, Algo::ring,
     "Grama et al., section 4.6 on a linear array: the messages that stay below the top go up q "
     "members, the others down p-q, one stream after the other",
     "q = 0: 0; else p*(ts + tw*m + th)", kLineNeeds, "(ts + tw m) min(q, p - q) (ring)",
     "linear array"},
    needs_line,
    circular_shift_line_cost,
    [](const Comm& c, const Args& a) { circular_shift_line(c, a.in, a.out, a.root); },
    line_counts_hops};

extern const AlgorithmCard circular_shift_mesh_open_card{
    {Collective::circular_shift, Algo::mesh,
     "Grama et al., section 4.6 on a mesh without wraparound: line shifts along the rows, then "
     "the columns (the compensating step folded in)",
     "qc = q mod cols, qr = floor(q/cols), h = ts + tw*m + th: max over columns c' of F(c') + "
     "(column c' shifts by (qr + [c' < qc]) mod rows != 0: rows*h); F(k) = (cols-1-k+qc)*h + ts "
     "+ tw*m for k >= qc, cols*h for 2qc-cols <= k < qc, (k+2cols-2qc)*h + ts + tw*m below "
     "(all ports: the ts + tw*m terms left out where column c' shifts, and below 2qc-cols); qc "
     "= 0: rows*h",
     kOpenMeshNeeds, "(ts + tw m)(sqrt p + 1) (torus)", "open mesh"},
    needs_open_mesh,
    circular_shift_mesh_open_cost,
    [](const Comm& c, const Args& a) { circular_shift_mesh_open(c, a.in, a.out, a.root); }};

}  // namespace hypercomm::detail
