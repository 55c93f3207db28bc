// What the cards share (card.hpp): the restrictions most of them state, the family rule of the
// composite algorithms, the ring building blocks of their cost formulas, and the congestion of
// the XOR exchanges that automatic's choice weighs.
#include "card.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace hypercomm::detail {

Family family_of(const Topology& t, Links links) noexcept {
  if (is_power_of_two(t.size()) &&
      (t.kind() == Topology::Kind::hypercube || links == Links::routed))
    return Family::hypercube;
  return t.kind() == Topology::Kind::mesh ? Family::mesh : Family::ring;
}

// Whether every pair id, id XOR 2^k is a link of t (p = 2^d): on a hypercube, and on the shapes
// that are one, for all their names: 1 or 2 VPs on any topology, a 2 x 2 mesh (with wraparound
// or without). On a ring, a linear array or a wider mesh, ids 0 and 2 are 2 hops apart.
bool xor_partners_adjacent(const Topology& t) noexcept {
  if (t.kind() == Topology::Kind::hypercube || t.size() <= 2) return true;
  return t.kind() == Topology::Kind::mesh && t.rows() <= 2 && t.cols() <= 2;
}

const char* needs_hypercube(const Topology& t, Links links) noexcept {
  if (!is_power_of_two(t.size())) return "it needs p = 2^d VPs";
  if (links != Links::routed && !xor_partners_adjacent(t))
    return "its partners id XOR 2^k are not neighbours here: it needs a hypercube topology or "
           "Links::routed";
  return nullptr;
}

const char* needs_ring(const Topology& t, Links links) noexcept {
  if (!t.ring_adjacent() && links != Links::routed)
    return "VPs i and i+1 are not all neighbours here: it needs a ring topology or Links::routed";
  return nullptr;
}

bool family_counts_hops(const Topology& t, Links links) noexcept {
  switch (family_of(t, links)) {
    case Family::hypercube: return true;
    case Family::ring: return ring_counts_hops(t, links);
    case Family::mesh: return mesh_counts_hops(t, links);
  }
  return true;
}

const char* needs_mesh(const Topology& t, Links links) noexcept {
  if (t.kind() != Topology::Kind::mesh) return "it needs a mesh topology";
  if (links != Links::routed && !t.lines_ring_adjacent())
    return "its row and column rings need the wraparound links of a torus: it needs "
           "Links::routed on a mesh without wraparound";
  return nullptr;
}

const char* needs_family(const Topology& t, Links links) noexcept {
  switch (family_of(t, links)) {
    case Family::hypercube: return nullptr;
    case Family::mesh:
      return t.lines_ring_adjacent() || links == Links::routed
                 ? nullptr
                 : "its ring phases need wraparound links: it needs Links::routed here";
    case Family::ring:
      return t.ring_adjacent() || links == Links::routed
                 ? nullptr
                 : "its ring phases need wraparound links: it needs Links::routed here";
  }
  return nullptr;
}

bool line_adjacent(const Topology& t) noexcept {
  if (t.ring_adjacent() || t.kind() == Topology::Kind::linear) return true;
  for (int i = 0; i + 1 < t.size(); ++i)
    if (!t.adjacent(i, i + 1)) return false;
  return true;
}

const char* needs_path(const Topology& t, Links links) noexcept {
  if (links != Links::routed && !line_adjacent(t))
    return "VPs i and i+1 are not all neighbours here: it needs a linear array, a ring or "
           "Links::routed";
  return nullptr;
}

const char* needs_gray_ring(const Topology& t, Links) noexcept {
  if (t.kind() != Topology::Kind::hypercube) return "it needs a hypercube topology";
  if (t.ring_adjacent()) return "on a ring of VPs the ring's own algorithm runs";
  return nullptr;
}

const char* needs_gray_mesh(const Topology& t, Links) noexcept {
  if (t.kind() != Topology::Kind::hypercube || t.dimension() < 2)
    return "it needs a hypercube topology of d >= 2";
  return nullptr;
}

