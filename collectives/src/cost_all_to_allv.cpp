// The irregular all-to-all's clocks (CostQuery, card.hpp): the ring's steps, and the line's and
// open mesh's store-and-forward runs exactly for any counts (the all_to_allv_line and
// all_to_allv_mesh cards' costs), or capped where a line is long (automatic's estimate).
#include <algorithm>
#include <numeric>
#include <vector>

#include "card.hpp"

namespace hypercomm::detail {

namespace {
// all_to_allv_ring.cpp's steps over n members with bundles of `width` blocks: the sizes step
// (8 bytes a block), then step i carries n-i bundles (travelling(k): their bytes, k blocks) and
// the sizes of the next step's.
template <class Travelling>
double ring_all_to_allv_steps(const CostQuery& q, int n, int width, Travelling travelling) {
  constexpr double entry = 8;
  if (n <= 1) return 0.0;
  double s = q.w(entry * width * (n - 1));
  for (int i = 1; i < n; ++i)
    s += q.w(travelling(static_cast<double>(n - i) * width) + entry * width * (n - i - 1));
  return s;
}
}  // namespace

double CostQuery::equal_ring_all_to_allv(int n, int width, double block, double h) const noexcept {
  if (n <= 1) return 0.0;
  return ring_all_to_allv_steps(*this, n, width, [&](double k) { return k * block; }) + h * n;
}

double CostQuery::capped_ring_all_to_allv(int n, int width) const noexcept {
  return ring_all_to_allv_steps(*this, n, width, [&](double k) { return cap(k); });
}

namespace {

// all_to_allv_line.cpp's two streams along a line of members `line` (VP ids, in line order),
// from their clocks in `clocks` (indexed by VP id), which end as each member's stream ends.
// forwarded(down, src, j): the bytes of line member src's bundles (of `width` blocks, 8 bytes of
// size each) for the members past position j of the stream (positions j+1 .. n-1; the down
// stream's positions are mirrored: position k is member n-1-k), and the blocks they hold, which
// a message carries in the step it holds them. Step by step in lockstep: a member's step-s
// operation waits only on its own step s-1 and on its lower neighbour's step-s send, which leaves
// at that neighbour's clock after step s-1. O(n^2).
template <class Forwarded>
void line_all_to_allv_clocks(const CostQuery& q, std::span<const int> line,
                             std::vector<double>& clocks, int width, double h,
                             Forwarded forwarded) {
  const int n = static_cast<int>(line.size());
  if (n <= 1) return;
  const double entry = 8.0 * width;
  std::vector<double> before(static_cast<std::size_t>(n));
  for (const bool down : {false, true}) {
    const auto clock = [&](int position) -> double& {
      const int member = down ? n - 1 - position : position;
      return clocks[static_cast<std::size_t>(line[static_cast<std::size_t>(member)])];
    };
    // The bytes position j sends up in step s (j + 1 < n, s <= j + 1): position j-s+1's
    // bundles, then the sizes of position j-s's.
    const auto sent = [&](int j, int s) {
      if (s == 0) return entry * (n - 1 - j);
      const int src = down ? n - 1 - (j - s + 1) : j - s + 1;
      return forwarded(down, src, j) + (j - s >= 0 ? entry * (n - 1 - j) : 0.0);
    };
    for (int s = 0; s < n; ++s) {
      for (int j = 0; j < n; ++j) before[static_cast<std::size_t>(j)] = clock(j);
      for (int j = 0; j < n; ++j) {
        const bool sends = j + 1 < n && s <= j + 1;
        const bool receives = j > 0 && j - s >= 0;
        double t = before[static_cast<std::size_t>(j)];
        if (sends) t += q.w(sent(j, s));
        if (receives)
          t = std::max(t, before[static_cast<std::size_t>(j) - 1] + q.w(sent(j - 1, s)) + h);
        clock(j) = t;
      }
    }
  }
}

// The exact forwarded bytes of a line of n members whose bundle(s, d) member s sends member d:
// each member's bundles summed in member order (prefix[s*(n+1) + k]: those for members < k).
class LineBundles {
 public:
  template <class Bundle>
  LineBundles(int n, Bundle bundle) : n_(static_cast<std::size_t>(n)), prefix_(n_ * (n_ + 1), 0.0) {
    for (std::size_t s = 0; s < n_; ++s)
      for (std::size_t d = 0; d < n_; ++d)
        prefix_[s * (n_ + 1) + d + 1] =
            prefix_[s * (n_ + 1) + d] + bundle(static_cast<int>(s), static_cast<int>(d));
  }
  // Member src's bundles for the stream's positions past j: up, members j+1 .. n-1; down,
  // members 0 .. n-2-j.
  double operator()(bool down, int src, int j) const noexcept {
    const double* row = prefix_.data() + static_cast<std::size_t>(src) * (n_ + 1);
    const auto k = static_cast<std::size_t>(j);
    return down ? row[n_ - 1 - k] : row[n_] - row[k + 1];
  }

