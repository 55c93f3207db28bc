// Reduction operators (API.md, "Collectives"; Boost.MPI operations.hpp is the model).
#pragma once

#include <functional>
#include <hypercomm/export.hpp>
#include <type_traits>

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm {

template <class T = void>
struct max {
  constexpr T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <>
struct max<void> {
  template <class A, class B>
  constexpr auto operator()(const A& a, const B& b) const {
    return a < b ? b : a;
  }
};

template <class T = void>
struct min {
  constexpr T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <>
struct min<void> {
  template <class A, class B>
  constexpr auto operator()(const A& a, const B& b) const {
    return b < a ? b : a;
  }
};

// A user operator is taken as non-commutative unless this is specialised true for it: every
// result then equals the left fold over VP ids 0, 1, ..., p-1.
template <class Op>
struct is_commutative : std::false_type {};

template <class T>
struct is_commutative<std::plus<T>> : std::true_type {};
template <class T>
struct is_commutative<std::multiplies<T>> : std::true_type {};
template <class T>
struct is_commutative<std::bit_and<T>> : std::true_type {};
template <class T>
struct is_commutative<std::bit_or<T>> : std::true_type {};
template <class T>
struct is_commutative<std::bit_xor<T>> : std::true_type {};
template <class T>
struct is_commutative<max<T>> : std::true_type {};
template <class T>
struct is_commutative<min<T>> : std::true_type {};

template <class Op>
inline constexpr bool is_commutative_v = is_commutative<std::remove_cvref_t<Op>>::value;

}  // namespace hypercomm

HYPERCOMM_PUBLIC_END
