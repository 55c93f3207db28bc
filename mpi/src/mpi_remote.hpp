// The runtime's Remote over MPI: how the VPs of one process reach those of the others.
//
// Each pass (MpiRemote::pass) forwards what the VPs queued on the channels to VPs of other
// processes (one MPI message each: a header, the envelope, the payload), puts what arrives on the
// channels from the senders, and tells the other processes when a VP of its own finishes and when
// its run aborts. Every protocol message travels on one tag of a duplicated communicator, so
// MPI's non-overtaking rule keeps a sender's messages, its finish and its abort in order; they
// land in receives posted ahead (a pass tests the oldest), and what is too long for those, a
// large message's payload or a long protocol message, follows its header on a second tag.
//
// Who runs the passes depends on the thread level MPI grants. MPI_THREAD_FUNNELED: only the
// thread that called run (the server) talks MPI, and every message crosses from a VP to it and
// back, a switch between threads each way. MPI_THREAD_SERIALIZED or MULTIPLE: the VPs run the
// passes themselves, one at a time (a mutex): a VP that queues a message for another process
// sends it at once, one that waits for such a message polls MPI for it, so a message costs what
// an MPI message costs; the server only naps and looks now and then (a VP asleep in a long wait,
// the deadlock watch), and drives the run's end.
//
// Between processes of one node the messages of the VPs go on rings in shared memory instead
// (node_rings.hpp): the sender writes its message there under its process's mutex, the
// receiver's pass (or the VP that waits for it, even where the server moves the MPI traffic)
// takes it, neither calls MPI; where the server moves the MPI traffic and every message the VPs
// wait for comes on a ring, it naps (vps_take_their_own; 20 ms, woken when a VP needs it, 1 ms
// amid large messages: kQuietNap), so as not to take their cores. A
// channel's messages take one way at a time, so they stay in order: onto the ring only when every
// message sent to that process over MPI has been delivered, over MPI (a message too long for the
// ring, or one behind such) only when the ring is empty. The protocol messages stay on MPI; a VP's
// finish, which follows its messages, has the ring from its process emptied before it counts. A
// message too long for the ring, where the node's processes may read each other's memory
// (NodeRings::in_place), stays in the sender's buffer: a record on the ring says where, and the
// receiving process reads it (process_vm_readv) straight into the receiver's posted buffer, or onto
// the channel when the receiver has not posted within a hold, then marks it read; the sending VP
// waits for that (send_in_place).
//
// A run ends on a process when its VPs have finished, their messages have left, and every VP of
// the other processes is known to have finished: no message can still come. Deadlocks across
// processes: every process reports to process 0 whether its VPs all wait and how many messages
// it has moved; process 0 declares Deadlock when every process has waited, with nothing in
// flight, for the deadlock timeout, and sends the report to the others.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "fabric.hpp"
#include "node_rings.hpp"

namespace hypercomm::mpi::detail {

using hypercomm::detail::Fabric;
using hypercomm::detail::Link;

// Contiguous blocks: process k runs VPs [first(k), first(k + 1)), the first p mod n one more.
struct Blocks {
  int vps = 0;
  int processes = 1;
  [[nodiscard]] int first(int process) const noexcept {
    const int base = vps / processes, extra = vps % processes;
    return process * base + (process < extra ? process : extra);
  }
  [[nodiscard]] int owner(int vp) const noexcept {
    const int base = vps / processes, extra = vps % processes;
    const int big = extra * (base + 1);  // the VPs of the processes that run one more
    return vp < big ? vp / (base + 1) : extra + (vp - big) / base;
  }
};

class MpiRemote final : public hypercomm::detail::Remote {
 public:
  // vps_drive: the VPs may call MPI (one at a time), so they move their own messages. rings:
  // to and from the processes of this node (null or empty: everything over MPI).
  MpiRemote(MPI_Comm comm, Blocks blocks, int rank, bool vps_drive,
            std::unique_ptr<NodeRings> rings);
  ~MpiRemote() override;
  MpiRemote(const MpiRemote&) = delete;
  MpiRemote& operator=(const MpiRemote&) = delete;

  void outgoing() noexcept override;
  void progress(int vp, int src) noexcept override;
  void sleeping() noexcept override;
  void withdraw_post(int vp, int src) noexcept override;
  bool send(int src, int dst, Link& channel, const hypercomm::detail::Envelope& envelope,
            std::span<const std::byte> payload) override;
  void prepare(Fabric& fabric) override;
  void serve(Fabric& fabric) override;
  Report combine(Report local, std::exception_ptr error, const std::string& problem) override;