 private:
  std::size_t n_;
  std::vector<double> prefix_;
};

// Automatic's estimate of the line all-to-allv over n members with bundles of `width` blocks:
// every block the largest, a message of k blocks capped at the bytes of all blocks, its clocks
// run up to kSimulatedLine members; past that (O(n^2) steps for every new call shape) the
// equal-block closed form, O(n).
constexpr int kSimulatedLine = 256;
double capped_line(const CostQuery& q, std::span<const int> line, std::vector<double>& clocks,
                   int width, double h) {
  const int n = static_cast<int>(line.size());
  if (n <= kSimulatedLine) {
    line_all_to_allv_clocks(q, line, clocks, width, h, [&](bool, int, int j) {
      return q.cap(static_cast<double>(n - 1 - j) * width);
    });
    return *std::max_element(clocks.begin(), clocks.end());
  }
  const double b = q.m() * width, e = 8.0 * width;
  double most = 0;
  for (int j = 0; j <= n - 2; ++j)
    most = std::max(most, b * (n * (n - 1.0) - 2.0 * j) + e * (j + 1.0) * (2.0 * n - 2 - j));
  return 2.0 * n * q.ts() + 2.0 * (n - 1) * h + q.tw() * most;
}

// The open mesh's row phase, then its column phase, each line_all_to_allv_clocks along every
// row (bundles of rows blocks: member (r, c'')'s for (r, c) are its blocks for column c) and
// every column (bundles of cols blocks: (r'', c)'s for (r, c) the blocks of row r'' for (r, c)).
// pair(i, j): the bytes of VP i's block for VP j.
template <class Pair>
double exact_open_mesh(const CostQuery& q, Pair pair) {
  const Topology& t = q.t;
  const int rows = t.rows(), cols = t.cols();
  std::vector<double> clocks(static_cast<std::size_t>(q.p()), 0.0);
  std::vector<int> line;
  for (int r = 0; r < rows; ++r) {
    line.clear();
    for (int c = 0; c < cols; ++c) line.push_back(t.id_at(r, c));
    const LineBundles bundles(cols, [&](int s, int d) {
      double bytes = 0;  // (r, s)'s blocks for column d
      for (int r2 = 0; r2 < rows; ++r2) bytes += pair(t.id_at(r, s), t.id_at(r2, d));
      return bytes;
    });
    line_all_to_allv_clocks(q, line, clocks, rows, q.th(), bundles);
  }
  for (int c = 0; c < cols; ++c) {
    line.clear();
    for (int r = 0; r < rows; ++r) line.push_back(t.id_at(r, c));
    const LineBundles bundles(rows, [&](int s, int d) {
      double bytes = 0;  // row s's blocks for (d, c)
      for (int c2 = 0; c2 < cols; ++c2) bytes += pair(t.id_at(s, c2), t.id_at(d, c));
      return bytes;
    });
    line_all_to_allv_clocks(q, line, clocks, cols, q.th(), bundles);
  }
  return *std::max_element(clocks.begin(), clocks.end());
}

}  // namespace

double CostQuery::exact_line_all_to_allv() const {
  std::vector<int> line(static_cast<std::size_t>(p()));
  std::iota(line.begin(), line.end(), 0);
  std::vector<double> clocks(line.size(), 0.0);
  const LineBundles bundles(p(), [&](int s, int d) {
    return static_cast<double>(counts[static_cast<std::size_t>(s * p() + d)] * shape.elem_size);
  });
  line_all_to_allv_clocks(*this, line, clocks, 1, th(), bundles);
  return *std::max_element(clocks.begin(), clocks.end());
}

double CostQuery::capped_line_all_to_allv() const {
  std::vector<int> line(static_cast<std::size_t>(p()));
  std::iota(line.begin(), line.end(), 0);
  std::vector<double> clocks(line.size(), 0.0);
  return capped_line(*this, line, clocks, 1, line_th());
}

double CostQuery::exact_open_mesh_all_to_allv() const {
  return exact_open_mesh(*this, [&](int i, int j) {
    return static_cast<double>(counts[static_cast<std::size_t>(i * p() + j)] * shape.elem_size);
  });
}

// The rows' lines, then the columns' from the clocks the rows leave (or, past kSimulatedLine
// members a line, the two closed forms added).
double CostQuery::capped_open_mesh_all_to_allv() const {
  const int rows = t.rows(), cols = t.cols();
  std::vector<double> clocks(static_cast<std::size_t>(p()), 0.0);
  std::vector<int> line;
  double row_phase = 0;
  for (int r = 0; r < rows; ++r) {
    line.clear();
    for (int c = 0; c < cols; ++c) line.push_back(t.id_at(r, c));
    row_phase = std::max(row_phase, capped_line(*this, line, clocks, rows, th()));
  }
  if (cols > kSimulatedLine) std::fill(clocks.begin(), clocks.end(), row_phase);
  double end = row_phase;
  for (int c = 0; c < cols; ++c) {
    line.clear();
    for (int r = 0; r < rows; ++r) line.push_back(t.id_at(r, c));
    const double column = capped_line(*this, line, clocks, cols, th());
    end = std::max(end, rows > kSimulatedLine ? row_phase + column : column);
  }
  return end;
}

}  // namespace hypercomm::detail
