// The collectives of API.md: thin typed templates over the byte-level core (detail/core.hpp).
// Every VP must call them in the same order with agreeing roots, counts and algorithms.
#pragma once

#include <hypercomm/detail/core.hpp>
#include <hypercomm/ops.hpp>
#include <hypercomm/proc.hpp>

#include <ranges>
#include <span>
#include <type_traits>
#include <vector>

namespace hypercomm {

namespace detail {
template <class R>
using value_of = std::ranges::range_value_t<R>;

// A single value for the value forms: trivially copyable and not a range.
template <class T>
concept MessageValue = std::is_trivially_copyable_v<T> && !std::ranges::range<T>;

template <class In, class Out>
inline constexpr bool same_element_v = std::is_same_v<value_of<In>, value_of<Out>>;
}  // namespace detail

template <MutableMessageRange R>
void broadcast(Proc& vp, R&& buf, int root, Algo a = Algo::automatic) {
  detail::broadcast(vp, as_writable_bytes_of(buf), sizeof(detail::value_of<R>), root, a);
}

template <MessageRange In, MutableMessageRange Out, class Op>
  requires detail::same_element_v<In, Out>
void reduce(Proc& vp, const In& in, Out&& out, Op op, int root, Algo a = Algo::automatic) {
  detail::reduce(vp, as_bytes_of(in), as_writable_bytes_of(out),
                 detail::make_reducer<detail::value_of<In>>(op), root, a);
}

template <MessageRange In, MutableMessageRange Out, class Op>
  requires detail::same_element_v<In, Out>
void all_reduce(Proc& vp, const In& in, Out&& out, Op op, Algo a = Algo::automatic) {
  detail::all_reduce(vp, as_bytes_of(in), as_writable_bytes_of(out),
                     detail::make_reducer<detail::value_of<In>>(op), a);
}

// In place: inout holds this VP's contribution on entry and the result on return.
template <MutableMessageRange R, class Op>
  requires(!std::is_same_v<std::remove_cvref_t<Op>, Algo>)
void all_reduce(Proc& vp, R&& inout, Op op) {
  const auto bytes = as_writable_bytes_of(inout);
  detail::all_reduce(vp, bytes, bytes, detail::make_reducer<detail::value_of<R>>(op),
                     Algo::automatic);
}

// out holds p blocks of in.size() elements; block i comes from VP i.
template <MessageRange In, MutableMessageRange Out>
  requires detail::same_element_v<In, Out>
void all_gather(Proc& vp, const In& in, Out&& out, Algo a = Algo::automatic) {
  detail::all_gather(vp, as_bytes_of(in), as_writable_bytes_of(out),
                     sizeof(detail::value_of<In>), a);
}

// in holds p blocks of out.size() elements; VP i gets the reduction of block i.
template <MessageRange In, MutableMessageRange Out, class Op>
  requires detail::same_element_v<In, Out>
void reduce_scatter(Proc& vp, const In& in, Out&& out, Op op, Algo a = Algo::automatic) {
  detail::reduce_scatter(vp, as_bytes_of(in), as_writable_bytes_of(out),
                         detail::make_reducer<detail::value_of<In>>(op), a);
}

// Inclusive prefix over VP ids.
template <MessageRange In, MutableMessageRange Out, class Op>
  requires detail::same_element_v<In, Out>
void scan(Proc& vp, const In& in, Out&& out, Op op) {
  detail::scan(vp, as_bytes_of(in), as_writable_bytes_of(out),
               detail::make_reducer<detail::value_of<In>>(op), false);
}

// Exclusive prefix; VP 0's out is left untouched.
template <MessageRange In, MutableMessageRange Out, class Op>
  requires detail::same_element_v<In, Out>
void exscan(Proc& vp, const In& in, Out&& out, Op op) {
  detail::scan(vp, as_bytes_of(in), as_writable_bytes_of(out),
               detail::make_reducer<detail::value_of<In>>(op), true);
}

// in (p blocks of out.size()) is read at root only and may be empty elsewhere.
template <MessageRange In, MutableMessageRange Out>
  requires detail::same_element_v<In, Out>
void scatter(Proc& vp, const In& in, Out&& out, int root) {
  detail::scatter(vp, as_bytes_of(in), as_writable_bytes_of(out), sizeof(detail::value_of<In>),
                  root);
}

// out (p blocks of in.size()) is written at root only and may be empty elsewhere.
template <MessageRange In, MutableMessageRange Out>
  requires detail::same_element_v<In, Out>
void gather(Proc& vp, const In& in, Out&& out, int root) {
  detail::gather(vp, as_bytes_of(in), as_writable_bytes_of(out), sizeof(detail::value_of<In>),
                 root);
}

// Block j of VP i's in goes to block i of VP j's out.
template <MessageRange In, MutableMessageRange Out>
  requires detail::same_element_v<In, Out>
void all_to_all(Proc& vp, const In& in, Out&& out, Algo a = Algo::automatic) {
  detail::all_to_all(vp, as_bytes_of(in), as_writable_bytes_of(out),
                     sizeof(detail::value_of<In>), a);
}

// VP i's in goes to VP (i + shift) mod p's out; any shift, negative included.
template <MessageRange In, MutableMessageRange Out>
  requires detail::same_element_v<In, Out>
void circular_shift(Proc& vp, const In& in, Out&& out, int shift) {
  detail::circular_shift(vp, as_bytes_of(in), as_writable_bytes_of(out),
                         sizeof(detail::value_of<In>), shift);
}

inline void barrier(Proc& vp) { detail::barrier(vp); }

// Value forms.
template <detail::MessageValue T>
T broadcast(Proc& vp, T value, int root) {
  detail::broadcast(vp, std::as_writable_bytes(std::span<T, 1>(&value, 1)), sizeof(T), root,
                    Algo::automatic);
  return value;
}

template <detail::MessageValue T, class Op>
T all_reduce(Proc& vp, T value, Op op) {
  T result = value;
  const auto bytes = std::as_writable_bytes(std::span<T, 1>(&result, 1));
  detail::all_reduce(vp, bytes, bytes, detail::make_reducer<T>(op), Algo::automatic);
  return result;
}

template <detail::MessageValue T, class Op>
T scan(Proc& vp, T value, Op op) {
  T result = value;
  detail::scan(vp, std::as_bytes(std::span<const T, 1>(&value, 1)),
               std::as_writable_bytes(std::span<T, 1>(&result, 1)), detail::make_reducer<T>(op),
               false);
  return result;
}

template <detail::MessageValue T>
std::vector<T> all_gather(Proc& vp, T value) {
  std::vector<T> out(static_cast<std::size_t>(vp.size()));
  detail::all_gather(vp, std::as_bytes(std::span<const T, 1>(&value, 1)),
                     std::as_writable_bytes(std::span<T>(out)), sizeof(T), Algo::automatic);
  return out;
}

}  // namespace hypercomm
