// The call port's error paths (port.hpp): how a port finds that the VPs disagree on a collective
// (the members' published headers, a meeting's seats, a message that waits untaken) and what each
// typed error it throws says: the VP, the operation and the values. Cold code, kept apart from
// the messaging in proc.cpp.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <hypercomm/errors.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fabric.hpp"
#include "group_info.hpp"
#include "port.hpp"

namespace hypercomm {

using detail::Envelope;
using detail::Port;

namespace {
std::atomic<detail::TagDescriber> tag_describer{nullptr};
std::atomic<detail::RootNamer> root_namer{nullptr};
}  // namespace

void detail::set_tag_describer(TagDescriber describer) noexcept { tag_describer.store(describer); }

void detail::set_root_namer(RootNamer namer) noexcept { root_namer.store(namer); }

std::string detail::describe_tag(const MessageTag& tag, const Topology& machine) {
  if (tag.kind == 0) return "a point-to-point message";
  if (const TagDescriber describe = tag_describer.load()) return describe(tag, machine);
  return "collective kind " + std::to_string(tag.kind) + " (call " + std::to_string(tag.sequence) +
         " on " + group_name(tag.group, machine) + ", root/shift " + std::to_string(tag.root) +
         ", " + std::to_string(tag.count) + " bytes, algorithm " + std::to_string(tag.algo) + ")";
}

std::string detail::describe_tag(const MessageTag& tag, const Topology& machine, int sender) {
  const int reporter = naming_vp();
  set_naming_vp(sender);
  try {
    std::string text = describe_tag(tag, machine);
    set_naming_vp(reporter);
    return text;
  } catch (...) {
    set_naming_vp(reporter);
    throw;
  }
}

void Port::throw_bad_peer(int peer, const char* op, std::size_t bytes) const {
  if (peer < 0 || peer >= size_)
    throw LinkError("VP " + std::to_string(id_) + ": " + op + " with VP " + std::to_string(peer) +
                    ", which is outside [0, " + std::to_string(size_) + ") on " +
                    topology().name());
  if (peer == id_)
    throw LinkError("VP " + std::to_string(id_) + ": " + op + " with itself (" +
                    std::to_string(bytes) + " bytes); a VP cannot message itself");
  throw LinkError("VP " + std::to_string(id_) + ": " + op + " with VP " + std::to_string(peer) +
                  ", which is not a neighbour on " + topology().name() +
                  " (Links::strict allows neighbours only)");
}

void Port::check_untaken() {
  // A message of this very call that this VP never took: its sender runs another collective (the
  // same header would be the same algorithm, which takes what it is sent).
  const auto look_at = [&](int vp, const MessageTag& tag) {
    if (tag.kind == 0 || tag.group != call_.group) return;
    if (tag.sequence == call_.sequence && !(tag == call_)) throw_untaken(vp, tag);
    // A message of one of this group's earlier calls (counted mod 2^32): that call of this VP
    // has ended without taking it.
    if (const std::uint32_t behind = call_.sequence - tag.sequence;
        behind != 0 && behind < (std::uint32_t{1} << 31))
      throw_untaken_earlier(vp, tag);
  };
  const auto look_from = [&](int vp) {
    detail::Link* channel = incoming_if_any(vp);
    if (const Envelope* envelope = channel != nullptr ? channel->front() : nullptr)
      look_at(vp, envelope->tag);
  };
  // Collectives' messages that a point-to-point receive set aside (set_aside).
  for (const AsideMessage& message : aside_) look_at(message.src, message.tag);
  // The VPs this call sent to, and the machine neighbours (where the book's algorithms send),
  // unless this call took a message from them (whose header was checked then).
  for (std::size_t i = 0; i < call_destinations_.count; ++i)
    if (!call_sources_.holds(call_destinations_.ids[i])) look_from(call_destinations_.ids[i]);
  for (const int vp : neighbours_)
    if (!call_sources_.holds(vp) && !call_destinations_.holds(vp)) look_from(vp);
}

void Port::throw_untaken_earlier(int dest, const MessageTag& theirs) const {
  throw CollectiveMismatch("VP " + std::to_string(id_) + ": " + operation_name() + ": VP " +
                           std::to_string(dest) + "'s message of " +
                           detail::describe_tag(theirs, topology(), dest) + " waits at VP " +
                           std::to_string(id_) +
                           " untaken, though this VP's call of that number has ended: the VPs "
                           "disagree on the collective, its root, count, operator or algorithm");
}

void Port::throw_untaken(int dest, const MessageTag& theirs) const {
  const std::vector<detail::TagHolders> seen{{call_, {id_}}, {theirs, {dest}}};
  throw CollectiveMismatch(
      detail::describe_disagreement(id_, operation_name(), call_, seen, topology()) + " (VP " +
      std::to_string(dest) + "'s message of that call waits at VP " + std::to_string(id_) +
      ", which takes none from it)");
}

namespace {

// "VP 3", "VPs 0, 2-5, 9"; after a dozen runs "..., and n more".
std::string vp_list(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  std::string s = ids.size() == 1 ? "VP " : "VPs ";
  int runs = 0;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (++runs > 12) {
      s += " and " + std::to_string(ids.size() - i) + " more";
      break;
    }
    if (i > 0) s += ", ";
    s += std::to_string(ids[i]);
    if (j > i) s += (j == i + 1 ? ", " : "-") + std::to_string(ids[j]);
    i = j + 1;
  }
  return s;
}

}  // namespace

