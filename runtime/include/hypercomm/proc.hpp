// A virtual processor as its SPMD body sees it (API.md, "A virtual processor").
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <hypercomm/message.hpp>
#include <hypercomm/options.hpp>
#include <hypercomm/report.hpp>
#include <hypercomm/topology.hpp>
#include <ranges>
#include <span>
#include <type_traits>
#include <vector>

namespace hypercomm {

namespace detail {
class Fabric;
class Channel;
}  // namespace detail

// Any contiguous range of a trivially copyable type: std::vector, std::array, std::span, ...
template <class R>
concept MessageRange = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    std::is_trivially_copyable_v<std::ranges::range_value_t<R>>;

// A MessageRange whose elements may be written.
template <class R>
concept MutableMessageRange =
    MessageRange<R> && !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>;

template <MessageRange R>
[[nodiscard]] std::span<const std::byte> as_bytes_of(const R& r) noexcept {
  return std::as_bytes(std::span(std::ranges::data(r), std::ranges::size(r)));
}
template <MutableMessageRange R>
[[nodiscard]] std::span<std::byte> as_writable_bytes_of(R&& r) noexcept {
  return std::as_writable_bytes(std::span(std::ranges::data(r), std::ranges::size(r)));
}

class alignas(64) Proc {
 public:
  Proc(detail::Fabric& fabric, int id);
  Proc(const Proc&) = delete;
  Proc& operator=(const Proc&) = delete;

  [[nodiscard]] int id() const noexcept { return id_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] const Topology& topology() const noexcept;
  [[nodiscard]] const Options& options() const noexcept;
  [[nodiscard]] double clock() const noexcept { return clock_; }

  // Buffered: copies the message (or hands it to a receiver already waiting) and returns.
  template <MessageRange R>
  void send(int dest, const R& data) {
    send_bytes(dest, as_bytes_of(data), MessageTag{});
  }
  // Blocks for the next message from src; FIFO per (src, dest); its size must match.
  template <MutableMessageRange R>
  void recv(int src, R&& data) {
    recv_bytes(src, as_writable_bytes_of(data), MessageTag{});
  }
  // Exchange with one partner; deadlock-free; transfers overlap in the cost model.
  template <MessageRange S, MutableMessageRange R>
  void sendrecv(int partner, const S& out, R&& in) {
    sendrecv_bytes(partner, as_bytes_of(out), partner, as_writable_bytes_of(in), MessageTag{});
  }
  // Send to dest and receive from src in one overlapped step (MPI_Sendrecv).
  template <MessageRange S, MutableMessageRange R>
  void sendrecv(int dest, const S& out, int src, R&& in) {
    sendrecv_bytes(dest, as_bytes_of(out), src, as_writable_bytes_of(in), MessageTag{});
  }

  // Byte-level point-to-point with a message header, used by the collectives.
  void send_bytes(int dest, std::span<const std::byte> data, const MessageTag& tag);
  void recv_bytes(int src, std::span<std::byte> data, const MessageTag& tag);
  void sendrecv_bytes(int dest, std::span<const std::byte> out, int src, std::span<std::byte> in,
                      const MessageTag& tag);

  // Collective bookkeeping: the next collective call number of this VP, and trace spans.
  [[nodiscard]] std::uint32_t next_collective_sequence() noexcept { return ++collective_sequence_; }
  void begin_span(const char* name, const char* algo, std::uint64_t bytes) noexcept;
  void end_span() noexcept;
  // Names the operation a blocked VP is in, for Deadlock reports (a static string).
  void set_operation(const char* name) noexcept { operation_ = name; }

 private:
  friend class detail::Fabric;
  void reset_for_run() noexcept;
  void post_send(int dest, std::span<const std::byte> data, const MessageTag& tag, double start);
  void check_peer(int peer, const char* op, std::size_t bytes) const;
  double receive(detail::Channel& channel, int src, std::span<std::byte> data,
                 const MessageTag& tag, bool posted);
  [[nodiscard]] const char* operation_name() const noexcept;
  void note_received() noexcept;
  void record(Event::Kind kind, int peer, std::uint64_t bytes, double wall_begin,
              double model_begin, const char* name);
  [[noreturn]] void throw_size_mismatch(int src, const char* op, std::uint64_t got,
                                        std::size_t want) const;
  [[noreturn]] void throw_tag_mismatch(int src, const MessageTag& got,
                                       const MessageTag& want) const;
  enum class Wait : std::uint8_t { ready, aborted, peer_finished };
  template <class Ready>
  Wait wait_until(int src, Ready&& ready);
  [[noreturn]] void throw_abandoned(int src) const;

  // The last peers' routes and channels, so that a message to a recent peer skips the
  // topology arithmetic and the channel table (channels live as long as the Machine).
  struct Route {
    int peer = -1;
    int slot = -1;  // the link slot from this VP (send side), -1 when not a neighbour
    int hops = 0;
    detail::Channel* channel = nullptr;
  };
  static constexpr std::size_t kRoutes = 8;
  Route& route_to(int dest);
  detail::Channel& channel_from(int src);

  detail::Fabric* fabric_;
  std::array<Route, kRoutes> out_routes_{};
  std::array<Route, kRoutes> in_routes_{};
  int id_;
  int size_;
  double clock_ = 0;
  std::uint32_t collective_sequence_ = 0;
  const char* operation_ = nullptr;
  std::uint64_t messages_sent_ = 0;
  std::uint64_t bytes_sent_ = 0;
  std::vector<Event> events_;
  std::vector<CommOp> operations_;
  bool recording_ = false;
  std::vector<std::size_t> open_spans_;
};

}  // namespace hypercomm
