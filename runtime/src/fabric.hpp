// What the VPs of one Machine share: channels, per-VP wait words, link counters, the abort and
// error state, and the VP threads themselves. A VP's port (port.hpp) is the only way a body or a
// collective reaches it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <hypercomm/export.hpp>
#include <hypercomm/options.hpp>
#include <hypercomm/proc.hpp>
#include <hypercomm/report.hpp>
#include <hypercomm/topology.hpp>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "channel.hpp"
#include "futex.hpp"
#include "group_info.hpp"
#include "meetings.hpp"
#include "port.hpp"
#include "straight_runs.hpp"
#include "transport.hpp"
#include "vp_state.hpp"

namespace hypercomm::detail {

// The traffic on one directed link. A VP counts its own sends to a neighbour in the `own` pair,
// which only it writes (a plain load and store, no locked instruction that would wait for the
// message's own stores to drain); a routed message is counted on every link of its route by its
// sender, in the `routed` pair, which several VPs may add to.
struct alignas(32) LinkCounter {
  std::atomic<std::uint64_t> own_messages{0};
  std::atomic<std::uint64_t> own_bytes{0};
  std::atomic<std::uint64_t> routed_messages{0};
  std::atomic<std::uint64_t> routed_bytes{0};
  [[nodiscard]] std::uint64_t messages() const noexcept {
    return own_messages.load(std::memory_order_relaxed) +
           routed_messages.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t bytes() const noexcept {
    return own_bytes.load(std::memory_order_relaxed) + routed_bytes.load(std::memory_order_relaxed);
  }
  void clear() noexcept {
    for (auto* c : {&own_messages, &own_bytes, &routed_messages, &routed_bytes})
      c->store(0, std::memory_order_relaxed);
  }
};
// Two counters to a cache line, each VP's row a whole number of lines: a VP counting its
// sends never shares a line with another VP's row.
inline constexpr std::size_t kCountersPerLine = 2;
struct alignas(64) LinkCounterLine {
  LinkCounter counters[kCountersPerLine];
};

// The marks of the routed messages' straight runs on a grid machine (Fabric::count_straight_run):
// at the link where a run begins and after the link where it ends, so that a route of any length
// costs a sender a few additions; Fabric::collect sums them along each line.
struct RunMark {
  std::atomic<std::uint64_t> messages{0};
  std::atomic<std::uint64_t> bytes{0};
  void add(std::uint64_t m, std::uint64_t b) noexcept {
    messages.fetch_add(m, std::memory_order_relaxed);
    bytes.fetch_add(b, std::memory_order_relaxed);
  }
};

using ChannelRow = std::vector<std::atomic<Link*>>;

class Fabric;
class Port;

// The VPs of other processes (mpi/): a Fabric whose machine spans several processes runs its own
// VPs [first, last) as threads and reaches the others through a Remote, which carries their
// messages in and out of this process's channels: a message to a VP of another process is queued
// on the channel to it as any other, and the Remote takes it from there; one from another process
// is put on the channel from its sender by the Remote, the channel's only producer.
// (HYPERCOMM_INTERNAL: exported from a shared libhypercomm for hypercomm::mpi.)
class HYPERCOMM_INTERNAL Remote {
 public:
  virtual ~Remote() = default;
  // A VP of this process queued a message for a VP of another process, or finished.
  virtual void outgoing() noexcept = 0;
  // VP `vp` of this process waits for a message from VP `src` of another process: move what can
  // be moved now, if the Remote lets the VPs do that (it returns at once otherwise, or when
  // another thread is moving messages).
  virtual void progress(int /*vp*/, int /*src*/) noexcept {}
  // A VP of this process goes to sleep waiting for a message from a VP of another process: from
  // now on someone else must look for it.
  virtual void sleeping() noexcept {}
  // VP `vp` of this process no longer waits for a message from VP `src` of another process (it
  // is here, or the wait failed): a post it offered there is withdrawn, or, where a sender has
  // taken it, completed (Link::own_post).
  virtual void withdraw_post(int /*vp*/, int /*src*/) noexcept {}
  // VP src sends a message to VP dst of another process itself, straight from its buffer, after
  // what it queued on `channel` before: returns when the buffer may be used again, true; false
  // when the Remote takes it only queued (the VP queues it and notifies dst).
  virtual bool send(int /*src*/, int /*dst*/, Link& /*channel*/, const Envelope& /*envelope*/,
                    std::span<const std::byte> /*payload*/) {
    return false;
  }
  // Called by Fabric::run before it starts the VPs, which may pass (Remote::progress) at once:
  // the thread that calls serve after it shares a core with them where the process has one
  // (mpirun --bind-to core), and got it back only when they slept (2 ms into a run).
  virtual void prepare(Fabric& /*fabric*/) {}
  // Runs on the thread that called Fabric::run while the VPs run, in place of the local
  // watchdog: moves messages, finished VPs, aborts and the deadlock watch between the processes.
  // Returns when every VP of every process has finished and every message has arrived.
  virtual void serve(Fabric& fabric) = 0;
  // Every process's part of the run, once it is over, as one Report on every process: every
  // process takes part, failed or not; rethrows this process's error, else throws the error of
  // another process's part (`problem`: a leftover message, or empty).
  virtual Report combine(Report local, std::exception_ptr error, const std::string& problem) = 0;
};

// Which VPs of the machine run in this process, and what reaches the others.
struct Placement {
  int first = 0;
  int last = -1;  // -1: every VP
  Remote* remote = nullptr;
  // Other processes on this node: how many threads they and this one run there (VPs and
  // communication threads), and where this process's VPs start among the node's VPs, so that
  // the processes of one node pin their VPs to different cores and wait as VPs that share them.
  int node_threads = 0;
  int node_offset = 0;
  int node_cpus = 0;  // the CPUs the node's processes may run on, all together (0: this one's)
  // Whether the thread that serves the Remote is busy while the VPs run (it moves every message),
  // so that it counts as one more thread on this process's cores; not when the VPs move their own
  // messages (Remote::progress) and it only naps between looks.
  bool busy_server = true;
  // The cores automatic takes the VPs to share (Fabric::shared_core_count), which every process
  // must take alike: agreed by the processes (-1: this process's own, shared_core_count).
  int shared_cores = -1;
  // The VPs of the node's processes, all together (0: this process's alone).
  int node_vps = 0;
};

class HYPERCOMM_INTERNAL Fabric {
 public:
  Fabric(Topology topology, Options options, Placement placement = {});
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  Report run(const std::function<void(Proc&)>& body);