namespace {

// What differs between this VP's header and the others', in the contract's words: "root",
// "count and algorithm", "collective".
std::string what_differs(std::string_view name, const MessageTag& mine,
                         const std::vector<detail::TagHolders>& seen) {
  std::vector<std::string> fields;
  auto differ = [&](auto member) {
    return std::any_of(seen.begin(), seen.end(),
                       [&](const auto& entry) { return entry.first.*member != mine.*member; });
  };
  if (differ(&MessageTag::kind)) fields.emplace_back("collective");
  if (differ(&MessageTag::root)) {
    if (const detail::RootNamer name_root = root_namer.load()) {
      for (const auto& entry : seen)
        if (entry.first.root != mine.root) name_root(mine, entry.first, fields);
    } else {
      fields.emplace_back(name == "circular_shift" ? "shift" : "root");
    }
  }
  if (differ(&MessageTag::count)) fields.emplace_back("count");
  if (differ(&MessageTag::algo)) fields.emplace_back("algorithm");
  if (fields.empty()) fields.emplace_back("collective");
  std::string what;
  for (std::size_t i = 0; i < fields.size(); ++i)
    what += (i == 0 ? "" : i + 1 == fields.size() ? " and " : ", ") + fields[i];
  return what;
}

}  // namespace

std::string detail::describe_disagreement(int me, const char* op, const MessageTag& mine,
                                          const std::vector<TagHolders>& seen,
                                          const Topology& machine) {
  const std::string_view name = op != nullptr ? op : "collective";
  const std::string what = what_differs(name, mine, seen);
  std::string text = "VP " + std::to_string(me) + ": " + std::string(name) +
                     ": the VPs disagree on the " + what + " of collective call " +
                     std::to_string(mine.sequence) + " on " + group_name(mine.group, machine) +
                     ": ";
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const auto& [theirs, vps] = seen[i];
    text += (i == 0                 ? ""
             : i + 1 == seen.size() ? " but "
                                    : "; ") +
            vp_list(vps) + (vps.size() == 1 ? " calls " : " call ") +
            describe_tag(theirs, machine, vps.empty() ? -1 : vps.front());
  }
  return text;
}

bool Port::same(const MessageTag& a, const MessageTag& b, Compare compare) noexcept {
  return compare == Compare::header ? a == b : a.kind == b.kind && a.root == b.root;
}

