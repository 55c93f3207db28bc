// The ring, line and mesh building blocks of the cards' cost formulas (CostQuery, card.hpp): a
// line's or ring's arms from a root, their broadcast, scatter, gather and reduce times, block
// and byte arithmetic for even and uneven counts.
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "card.hpp"

namespace hypercomm::detail {

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

}  // namespace hypercomm::detail
