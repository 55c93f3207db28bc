// Machine: VP threads, the run protocol and abort (the watchdog: watchdog.cpp; the Report:
// run_report.cpp; the groups' meeting places: meeting_places.cpp).
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <hypercomm/errors.hpp>
#include <hypercomm/machine.hpp>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <typeinfo>

#include "fabric.hpp"
#include "futex.hpp"
#include "group_info.hpp"
#include "pinning.hpp"
#include "port.hpp"
#include "waiter.hpp"

namespace hypercomm {
namespace detail {

namespace {

void validate(const Options& options) {
  const CostModel& m = options.model;
  auto bad = [](double v) { return !std::isfinite(v) || v < 0; };
  if (bad(m.ts) || bad(m.tw) || bad(m.th))
    throw Error(
        "Options::model: ts, tw and th must be finite and >= 0 (got ts = " + std::to_string(m.ts) +
        ", tw = " + std::to_string(m.tw) + ", th = " + std::to_string(m.th) + ")");
  // An enum cast from an integer the enumeration does not name would otherwise run as one of
  // the named modes, silently.
  if (options.links != Links::routed && options.links != Links::strict)
    throw Error("Options::links must be Links::routed or Links::strict (got Links(" +
                std::to_string(static_cast<int>(options.links)) + "))");
  if (options.pinning != Pinning::compact && options.pinning != Pinning::none)
    throw Error("Options::pinning must be Pinning::compact or Pinning::none (got Pinning(" +
                std::to_string(static_cast<int>(options.pinning)) + "))");
  if (options.deadlock_timeout <= std::chrono::nanoseconds::zero())
    throw Error("Options::deadlock_timeout must be positive (got " +
                std::to_string(options.deadlock_timeout.count()) + " ns)");
}

// A VP body's exception as `run` rethrows it: one of <stdexcept>'s own types, std::system_error or
// hypercomm's errors again, its message led by the VP's name unless it names that VP first
// already (API.md: the rethrown exception's message names the VP id; the runtime's own errors
// do); Aborted and Deadlock, about the run, and every other type are the original object, whose
// message only its thrower can make.
template <class Standard>
bool renamed(const std::exception& e, const std::string& text, std::exception_ptr& out) {
  if (typeid(e) != typeid(Standard)) return false;
  out = std::make_exception_ptr(Standard(text));
  return true;
}

std::exception_ptr naming_vp(std::exception_ptr error, int vp) {
  try {
    std::rethrow_exception(error);
  } catch (const Aborted&) {  // the runtime's own, about the run (and named so)
    return error;
  } catch (const Deadlock&) {
    return error;
  } catch (const std::exception& e) {
    const std::string name = "VP " + std::to_string(vp);
    const std::string_view what = e.what();
    if (what.starts_with(name) &&
        (what.size() == name.size() || what[name.size()] < '0' || what[name.size()] > '9'))
      return error;
    const std::string text = name + ": " + std::string(what);
    std::exception_ptr named;
    if (typeid(e) == typeid(std::system_error)) {
      // what() is "argument: the code's message"; the argument is given the name.
      const auto* system = static_cast<const std::system_error*>(&e);
      const std::string suffix = ": " + system->code().message();
      std::string argument;
      if (what.ends_with(suffix))
        argument = std::string(what.substr(0, what.size() - suffix.size()));
      return std::make_exception_ptr(
          std::system_error(system->code(), argument.empty() ? name : name + ": " + argument));
    }
    // hypercomm's errors that a body throws itself (the runtime's name their VP already).
    if (renamed<Error>(e, text, named) || renamed<TopologyError>(e, text, named) ||
        renamed<LinkError>(e, text, named) || renamed<SizeMismatch>(e, text, named) ||
        renamed<CollectiveMismatch>(e, text, named) || renamed<AlgorithmError>(e, text, named))
      return named;
    if (renamed<std::runtime_error>(e, text, named) || renamed<std::logic_error>(e, text, named) ||
        renamed<std::invalid_argument>(e, text, named) ||
        renamed<std::out_of_range>(e, text, named) || renamed<std::length_error>(e, text, named) ||
        renamed<std::domain_error>(e, text, named) || renamed<std::range_error>(e, text, named) ||
        renamed<std::overflow_error>(e, text, named) ||
        renamed<std::underflow_error>(e, text, named))
      return named;
    return error;
  } catch (...) {
    return error;
  }
}

}  // namespace

Fabric::Fabric(Topology topology, Options options, Placement placement)
    : topology_(std::move(topology)),
      options_(options),
      size_(topology_.size()),
      first_(placement.first),
      last_(placement.last < 0 ? size_ : placement.last),
      remote_(placement.remote),
      transport_(transport_from_environment()) {
  validate(options_);
  if (first_ < 0 || first_ >= last_ || last_ > size_)
    throw Error("this process's VPs [" + std::to_string(first_) + ", " + std::to_string(last_) +
                ") are not a non-empty part of the " + std::to_string(size_) + " VPs of " +
                topology_.name());
  const auto p = static_cast<std::size_t>(size_);
  const auto here = static_cast<std::size_t>(last_ - first_);
  const std::size_t links = p * static_cast<std::size_t>(std::max(1, topology_.max_degree()));

  const std::vector<int> cpus = allowed_cpus();
  // A machine over several processes also counts this process's communication thread, and the
  // threads of the other processes of the node.
  const std::size_t threads = here + (remote_ != nullptr && placement.busy_server ? 1 : 0);
  const std::size_t node_cpus =
      placement.node_cpus > 0 ? static_cast<std::size_t>(placement.node_cpus) : cpus.size();
  const bool oversubscribed =
      threads > cpus.size() || static_cast<std::size_t>(placement.node_threads) > node_cpus;
  shared_cores_ = placement.node_threads > static_cast<int>(threads);
  // One VP per core: spin long, a message is a cache-line transfer away, and sleep after.
  // Oversubscribed: the VP we wait for may need this very core, so hand the core to a VP that
  // can run, or poll when none can, and sleep only after a long wait (a futex sleep and wake-up
  // cost several times a switch between two VPs of one core).
  spin_time_ = oversubscribed ? std::chrono::microseconds(0) : std::chrono::microseconds(200);
  yield_time_ = oversubscribed ? std::chrono::microseconds(1000) : std::chrono::microseconds(0);
  // Between runs, where this process holds all its VPs: spin where a core is left for the
  // thread that calls run, and where none is, yield (each waiting thread hands its core to one
  // that can run; runs in a loop then cost no futex wake-up either: hypercube:1 to hypercube:4
  // on 2 cores, Machine::run of one all-reduce 0.5-0.85x the time). Not where a core's VPs take
  // longer than the wait to come round once (hypercube:12: 1.1-1.3x the time).
  if (remote_ == nullptr && threads <= kMostYieldingPerCore * cpus.size()) {
    between_runs_spin_ = kBetweenRunsSpin;
    between_runs_yield_ = threads >= cpus.size();
  }
  // A sleeper's recheck in a collective reads every member's published call (Port::disagreement):
  // p sleepers each waking every 25 ms read p^2 calls that often, and at 4096 VPs on 2 cores that
  // took both cores (a deadlock among them was reported after 48 s, not 1). The rechecks are a
  // backstop (a finishing VP, an abort, a release wake the sleepers), so with many VPs here they
  // come less often, but at least four times a deadlock timeout: the watch declares a deadlock
  // only once every blocked VP has looked again (Fabric::stalled).
  const auto scaled = [&](std::chrono::nanoseconds base) {
    const auto factor = static_cast<std::int64_t>(std::max<std::size_t>(1, here / 64));
    return std::min(base * factor,
                    std::max<std::chrono::nanoseconds>(base, options_.deadlock_timeout / 4));
  };
  recheck_time_ = scaled(Waiter::kRecheck);
  idle_recheck_time_ = scaled(Waiter::kIdleRecheck);
  const std::size_t node_vps =
      placement.node_vps > 0 ? static_cast<std::size_t>(placement.node_vps) : here;
  node_crowded_ = crowded(node_vps, node_cpus);
  cross_core_spin_ = node_crowded_ ? std::chrono::nanoseconds(0) : kCrossCoreSpin;
  channel_capacity_ = links > 4096                                     ? kRingSlotsManyLinks
                      : oversubscribed || size_ > kMostVpsForLongRings ? kRingSlots
                                                                       : kRingSlotsOwnCores;
  const bool long_rings = channel_capacity_ == kRingSlotsOwnCores;
  rendezvous_bytes_ = oversubscribed ? kRendezvousBytesShared : kRendezvousBytes;
  one_way_rendezvous_bytes_ = long_rings ? kOneWayRendezvousBytesLongRings : rendezvous_bytes_;
  bounded_queue_bytes_ = long_rings ? kBoundedQueueBytes : std::numeric_limits<std::size_t>::max();
  one_way_keeping_up_bytes_ = one_way_keeping_up_rendezvous_bytes(long_rings);
  streaming_wait_bytes_ = cpu_streaming_wait_bytes();
  shared_copy_bytes_ = oversubscribed ? kSharedCopyBytesShared : kSharedCopyBytes;
  core_count_ = static_cast<int>(cpus.size());
  shared_core_count_ = placement.shared_cores >= 0 ? placement.shared_cores
                                                   : hypercomm::shared_core_count(topology_);
  core_share_ = oversubscribed
                    ? std::max<int>(1, (static_cast<int>(threads) + core_count_ - 1) / core_count_)
                    : 0;

  states_ = std::make_unique<VpState[]>(p);
  meeting_.seats.resize(p);
  meeting_.inputs.resize(p);
  meeting_.clocks.resize(p);
  meeting_.next_clocks.resize(p);
  if (oversubscribed && options_.meetings && remote_ == nullptr)
    pipelined_meeting_.allocate(size_, PipelinedMeeting::kMostSlots, PipelinedMeeting::kWideRoom,
                                PipelinedMeeting::kSeatCallStorage);
  rows_ = std::make_unique<std::atomic<ChannelRow*>[]>(p);
  link_stride_ =
      (static_cast<std::size_t>(std::max(1, topology_.max_degree())) + kCountersPerLine - 1) /
      kCountersPerLine * kCountersPerLine;
  links_ = std::make_unique<LinkCounterLine[]>(p * link_stride_ / kCountersPerLine);
  if (topology_.kind() != Topology::Kind::hypercube)
    run_marks_ = std::make_unique<RunMark[]>(p * link_stride_);
  ports_.reserve(p);
  for (int i = 0; i < size_; ++i) ports_.push_back(std::make_unique<Port>(*this, i));
  for (int i = 0; i < size_; ++i)
    for (int n : topology_.neighbors(i))
      if (local(i) || local(n)) (void)create_channel(i, n);

  threads_.reserve(here);
  vp_cpus_.assign(p, -1);
  try {
    // The node's j-th VP runs on core j mod n of the n this process may use, except where the
    // VPs of several processes of the node outnumber its cores and this process may use them
    // all (mpirun --bind-to none): there on core j * n / node_vps, the node's VPs in blocks of
    // consecutive ids, so that a hypercube's low dimensions stay on one core and its highest
    // crosses. A binomial tree's first step then goes from one core to the other and each later
    // step has senders on both; round robin put every sender of a broadcast on the root's core
    // (VP i on core i mod 2: 0 -> 4, then 0 -> 2 and 4 -> 6, then from 0, 2, 4, 6), which copied
    // its 1 MiB messages one after another. 2 cores, one VP per process, alternating rounds
    // (2026-12-01), median ratio to Open MPI's broadcast on the same processes: 8 B over 8 and 16
    // processes 0.93 against 1.31 and 1.29, over 4 0.91-1.11 against 1.11-1.34; 1 MiB over 8
    // 1.08-1.11 against 1.51-1.53, over 16 0.92 against 1.08, over 4 1.12 either way. 2 x 8 and
    // 4 x 4 VPs: 0.44-0.98x the time of every collective measured.
    const bool in_blocks =
        remote_ != nullptr && shared_cores_ && cpus.size() == node_cpus && node_vps > node_cpus;
    for (int i = first_; i < last_; ++i) {
      const auto j = static_cast<std::size_t>(i - first_ + placement.node_offset);
      const int cpu = options_.pinning == Pinning::compact
                          ? cpus[in_blocks ? j * cpus.size() / node_vps : j % cpus.size()]
                          : -1;
      vp_cpus_[static_cast<std::size_t>(i)] = cpu;
      threads_.emplace_back([this, i, cpu] {
        if (cpu >= 0) pin_current_thread(cpu);
        vp_main(i);
      });
    }
  } catch (...) {
    shutdown_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
    futex_wake(generation_, INT_MAX);
    for (auto& t : threads_) t.join();
    throw;
  }
}

Fabric::~Fabric() {
  shutdown_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  futex_wake(generation_, INT_MAX);
  for (auto& t : threads_) t.join();
}

Link& Fabric::create_channel(int src, int dst) {
  const std::lock_guard lock(create_mutex_);
  auto& row_slot = rows_[static_cast<std::size_t>(src)];
  ChannelRow* row = row_slot.load(std::memory_order_acquire);
  if (row == nullptr) {
    row_storage_.push_back(std::make_unique<ChannelRow>(static_cast<std::size_t>(size_)));
    row = row_storage_.back().get();
    row_slot.store(row, std::memory_order_release);
  }
  auto& entry = (*row)[static_cast<std::size_t>(dst)];
  if (Link* existing = entry.load(std::memory_order_acquire)) return *existing;
  channels_.push_back({src, dst, make_link(transport_, channel_capacity_, shared_copy_bytes_)});
  Link* created = channels_.back().channel.get();
  entry.store(created, std::memory_order_release);
  channel_epoch_.fetch_add(1, std::memory_order_release);
  return *created;
}

void Fabric::notify(int vp) noexcept {
  if (!local(vp)) return remote_->outgoing();
  VpState& s = state(vp);
  if (core_share_ > 0) s.mail.store(1, std::memory_order_relaxed);
  publish_fence(asymmetric_fences_);  // pairs with the sleeper's sleep_fence
  if (s.sleeping.load(std::memory_order_relaxed) != 0) {
    s.wake.fetch_add(1, std::memory_order_release);
    futex_wake(s.wake, 1);
  }
}

int Fabric::finished_vp() const noexcept {
  if (remaining_.load(std::memory_order_seq_cst) == static_cast<std::uint32_t>(last_ - first_))
    return -1;
  for (int i = first_; i < last_; ++i)
    if (states_[static_cast<std::size_t>(i)].status.load(std::memory_order_acquire) == kFinished)
      return i;
  return -1;
}

bool Fabric::core_wanted(int vp) const noexcept {
  // Beyond this many VPs per core the scan costs more than a needless yield.
  constexpr int kMostScanned = 16;
  if (options_.pinning != Pinning::compact || core_share_ > kMostScanned || shared_cores_)
    return true;
  for (int other = first_ + (vp - first_) % core_count_; other < last_; other += core_count_) {
    if (other == vp) continue;
    const VpState& s = states_[static_cast<std::size_t>(other)];
    const std::uint32_t status = s.status.load(std::memory_order_relaxed);
    // A VP in a meeting polls the release itself: it may be due to run.
    if (status == kRunning ||
        (status == kBlocked && (s.mail.load(std::memory_order_relaxed) != 0 ||
                                s.waiting_for.load(std::memory_order_relaxed) == kWaitsForAll)))
      return true;
  }
  return false;
}

double Fabric::seconds_since_start() const noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Fabric::vp_main(int id) {
  set_naming_vp(id);
  std::uint32_t seen = 0;
  for (;;) {
    std::uint32_t current = 0;
    const auto spin_until = std::chrono::steady_clock::now() + between_runs_spin_;
    while ((current = generation_.load(std::memory_order_acquire)) == seen) {
      if (between_runs_spin_.count() > 0 && std::chrono::steady_clock::now() < spin_until) {
        between_runs_pause();
        continue;
      }
      // Counted before the word is looked at again, so that run() wakes only when one sleeps
      // (a futex wake-up with no sleeper is still a system call: 0.5 us on a virtual machine).
      generation_sleepers_.fetch_add(1, std::memory_order_seq_cst);
      if (generation_.load(std::memory_order_seq_cst) == seen)
        futex_wait(generation_, seen, std::chrono::seconds(1));
      generation_sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    seen = current;
    if (shutdown_.load(std::memory_order_acquire)) return;
    try {
      Port& port = *ports_[static_cast<std::size_t>(id)];
      (*body_)(port.proc());
      port.settle_clock();  // a VP that left a prefix meeting early waits for its clock
      port.settle_ports();
    } catch (...) {
      fail(naming_vp(std::current_exception(), id), id);
    }
    finish(id);
  }
}

void Fabric::fail(std::exception_ptr error, int vp) noexcept {
  {
    const std::lock_guard lock(error_mutex_);
    if (!error_) {
      error_ = std::move(error);
      failed_vp_.store(vp, std::memory_order_release);
    }
  }
  // The first failure wakes every VP; each released VP fails with Aborted in turn, and waking
  // all again for each took p^2 system calls (150 s at 4096 VPs on 2 cores, now 1-2 s).
  if ((attention_.fetch_or(kAborted, std::memory_order_seq_cst) & kAborted) != 0) return;
  ring_every_bell();
  for (int i = first_; i < last_; ++i) {
    state(i).wake.fetch_add(1, std::memory_order_release);
    futex_wake(state(i).wake, 1);
  }
}

void Fabric::mark_finished(int vp) noexcept {
  state(vp).status.store(kFinished, std::memory_order_seq_cst);
  // Whoever here sleeps waiting for this VP will never hear from it: let it find out now.
  for (int i = first_; i < last_; ++i) {
    VpState& s = state(i);
    if (s.waiting_for.load(std::memory_order_relaxed) == vp &&
        s.sleeping.load(std::memory_order_relaxed) != 0) {
      s.wake.fetch_add(1, std::memory_order_release);
      futex_wake(s.wake, 1);
    }
  }
}

void Fabric::remote_finished(int vp) noexcept { mark_finished(vp); }

void Fabric::finish(int id) noexcept {
  mark_finished(id);
  // And whoever sleeps in a meeting this VP will never join (Port::meet), which only a program
  // whose VPs disagree has. Waking every meeting's sleepers for each VP that finished made p^2
  // wake-ups (4096 VPs in 256 subcube meetings stalled 5-15 s a run, each sleeper woken
  // thousands of times): a finish wakes them at most once a recheck period, and a sleeper's own
  // recheck finds a later one within that period. Before this VP counts itself out: once the
  // last has, the next run may clear the group meetings.
  {
    const std::int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
    std::int64_t due = finish_wake_due_.load(std::memory_order_relaxed);
    if (now >= due && finish_wake_due_.compare_exchange_strong(
                          due, now + std::chrono::steady_clock::duration(recheck_time_).count(),
                          std::memory_order_relaxed))
      ring_every_bell();
  }
  const bool last = remaining_.fetch_sub(1, std::memory_order_seq_cst) == 1;
  if (last && watcher_sleeps_.load(std::memory_order_seq_cst)) futex_wake(remaining_, 1);
  if (remote_ != nullptr) remote_->outgoing();  // the other processes must hear of it
}

Report Fabric::run(const std::function<void(Proc&)>& body) {
  // One body at a time: a second run would reset the channels and the VPs' states under the
  // first (two threads each waited for ever), and a VP's body that runs its own machine waits
  // for itself.
  if (in_run_.exchange(true, std::memory_order_acquire))
    throw Error("Machine::run on " + topology_.name() +
                ": this machine is running a body already (run from another thread, or from one "
                "of its own VPs): a machine runs one body at a time");
  struct InRun {
    std::atomic<bool>& flag;
    ~InRun() { flag.store(false, std::memory_order_release); }
  } const in_run{in_run_};
  body_ = &body;
  error_ = nullptr;
  failed_vp_.store(-1, std::memory_order_relaxed);
  attention_.fetch_and(~kAborted, std::memory_order_relaxed);
  std::uint64_t meetings_taken = 0;  // by the furthest VP of the last run (before its reset)
  for (const auto& port : ports_)
    meetings_taken = std::max(meetings_taken, port->pipelined_calls());
  for (int i = 0; i < size_; ++i) {
    VpState& s = state(i);
    s.status.store(kRunning, std::memory_order_relaxed);
    s.waiting_for.store(-1, std::memory_order_relaxed);
    s.operation.store(nullptr, std::memory_order_relaxed);
    s.meeting_members.store(nullptr, std::memory_order_relaxed);
    s.received.store(0, std::memory_order_relaxed);
    s.meeting.store(0, std::memory_order_relaxed);
    clear_calls(s);
    ports_[static_cast<std::size_t>(i)]->reset_for_run();
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(size_) * link_stride_ / kCountersPerLine;
       ++i)
    for (LinkCounter& c : links_[i].counters) c.clear();
  if (run_marks_ != nullptr)
    for (std::size_t i = 0; i < static_cast<std::size_t>(size_) * link_stride_; ++i) {
      run_marks_[i].messages.store(0, std::memory_order_relaxed);
      run_marks_[i].bytes.store(0, std::memory_order_relaxed);
    }
  meeting_.arrived.store(0, std::memory_order_relaxed);  // an aborted run may leave arrivals
  meeting_.deserted.store(0, std::memory_order_relaxed);
  meeting_.parts_left.store(0, std::memory_order_relaxed);
  {
    const std::lock_guard lock(group_meetings_mutex_);  // (ring_every_bell reads them)
    group_meetings_.clear();  // the groups are this run's (GroupTable::reset)
    spare_chains_ = std::move(group_chains_);
    group_chains_.clear();
  }
  group_chain_bytes_ = 0;
  pipelined_meeting_.reset(meetings_taken);
  remaining_.store(static_cast<std::uint32_t>(last_ - first_), std::memory_order_relaxed);
  look_progress_ = UINT64_MAX;
  start_ = std::chrono::steady_clock::now();
  if (remote_ != nullptr) remote_->prepare(*this);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (generation_sleepers_.load(std::memory_order_seq_cst) != 0) futex_wake(generation_, INT_MAX);

  if (remote_ != nullptr)
    remote_->serve(*this);
  else
    watch(start_);
  const double wall = seconds_since_start();
  for (auto& port : ports_) port->count_meetings();
  spare_chains_.clear();  // the last run's that no group of this one took

  // Every VP has finished: the channels are ours. Whatever is left was never received.
  std::string leftover;
  const auto untaken = [&](const MessageTag& tag, int src, int dst) {
    if (tag.kind == 0 || !leftover.empty()) return;
    leftover = "VP " + std::to_string(dst) + " never received a message of " +
               describe_tag(tag, topology_, src) + " that VP " + std::to_string(src) +
               " sent: the VPs disagree on the collective, its root, count, operator or algorithm";
    // What the receiver called instead, when that was among its last collective calls.
    PublishedCalls calls;
    if (read_calls(state(dst), calls))
      if (const MessageTag* theirs = calls.find(tag.group, tag.sequence);
          theirs != nullptr && !(*theirs == tag))
        leftover += " (VP " + std::to_string(dst) + " called " +
                    describe_tag(*theirs, topology_, dst) + ")";
  };
  for (auto& entry : channels_)
    for (const Envelope& e : entry.channel->drain()) untaken(e.tag, entry.src, entry.dst);
  // And those a point-to-point receive set aside (Port::set_aside).
  for (auto& port : ports_)
    for (const Port::AsideMessage& message : port->aside_)
      untaken(message.tag, message.src, port->id_);
  if (remote_ != nullptr) return complete(remote_->combine(collect(wall), error_, leftover));
  if (error_) std::rethrow_exception(error_);
  if (!leftover.empty()) throw CollectiveMismatch(leftover);
  return complete(collect(wall));
}

}  // namespace detail

Machine::Machine(Topology topology, Options options)
    : fabric_(std::make_unique<detail::Fabric>(std::move(topology), options)) {}
Machine::~Machine() = default;

Report Machine::run(const std::function<void(Proc&)>& body) { return fabric_->run(body); }
const Topology& Machine::topology() const noexcept { return fabric_->topology(); }
const Options& Machine::options() const noexcept { return fabric_->options(); }
int Machine::shared_core_count() const noexcept { return fabric_->shared_core_count(); }

int shared_core_count(const Topology& topology) noexcept {
  const auto cpus = static_cast<int>(detail::allowed_cpus().size());
  return topology.size() > cpus ? cpus : 0;  // as the Fabric decides for one process
}

namespace {

// run()'s last machine, kept for the next run() of the same topology, options and transport, as
// an OpenMP runtime keeps its threads between parallel regions: a fresh machine costs its
// threads' creation and pinning (16 VPs on the 2 vCPUs of the development box: about 3 ms, ten
// times the run of a small program; 1024 VPs: 250 ms), a kept one nothing. Its VPs sleep between
// runs, as a Machine's do. One machine at most, and none past kMostKeptVps (idle threads wake
// once a second), so run() never holds more threads than the largest machine it runs; a run that
// fails gives its machine back rather than keep it; a machine made before a fork() is left alone
// in the child (its threads are not there), and the kept one is joined at exit.
class KeptMachine {
  using Transport = detail::Transport;