  [[nodiscard]] const Topology& topology() const noexcept { return topology_; }
  [[nodiscard]] const Options& options() const noexcept { return options_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  // The VPs this process runs, [first_vp, last_vp); all of them unless distributed.
  [[nodiscard]] int first_vp() const noexcept { return first_; }
  [[nodiscard]] int last_vp() const noexcept { return last_; }
  [[nodiscard]] bool local(int vp) const noexcept { return vp >= first_ && vp < last_; }
  // The machine spans several processes (mpi/): meetings are off, and the run is served by the
  // Remote.
  [[nodiscard]] bool distributed() const noexcept { return remote_ != nullptr; }
  [[nodiscard]] Remote* remote() const noexcept { return remote_; }

  // The channel src -> dst, created on first use.
  // The channel src -> dst if a message has ever needed it, else null (nothing to read there).
  [[nodiscard]] Link* existing_channel(int src, int dst) const noexcept {
    const ChannelRow* row = rows_[static_cast<std::size_t>(src)].load(std::memory_order_acquire);
    return row == nullptr ? nullptr
                          : (*row)[static_cast<std::size_t>(dst)].load(std::memory_order_acquire);
  }
  [[nodiscard]] Link& channel(int src, int dst) {
    if (Link* c = existing_channel(src, dst)) return *c;
    return create_channel(src, dst);
  }
  [[nodiscard]] VpState& state(int vp) noexcept { return states_[static_cast<std::size_t>(vp)]; }
  [[nodiscard]] const VpState& state(int vp) const noexcept {
    return states_[static_cast<std::size_t>(vp)];
  }
  [[nodiscard]] std::span<const VpState> states() const noexcept {
    return {states_.get(), static_cast<std::size_t>(size_)};
  }
  [[nodiscard]] bool aborted() const noexcept {
    return (attention_.load(std::memory_order_acquire) & kAborted) != 0;
  }
  // Nonzero when a send or receive must look closer: the run is aborted (kAborted), or a test's
  // fault hook watches some VP's messages (kWatching each; runtime/src/faults.hpp).
  [[nodiscard]] std::uint32_t attention() const noexcept {
    return attention_.load(std::memory_order_acquire);
  }
  static constexpr std::uint32_t kAborted = 1;
  static constexpr std::uint32_t kWatching = 2;
  void watch_messages(bool on) noexcept {
    if (on)
      attention_.fetch_add(kWatching, std::memory_order_seq_cst);
    else
      attention_.fetch_sub(kWatching, std::memory_order_seq_cst);
  }
  // Every VP's wait, for Deadlock and CollectiveMismatch reports: "VP 1 waits in recv for VP 0,
  // which has already finished; VP 2 ...".
  [[nodiscard]] std::string describe_waits() const;
  // A VP that found the run stuck (its peer finished): waits until every unfinished VP is
  // blocked too, at most a short while, so that describe_waits shows the whole picture; false
  // when the run was aborted meanwhile.
  [[nodiscard]] bool settle() const;
  [[nodiscard]] Meeting& meeting() noexcept { return meeting_; }
  // The meeting of group g's members (made by the first member to ask, for this run; a VP keeps
  // it in its GroupInfo).
  [[nodiscard]] Meeting& group_meeting(const GroupInfo& g);
  // Wakes the sleepers of every meeting and chain (an abort, a finishing VP).
  void ring_every_bell() noexcept;
  // Where the VPs of a meeting or chain of `group` (nullptr: the whole machine) sleep: its
  // Meeting's signal and sleepers. One word for every group made every release wake every
  // sleeper of every group (256 subcube meetings of 4096 VPs: 1-2 s a run instead of 0.1).
  // An abort and a finishing VP ring every bell (Fabric::fail, Fabric::finish).
  [[nodiscard]] Meeting& bell(const GroupInfo* group) {
    return group == nullptr ? meeting_ : group_meeting(*group);
  }
  // The pipelined meetings' chain of group g's members (as group_meeting).
  [[nodiscard]] PipelinedMeeting& group_chain(const GroupInfo& g);
  // Group g's chain if a member has made it, else null (makes none: Port::passed_by).
  [[nodiscard]] const PipelinedMeeting* find_group_chain(const GroupInfo& g);
  [[nodiscard]] PipelinedMeeting& pipelined_meeting() noexcept { return pipelined_meeting_; }
  // A VP that has finished this run, or -1.
  [[nodiscard]] int finished_vp() const noexcept;

  // After publishing a message for vp: wake it if it sleeps (a VP of another process: tell the
  // Remote).
  void notify(int vp) noexcept;
  // VP vp waits for a message from src: when src runs in another process, let the Remote move
  // messages (Remote::progress); true when it did (the message may be here now).
  bool progress_from(int vp, int src) noexcept {
    if (remote_ == nullptr || local(src)) return false;
    remote_->progress(vp, src);
    return true;
  }
  void sleeping_on(int src) noexcept {
    if (remote_ != nullptr && !local(src)) remote_->sleeping();
  }
  void withdraw_post(int vp, int src) noexcept {
    if (remote_ != nullptr && !local(src)) remote_->withdraw_post(vp, src);
  }

  // ---- for the Remote (distributed runs)
  // The first error wins; releases every VP of this process. `vp`: the VP that threw it, or -1
  // for an error from outside the VPs (another process's abort, the deadlock watch).
  void fail(std::exception_ptr error, int vp) noexcept;
  // The VP whose error aborted this run here, or -1 (none, or it came from outside the VPs).
  [[nodiscard]] int failed_vp() const noexcept {
    return failed_vp_.load(std::memory_order_acquire);
  }
  // The error this run failed with here (after aborted()), or null.
  [[nodiscard]] std::exception_ptr error() {
    const std::lock_guard lock(error_mutex_);
    return error_;
  }
  // VP vp of another process has finished: whoever here waits for it finds out.
  void remote_finished(int vp) noexcept;
  // The VPs of this process that have not finished.
  [[nodiscard]] std::uint32_t remaining() const noexcept {
    return remaining_.load(std::memory_order_acquire);
  }
  // Grows whenever a channel is created (the Remote then looks at the new ones).
  [[nodiscard]] std::uint64_t channel_epoch() const noexcept {
    return channel_epoch_.load(std::memory_order_acquire);
  }
  // Calls f(src, dst, channel) for each channel created after the first `seen` (in the order of
  // creation) and returns how many there are now: the Remote's way to its channels to other
  // processes, each looked at once however many VPs and channels the machine has.
  template <class F>
  std::size_t channels_since(std::size_t seen, F&& f) {
    const std::lock_guard lock(create_mutex_);
    for (std::size_t i = seen; i < channels_.size(); ++i)
      f(channels_[i].src, channels_[i].dst, *channels_[i].channel);
    return channels_.size();
  }
  // Whether every unfinished VP of this process waits (none runs) and has looked at what it
  // waits for since the last message was taken or a VP was seen running (VpState::looks);
  // `progress` sums their received messages; `in_collectives`: every waiting one waits inside
  // a collective. One caller (the watchdog, or the MPI server thread), which owns look_*.
  [[nodiscard]] bool stalled(std::uint64_t& progress, bool& in_collectives);
  // The local link counters, for the Report of the whole machine: (from, slot) -> counts.
  [[nodiscard]] const LinkCounter& link_counter(int from, int slot) const noexcept {
    const std::size_t i = link_index(from, slot);
    return links_[i / kCountersPerLine].counters[i % kCountersPerLine];
  }
  [[nodiscard]] LinkCounter& link_counter(int from, int slot) noexcept {
    const std::size_t i = link_index(from, slot);
    return links_[i / kCountersPerLine].counters[i % kCountersPerLine];
  }
  [[nodiscard]] std::size_t link_index(int from, int slot) const noexcept {
    return static_cast<std::size_t>(from) * link_stride_ + static_cast<std::size_t>(slot);
  }
  // `messages` messages of `bytes` bytes in all on the link from -> to (a hop of a routed
  // message; any VP may call it).
  void count_link(int from, int to, std::uint64_t bytes, std::uint64_t messages = 1) noexcept {
    count_routed_link(from, topology_.link_slot(from, to), bytes, messages);
  }
  // The same for the link in `slot` of VP from (Topology::link_slot).
  void count_routed_link(int from, int slot, std::uint64_t bytes,
                         std::uint64_t messages = 1) noexcept {
    LinkCounter& c = link_counter(from, slot);
    c.routed_messages.fetch_add(messages, std::memory_order_relaxed);
    c.routed_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  // `messages` messages of `bytes` bytes in all on every link of `run` (a ring, linear array or
  // mesh): marks where the run begins and after where it ends, along its line of the grid
  // (a difference array, unsigned arithmetic modulo 2^64; a run that wraps round a torus line
  // is the two pieces either side of position 0). Any VP may call it.
  void count_straight_run(const detail::StraightRun& run, std::uint64_t bytes,
                          std::uint64_t messages) noexcept {
    const bool along_row = run.slot < 2;  // slots 0, 1: the column changes
    const int extent = along_row ? topology_.cols() : topology_.rows();
    const int position = along_row ? topology_.col_of(run.from) : topology_.row_of(run.from);
    int first = run.slot % 2 == 0 ? position : position - run.length + 1;  // lowest position
    if (first < 0) first += extent;
    const int line_start = along_row ? run.from - position : topology_.col_of(run.from);
    const int step = along_row ? 1 : topology_.cols();  // from one position of the line to the next
    const auto mark = [&](int at) noexcept -> RunMark& {
      return run_marks_[link_index(line_start + at * step, run.slot)];
    };
    mark(first).add(messages, bytes);
    if (const int end = first + run.length; end < extent) {
      mark(end).add(0 - messages, 0 - bytes);
    } else if (end > extent) {
      mark(0).add(messages, bytes);
      mark(end - extent).add(0 - messages, 0 - bytes);
    }
  }
  // The calling VP `from`'s own send on its link in slot `slot` (Topology::link_slot); only VP
  // `from` may call it.
  void count_own_link(int from, int slot, std::uint64_t bytes,
                      std::uint64_t messages = 1) noexcept {
    LinkCounter& c = link_counter(from, slot);
    c.own_messages.store(c.own_messages.load(std::memory_order_relaxed) + messages,
                         std::memory_order_relaxed);
    c.own_bytes.store(c.own_bytes.load(std::memory_order_relaxed) + bytes,
                      std::memory_order_relaxed);
  }
  [[nodiscard]] double seconds_since_start() const noexcept;

  // How long a waiting VP spins, then how long it keeps yielding its core, before it sleeps.
  [[nodiscard]] std::chrono::nanoseconds spin_time() const noexcept { return spin_time_; }
  // The same for a VP waiting for src: where VPs share cores and src is a VP of another process
  // pinned to another core of this node, it may be running now, its message a cache-line
  // transfer away: spin about what a switch there and back costs before yielding
  // (cross_core_spin_).
  [[nodiscard]] std::chrono::nanoseconds spin_time(int vp, int src) const noexcept {
    if (spin_time_.count() > 0 || local(src) || cross_core_spin_.count() == 0) return spin_time_;
    const int mine = vp_cpus_[static_cast<std::size_t>(vp)];
    const int theirs = vp_cpus_[static_cast<std::size_t>(src)];
    return mine >= 0 && theirs >= 0 && mine != theirs ? cross_core_spin_ : spin_time_;
  }
  static constexpr std::chrono::nanoseconds kCrossCoreSpin{4000};
  // How long a VP waits for the next run, and the thread that called run for the run's end,
  // before sleeping (between_runs_spin_).
  static constexpr std::chrono::nanoseconds kBetweenRunsSpin{50000};
  static constexpr std::size_t kMostYieldingPerCore = 128;
  // Whether the node's VPs (of every process there) are more than twice its cores: each core
  // then runs three or more in turn, and a VP that waits for one of another process neither
  // spins (spin_time) nor looks at more than the ring its message comes on (MpiRemote::progress).
  [[nodiscard]] bool node_crowded() const noexcept { return node_crowded_; }
  [[nodiscard]] static constexpr bool crowded(std::size_t node_vps,
                                              std::size_t node_cpus) noexcept {
    return node_vps > 2 * node_cpus;
  }
  // The CPU each VP is pinned to, -1 where unknown or on another node: this process's own, or,
  // over several processes, every VP's (set by the Remote's owner before the first run).
  [[nodiscard]] std::span<const int> vp_cpus() const noexcept { return vp_cpus_; }
  void set_vp_cpus(std::vector<int> cpus) noexcept { vp_cpus_ = std::move(cpus); }
  [[nodiscard]] std::chrono::nanoseconds yield_time() const noexcept { return yield_time_; }
  // How long a sleeping VP waits before it looks again unwoken: in a collective (Waiter::kRecheck,
  // scaled) or outside one (kIdleRecheck, scaled); see Fabric's constructor.
  [[nodiscard]] std::chrono::nanoseconds recheck_time(bool in_collective) const noexcept {
    return in_collective ? recheck_time_ : idle_recheck_time_;
  }
  // A sender of this many bytes or more waits a while for its receiver to post (channel.hpp),
  // in an exchange or not.
  [[nodiscard]] std::size_t rendezvous_bytes(bool exchange) const noexcept {
    return exchange ? rendezvous_bytes_ : one_way_rendezvous_bytes_;
  }
  // A send alone of this many bytes or more waits a while for its receiver where that has
  // kMostQueuedSlots of its messages still to take (channel.hpp; none such: the largest size_t).
  [[nodiscard]] std::size_t bounded_queue_bytes() const noexcept { return bounded_queue_bytes_; }
  // The same from this many bytes where the receiver keeps up (Link::receiver_keeps_up), in an
  // exchange (the sender has posted its own receive from the receiver) or not.
  [[nodiscard]] std::size_t keeping_up_rendezvous_bytes(bool exchange) const noexcept {
    return oversubscribed() ? rendezvous_bytes_
           : exchange       ? kKeepingUpRendezvousBytes
                            : one_way_keeping_up_bytes_;
  }
  // A send alone of this many bytes or more is handed straight to its receiver where that has
  // posted (channel.hpp's kCopiedHandOverBytes; VPs that share cores: kHandOverBytes).
  [[nodiscard]] std::size_t hand_over_bytes() const noexcept {
    return oversubscribed() ? kHandOverBytes : kCopiedHandOverBytes;
  }
  // A sender that streams (Port::post_send) to a receiver that keeps up waits for its post from
  // this many bytes, below keeping_up_rendezvous_bytes(false) (channel.hpp).
  [[nodiscard]] std::size_t streaming_wait_bytes() const noexcept { return streaming_wait_bytes_; }
  [[nodiscard]] bool oversubscribed() const noexcept { return core_share_ > 0; }
  // The cores the VPs share when they outnumber them, else 0: automatic then weighs the work of
  // all VPs over those cores (select.cpp). What one process's CPUs make of the topology
  // (hypercomm::shared_core_count), so that a program chooses alike in one process and over
  // several, whose processes agree on it (Placement::shared_cores).
  [[nodiscard]] int shared_core_count() const noexcept { return shared_core_count_; }
  // The sleep/wake handshake's fences (futex.hpp): read once, so that both halves agree.
  [[nodiscard]] bool asymmetric_fences() const noexcept { return asymmetric_fences_; }
  // Oversubscribed: whether another VP pinned to vp's core can use it now (it is not blocked,
  // or a message came for it), so that a waiting vp should yield rather than spin. Without
  // pinning, or with many VPs per core, always true.
  [[nodiscard]] bool core_wanted(int vp) const noexcept;

 private:
  Link& create_channel(int src, int dst);
  void vp_main(int id);
  void mark_finished(int vp) noexcept;  // status kFinished; wakes this process's waiters for it
  void finish(int id) noexcept;
  void watch(std::chrono::steady_clock::time_point start);
  [[nodiscard]] bool all_waiting_in_collectives() const;
  // This process's VPs' part of the Report; `complete` adds what needs the whole machine.
  [[nodiscard]] Report collect(double wall_seconds) const;
  [[nodiscard]] Report complete(Report r) const;

  Topology topology_;
  Options options_;
  int size_;
  int first_ = 0;  // this process's VPs: [first_, last_)
  int last_ = 0;
  Remote* remote_ = nullptr;
  Transport transport_;  // how messages move between this process's VPs (transport.hpp)
  std::size_t channel_capacity_;
  std::chrono::nanoseconds spin_time_;
  // kCrossCoreSpin where a core of the node holds at most two of its VPs, else none: with k VPs
  // a core, the VP on the other core runs about 1/k of the time, and from three a core the spin
  // costs more than it saves (one VP a process on the 2 cores, all-reduce and all-gather of 8 B,
  // 2026-11-28: over 4 processes 0.87-1.10x Open MPI's time with the spin, 1.59-1.67x without;
  // over 6 alike; over 8 and 16, 2.10-3.48x with it, 1.29-2.22x without, two rounds each).
  std::chrono::nanoseconds cross_core_spin_{0};
  bool node_crowded_ = false;
  std::chrono::nanoseconds yield_time_;
  // Where this process holds all the machine's VPs, a VP waits this long for the next run, and
  // the thread that calls run for the run's end, before sleeping, so that runs in a loop cost no
  // futex wake-ups: spinning where a core is left for that thread (this process's VPs fewer
  // than its cores), yielding where none is (between_runs_yield_).
  std::chrono::nanoseconds between_runs_spin_{0};
  bool between_runs_yield_ = false;
  void between_runs_pause() const noexcept {
    if (between_runs_yield_)
      std::this_thread::yield();
    else
      cpu_relax();
  }
  std::chrono::nanoseconds recheck_time_;       // recheck_time(true)
  std::chrono::nanoseconds idle_recheck_time_;  // recheck_time(false)
  // When a finishing VP may next wake the meetings' sleepers (Fabric::finish; steady_clock ticks).
  std::atomic<std::int64_t> finish_wake_due_{0};
  std::size_t rendezvous_bytes_;
  std::size_t one_way_rendezvous_bytes_;  // a send alone's (not an exchange's)
  std::size_t bounded_queue_bytes_;       // bounded_queue_bytes()
  // A send alone to a receiver that keeps up waits from this many bytes (channel.hpp).
  std::size_t one_way_keeping_up_bytes_;
  std::size_t streaming_wait_bytes_ = ~std::size_t{0};  // streaming_wait_bytes()
  std::size_t shared_copy_bytes_;  // the channels' (channel.hpp), chosen with the wait policy
  int core_share_ = 0;             // oversubscribed: VPs per core (else 0)
  int shared_core_count_ = 0;      // shared_core_count()
  const bool asymmetric_fences_ = ::hypercomm::detail::asymmetric_fences();
  int core_count_ = 1;         // cores the VPs are pinned to, round robin
  bool shared_cores_ = false;  // other processes' threads run on this process's cores
  std::vector<int> vp_cpus_;   // vp_cpus()

  std::unique_ptr<VpState[]> states_;
  // stalled()'s memory: the progress its look snapshot was taken at (UINT64_MAX: none), each
  // local VP's looks then, and whether every blocked VP has looked again since.
  std::uint64_t look_progress_ = UINT64_MAX;
  std::vector<std::uint32_t> looks_then_;
  bool all_looked_ = false;
  Meeting meeting_;
  // This run's group meetings (group_meeting), by group id and members.
  std::mutex group_meetings_mutex_;
  std::vector<std::unique_ptr<Meeting>> group_meetings_;
  std::vector<std::unique_ptr<PipelinedMeeting>> group_chains_;
  // The last run's chains, during a run: one of the same group (a row, or a split of the same
  // colors, run after run) is reset and taken again rather than allocated anew; the rest go
  // when the run ends.
  std::vector<std::unique_ptr<PipelinedMeeting>> spare_chains_;
  std::size_t group_chain_bytes_ = 0;         // their slots' storage
  PipelinedMeeting pipelined_meeting_;        // allocated when oversubscribed with meetings on
  std::vector<std::unique_ptr<Port>> ports_;  // one per VP, each with its user's Proc

  // Channel table (one Link per directed pair, of the machine's transport): rows_[src] -> p
  // entries, allocated on first use of src; entries are set once under create_mutex_ and read
  // without a lock.
  std::unique_ptr<std::atomic<ChannelRow*>[]> rows_;
  std::mutex create_mutex_;
  std::vector<std::unique_ptr<ChannelRow>> row_storage_;
  struct OwnedChannel {
    int src;
    int dst;
    std::unique_ptr<Link> channel;
  };
  std::vector<OwnedChannel> channels_;
  std::atomic<std::uint64_t> channel_epoch_{0};

  std::size_t link_stride_;
  std::unique_ptr<LinkCounterLine[]> links_;  // link_stride_ counters per VP
  std::unique_ptr<RunMark[]> run_marks_;      // a grid machine's: link_stride_ per VP

  // Run control.
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<std::uint32_t> generation_sleepers_{0};  // VPs asleep on generation_ (vp_main)
  std::atomic<bool> in_run_{false};  // a run is under way: run() from elsewhere throws
  std::atomic<std::uint32_t> remaining_{0};
  std::atomic<bool> watcher_sleeps_{false};  // the thread that called run sleeps on remaining_
  std::atomic<bool> shutdown_{false};
  std::atomic<std::uint32_t> attention_{0};  // kAborted | kWatching * (VPs watched)
  const std::function<void(Proc&)>* body_ = nullptr;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::atomic<int> failed_vp_{-1};
  std::chrono::steady_clock::time_point start_;
  std::vector<std::thread> threads_;
};

// What a header says, for mismatch reports: the collectives' describer where installed
// (set_tag_describer), else "collective kind 3 (call 7 on mesh:4x4, root/shift 0, 8 bytes,
// algorithm 1)".
[[nodiscard]] std::string describe_tag(const MessageTag& tag, const Topology& machine);
// The same, for the header that VP `sender` made: a subcube is named as that VP names it
// ("subcube 0b0101 of VP 3" for VP 3's header, whichever VP reports it).
[[nodiscard]] std::string describe_tag(const MessageTag& tag, const Topology& machine, int sender);

}  // namespace hypercomm::detail
