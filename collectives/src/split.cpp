// split (API.md, "Groups"): a collective over g in which every member learns every member's
// (color, key) by one all-gather over g, the exchange the split costs in the model, then keeps
// the members of its own color ranked by (key, rank in g), as MPI_Comm_split does.
#include <algorithm>
#include <hypercomm/collectives.hpp>
#include <hypercomm/errors.hpp>
#include <hypercomm/group.hpp>
#include <string>
#include <vector>

#include "group_info.hpp"
#include "port.hpp"

namespace hypercomm::detail {

Group split(const Group& g, int color, int key) {
  struct Entry {
    int color;
    int key;
  };
  const Entry mine{color, key};
  std::vector<Entry> all(static_cast<std::size_t>(g.size()));
  try {
    hypercomm::all_gather(g, std::span<const Entry>(&mine, 1), all);
  } catch (const AlgorithmError& e) {  // name the call the user made
    throw AlgorithmError(std::string(e.what()) + " (split's exchange, an all_gather over " +
                         g.info().name() + ")");
  } catch (const CollectiveMismatch& e) {  // the members that called split meet another call
    throw CollectiveMismatch(std::string(e.what()) + " (this VP called split over " +
                             g.info().name() +
                             ", whose exchange of colors and keys is that all_gather)");
  }

  std::vector<int> ranks;  // parent ranks of my color, in (key, parent rank) order
  if (color >= 0) {
    for (int r = 0; r < g.size(); ++r)
      if (all[static_cast<std::size_t>(r)].color == color) ranks.push_back(r);
    std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
      return all[static_cast<std::size_t>(a)].key < all[static_cast<std::size_t>(b)].key;
    });
  }
  std::vector<int> members(ranks.size());
  int my_rank = -1;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    members[i] = g.vp(ranks[i]);
    if (ranks[i] == g.rank()) my_rank = static_cast<int>(i);
  }
  return Port::of(g.proc()).split(g.info(), color, std::move(members), my_rank);
}

}  // namespace hypercomm::detail
