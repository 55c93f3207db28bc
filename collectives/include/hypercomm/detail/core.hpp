// The byte-level core of the collectives, compiled once (DESIGN.md, example 4): the typed front
// end in collectives.hpp turns span<T> into bytes and an Op into a block function.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <hypercomm/export.hpp>
#include <hypercomm/group.hpp>
#include <hypercomm/ops.hpp>
#include <hypercomm/proc.hpp>
#if !defined(__GNUC__) && !defined(__clang__) && !defined(_MSC_VER)
#include <source_location>
#endif
#include <span>
#include <type_traits>

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm {

// Which algorithm a collective runs (API.md, "Algo").
enum class Algo : std::uint8_t {
  automatic,           // lowest textbook cost that can run here
  hypercube,           // bit-mask algorithms 4.1-4.3, 4.7-4.10 (p = 2^d)
  ring,                // 4.4, 4.5, the two-way ring broadcast
  mesh,                // row phase then column phase, 4.6
  esbt,                // broadcast over d edge-disjoint spanning binomial trees, pipelined
  two_phase,           // section 4.7 split-message algorithms
  dimension_exchange,  // hypercube all-to-all, one dimension per step
  dissemination,       // barrier: Hensgen, Finkel and Manber's ceil(log p) rounds (routed)
  reduce_broadcast,    // all-reduce as reduce (4.3) then broadcast (4.1): 2 log p steps
};

[[nodiscard]] const char* to_string(Algo a) noexcept;

namespace detail {

enum class Collective : std::uint8_t {
  broadcast = 1,
  reduce,
  all_reduce,
  all_gather,
  reduce_scatter,
  scan,
  exscan,
  scatter,
  gather,
  all_to_all,
  circular_shift,
  barrier,
  // The irregular ("v") collectives: blocks of any sizes, given by per-rank counts.
  all_gatherv,
  gatherv,
  scatterv,
  all_to_allv,
  reduce_scatterv,
};

// Inline: every collective call names itself (its trace span, its errors), and the name of a
// call whose kind is a constant folds to that constant.
[[nodiscard]] constexpr const char* to_string(Collective c) noexcept {
  switch (c) {
    case Collective::broadcast: return "broadcast";
    case Collective::reduce: return "reduce";
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::scan: return "scan";
    case Collective::exscan: return "exscan";
    case Collective::scatter: return "scatter";
    case Collective::gather: return "gather";
    case Collective::all_to_all: return "all_to_all";
    case Collective::circular_shift: return "circular_shift";
    case Collective::barrier: return "barrier";
    case Collective::all_gatherv: return "all_gatherv";
    case Collective::gatherv: return "gatherv";
    case Collective::scatterv: return "scatterv";
    case Collective::all_to_allv: return "all_to_allv";
    case Collective::reduce_scatterv: return "reduce_scatterv";
  }
  return "collective";
}

// A reduction operator as a block function: dst[i] = op(left[i], right[i]) for i < count.
// dst may alias left or right. Called once per block, never per element.
struct Reducer {
  void (*combine)(const void* op, std::byte* dst, const std::byte* left, const std::byte* right,
                  std::size_t count);
  const void* op;
  std::size_t elem_size;
  bool commutative;
  // The operator cannot throw: a receive may fold a message with it on the sender's thread as
  // the message lands (Comm::recv_fold); a throwing one folds only on the thread that called.
  bool never_throws = false;
  // Any association of the fold gives the same bits (a standard operator on integers): an
  // algorithm whose members fold the same operands in different orders (all_reduce_mesh.cpp)
  // may then keep its own order; otherwise every member folds them in one order, so that all
  // get the same bits (floating-point sums, user operators).
  bool exact = false;
  // The operator and element type (operator_digest): members that pass different ones disagree
  // on the call's header (CollectiveMismatch), as on a root. 0 for the library's own.
  std::uint16_t digest = 0;

  void operator()(std::byte* dst, const std::byte* left, const std::byte* right,
                  std::size_t bytes) const {
    combine(op, dst, left, right, bytes / elem_size);
  }
};

// The T whose bytes lie at `at` (any alignment), for a trivially copyable T with or without a
// default constructor.
template <class T>
[[nodiscard]] T load(const std::byte* at) noexcept {
  if constexpr (std::is_default_constructible_v<T>) {
    T value;
    std::memcpy(&value, at, sizeof(T));
    return value;
  } else {
    std::array<std::byte, sizeof(T)> raw;
    std::memcpy(raw.data(), at, sizeof(T));
    return std::bit_cast<T>(raw);
  }
}

// How a block fold's destination lies against its operands. The runs below know it, so that no
// compiler has to check at run time whether the stores may feed a later load: Clang 14 (unlike
// GCC) vectorizes a loop whose destination may alias a source only when its run-time check finds
// the buffers disjoint, so the in-place fold, the common one (dst == left or dst == right), went
// one element at a time (p = 8, scan of 1 KiB back to back: 1.38x GCC's time).
enum class FoldShape { disjoint, into_left, into_right };

template <class T, FoldShape shape, class F>
void combine_run(F& f, std::byte* __restrict dst, const std::byte* left, const std::byte* right,
                 std::size_t count) {
  // Four vectors a pass: a one-vector loop runs up to 1.8x slower where the linker happens to
  // lay it across two 64-byte lines (p = 2, reduce of 64 KiB back to back: 4.6 us against 2.6,
  // the same code at another address). GCC's alone: Clang 14 unrolls first and then vectorizes
  // the four copies with shuffles (p = 2, scan of 64 KiB back to back: 5.3 us against GCC's 2.6);
  // left to itself it vectorizes and interleaves the loop.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 4
#endif
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t at = i * sizeof(T);
    // The operand that dst overwrites is read through dst, which alone touches its bytes.
    T a = load<T>(shape == FoldShape::into_left ? dst + at : left + at);
    T b = load<T>(shape == FoldShape::into_right ? dst + at : right + at);
    const T r = static_cast<T>(f(a, b));
    std::memcpy(dst + at, &r, sizeof(T));
  }
}

template <class T, class Op>
void combine_block(const void* op, std::byte* dst, const std::byte* left, const std::byte* right,
                   std::size_t count) {
  // An operator callable only as non-const (a mutable lambda, a counting function object) is
  // the VP's own copy (the collectives take Op by value), called on the VP's thread alone
  // (never_throws_v: a receive folds with it only there).
  using Callable =
      std::conditional_t<std::is_invocable_v<const Op&, const T&, const T&>, const Op, Op>;
  Callable& f = *const_cast<Callable*>(static_cast<const Op*>(op));
  const std::uintptr_t bytes = count * sizeof(T);
  const auto apart = [bytes](const std::byte* x, const std::byte* y) {
    const auto u = reinterpret_cast<std::uintptr_t>(x), v = reinterpret_cast<std::uintptr_t>(y);
    return u + bytes <= v || v + bytes <= u;
  };
  if (dst == left && apart(dst, right)) {
    combine_run<T, FoldShape::into_left>(f, dst, nullptr, right, count);
  } else if (dst == right && apart(dst, left)) {
    combine_run<T, FoldShape::into_right>(f, dst, left, nullptr, count);
  } else if (apart(dst, left) && apart(dst, right)) {
    combine_run<T, FoldShape::disjoint>(f, dst, left, right, count);
  } else {
    // Operands that overlap the destination otherwise (all three one buffer, or shifted copies):
    // element by element in ascending order, as the fold is defined.
    for (std::size_t i = 0; i < count; ++i) {
      T a = load<T>(left + i * sizeof(T)), b = load<T>(right + i * sizeof(T));
      const T r = static_cast<T>(f(a, b));
      std::memcpy(dst + i * sizeof(T), &r, sizeof(T));
    }
  }
}

// The standard library's arithmetic and bitwise function objects, which cannot throw on
// arithmetic values though their operator() is not declared noexcept.
template <class Op>
struct is_standard_arithmetic_op : std::false_type {};
template <class U>
struct is_standard_arithmetic_op<std::plus<U>> : std::true_type {};
template <class U>
struct is_standard_arithmetic_op<std::minus<U>> : std::true_type {};
template <class U>
struct is_standard_arithmetic_op<std::multiplies<U>> : std::true_type {};
template <class U>
struct is_standard_arithmetic_op<std::bit_and<U>> : std::true_type {};
template <class U>
struct is_standard_arithmetic_op<std::bit_or<U>> : std::true_type {};
template <class U>
struct is_standard_arithmetic_op<std::bit_xor<U>> : std::true_type {};
template <class U>
struct is_standard_arithmetic_op<max<U>> : std::true_type {};
template <class U>
struct is_standard_arithmetic_op<min<U>> : std::true_type {};

template <class T, class Op>
inline constexpr bool never_throws_v = std::is_nothrow_invocable_v<const Op&, const T&, const T&> ||
                                       (std::is_arithmetic_v<T> &&
                                        is_standard_arithmetic_op<std::remove_cvref_t<Op>>::value);

// A reduction's operator and element type by name ("... [with T = double; Op = std::plus<void>]"
// under GCC, "... [T = double, Op = std::plus<>]" under Clang), the same text in every
// process that runs one program, and a 16-bit digest of it (FNV-1a): members whose operators
// differ (std::plus<> on one VP, hypercomm::max<> on another, or one operator on float and on
// int) carry different digests in the call's header. The function's own name, not
// std::source_location, which Clang before 15 (Debian 12's clang++) does not have.
template <class T, class Op>
[[nodiscard]] consteval const char* operator_signature() noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return __PRETTY_FUNCTION__;
#elif defined(_MSC_VER)
  return __FUNCSIG__;
#else
  return std::source_location::current().function_name();
#endif
}
template <class T, class Op>
[[nodiscard]] consteval std::uint16_t operator_digest() noexcept {
  std::uint32_t hash = 2166136261u;
  for (const char* c = operator_signature<T, Op>(); *c != '\0'; ++c)
    hash = (hash ^ static_cast<unsigned char>(*c)) * 16777619u;
  return static_cast<std::uint16_t>(hash ^ (hash >> 16));
}
// Keeps the signature of a digest, by which a CollectiveMismatch names the operators.
void name_operator(std::uint16_t digest, const char* signature);
// Each operator and element type that a program reduces with, named before main runs.
template <class T, class Op>
inline const bool operator_named =
    (name_operator(operator_digest<T, Op>(), operator_signature<T, Op>()), true);

