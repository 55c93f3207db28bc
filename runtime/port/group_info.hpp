// What a Group is inside: its shape in the machine, its topology, how a rank maps to a machine
// VP id, and this VP's call counters on it. Each VP keeps its own GroupInfo objects (the Proc's
// GroupTable), so nothing here is shared between threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <hypercomm/topology.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hypercomm::detail {

struct Meeting;
struct PipelinedMeeting;

// A number no other GroupInfo made in this process holds.
[[nodiscard]] inline std::uint64_t next_group_serial() noexcept {
  static std::atomic<std::uint64_t> made{0};
  return made.fetch_add(1, std::memory_order_relaxed) + 1;
}

struct GroupInfo {
  enum class Shape : std::uint8_t { world, row, column, subcube, split };

  // Which group this is, in the whole process: every GroupInfo made takes a new serial (a copy
  // or a move keeps it). A group's shape, topology and members are set before its first
  // collective and stay as they are, and it belongs to one VP of one machine, whose options are
  // fixed: a VP's memo of its choices (select.cpp) keys on the serial for all of them.
  std::uint64_t serial = next_group_serial();
  Shape shape = Shape::world;
  Topology topology = Topology::ring(1);
  const Topology* machine = nullptr;
  std::uint32_t id = 0;  // carried in every message header of the group's collectives
  // What its members alone share in the run, where id may not tell it apart (the split ids
  // fold a call count into a few bits): a row's, column's or subcube's id; a split group's,
  // its parent's key, the split call and the color, mixed into 64 bits. Its meetings are found
  // by it (Fabric::group_meeting).
  std::uint64_t key = 0;
  int rank = 0;  // -1: not a member (a split with color < 0)
  int size = 0;
  int first = 0;  // world, row, column: member r is VP first + r * stride
  int stride = 1;
  int base = 0;       // subcube: member r is base with r's bits deposited at mask's positions
  unsigned mask = 0;  // subcube
  std::vector<int> members;  // split: member r is VP members[r]
  int color = 0;             // split
  // split: the parent's call that made it (its id and call number). Split ids fold a call count
  // into a few bits, so a member's published calls older than that one may bear this group's id
  // and call numbers for another group (Port::disagreement reads none past it).
  std::uint32_t origin_group = 0;
  std::uint32_t origin_sequence = 0;
  // Whether consecutive members (r, r+1 mod size) are machine neighbours: true for rows,
  // columns and subcubes (their topology's links are machine links); split groups compute it.
  bool neighbour_ring = true;
  // Whether members r and r+1 are machine neighbours for r < size - 1 (the ring less its wrap
  // link): under Links::strict such a split group runs the linear array's algorithms.
  bool neighbour_line = true;
  // Whether a split group is a ring embedded in the hypercube by the reflected Gray code
  // (Grama et al. section 2.7): 2^k members, k >= 2, member r is VP members[0] XOR gray(r)
  // with gray(r)'s bits put on k distinct dimensions of the machine in some order (split(world,
  // 0, gray_inverse(id)) makes one). The book's hypercube q-shift runs on it.
  bool gray_ring = false;
  std::uint32_t sequence = 0;  // this VP's collective calls on the group
  std::uint32_t splits = 0;    // this VP's split calls on the group
  // Where its members meet in shared memory (Fabric::group_meeting), once this VP has asked.
  mutable Meeting* meeting = nullptr;
  mutable PipelinedMeeting* chain = nullptr;  // Fabric::group_chain
  mutable std::uint64_t pipelined_calls = 0;  // this VP's meetings in that chain

  [[nodiscard]] int vp_of(int r) const noexcept {
    switch (shape) {
      case Shape::subcube: {
        int vp = base;
        unsigned bits = static_cast<unsigned>(r);
        for (unsigned m = mask; m != 0 && bits != 0; m &= m - 1, bits >>= 1)
          if ((bits & 1u) != 0) vp |= static_cast<int>(m & (~m + 1));
        return vp;
      }
      case Shape::split: return members[static_cast<std::size_t>(r)];
      default: return first + r * stride;
    }
  }
  // Whether the group's own links are machine links (a split group's ring is routed).
  [[nodiscard]] bool machine_links() const noexcept { return shape != Shape::split; }
  [[nodiscard]] std::string name() const;
};

// Group ids: the shape in the top three bits, then what tells the groups of that shape apart.
inline constexpr std::uint32_t kGroupShapeShift = 29;
[[nodiscard]] constexpr std::uint32_t group_id(GroupInfo::Shape shape,
                                               std::uint32_t rest) noexcept {
  return (static_cast<std::uint32_t>(shape) << kGroupShapeShift) |
         (rest & ((1u << kGroupShapeShift) - 1));
}
// A group's name from its id alone, as a receiver describes a header it got.
[[nodiscard]] std::string group_name(std::uint32_t id, const Topology& machine);
// The VP this thread runs (Fabric::vp_main), or -1: group_name names a subcube that contains it
// by it ("subcube 0b0101 of VP 3", as the VP that made it names it), else by its lowest member.
// Inline, as every send and collective asks it (Port::check_thread).
inline thread_local int tl_naming_vp = -1;
inline void set_naming_vp(int id) noexcept { tl_naming_vp = id; }
[[nodiscard]] inline int naming_vp() noexcept { return tl_naming_vp; }

// One VP's groups during a run.
struct GroupTable {
  GroupInfo world;
  std::optional<GroupInfo> row;
  std::optional<GroupInfo> column;
  std::deque<GroupInfo> made;  // subcubes and splits of this run; addresses stay valid

  void reset(const Topology& machine, int id);
  // This VP's group with header id `id`, or nullptr: of split groups that share an id (their
  // ids fold the split count into a few bits), the one made last.
  [[nodiscard]] const GroupInfo* find(std::uint32_t id) const noexcept {
    if (id == world.id) return &world;
    if (row && row->id == id) return &*row;
    if (column && column->id == id) return &*column;
    for (auto g = made.rbegin(); g != made.rend(); ++g)
      if (g->id == id && g->rank >= 0) return &*g;
    return nullptr;
  }
};

}  // namespace hypercomm::detail
