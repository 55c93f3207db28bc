// The lock-free channel on its own: FIFO, no loss, no duplication, segments when the ring is full,
// hand-over.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "channel.hpp"
#include "fabric.hpp"
#include "futex.hpp"
#include "support.hpp"

using hypercomm::MessageTag;
using hypercomm::detail::Channel;
using hypercomm::detail::Envelope;
using hypercomm::detail::kHandOverBytes;
using hypercomm::detail::kInlineBytes;
using hypercomm::detail::kSharedCopyBytes;
using hypercomm::detail::kSharedCopyChunk;

namespace {

// Message i has a size drawn from a fixed generator and carries i in its tag and payload.
std::size_t size_of_message(std::uint64_t i) {
  std::mt19937_64 g(i * 0x9E3779B97F4A7C15ull);
  const auto r = g() % 1000;
  if (r < 700) return g() % (kInlineBytes + 1);       // inline
  if (r < 950) return kInlineBytes + 1 + g() % 4000;  // continued in slots, or a block
  if (r < 995) return 8 + g() % 64;
  return kHandOverBytes + g() % 70000;  // large: may be handed over
}

void fill_payload(std::vector<std::byte>& buf, std::uint64_t i) {
  for (std::size_t k = 0; k < buf.size(); ++k)
    buf[k] = static_cast<std::byte>((i * 131 + k * 7) & 0xff);
}

bool payload_ok(const std::vector<std::byte>& buf, std::uint64_t i) {
  for (std::size_t k = 0; k < buf.size(); ++k)
    if (buf[k] != static_cast<std::byte>((i * 131 + k * 7) & 0xff)) return false;
  return true;
}

Envelope envelope_of(std::uint64_t i, std::size_t size) {
  Envelope e;
  e.size = size;
  e.arrival = static_cast<double>(i);
  e.tag.count = i;
  return e;
}

}  // namespace

TEST_CASE(
    "a channel delivers 10^6 mixed-size messages in order, none lost or duplicated (10^5 under "
    "sanitizers)") {
  for (std::size_t capacity : {2u, 8u, 64u}) {
    CAPTURE(capacity);
    Channel channel(capacity);
    constexpr std::uint64_t kMessages = hctest::kSanitized ? 100'000 : 1'000'000;
    std::thread producer([&] {
      std::vector<std::byte> buf;
      for (std::uint64_t i = 0; i < kMessages; ++i) {
        buf.resize(size_of_message(i));
        fill_payload(buf, i);
        const Envelope e = envelope_of(i, buf.size());
        if (buf.size() < kHandOverBytes || !channel.try_hand_over(e, buf)) channel.push(e, buf);
        if (i % 4096 == 0) std::this_thread::yield();  // let the ring fill and move on
      }
    });
    std::uint64_t bad_order = 0, bad_payload = 0;
    std::vector<std::byte> buf;
    for (std::uint64_t i = 0; i < kMessages; ++i) {
      const std::size_t size = size_of_message(i);
      buf.assign(size, std::byte{0});
      bool received = false;
      if (size >= kHandOverBytes && channel.front() == nullptr) {
        MessageTag tag;
        tag.count = i;
        channel.post(buf, tag, nullptr, false);
        for (;;) {
          if (channel.post_done()) {
            if (channel.take_posted_arrival() != static_cast<double>(i)) ++bad_order;
            received = true;
            break;
          }
          if (channel.front() != nullptr) {
            if (!channel.cancel_post()) {
              while (!channel.post_done()) hypercomm::detail::cpu_relax();
              if (channel.take_posted_arrival() != static_cast<double>(i)) ++bad_order;
              received = true;
            }
            break;
          }
          hypercomm::detail::cpu_relax();
        }
      }
      if (!received) {
        const Envelope* e = nullptr;
        while ((e = channel.front()) == nullptr) hypercomm::detail::cpu_relax();
        if (e->tag.count != i || e->size != size) {
          ++bad_order;
          break;
        }
        channel.take_front(buf);
      }
      if (!payload_ok(buf, i)) ++bad_payload;
    }
    producer.join();
    CHECK(bad_order == 0);
    CHECK(bad_payload == 0);
    CHECK(channel.front() == nullptr);  // nothing duplicated
  }
}

