// Reductions whose receives fold a message as it lands (Comm::recv_fold, sendrecv_fold): an
// operator that cannot throw is applied by whichever thread delivers the message, to pieces of
// it, straight from the sender's buffer. Checked with a non-commutative noexcept operator whose
// element (24 bytes) does not divide the shared copy's chunk, at sizes that take every path: a
// meeting or the ring's slots, a hand-over, a rendezvous, a copy shared by both threads; on
// rings, meshes, lines and hypercubes, every root, against the sequential left fold. And the
// block fold itself against the element loop, however its destination overlaps its operands.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "support.hpp"

using hypercomm::Algo;
using hypercomm::Proc;
using hypercomm::Topology;

namespace {

// Upper triangular 2x2 matrices [[a, b], [0, c]] modulo a prime: associative, not commutative.
struct Upper {
  std::uint64_t a, b, c;
  bool operator==(const Upper&) const = default;
};
static_assert(sizeof(Upper) == 24);
struct UpperMul {
  static constexpr std::uint64_t kPrime = 1'000'003;
  Upper operator()(const Upper& x, const Upper& y) const noexcept {
    return {x.a * y.a % kPrime, (x.a * y.b + x.b * y.c) % kPrime, x.c * y.c % kPrime};
  }
};
static_assert(hypercomm::detail::never_throws_v<Upper, UpperMul>);
static_assert(!hypercomm::detail::never_throws_v<hctest::Mat, hctest::MatMul>);

Upper upper_of(int vp, std::size_t i) {
  const auto v = static_cast<std::uint64_t>(vp), k = static_cast<std::uint64_t>(i);
  return {(v * 7 + k * 3 + 2) % UpperMul::kPrime, (v * 5 + k + 1) % UpperMul::kPrime,
          (v * 13 + k * 11 + 3) % UpperMul::kPrime};
}

std::vector<Upper> input_of(int vp, std::size_t count, std::size_t first = 0) {
  std::vector<Upper> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = upper_of(vp, first + i);
  return v;
}

// The left fold over VP ids 0 .. p-1 of elements [first, first + count).
std::vector<Upper> oracle(int p, std::size_t count, std::size_t first = 0) {
  std::vector<Upper> acc = input_of(0, count, first);
  for (int vp = 1; vp < p; ++vp)
    for (std::size_t i = 0; i < count; ++i) acc[i] = UpperMul{}(acc[i], upper_of(vp, first + i));
  return acc;
}

// 24 B to 2.2 MB a VP: a meeting or slots, a receive folded by the receiver (< 2 KiB), a
// rendezvous (>= 2 KiB, or 64 KiB when VPs share cores), a shared copy (>= 256 KiB, or 1 MiB
// when VPs share cores, in chunks cut to whole elements).
std::vector<std::size_t> counts() {
  if (hctest::kSanitized) return {1, 12, 200, 3000, 12000, 44000};
  return {1, 12, 200, 3000, 12000, 44000, 90000};
}

std::vector<Topology> machines() {
  return {Topology::ring(2),      Topology::ring(3),     Topology::ring(5),
          Topology::linear(4),    Topology::mesh(2, 3),  Topology::hypercube(1),
          Topology::hypercube(2), Topology::hypercube(3)};
}

std::vector<Algo> reduce_algos(const Topology& t) {
  std::vector<Algo> algos{Algo::automatic, Algo::two_phase};
  if (t.kind() == Topology::Kind::hypercube) algos.push_back(Algo::hypercube);
  if (t.kind() == Topology::Kind::ring) algos.push_back(Algo::ring);
  if (t.kind() == Topology::Kind::mesh) algos.push_back(Algo::mesh);
  return algos;
}

}  // namespace

