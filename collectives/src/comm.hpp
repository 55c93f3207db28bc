// One collective call as its algorithm sees it (Comm), and the bit arithmetic of the hypercube
// algorithms' rounds.
#pragma once

#include <bit>
#include <hypercomm/detail/core.hpp>
#include <type_traits>

#include "group_info.hpp"
#include "port.hpp"

namespace hypercomm::detail {

// Up to this many bytes a VP passes (its vector, or all p of its blocks) a collective may run as
// one meeting when VPs outnumber cores (Comm::meet): the one VP that arrives last folds or moves
// every VP's data, while the rounds of messages would each cost every VP a switch.
inline constexpr std::size_t kMeetingBytes = 4096;

// A message's pieces folded into a reduction's sum (Comm::recv_fold): sum = msg op partial
// (message_left) or partial op msg, over bytes [offset, offset + n).
struct FoldInto {
  const Reducer* op;
  std::byte* sum;
  const std::byte* partial;
  bool message_left;

  void operator()(std::size_t offset, const std::byte* msg, std::size_t n) const {
    if (message_left)
      (*op)(sum + offset, msg, partial + offset, n);
    else
      (*op)(sum + offset, partial + offset, msg, n);
  }
  // Only for an operator that never throws (Reducer::never_throws).
  static void apply(const void* context, std::size_t offset, const std::byte* msg,
                    std::size_t n) noexcept {
    (*static_cast<const FoldInto*>(context))(offset, msg, n);
  }
  [[nodiscard]] Fold fold() const noexcept { return Fold{&apply, this, op->elem_size}; }
};

// One collective call as its algorithm sees it: the group's ranks, size and topology, and the
// header every message of the call carries. Algorithms talk only through this (which talks only
// through the VP's call port, port.hpp): no mailbox, thread or atomic, and no machine id: a rank
// becomes the member's VP id here, so Algorithm 4.1 on a subcube is the same code as on the
// whole hypercube.
struct Comm {
  Port& port;
  const GroupInfo& group;
  MessageTag tag;
  // Where set (the irregular collectives), each receive first writes the rank it receives
  // from here, so that a receive's CollectiveMismatch or SizeMismatch can name the sender.
  int* receiving = nullptr;