// The members of the call's group that have published a header for the same call (group and
// sequence), grouped by header: agreement is one header. The group's members come from this
// VP's own table, so that only real members are compared.
std::string Port::disagreement(const MessageTag& tag, Compare compare) const {
  const detail::GroupInfo* group = groups_->find(tag.group);
  if (group == nullptr || group->size <= 1) return {};
  bool differs = false;
  std::vector<detail::TagHolders> seen;  // built only once one differs
  for (int pass = 0; pass < 2; ++pass) {
    for (int r = 0; r < group->size; ++r) {
      const int vp = group->vp_of(r);
      MessageTag theirs = tag;
      if (vp != id_) {
        detail::PublishedCalls calls;
        if (!detail::read_calls(fabric_->state(vp), calls)) continue;
        const MessageTag* found =
            calls.find(tag.group, tag.sequence,
                       group->shape == detail::GroupInfo::Shape::split ? group : nullptr);
        if (found == nullptr) continue;
        theirs = *found;
      }
      if (pass == 0) {
        if (!same(theirs, tag, compare)) {
          differs = true;
          break;
        }
        continue;
      }
      auto it = std::find_if(seen.begin(), seen.end(),
                             [&](const auto& entry) { return entry.first == theirs; });
      if (it == seen.end()) it = seen.insert(seen.end(), {theirs, {}});
      it->second.push_back(vp);
    }
    if (!differs) return passed_by(tag, *group, compare);
  }
  if (seen.size() < 2) return {};  // it changed meanwhile (a VP rewrote its call)
  return detail::describe_disagreement(id_, operation_name(), tag, seen, topology());
}

std::string Port::passed_by(const MessageTag& tag, const detail::GroupInfo& group,
                            Compare compare) const {
  using Chain = detail::PipelinedMeeting;
  const Chain* chain =
      tag.group == 0 ? &fabric_->pipelined_meeting() : fabric_->find_group_chain(group);
  if (chain == nullptr || chain->slot_count == 0) return {};
  // This VP's next meeting in the chain: the members that sat there came in a call of their
  // own, whose header their seat keeps until this VP has come too (the slot is freed only once
  // every member has).
  const std::uint64_t generation = tag.group == 0 ? pipelined_calls_ : group.pipelined_calls;
  const Chain::Slot& slot = chain->slot(generation);
  std::vector<detail::TagHolders> seen;
  for (int r = 0; r < group.size; ++r) {
    if (r == group.rank) continue;
    const Chain::Seat& seat = slot.seats[static_cast<std::size_t>(r)];
    if (!Chain::came_to(seat.mark.load(std::memory_order_acquire), generation)) continue;
    const MessageTag theirs = seat.tag;
    if (theirs.sequence != tag.sequence || theirs.group != tag.group || same(theirs, tag, compare))
      continue;
    if (seen.empty()) seen.push_back({tag, {id_}});
    auto it = std::find_if(seen.begin(), seen.end(),
                           [&](const auto& entry) { return entry.first == theirs; });
    if (it == seen.end()) it = seen.insert(seen.end(), {theirs, {}});
    it->second.push_back(group.vp_of(r));
  }
  if (seen.empty()) return {};
  return detail::describe_disagreement(id_, operation_name(), tag, seen, topology()) +
         " (they met in shared memory and went on)";
}