 private:
  // large: a message's header alone; its payload follows on the payload tag (MpiRemote::send),
  // received straight into a posted receive where there is one. spill: a protocol message too
  // long for a pre-posted receive (aux: its length) follows whole on the payload tag. in_place
  // (on a ring only): a large message left in its sender's buffer, an InPlace after the header
  // says where; the receiving process reads it from there (send_in_place). written (on a ring
  // only): a large message its sender wrote into the receiver's post on the ring's board
  // (write_into_post); the record completes the post.
  enum class Kind : std::uint32_t {
    message,
    finished,
    abort,
    status,
    large,
    spill,
    in_place,
    written
  };
  enum AbortKind : std::uint32_t { kVpError, kDeadlock, kMismatch };
  struct Header {
    Kind kind = Kind::message;
    std::int32_t src = -1;  // message: the sending VP; abort: the VP that failed
    std::int32_t dst = -1;  // message: the receiving VP
    std::uint32_t aux = 0;  // abort: AbortKind; finished: how many VP ids follow
    // (finished: -1, or the process whose abort follows the ids, as a Relay and its text)
    hypercomm::detail::Envelope envelope{};
  };
  struct Relay {  // an abort sent on (abort_relay_): what its own message's header said
    std::int32_t vp = -1;
    std::uint32_t kind = 0;  // AbortKind
  };
  struct InPlace {
    std::uint64_t address = 0;   // of the payload, in the sending process
    std::uint64_t sequence = 0;  // the sender's count of these on the ring (Ring::read_in_place)
  };
  struct Status {                  // what process 0 knows of a process's VPs (Kind::status)
    std::uint64_t progress = 0;    // messages its VPs have taken
    std::uint32_t stalled = 0;     // every unfinished VP of it waits
    std::uint32_t collective = 0;  // and every waiting one waits inside a collective
    std::uint32_t calls = 0;       // PublishedCalls that follow (when stalled)
    std::uint32_t entered = 0;     // collective calls its VPs entered (VpState::entered)
    bool operator==(const Status&) const = default;
  };
  // While a process is stalled it sends, besides a Status when that changes, a beat every tick:
  // process 0 declares a deadlock only once it has heard from every unfinished process after the
  // timeout ran out, so that a process whose server the OS has not run for a while (a loaded
  // machine, a short deadlock_timeout), and which may hold an arrived message it has not yet
  // looked at, is not taken for a stuck one (as the VPs' looks do in one process).
  static constexpr std::uint32_t kBeat = 0xBEA7u;  // Header::aux of a status that is a beat
  // A collective call a VP of the process entered (its published header, VpState::calls), sent
  // with a stalled status: process 0 compares the VPs' headers of one call across processes, as
  // a waiting VP compares those of its own process (Port::disagreement), so that VPs that
  // disagree on a call are reported as such even when one of them went on past it.
  struct PublishedCall {
    std::int32_t vp = -1;
    std::uint32_t unused = 0;
    hypercomm::MessageTag tag{};
  };
  struct Outgoing {
    int src, dst, process;
    Link* channel;
  };
  // A message's bytes; recycled once MPI has sent them, so that a message allocates nothing.
  struct Buffer {
    std::unique_ptr<std::byte[]> bytes;
    std::size_t size = 0;
    std::size_t capacity = 0;
    [[nodiscard]] std::span<std::byte> span() const noexcept { return {bytes.get(), size}; }
  };
  struct InFlight {
    MPI_Request request;
    Buffer data;
  };
  // A receive posted ahead on the protocol tag, from any process, into its own buffer. held: it
  // has received a large message's header whose payload (payload, probed) waits for its
  // receiver to post a receive (MpiRemote::receive_large).
  struct Posted {
    MPI_Request request = MPI_REQUEST_NULL;
    std::unique_ptr<std::byte[]> bytes;
    bool held = false;
    int source = 0;
    int count = 0;
    MPI_Message payload = MPI_MESSAGE_NULL;
    std::chrono::steady_clock::time_point held_since{};
  };

