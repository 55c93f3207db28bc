// What each member of an irregular collective passed (its counts), kept where the machine's
// other VPs can read it, so that a disagreement on the counts is reported with both ranks and
// both counts (API.md, "Irregular collectives") rather than with the digest the message header
// carries.
//
// Why a board beside the messages: the header has 32 bits for the counts, enough for a digest
// that detects a disagreement but not for the counts themselves; sending them would cost every
// call messages and model time. So each VP posts a copy of its counts on entering an irregular
// call, before its header is published (Call), and a VP that catches the runtime's
// CollectiveMismatch or SizeMismatch reads the other members' copies to name them. Only error
// texts come from here: no data of a collective moves through it, and the cost model and link
// accounting are untouched. (It touches a mutex and atomics, which the algorithms never do; it
// would sit beside the published call headers in runtime/ as well.) A VP's copies sit behind its
// own mutex, which it takes only when its counts change (a call with the same counts as its
// last on the group takes no lock and copies nothing) and a reporting VP takes briefly: no
// reader waits for another VP to act, and nothing is read unsynchronized.
//
// Which copy is the call's. A VP keeps its last posts (sixteen, fewer when they are long: a VP
// whose part of a call only sends runs on into later calls before its header is read), and a
// post says whether its VP is in the call now, and whether it left it by an exception (failed). A
// post whose VP is in the call now is of this run's call for certain ("fresh"); an older one might
// be of an earlier run's call with the same group and number. The sender of a message whose header
// matched this VP's is in the call for certain, so its newest post of the call is its counts. The
// VP this one was receiving from when the runtime reported a disagreement, whose post carries a
// digest the report names and was not left in a failed call, is named too: it is the sender of the
// disagreeing header unless the report came from the wait for it (the runtime compares the
// members' published headers while a VP waits) and that VP has not yet entered the call, and an
// earlier run's post of it happens to hold counts that another member passes now. Copies are
// also found by content: the counts whose digest a header carries, whoever posted them (the tag
// describer prints counts, not digests). The posts are this process's: where a machine spans
// processes (hypercomm::mpi), a VP of another process has none here, and the texts name its
// counts by their digest, as before.
#pragma once

#include <cstdint>
#include <hypercomm/detail/core.hpp>
#include <hypercomm/group.hpp>
#include <optional>
#include <string>
#include <vector>

#include "message.hpp"

namespace hypercomm::detail {

struct Post;
struct PostSlot;

// This VP's post for one irregular call on g: made before the call's header is published, marked
// left when the call returns or throws.
class CountsPost {
 public:
  CountsPost(const Group& g, Collective op, std::uint32_t digest, Counts counts);
  ~CountsPost();
  CountsPost(const CountsPost&) = delete;
  CountsPost& operator=(const CountsPost&) = delete;

  // Rank `rank` of g's newest post of this call, if it has one.
  struct View {
    std::vector<std::size_t> counts;
    std::uint32_t digest;
    bool fresh;   // of this run's call for certain (its VP is in the call now)
    bool failed;  // its call was left by an exception, or reported (mark_failed)
  };
  [[nodiscard]] std::optional<View> view(int rank) const;
  // Marks every member's post of this call failed: the call is being reported, so a later run's
  // call with the same group and number must not take them for its own.
  void mark_failed() const;
  // Whether a header is of this call (its group, number and collective).
  [[nodiscard]] bool of_this_call(const MessageTag& tag) const noexcept {
    return tag.group == group_ && tag.sequence == sequence_ && tag.kind == kind_;
  }

 private:
  const Group& g_;
  std::uint32_t group_, sequence_;
  std::uint8_t kind_;
  PostSlot* slot_;
  int exceptions_;  // std::uncaught_exceptions() at the post
  Post* post_ = nullptr;
};

// The counts whose digest is `digest`, posted by any VP of `machine` (nothing when no VP holds
// them any more).
[[nodiscard]] std::optional<std::vector<std::size_t>> posted_counts(const Topology& machine,
                                                                    std::uint32_t digest);

// The headers the tag describer described on this thread since this VP's last CountsPost: those
// a runtime error text about this VP's call names, each with the machine id of a VP that holds
// it (the VP whose header the text describes: naming_vp, group_info.hpp), or -1.
struct DescribedTag {
  MessageTag tag;
  int holder = -1;
};
[[nodiscard]] std::vector<DescribedTag> described_tags();
void note_described(const MessageTag& tag, int holder) noexcept;

// "{3, 0, 5, 2}"; after 16 entries "..., (n entries)".
[[nodiscard]] std::string show_counts(Counts counts);

}  // namespace hypercomm::detail
