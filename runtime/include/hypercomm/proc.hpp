// A virtual processor as its SPMD body sees it (API.md, "A virtual processor").
#pragma once

#include <concepts>
#include <cstddef>
#include <hypercomm/export.hpp>
#include <hypercomm/options.hpp>
#include <hypercomm/topology.hpp>
#include <ranges>
#include <span>
#include <type_traits>

// Internal (hidden in a shared library): declared before the public region.
namespace hypercomm::detail {
class Port;
}  // namespace hypercomm::detail

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm {

class Group;

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

// The user's API of a VP and nothing else: what the collectives need besides lives behind the
// runtime (detail::Port, not installed), and so does every piece of the VP's state.
class Proc {
 public:
  Proc(const Proc&) = delete;
  Proc& operator=(const Proc&) = delete;

  [[nodiscard]] int id() const noexcept { return id_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] const Topology& topology() const noexcept;
  [[nodiscard]] const Options& options() const noexcept;
  [[nodiscard]] double clock() const noexcept;  // this VP's model time

  // Buffered: copies the message (or hands it to a receiver already waiting) and returns.
  template <MessageRange R>
  void send(int dest, const R& data) {
    send_bytes(dest, as_bytes_of(data));
  }
  // Blocks for the next message from src; FIFO per (src, dest); its size must match.
  template <MutableMessageRange R>
  void recv(int src, R&& data) {
    recv_bytes(src, as_writable_bytes_of(data), sizeof(std::ranges::range_value_t<R>));
  }
  // Exchange with one partner; deadlock-free; transfers overlap in the cost model.
  template <MessageRange S, MutableMessageRange R>
  void sendrecv(int partner, const S& out, R&& in) {
    sendrecv_bytes(partner, as_bytes_of(out), partner, as_writable_bytes_of(in),
                   sizeof(std::ranges::range_value_t<R>));
  }
  // Send to dest and receive from src in one overlapped step (MPI_Sendrecv).
  template <MessageRange S, MutableMessageRange R>
  void sendrecv(int dest, const S& out, int src, R&& in) {
    sendrecv_bytes(dest, as_bytes_of(out), src, as_writable_bytes_of(in),
                   sizeof(std::ranges::range_value_t<R>));
  }

  // Groups (API.md, "Groups"; group.hpp): the whole machine, this VP's mesh row and column
  // (TopologyError elsewhere), and the subcube of the VPs that differ from this one only in the
  // bits of mask (TopologyError on other topologies or for bits at or above d). Local: no
  // message, no model time.
  [[nodiscard]] Group world() noexcept;
  [[nodiscard]] Group row();
  [[nodiscard]] Group column();
  [[nodiscard]] Group subcube(unsigned mask);

 private:
  friend class detail::Port;  // which makes and owns every Proc
  Proc(detail::Port& port, int id, int size) noexcept : port_(&port), id_(id), size_(size) {}

  void send_bytes(int dest, std::span<const std::byte> data);
  // `element`: the size of the receiver's elements, so that a SizeMismatch counts them.
  void recv_bytes(int src, std::span<std::byte> data, std::size_t element);
  void sendrecv_bytes(int dest, std::span<const std::byte> out, int src, std::span<std::byte> in,
                      std::size_t element);

  detail::Port* port_;
  int id_;
  int size_;
};

}  // namespace hypercomm

HYPERCOMM_PUBLIC_END
