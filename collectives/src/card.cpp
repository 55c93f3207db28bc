// What the cards share (card.hpp): the restrictions most of them state, the family rule of the
// composite algorithms, and the bounds of a call without a closed form (cost_bounds). The cost
// formulas' building blocks: cost_query.cpp, cost_all_to_allv.cpp; the XOR exchanges'
// congestion: xor_congestion.cpp.
#include "card.hpp"

#include <algorithm>
#include <cmath>
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
