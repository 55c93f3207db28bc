// The posted counts of the irregular collectives (posted_counts.hpp).
#include "posted_counts.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "group_info.hpp"

namespace hypercomm::detail {

// A post: one irregular call's identity and counts. The counts change only under the slot's
// mutex; the identity, `inside` and `failed` are atomics, so that the VP's next call with the
// same counts on the same group (a loop's) takes no lock: it moves `sequence` on and sets
// `inside`, and a reader (who holds the mutex, so the counts stay put) sees the old call or the
// new one, with the same counts either way.
struct Post {
  std::atomic<std::uint32_t> group{0}, sequence{0}, digest{0};
  std::atomic<std::uint8_t> kind{0};  // 0: empty
  std::atomic<bool> inside{false};    // the VP is in this call now
  std::atomic<bool> failed{false};    // left by an exception, or reported (mark_failed)
  std::vector<std::size_t> counts;
};

// One VP's posts: its last irregular calls with different counts, kPosts at most, in a ring
// (newest: the newer's index, written by the VP only, under the mutex). Why more than the call
// at hand: a VP whose part of a call only sends (a gatherv's leaf, a scatterv's root) runs on
// through later calls before a member reads its header, so the post a report needs may be
// several calls old. Entries beyond the newest two are dropped when the posts together hold more
// than kKeptEntries counts, so that a machine of thousands of VPs in full-size groups keeps little.
constexpr std::size_t kPosts = 16;
constexpr std::size_t kKeptEntries = 8192;
struct PostSlot {
  std::mutex mutex;
  std::array<Post, kPosts> posts;
  std::size_t newest = 0;
};

constexpr auto kRelaxed = std::memory_order_relaxed;
constexpr auto kRelease = std::memory_order_release;
constexpr auto kAcquire = std::memory_order_acquire;

namespace {

// The slots of every VP that has made an irregular call, by machine (its topology object, one
// per live Machine) and VP id. A VP thread finds its own slot through a thread_local and drops it
// when the thread ends (a Machine's threads end with it), so a later Machine at the same address
// starts with none.
struct Registry {
  std::mutex mutex;
  std::map<std::pair<const Topology*, int>, std::shared_ptr<PostSlot>> slots;
};
Registry& registry() {
  static auto* r = new Registry;  // never destroyed: threads may end after static destructors
  return *r;
}

std::shared_ptr<PostSlot> find_slot(const Topology* machine, int vp) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  const auto it = r.slots.find({machine, vp});
  return it == r.slots.end() ? nullptr : it->second;
}

struct OwnSlot {
  const Topology* machine = nullptr;
  int vp = -1;
  std::shared_ptr<PostSlot> slot;

  void drop() {
    if (!slot) return;
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    const auto it = r.slots.find({machine, vp});
    if (it != r.slots.end() && it->second == slot) r.slots.erase(it);
    slot.reset();
  }
  ~OwnSlot() { drop(); }

  PostSlot& of(const Topology* m, int id) {
    if (slot && machine == m && vp == id) return *slot;
    drop();
    machine = m, vp = id;
    slot = std::make_shared<PostSlot>();
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    r.slots[{m, id}] = slot;
    return *slot;
  }
};
thread_local OwnSlot own_slot;

// The headers the describer described on this thread since the last post (a few suffice: a
// runtime error text names one header per disagreeing set of VPs).
struct Described {
  std::array<DescribedTag, 8> tags{};
  std::size_t count = 0;
};
thread_local Described described;

}  // namespace