TEST_CASE("a full ring goes on in new segments, in order, and never blocks the producer") {
  Channel channel(4);
  std::vector<std::byte> buf(16);
  for (std::uint64_t i = 0; i < 1000; ++i) {  // no consumer yet: 249 more segments
    fill_payload(buf, i);
    channel.push(envelope_of(i, buf.size()), buf);
  }
  for (std::uint64_t i = 0; i < 500; ++i) {
    const Envelope* e = channel.front();
    REQUIRE(e != nullptr);
    CHECK(e->tag.count == i);
    channel.take_front(buf);
    CHECK(payload_ok(buf, i));
  }
  for (std::uint64_t i = 1000; i < 1100; ++i) {  // still in order behind the others
    fill_payload(buf, i);
    channel.push(envelope_of(i, buf.size()), buf);
  }
  for (std::uint64_t i = 500; i < 1100; ++i) {
    const Envelope* e = channel.front();
    REQUIRE(e != nullptr);
    CHECK(e->tag.count == i);
    channel.take_front(buf);
    CHECK(payload_ok(buf, i));
  }
  CHECK(channel.front() == nullptr);
  // On in the last segment once the others are emptied.
  channel.push(envelope_of(7, 0), {});
  REQUIRE(channel.front() != nullptr);
  CHECK(channel.front()->tag.count == 7);
}

TEST_CASE("a message continued over consecutive slots wraps the ring and keeps its bytes") {
  using hypercomm::detail::kContinuationBytes;
  // Every size around the slot boundaries, through rings where a message takes from one slot
  // to half the ring (12 slots of the 64-slot ring, at most kMostContinuedSlots in the 256-slot
  // one: longer messages go in blocks). The payload is made of little-endian ring positions (0, 1,
  // 2, ...), what a continuation slot's sequence word would hold if the consumer looked at it: it
  // must not.
  for (std::size_t capacity : {4u, 8u, 16u, 64u, 256u}) {
    CAPTURE(capacity);
    Channel channel(capacity);
    std::uint64_t i = 0;
    for (std::size_t size = 0; size <= kInlineBytes + 40 * kContinuationBytes; size += 7) {
      CAPTURE(size);
      std::vector<std::byte> out(size), in(size);
      for (std::size_t k = 0; k < size; ++k)
        out[k] = static_cast<std::byte>(k % 8 == 0 ? (k / 8 + i) & 0xff : 0);
      // Two in flight, so the second starts where the first ends (and wraps sooner or later).
      channel.push(envelope_of(i, size), out);
      channel.push(envelope_of(i + 1, size), out);
      for (int twice = 0; twice < 2; ++twice) {
        const Envelope* e = channel.front();
        REQUIRE(e != nullptr);
        CHECK(e->tag.count == i + static_cast<std::uint64_t>(twice));
        REQUIRE(e->size == size);
        channel.take_front(in);
        CHECK(in == out);
      }
      CHECK(channel.front() == nullptr);
      i += 2;
    }
  }
}

TEST_CASE("draining a ring of continued, inline and block messages leaves it working") {
  Channel channel(16);
  std::vector<std::byte> buf;
  for (std::uint64_t i = 0; i < 40; ++i) {  // fills the ring, then more segments
    buf.resize((i * 97) % 2500);
    fill_payload(buf, i);
    channel.push(envelope_of(i, buf.size()), buf);
  }
  const auto discarded = channel.drain();
  REQUIRE(discarded.size() == 40);
  for (std::uint64_t i = 0; i < 40; ++i) CHECK(discarded[i].tag.count == i);
  CHECK(channel.front() == nullptr);
  for (std::uint64_t i = 0; i < 100; ++i) {
    buf.resize((i * 389) % 3000);
    fill_payload(buf, i);
    channel.push(envelope_of(i, buf.size()), buf);
    const Envelope* e = channel.front();
    REQUIRE(e != nullptr);
    CHECK(e->tag.count == i);
    std::vector<std::byte> in(buf.size());
    channel.take_front(in);
    CHECK(payload_ok(in, i));
  }
}

