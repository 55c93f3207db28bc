// The collectives' way to a VP's groups (Proc keeps them private): the table itself, and the
// making of a split group once its members are known (collectives/src/split.cpp).
#pragma once

#include <hypercomm/group.hpp>
#include <hypercomm/proc.hpp>
#include <vector>

#include "group_info.hpp"

namespace hypercomm::detail {

struct GroupAccess {
  static GroupTable& table(Proc& vp) noexcept { return *vp.groups_; }
  // A new split group of parent holding `members` (machine ids in rank order); this VP has
  // `rank` in it (-1: in none, members empty).
  static Group split(Proc& vp, GroupInfo& parent, int color, std::vector<int> members, int rank);
};

}  // namespace hypercomm::detail