double on_gray_mesh_folding(const CostQuery& q, double (*mesh_cost)(const CostQuery&)) {
  // A non-commutative operator, routed, runs the rows and columns laid out by id
  // (AlgorithmCard::id_order_when_routed): the torus's steps, their messages more than one hop.
  if (!q.shape.commutative && q.links == Links::routed && q.model.th != 0) return kNoClosedForm;
  return on_gray_mesh(q, mesh_cost);
}

double on_gray_mesh(const CostQuery& q, double (*mesh_cost)(const CostQuery&)) {
  const Grid grid = Grid::gray_code(q.p());
  const Topology torus = Topology::mesh(grid.rows, grid.cols);
  return mesh_cost(CostQuery{torus, q.links, q.bytes, q.model, q.shape, q.selection, q.tc, q.total,
                             q.chunks, q.gray_ring, q.all_port_lower, q.counts});
}

const char* needs_open_mesh(const Topology& t, Links) noexcept {
  if (t.kind() != Topology::Kind::mesh) return "it needs a mesh topology";
  if (t.wraps()) return "on a torus the mesh cards run";
  return nullptr;
}

const char* needs_line(const Topology& t, Links links) noexcept {
  if (t.ring_adjacent()) return "on a ring the ring's own algorithm runs";
  return needs_path(t, links);
}

// Arms of a line rooted at r: the longer one first; a message of k parts costs ts + tw*k*part.
// Arms together (all ports): the shorter arm's first send leaves at once too.
double CostQuery::line_broadcast(int n, int r, double size, double h, Arms arms) const noexcept {
  const int up = n - 1 - r, down = r;
  const int longer = std::max(up, down), shorter = std::min(up, down);
  const double first = longer * (w(size) + h);
  if (shorter == 0 || arms == Arms::together) return first;
  if (arms == Arms::unknown) return kNoClosedForm;
  return std::max(first, (shorter + 1) * w(size) + shorter * h);
}

double CostQuery::reduce_scatter_folds(double block) const noexcept {
  const double last = family() == Family::hypercube && shape.commutative ? block : 0.0;
  return tc * (block * (p() - 1) - last) + landing_tc() * last;
}

double CostQuery::all_gather_messages() const noexcept {
  switch (family()) {
    case Family::hypercube: return p() * static_cast<double>(d());
    case Family::ring: return p() * (p() - 1.0);
    case Family::mesh: return p() * (t.rows() + t.cols() - 2.0);
  }
  return p() * (p() - 1.0);
}

double CostQuery::scatter_bytes() const noexcept {
  if (family() == Family::hypercube) return m() * d() / 2;
  return m() * (p() - 1) / p();
}

double CostQuery::line_reduce(int n, int r, double size, double h) const noexcept {
  return std::max(r, n - 1 - r) *
         (w(size) + h + landing_tc() * size);  // reduce_arms folds as it lands
}

double CostQuery::line_scatter(int n, int r, double part, double h, Arms arms) const noexcept {
  // ring_scatter_parts: the up arm's message first (a parts), then the down arm's (b parts);
  // arms together (all ports): both at once.
  const double a = n - 1 - r, b = r;
  const auto arm = [&](double x) { return x * (ts() + h) + tw() * part * x * (x + 1) / 2; };
  const double up = arm(a);
  if (b == 0) return up;
  if (arms == Arms::together || a == 0) return std::max(up, arm(b));
  if (arms == Arms::unknown) return kNoClosedForm;
  return std::max(up, w(a * part) + arm(b));
}

double CostQuery::line_gather(int n, int r, double part, double h) const noexcept {
  const auto arm = [&](double x) { return x * (ts() + h) + tw() * part * x * (x + 1) / 2; };
  return std::max(arm(n - 1 - r), arm(r));
}