TEST_CASE("a receiver falling behind and catching up, again and again: segments recycled") {
  // Bursts of every length against a small ring: the producer leaves rings for recycled ones
  // (or new ones when none is back yet), the consumer follows; nothing lost, all in order.
  Channel channel(8);
  std::uint64_t sent = 0, taken = 0;
  std::vector<std::byte> buf, in;
  for (std::uint64_t burst = 1; burst <= 200; ++burst) {
    for (std::uint64_t k = 0; k < burst % 37 + 1; ++k, ++sent) {
      buf.resize((sent * 53) % 500);
      fill_payload(buf, sent);
      channel.push(envelope_of(sent, buf.size()), buf);
    }
    const std::uint64_t take = burst % 5 == 0 ? sent : (sent + taken) / 2;  // sometimes lag
    for (; taken < take; ++taken) {
      const Envelope* e = channel.front();
      REQUIRE(e != nullptr);
      REQUIRE(e->tag.count == taken);
      in.resize(e->size);
      channel.take_front(in);
      CHECK(payload_ok(in, taken));
    }
  }
  CHECK(channel.drain().size() == sent - taken);
  CHECK(channel.front() == nullptr);
}

TEST_CASE("capacity edge cases: a one-slot ring, empty and exactly-inline messages") {
  Channel channel(1);
  std::vector<std::byte> empty, exact(kInlineBytes), over(kInlineBytes + 1);
  fill_payload(exact, 1);
  fill_payload(over, 2);
  channel.push(envelope_of(0, 0), empty);
  channel.push(envelope_of(1, exact.size()), exact);
  channel.push(envelope_of(2, over.size()), over);
  std::vector<std::byte> a, b(exact.size()), c(over.size());
  REQUIRE(channel.front()->tag.count == 0);
  channel.take_front(a);
  REQUIRE(channel.front()->tag.count == 1);
  channel.take_front(b);
  CHECK(payload_ok(b, 1));
  REQUIRE(channel.front()->tag.count == 2);
  channel.take_front(c);
  CHECK(payload_ok(c, 2));
  CHECK(channel.front() == nullptr);
}

TEST_CASE(
    "large hand-overs copied by both sides arrive whole, and the sender's buffer is free after") {
  // Sizes at and around the shared copy's threshold and chunk: a last chunk of one byte, of a
  // chunk less one, several chunks. The sender overwrites its buffer as soon as the hand-over
  // returns: a receiver still copying from it would take the wrong bytes. Every other message
  // carries side work (a scatter root's own block), which runs once: in the channel while the
  // receiver copies a shared copy, else left to the sender.
  const std::vector<std::size_t> sizes{kSharedCopyBytes, kSharedCopyBytes + 1,
                                       kSharedCopyBytes + kSharedCopyChunk - 1,
                                       3 * kSharedCopyBytes + 17, kSharedCopyBytes - 1};
  constexpr std::uint64_t kMessages = hctest::kSanitized ? 100 : 1500;
  Channel channel(8);
  std::uint64_t side_work = 0, side_work_in_channel = 0, side_work_small = 0;
  std::thread producer([&] {
    std::vector<std::byte> buf;
    for (std::uint64_t i = 0; i < kMessages; ++i) {
      buf.resize(sizes[i % sizes.size()]);
      fill_payload(buf, i);
      const Envelope e = envelope_of(i, buf.size());
      // Wait for the post (most of the time), as a large sender does.
      for (int spin = 0; spin < 100000 && !channel.receiver_posted(); ++spin)
        hypercomm::detail::cpu_relax();
      if (i % 2 == 0) {
        if (!channel.try_hand_over(e, buf)) channel.push(e, buf);
      } else {
        hypercomm::detail::SideWork work{
            [](void* count) noexcept { ++*static_cast<std::uint64_t*>(count); }, &side_work};
        const bool handed = channel.try_hand_over_during(e, buf, work);
        if (work.run == nullptr) {
          ++side_work_in_channel;
          side_work_small += buf.size() < kSharedCopyBytes || !handed;
        }
        if (!handed) channel.push(e, buf);
        work();  // what the channel left
        work();  // and never twice
      }
      std::fill(buf.rbegin(), buf.rend(), std::byte{0xee});  // the last chunks first
    }
  });
  std::uint64_t bad_order = 0, bad_payload = 0, handed = 0;
  std::vector<std::byte> buf;
  for (std::uint64_t i = 0; i < kMessages; ++i) {
    buf.assign(sizes[i % sizes.size()], std::byte{0});
    bool received = false;
    if (channel.front() == nullptr) {
      MessageTag tag;
      tag.count = i;
      channel.post(buf, tag, nullptr, false);
      for (std::uint64_t polls = 0;; ++polls) {
        if (i % 3 != 0) channel.help_post();  // every third receiver leaves the copy to the sender
        if (channel.post_done()) {
          bad_order += channel.take_posted_arrival() != static_cast<double>(i);
          received = true;
          ++handed;
          break;
        }
        // Now and then a receiver gives up waiting (a message queued, or a wait that failed).
        if (channel.front() != nullptr || (i % 7 == 0 && polls == 50)) {
          if (!channel.cancel_post()) {
            while (!channel.post_done()) hypercomm::detail::cpu_relax();
            bad_order += channel.take_posted_arrival() != static_cast<double>(i);
            received = true;
            ++handed;
          }
          break;
        }
        hypercomm::detail::cpu_relax();
      }
    }
    if (!received) {
      const Envelope* e = nullptr;
      while ((e = channel.front()) == nullptr) hypercomm::detail::cpu_relax();
      if (e->tag.count != i || e->size != buf.size()) {
        ++bad_order;
        break;
      }
      channel.take_front(buf);
    }
    bad_payload += !payload_ok(buf, i);
  }
  producer.join();
  CHECK(bad_order == 0);
  CHECK(bad_payload == 0);
  CHECK(handed > 0);  // the shared copy ran
  CHECK(channel.front() == nullptr);
  CHECK(side_work == kMessages / 2);
  CHECK(side_work_in_channel > 0);
  CHECK(side_work_small == 0);  // only a shared copy runs it
}

