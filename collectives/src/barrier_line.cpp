// Barrier on a linear array, neighbours only: the line all-reduce of no data (all_reduce_line.cpp)
// - zero-byte messages into the middle VP, then out again. No VP leaves before the middle has
// heard from both ends, which it does only after every VP has entered.
//
//   T = max(c, p-1-c)*(ts + th) + max(L*(ts + th), (S+1)*ts + S*th),  c = floor((p-1)/2)
//
// Restrictions: VP i and i+1 neighbours for i < p-1 (or routed links).
#include "card.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

void all_reduce_line(const Comm& c, ConstBytes in, Bytes out, const Reducer& op);
double all_reduce_line_cost(const CostQuery& q);

namespace {
void fold_nothing(const void*, std::byte*, const std::byte*, const std::byte*, std::size_t) {}
}  // namespace

const Reducer& no_data_reducer() noexcept {
  static constexpr Reducer nothing{fold_nothing, nullptr, 1, true};
  return nothing;
}

extern const AlgorithmCard barrier_line_card{
    {Collective::barrier, Algo::ring,
     "the line all-reduce of no data: zero-byte messages into the middle VP and out again",
     "c = floor((p-1)/2): max(c, p-1-c)*(ts + th) + max(L*(ts + th), (S+1)*ts + S*th), L = "
     "p-1-c, S = c",
     kLineNeeds, nullptr, "linear array"},
    needs_line,
    all_reduce_line_cost,
    [](const Comm& c, const Args&) { all_reduce_line(c, {}, {}, no_data_reducer()); },
    line_counts_hops};

}  // namespace hypercomm::detail
