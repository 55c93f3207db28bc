// The collectives of API.md: thin typed templates over the byte-level core (detail/core.hpp).
// Every VP must call them in the same order with agreeing roots, counts and algorithms.
#pragma once

#include <concepts>
#include <cstring>
#include <hypercomm/detail/core.hpp>
#include <hypercomm/export.hpp>
#include <hypercomm/group.hpp>
#include <hypercomm/ops.hpp>
#include <hypercomm/proc.hpp>
#include <ranges>
#include <span>
#include <type_traits>
#include <vector>

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm {

namespace detail {
template <class R>
using value_of = std::ranges::range_value_t<R>;

// A single value for the value forms: trivially copyable and not a range.
template <class T>
concept MessageValue = std::is_trivially_copyable_v<T> && !std::ranges::range<T>;

template <class In, class Out>
inline constexpr bool same_element_v = std::is_same_v<value_of<In>, value_of<Out>>;

// What a collective runs on: a VP (its whole machine) or a Group.
inline Group group_of(Proc& vp) noexcept { return vp.world(); }
inline const Group& group_of(const Group& g) noexcept { return g; }
}  // namespace detail

// A VP or a Group: every collective takes either first (API.md, "Groups").
template <class C>
concept Communicator =
    std::same_as<std::remove_cvref_t<C>, Proc> || std::same_as<std::remove_cvref_t<C>, Group>;

template <Communicator C, MutableMessageRange R>
void broadcast(C&& vp, R&& buf, int root, Algo a = Algo::automatic) {
  detail::broadcast(detail::group_of(vp), as_writable_bytes_of(buf), sizeof(detail::value_of<R>),
                    root, a);
}

template <Communicator C, MessageRange In, MutableMessageRange Out, class Op>
requires detail::same_element_v<In, Out>
void reduce(C&& vp, const In& in, Out&& out, Op op, int root, Algo a = Algo::automatic) {
  detail::reduce(detail::group_of(vp), as_bytes_of(in), as_writable_bytes_of(out),
                 detail::make_reducer<detail::value_of<In>>(op), root, a);
}

template <Communicator C, MessageRange In, MutableMessageRange Out, class Op>
requires detail::same_element_v<In, Out>
void all_reduce(C&& vp, const In& in, Out&& out, Op op, Algo a = Algo::automatic) {
  detail::all_reduce(detail::group_of(vp), as_bytes_of(in), as_writable_bytes_of(out),
                     detail::make_reducer<detail::value_of<In>>(op), a);
}

// In place: inout holds this VP's contribution on entry and the result on return.
template <Communicator C, MutableMessageRange R, class Op>
requires(!std::is_same_v<std::remove_cvref_t<Op>, Algo>) void all_reduce(C&& vp, R&& inout, Op op) {
  const auto bytes = as_writable_bytes_of(inout);
  detail::all_reduce(detail::group_of(vp), bytes, bytes,
                     detail::make_reducer<detail::value_of<R>>(op), Algo::automatic);
}

// out holds p blocks of in.size() elements; block i comes from VP i.
template <Communicator C, MessageRange In, MutableMessageRange Out>
requires detail::same_element_v<In, Out>
void all_gather(C&& vp, const In& in, Out&& out, Algo a = Algo::automatic) {
  detail::all_gather(detail::group_of(vp), as_bytes_of(in), as_writable_bytes_of(out),
                     sizeof(detail::value_of<In>), a);
}

// in holds p blocks of out.size() elements; VP i gets the reduction of block i.
template <Communicator C, MessageRange In, MutableMessageRange Out, class Op>
requires detail::same_element_v<In, Out>
void reduce_scatter(C&& vp, const In& in, Out&& out, Op op, Algo a = Algo::automatic) {
  detail::reduce_scatter(detail::group_of(vp), as_bytes_of(in), as_writable_bytes_of(out),
                         detail::make_reducer<detail::value_of<In>>(op), a);
}

// Inclusive prefix over VP ids.
template <Communicator C, MessageRange In, MutableMessageRange Out, class Op>
requires detail::same_element_v<In, Out>
void scan(C&& vp, const In& in, Out&& out, Op op) {
  detail::scan(detail::group_of(vp), as_bytes_of(in), as_writable_bytes_of(out),
               detail::make_reducer<detail::value_of<In>>(op), false);
}

// Exclusive prefix; VP 0's out is left untouched.
template <Communicator C, MessageRange In, MutableMessageRange Out, class Op>
requires detail::same_element_v<In, Out>
void exscan(C&& vp, const In& in, Out&& out, Op op) {
  detail::scan(detail::group_of(vp), as_bytes_of(in), as_writable_bytes_of(out),
               detail::make_reducer<detail::value_of<In>>(op), true);
}

// in (p blocks of out.size()) is read at root only and may be empty elsewhere.
template <Communicator C, MessageRange In, MutableMessageRange Out>
requires detail::same_element_v<In, Out>
void scatter(C&& vp, const In& in, Out&& out, int root) {
  detail::scatter(detail::group_of(vp), as_bytes_of(in), as_writable_bytes_of(out),
                  sizeof(detail::value_of<In>), root);
}

// out (p blocks of in.size()) is written at root only and may be empty elsewhere.
template <Communicator C, MessageRange In, MutableMessageRange Out>
requires detail::same_element_v<In, Out>
void gather(C&& vp, const In& in, Out&& out, int root) {
  detail::gather(detail::group_of(vp), as_bytes_of(in), as_writable_bytes_of(out),
                 sizeof(detail::value_of<In>), root);
}

// Block j of VP i's in goes to block i of VP j's out.
template <Communicator C, MessageRange In, MutableMessageRange Out>
requires detail::same_element_v<In, Out>
void all_to_all(C&& vp, const In& in, Out&& out, Algo a = Algo::automatic) {
  detail::all_to_all(detail::group_of(vp), as_bytes_of(in), as_writable_bytes_of(out),
                     sizeof(detail::value_of<In>), a);
}

// VP i's in goes to VP (i + shift) mod p's out; any shift, negative included.
template <Communicator C, MessageRange In, MutableMessageRange Out>
requires detail::same_element_v<In, Out>
void circular_shift(C&& vp, const In& in, Out&& out, int shift) {
  detail::circular_shift(detail::group_of(vp), as_bytes_of(in), as_writable_bytes_of(out),
                         sizeof(detail::value_of<In>), shift);
}

template <Communicator C>
void barrier(C&& vp) {
  detail::barrier(detail::group_of(vp));
}

// Splits g (a collective over g: every member calls it): members of equal color form one group,
// ranked by (key, rank in g); color < 0: in no group (size() == 0, rank() == -1). Its topology is
// ring(n), routed over the machine; it costs the exchange it makes (an all-gather over g).
template <Communicator C>
[[nodiscard]] Group split(C&& g, int color, int key) {
  return detail::split(detail::group_of(g), color, key);
}

// Value forms. The value is taken as it is passed (a forwarding reference), so that a C array,
// which is a range, does not decay to a pointer and take the value form (API.md: a value form
// applies only when the argument is not a range).
template <Communicator C, class V>
requires detail::MessageValue<std::remove_cvref_t<V>> std::remove_cvref_t<V> broadcast(C&& vp,
                                                                                       V&& value,
                                                                                       int root) {
  using T = std::remove_cvref_t<V>;
  T result = value;
  detail::broadcast(detail::group_of(vp), std::as_writable_bytes(std::span<T, 1>(&result, 1)),
                    sizeof(T), root, Algo::automatic);
  return result;
}

template <Communicator C, class V, class Op>
requires detail::MessageValue<std::remove_cvref_t<V>> std::remove_cvref_t<V> all_reduce(C&& vp,
                                                                                        V&& value,
                                                                                        Op op) {
  using T = std::remove_cvref_t<V>;
  T result = value;
  const auto bytes = std::as_writable_bytes(std::span<T, 1>(&result, 1));
  detail::all_reduce(detail::group_of(vp), bytes, bytes, detail::make_reducer<T>(op),
                     Algo::automatic);
  return result;
}

template <Communicator C, class V, class Op>
requires detail::MessageValue<std::remove_cvref_t<V>> std::remove_cvref_t<V> scan(C&& vp, V&& value,
                                                                                  Op op) {
  using T = std::remove_cvref_t<V>;
  const T input = value;
  T result = input;
  detail::scan(detail::group_of(vp), std::as_bytes(std::span<const T, 1>(&input, 1)),
               std::as_writable_bytes(std::span<T, 1>(&result, 1)), detail::make_reducer<T>(op),
               false);
  return result;
}

namespace detail {
// n elements of T that `receive` writes as bytes: in place where T has a default constructor,
// else received into bytes and copied out, element by element (API.md: T is any trivially
// copyable type; std::vector<bool> holds no bools to write into).
template <class T, class Receive>
[[nodiscard]] std::vector<T> received(std::size_t n, Receive&& receive) {
  if constexpr (std::is_default_constructible_v<T> && !std::is_same_v<T, bool>) {
    std::vector<T> out(n);
    receive(std::as_writable_bytes(std::span<T>(out)));
    return out;
  } else {
    std::vector<std::byte> bytes(n * sizeof(T));
    receive(std::span<std::byte>(bytes));
    std::vector<T> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back(load<T>(bytes.data() + i * sizeof(T)));
    return out;
  }
}
}  // namespace detail

template <Communicator C, class V>
requires detail::MessageValue<std::remove_cvref_t<V>> std::vector<std::remove_cvref_t<V>>
all_gather(C&& vp, V&& value) {
  using T = std::remove_cvref_t<V>;
  const T input = value;
  const Group group = detail::group_of(vp);
  return detail::received<T>(static_cast<std::size_t>(group.size()), [&](std::span<std::byte> out) {
    detail::all_gather(group, std::as_bytes(std::span<const T, 1>(&input, 1)), out, sizeof(T),
                       Algo::automatic);
  });
}

// ---- Irregular collectives (API.md, "Irregular collectives"): blocks of any sizes, in rank
// order; counts are elements, one per rank (zero allowed). A count that disagrees between
// members throws SizeMismatch or CollectiveMismatch, never truncates.
namespace detail {
template <class R>
concept CountRange = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    std::same_as<std::remove_cv_t<std::ranges::range_value_t<R>>, std::size_t>;
template <CountRange R>
[[nodiscard]] Counts counts_of(const R& r) noexcept {
  return Counts(std::ranges::data(r), std::ranges::size(r));
}
}  // namespace detail

// out = every member's in, in rank order; counts (the same on every member): elements per rank.
// `a` as for all_gather (automatic weighs the largest block and the total).
template <Communicator C, MessageRange In, MutableMessageRange Out, detail::CountRange N>
requires detail::same_element_v<In, Out>
void all_gatherv(C&& g, const In& in, Out&& out, const N& counts, Algo a = Algo::automatic) {
  detail::all_gatherv(detail::group_of(g), as_bytes_of(in), as_writable_bytes_of(out),
                      detail::counts_of(counts), sizeof(detail::value_of<In>), a);
}

// root's out (sum of counts elements) gets every member's in; out may be empty elsewhere.
template <Communicator C, MessageRange In, MutableMessageRange Out, detail::CountRange N>
requires detail::same_element_v<In, Out>
void gatherv(C&& g, const In& in, Out&& out, const N& counts, int root) {
  detail::gatherv(detail::group_of(g), as_bytes_of(in), as_writable_bytes_of(out),
                  detail::counts_of(counts), sizeof(detail::value_of<In>), root);
}

// root's in (sum of counts elements) is cut into the members' outs; in may be empty elsewhere.
template <Communicator C, MessageRange In, MutableMessageRange Out, detail::CountRange N>
requires detail::same_element_v<In, Out>
void scatterv(C&& g, const In& in, Out&& out, const N& counts, int root) {
  detail::scatterv(detail::group_of(g), as_bytes_of(in), as_writable_bytes_of(out),
                   detail::counts_of(counts), sizeof(detail::value_of<In>), root);
}

// in = send_counts[j] elements for rank j, in rank order; out = recv_counts[i] from rank i.
// `a`: hypercube (Algorithm 4.10's pairwise exchange), ring (4.5.1), mesh (4.5.2),
// dimension_exchange (4.5.3), or automatic.
template <Communicator C, MessageRange In, detail::CountRange S, MutableMessageRange Out,
          detail::CountRange R>
requires detail::same_element_v<In, Out>
void all_to_allv(C&& g, const In& in, const S& send_counts, Out&& out, const R& recv_counts,
                 Algo a = Algo::automatic) {
  detail::all_to_allv(detail::group_of(g), as_bytes_of(in), detail::counts_of(send_counts),
                      as_writable_bytes_of(out), detail::counts_of(recv_counts),
                      sizeof(detail::value_of<In>), a);
}

// in = sum(counts) elements on every member; rank i gets the reduction of its counts[i].
// `a` as for reduce_scatter.
template <Communicator C, MessageRange In, MutableMessageRange Out, class Op, detail::CountRange N>
requires detail::same_element_v<In, Out>
void reduce_scatterv(C&& g, const In& in, Out&& out, Op op, const N& counts,
                     Algo a = Algo::automatic) {
  detail::reduce_scatterv(detail::group_of(g), as_bytes_of(in), as_writable_bytes_of(out),
                          detail::make_reducer<detail::value_of<In>>(op), detail::counts_of(counts),
                          a);
}

// The counts discovered by the runtime (one all-gather of the sizes first).
template <Communicator C, MessageRange In>
[[nodiscard]] std::vector<detail::value_of<In>> all_gatherv(C&& g, const In& in) {
  using T = detail::value_of<In>;
  const Group group = detail::group_of(g);
  const std::vector<std::size_t> counts = all_gather(group, std::size_t{std::ranges::size(in)});
  std::size_t total = 0;
  for (const std::size_t n : counts) total += n;
  return detail::received<T>(total, [&](std::span<std::byte> out) {
    detail::all_gatherv(group, as_bytes_of(in), out, detail::counts_of(counts), sizeof(T),
                        Algo::automatic);
  });
}

// out_per_rank[j] goes to rank j; the result's element i came from rank i (one all-to-all of
// the sizes first). SizeMismatch unless out_per_rank has one entry per member.
template <Communicator C, class T>
requires std::is_trivially_copyable_v<T>
[[nodiscard]] std::vector<std::vector<T>> all_to_allv(
    C&& g, const std::vector<std::vector<T>>& out_per_rank) {
  const Group group = detail::group_of(g);
  const auto p = static_cast<std::size_t>(group.size());
  if (out_per_rank.size() != p) detail::throw_rank_count(group, "all_to_allv", out_per_rank.size());
  std::vector<std::size_t> send_counts(p), recv_counts(p);
  std::size_t sent = 0;
  for (std::size_t j = 0; j < p; ++j) sent += send_counts[j] = out_per_rank[j].size();
  all_to_all(group, send_counts, recv_counts);
  // The blocks side by side as bytes (a T need not be assignable; a std::vector<bool>'s
  // elements are bits, copied one by one).
  std::vector<std::byte> in(sent * sizeof(T));
  std::byte* to = in.data();
  for (const auto& block : out_per_rank) {
    if constexpr (std::is_same_v<T, bool>) {
      for (const bool b : block) std::memcpy(to, &b, sizeof(T)), to += sizeof(T);
    } else if (!block.empty()) {
      std::memcpy(to, block.data(), block.size() * sizeof(T));
      to += block.size() * sizeof(T);
    }
  }
  std::size_t received = 0;
  for (const std::size_t n : recv_counts) received += n;
  const std::vector<T> out = detail::received<T>(received, [&](std::span<std::byte> bytes) {
    detail::all_to_allv(group, std::span<const std::byte>(in), detail::counts_of(send_counts),
                        bytes, detail::counts_of(recv_counts), sizeof(T), Algo::automatic);
  });
  std::vector<std::vector<T>> result;
  result.reserve(p);
  auto from = out.begin();
  for (std::size_t i = 0; i < p; ++i) {
    const auto n = static_cast<std::ptrdiff_t>(recv_counts[i]);
    result.emplace_back(from, from + n);
    from += n;
  }
  return result;
}

}  // namespace hypercomm

HYPERCOMM_PUBLIC_END