  [[nodiscard]] int id() const noexcept { return group.rank; }  // this VP's rank
  [[nodiscard]] int p() const noexcept { return group.size; }
  [[nodiscard]] const Topology& topology() const noexcept { return group.topology; }
  [[nodiscard]] const Options& options() const noexcept { return port.options(); }
  void send(int dest, ConstBytes data) const { port.send_bytes(group.vp_of(dest), data, tag); }
  void recv(int src, Bytes data) const {
    if (receiving != nullptr) *receiving = src;
    port.recv_bytes(group.vp_of(src), data, tag);
  }
  // send, doing meanwhile() (work that leaves data alone and cannot throw) while the receiver
  // copies a large message (or after the send).
  template <class Work>
  void send_during(int dest, ConstBytes data, Work meanwhile) const {
    static_assert(std::is_nothrow_invocable_v<Work&>);
    port.send_bytes_during(
        group.vp_of(dest), data, tag, [](void* work) noexcept { (*static_cast<Work*>(work))(); },
        &meanwhile);
  }
  // recv, doing meanwhile() (work that leaves data alone) while the message is on its way.
  template <class Work>
  void recv_during(int src, Bytes data, Work meanwhile) const {
    if (receiving != nullptr) *receiving = src;
    port.recv_bytes_during(
        group.vp_of(src), data, tag, [](void* work) { (*static_cast<Work*>(work))(); }, &meanwhile);
  }
  // A reduction's receive: sum = partial op msg (message_left false) or msg op partial, element
  // by element (sum may be partial), where msg is src's message of msg.size() bytes. An operator
  // that cannot throw folds the message as it lands, on whichever thread delivers it (a large
  // message handed to this waiting VP is not copied first; port.hpp, recv_fold_bytes); else msg
  // takes the message and this VP folds it.
  void recv_fold(int src, Bytes msg, const Reducer& op, Bytes sum, ConstBytes partial,
                 bool message_left) const {
    if (receiving != nullptr) *receiving = src;
    const FoldInto into{&op, sum.data(), partial.data(), message_left};
    if (op.never_throws) {
      port.recv_fold_bytes(group.vp_of(src), msg, tag, into.fold());
    } else {
      port.recv_to_combine_bytes(group.vp_of(src), msg, tag);
      into(0, msg.data(), msg.size());
    }
  }
  // sendrecv with partner whose receive folds as recv_fold's does where `landing`; else this VP
  // folds the message once it is in. A sum that this VP sends on next is better built here, in
  // its own cache: folded as it lands, by the partner, it would have to come back (16 cores:
  // a reduce-scatter's earlier steps 1.2-1.7x slower so at p = 8).
  void sendrecv_fold(int partner, ConstBytes out, Bytes msg, const Reducer& op, Bytes sum,
                     ConstBytes partial, bool message_left, bool landing) const {
    if (receiving != nullptr) *receiving = partner;
    const FoldInto into{&op, sum.data(), partial.data(), message_left};
    const int vp = group.vp_of(partner);
    if (landing && op.never_throws) {
      port.sendrecv_fold_bytes(vp, out, vp, msg, tag, into.fold());
    } else {
      port.sendrecv_to_combine_bytes(vp, out, vp, msg, tag);
      into(0, msg.data(), msg.size());
    }
  }
  void sendrecv(int partner, ConstBytes out, Bytes in) const {
    sendrecv(partner, out, partner, in);
  }
  void sendrecv(int dest, ConstBytes out, int src, Bytes in) const {
    if (receiving != nullptr) *receiving = src;
    port.sendrecv_bytes(group.vp_of(dest), out, group.vp_of(src), in, tag);
  }
  // recv and sendrecv of a message this VP then combines with data of its own (a scan's or a
  // reduction's that is not folded as it lands): the runtime's senders do not wait for such a
  // receiver to post (Port::recv_to_combine_bytes).
  void recv_to_combine(int src, Bytes data) const {
    if (receiving != nullptr) *receiving = src;
    port.recv_to_combine_bytes(group.vp_of(src), data, tag);
  }
  void sendrecv_to_combine(int partner, ConstBytes out, Bytes in) const {
    sendrecv_to_combine(partner, out, partner, in);
  }
  void sendrecv_to_combine(int dest, ConstBytes out, int src, Bytes in) const {
    if (receiving != nullptr) *receiving = src;
    port.sendrecv_to_combine_bytes(group.vp_of(dest), out, group.vp_of(src), in, tag);
  }
  // Whether this call is `op` itself, not a phase of another collective (a two-phase broadcast's
  // all-gather, a two-phase reduce's reduce-scatter): a meeting may stand only for a whole call,
  // since a VP that has left it would send the next phase's messages, of the same call, to VPs
  // still in it.
  [[nodiscard]] bool is_call(Collective op) const noexcept {
    return tag.kind == static_cast<decltype(tag.kind)>(op);
  }
  // The whole collective as one meeting in shared memory, when the runtime finds that cheaper
  // than these rounds of messages (Port::meet; false: send the messages). A group's members
  // meet apart from the others, seated by rank.
  [[nodiscard]] bool meet(const Port::Rounds& rounds, const void* input = nullptr,
                          Port::Combine combine = nullptr, const void* context = nullptr,
                          Bytes out = {}, Port::Results results = Port::Results::shared,
                          std::size_t result_bytes = 0) const {
    if (!port.may_meet()) return false;
    return port.meet(tag, rounds, input, combine, context, out, results, result_bytes, member_of());
  }
  // The whole collective as one meeting whose work every member shares (Port::meet's part):
  // once all have come, each calls part(context, inputs, rank) with every member's input.
  [[nodiscard]] bool meet_in_parts(const Port::Rounds& rounds, const void* input, Port::Part part,
                                   const void* context) const {
    if (!port.may_meet()) return false;
    return port.meet(tag, rounds, input, nullptr, context, {}, Port::Results::shared, 0,
                     member_of(), part);
  }
  // The group whose members meet, for the port: null for the whole machine.
  [[nodiscard]] const GroupInfo* member_of() const noexcept {
    return group.shape == GroupInfo::Shape::world ? nullptr : &group;
  }
  // A rooted collective as a meeting in shared memory (Port::meet_rooted, rounds.root a rank;
  // false: send the messages).
  [[nodiscard]] bool meet_rooted(Port::Rounds rounds, Port::Flow flow, ConstBytes input, Bytes out,
                                 Port::Results results = Port::Results::shared,
                                 Port::Combine combine = nullptr, const void* context = nullptr,
                                 const Port::Uneven* uneven = nullptr) const {
    if (!port.may_meet()) return false;
    return port.meet_rooted(member_of(), tag, rounds, flow, input, out, results, combine, context,
                            uneven);
  }
  // A prefix as a meeting in shared memory (Port::meet_prefix; false: send the messages).
  [[nodiscard]] bool meet_prefix(const Port::Rounds& rounds, ConstBytes input,
                                 Port::PrefixStep step, const void* context, Bytes out) const {
    if (!port.may_meet()) return false;
    return port.meet_prefix(member_of(), tag, rounds, input, step, context, out);
  }
};

[[nodiscard]] inline bool is_power_of_two(int p) noexcept {
  return p > 0 && std::has_single_bit(static_cast<unsigned>(p));
}
[[nodiscard]] inline int log2_of(int p) noexcept {  // p = 2^d
  return std::countr_zero(static_cast<unsigned>(p));
}

// The partner of my_id in round i of a butterfly (Port::Rounds' pattern of the hypercube
// algorithms that exchange with my_id XOR 2^i).
[[nodiscard]] inline int butterfly_partner(int my_id, int round, int /*p*/) noexcept {
  return my_id ^ (1 << round);
}
// The binomial trees of the rooted hypercube algorithms, as rooted Port::Rounds (ids relative to
// the root, -1: no message). Down (broadcast, scatter: Algorithms 4.1/4.2): round k crosses
// dimension i = d-1-k from the VPs whose lower i+1 bits are zero to those whose lower i bits are
// zero and bit i set. Up (reduce, gather: Algorithm 4.3): round i crosses dimension i the other
// way.
[[nodiscard]] inline int tree_down_to(int v, int round, int p) noexcept {
  const int bit = p >> (round + 1);
  return (v & ((bit << 1) - 1)) == 0 ? v ^ bit : -1;
}
[[nodiscard]] inline int tree_down_from(int v, int round, int p) noexcept {
  const int bit = p >> (round + 1);
  return (v & ((bit << 1) - 1)) == bit ? v ^ bit : -1;
}
[[nodiscard]] inline int tree_up_to(int v, int round, int /*p*/) noexcept {
  const int bit = 1 << round;
  return (v & ((bit << 1) - 1)) == bit ? v ^ bit : -1;
}
[[nodiscard]] inline int tree_up_from(int v, int round, int /*p*/) noexcept {
  const int bit = 1 << round;
  return (v & ((bit << 1) - 1)) == 0 ? v ^ bit : -1;
}

// Rounds::scale of the messages that grow (an all-gather's, a gather's: 2^k blocks in round k)
// and shrink (a scatter's: p/2^(k+1) blocks) round after round.
[[nodiscard]] inline std::size_t doubling(int round, int /*p*/) noexcept {
  return std::size_t{1} << round;
}
[[nodiscard]] inline std::size_t halving(int round, int p) noexcept {
  return static_cast<std::size_t>(p) >> (round + 1);
}

// The partner in round i of the exchanges that take the dimensions from the highest down (the
// dimension-exchange all-to-all, Algorithm 4.8's recursive halving).
[[nodiscard]] inline int descending_partner(int my_id, int round, int p) noexcept {
  return my_id ^ (p >> (round + 1));
}

// k's lowest d bits in reverse order: where the book's recursive halving (Algorithm 4.8, the
// dimensions from the highest down) puts input k in its tree of folds.
[[nodiscard]] inline int bit_reversed(int k, int d) noexcept {
  int r = 0;
  for (int b = 0; b < d; ++b) r |= ((k >> b) & 1) << (d - 1 - b);
  return r;
}

}  // namespace hypercomm::detail
