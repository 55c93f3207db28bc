// Ring-level pieces shared by the exchange family (all_to_all, circular_shift, barrier): each
// ring algorithm runs over a Ring (the whole machine, a mesh row, a mesh column), so the mesh
// algorithms are the ring algorithms run along the rows and then along the columns (Grama et
// al. 4.5.2, 4.6). Each is defined in its ring algorithm's file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "blocks.hpp"
#include "comm.hpp"
#include "ring.hpp"
#include "scratch.hpp"

namespace hypercomm::detail {

// All-to-all personalized among g's members, one direction round the ring (all_to_all_ring.cpp):
// in and out hold g.size bundles of `bundle` bytes indexed by group rank; bundle k of member j's
// in goes to bundle j of member k's out. Sends to g.right, receives from g.left only.
// T = (ts + tw*bundle*g.size/2) * (g.size - 1).
void ring_all_to_all(const Comm& c, const Ring& g, ConstBytes in, Bytes out, std::size_t bundle);

// The same on a line of g's members without the wraparound (all_to_all_line.cpp): the bundles for
// higher ranks travel up, one direction after the other, each stream the book's pipeline; sends
// to and receives from members k+1 and k-1 only.
// T = 2*(g.size - 1)*ts + tw*bundle*g.size*(g.size - 1).
void line_all_to_all(const Comm& c, const Ring& g, ConstBytes in, Bytes out, std::size_t bundle);

// Circular shift on a line of g's members without the wraparound (circular_shift_line.cpp):
// the messages that stay below the top go up `shift` members, the others down, one stream
// after the other. T = (ts + tw*m) * g.size for shift in (0, g.size).
void line_shift(const Comm& c, const Ring& g, ConstBytes in, Bytes out, int shift);

// Circular shift among g's members (circular_shift_ring.cpp): member k's in goes to member
// (k + shift) mod g.size's out, shift in [0, g.size). min(shift, g.size - shift) neighbour
// steps the shorter way round (ties go up). T = (ts + tw*m) * min(shift, g.size - shift).
void ring_shift(const Comm& c, const Ring& g, ConstBytes in, Bytes out, int shift);

// all_to_allv's ring (all_to_allv_ring.cpp), with bundles of `width` blocks of any sizes. A
// forwarding member does not know the sizes of the blocks it forwards (they are the sources'
// send_counts), so the sizes travel as 8-byte entries one step ahead of the blocks they describe.
inline constexpr std::size_t kSizeEntry = sizeof(std::uint64_t);

// Where a ring all-to-allv's bundles end up: take() is called once for every member's bundle for
// this VP (this VP's own included), with its `width` block sizes in bytes and its bytes.
class BundleSink {
 public:
  virtual void take(int member, std::span<const std::size_t> sizes, ConstBytes bundle) = 0;

 protected:
  BundleSink() = default;
  ~BundleSink() = default;
  BundleSink(const BundleSink&) = default;
  BundleSink& operator=(const BundleSink&) = default;
};

// Bundle k of `in` (blocks k*width .. k*width + width-1, of sizes[...] bytes, contiguous) goes to
// member k. Sends to g.right, receives from g.left only: a sizes-only step, then g.size - 1 steps
// of the book's ring (4.5.1), each message the bundles still travelling followed by the sizes of
// the next step's. T (equal blocks of m) = ts + tw*8*width*(n-1) + sum_{i=1}^{n-1} (ts +
// tw*((m*width)*(n-i) + 8*width*(n-i-1))).
void ring_all_to_allv(const Comm& c, const Ring& g, int width, ConstBytes in,
                      std::span<const std::size_t> sizes, BundleSink& sink);

// The same on a line of g's members without the wraparound (all_to_allv_line.cpp): the bundles
// for higher ranks travel up, then those for lower ranks down, each stream a sizes-only step and
// the book's pipeline with the next step's sizes behind the bundles; sends to and receives from
// members k+1 and k-1 only.
void line_all_to_allv(const Comm& c, const Ring& g, int width, ConstBytes in,
                      std::span<const std::size_t> sizes, BundleSink& sink);

// all_to_allv over the whole machine by ring_all_to_allv or line_all_to_allv, bundles of one
// block, each landing in out once its size is checked against `received` (throw_block_size).
using BundleExchange = void (*)(const Comm&, const Ring&, int, ConstBytes,
                                std::span<const std::size_t>, BundleSink&);
void whole_machine_all_to_allv(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                               const Blocks& received, BundleExchange exchange);

// The first `bytes` bytes of `buf`, which grows (without keeping its contents) when too small:
// doubling, so that a run of growing messages allocates a few times, not once per message.
inline Bytes room(Buffer& buf, std::size_t bytes) {
  if (buf.size() < bytes) {
    const std::size_t want = std::max(bytes, 2 * buf.size());
    buf.clear();
    buf.resize(want);
  }
  return Bytes(buf).first(bytes);
}

// Size entries (8 bytes each, unaligned) in and out of a message.
inline void put_sizes(Bytes at, std::span<const std::size_t> sizes) noexcept {
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const auto v = static_cast<std::uint64_t>(sizes[k]);
    std::memcpy(at.data() + k * kSizeEntry, &v, kSizeEntry);
  }
}
inline void get_sizes(ConstBytes from, std::vector<std::size_t>& sizes) {
  sizes.resize(from.size() / kSizeEntry);
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    std::uint64_t v = 0;
    std::memcpy(&v, from.data() + k * kSizeEntry, kSizeEntry);
    sizes[k] = static_cast<std::size_t>(v);
  }
}

// Barrier among g's members (barrier_ring.cpp): g.size - 1 rounds of zero-byte messages to
// g.right. No member returns before every member has entered. T = ts * (g.size - 1).
void ring_barrier(const Comm& c, const Ring& g);

}  // namespace hypercomm::detail
