// Random traffic in one process (tests/traffic.hpp): point-to-point messages over the sizes
// where the channel changes how it carries one (inline in a slot, continued over the ring's
// slots, a block; handed straight to a receiver already waiting, a sender waiting for its
// receiver to post, the copy shared by both VPs), in permutations, bursts on one channel, many
// VPs to one, exchanges and collectives, with receivers early and late, on 2 VPs and on more VPs
// than cores, on the whole machine and on groups; and runs that fail amid it. Every byte must
// arrive, in order; nothing may hang.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "channel.hpp"
#include "support.hpp"
#include "traffic.hpp"

namespace hc = hypercomm;

namespace {

// In longs: each threshold of channel.hpp, the size at it and the size just over it.
std::vector<std::size_t> channel_sizes() {
  namespace d = hc::detail;
  const auto longs = [](std::size_t bytes) { return bytes / sizeof(long); };
  // The longest message that the ring's slots take, continued over half of a ring of 64.
  const std::size_t continued = d::kInlineBytes + 31 * d::kContinuationBytes;
  std::vector<std::size_t> sizes{1, 2, 1, 3};
  for (const std::size_t bytes :
       {d::kInlineBytes, d::kHandOverBytes, d::kKeepingUpRendezvousBytes,
        d::kOneWayKeepingUpRendezvousBytes, d::kRendezvousBytes, d::kOneWayRendezvousBytesLongRings,
        d::kBoundedQueueBytes, continued, d::kRendezvousBytesShared, d::kSharedCopyChunk,
        d::kSharedCopyBytes, d::kSharedCopyBytesShared}) {
    sizes.push_back(longs(bytes));
    sizes.push_back(longs(bytes) + 1);
  }
  sizes.push_back(longs(d::kSharedCopyBytesShared + 2 * d::kSharedCopyChunk) + 3);
  return sizes;
}

// Every VP's failed checks, gathered for the test thread (doctest's asserts are its own).
struct Failures {
  std::atomic<int> count{0};
  std::mutex mutex;
  std::string first;
  void operator()(bool ok, const char* what) {
    if (ok) return;
    if (count.fetch_add(1) == 0) {
      const std::lock_guard lock(mutex);
      first = what;
    }
  }
};

}  // namespace

TEST_CASE("random traffic in one process: every message arrives whole and in order") {
  const std::vector<std::size_t> sizes = channel_sizes();
  const int steps = hctest::kSanitized ? 30 : 120;
  for (const char* shape : {"hypercube:1", "hypercube:3", "hypercube:4", "ring:6", "mesh:3x3"}) {
    const hc::Topology t = hc::Topology::parse(shape);
    hc::Machine machine(t);
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      CAPTURE(shape);
      CAPTURE(seed);
      Failures failures;
      (void)machine.run(
          [&](hc::Proc& vp) { hctest::traffic(vp, sizes, seed, steps, std::ref(failures)); });
      CHECK_MESSAGE(failures.count.load() == 0, failures.first);
    }
  }
}

TEST_CASE("random traffic on groups at once: rows, columns, split groups") {
  const std::vector<std::size_t> sizes = channel_sizes();
  hc::Machine machine(hc::Topology::mesh(3, 4));
  Failures failures;
  (void)machine.run([&](hc::Proc& vp) {
    auto check = std::ref(failures);
    hc::Group row = vp.row(), column = vp.column();
    hctest::traffic(row, sizes, 21 + static_cast<std::uint64_t>(row.vp(0)), 30, check);
    hctest::traffic(column, sizes, 31 + static_cast<std::uint64_t>(column.vp(0)), 30, check);
    // Ranked against the VP ids, two groups of VPs that are neighbours in both.
    hc::Group half = hc::split(vp.world(), vp.id() % 2, -vp.id());
    hctest::traffic(half, sizes, 41 + static_cast<std::uint64_t>(vp.id() % 2), 30, check);
  });
  CHECK_MESSAGE(failures.count.load() == 0, failures.first);
}

TEST_CASE("a VP that fails amid random traffic ends the run, and the machine runs on") {
  const std::vector<std::size_t> sizes = channel_sizes();
  for (const char* shape : {"hypercube:1", "hypercube:4", "ring:6"}) {
    const hc::Topology t = hc::Topology::parse(shape);
    hc::Machine machine(t);
    for (std::uint64_t seed = 5; seed < 9; ++seed) {
      const int thrower = static_cast<int>(seed * 7 % static_cast<std::uint64_t>(t.size()));
      const int at = static_cast<int>(seed % 6);
      CAPTURE(shape);
      CAPTURE(seed);
      Failures failures;
      CHECK_THROWS_WITH_AS(
          (void)machine.run([&](hc::Proc& vp) {
            hctest::traffic(vp, sizes, seed, 8, std::ref(failures), thrower, at);
          }),
          doctest::Contains(("injected failure in VP " + std::to_string(thrower)).c_str()),
          std::runtime_error);
      CHECK_MESSAGE(failures.count.load() == 0, failures.first);
      const hc::Report r = machine.run([](hc::Proc& vp) { hc::barrier(vp); });
      CHECK(r.clocks.size() == static_cast<std::size_t>(t.size()));
    }
  }
}