template <class T, class Op>
[[nodiscard]] Reducer make_reducer(const Op& op) noexcept {
  (void)operator_named<T, Op>;
  return Reducer{&combine_block<T, Op>,
                 &op,
                 sizeof(T),
                 is_commutative_v<Op>,
                 never_throws_v<T, Op>,
                 std::is_integral_v<T> && is_standard_arithmetic_op<std::remove_cvref_t<Op>>::value,
                 operator_digest<T, Op>()};
}

using Bytes = std::span<std::byte>;
using ConstBytes = std::span<const std::byte>;

void broadcast(const Group& g, Bytes buf, std::size_t elem_size, int root, Algo algo);
void reduce(const Group& g, ConstBytes in, Bytes out, const Reducer& op, int root, Algo algo);
void all_reduce(const Group& g, ConstBytes in, Bytes out, const Reducer& op,
                Algo algo);  // in may be out
void all_gather(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, Algo algo);
void reduce_scatter(const Group& g, ConstBytes in, Bytes out, const Reducer& op, Algo algo);
void scan(const Group& g, ConstBytes in, Bytes out, const Reducer& op, bool exclusive);
void scatter(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, int root);
void gather(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, int root);
void all_to_all(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, Algo algo);
void circular_shift(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, int shift);
void barrier(const Group& g);
Group split(const Group& g, int color, int key);

// Irregular collectives: counts are elements per rank (elem_size bytes each).
using Counts = std::span<const std::size_t>;
void all_gatherv(const Group& g, ConstBytes in, Bytes out, Counts counts, std::size_t elem_size,
                 Algo algo);
void gatherv(const Group& g, ConstBytes in, Bytes out, Counts counts, std::size_t elem_size,
             int root);
void scatterv(const Group& g, ConstBytes in, Bytes out, Counts counts, std::size_t elem_size,
              int root);
void all_to_allv(const Group& g, ConstBytes in, Counts send_counts, Bytes out, Counts recv_counts,
                 std::size_t elem_size, Algo algo);
void reduce_scatterv(const Group& g, ConstBytes in, Bytes out, const Reducer& op, Counts counts,
                     Algo algo);
// SizeMismatch: a per-rank argument of `op` with `entries` entries instead of one per member.
[[noreturn]] void throw_rank_count(const Group& g, const char* op, std::size_t entries);

}  // namespace detail
}  // namespace hypercomm

HYPERCOMM_PUBLIC_END