TEST_CASE("reduce with a noexcept non-commutative operator folds in id order, every root") {
  for (const Topology& t : machines()) {
    const int p = t.size();
    for (const std::size_t count : counts()) {
      for (const Algo algo : reduce_algos(t)) {
        std::vector<std::vector<Upper>> got(static_cast<std::size_t>(p));
        hypercomm::run(
            t,
            [&](Proc& vp) {
              const std::vector<Upper> in = input_of(vp.id(), count);
              for (int root = 0; root < p; ++root) {
                std::vector<Upper> out(vp.id() == root ? count : 0);
                hypercomm::reduce(vp, in, out, UpperMul{}, root, algo);
                if (vp.id() == root && out != oracle(p, count))
                  got[static_cast<std::size_t>(root)] = out;  // kept only when wrong
              }
            },
            hctest::test_options());
        for (int root = 0; root < p; ++root) {
          INFO(hctest::describe(t, count, root), " algo=", std::string(hypercomm::to_string(algo)));
          CHECK(got[static_cast<std::size_t>(root)].empty());
        }
      }
    }
  }
}

TEST_CASE("reduce_scatter and all_reduce with a noexcept non-commutative operator") {
  for (const Topology& t : machines()) {
    const int p = t.size();
    const auto vps = static_cast<std::size_t>(p);
    for (const std::size_t count : counts()) {
      const std::size_t block = (count + vps - 1) / vps;
      std::vector<int> wrong_scatter(vps), wrong_all(vps), wrong_two_phase(vps);
      hypercomm::run(
          t,
          [&](Proc& vp) {
            const auto id = static_cast<std::size_t>(vp.id());
            std::vector<Upper> blocks = input_of(vp.id(), block * vps);
            std::vector<Upper> mine(block);
            hypercomm::reduce_scatter(vp, blocks, mine, UpperMul{});
            wrong_scatter[id] = mine != oracle(p, block, id * block);
            const std::vector<Upper> in = input_of(vp.id(), count);
            std::vector<Upper> out(count);
            hypercomm::all_reduce(vp, in, out, UpperMul{});
            wrong_all[id] = out != oracle(p, count);
            std::vector<Upper> inout = in;
            hypercomm::all_reduce(vp, inout, inout, UpperMul{}, Algo::two_phase);
            wrong_two_phase[id] = inout != oracle(p, count);
          },
          hctest::test_options());
      for (std::size_t v = 0; v < vps; ++v) {
        INFO(hctest::describe(t, count), " VP ", v);
        CHECK(wrong_scatter[v] == 0);
        CHECK(wrong_all[v] == 0);
        CHECK(wrong_two_phase[v] == 0);
      }
    }
  }
}

// std::plus on double, without the noexcept: the same sums, but an operator that may throw.
struct PlusMayThrow {
  double operator()(double a, double b) const { return a + b; }
};
template <>
struct hypercomm::is_commutative<PlusMayThrow> : std::true_type {};
static_assert(!hypercomm::detail::never_throws_v<double, PlusMayThrow>);

TEST_CASE("automatic weighs a fold as it lands as the transfer alone, and only where it lands") {
  // p = 2, 1 MiB: the hypercube's one message folded as it lands (measured 20-36 us on 2 cores)
  // beats the reduce-scatter and gather's three (37-59 us); an operator that may throw is
  // received, then folded, and the combine it pays tips the choice the other way.
  const Topology t = Topology::hypercube(1);
  const std::size_t count = std::size_t{1} << 17, bytes = count * sizeof(double);
  const auto chosen = [&](bool never_throws) {
    return hypercomm::find_card(hypercomm::Collective::reduce, Algo::automatic, t,
                                hypercomm::Links::routed, bytes,
                                {.elem_size = sizeof(double), .never_throws = never_throws})
        ->algo;
  };
  CHECK(chosen(true) == Algo::hypercube);
  CHECK(chosen(false) == Algo::two_phase);
  const auto reduce_with = [&](auto op) {
    std::vector<double> got;
    const hypercomm::Report r = hypercomm::run(
        t,
        [&](Proc& vp) {
          const std::vector<double> in(count, vp.id() + 1.0);
          std::vector<double> out(vp.id() == 0 ? count : 0);
          hypercomm::reduce(vp, in, out, op, 0);
          if (vp.id() == 0) got = out;
        },
        hctest::test_options());
    CHECK(got == std::vector<double>(count, 3.0));
    return r.messages;
  };
  CHECK(reduce_with(std::plus<double>{}) == 1);  // the hypercube's one message
  CHECK(reduce_with(PlusMayThrow{}) == 3);  // two_phase: two in the reduce-scatter, one gathered
  // A reduce_scatter's last step folds as it lands, and the all-reduce pair's with it: the choice
  // of the all-reduce at p = 2 moves to two_phase from a smaller size for std::plus.
  const auto all_reduce_at = [](std::size_t b, bool never_throws) {
    return hypercomm::find_card(hypercomm::Collective::all_reduce, Algo::automatic,
                                Topology::hypercube(1), hypercomm::Links::routed, b,
                                {.elem_size = 8, .never_throws = never_throws})
        ->algo;
  };
  CHECK(all_reduce_at(12 * 1024, true) == Algo::two_phase);
  CHECK(all_reduce_at(12 * 1024, false) == Algo::hypercube);
}

