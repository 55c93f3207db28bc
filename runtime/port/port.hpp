// The call port (DESIGN.md, "The layers"): a VP as the collectives see it, and its state. The
// user's Proc (proc.hpp) shows only the user's API and forwards to its Port; what the collectives
// need besides (tagged bytes, the call header, trace spans, meetings, the group table) is here,
// in a header that the runtime shares with the collectives and does not install. Algorithms
// reach it only through their Comm (collectives/src/comm.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <hypercomm/group.hpp>
#include <hypercomm/options.hpp>
#include <hypercomm/proc.hpp>
#include <hypercomm/report.hpp>
#include <hypercomm/topology.hpp>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "group_info.hpp"
#include "message.hpp"

namespace hypercomm::detail {

class Fabric;
class Link;
struct SideWork;
struct Envelope;
struct PipelinedMeeting;
struct Meeting;
struct GroupTable;
struct GroupInfo;

class alignas(64) Port {
 public:
  Port(Fabric& fabric, int id);
  ~Port();
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  // The port of a user's VP, and the VP of a port.
  [[nodiscard]] static Port& of(Proc& vp) noexcept { return *vp.port_; }
  [[nodiscard]] static const Port& of(const Proc& vp) noexcept { return *vp.port_; }
  [[nodiscard]] Proc& proc() noexcept { return proc_; }