TEST_CASE("a posted receive takes a matching message directly and refuses others") {
  Channel channel(8);
  std::vector<std::byte> payload(kHandOverBytes * 2), into(payload.size());
  fill_payload(payload, 5);
  MessageTag tag;
  tag.count = 5;
  channel.post(into, tag, nullptr, false);
  Envelope wrong_tag = envelope_of(6, payload.size());
  CHECK_FALSE(channel.try_hand_over(wrong_tag, payload));  // a mismatch is left to the queue
  Envelope wrong_size = envelope_of(5, payload.size() - 1);
  CHECK_FALSE(channel.try_hand_over(wrong_size, std::span(payload).first(payload.size() - 1)));
  CHECK(channel.try_hand_over(envelope_of(5, payload.size()), payload));
  CHECK(channel.post_done());
  CHECK(channel.take_posted_arrival() == 5.0);
  CHECK(payload_ok(into, 5));
  // Not while older messages wait in the ring (FIFO).
  channel.push(envelope_of(1, 8), std::span(payload).first(8));
  channel.post(into, tag, nullptr, false);
  CHECK_FALSE(channel.try_hand_over(envelope_of(5, payload.size()), payload));
  CHECK(channel.cancel_post());
  CHECK(channel.drain().size() == 1);
}

TEST_CASE("a receiver keeps up while it has taken every message and its last post copies") {
  Channel channel(8);
  std::vector<std::byte> payload(kHandOverBytes * 4), into(payload.size());
  fill_payload(payload, 3);
  MessageTag tag;
  CHECK(channel.receiver_keeps_up());  // nothing sent yet
  channel.push(envelope_of(1, 64), std::span(payload).first(64));
  channel.push(envelope_of(2, payload.size()), payload);
  CHECK_FALSE(channel.receiver_keeps_up());  // two messages queued
  std::vector<std::byte> small(64);
  REQUIRE(channel.front() != nullptr);
  channel.take_front(small);
  CHECK_FALSE(channel.receiver_keeps_up());  // one still queued
  REQUIRE(channel.front() != nullptr);
  channel.take_front(into);
  CHECK(channel.receiver_keeps_up());
  CHECK(payload_ok(into, 3));
  // A receive that combines what it gets: a sender should not wait for its post.
  channel.post(into, tag, nullptr, true);
  CHECK_FALSE(channel.receiver_keeps_up());
  CHECK(channel.cancel_post());
  CHECK_FALSE(channel.receiver_keeps_up());  // until a post that copies
  tag.count = 4;
  channel.post(into, tag, nullptr, false);
  CHECK(channel.receiver_keeps_up());
  fill_payload(payload, 4);
  CHECK(channel.try_hand_over(envelope_of(4, payload.size()), payload));
  CHECK(channel.post_done());
  CHECK(channel.take_posted_arrival() == 4.0);
  CHECK(payload_ok(into, 4));
  CHECK(channel.receiver_keeps_up());  // a hand-over leaves nothing queued
}

