// The transports (transport.hpp): the shared-memory channel, and the locked test transport.
#include "transport.hpp"

#include <cstdlib>
#include <cstring>
#include <deque>
#include <hypercomm/errors.hpp>
#include <mutex>
#include <string>

#include "channel.hpp"

namespace hypercomm::detail {

namespace {

// A mutex and a queue: every message copied in and out, no post is ever taken (the receiver
// always reads the queue), so every path of the port above runs on the plainest mechanism.
class LockedLink final : public Link {
 public:
  bool try_hand_over(const Envelope& /*envelope*/,
                     std::span<const std::byte> /*payload*/) noexcept override {
    return false;
  }
  bool try_hand_over_with(const Envelope& /*envelope*/, Fill /*fill*/, void* /*context*/) override {
    return false;
  }
  [[nodiscard]] bool receiver_posted() const noexcept override { return false; }
  [[nodiscard]] bool receiver_keeps_up() const noexcept override { return false; }
  void push(const Envelope& envelope, std::span<const std::byte> payload) override {
    Pending message{envelope, std::vector<std::byte>(payload.begin(), payload.end())};
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(message));
  }
  void push_with(const Envelope& envelope, Fill fill, void* context) override {
    Pending message{envelope, std::vector<std::byte>(envelope.size)};
    fill(context, message.payload);
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(message));
  }

  // The front element stays where it is while the sender appends (a deque keeps its elements'
  // addresses on push_back), so the pointer is good until take_front.
  [[nodiscard]] const Envelope* front() noexcept override {
    const std::lock_guard lock(mutex_);
    return queue_.empty() ? nullptr : &queue_.front().envelope;
  }
  void take_front(std::span<std::byte> dest) noexcept override {
    const std::lock_guard lock(mutex_);
    const std::vector<std::byte>& payload = queue_.front().payload;
    if (!payload.empty()) std::memcpy(dest.data(), payload.data(), payload.size());
    queue_.pop_front();
  }

  void post(std::span<std::byte> /*buffer*/, const MessageTag& /*tag*/, const Fold* /*fold*/,
            bool /*combined*/) noexcept override {}
  [[nodiscard]] bool post_done() const noexcept override { return false; }
  [[nodiscard]] double take_posted_arrival() noexcept override { return 0; }  // never done
  [[nodiscard]] bool cancel_post() noexcept override { return true; }

  std::vector<Envelope> drain() override {
    const std::lock_guard lock(mutex_);
    std::vector<Envelope> left;
    left.reserve(queue_.size());
    for (const Pending& message : queue_) left.push_back(message.envelope);
    queue_.clear();
    return left;
  }

 private:
  struct Pending {
    Envelope envelope;
    std::vector<std::byte> payload;
  };
  std::mutex mutex_;
  std::deque<Pending> queue_;
};

}  // namespace

Transport transport_from_environment() {
  const char* chosen = std::getenv("HYPERCOMM_TRANSPORT");
  if (chosen == nullptr) return Transport::shared_memory;
  const std::string name = chosen;
  if (name.empty() || name == "shared_memory") return Transport::shared_memory;
  if (name == "locked") return Transport::locked;
  throw Error("hypercomm::Machine: HYPERCOMM_TRANSPORT is '" + name +
              "'; it takes shared_memory (the default: lock-free channels) or locked (a mutex "
              "and a queue per link, the test transport)");
}

const char* to_string(Transport transport) noexcept {
  return transport == Transport::locked ? "locked" : "shared_memory";
}

std::unique_ptr<Link> make_link(Transport transport, std::size_t capacity,
                                std::size_t shared_copy_bytes) {
  if (transport == Transport::locked) return std::make_unique<LockedLink>();
  return std::make_unique<Channel>(capacity, shared_copy_bytes);
}

}  // namespace hypercomm::detail