  [[nodiscard]] int id() const noexcept { return id_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  // Throws Error where this thread runs another VP: a Proc or Group that one VP's body hands to
  // another's would run that body's calls as this VP, and the watchdog, which sees the calling
  // thread's own VP running, would never report the wait. (A thread of the VP's own body's
  // making, one at a time, may call through it: naming_vp() is -1 there.)
  void check_thread(const char* operation) const {
    if (const int here = naming_vp(); here != id_ && here >= 0) [[unlikely]]
      throw_other_thread(operation);
  }
  [[noreturn]] void throw_other_thread(const char* operation) const;
  [[nodiscard]] const Topology& topology() const noexcept;
  [[nodiscard]] const Options& options() const noexcept { return *options_; }
  // Whether this run traces (Options::trace): a collective names its algorithm only then.
  [[nodiscard]] bool tracing() const noexcept { return options_->trace; }
  // This VP's model clock; after a prefix meeting it left early (meet_prefix), it first waits
  // until every VP has arrived there (on an abort it returns the clock it had).
  [[nodiscard]] double clock() noexcept;

  // This VP's groups during a run (group_info.hpp), and a new split group of `parent` holding
  // `members` (machine ids in rank order) in which this VP has `rank` (-1: in none).
  [[nodiscard]] GroupTable& groups() noexcept { return *groups_; }
  [[nodiscard]] Group split(GroupInfo& parent, int color, std::vector<int> members, int rank);

  // Byte-level point-to-point with a message header, used by the collectives.
  void send_bytes(int dest, std::span<const std::byte> data, const MessageTag& tag);
  // send_bytes, running meanwhile(context) (work that leaves data alone) once: while the
  // receiver copies a large message handed to it, else after the send.
  // Only a message of at least kSideWorkBytes can be copied so (channel.hpp's
  // kSharedCopyBytes).
  static constexpr std::size_t kSideWorkBytes = 256 << 10;
  void send_bytes_during(int dest, std::span<const std::byte> data, const MessageTag& tag,
                         void (*meanwhile)(void*) noexcept, void* context);
  void recv_bytes(int src, std::span<std::byte> data, const MessageTag& tag);
  // recv_bytes, running meanwhile(context) once the receive is posted and before it is waited
  // for: a large message's sender copies it straight into data while this VP does work of its
  // own (which must not touch data).
  void recv_bytes_during(int src, std::span<std::byte> data, const MessageTag& tag,
                         void (*meanwhile)(void*), void* context);
  void sendrecv_bytes(int dest, std::span<const std::byte> out, int src, std::span<std::byte> in,
                      const MessageTag& tag);
  // recv_bytes and sendrecv_bytes of a message that this VP then combines into data of its own
  // (a reduction or scan that folds after receiving, not as the message lands): the same, but a
  // sender whose receiver has not posted yet does not wait for it (Link::receiver_keeps_up),
  // which would hold it up while this VP computes.
  void recv_to_combine_bytes(int src, std::span<std::byte> data, const MessageTag& tag);
  void sendrecv_to_combine_bytes(int dest, std::span<const std::byte> out, int src,
                                 std::span<std::byte> in, const MessageTag& tag);
  // recv_bytes of a message of scratch.size() bytes that fold (message.hpp) folds into this VP's
  // data as it lands: a message handed straight to this waiting VP is folded by its sender (or
  // by both, a large one), without a copy; one already queued, or one of fewer than
  // kFoldLandingBytes (channel.hpp), is copied into scratch and folded here.
  void recv_fold_bytes(int src, std::span<std::byte> scratch, const MessageTag& tag,
                       const Fold& fold);
  // sendrecv_bytes whose receive folds so (the partner's thread folds this VP's message while
  // this one folds the partner's).
  void sendrecv_fold_bytes(int dest, std::span<const std::byte> out, int src,
                           std::span<std::byte> scratch, const MessageTag& tag, const Fold& fold);

  // Collective bookkeeping: the operation a blocked VP is in, and trace spans.
  void begin_span(const char* name, const char* algo, std::uint64_t bytes,
                  std::uint32_t group = 0) noexcept {
    operation_ = name;
    if (tracing()) [[unlikely]]
      open_span(name, algo, bytes, group);
  }
  void end_span() noexcept {
    operation_ = nullptr;
    if (!open_spans_.empty()) [[unlikely]]
      close_span();
  }
  // The collective call this VP is in (its header), published on entry so that the VPs that
  // wait in the same call compare theirs with it and raise CollectiveMismatch at once rather
  // than after the deadlock timeout (with the call before it). Once per collective call, never
  // per message.
  // begin_call throws only what a test's fault hook throws (runtime/src/faults.hpp). The header
  // comes by value, in two registers, not read back from the caller's fresh stores (make_tag).
  void begin_call(MessageTag tag);
  void end_call() noexcept;
  // After a collective call's algorithm has returned on this VP, where it sent or took messages:
  // a VP it sent to, or a neighbour, that it took no message from, whose own message of the same
  // call waits here untaken, called another collective, root, count, operator or algorithm, and
  // neither may ever take the other's message (a broadcast's roots that differ, a scatter's root
  // against a gather's VPs, a mesh reduce's leaf against a broadcast): throws CollectiveMismatch
  // naming both calls. Reads the head of at most kWatchedPeers + degree channels; no fence, so a
  // message sent at the same instant may be missed (the run's end reports it then).
  // Only a group's first call and every kUntakenEvery-th after it look, and a look also finds a
  // message left untaken by one of this group's earlier calls: the head it reads is the slot its
  // sender writes next, a line that comes from the other core more often than not, on the path
  // of a call that only sends (p = 2, 8 B, a look every 8th call against every call, 20-24
  // rounds alternated, median of the paired ratios: after a barrier broadcast 0.90x the time,
  // scatter 0.93x, gather 0.93x, reduce 0.90x; back to back broadcast 0.94x, scatter 0.92x,
  // gather and reduce 0.95-1.02x, all_reduce, which looks at nothing, 0.98-1.01x). A disagreement
  // a look skips is found by the next look, by the next receive from that VP (whose header
  // differs) or at the run's end.
  static constexpr std::uint32_t kUntakenEvery = 8;
  void check_call_end() {
    if (call_destinations_.count + call_sources_.count != 0 && call_.sequence % kUntakenEvery == 1)
      check_untaken();
  }
  // Names the operation a blocked VP is in, for Deadlock reports (a static string).
  void set_operation(const char* name) noexcept { operation_ = name; }
  // For the span of a user's receive (Proc::recv, sendrecv): the size of its elements, which a
  // SizeMismatch names (1 otherwise: the collectives' messages are bytes).
  class Elements {
   public:
    Elements(Port& port, std::size_t element) noexcept : port_(port) { port.element_ = element; }
    Elements(const Elements&) = delete;
    Elements& operator=(const Elements&) = delete;
    ~Elements() { port_.element_ = 1; }

   private:
    Port& port_;
  };

  // A collective's rounds: in round k VP id sends bytes * scale(k, p) bytes (scale null: `bytes`)
  // to to(id, k, p) and receives as many from from(id, k, p), all VPs at once (a symmetric
  // collective's exchanges). A rooted pattern (a broadcast's or a reduction's tree) names its
  // root: to and from then take and give ids relative to it (id XOR root, the book's virtual
  // ids; on a ring, ring_root: (id - root) mod p), and -1 where a VP sends (receives) nothing in
  // that round.
  struct Rounds {
    int count = 0;
    std::size_t bytes = 0;
    int (*to)(int id, int round, int p) = nullptr;
    int (*from)(int id, int round, int p) = nullptr;
    std::size_t (*scale)(int round, int p) = nullptr;  // an all-gather's doubling messages
    int root = 0;
    // Blocks of any sizes (an all_to_allv): the bytes VP id sends in round k, read from the
    // input it passes to meet(); null: bytes_in(k, p), the same for every VP.
    std::size_t (*sent_bytes)(const void* input, int id, int round, int p) = nullptr;
    bool ring_root = false;  // ids relative to the root by distance round the ring, not XOR
    [[nodiscard]] std::size_t bytes_in(int round, int p) const noexcept {
      return scale == nullptr ? bytes : bytes * scale(round, p);
    }
    // The VP that id sends to (receives from) in round k, or -1.
    [[nodiscard]] int dest(int id, int round, int p) const noexcept {
      return absolute(to(relative(id, p), round, p), p);
    }
    [[nodiscard]] int source(int id, int round, int p) const noexcept {
      return absolute(from(relative(id, p), round, p), p);
    }
    [[nodiscard]] int relative(int id, int p) const noexcept {
      return ring_root ? (id - root + p) % p : id ^ root;
    }
    [[nodiscard]] int absolute(int v, int p) const noexcept {
      return v < 0 ? -1 : ring_root ? (v + root) % p : v ^ root;
    }
  };
  // What a meeting's combine makes: one result that every VP takes (an all-reduce, an
  // all-gather), or one for each VP (a prefix sum, an all-to-all: VP i takes bytes
  // [i*n, (i+1)*n) of the result, n = out.size()).
  enum class Results : std::uint8_t { shared, per_vp };
  // Folds every VP's input (inputs[i] is VP i's) into result; `context` is the caller's.
  // Results::shared: result holds n bytes (meet's result_bytes, else rounds.bytes) and scratch
  // ceil(log2 p) * rounds.bytes, for the partial folds of a tree; Results::per_vp: both hold
  // p * n.
  using Combine = void (*)(const void* context, std::span<const void* const> inputs,
                           std::span<std::byte> result, std::span<std::byte> scratch);
  // A member's share of a meeting's work (meet's `part`): inputs[i] is member i's input, as for
  // Combine; `rank` is the member's.
  using Part = void (*)(const void* context, std::span<const void* const> inputs, int rank);
  // Whether this run's VPs may meet in shared memory (meet's conditions below; fixed for a run).
  [[nodiscard]] bool may_meet() const noexcept { return may_meet_; }
  // The cores the machine's VPs share, or 0 (Machine::shared_core_count; fixed for its life).
  [[nodiscard]] int shared_core_count() const noexcept { return shared_cores_; }
  // When VPs outnumber cores, a small symmetric collective (a barrier, a small all-reduce) is
  // cheaper as one meeting in shared memory than as its rounds of messages: each message costs
  // a switch between the VPs of a core, a meeting about one. meet() runs the collective so, if
  // it may: every VP calls it with the same tag; the last to arrive checks that the tags agree
  // (CollectiveMismatch), folds the inputs into one result, advances every VP's model clock and
  // counts the messages and link traffic exactly as the rounds would have, then releases the
  // others; each VP copies the result, or its own (Results::per_vp), into out (nothing when out
  // is empty; out holds n bytes, the same on every VP). It returns false, having done nothing, when
  // it may not: one VP per core (messages are cheaper there), or a run that records operations or
  // traces (they show the book's messages). Every VP of a run decides alike.
  // `group`: a group's members meet (the rounds' ids are their ranks); null: the whole machine.
  // `part`: work too large for the last arriver alone (a large scan, an all-to-all's copies) that
  // every member shares: once released, each calls part(context, inputs, rank) with every
  // member's input, which its part may read and write through, and none leaves before every
  // member's part is done (an abort meanwhile is thrown once they are: parts never block). part
  // must not throw. Every member passes a part or none (else CollectiveMismatch).
  [[nodiscard]] bool meet(const MessageTag& tag, const Rounds& rounds, const void* input,
                          Combine combine, const void* context, std::span<std::byte> out,
                          Results results = Results::shared, std::size_t result_bytes = 0,
                          const GroupInfo* group = nullptr, Part part = nullptr);

  // A prefix (scan, exscan) of up to kPipelinedBytes a VP (or past that whose p inputs fit in
  // the chain's wide room, 32 KiB or a group's 16 KiB, or p times kPipelinedBytes where that is
  // more; false beyond) as a meeting in shared memory, when meet() may run: VP i's result needs
  // only the inputs of VPs 0..i, so VP i leaves once they are in, and a VP calling prefix after
  // prefix runs ahead of the VPs above it (a pipeline, not a rendezvous per call).
  // step(context, i, p, n, stride, inputs, folds, result) computes VP i's result (result: its out,
  // null when out is empty) from inputs (VP j's n bytes at j * stride, for j <= i) and the partial
  // folds that earlier steps left in folds (p blocks of n bytes, block b at b * stride), and leaves
  // what later steps need in block i, the only one step i writes (the VP asks for it ahead); steps
  // run in id order, each once, on whichever VP takes the chain on. The model clocks, message
  // counts and link traffic are the rounds', as for meet(); a VP's clock is settled when the last
  // VP arrives, and the VP takes it only when it next needs it (a message, another meeting,
  // clock(), the end of its run). The most a VP passes to a small prefix or rooted meeting
  // (meet_prefix, meet_rooted).
  static constexpr std::size_t kPipelinedBytes = 256;
  using PrefixStep = void (*)(const void* context, int vp, int p, std::size_t bytes,
                              std::size_t stride, const std::byte* inputs, std::byte* folds,
                              std::byte* result);
  [[nodiscard]] bool meet_prefix(const GroupInfo* group, const MessageTag& tag,
                                 const Rounds& rounds, std::span<const std::byte> input,
                                 PrefixStep step, const void* context, std::span<std::byte> out);
  // A rooted collective of up to kPipelinedBytes a VP as a meeting in shared memory, when meet()
  // may run, in the slots of meet_prefix (so that VPs calling it back to back run ahead as they
  // do there). Flow::from_root: the root leaves its input and goes on, every other VP copies what
  // it gets into its out (n = out.size() bytes, the same on every VP) as soon as the root's input
  // is there, and goes on: all n bytes (Results::shared, a broadcast) or block i of p (per_vp, a
  // scatter: VP i's n bytes at i * n; the root copies its own block too). Flow::to_root: every VP
  // leaves its input (n = input.size() bytes) and goes on; the root waits for all of them and
  // makes its out from them with combine (inputs[i]: VP i's input; a reduction's fold, as meet's
  // Results::shared with scratch for log2 p results; a gather's copies). The other VPs' outs are
  // untouched. Clocks, counts and link traffic: the rounds' (a rooted pattern on rounds.root),
  // each VP's clock settled as in meet_prefix.
  // Past kPipelinedBytes a VP, a broadcast or scatter (Flow::from_root) whose root's buffer, or a
  // gather or reduce (Flow::to_root) whose p inputs, hold at most p times that or the chain's
  // wide room (PipelinedMeeting::kWideRoom, 32 KiB; a group's kGroupWideRoom, 16 KiB), below
  // kByReferenceBytes, pipelines too: the root leaves its input whole in the slot, or every VP its
  // input (a gather's root copies them into its out).
  // Larger than kPipelinedBytes a VP, where the root's buffer holds at least kByReferenceBytes,
  // a broadcast or scatter (Flow::from_root) or a gather (Flow::to_root, Results::per_vp, no
  // combine: VP i's input becomes block i of the root's out) meets by reference: each VP copies
  // its part straight from or into the root's buffer, and the root leaves when every copy is
  // done (a rendezvous, which pays where the copies spread over the cores: the messages would
  // copy the data along the tree, mostly on the root's core). Otherwise (a large reduction, or
  // less data) meet_rooted returns false.
  // Blocks of any sizes (a gatherv's, a scatterv's, Results::per_vp): this VP's block is its
  // input (to the root) or its out (from the root) and lies at `offset` of the root's buffer;
  // `sizes` is Rounds::sent_bytes's input, which says the same on every VP (the VP that
  // concludes plays every VP's messages with its own); `seat` is what every VP's seat must agree
  // on besides the header (the blocks' total). by_reference: some block is larger than
  // kPipelinedBytes, and the meeting is by reference whatever the total (every VP decides alike
  // from the same blocks, and both kinds take the same slots, whose seats a VP that decided
  // otherwise, from other counts, disagrees with).
  struct Uneven {
    const void* sizes;
    std::size_t offset;
    std::size_t seat;
    bool by_reference;
  };
  static constexpr std::size_t kByReferenceBytes = 32 * 1024;
  enum class Flow : std::uint8_t { from_root, to_root };
  // meet_prefix and meet_rooted take the group whose members meet (the rounds' ids and root
  // are their ranks), or null: the whole machine.
  [[nodiscard]] bool meet_rooted(const GroupInfo* group, const MessageTag& tag,
                                 const Rounds& rounds, Flow flow, std::span<const std::byte> input,
                                 std::span<std::byte> out, Results results = Results::shared,
                                 Combine combine = nullptr, const void* context = nullptr,
                                 const Uneven* uneven = nullptr);

 private:
  friend class Fabric;
  // Where a pipelined meeting (meet_prefix, meet_rooted) is held: the whole machine's chain or a
  // group's, and this VP's seat in it (its rank). Seats, roots and the rounds' ids are ranks.
  struct ChainSeat {
    PipelinedMeeting& chain;
    const GroupInfo* group;  // null: the whole machine
    int rank;
    int size;
    std::uint64_t& calls;                               // this VP's meetings in the chain this run
    [[nodiscard]] inline int vp(int r) const noexcept;  // member r's machine VP id
  };
  [[nodiscard]] inline ChainSeat chain_seat(const GroupInfo* group);  // meeting_wait.hpp
  [[nodiscard]] bool meet_rooted_by_reference(const ChainSeat& place, const MessageTag& tag,
                                              const Rounds& rounds, Flow flow,
                                              std::span<const std::byte> input,
                                              std::span<std::byte> out, Results results,
                                              const Uneven* uneven);
  void claim_root(const ChainSeat& place, std::uint64_t generation, const MessageTag& tag,
                  const char* op) const;
  template <class LastCheck>
  void leave_rooted(const ChainSeat& place, std::uint64_t generation, const Rounds& rounds,
                    const char* op, LastCheck&& last_check, const void* sizes = nullptr);
  void reset_for_run() noexcept;
  // The whole machine's pipelined meetings this VP took a seat in during the last run.
  [[nodiscard]] std::uint64_t pipelined_calls() const noexcept { return pipelined_calls_; }
  void open_span(const char* name, const char* algo, std::uint64_t bytes,
                 std::uint32_t group) noexcept;
  void close_span() noexcept;
  // exchange: in a sendrecv, this VP has posted its receive from dest, whose own send comes at
  // once, or the message is below kExchangeHandOverBytes (channel.hpp): it goes through the ring.
  // work: done by the channel while the receiver copies (Link::try_hand_over_during), or left.
  void post_send(int dest, std::span<const std::byte> data, const MessageTag& tag, double start,
                 bool exchange = false, detail::SideWork* work = nullptr);
  void check_peer(int peer, const char* op, std::size_t bytes);
  [[noreturn, gnu::cold, gnu::noinline]] void throw_bad_peer(int peer, const char* op,
                                                             std::size_t bytes) const;
  void attend(std::uint32_t attention, const char* op);
  // What a disagreement weighs: the whole header, or only the collective and its root (the roles:
  // a wait for a left meeting to conclude, where the members that differ in nothing else have
  // one among them still in the call, whose own check names more, an irregular call's counts).
  enum class Compare : std::uint8_t { header, roles };
  [[nodiscard]] static bool same(const MessageTag& a, const MessageTag& b,
                                 Compare compare) noexcept;
  // In a wait of collective call `tag`: empty while every member of its group that is in (or
  // has left) the same call agrees on its header, else the CollectiveMismatch message naming the
  // headers and the VPs that hold them. Reads the members' published calls (begin_call).
  [[nodiscard]] std::string disagreement(const MessageTag& tag,
                                         Compare compare = Compare::header) const;
  // The members that went through this VP's call `tag` as a pipelined meeting with another
  // collective and went on without it (a rooted call's non-roots, a prefix's lower members), so
  // that their published calls are later ones now: what their seats in this VP's next meeting
  // of the chain show (empty if none did).
  [[nodiscard]] std::string passed_by(const MessageTag& tag, const GroupInfo& group,
                                      Compare compare) const;
  // The run is stuck (this VP waits for src in vain): after Fabric::settle, throws
  // CollectiveMismatch (in a collective) or Deadlock, `head` then what every VP waits for
  // (Fabric::describe_waits); Aborted when another VP failed meanwhile.
  [[noreturn]] void throw_stuck(int src, bool collective, const std::string& head);
  // combined: this VP combines the message into its data, as it lands (fold) or after.
  void recv_into(int src, std::span<std::byte> data, const MessageTag& tag,
                 void (*meanwhile)(void*), void* context, const Fold* fold, bool combined);
  void sendrecv_into(int dest, std::span<const std::byte> out, int src, std::span<std::byte> in,
                     const MessageTag& tag, const Fold* fold, bool combined);
  // post_bytes: the least size at which a receive that waits posts its buffer (the largest
  // size_t: never).
  double receive(Link& channel, int src, std::span<std::byte> data, const MessageTag& tag,
                 bool posted, const Fold* fold, bool combined, std::size_t post_bytes);
  // The post_bytes of a receive alone (not an exchange) of `bytes` from src, once
  // channel_from(src) has been looked up (the rule is in proc.cpp).
  [[nodiscard]] std::size_t post_bytes_from(int src, std::size_t bytes, bool combined) noexcept;
  // The queued message `envelope` (checked against the receive) into data, folded with fold.
  double take_queued(Link& channel, const Envelope& envelope, std::span<std::byte> data,
                     const Fold* fold);
  // Point-to-point messages and collectives' are taken in order apart, as MPI keeps them in
  // contexts apart: a message of the other kind before the one a receive from src waits for is
  // set aside (taken from its channel into aside_), and the next receive of its kind from src
  // takes it first (take_aside). Rare: a program that sends before a collective and receives
  // after it; every receive looks at aside_ only when it holds something.
  struct AsideMessage {
    int src = -1;
    MessageTag tag{};
    double arrival = 0;
    std::vector<std::byte> payload;
  };
  [[nodiscard]] static constexpr bool same_kind(const MessageTag& a, const MessageTag& b) noexcept {
    return (a.kind == 0) == (b.kind == 0);
  }
  // Sets aside the messages of the other kind at the channel's front; returns the first of
  // want's kind, or null where none has come (read it from here: another of the other kind may
  // come after any look at the front).
  [[gnu::noinline]] const Envelope* set_aside(Link& channel, int src, const MessageTag& want);
  // receive() where aside_ holds something (out of line: receive's path stays as lean).
  [[gnu::noinline]] double receive_after_aside(Link& channel, int src, std::span<std::byte> data,
                                               const MessageTag& tag, bool posted, const Fold* fold,
                                               bool combined, std::size_t post_bytes);
  // The same where the front is of want's kind or there is none: a look, no call.
  const Envelope* next_of_kind(Link& channel, int src, const MessageTag& want);
  // The index in aside_ of the first message from src of tag's kind, or aside_.size().
  [[nodiscard]] std::size_t aside_from(int src, const MessageTag& tag) const noexcept;
  // No such message: a receive may post its buffer (a sender hands over only the channel's
  // next message, which must not pass one set aside).
  [[nodiscard]] bool none_aside(int src, const MessageTag& tag) const noexcept {
    return aside_.empty() || aside_from(src, tag) == aside_.size();
  }
  double take_aside(std::size_t at, std::span<std::byte> data, const MessageTag& tag,
                    const Fold* fold);
  // receive() when the message is not here yet (or is not the one expected): waits for it.
  [[gnu::noinline]] double wait_and_receive(Link& channel, int src, std::span<std::byte> data,
                                            const MessageTag& tag, bool posted, const Fold* fold,
                                            bool combined, std::size_t post_bytes);
  [[nodiscard]] const char* operation_name() const noexcept;
  void note_received() noexcept;
  void look() noexcept;  // a blocked VP is about to look at what it waits for (VpState::looks)
  void record(Event::Kind kind, int peer, std::uint64_t bytes, double wall_begin,
              double model_begin, const char* name);
  [[noreturn]] void throw_size_mismatch(int src, const char* op, std::uint64_t got,
                                        std::size_t want) const;
  [[noreturn]] void throw_tag_mismatch(int src, const MessageTag& got, const MessageTag& want);
  enum class Wait : std::uint8_t { ready, aborted, peer_finished, peer_meeting, mismatch };
  // Waits for a message of collective call `tag.sequence` from src (Wait::peer_meeting, with
  // the call src meets in, when src meets in that call or a later one: it will not send).
  template <class Ready>
  Wait wait_until(int src, const MessageTag& tag, std::uint32_t& peer_meeting, Ready&& ready);
  [[noreturn]] void throw_abandoned(int src) const;
  // Throws CollectiveMismatch when peer meets in a collective this VP's call `sequence` will
  // never join (it called that one, or a later one, in shared memory: meet).
  void check_not_meeting(int peer, const MessageTag& tag, const char* what) const;
  [[noreturn]] void throw_meeting_mismatch(int peer, const MessageTag& tag, const char* what,
                                           std::uint32_t meeting) const;
  [[nodiscard]] double departure(int dest);
  void sent(int dest, double start, std::size_t bytes);
  void settle_ports() noexcept;
  void count_route(int dest, int slot, std::uint64_t bytes, std::uint64_t messages = 1) noexcept;
  // The link traffic of this run's meetings, counted once at its end (Fabric::run): the
  // messages of a meeting's rounds are known from its pattern, and routed rounds cross many
  // links, which would cost a meeting more than the meeting itself.
  void count_meetings() noexcept;
  // Where a meet() is held: the whole machine's meeting, or a group's (seated by rank).
  struct MeetingPlace {
    Meeting& meeting;
    const GroupInfo* group;  // null: the whole machine
    int rank;                // this VP's seat
    int size;
  };
  void conclude_meeting(const MeetingPlace& place, const Rounds& rounds, Combine combine,
                        const void* context, std::size_t out_bytes, Results results);
  // A released member's part of meeting `tag` (meet's `part`), then its wait for every other's.
  void do_part(const MeetingPlace& place, const MessageTag& tag, Part part, const void* context);
  // A member of `group` that has finished this run, or -1.
  [[nodiscard]] int finished_member(const GroupInfo& group) const noexcept;
  // Waits, as a VP in a meeting, until done(); `tag`: the call it waits in, for the mismatch
  // check (null: none), compared as `compare` says; `excused()`: a finished VP is no sign of a
  // mismatch; `group`: the group whose members meet (null: the whole machine).
  template <class Done, class Excused>
  void wait_in_meeting(const MessageTag* tag, Done&& done, Excused&& excused,
                       const GroupInfo* group = nullptr, Compare compare = Compare::header);
  // A prefix meeting's chain from step `vp`, which this VP has claimed: that step, then each
  // next one whose VP has come; the last step concludes the meeting and frees its slot.
  void run_prefix_chain(const ChainSeat& place, std::uint64_t generation, int vp, PrefixStep step,
                        const void* context, const Rounds& rounds);
  // A slot of the pipelined meetings (meet_prefix, meet_rooted) for this VP's next one: waits
  // until it is free, then writes this VP's seat (not yet its mark).
  void take_seat(const ChainSeat& place, std::uint64_t generation, const MessageTag& tag,
                 std::size_t bytes, std::span<std::byte> out);
  // Throws CollectiveMismatch when a seat of meeting `generation`, VPs [from, to), holds another
  // header (or byte count) than VP first's.
  void check_seats(const ChainSeat& place, std::uint64_t generation, int first, int from,
                   int to) const;
  // The VP that concludes a pipelined meeting (every VP came): every VP's clock after the
  // rounds, then the slot is free for the meeting slot_count later. `sizes`: Uneven::sizes.
  void conclude_pipelined(const ChainSeat& place, std::uint64_t generation, const Rounds& rounds,
                          const void* sizes = nullptr);
  // A VP leaving a pipelined meeting: its clock (pending: settle_clock) and its counts.
  void leave_pipelined(const ChainSeat& place, std::uint64_t generation, const Rounds& rounds,
                       const char* op, const void* sizes = nullptr);
  // Waits until this VP's clock is settled (meet_prefix) and takes it.
  void settle_clock();
  // A meeting's messages and bytes now, its link traffic at the run's end (count_meetings);
  // group: the group whose members met (null: the whole machine).
  void tally_meeting(const Rounds& rounds, const void* input = nullptr,
                     const GroupInfo* group = nullptr);

  // The last peers' routes and channels, so that a message to a recent peer skips the
  // topology arithmetic and the channel table (channels live as long as the Machine).
  // A route of up to kCachedHops links keeps each link's (from, slot), so that a routed send
  // counts its links without walking the route again (Topology::next_hop, link_slot: 10% of an
  // 8-byte hypercube broadcast on a row of 4).
  static constexpr int kCachedHops = 4;
  struct Route {
    int peer = -1;
    // The link slot from this VP (send side), -1 when not a neighbour; the link slot of the
    // route's first link (send side). 16 bits each, so that a Route is one cache line's size (at
    // 72 bytes a ping-pong of 256 B at p = 2 took 0.071 us against 0.050).
    std::int16_t slot = -1;
    std::int16_t port = -1;
    int hops = 0;
    // Send side: streaming sends left before this VP asks again whether peer keeps up
    // (kSendsBeforeAskingAgain).
    std::uint32_t sends_before_asking = 0;
    Link* channel = nullptr;
    std::array<std::pair<int, int>, kCachedHops> links{};  // (from, slot), when hops <= kCachedHops
    // Send side: the messages this VP had taken when it last sent to peer; receive side: the
    // messages it had sent when it last received from peer alone (not in an exchange). ~0: none
    // yet. Whether peer streams to this VP or this VP to peer (post_send, post_bytes_from).
    std::uint64_t count_at_last = ~std::uint64_t{0};
  };
  static_assert(sizeof(Route) == 64, "a Route fills one cache line");
  static constexpr std::size_t kRoutes = 8;
  Route& route_to(int dest);
  Link& channel_from(int src);
  Link* incoming_if_any(int src) noexcept;
  void count_route(const Route& route, std::uint64_t bytes) noexcept;
  void check_untaken();
  [[noreturn, gnu::cold, gnu::noinline]] void throw_untaken(int dest,
                                                            const MessageTag& theirs) const;
  [[noreturn, gnu::cold, gnu::noinline]] void throw_untaken_earlier(int dest,
                                                                    const MessageTag& theirs) const;

  Fabric* fabric_;
  const Options* options_;  // the fabric's, fixed for its life
  std::array<Route, kRoutes> out_routes_{};
  std::array<Route, kRoutes> in_routes_{};
  int id_;
  int size_;
  int shared_cores_;  // shared_core_count()
  double clock_ = 0;
  std::uint64_t pipelined_calls_ = 0;          // meet_prefix and meet_rooted meetings this run
  std::uint64_t pending_ = 0;                  // 1 + the prefix meeting whose end sets clock_, or 0
  const char* pending_operation_ = nullptr;    // the prefix it was
  PipelinedMeeting* pending_chain_ = nullptr;  // its chain (the machine's, or a group's)
  int pending_seat_ = 0;                       // this VP's seat there
  const GroupInfo* pending_group_ = nullptr;   // its group (null: the whole machine)
  std::vector<double> ports_;                  // all ports: when each outgoing link is free again
  std::unique_ptr<GroupTable> groups_;
  const char* operation_ = nullptr;
  std::size_t element_ = 1;  // Elements
  MessageTag call_{};        // the collective call this VP is in (kind 0: none)
  // The first kWatchedPeers VPs the current collective call sent to and took messages from
  // (check_call_end).
  static constexpr std::size_t kWatchedPeers = 16;
  struct Peers {
    std::array<int, kWatchedPeers> ids{};
    std::size_t count = 0;
    void note(int vp) noexcept {
      for (std::size_t i = count; i-- > 0;)
        if (ids[i] == vp) return;
      if (count < kWatchedPeers) ids[count++] = vp;
    }
    [[nodiscard]] bool holds(int vp) const noexcept {
      for (std::size_t i = 0; i < count; ++i)
        if (ids[i] == vp) return true;
      return false;
    }
  };
  Peers call_destinations_;
  Peers call_sources_;
  std::vector<int> neighbours_;  // this VP's on the machine's topology
  std::string problem_;          // a wait's CollectiveMismatch message (Wait::mismatch)
  int fault_messages_ = -1;      // the messages of this call so far, when a fault hook watches them
  std::uint64_t messages_sent_ = 0;
  std::uint64_t bytes_sent_ = 0;
  std::vector<Event> events_;
  std::vector<CommOp> operations_;
  bool recording_ = false;
  bool may_meet_ = false;  // may_meet(), set for each run
  std::vector<std::size_t> open_spans_;
  // `times` meetings of `count` rounds to to(id, k, p), their Rounds::bytes `bytes` in all
  // (round k's messages: bytes * scale(k, p)).
  struct MeetingTally {
    int (*to)(int id, int round, int p);
    std::size_t (*scale)(int round, int p);
    int count;
    int root;
    bool ring_root;
    std::uint64_t times;
    std::uint64_t bytes;
    std::uint32_t sends;       // this VP's messages in one meeting of the pattern
    std::uint64_t multiplier;  // their bytes, in Rounds::bytes
    std::uint64_t group;       // the group's GroupInfo::serial (0: the whole machine)
    int rank;                  // this VP's rank there, of
    int size;
    std::vector<int> dests;  // the VPs its messages go to, round by round
  };
  std::vector<MeetingTally> meetings_;
  std::size_t last_tally_ = 0;  // the pattern of the last meeting (the next is most often it)
  std::vector<const void*> rooted_inputs_;  // a reduction's root: its fold's inputs and scratch
  std::vector<std::byte> rooted_scratch_;

  Proc proc_;  // the user's face of this VP
  // set_aside's, in the order taken from the channels (last: rarely used, it moves no hot field)
  std::vector<AsideMessage> aside_;
};

// The size of the message in the last SizeMismatch a receive threw on this thread ("the message
// has 12 bytes"), taken once (then kNoSize): a collective rewording the error names it in its
// own elements. Set by the receiver's port, and by a collective's own block check.
inline constexpr std::uint64_t kNoSize = ~std::uint64_t{0};
void note_mismatched_size(std::uint64_t bytes) noexcept;
[[nodiscard]] std::uint64_t take_mismatched_size() noexcept;

// Whether two byte ranges share a byte (std::less: a total order on unrelated pointers): an
// exchange in place (Port::sendrecv_into), a collective's in and out (collectives/src/call.hpp).
[[nodiscard]] inline bool overlaps(std::span<const std::byte> a,
                                   std::span<const std::byte> b) noexcept {
  const std::less<const std::byte*> before;
  return !a.empty() && !b.empty() && before(a.data(), b.data() + b.size()) &&
         before(b.data(), a.data() + a.size());
}

}  // namespace hypercomm::detail