void Port::throw_stuck(int src, bool collective, const std::string& head) {
  // Blocked again while the others settle, so that the picture shows this VP's wait too.
  detail::VpState& me = fabric_->state(id_);
  me.waiting_for.store(src, std::memory_order_relaxed);
  me.operation.store(operation_name(), std::memory_order_relaxed);
  me.status.store(detail::kBlocked, std::memory_order_release);
  const bool settled = fabric_->settle();
  // Over several processes, the VPs this one sees (the watch's deadlock report names every
  // process's; this one is found at once, from here).
  const std::string waits =
      (fabric_->distributed()
           ? "Every VP of this process (VPs " + std::to_string(fabric_->first_vp()) + "-" +
                 std::to_string(fabric_->last_vp() - 1) + "): "
           : std::string("Every VP: ")) +
      fabric_->describe_waits();
  // It stays blocked while the exception leaves it: another VP stuck on the same finished peer
  // may be describing every VP's wait right now, and must see this one's too, not "running" (its
  // next wait sets its state afresh).
  if (!settled) throw_abandoned(src);
  if (collective)
    throw CollectiveMismatch(head + ": the VPs disagree on the collectives they call. " + waits);
  throw Deadlock("deadlock: " + head + ". " + waits);
}

namespace {
thread_local std::uint64_t tl_mismatched_size = detail::kNoSize;
}  // namespace

void detail::note_mismatched_size(std::uint64_t bytes) noexcept { tl_mismatched_size = bytes; }
std::uint64_t detail::take_mismatched_size() noexcept {
  return std::exchange(tl_mismatched_size, kNoSize);
}

void Port::throw_size_mismatch(int src, const char* op, std::uint64_t got, std::size_t want) const {
  note_mismatched_size(got);
  // A user's receive of elements larger than a byte names them too: "expected 5 elements of 8
  // bytes (40 bytes) but the message has 24 bytes (3 elements)".
  std::string expected = std::to_string(want) + " bytes";
  std::string has = std::to_string(got) + " bytes";
  if (element_ > 1) {
    expected = std::to_string(want / element_) + " elements of " + std::to_string(element_) +
               " bytes (" + expected + ")";
    if (got % element_ == 0) has += " (" + std::to_string(got / element_) + " elements)";
  }
  throw SizeMismatch("VP " + std::to_string(id_) + ": " + op + " from VP " + std::to_string(src) +
                     " expected " + expected + " but the message has " + has);
}

void Port::throw_tag_mismatch(int src, const MessageTag& got, const MessageTag& want) {
  const char* what = operation_ != nullptr ? operation_ : "recv";
  // Both are collectives' (a receive sets the other kind's messages aside: set_aside).
  throw CollectiveMismatch("VP " + std::to_string(id_) + ": " + what + " expected " +
                           detail::describe_tag(want, topology()) + " from VP " +
                           std::to_string(src) + " but got " +
                           detail::describe_tag(got, topology(), src) +
                           ": the VPs disagree on the " + what_differs(what, want, {{got, {src}}}));
}

void Port::throw_meeting_mismatch(int peer, const MessageTag& tag, const char* what,
                                  std::uint32_t meeting) const {
  const char* theirs = fabric_->state(peer).operation.load(std::memory_order_relaxed);
  throw CollectiveMismatch(
      "VP " + std::to_string(id_) + ": " + operation_name() + " " + what + " VP " +
      std::to_string(peer) + " in " + detail::describe_tag(tag, topology()) + ", but VP " +
      std::to_string(peer) + " meets the other VPs in its collective call " +
      std::to_string(meeting) + " (" + (theirs != nullptr ? theirs : "a collective") +
      "): the VPs disagree on the collective, its count, operator or algorithm");
}

void Port::throw_abandoned(int src) const {
  throw Aborted("VP " + std::to_string(id_) + ": " + operation_name() + " from VP " +
                std::to_string(src) + " abandoned: another VP failed or the run deadlocked");
}

void Port::throw_other_thread(const char* operation) const {
  const std::string here = std::to_string(naming_vp());
  throw Error("VP " + here + ": " + operation + " through VP " + std::to_string(id_) +
              "'s Proc or Group on VP " + here +
              "'s thread: a Proc, and a Group, belong to the VP whose body made them and act as "
              "that VP, so another VP may not call through them");
}
}  // namespace hypercomm
