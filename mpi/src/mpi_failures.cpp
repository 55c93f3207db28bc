// Failures across processes (MpiRemote): an abort announced to every process and taken from
// any, the watch for deadlocks and disagreements that span processes, the processes' statuses,
// and the Report every process returns (combine), with the error that each rethrows.

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <hypercomm/errors.hpp>
#include <map>
#include <span>
#include <string_view>

#include "mpi_remote.hpp"
#include "mpi_remote_protocol.hpp"
#include "report_wire.hpp"

namespace hypercomm::mpi::detail {

namespace {

bool is_deadlock(const std::exception_ptr& error) {
  if (!error) return false;
  try {
    std::rethrow_exception(error);
  } catch (const Deadlock&) {
    return true;
  } catch (...) {
    return false;
  }
}

std::string what_of(const std::exception_ptr& error) {
  if (!error) return {};
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace

void MpiRemote::aborted_by(Fabric& fabric, int process, int vp, std::uint32_t kind,
                           std::span<const std::byte> body) {
  const std::string text(reinterpret_cast<const char*>(body.data()), body.size());
  if (!abort_announced_) {
    abort_announced_ = true;
    abort_since_ = Clock::now();
  }
  if (abort_relay_.empty()) {  // the first heard of: sent on with this process's finishes
    const Relay relay{vp, kind};
    abort_relay_.resize(sizeof(Relay) + body.size());
    std::memcpy(abort_relay_.data(), &relay, sizeof(Relay));
    if (!body.empty()) std::memcpy(abort_relay_.data() + sizeof(Relay), body.data(), body.size());
    relay_from_ = process;
  }
  std::exception_ptr error;
  if (kind == kDeadlock)
    error = std::make_exception_ptr(Deadlock(text));
  else if (kind == kMismatch)
    error = std::make_exception_ptr(CollectiveMismatch(text));
  else
    error = std::make_exception_ptr(
        Aborted("the run was abandoned on every process: VP " + std::to_string(vp) + " (process " +
                std::to_string(process) + " of " + std::to_string(blocks_.processes) +
                ") failed: " + text));
  fabric.fail(error, -1);  // the first error stays (a relayed abort may come after its original)
}

void MpiRemote::complete_sends(bool wait) {
  while (!in_flight_.empty()) {
    int done = 0;
    MPI_Request& request = in_flight_.front().request;
    if (wait)
      check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
    else
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (!wait && done == 0) return;  // sends complete in order, near enough: look again later
    // Kept for the next messages, up to 64 of at most 256 KiB (a few MiB a process at most).
    if (spare_.size() < 64 && in_flight_.front().data.capacity <= (std::size_t{256} << 10))
      spare_.push_back(std::move(in_flight_.front().data));
    in_flight_.pop_front();
  }
}

void MpiRemote::announce_abort(Fabric& fabric) {
  abort_announced_ = true;
  abort_since_ = Clock::now();
  const int vp = fabric.failed_vp();
  if (vp < 0) return;  // another process's abort, already everywhere
  // A VP that found its wait could never end (the VP it waits for has finished) raised
  // Deadlock: the other processes raise it too, as they do for a deadlock the watch finds.
  const Header header{Kind::abort, vp, -1, is_deadlock(fabric.error()) ? kDeadlock : kVpError, {}};
  to_all(header, bytes_of(what_of(fabric.error())));
}

void MpiRemote::note_status(int process, const Status& status, std::string text,
                            std::vector<PublishedCall> calls, Clock::time_point now) {
  statuses_[static_cast<std::size_t>(process)] = status;
  wait_texts_[static_cast<std::size_t>(process)] = std::move(text);
  stalled_calls_[static_cast<std::size_t>(process)] = std::move(calls);
  heard_[static_cast<std::size_t>(process)] = now;
  quiet_since_ = now;
}

std::vector<MpiRemote::PublishedCall> MpiRemote::published_calls(const Fabric& fabric) const {
  std::vector<PublishedCall> calls;
  for (int vp = first_; vp < last_; ++vp) {
    hypercomm::detail::PublishedCalls recent;
    if (!hypercomm::detail::read_calls(fabric.state(vp), recent)) continue;
    for (const auto& tag : recent.recent) {
      if (tag.kind == 0) break;
      calls.push_back({vp, 0, tag});
    }
  }
  return calls;
}

std::string MpiRemote::published_disagreement(const Fabric& fabric) const {
  using hypercomm::detail::TagHolders;
  // By call (group, number): each header and the VPs that hold it.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<TagHolders>> calls;
  for (const auto& process : stalled_calls_) {
    for (const PublishedCall& call : process) {
      auto& seen = calls[{call.tag.group, call.tag.sequence}];
      auto it = std::find_if(seen.begin(), seen.end(),
                             [&](const TagHolders& entry) { return entry.first == call.tag; });
      if (it == seen.end()) it = seen.insert(seen.end(), {call.tag, {}});
      if (std::find(it->second.begin(), it->second.end(), call.vp) == it->second.end())
        it->second.push_back(call.vp);
    }
  }
  for (auto& [call, seen] : calls) {
    if (seen.size() < 2) continue;
    for (auto& entry : seen) std::sort(entry.second.begin(), entry.second.end());
    // Reported by the first VP of the largest set, in its call's words.
    std::stable_sort(seen.begin(), seen.end(), [](const TagHolders& a, const TagHolders& b) {
      return a.second.size() > b.second.size();
    });
    const hypercomm::MessageTag& mine = seen.front().first;
    std::string op = hypercomm::detail::describe_tag(mine, fabric.topology());
    op = op.substr(0, op.find(' '));
    return hypercomm::detail::describe_disagreement(seen.front().second.front(), op.c_str(), mine,
                                                    seen, fabric.topology());
  }
  return {};
}

void MpiRemote::watch(Fabric& fabric, Clock::time_point now) {
  if (now < next_tick_) return;
  using namespace std::chrono;
  const nanoseconds timeout = fabric.options().deadlock_timeout;
  next_tick_ = now + std::clamp<nanoseconds>(timeout / 8, milliseconds(1), milliseconds(50));

  // This process's report, while it has a VP whose finish it has not sent.
  if (std::find(announced_.begin(), announced_.end(), false) != announced_.end()) {
    Status status;
    bool collective = false;
    status.stalled = fabric.stalled(status.progress, collective) ? 1 : 0;
    // A message put on a channel here is progress too, before its VP (maybe not yet scheduled,
    // on a loaded machine) takes it.
    status.progress += delivered_;
    status.collective = collective ? 1 : 0;
    for (int vp = first_; vp < last_; ++vp)
      status.entered += fabric.state(vp).entered.load(std::memory_order_relaxed);
    const bool same = status_sent_ && status == last_status_;  // both with calls 0
    if (same && status.stalled != 0) {
      if (rank_ == 0) {
        heard_[0] = now;
      } else {
        Buffer data = buffer(sizeof(Header));
        const Header header{Kind::status, -1, -1, kBeat, {}};
        std::memcpy(data.bytes.get(), &header, sizeof(Header));
        post(0, std::move(data));
      }
    } else if (!same) {
      status_sent_ = true;
      last_status_ = status;
      std::vector<PublishedCall> calls;
      if (status.stalled != 0) calls = published_calls(fabric);
      status.calls = static_cast<std::uint32_t>(calls.size());
      const std::string text = status.stalled != 0 ? fabric.describe_waits() : std::string();
      if (rank_ == 0) {
        note_status(0, status, text, std::move(calls), now);
      } else {
        const std::size_t calls_bytes = calls.size() * sizeof(PublishedCall);
        Buffer data = buffer(sizeof(Header) + sizeof(Status) + calls_bytes + text.size());
        const Header header{Kind::status, -1, -1, 0, {}};
        std::byte* at = data.bytes.get();
        std::memcpy(at, &header, sizeof(Header));
        at += sizeof(Header);
        std::memcpy(at, &status, sizeof(Status));
        at += sizeof(Status);
        if (calls_bytes != 0) std::memcpy(at, calls.data(), calls_bytes);
        at += calls_bytes;
        std::memcpy(at, text.data(), text.size());
        post(0, std::move(data));
      }
    }
  }
  if (rank_ != 0 || abort_announced_) return;

  // Process 0: has every process waited, with nothing delivered, for the timeout?
  bool all_stalled = true, all_collective = true;
  std::string waits;
  for (int process = 0; process < blocks_.processes && all_stalled; ++process) {
    const auto k = static_cast<std::size_t>(process);
    const int vps = blocks_.first(process + 1) - blocks_.first(process);
    if (finished_of_[k] == vps) continue;  // all gone: they wait for nothing
    all_stalled = statuses_[k].stalled != 0;
    all_collective = all_collective && statuses_[k].collective != 0;
    waits += (waits.empty() ? "" : "; ") + std::string("process ") + std::to_string(process) +
             ": " + wait_texts_[k];
  }
  if (!all_stalled) {
    quiet_since_ = now;
    return;
  }
  if (now - quiet_since_ < timeout) return;
  for (int process = 0; process < blocks_.processes; ++process) {
    const auto k = static_cast<std::size_t>(process);
    const int vps = blocks_.first(process + 1) - blocks_.first(process);
    if (finished_of_[k] != vps && heard_[k] - quiet_since_ < timeout) return;  // not since
  }
  const std::string what = "nothing delivered for " +
                           std::to_string(duration<double>(now - quiet_since_).count()) +
                           " s while every unfinished VP of every process waits: " + waits;
  Header header{Kind::abort, -1, -1, kDeadlock, {}};
  std::string text = "deadlock: " + what;
  if (const std::string disagreement = published_disagreement(fabric); !disagreement.empty()) {
    // VPs that went on past a call they disagree on (a reduce's other root, then a receive).
    header.aux = kMismatch;
    text = disagreement + " (found when " + what + ")";
    fabric.fail(std::make_exception_ptr(CollectiveMismatch(text)), -1);
  } else if (all_collective) {
    header.aux = kMismatch;
    text = "deadlock inside collectives, the VPs disagree on the collective sequence: " + what;
    fabric.fail(std::make_exception_ptr(CollectiveMismatch(text)), -1);
  } else {
    fabric.fail(std::make_exception_ptr(Deadlock(text)), -1);
  }
  abort_announced_ = true;
  abort_since_ = now;
  to_all(header, bytes_of(text));
}

Report MpiRemote::combine(Report local, std::exception_ptr error, const std::string& problem) {
  ReportPart part{std::move(local), error ? what_of(error) : std::string(), error != nullptr,
                  problem};
  const std::vector<std::byte> mine = encode(part);
  const int size = static_cast<int>(mine.size());
  std::vector<int> sizes(static_cast<std::size_t>(blocks_.processes));
  check(MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm_), "MPI_Allgather");
  std::vector<int> offsets(sizes.size(), 0);
  for (std::size_t k = 1; k < sizes.size(); ++k) offsets[k] = offsets[k - 1] + sizes[k - 1];
  std::vector<std::byte> all(static_cast<std::size_t>(offsets.back() + sizes.back()));
  check(MPI_Allgatherv(mine.data(), size, MPI_BYTE, all.data(), sizes.data(), offsets.data(),
                       MPI_BYTE, comm_),
        "MPI_Allgatherv");

  Report merged;
  merged.topology = part.report.topology;
  std::string elsewhere;
  bool elsewhere_failed = false;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    ReportPart theirs = decode(std::span(all).subspan(static_cast<std::size_t>(offsets[k]),
                                                      static_cast<std::size_t>(sizes[k])));
    if (elsewhere.empty() && (theirs.failed || !theirs.problem.empty())) {
      elsewhere_failed = theirs.failed;
      elsewhere =
          "process " + std::to_string(k) + ": " + (theirs.failed ? theirs.error : theirs.problem);
    }
    merge(merged, std::move(theirs.report));
  }
  if (error) std::rethrow_exception(error);
  if (!problem.empty()) throw CollectiveMismatch(problem);
  if (elsewhere_failed) throw Aborted("the run failed on another process: " + elsewhere);
  if (!elsewhere.empty()) throw CollectiveMismatch(elsewhere);
  return merged;
}

}  // namespace hypercomm::mpi::detail
