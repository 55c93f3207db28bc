// The ring between two processes of a node (mpi/src/node_rings.hpp) on plain memory, a producer
// and a consumer thread: every record arrives once, in order, with its bytes, whatever their
// sizes, across the end of the ring and while it is full; bytes that look like a record's word,
// left where a later record starts, are never taken for one.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "node_rings.hpp"

using hypercomm::mpi::detail::BoardSlot;
using hypercomm::mpi::detail::Ring;

namespace {

// A ring's memory as NodeRings lays it out: page-aligned, zero.
struct Memory {
  explicit Memory(std::size_t capacity, std::size_t board_slots = 0)
      : words((Ring::footprint(capacity, board_slots) + 4096) / 8 + 1, 0), capacity(capacity) {}
  std::byte* base() {
    auto at = reinterpret_cast<std::uintptr_t>(words.data());
    return reinterpret_cast<std::byte*>((at + 4095) & ~std::uintptr_t{4095});
  }
  std::vector<std::uint64_t> words;
  std::size_t capacity;
};

// Record k's length and its i-th word: small numbers, each a plausible record word (length + 1)
// for a record that might start there later.
std::size_t length_of(std::uint64_t k, std::size_t most) {
  std::mt19937_64 random(k);
  switch (k % 4) {
    case 0: return 8 + 8 * (random() % 8);  // one or two lines
    case 1: return 1 + random() % 200;
    case 2: return 1 + random() % most;
    default: return most - random() % 3;
  }
}
std::uint64_t word_of(std::uint64_t k, std::size_t i) { return (k + i) % 97 + 1; }

void fill(std::span<std::byte> to, std::uint64_t k) {
  for (std::size_t i = 0; i < to.size(); i += 8) {
    const std::uint64_t w = word_of(k, i / 8);
    std::memcpy(to.data() + i, &w, std::min<std::size_t>(8, to.size() - i));
  }
}

bool holds(std::span<const std::byte> from, std::uint64_t k) {
  for (std::size_t i = 0; i < from.size(); i += 8) {
    const std::uint64_t w = word_of(k, i / 8);
    if (std::memcmp(from.data() + i, &w, std::min<std::size_t>(8, from.size() - i)) != 0)
      return false;
  }
  return true;
}

}  // namespace

TEST_CASE("one producer and one consumer: every record once, in order, with its bytes") {
  for (const std::size_t capacity : {std::size_t{4096}, std::size_t{65536}}) {
    Memory memory(capacity);
    Ring producer_side(memory.base(), capacity);
    Ring consumer_side(memory.base(), capacity);
    const std::uint64_t records = capacity == 4096 ? 200000 : 50000;
    std::atomic<bool> stop{false};  // the consumer went wrong: the ring may never empty again
    std::thread producer([&] {
      for (std::uint64_t k = 0; k < records && !stop.load();) {
        const std::size_t length = length_of(k, producer_side.most());
        const std::span<std::byte> space = producer_side.reserve(length);
        if (space.empty()) {
          std::this_thread::yield();
          continue;
        }
        REQUIRE(space.size() == length);
        fill(space, k);
        producer_side.commit();
        ++k;
      }
    });
    std::uint64_t taken = 0, wrong = 0;
    while (taken < records) {
      const std::span<const std::byte> record = consumer_side.front();
      if (record.empty()) {
        std::this_thread::yield();
        continue;
      }
      if (record.size() != length_of(taken, consumer_side.most()) || !holds(record, taken)) {
        ++wrong;
        stop = true;
        break;
      }
      consumer_side.pop();
      ++taken;
    }
    producer.join();
    REQUIRE(wrong == 0);
    CHECK(consumer_side.front().empty());
    CHECK(producer_side.empty());
  }
}

TEST_CASE("a full ring refuses a record until the consumer takes one; nothing is seen early") {
  constexpr std::size_t capacity = 4096;
  Memory memory(capacity);
  Ring ring(memory.base(), capacity);
  CHECK(ring.empty());
  CHECK(ring.front().empty());
  int written = 0;
  for (;; ++written) {
    const std::span<std::byte> space = ring.reserve(100);  // two lines with its word
    if (space.empty()) break;
    fill(space, static_cast<std::uint64_t>(written));
    CHECK(ring.front().size() == (written == 0 ? 0u : 100u));  // the first not yet committed
    ring.commit();
  }
  CHECK(written == static_cast<int>((capacity - 64) / 128));  // a line kept free
  CHECK(!ring.empty());
  CHECK(ring.reserve(ring.most()).empty());
  for (int k = 0; k < written; ++k) {
    const std::span<const std::byte> record = ring.front();
    REQUIRE(record.size() == 100);
    CHECK(holds(record, static_cast<std::uint64_t>(k)));
    ring.pop();
    const std::span<std::byte> space = ring.reserve(40);  // room again: one line
    REQUIRE(!space.empty());
    fill(space, 1000 + static_cast<std::uint64_t>(k));
    ring.commit();
  }
  for (int k = 0; k < written; ++k) {
    const std::span<const std::byte> record = ring.front();
    REQUIRE(record.size() == 40);
    CHECK(holds(record, 1000 + static_cast<std::uint64_t>(k)));
    ring.pop();
  }
  CHECK(ring.front().empty());
  CHECK(ring.empty());
}

TEST_CASE("the board's slots lie apart from the ring's records: neither overwrites the other") {
  constexpr std::size_t capacity = 4096, slots = 5;
  Memory memory(capacity, slots);
  Ring ring(memory.base(), capacity, slots);
  CHECK(Ring(memory.base(), capacity).board(0) == nullptr);  // no board: no slot
  CHECK(ring.board(slots) == nullptr);
  for (std::size_t k = 0; k < slots; ++k) {
    BoardSlot* slot = ring.board(k);
    REQUIRE(slot != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(slot) % 64 == 0);
    if (k > 0)
      CHECK(reinterpret_cast<std::byte*>(slot) - reinterpret_cast<std::byte*>(ring.board(k - 1)) ==
            64);
    std::memset(slot, 0xa5, sizeof(BoardSlot));
  }
  // Records around the ring, twice over: every one whole, the slots untouched.
  for (std::uint64_t k = 0; k < 200; ++k) {
    const std::size_t length = length_of(k, ring.most());
    const std::span<std::byte> space = ring.reserve(length);
    REQUIRE(!space.empty());
    fill(space, k);
    ring.commit();
    const std::span<const std::byte> record = ring.front();
    REQUIRE(record.size() == length);
    CHECK(holds(record, k));
    ring.pop();
  }
  for (std::size_t k = 0; k < slots; ++k) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(ring.board(k));
    bool intact = true;
    for (std::size_t i = 0; i < sizeof(BoardSlot); ++i) intact = intact && bytes[i] == 0xa5;
    CHECK(intact);
  }
}
