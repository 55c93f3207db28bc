// Groups (API.md, "Groups"): the whole machine, a mesh row or column, a hypercube subcube and
// the split groups, each with its ranks, its topology and its own call counters.
#include <algorithm>
#include <bit>
#include <hypercomm/errors.hpp>
#include <hypercomm/group.hpp>
#include <hypercomm/proc.hpp>
#include <string>
#include <vector>

#include "group_info.hpp"
#include "port.hpp"

namespace hypercomm {

using detail::GroupInfo;
using Shape = detail::GroupInfo::Shape;

int Group::rank() const noexcept { return info_->rank; }
int Group::size() const noexcept { return info_->size; }
const Topology& Group::topology() const noexcept { return info_->topology; }
std::string Group::name() const { return info_->name(); }

int Group::vp(int rank) const {
  if (rank < 0 || rank >= info_->size)
    throw LinkError("VP " + std::to_string(vp_->id()) + ": rank " + std::to_string(rank) +
                    " is outside [0, " + std::to_string(info_->size) + ") of " + name());
  return info_->vp_of(rank);
}

int Group::peer(int rank, const char* op) const {
  if (rank < 0 || rank >= info_->size)
    throw LinkError("VP " + std::to_string(vp_->id()) + ": " + op + " with rank " +
                    std::to_string(rank) + " of " + name() + ", which is outside [0, " +
                    std::to_string(info_->size) + ")");
  if (rank == info_->rank)
    throw LinkError("VP " + std::to_string(vp_->id()) + ": " + op + " with its own rank " +
                    std::to_string(rank) + " of " + name() + "; a VP cannot message itself");
  return info_->vp_of(rank);
}

void Group::throw_in_group(const SizeMismatch& e, int from_rank) const {
  throw SizeMismatch(std::string(e.what()) + "; in " + name() + ": rank " +
                     std::to_string(info_->rank) + " from rank " + std::to_string(from_rank));
}

namespace detail {

namespace {

std::string binary(unsigned mask, int digits) {
  std::string s = "0b";
  for (int k = std::max(digits, 1) - 1; k >= 0; --k) s += ((mask >> k) & 1u) != 0 ? '1' : '0';
  return s;
}

}  // namespace

std::string GroupInfo::name() const {
  const std::string of = machine != nullptr ? " of " + machine->name() : std::string();
  switch (shape) {
    case Shape::world: return machine != nullptr ? machine->name() : "the machine";
    case Shape::row: return "row " + std::to_string(first / std::max(1, size)) + of;
    case Shape::column: return "column " + std::to_string(first) + of;
    case Shape::subcube:
      return "subcube " + binary(mask, machine != nullptr ? machine->dimension() : 1) + " of VP " +
             std::to_string(vp_of(rank < 0 ? 0 : rank)) + of;
    case Shape::split: return "split color " + std::to_string(color);
  }
  return "a group";
}

std::string group_name(std::uint32_t id, const Topology& machine) {
  const auto shape = static_cast<Shape>(id >> kGroupShapeShift);
  const std::uint32_t rest = id & ((1u << kGroupShapeShift) - 1);
  switch (shape) {
    case Shape::world: return machine.name();
    case Shape::row: return "row " + std::to_string(rest) + " of " + machine.name();
    case Shape::column: return "column " + std::to_string(rest) + " of " + machine.name();
    case Shape::subcube: {
      const unsigned mask = rest >> 12, lowest = rest & 0xFFFu;
      const bool member = tl_naming_vp >= 0 && tl_naming_vp < machine.size() &&
                          (static_cast<unsigned>(tl_naming_vp) & ~mask) == (lowest & ~mask);
      return "subcube " + binary(mask, machine.dimension()) + " of VP " +
             std::to_string(member ? static_cast<unsigned>(tl_naming_vp) : lowest) + " of " +
             machine.name();
    }
    case Shape::split:
      return "split color " + std::to_string(static_cast<std::int16_t>(rest & 0xFFFFu));
  }
  return "group " + std::to_string(id);
}

void GroupTable::reset(const Topology& machine, int id) {
  world = GroupInfo{};
  world.topology = machine;
  world.machine = &machine;
  world.rank = id;
  world.size = machine.size();
  row.reset();
  column.reset();
  made.clear();
}

namespace {

// splitmix64's finalizer: every bit of z moves every bit of the result.
constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// GroupInfo::key of a split group: mix64 over the parent's key, the call and the color, with the
// top bit set (no row's, column's or subcube's key has it).
std::uint64_t split_key(std::uint64_t parent, std::uint32_t call, int color) noexcept {
  return mix64(parent * 0x9E3779B97F4A7C15ull + (std::uint64_t{call} << 32) +
               static_cast<std::uint32_t>(color)) |
         (std::uint64_t{1} << 63);
}

// The 13 bits of a split group's header id that tell its parent and split call: the parent's
// mixed key plus the call times an odd constant, so that one parent's 8192 splits in a row get
// ids of their own (a VP that ran on into the next split's group is not taken for one still in
// the last), and two parents' splits share an id only by chance (1 in 8192), whatever the
// parents (the world's, row 0's and column 0's ids, their low bits zero, once gave their first
// splits of one color one id: a VP in one group's call read a member's call on the other as a
// disagreement).
std::uint32_t split_id_bits(std::uint64_t parent_key, std::uint32_t call) noexcept {
  return (static_cast<std::uint32_t>(mix64(parent_key) >> 32) + call * 0x85EBCA77u) & 0x1FFFu;
}

// Whether `members` (machine ids in rank order) are a ring embedded in a hypercube by the
// reflected Gray code: member r+1 differs from member r in the dimension that gray(r+1) differs
// from gray(r) in (bit ctz(r+1)), each of the ring's k bits mapped to one machine dimension, and
// the last member from the first in the dimension of bit k-1.
bool is_gray_ring(const Topology& machine, const std::vector<int>& members) {
  const auto n = static_cast<unsigned>(members.size());
  if (machine.kind() != Topology::Kind::hypercube || n < 4 || !std::has_single_bit(n)) return false;
  const int k = std::countr_zero(n);
  std::vector<int> dimension_of(static_cast<std::size_t>(k), 0);  // bit b -> 2^(machine dim)
  for (unsigned r = 0; r < n; ++r) {
    const int step = members[r] ^ members[(r + 1) % n];
    const int bit = r + 1 == n ? k - 1 : std::countr_zero(r + 1);
    if (!std::has_single_bit(static_cast<unsigned>(step))) return false;
    int& dim = dimension_of[static_cast<std::size_t>(bit)];
    if (dim == 0) {
      if (std::find(dimension_of.begin(), dimension_of.end(), step) != dimension_of.end())
        return false;  // another bit of the ring already took that dimension
      dim = step;
    } else if (dim != step) {
      return false;
    }
  }
  return true;
}

}  // namespace

Group Port::split(GroupInfo& parent, int color, std::vector<int> members, int rank) {
  // Every member of the parent counts its splits alike, so the members of one new group agree
  // on its id; groups of other colors differ in the color bits.
  const std::uint32_t call = ++parent.splits;
  GroupInfo g;
  g.shape = Shape::split;
  g.machine = parent.machine;
  g.color = color;
  g.id = group_id(Shape::split, (split_id_bits(parent.key, call) << 16) |
                                    (static_cast<std::uint32_t>(color) & 0xFFFFu));
  g.key = split_key(parent.key, call, color);
  g.origin_group = parent.id;
  g.origin_sequence = parent.sequence;  // split's exchange (collectives/src/split.cpp)
  g.size = static_cast<int>(members.size());
  g.rank = rank;
  g.topology = Topology::ring(std::max(1, g.size));
  const Topology& machine = *parent.machine;
  for (int r = 0; r < g.size && g.size > 1; ++r) {
    const int a = members[static_cast<std::size_t>(r)];
    const int b = members[static_cast<std::size_t>((r + 1) % g.size)];
    if (!machine.adjacent(a, b)) {
      g.neighbour_ring = false;
      if (r + 1 < g.size) g.neighbour_line = false;
    }
  }
  g.gray_ring = g.neighbour_ring && is_gray_ring(machine, members);
  g.members = std::move(members);
  return Group(proc_, groups_->made.emplace_back(std::move(g)));
}

}  // namespace detail

namespace {

// This VP's row (along the columns) or column (along the rows) of a mesh: a ring on the torus, a
// linear array on the open mesh; member r is VP first + r * stride.
GroupInfo mesh_line(const Topology& t, int id, Shape shape) {
  const char* what = shape == Shape::row ? "row()" : "column()";
  if (t.kind() != Topology::Kind::mesh)
    throw TopologyError("VP " + std::to_string(id) + ": " + what +
                        " needs a mesh; the machine is " + t.name());
  const bool row = shape == Shape::row;
  GroupInfo g;
  g.shape = shape;
  g.machine = &t;
  g.id = detail::group_id(shape, static_cast<std::uint32_t>(row ? t.row_of(id) : t.col_of(id)));
  g.key = g.id;
  g.size = row ? t.cols() : t.rows();
  g.rank = row ? t.col_of(id) : t.row_of(id);
  g.first = row ? t.row_of(id) * t.cols() : t.col_of(id);
  g.stride = row ? 1 : t.cols();
  g.topology = t.wraps() ? Topology::ring(g.size) : Topology::linear(g.size);
  return g;
}

}  // namespace

Group Proc::world() noexcept { return Group(*this, port_->groups().world); }

Group Proc::row() {
  auto& row = port_->groups().row;
  if (!row) row = mesh_line(topology(), id_, Shape::row);
  return Group(*this, *row);
}

Group Proc::column() {
  auto& column = port_->groups().column;
  if (!column) column = mesh_line(topology(), id_, Shape::column);
  return Group(*this, *column);
}

Group Proc::subcube(unsigned mask) {
  const Topology& t = topology();
  if (t.kind() != Topology::Kind::hypercube)
    throw TopologyError("VP " + std::to_string(id_) + ": subcube(" + std::to_string(mask) +
                        ") needs a hypercube; the machine is " + t.name());
  const int d = t.dimension();
  if (d < 32 && (mask >> d) != 0)
    throw TopologyError("VP " + std::to_string(id_) + ": subcube(" + std::to_string(mask) +
                        ") has bits at or above d = " + std::to_string(d) + " of " + t.name());
  for (GroupInfo& g : port_->groups().made)
    if (g.shape == Shape::subcube && g.mask == mask) return Group(*this, g);
  GroupInfo g;
  g.shape = Shape::subcube;
  g.machine = &t;
  g.mask = mask;
  g.base = id_ & ~static_cast<int>(mask);
  g.id = detail::group_id(Shape::subcube, (mask << 12) | static_cast<unsigned>(g.base));
  g.key = g.id;
  g.size = 1 << std::popcount(mask);
  int rank = 0, k = 0;
  for (unsigned m = mask; m != 0; m &= m - 1, ++k)
    if ((static_cast<unsigned>(id_) & m & (~m + 1)) != 0) rank |= 1 << k;
  g.rank = rank;
  g.topology = Topology::hypercube(std::popcount(mask));
  return Group(*this, port_->groups().made.emplace_back(std::move(g)));
}

}  // namespace hypercomm