CountsPost::CountsPost(const Group& g, Collective op, std::uint32_t digest, Counts counts)
    : g_(g),
      group_(g.info().id),
      sequence_(g.info().sequence + 1),  // the number Call gives this call
      kind_(static_cast<std::uint8_t>(op)),
      slot_(&own_slot.of(&g.proc().topology(), g.proc().id())),
      exceptions_(std::uncaught_exceptions()) {
  described.count = 0;
  // Only this VP writes its posts, so it reads its own without the lock.
  Post& last = slot_->posts[slot_->newest];
  if (last.kind.load(kRelaxed) == kind_ && last.group.load(kRelaxed) == group_ &&
      last.sequence.load(kRelaxed) < sequence_ &&
      std::equal(counts.begin(), counts.end(), last.counts.begin(), last.counts.end())) {
    post_ = &last;  // the same counts again: no lock, no copy
    last.failed.store(false, kRelaxed);
    last.sequence.store(sequence_, kRelease);
    last.inside.store(true, kRelease);
    return;
  }
  const std::lock_guard lock(slot_->mutex);
  slot_->newest = (slot_->newest + 1) % kPosts;
  Post& post = slot_->posts[slot_->newest];
  post.counts.assign(counts.begin(), counts.end());  // keeps its capacity
  post.group.store(group_, kRelaxed);
  post.sequence.store(sequence_, kRelaxed);
  post.digest.store(digest, kRelaxed);
  post.kind.store(kind_, kRelaxed);
  post.failed.store(false, kRelaxed);
  post.inside.store(true, kRelaxed);
  // Older posts past the budget go (the newest two always stay).
  std::size_t entries = 0;
  for (std::size_t age = 0; age < kPosts; ++age) {
    Post& older = slot_->posts[(slot_->newest + kPosts - age) % kPosts];
    entries += older.counts.capacity();
    if (age >= 2 && entries > kKeptEntries) {
      older.kind.store(0, kRelaxed);
      std::vector<std::size_t>().swap(older.counts);
    }
  }
  post_ = &post;
}

CountsPost::~CountsPost() {
  if (std::uncaught_exceptions() > exceptions_) post_->failed.store(true, kRelaxed);
  post_->inside.store(false, kRelease);
}

std::optional<CountsPost::View> CountsPost::view(int rank) const {
  const std::shared_ptr<PostSlot> slot = find_slot(&g_.proc().topology(), g_.vp(rank));
  if (!slot) return std::nullopt;
  const std::lock_guard lock(slot->mutex);
  for (std::size_t age = 0; age < kPosts; ++age) {
    const Post& post = slot->posts[(slot->newest + kPosts - age) % kPosts];
    if (post.kind.load(kRelaxed) != kind_ || post.group.load(kRelaxed) != group_ ||
        post.sequence.load(kAcquire) != sequence_)
      continue;
    // In the call now: of this run's call for certain (a VP is in one call at a time).
    const bool inside = post.inside.load(kAcquire) && post.sequence.load(kAcquire) == sequence_;
    return View{post.counts, post.digest.load(kRelaxed), inside, post.failed.load(kRelaxed)};
  }
  return std::nullopt;
}

void CountsPost::mark_failed() const {
  for (int rank = 0; rank < g_.size(); ++rank) {
    const std::shared_ptr<PostSlot> slot = find_slot(&g_.proc().topology(), g_.vp(rank));
    if (!slot) continue;
    const std::lock_guard lock(slot->mutex);
    for (Post& post : slot->posts)
      if (post.kind.load(kRelaxed) == kind_ && post.group.load(kRelaxed) == group_ &&
          post.sequence.load(kRelaxed) == sequence_)
        post.failed.store(true, kRelaxed);
  }
}

std::optional<std::vector<std::size_t>> posted_counts(const Topology& machine,
                                                      std::uint32_t digest) {
  for (int vp = 0; vp < machine.size(); ++vp) {
    const std::shared_ptr<PostSlot> slot = find_slot(&machine, vp);
    if (!slot) continue;
    const std::lock_guard lock(slot->mutex);
    for (const Post& post : slot->posts)
      if (post.kind.load(kRelaxed) != 0 && post.digest.load(kRelaxed) == digest) return post.counts;
  }
  return std::nullopt;
}

std::vector<DescribedTag> described_tags() {
  const std::size_t n = std::min(described.count, described.tags.size());
  return {described.tags.begin(), described.tags.begin() + static_cast<std::ptrdiff_t>(n)};
}

void note_described(const MessageTag& tag, int holder) noexcept {
  if (described.count < described.tags.size()) described.tags[described.count] = {tag, holder};
  ++described.count;
}

std::string show_counts(Counts counts) {
  constexpr std::size_t kShown = 16;
  std::string s = "{";
  for (std::size_t i = 0; i < counts.size() && i < kShown; ++i)
    s += (i == 0 ? "" : ", ") + std::to_string(counts[i]);
  if (counts.size() > kShown) s += ", ... (" + std::to_string(counts.size()) + " entries)";
  return s + "}";
}

}  // namespace hypercomm::detail