double CostQuery::rank_bytes(int first, int n) const noexcept {
  std::size_t sum = 0;
  for (int i = 0; i < n; ++i) sum += counts[static_cast<std::size_t>((first + i) % p())];
  return static_cast<double>(sum * shape.elem_size);
}

double CostQuery::relative_bytes(int first, int n, int x) const noexcept {
  std::size_t sum = 0;
  for (int i = 0; i < n; ++i) sum += counts[static_cast<std::size_t>((first + i) ^ x)];
  return static_cast<double>(sum * shape.elem_size);
}

bool CostQuery::equal_counts() const noexcept {
  return std::adjacent_find(counts.begin(), counts.end(), std::not_equal_to<>()) == counts.end();
}

CostQuery CostQuery::as_regular() const noexcept {
  CostQuery q = *this;
  q.bytes = counts.empty() ? 0 : counts.front() * shape.elem_size;
  if (t.size() > 0 && counts.size() > static_cast<std::size_t>(p())) q.bytes *= p();
  q.counts = {};
  return q;
}

int CostQuery::d() const noexcept { return is_power_of_two(p()) ? log2_of(p()) : 0; }

int CostQuery::ring_chain_hops() const {
  if (gray_ring) return p() - 1;  // every member's neighbour one link away
  int sum = 0, shortest = 0;
  for (int i = 0; i < p(); ++i) {
    const int h = t.distance(i, (i + 1) % p());
    sum += h;
    shortest = i == 0 ? h : std::min(shortest, h);
  }
  return sum - shortest;
}

double CostQuery::dimension_hops() const {
  double s = 0;
  if (model.th == 0) return 0;
  for (int k = 0; k < d(); ++k) s += model.th * t.distance(0, 1 << k);
  return s;
}

double CostQuery::block(double whole, int parts) const noexcept {
  if (selection) return whole / parts;
  return static_cast<double>(blocks(static_cast<std::size_t>(whole), parts).size(0));
}

bool CostQuery::even(std::size_t whole, int parts) const noexcept {
  if (selection) return true;
  const Blocks b = blocks(whole, parts);
  return b.size(0) == b.size(parts - 1);
}

double CostQuery::ring_scatter(int n, double part, double h, Arms arms) const noexcept {
  if (n <= 1) return 0;
  const double a = n / 2;
  if (n % 2 == 0 || arms == Arms::together) return a * (ts() + h) + tw() * part * a * (a + 1) / 2;
  if (arms == Arms::unknown) return kNoClosedForm;
  return (a + 1) * ts() + a * h + tw() * part * (a + a * (a + 1) / 2);
}

namespace {

// Whether every VP's sends to the members of `targets(id)` leave on different first links.
template <class Targets>
bool first_links_apart(const Topology& t, Targets targets) {
  for (int id = 0; id < t.size(); ++id) {
    std::vector<int> first;
    for (const int to : targets(id))
      if (to != id) first.push_back(t.next_hop(id, to));
    std::sort(first.begin(), first.end());
    if (std::adjacent_find(first.begin(), first.end()) != first.end()) return false;
  }
  return true;
}

}  // namespace

CostQuery::Arms CostQuery::ring_arms() const {
  if (!model.all_port) return Arms::in_turn;
  if (links == Links::strict || gray_ring || all_port_lower || p() <= 2) return Arms::together;
  const int n = p();
  return first_links_apart(t,
                           [n](int i) {
                             return std::array{(i + 1) % n, (i + n - 1) % n};
                           })
             ? Arms::together
             : Arms::unknown;
}

CostQuery::Arms CostQuery::line_arms() const {
  if (!model.all_port) return Arms::in_turn;
  if (links == Links::strict || all_port_lower || p() <= 2) return Arms::together;
  const int n = p();
  return first_links_apart(t,
                           [n](int i) {
                             return std::array{std::min(i + 1, n - 1), std::max(i - 1, 0)};
                           })
             ? Arms::together
             : Arms::unknown;
}

