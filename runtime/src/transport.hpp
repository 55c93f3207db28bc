// How a message moves from one VP to another (DESIGN.md, "The layers": Proc -> call port ->
// transport interface). A Link is one direction between two VPs (src -> dst), in the manner of
// Gloo's Pair: the sender pushes messages or hands one straight to a receiver that waits for it,
// the receiver reads the next one or posts its buffer and withdraws the post. The port
// (proc.cpp) runs the cost model, the checks and the waiting above it and never looks inside.
//
// Two transports implement it, chosen when a Machine starts:
//   shared_memory  the lock-free channel (channel.hpp): one cache line per small message, a
//                  large one copied once, straight into a posted buffer;
//   locked         a mutex and a queue per link, nothing else: no hand-over, no ring. A test
//                  transport, deliberately simple, that the whole collective suite also runs on
//                  (HYPERCOMM_TRANSPORT=locked; tests/CMakeLists.txt), to keep the seam real.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "message.hpp"

namespace hypercomm::detail {

// What travels in front of every payload.
struct Envelope {
  std::uint64_t size = 0;  // payload bytes
  double arrival = 0;      // model time at which the message reaches the receiver
  MessageTag tag{};
};
static_assert(sizeof(Envelope) == 32);

// Work of a sender's own that it may do while its receiver copies a large message (a scatter
// root's own block): whoever runs it clears `run`.
struct SideWork {
  void (*run)(void* context) noexcept = nullptr;
  void* context = nullptr;
  void operator()() noexcept {
    if (run == nullptr) return;
    auto* const work = std::exchange(run, nullptr);
    work(context);
  }
};

class Link {
 public:
  Link() = default;
  virtual ~Link() = default;
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // Sender side.
  // Copies the message straight into the receiver's posted buffer when the receiver waits for
  // exactly this message and nothing is queued before it; false (nothing done) otherwise.
  virtual bool try_hand_over(const Envelope& envelope,
                             std::span<const std::byte> payload) noexcept = 0;
  // try_hand_over, doing `work` once the receiver can copy on its own; this default does not
  // (the caller does what is left).
  virtual bool try_hand_over_during(const Envelope& envelope, std::span<const std::byte> payload,
                                    SideWork& /*work*/) noexcept {
    return try_hand_over(envelope, payload);
  }
  // The same, the payload written by fill(context, buffer) (a message from another process that
  // is received straight into the buffer).
  using Fill = void (*)(void* context, std::span<std::byte> buffer);
  virtual bool try_hand_over_with(const Envelope& envelope, Fill fill, void* context) = 0;
  // Whether the receiver has posted a buffer (a large sender may wait a while for that).
  [[nodiscard]] virtual bool receiver_posted() const noexcept = 0;
  // Whether the receiver has taken every message sent so far and its last post was for a
  // message to copy, not to combine with data of its own: such a receiver posts again soon, and
  // has little to do once the message is there, so a sender may wait a while for its post.
  [[nodiscard]] virtual bool receiver_keeps_up() const noexcept = 0;
  // Whether fewer than `slots` of the queue's slots hold messages the receiver has yet to take
  // (a message kept in a block takes one): a sender that queues rather than waits for its
  // receiver runs ahead that far at most (Port::post_send). False where a link cannot tell.
  [[nodiscard]] virtual bool receiver_within(std::size_t /*slots*/) const noexcept { return false; }
  // Queues the message; never waits for buffer space.
  virtual void push(const Envelope& envelope, std::span<const std::byte> payload) = 0;
  // The same, the payload (envelope.size bytes) written by fill(context, buffer) into the
  // queue's own memory (a message from another process read straight onto the queue).
  virtual void push_with(const Envelope& envelope, Fill fill, void* context) = 0;

  // Receiver side.
  // The next queued message's envelope, or nullptr; take_front copies its payload to dest (of
  // the envelope's size) and drops it.
  [[nodiscard]] virtual const Envelope* front() noexcept = 0;
  virtual void take_front(std::span<std::byte> dest) noexcept = 0;
  // Offers buffer for the next message, which must carry tag; a sender may then fill it
  // (post_done, then take_posted_arrival: its arrival time, and the post is cleared). A post is
  // withdrawn by cancel_post, which fails (false) when a sender has already claimed it: its copy
  // is then about to complete. With a fold, a sender filling the post folds the message into the
  // receiver's data instead (fold->apply over its pieces; buffer, of the message's size, is then
  // scratch the transport may write); a message taken by take_front is copied as it is.
  // `combined`: the receiver combines the message with data of its own, as it lands (`fold`)
  // or after it is received (a scan's, or a fold below kFoldLandingBytes): receiver_keeps_up.
  virtual void post(std::span<std::byte> buffer, const MessageTag& tag, const Fold* fold,
                    bool combined) noexcept = 0;
  [[nodiscard]] virtual bool post_done() const noexcept = 0;
  [[nodiscard]] virtual double take_posted_arrival() noexcept = 0;
  [[nodiscard]] virtual bool cancel_post() noexcept = 0;
  // The receiver's own post (only its thread asks), where a sender may fill it without this
  // link (a VP of another process of the node writes the message into it, then the link's
  // try_hand_over_with completes the post): the buffer, the tag it waits for, and how many
  // messages it has taken from this link in this run (drain starts the count again). None
  // while no post waits, or where the post folds.
  struct OwnPost {
    std::span<std::byte> buffer;
    MessageTag tag;
    std::uint64_t received = 0;
  };
  [[nodiscard]] virtual bool own_post(OwnPost& /*post*/) const noexcept { return false; }
  // While a sender copies a large message into the posted buffer, takes chunks of the copy too
  // (the receiver waits anyway, and two cores copy faster than one); a no-op where the
  // transport copies no message in chunks.
  virtual void help_post() noexcept {}

  // Everything still queued, removed (a run that ends with undelivered messages reports them).
  virtual std::vector<Envelope> drain() = 0;
};

enum class Transport : std::uint8_t { shared_memory, locked };

// HYPERCOMM_TRANSPORT: unset or "shared_memory", or "locked"; anything else throws
// std::invalid_argument naming the variable and the accepted values.
[[nodiscard]] Transport transport_from_environment();
[[nodiscard]] const char* to_string(Transport transport) noexcept;
// A new link of the transport; `capacity` is the shared-memory ring's slots (a power of two),
// `shared_copy_bytes` the smallest message whose copy both VPs share (channel.hpp).
[[nodiscard]] std::unique_ptr<Link> make_link(Transport transport, std::size_t capacity,
                                              std::size_t shared_copy_bytes);

}  // namespace hypercomm::detail