namespace {

// The sequential element loop a block fold is defined as: dst[i] = op(left[i], right[i]) for
// i = 0, 1, ..., count - 1 in turn, each read after the writes before it.
template <class T, class Op>
void fold_one_by_one(Op op, std::byte* dst, const std::byte* left, const std::byte* right,
                     std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    T a, b;
    std::memcpy(&a, left + i * sizeof(T), sizeof(T));
    std::memcpy(&b, right + i * sizeof(T), sizeof(T));
    const T r = op(a, b);
    std::memcpy(dst + i * sizeof(T), &r, sizeof(T));
  }
}

// Every way a block fold's destination can lie against its operands (the library folds in
// place, into the left or the right operand, and apart), at lengths around the vector widths and
// at offsets that are not multiples of the element's alignment.
template <class T, class Op>
void check_block_fold(Op op, T (*value_of)(std::size_t)) {
  const hypercomm::detail::Reducer reducer = hypercomm::detail::make_reducer<T>(op);
  constexpr std::size_t size = sizeof(T);
  for (const std::size_t count : {0, 1, 3, 4, 7, 16, 33, 100, 1027}) {
    const std::size_t pool_bytes = 4 * (count + 2) * size + 3;
    const auto fill = [&](std::vector<std::byte>& bytes) {
      for (std::size_t i = 0; i * size + size <= bytes.size(); ++i) {
        const T v = value_of(i);
        std::memcpy(bytes.data() + i * size, &v, size);
      }
    };
    // Offsets in bytes of dst, left and right within each buffer of pool_bytes.
    const std::size_t far = 2 * (count + 2) * size;
    struct Layout {
      const char* name;
      std::size_t dst, left, right;
    };
    for (const std::size_t skew : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
      const Layout layouts[] = {
          {"apart", skew, far + skew, far / 2 + skew},
          {"into left", skew, skew, far + skew},
          {"into right", far + skew, skew, far + skew},
          {"one buffer", skew, skew, skew},
          {"left and right one buffer", far + skew, skew, skew},
          {"dst one element past left", size + skew, skew, far + skew},
          {"dst one element before right", far + skew, skew, far + size + skew},
      };
      for (const Layout& at : layouts) {
        CAPTURE(count);
        CAPTURE(skew);
        CAPTURE(at.name);
        std::vector<std::byte> got(pool_bytes), want(pool_bytes);
        fill(got);
        fill(want);
        reducer(got.data() + at.dst, got.data() + at.left, got.data() + at.right, count * size);
        fold_one_by_one<T>(op, want.data() + at.dst, want.data() + at.left, want.data() + at.right,
                           count);
        CHECK(got == want);
      }
    }
  }
}

}  // namespace

TEST_CASE("a block fold is the element loop however its destination lies against its operands") {
  check_block_fold<float>(std::plus<>{},
                          [](std::size_t i) { return static_cast<float>(i % 97) * 0.25f + 1; });
  check_block_fold<std::uint32_t>(std::minus<>{}, [](std::size_t i) {
    return static_cast<std::uint32_t>(i * 7919);  // unsigned: the skewed bytes may wrap
  });
  check_block_fold<double>(hypercomm::max<>{},
                           [](std::size_t i) { return static_cast<double>((i * 37) % 101); });
  check_block_fold<Upper>(UpperMul{}, [](std::size_t i) { return upper_of(3, i); });
}