 public:
  static constexpr int kMostKeptVps = 1024;

  // The kept machine if it fits, else none (one that does not fit is let go first, so that the
  // caller's new machine does not join it in memory).
  std::unique_ptr<Machine> take(const Topology& topology, const Options& options,
                                Transport transport) {
    std::unique_ptr<Machine> machine;
    Transport made_on = Transport::shared_memory;
    {
      const std::lock_guard lock(mutex_);
      if (machine_ == nullptr) return nullptr;
      if (pid_ != ::getpid()) {
        (void)machine_.release();  // forked: its threads live in the parent only
        return nullptr;
      }
      machine = std::move(machine_);
      made_on = transport_;
    }
    if (machine->topology() == topology && machine->options() == options && made_on == transport)
      return machine;
    return nullptr;  // destroyed here, outside the lock
  }

  void keep(std::unique_ptr<Machine> machine, Transport transport) {
    if (machine->topology().size() > kMostKeptVps) return;
    const std::lock_guard lock(mutex_);
    if (machine_ != nullptr) return;  // another thread's run() kept its machine first
    machine_ = std::move(machine);
    transport_ = transport;
    pid_ = ::getpid();
  }

  ~KeptMachine() {
    if (machine_ != nullptr && pid_ != ::getpid()) (void)machine_.release();
    alive = false;
  }

  static inline bool alive = true;  // false once destroyed at exit (a later run() makes its own)

 private:
  std::mutex mutex_;
  std::unique_ptr<Machine> machine_;
  Transport transport_ = Transport::shared_memory;
  pid_t pid_ = 0;
};

KeptMachine& kept_machine() {
  static KeptMachine kept;
  return kept;
}

}  // namespace

Report run(const Topology& topology, const std::function<void(Proc&)>& body, Options options) {
  if (!KeptMachine::alive) return Machine(topology, options).run(body);
  KeptMachine& kept = kept_machine();
  const detail::Transport transport = detail::transport_from_environment();
  std::unique_ptr<Machine> machine = kept.take(topology, options, transport);
  if (machine == nullptr) machine = std::make_unique<Machine>(topology, options);
  Report report = machine->run(body);  // a failure throws: the machine is let go
  kept.keep(std::move(machine), transport);
  return report;
}

}  // namespace hypercomm
