// Where meetings happen (Fabric): the whole machine's meeting and prefix chain are the fabric's
// own; a group's are made for the first member to ask and found by the others by the group's key
// and members (group_meeting, group_chain); an abort or a finishing VP rings every bell.
#include <algorithm>
#include <climits>
#include <memory>
#include <mutex>
#include <vector>

#include "fabric.hpp"
#include "futex.hpp"
#include "group_info.hpp"

namespace hypercomm::detail {

namespace {

// Whether `place` is group g's: a row's, column's or subcube's key names its members, a split
// group's members are compared.
template <class Place>
bool place_of(const Place& place, const GroupInfo& g) {
  return place.group == g.key && place.vps.size() == static_cast<std::size_t>(g.size) &&
         (g.shape != GroupInfo::Shape::split || place.vps == g.members);
}

// Group g's place in `places` if a member made it (the caller holds the places' lock).
template <class Place>
Place* held_place(const std::vector<std::unique_ptr<Place>>& places, const GroupInfo& g) {
  for (const auto& place : places)
    if (place_of(*place, g)) return place.get();
  return nullptr;
}

// Group g's place in `places` (Fabric::group_meeting, group_chain), made by make() for the
// first member to ask, found by its key and members. Every member asks once, under the lock: a
// row's, column's or subcube's key names its members, a split group's members are compared (one
// memcmp); only the member that makes the place lists them (each member listing a subcube of
// 4096 VPs bit by bit made its scan take 2-3 times as long).
template <class Place, class Make>
Place& group_place(std::vector<std::unique_ptr<Place>>& places, std::mutex& mutex,
                   const GroupInfo& g, Make&& make) {
  const std::lock_guard lock(mutex);
  if (Place* found = held_place(places, g)) return *found;
  std::vector<int> vps(static_cast<std::size_t>(g.size));
  for (int r = 0; r < g.size; ++r) vps[static_cast<std::size_t>(r)] = g.vp_of(r);
  std::unique_ptr<Place>& made = places.emplace_back(std::make_unique<Place>());
  make(made);  // which may put another in its place
  made->group = g.key;
  made->vps = std::move(vps);
  return *made;
}

}  // namespace

const PipelinedMeeting* Fabric::find_group_chain(const GroupInfo& g) {
  if (g.chain != nullptr) return g.chain;
  const std::lock_guard lock(group_meetings_mutex_);
  return held_place(group_chains_, g);
}

Meeting& Fabric::group_meeting(const GroupInfo& g) {
  if (g.meeting == nullptr)
    g.meeting = &group_place(group_meetings_, group_meetings_mutex_, g, [&](auto& made) {
      const auto p = static_cast<std::size_t>(g.size);
      made->seats.resize(p);
      made->inputs.resize(p);
      made->clocks.resize(p);
      made->next_clocks.resize(p);
    });
  return *g.meeting;
}

void Fabric::ring_every_bell() noexcept {
  const auto ring = [](Meeting& bell) noexcept {
    bell.signal.fetch_add(1, std::memory_order_seq_cst);
    futex_wake(bell.signal, INT_MAX);
  };
  ring(meeting_);
  const std::lock_guard lock(group_meetings_mutex_);
  for (const auto& group : group_meetings_) ring(*group);
}

PipelinedMeeting& Fabric::group_chain(const GroupInfo& g) {
  if (g.chain == nullptr)
    g.chain = &group_place(group_chains_, group_meetings_mutex_, g, [&](auto& made) {
      // Past the run's share, none: the group's rooted collectives and prefixes send their
      // messages (slot_count 0), decided once for all its members.
      if (group_chain_bytes_ >= PipelinedMeeting::kGroupsStorage) return;
      // The same group's chain of the last run, reset, where there is one: rows and columns
      // run after run allocated 64 slots of seats and storage for every group each run (a
      // quarter of a run of a row scan and a column scan on mesh:4x4 in malloc and free).
      const auto spare =
          std::find_if(spare_chains_.begin(), spare_chains_.end(), [&](const auto& chain) {
            return chain != nullptr && chain->slot_count != 0 && place_of(*chain, g);
          });
      if (spare != spare_chains_.end()) {
        made = std::move(*spare);
        made->reset();
      } else {
        made->allocate(g.size, PipelinedMeeting::kGroupSlots, PipelinedMeeting::kGroupWideRoom);
      }
      group_chain_bytes_ += made->storage_bytes;
    });
  return *g.chain;
}

}  // namespace hypercomm::detail