TEST_CASE("receiver_within counts the slots of messages the receiver has yet to take") {
  Channel channel(16);
  std::vector<std::byte> block(hypercomm::detail::kBoundedQueueBytes), into(block.size());
  std::vector<std::byte> small(8);
  CHECK(channel.receiver_within(1));  // nothing queued
  for (std::uint64_t i = 1; i <= 3; ++i) channel.push(envelope_of(i, block.size()), block);
  CHECK(channel.receiver_within(4));  // three blocks: a slot each
  CHECK_FALSE(channel.receiver_within(3));
  // Past the ring's end, in a new segment: still counted.
  for (std::uint64_t i = 4; i <= 20; ++i) channel.push(envelope_of(i, small.size()), small);
  CHECK_FALSE(channel.receiver_within(20));
  CHECK(channel.receiver_within(21));
  for (int k = 0; k < 3; ++k) {
    REQUIRE(channel.front() != nullptr);
    channel.take_front(into);
  }
  CHECK(channel.receiver_within(18));
  CHECK_FALSE(channel.receiver_within(17));
  CHECK(channel.drain().size() == 17);
  CHECK(channel.receiver_within(1));
}

namespace {
// A fold that records, per byte of the message, how many pieces covered it and what they
// carried, and whether every piece ended on one of its elements (granule bytes).
struct Recorder {
  std::vector<std::byte> got;
  std::vector<std::atomic<int>> covered;
  std::size_t granule;
  std::atomic<bool> whole_elements{true};
  std::atomic<int> pieces{0};
  std::atomic<std::thread::id> first_thread{};

  Recorder(std::size_t size, std::size_t g) : got(size), covered(size), granule(g) {}
  static void apply(const void* context, std::size_t offset, const std::byte* bytes,
                    std::size_t n) noexcept {
    auto& r = *const_cast<Recorder*>(static_cast<const Recorder*>(context));
    if (offset % r.granule != 0 || (n % r.granule != 0 && offset + n != r.got.size()))
      r.whole_elements = false;
    std::memcpy(r.got.data() + offset, bytes, n);
    for (std::size_t k = offset; k < offset + n; ++k) r.covered[k].fetch_add(1);
    if (r.pieces.fetch_add(1) == 0) r.first_thread = std::this_thread::get_id();
  }
  [[nodiscard]] hypercomm::detail::Fold fold() const noexcept { return {&apply, this, granule}; }
  [[nodiscard]] bool each_byte_once() const {
    return std::all_of(covered.begin(), covered.end(), [](const auto& c) { return c == 1; });
  }
};
}  // namespace

