// Shared test support: the machines every collective is checked on, a non-commutative operator,
// and per-VP result slots (VP bodies write them; the test thread asserts after run returns, so
// doctest's context is printed on failure; DESIGN.md example 8).
#pragma once

#include <cstdint>
#include <hypercomm/hypercomm.hpp>
#include <string>
#include <vector>

namespace hctest {

// Under a sanitizer everything runs 5-20x slower: stress loops shrink, their logic does not.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// Every Algo, automatic first: the suites force each one and expect AlgorithmError where the
// collective has no such algorithm or it cannot run.
inline constexpr hypercomm::Algo kAllAlgos[] = {hypercomm::Algo::automatic,
                                                hypercomm::Algo::hypercube,
                                                hypercomm::Algo::ring,
                                                hypercomm::Algo::mesh,
                                                hypercomm::Algo::esbt,
                                                hypercomm::Algo::two_phase,
                                                hypercomm::Algo::dimension_exchange,
                                                hypercomm::Algo::dissemination,
                                                hypercomm::Algo::reduce_broadcast};

// Rings p = 1..9, 12, 16; meshes 1x1, 1x3, 2x2, 2x3, 3x3, 4x4; hypercubes d = 0..5.
inline std::vector<hypercomm::Topology> all_topologies() {
  std::vector<hypercomm::Topology> t;
  for (int p : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16}) t.push_back(hypercomm::Topology::ring(p));
  for (auto [r, c] : {std::pair{1, 1}, {1, 3}, {2, 2}, {2, 3}, {3, 3}, {4, 4}})
    t.push_back(hypercomm::Topology::mesh(r, c));
  for (int d = 0; d <= 5; ++d) t.push_back(hypercomm::Topology::hypercube(d));
  return t;
}

// Whether every pair id, id XOR 2^k of t (p = 2^d) are neighbours, asked of t pair by pair: where
// the bit-mask algorithms (Algo::hypercube, esbt, dimension_exchange) run under Links::strict
// (a hypercube, 1 or 2 VPs, a 2 x 2 mesh), for API.md's AlgorithmError is only for an algorithm
// that cannot run.
inline bool xor_partners_adjacent(const hypercomm::Topology& t) {
  for (int id = 0; id < t.size(); ++id)
    for (int bit = 1; bit < t.size(); bit <<= 1)
      if ((id ^ bit) < t.size() && !t.adjacent(id, id ^ bit)) return false;
  return true;
}

// 2x2 matrices modulo a prime under multiplication: associative, not commutative.
struct Mat {
  std::uint64_t a, b, c, d;
  bool operator==(const Mat&) const = default;
};
struct MatMul {
  static constexpr std::uint64_t kPrime = 1'000'003;
  Mat operator()(const Mat& x, const Mat& y) const {
    return {(x.a * y.a + x.b * y.c) % kPrime, (x.a * y.b + x.b * y.d) % kPrime,
            (x.c * y.a + x.d * y.c) % kPrime, (x.c * y.b + x.d * y.d) % kPrime};
  }
};
// A deterministic, non-commuting matrix for (vp, element).
inline Mat mat_of(int vp, std::size_t i) {
  const auto v = static_cast<std::uint64_t>(vp), k = static_cast<std::uint64_t>(i);
  return {(v * 7 + k * 3 + 1) % MatMul::kPrime, (v * 5 + 2 + k) % MatMul::kPrime,
          (k * 11 + v + 3) % MatMul::kPrime, (v * 13 + k * 17 + 4) % MatMul::kPrime};
}

inline std::string describe(const hypercomm::Topology& t, std::size_t count, int root = -1) {
  std::string s = t.name() + " count=" + std::to_string(count);
  if (root >= 0) s += " root=" + std::to_string(root);
  return s;
}

// Quick options for tests: no pinning (many test machines at once), short deadlock timeout.
inline hypercomm::Options test_options() {
  hypercomm::Options o;
  o.pinning = hypercomm::Pinning::none;
  o.deadlock_timeout = std::chrono::seconds(20);
  return o;
}

// A reduction's operator as a CollectiveMismatch names it, in the compiler's spelling of the
// types: operator_text("std::plus<void>", "long int") is that under GCC, "std::plus<> on long"
// under Clang.
inline std::string operator_text(std::string op, std::string element) {
#if defined(__clang__)
  for (std::size_t at; (at = op.find("<void>")) != std::string::npos;) op.replace(at, 6, "<>");
  if (element == "long int") element = "long";
#endif
  return op + " on " + element;
}

}  // namespace hctest