CostQuery::Arms CostQuery::mesh_arms() const {
  if (!model.all_port) return Arms::in_turn;
  if (all_port_lower) return Arms::together;
  const int rows = t.rows(), cols = t.cols();
  // A row (column) of two has one neighbour: its "down arm" is empty.
  return first_links_apart(t,
                           [&](int i) {
                             const int r = t.row_of(i), c = t.col_of(i);
                             return std::array{
                                 t.id_at(r, (c + 1) % cols),
                                 cols > 2 ? t.id_at(r, (c + cols - 1) % cols) : i,
                                 t.id_at((r + 1) % rows, c),
                                 rows > 2 ? t.id_at((r + rows - 1) % rows, c) : i,
                             };
                           })
             ? Arms::together
             : Arms::unknown;
}

double CostQuery::ring_gather(int n, double part, double h) const noexcept {
  const double a = n / 2;
  return n <= 1 ? 0 : a * (ts() + h) + tw() * part * a * (a + 1) / 2;
}

double CostQuery::ring_reduce_scatter(int n, double part, double h) const noexcept {
  if (n <= 1) return 0;
  if (shape.commutative) return (n - 1) * (w(part) + h);
  return (n - 1) * (ts() + h) + tw() * part * (2 * n - 3);
}

namespace {
double capped_arm(const CostQuery& q, int members, double part) {
  double s = 0;
  for (int j = 1; j <= members; ++j) s += q.w(std::min(j * part, static_cast<double>(q.total)));
  return s;
}
}  // namespace

double CostQuery::capped_ring_scatter(int n, double part) const noexcept {
  const int a = n / 2, down = (n - 1) / 2;
  const double up = capped_arm(*this, a, part);
  return down == 0 ? up
                   : std::max(up, w(std::min(a * part, static_cast<double>(total))) +
                                      capped_arm(*this, down, part));
}

// The up arm holds ranks r+1 .. p-1, the down arm r-1 .. 0; the far end's message carries its
// own block, the next one's two, ... (gather), or the root's message all the arm's blocks (the
// scatter, up arm first: one port, the down arm's first message waits for it).
namespace {
// The two arms' exact sums of a line rooted at rank r: each message, from the far end in, carries
// the blocks from it to the far end, and crosses one link.
std::pair<double, double> line_arm_sums(const CostQuery& q, int r) {
  double up = 0, down = 0;
  for (int u = r + 1; u < q.p(); ++u) up += q.w(q.rank_bytes(u, q.p() - u)) + q.th();
  for (int v = 0; v < r; ++v) down += q.w(q.rank_bytes(0, v + 1)) + q.th();
  return {up, down};
}
}  // namespace

double CostQuery::line_gatherv(int r) const noexcept {
  const int up = p() - 1 - r, down = r;
  if (selection) return std::max(capped_arm(*this, up, m()), capped_arm(*this, down, m()));
  if (line_th() != th()) return kNoClosedForm;
  const auto [up_time, down_time] = line_arm_sums(*this, r);
  return std::max(up_time, down_time);
}

double CostQuery::line_scatterv(int r) const noexcept {
  const int up = p() - 1 - r, down = r;
  const bool together = model.all_port || up == 0;
  const double wait = together ? 0.0 : w(selection ? cap(up) : rank_bytes(r + 1, up));
  if (selection) return std::max(capped_arm(*this, up, m()), wait + capped_arm(*this, down, m()));
  if (line_th() != th()) return kNoClosedForm;
  const auto [up_time, down_time] = line_arm_sums(*this, r);
  return down == 0 ? up_time : std::max(up_time, wait + down_time);
}

double CostQuery::capped_ring_gather(int n, double part) const noexcept {
  return capped_arm(*this, n / 2, part);
}

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