TEST_CASE("a folding post hands the message's pieces to the fold, whole elements, each once") {
  // Small (one piece, on the sender's thread), shared-copy sizes whose chunks must be cut to an
  // element of 12 bytes (not a divisor of the chunk), and a message queued before the post,
  // which the channel copies as it is (the port folds it).
  for (const std::size_t size : {std::size_t{kHandOverBytes} * 12, kSharedCopyBytes + 12 * 7,
                                 3 * kSharedCopyBytes + 12 * 5}) {
    CAPTURE(size);
    Channel channel(8);
    std::vector<std::byte> payload(size), scratch(size);
    fill_payload(payload, 9);
    Recorder recorder(size, 12);
    const hypercomm::detail::Fold fold = recorder.fold();
    MessageTag tag;
    tag.count = 9;
    channel.post(scratch, tag, &fold, true);
    std::thread sender([&] { CHECK(channel.try_hand_over(envelope_of(9, size), payload)); });
    while (!channel.post_done()) channel.help_post();  // the receiver takes chunks too
    sender.join();
    CHECK(channel.take_posted_arrival() == 9.0);
    CHECK(recorder.each_byte_once());
    CHECK(recorder.whole_elements);
    CHECK(payload_ok(recorder.got, 9));
    if (size < kSharedCopyBytes) {
      CHECK(recorder.pieces == 1);
      CHECK(recorder.first_thread.load() != std::this_thread::get_id());  // the sender folded
    } else {
      CHECK(recorder.pieces > 1);
    }
  }
  // A message written into the post by the Remote's fill is folded from the scratch it lands in.
  {
    Channel channel(8);
    std::vector<std::byte> payload(1200), scratch(payload.size());
    fill_payload(payload, 4);
    Recorder recorder(payload.size(), 8);
    const hypercomm::detail::Fold fold = recorder.fold();
    MessageTag tag;
    tag.count = 4;
    channel.post(scratch, tag, &fold, true);
    auto write = [](void* context, std::span<std::byte> to) {
      const auto& from = *static_cast<std::vector<std::byte>*>(context);
      std::memcpy(to.data(), from.data(), to.size());
    };
    CHECK(channel.try_hand_over_with(envelope_of(4, payload.size()), write, &payload));
    CHECK(channel.post_done());
    (void)channel.take_posted_arrival();
    CHECK(recorder.each_byte_once());
    CHECK(payload_ok(recorder.got, 4));
  }
  // Queued first: the post is not taken, the queue's copy is plain.
  {
    Channel channel(8);
    std::vector<std::byte> payload(4096), into(payload.size());
    fill_payload(payload, 3);
    channel.push(envelope_of(3, payload.size()), payload);
    Recorder recorder(payload.size(), 4);
    const hypercomm::detail::Fold fold = recorder.fold();
    MessageTag tag;
    tag.count = 3;
    channel.post(into, tag, &fold, true);
    CHECK(channel.cancel_post());
    channel.take_front(into);
    CHECK(payload_ok(into, 3));
    CHECK(recorder.pieces == 0);
  }
}

TEST_CASE("a large send waits along a chain of waits for receivers, never round a cycle") {
  using hypercomm::detail::closes_wait_cycle;
  using hypercomm::detail::VpState;
  std::vector<VpState> states(6);
  const auto lends_to = [&](int vp, int dest) {  // vp waits for dest to post its receive
    states[static_cast<std::size_t>(vp)].lending.store(static_cast<std::uint32_t>(dest) + 1);
  };
  // A reduce's leaf (3) sending to its parent (2), which waits for the root (0) to post: a
  // chain that ends at a VP not waiting so, whatever else it does (blocked in a receive here).
  lends_to(2, 0);
  states[0].waiting_for.store(1);
  states[0].status.store(hypercomm::detail::kBlocked);
  CHECK_FALSE(closes_wait_cycle(states, 3, 2));
  CHECK_FALSE(closes_wait_cycle(states, 3, 0));
  // Waits round a ring, 0 -> 1 -> 2 and 2 about to wait for 0: the last to wait sees the cycle;
  // waiting for another VP instead closes none.
  lends_to(0, 1);
  lends_to(1, 2);
  CHECK(closes_wait_cycle(states, 2, 0));
  CHECK(closes_wait_cycle(states, 2, 1));
  CHECK_FALSE(closes_wait_cycle(states, 2, 3));
  // A cycle without me (4 and 5 wait for each other) is theirs to break: 3 waits on.
  states = std::vector<VpState>(6);
  lends_to(4, 5);
  lends_to(5, 4);
  CHECK_FALSE(closes_wait_cycle(states, 3, 4));
  CHECK(closes_wait_cycle(states, 4, 5));
  // Two VPs sending to each other at once: whichever reads second sees the other's wait.
  states = std::vector<VpState>(2);
  lends_to(0, 1);
  CHECK(closes_wait_cycle(states, 1, 0));
}