  [[nodiscard]] Buffer buffer(std::size_t size);
  [[nodiscard]] Buffer message(const void* header, std::size_t header_size,
                               std::span<const std::byte> text = {});
  void post(int process, Buffer data);
  void to_all(const Header& header, std::span<const std::byte> text = {});  // every other process
  // Runs a pass now unless another thread is in one, which then runs one more after it: what a
  // VP queued before calling this is on its way when it returns (or will be, by that thread).
  void drive() noexcept;
  // After a VP's turn at MPI outside drive: passes for the VPs that found the mutex taken.
  void passed() noexcept;
  // Which way a message of `bytes` (header and payload) to `process` may take now: the ring to
  // it, MPI, or neither until the other way has emptied (the top of this file says why).
  enum class Way : std::uint8_t { ring, mpi, later };
  [[nodiscard]] Way way_to(int process, std::size_t bytes) const noexcept;
  // A message from `from` over MPI has reached its channel: its sender may use the ring again.
  void delivered_over_mpi(int from) noexcept;
  // Takes what the rings from the node's other processes hold (drain_ring: the one from process
  // `from`), in order; true when it delivered a message to `waiting` (it stops there; -1: none
  // does). `any`: set when it took something.
  [[nodiscard]] bool drain_rings(Fabric& fabric, int waiting, bool& any);
  [[nodiscard]] bool drain_ring(Fabric& fabric, Ring& ring, int from, int waiting, bool& any,
                                bool may_hold = true);
  // A VP of a process whose server moves the MPI traffic takes its messages off the rings.
  void take_from_rings(int vp) noexcept;
  // The ring that the messages of process `from`'s VPs come on, where a VP waiting for one may
  // look at it alone (MpiRemote::progress); nullptr where there is none, or large messages come
  // over MPI.
  [[nodiscard]] Ring* ring_to_look_at(int from) noexcept;
  [[nodiscard]] bool send_small(int src, int dst, Link& channel,
                                const hypercomm::detail::Envelope& envelope,
                                std::span<const std::byte> payload);
  // Under mutex_ (lock), with nothing of this process queued: a large message to a VP of
  // `process` of this node, left in the VP's buffer for that process to read; returns once it
  // has (false: the ring has no room for the record, nothing sent).
  [[nodiscard]] bool send_in_place(int src, int dst, int process,
                                   const hypercomm::detail::Envelope& envelope,
                                   std::span<const std::byte> payload,
                                   std::unique_lock<std::mutex>& lock);
  // The chunks in which a message left in place is copied by both processes (0: by the reader).
  [[nodiscard]] std::size_t shared_chunk_bytes(int src, int dst, std::size_t bytes) const noexcept;
  // The in_place record at the front of the ring from `from`: read into the receiver's post, or
  // held there (its ring waits) for a receiver about to post (unless `may_hold` is false), or
  // read onto the channel (Large says which; dropped: the run has aborted, it is not read).
  enum class Large : std::uint8_t { held, straight, staged, dropped };
  [[nodiscard]] Large read_in_place(Fabric& fabric, int from, const Header& header,
                                    const InPlace& where, bool may_hold);
  // A message of kHeldRecordBytes or more at the front of that ring (`body`, its payload): the
  // same, copied from the ring (never dropped).
  [[nodiscard]] Large take_large_record(Fabric& fabric, int from, const Header& header,
                                        std::span<const std::byte> body, bool may_hold);
  // The post board (BoardSlot), where the node's VPs outnumber its cores: VP vp waits for a large
  // message from VP src of another process of this node, and offers its post on the board of the
  // ring from there (once a wait); withdraw_post takes it back.
  void publish_post(int vp, int src) noexcept;
  // VP src's message to VP dst, which offered its receive on the board and has taken every
  // message src sent it before (`sent_before`): a record that says so put on the ring, then the
  // message written into the post (one copy, by the sender, which runs now, where a message left
  // in place waits for its receiver's turn to be read); false (nothing done) where it cannot be.
  [[nodiscard]] bool write_into_post(int src, int dst, const hypercomm::detail::Envelope& envelope,
                                     std::span<const std::byte> payload, std::uint64_t sent_before);
  // The written record at the front of the ring from `from`: completes the post once the
  // message is there (held until then; dropped: the run has aborted).
  [[nodiscard]] Large take_written(Fabric& fabric, Ring& ring, int from, const Header& header,
                                   bool may_hold);
  // Under mutex_: the messages queued on out's channel put on the ring to its process, oldest
  // first, while they take it; true when none is left.
  [[nodiscard]] bool ring_queued(const Outgoing& out);
  // VP src's count of its messages to VP dst in this run, before this one (which it counts).
  [[nodiscard]] std::uint64_t count_sent(int src, int dst) noexcept;
  // Under mutex_ (lock): a sending VP's wait for its large message to be taken (done()).
  template <class Done>
  void wait_moving_others(std::unique_lock<std::mutex>& lock, Done&& done);
  // Under mutex_; true when something moved. `watching`: the server's passes also run the
  // deadlock watch. `waiting`: the VP of this process that runs the pass while it waits for a
  // message, or -1 (see receive_all). `arrivals`: false to leave MPI's arrivals for a later pass.
  [[nodiscard]] bool pass(Fabric& fabric, bool watching, int waiting = -1, bool arrivals = true);
  // pass(*fabric_, watching, waiting); MPI_Abort when MPI fails.
  void locked_pass(bool watching, int waiting = -1) noexcept;
  // Where MPI itself failed (or a message too large for it) under a noexcept caller: nothing can
  // reach the other processes now; says so and calls MPI_Abort.
  [[noreturn]] void abort_all(const std::exception& error) const noexcept;
  void wake_server() noexcept;
  // Wakes the server only from a long nap (kQuietNap), cheap enough for every look of a VP: a
  // missed wake-up costs a nap, never a message.
  void call_server() noexcept;
  // Whether a VP of this process sleeps waiting for a VP of another process (the server then
  // polls MPI for it rather than nap).
  [[nodiscard]] bool remote_sleeper(const Fabric& fabric) const noexcept;
  // Where the server moves the MPI traffic: whether every message this process's VPs wait for
  // comes on a ring, which they take off themselves, awake (the server then naps rather than
  // polls, and looks at MPI only every kQuietLook).
  [[nodiscard]] bool vps_take_their_own(const Fabric& fabric) const noexcept;
  // True when something moved; `drained`: nothing is left queued (see kInFlight).
  [[nodiscard]] bool forward_outgoing(Fabric& fabric, bool& drained);
  void add_outgoing(Fabric& fabric);
  void post_receive(Posted& slot);
  void post_taken();
  // Takes what has arrived, in order; returns early, once it has delivered a message to
  // `waiting` (which then need not wait for the tests of the receives after it).
  [[nodiscard]] bool receive_all(Fabric& fabric, int waiting);
  // The next message on the payload tag from `from` (a large message's payload or a spill).
  [[nodiscard]] int probe_payload(int from, MPI_Message& found);
  // True when it delivered a message to `waiting` (which polls: it is not woken). from_ring:
  // it came on the ring from `from`, not over MPI.
  bool handle(Fabric& fabric, int from, std::span<const std::byte> data, int waiting = -1,
              bool from_ring = false);
  // held: the payload waits, in slot, for a receiver about to post its receive; straight: it
  // went into the receiver's posted buffer; staged: onto the channel.
  [[nodiscard]] Large receive_large(Fabric& fabric, Posted& slot, const Header& header);
  void complete_sends(bool wait);
  void announce_abort(Fabric& fabric);
  // An abort from `process` (its VP `vp`, or -1; an AbortKind; its text), first or sent on.
  void aborted_by(Fabric& fabric, int process, int vp, std::uint32_t kind,
                  std::span<const std::byte> body);
  void watch(Fabric& fabric, std::chrono::steady_clock::time_point now);
  void note_status(int process, const Status& status, std::string text,
                   std::vector<PublishedCall> calls, std::chrono::steady_clock::time_point now);
  // This process's VPs' published calls.
  [[nodiscard]] std::vector<PublishedCall> published_calls(const Fabric& fabric) const;
  // Process 0: CollectiveMismatch's text where the published calls of the processes' VPs hold
  // different headers for one call, else empty.
  [[nodiscard]] std::string published_disagreement(const Fabric& fabric) const;
  void idle(unsigned& idle_rounds) noexcept;
  // The server's wait while the VPs move their messages (quiet: see vps_take_their_own).
  void nap(const Fabric& fabric, bool quiet = false) noexcept;
  void note_vp_pass() noexcept {  // under mutex_
    vp_passes_.store(vp_passes_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void serve_until_done(Fabric& fabric, std::chrono::nanoseconds grace);

  MPI_Comm comm_ = MPI_COMM_NULL;
  Blocks blocks_;
  int rank_ = 0;
  int first_ = 0, last_ = 0;  // this process's VPs

  const bool vps_drive_;
  const std::unique_ptr<NodeRings> rings_;  // null where the node has no rings

  // The VPs wake the serving thread when they queue for another process and it sleeps, and from
  // its long naps where the VPs move their messages (kQuietNap) when they need it again.
  std::atomic<std::uint32_t> outbox_{0};
  enum Sleep : std::uint32_t { kAwake = 0, kNapping = 1, kQuietNapping = 2 };
  std::atomic<std::uint32_t> sleeping_{kAwake};

  // Passes run one at a time, under mutex_; everything below is touched only under it (or by the
  // server before it sets serving_ and after it clears it).
  std::mutex mutex_;
  std::atomic<bool> requested_{false};  // a thread found mutex_ taken: its holder passes again
  bool serving_ = false;                // a run is being served: the VPs may pass
  bool done_ = false;                   // every VP everywhere has finished
  bool room_wanted_ = false;            // the last pass left messages queued for want of room
  // Passes and sends by the VPs (the server naps long while they run them), and the count the
  // server saw last (its own).
  std::atomic<std::uint64_t> vp_passes_{0};
  std::uint64_t vp_passes_seen_ = 0;
  Fabric* fabric_ = nullptr;
  std::vector<Buffer> spare_;         // sent messages' buffers, for the next ones
  std::vector<int> finished_;         // VPs seen finished, not yet announced
  std::uint32_t remaining_seen_ = 0;  // Fabric::remaining at the last look for them
  // Messages of the VPs sent over MPI, by process (a ring's delivered_over_mpi catches up).
  std::vector<std::uint64_t> sent_over_mpi_;
  // Messages left in place for each process (InPlace::sequence), and, from each, since when the
  // large message at the front of its ring (left in place or on it) has been held (a default
  // time point: none is).
  std::vector<std::uint64_t> sent_in_place_;
  std::vector<std::chrono::steady_clock::time_point> held_since_;
  // For each VP of this process, the VP its message left in place goes to while it waits for
  // the read (-1: none).
  std::vector<int> in_place_to_;
  // The post board (write_into_post): on where large messages are read in place. For each VP
  // of this process, the post it offered (ring: none), and its count of the messages it sent to
  // each VP of the machine in this run (where run_ differs, none yet).
  struct Published {
    Ring* ring = nullptr;
    int src = -1;
    std::uint64_t state = 0;  // the slot's state as posted
  };
  struct Sent {
    std::uint64_t run = 0;
    std::uint64_t count = 0;
  };
  bool board_ = false;
  std::vector<Published> published_;
  std::vector<Sent> sent_to_;
  std::uint64_t run_ = 0;  // written by prepare, read by the VPs

  // Per run.
  std::vector<Outgoing> outgoing_;  // this process's channels to VPs of other processes
  std::size_t channels_seen_ = 0;   // the fabric's channels looked at for outgoing_
  std::uint64_t outgoing_epoch_ = ~0ull;
  std::deque<InFlight> in_flight_;
  std::vector<bool> announced_;   // this process's VPs whose finish was sent
  int remote_finished_ = 0;       // VPs of other processes known to have finished
  std::uint64_t delivered_ = 0;   // messages put on this process's channels
  bool abort_announced_ = false;  // an abort was sent or received
  // The abort received from another process, sent on with this process's finishes: the VPs it
  // released finish, and a process that hears of their finish before the abort (MPI orders only
  // each sender's messages) must not find them gone for no reason (a VP waiting for one of them
  // would report the collectives mismatched, not Aborted).
  std::vector<std::byte> abort_relay_;  // a Relay and the text; empty: none heard of
  int relay_from_ = -1;                 // the process whose abort it is
  std::chrono::steady_clock::time_point abort_since_{};
  std::vector<std::byte> staging_;
  // Receives posted ahead, matched in the order posted (MPI's rule), so taken in that order:
  // next_posted_ is the oldest. A pass tests it rather than probe (a matched probe that finds
  // nothing costs several times a test, and a posted receive saves the copy out of MPI).
  std::vector<Posted> posted_;
  std::size_t next_posted_ = 0;
  std::size_t taken_ = 0;  // receives taken but not yet posted again (post_taken)
  // The deadlock watch (statuses go only to process 0, and only while this process has a VP
  // whose finish it has not sent: so none is left unreceived when process 0's run ends).
  std::chrono::steady_clock::time_point next_tick_{};
  Status last_status_{};
  bool status_sent_ = false;
  std::vector<Status> statuses_;  // process 0: each process's last report
  std::vector<std::string> wait_texts_;
  std::vector<std::vector<PublishedCall>> stalled_calls_;     // process 0: each one's, when stalled
  std::vector<std::chrono::steady_clock::time_point> heard_;  // process 0: each one's last word
  std::vector<int> finished_of_;  // process 0: how many VPs of each process have finished
  std::chrono::steady_clock::time_point quiet_since_{};
  std::chrono::steady_clock::time_point arrivals_looked_{};  // the server's last receive_all
  // When a message left in place was last read, or one of this process's left in place
  // (steady_clock ticks), for the server's naps.
  std::atomic<std::chrono::steady_clock::rep> large_read_at_{0};
  std::atomic<std::chrono::steady_clock::rep> large_sent_at_{0};
};

}  // namespace hypercomm::mpi::detail