namespace {

// The congestion of one step in which every VP sends one message of unit time to id XOR x:
// `load`, the most messages that share one directed link (Grama et al. section 4.5), and
// `chained`, when the step ends as CostModel::contention re-times it (replay.cpp: cut-through, a
// directed link carries one message at a time, first come first served, ties to the smaller id):
// where routes chain (message A's second link is B's first, and so on round a ring) the waits
// add up beyond the load. Exact up to 256 VPs; above, both the average load over the used links
// (a lower bound).
struct XorCongestion {
  double load = 1.0;
  double chained = 1.0;
};

XorCongestion compute_xor_congestion(const Topology& t, int x) {
  const int p = t.size();
  XorCongestion congestion;
  if (p <= 256) {
    std::map<std::pair<int, int>, int> load;
    // Directed link -> the message times in which it is busy; a message takes the first time
    // in which every link of its route is idle, as replay.cpp's contention does.
    std::map<std::pair<int, int>, std::set<int>> busy;
    std::vector<std::pair<int, int>> route;
    for (int id = 0; id < p; ++id) {
      route.clear();
      for (int at = id, to = id ^ x; at != to;) {
        const int next = t.next_hop(at, to);
        route.emplace_back(at, next);
        congestion.load = std::max(congestion.load, static_cast<double>(++load[{at, next}]));
        at = next;
      }
      int start = 0;
      while (std::any_of(route.begin(), route.end(),
                         [&](const auto& link) { return busy[link].contains(start); }))
        ++start;
      for (const auto& link : route) busy[link].insert(start);
      congestion.chained = std::max(congestion.chained, static_cast<double>(start + 1));
    }
  } else {
    double hops = 0;
    for (int id = 0; id < p; ++id) hops += t.distance(id, id ^ x);
    congestion.load = congestion.chained =
        std::max(1.0, hops / (static_cast<double>(p) * std::max(1, t.max_degree())));
  }
  return congestion;
}

// One topology's congestions, x = 1 .. p-1, each computed once (under the table's lock) by the
// first thread to ask and then read without a lock: the pairwise all-to-alls' selection asks for
// every x on every VP (p^2 lookups a call; under one shared lock, 4096 VPs took 15 s).
class XorCongestionTable {
 public:
  explicit XorCongestionTable(const Topology& t)
      : topology_(t),
        values_(static_cast<std::size_t>(t.size())),
        ready_(static_cast<std::size_t>(t.size())) {}
  XorCongestion operator()(int x) {
    const auto i = static_cast<std::size_t>(x);
    if (!ready_[i].load(std::memory_order_acquire)) {
      const std::lock_guard lock(mutex_);
      if (!ready_[i].load(std::memory_order_relaxed)) {
        values_[i] = compute_xor_congestion(topology_, x);
        ready_[i].store(true, std::memory_order_release);
      }
    }
    return values_[i];
  }

 private:
  const Topology topology_;
  std::mutex mutex_;
  std::vector<XorCongestion> values_;
  std::vector<std::atomic<bool>> ready_;
};

// The table of t, shared by every thread and kept for the process's life (one per shape used).
XorCongestionTable& xor_congestion_table(const Topology& t) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int, bool>, std::unique_ptr<XorCongestionTable>> tables;
  const std::lock_guard lock(mutex);
  auto& table = tables[{static_cast<int>(t.kind()), t.rows(), t.cols(), t.wraps()}];
  if (!table) table = std::make_unique<XorCongestionTable>(t);
  return *table;
}

}  // namespace

// This thread's last topology keeps a reference to its table, found without the shared lock.
double xor_congestion(const Topology& t, int x, bool chained) {
  if (t.kind() == Topology::Kind::hypercube) return 1.0;
  thread_local std::optional<Topology> topology;
  thread_local XorCongestionTable* table = nullptr;
  if (topology != t) table = &xor_congestion_table(t), topology = t;
  const XorCongestion c = (*table)(x);
  return chained ? c.chained : c.load;
}

namespace {

// The most links on any route of the machine (its diameter along the standard routes).
int longest_route(const Topology& t) noexcept {
  switch (t.kind()) {
    case Topology::Kind::ring: return t.size() / 2;
    case Topology::Kind::linear: return t.size() - 1;
    case Topology::Kind::hypercube: return t.dimension();
    case Topology::Kind::mesh:
      return t.wraps() ? t.rows() / 2 + t.cols() / 2 : t.rows() - 1 + t.cols() - 1;
  }
  return t.size() - 1;
}

// `bytes` rounded down (up) to a multiple of `unit`.
std::size_t round_down(std::size_t bytes, std::size_t unit) noexcept { return bytes / unit * unit; }
std::size_t round_up(std::size_t bytes, std::size_t unit) noexcept {
  return (bytes + unit - 1) / unit * unit;
}

}  // namespace

TimeBounds cost_bounds(const AlgorithmCard& card, const CostQuery& q) {
  const double exact = card.cost(q);
  if (!std::isnan(exact)) return {exact, exact};
  CostQuery lower = q, upper = q;
  // An irregular call: every count lowered to the least, raised to the most (equal counts have
  // closed forms).
  std::vector<std::size_t> fewest, most;
  // What a regular call's bytes are cut into: ESBT's k chunks, p blocks of a whole vector (the
  // composite and ring all-reduces, the split-message algorithms, all_to_all's in), elements.
  std::size_t unit = std::max<std::size_t>(1, q.shape.elem_size);
  if (!q.counts.empty()) {
    const auto [least, largest] = std::minmax_element(q.counts.begin(), q.counts.end());
    fewest.assign(q.counts.size(), *least);
    most.assign(q.counts.size(), *largest);
    lower.counts = fewest;
    upper.counts = most;
    unit = 1;
  } else if (card.text.algo == Algo::esbt) {
    lower.chunks = upper.chunks = q.chunks > 0 ? q.chunks : esbt_chunk_count(q.t, q.bytes, q.model);
    unit = static_cast<std::size_t>(lower.chunks);
  } else if (card.text.op == Collective::broadcast || card.text.op == Collective::reduce ||
             card.text.op == Collective::all_reduce || card.text.op == Collective::all_to_all) {
    unit *= static_cast<std::size_t>(q.p());
  }
  lower.bytes = q.counts.empty() ? round_down(q.bytes, unit) : fewest.front() * q.shape.elem_size;
  lower.model.th = 0;
  lower.shape.commutative = true;
  // All ports: sends that may share a first link taken as leaving together (only faster), and
  // the one-port time of the same schedule above (a send never leaves later under all ports
  // than under one: every departure is the max of fewer terms). ESBT's all-port schedule is
  // another schedule: its upper side is its own formula for the larger equal chunks.
  lower.all_port_lower = q.model.all_port;
  if (card.text.algo != Algo::esbt || !esbt_all_ports(q.t, q.model)) upper.model.all_port = false;
  upper.bytes = q.counts.empty() ? round_up(q.bytes, unit) : most.front() * q.shape.elem_size;
  // One hop a message under Links::strict, and for a card that runs on neighbour links here
  // (the split-message cards aside: routed, they may pick a family that does not).
  const bool neighbours =
      q.links == Links::strict ||
      (card.text.algo != Algo::two_phase && card.restriction(q.t, Links::strict) == nullptr &&
       !(card.id_order_when_routed && !q.shape.commutative));
  const int hops = neighbours ? 1 : longest_route(q.t);
  upper.model.ts += q.model.th * hops;
  upper.model.th = 0;
  double high = card.cost(upper);
  if (std::isnan(high)) {
    upper.shape.commutative = true;
    upper.model.tw *= 2;
    high = card.cost(upper);
  }
  return {card.cost(lower), high};
}

}  // namespace hypercomm::detail
