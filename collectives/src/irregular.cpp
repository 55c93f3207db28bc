// The irregular collectives (API.md, "Irregular collectives"): the regular collectives' book
// algorithms run with blocks of any sizes. The counts become a Blocks of byte offsets, and the
// algorithm files, which already address every block through Blocks, move the uneven blocks as
// they are: the hypercube all-gather (Algorithm 4.7) sends the union of the blocks it holds, the
// hypercube gather and scatter send whole subtrees, the ring (4.4, 4.5) and mesh (4.6) phases
// carry each member's block whatever its size. all_to_allv runs the pairwise exchange of 4.10
// (Algo::hypercube), the ring (4.5.1), the mesh (4.5.2) or the dimension exchange (4.5.3), the
// last three sending the sizes of the blocks they forward ahead of them (all_to_allv_ring.cpp).
// Algo::automatic weighs the largest block and the total (the irregular cards' costs); for
// all_to_allv, whose members' counts differ, it chooses alike on every member (select.cpp).
//
// Members that must pass the same counts carry a digest of them in every message header, so a
// member whose counts differ gets CollectiveMismatch instead of wrong data; and every member
// posts its counts (posted_counts.hpp) so that the error names the ranks and the counts that
// differ: "rank 1 passes counts[2] = 5 but rank 0 (this VP) passes counts[2] = 1". An
// all_to_allv receive whose size is not what recv_counts says names the sender's send_counts
// entry the same way (SizeMismatch, in elements).
#include <algorithm>
#include <hypercomm/errors.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "call.hpp"
#include "exchange.hpp"
#include "posted_counts.hpp"
#include "rooted.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

namespace {

void check_counts(const Group& g, Collective op, Counts counts, const char* what) {
  if (counts.size() != static_cast<std::size_t>(g.info().size))
    size_error(g, op,
               std::string(what) + " has " + std::to_string(counts.size()) +
                   " entries but the group has " + std::to_string(g.info().size) + " members");
}

// Byte offsets of the blocks: p + 1 entries, the last the total.
Blocks::Offsets offsets_of(Counts counts, std::size_t elem_size) {
  Blocks::Offsets off(counts.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) off[i + 1] = off[i] + counts[i] * elem_size;
  return off;
}

// What automatic weighs: the largest block and all of them, in bytes.
Extent extent_of(Counts counts, std::size_t elem_size) {
  Extent e;
  for (const std::size_t c : counts) {
    e.largest = std::max(e.largest, c * elem_size);
    e.total += c * elem_size;
  }
  return e;
}

// A hash of the counts, in order: equal on every member that passes the same counts. A count a
// step (multiply and fold, as splitmix64's mixing), not a byte: it is on every call's path.
std::uint32_t digest(Counts counts) {
  std::uint64_t h = 0x9E3779B97F4A7C15u ^ counts.size();
  for (const std::size_t c : counts) {
    h = (h ^ c) * 0xBF58476D1CE4E5B9u;
    h ^= h >> 31;
  }
  return static_cast<std::uint32_t>(h ^ (h >> 32));
}

// `why` names where `want` comes from ("the sum of counts"), or with own >= 0 this rank's entry
// of `why` ("counts[3] (this rank's count)"); the text is made only when the sizes differ.
void check_block(const Group& g, Collective op, const char* name, std::size_t bytes,
                 std::size_t want, std::size_t elem_size, const char* why, int own = -1) {
  if (bytes == want) [[likely]]
    return;
  const std::string source =
      own < 0 ? std::string(why)
              : std::string(why) + "[" + std::to_string(own) + "] (this rank's count)";
  size_error(g, op,
             std::string(name) + " holds " + std::to_string(elements(bytes, elem_size)) +
                 " elements but " + source + " is " + std::to_string(elements(want, elem_size)));
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i)
    s += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  return s;
}

// The CollectiveMismatch `e` of this VP's call, reworded when the members pass different counts:
// which ranks pass which counts, by the first entry that differs from this VP's, then the
// runtime's text (which names every VP and the header it holds). A rank is named when its post
// is of this call for certain, or when it is `src`, the rank this VP was receiving from, and its
// post holds counts the runtime's text names (posted_counts.hpp); counts the text names that no
// named rank holds are "another member's".
[[noreturn]] void throw_counts_mismatch(const Group& g, Collective op, Counts mine,
                                        const CountsPost& post, int src,
                                        const CollectiveMismatch& e) {
  struct Differing {
    std::vector<std::size_t> counts;
    std::vector<int> ranks;
  };
  std::vector<Differing> differing;
  const auto note = [&](const std::vector<std::size_t>& counts, int rank) {
    if (counts.size() != mine.size() || std::equal(counts.begin(), counts.end(), mine.begin()))
      return;
    auto it = std::find_if(differing.begin(), differing.end(),
                           [&](const Differing& d) { return d.counts == counts; });
    if (it == differing.end()) it = differing.insert(differing.end(), {counts, {}});
    if (rank >= 0 && std::find(it->ranks.begin(), it->ranks.end(), rank) == it->ranks.end())
      it->ranks.push_back(rank);
  };
  // The headers the runtime's text names for this call: their counts, and the rank of the member
  // that holds them where the text names one (-1: whoever holds them).
  const int me = g.info().rank;
  const auto rank_of = [&](int vp) {
    for (int r = 0; r < g.info().size; ++r)
      if (r != me && g.info().vp_of(r) == vp) return r;
    return -1;
  };
  std::vector<std::pair<std::uint32_t, int>> named;  // (digest, rank or -1)
  for (const DescribedTag& d : described_tags())
    if (post.of_this_call(d.tag))
      named.emplace_back(d.tag.count, d.holder < 0 ? -1 : rank_of(d.holder));
  for (int r = 0; r < g.info().size; ++r) {
    if (r == me) continue;
    const auto view = post.view(r);
    if (!view) continue;
    const bool sender = r == src && !view->failed &&
                        std::any_of(named.begin(), named.end(),
                                    [&](const auto& n) { return n.first == view->digest; });
    if (view->fresh || sender) note(view->counts, r);
  }
  for (const auto& [digest, rank] : named)
    if (const auto counts = posted_counts(g.proc().topology(), digest)) note(*counts, rank);
  post.mark_failed();
  if (differing.empty()) throw e;  // not about the counts (another collective, root, ...)

  const std::string self = "rank " + std::to_string(me) + " (this VP)";
  std::string text = vp_name(g) + ": " + to_string(op) + ": the members pass different counts: ";
  std::string listed = self + " " + show_counts(mine);
  for (std::size_t k = 0; k < differing.size(); ++k) {
    Differing& d = differing[k];
    std::sort(d.ranks.begin(), d.ranks.end());
    const std::string who = d.ranks.empty() ? "another member" : ranks_text(d.ranks);
    std::size_t first = 0, more = 0;
    for (std::size_t i = mine.size(); i-- > 0;)
      if (d.counts[i] != mine[i]) first = i, ++more;
    const std::string at = "counts[" + std::to_string(first) + "] = ";
    text += (k == 0 ? "" : "; ") + who + (d.ranks.size() > 1 ? " pass " : " passes ") + at +
            std::to_string(d.counts[first]) + " but " + self + " passes " + at +
            std::to_string(mine[first]);
    if (more > 1) text += " (and " + std::to_string(more - 1) + " more entries differ)";
    listed += "; " + who + " " + show_counts(d.counts);
  }
  throw CollectiveMismatch(text + " (" + listed + "). " + e.what());
}

// The SizeMismatch `e` of an all_to_allv receive from rank `src`, in the operation's words:
// what the sender's send_counts and this VP's recv_counts say, in elements. The sender is in
// this call for certain (its message's header is this call's), so its newest post is its counts.
[[noreturn]] void throw_block_mismatch(const Group& g, const CountsPost& post, int src,
                                       Counts recv_counts, std::size_t element,
                                       const SizeMismatch& e) {
  if (src < 0) throw e;
  const int me = g.info().rank;
  const std::string to = std::to_string(me), from = std::to_string(src);
  const std::string expects = "rank " + to + " (this VP) expects " +
                              std::to_string(recv_counts[static_cast<std::size_t>(src)]) +
                              " (its recv_counts[" + from + "])";
  std::string text = vp_name(g) + ": all_to_allv: ";
  const auto sent = post.view(src);
  const std::uint64_t got = take_mismatched_size();
  if (sent && sent->counts.size() == static_cast<std::size_t>(g.info().size))
    text += "rank " + from + " sends " +
            std::to_string(sent->counts[static_cast<std::size_t>(me)]) + " elements to rank " + to +
            " (its send_counts[" + to + "]) but " + expects;
  else if (got != kNoSize && element != 0 && got % element == 0)  // its post in another process
    text += "rank " + from + " sends " + std::to_string(got / element) + " elements to rank " + to +
            " but " + expects;
  else
    text += "the block rank " + from + " sends to rank " + to + " is not the size " + expects;
  throw SizeMismatch(text + ". " + e.what());
}

// Runs an irregular collective's algorithm on `c`, rewording a CollectiveMismatch on the counts.
template <class Algorithm>
void naming_counts(const Group& g, Collective op, Counts counts, const CountsPost& post, Comm& c,
                   Algorithm algorithm) {
  int src = -1;
  c.receiving = &src;
  try {
    algorithm();
  } catch (const CollectiveMismatch& e) {
    throw_counts_mismatch(g, op, counts, post, src, e);
  }
}

}  // namespace

void throw_block_size(const Comm& c, int source, std::size_t got, std::size_t want) {
  if (c.receiving != nullptr) *c.receiving = source;
  note_mismatched_size(got);
  throw SizeMismatch("VP " + std::to_string(c.port.id()) + ": all_to_allv: the block from rank " +
                     std::to_string(source) + " holds " + std::to_string(got) +
                     " bytes but this VP expects " + std::to_string(want) + " bytes");
}

void throw_rank_count(const Group& g, const char* op, std::size_t entries) {
  throw SizeMismatch(vp_name(g) + ": " + op + ": out_per_rank has " + std::to_string(entries) +
                     " entries but the group has " + std::to_string(g.info().size) + " members");
}

void all_gatherv(const Group& g, ConstBytes in, Bytes out, Counts counts, std::size_t elem_size,
                 Algo algo) {
  const Collective op = Collective::all_gatherv;
  check_member(g, op);
  check_counts(g, op, counts, "counts");
  const Blocks blocks(offsets_of(counts, elem_size));
  const int me = g.info().rank;
  check_block(g, op, "in", in.size(), blocks.size(me), elem_size, "counts", me);
  check_block(g, op, "out", out.size(), blocks.total(), elem_size, "the sum of counts");
  Buffer storage;
  in = separate(in, out, storage);
  const std::uint32_t sum = digest(counts);
  const CountsPost post(g, op, sum, counts);
  const Call call(g, op, algo, extent_of(counts, elem_size), 0, sum);
  copy_bytes(blocks.block(out, me), in);  // received blocks land in place around it
  if (call.alone()) return;
  Comm c = call.comm();
  naming_counts(g, op, counts, post, c,
                [&] { call.run(c, {.out = out, .blocks = &blocks, .elem_size = elem_size}); });
}

namespace {

// gatherv and scatterv: the same checks and the same call, mirrored. Gather's own block is `in`
// and the root's whole buffer `out`; scatter's the other way round.
void rooted_v(const Group& g, Collective op, ConstBytes in, Bytes out, Counts counts,
              std::size_t elem_size, int root) {
  const bool gathering = op == Collective::gatherv;
  check_member(g, op);
  check_root(g, op, root);
  check_counts(g, op, counts, "counts");
  const Blocks blocks(offsets_of(counts, elem_size));
  const int me = g.info().rank;
  check_block(g, op, gathering ? "in" : "out", gathering ? in.size() : out.size(), blocks.size(me),
              elem_size, "counts", me);
  if (me == root)
    check_block(g, op, gathering ? "the root's out" : "the root's in",
                gathering ? out.size() : in.size(), blocks.total(), elem_size, "the sum of counts");
  Buffer storage;
  if (me == root) in = separate(in, out, storage);
  const std::uint32_t sum = digest(counts);
  const CountsPost post(g, op, sum, counts);
  const Call call(g, op, Algo::automatic, extent_of(counts, elem_size), root, sum);
  if (call.alone()) return copy_bytes(out, in);
  Comm c = call.comm();
  naming_counts(g, op, counts, post, c, [&] {
    call.run(c, {.in = in, .out = out, .blocks = &blocks, .root = root, .elem_size = elem_size});
  });
}

}  // namespace

void gatherv(const Group& g, ConstBytes in, Bytes out, Counts counts, std::size_t elem_size,
             int root) {
  rooted_v(g, Collective::gatherv, in, out, counts, elem_size, root);
}

void scatterv(const Group& g, ConstBytes in, Bytes out, Counts counts, std::size_t elem_size,
              int root) {
  rooted_v(g, Collective::scatterv, in, out, counts, elem_size, root);
}

void all_to_allv(const Group& g, ConstBytes in, Counts send_counts, Bytes out, Counts recv_counts,
                 std::size_t elem_size, Algo algo) {
  const Collective op = Collective::all_to_allv;
  check_member(g, op);
  check_counts(g, op, send_counts, "send_counts");
  check_counts(g, op, recv_counts, "recv_counts");
  const Blocks sent_blocks(offsets_of(send_counts, elem_size));
  const Blocks received_blocks(offsets_of(recv_counts, elem_size));
  check_block(g, op, "in", in.size(), sent_blocks.total(), elem_size, "the sum of send_counts");
  check_block(g, op, "out", out.size(), received_blocks.total(), elem_size,
              "the sum of recv_counts");
  const int me = g.info().rank;
  if (send_counts[static_cast<std::size_t>(me)] != recv_counts[static_cast<std::size_t>(me)])
    size_error(g, op,
               "send_counts[" + std::to_string(me) +
                   "] = " + std::to_string(send_counts[static_cast<std::size_t>(me)]) +
                   " but recv_counts[" + std::to_string(me) +
                   "] = " + std::to_string(recv_counts[static_cast<std::size_t>(me)]) +
                   " (the block a rank sends itself)");
  Buffer storage;
  in = separate(in, out, storage);
  // Counts differ from member to member: no digest; each receive checks its size, and the
  // posted send_counts name the sender's side of a disagreement.
  const CountsPost post(g, op, 0, send_counts);
  const Call call(g, op, algo, extent_of(send_counts, elem_size), 0, 0);
  if (call.alone()) return copy_bytes(out, in);
  int src = -1;
  Comm c = call.comm();
  c.receiving = &src;
  try {
    call.run(c, {.in = in,
                 .out = out,
                 .blocks = &sent_blocks,
                 .received = &received_blocks,
                 .elem_size = elem_size});
  } catch (const SizeMismatch& e) {
    throw_block_mismatch(g, post, src, recv_counts, elem_size, e);
  }
}

void reduce_scatterv(const Group& g, ConstBytes in, Bytes out, const Reducer& op, Counts counts,
                     Algo algo) {
  const Collective kind = Collective::reduce_scatterv;
  check_member(g, kind);
  check_counts(g, kind, counts, "counts");
  const Blocks blocks(offsets_of(counts, op.elem_size));
  const int me = g.info().rank;
  check_block(g, kind, "in", in.size(), blocks.total(), op.elem_size, "the sum of counts");
  check_block(g, kind, "out", out.size(), blocks.size(me), op.elem_size, "counts", me);
  Buffer storage;
  in = separate(in, out, storage);
  const std::uint32_t sum = digest(counts);
  const CountsPost post(g, kind, sum, counts);
  const Call call(g, kind, algo, extent_of(counts, op.elem_size), reduction_root(op), sum);
  if (call.alone()) return copy_bytes(out, in);
  Comm c = call.comm();
  naming_counts(g, kind, counts, post, c, [&] {
    call.run(c, {.in = in, .out = out, .blocks = &blocks, .op = &op, .elem_size = op.elem_size});
  });
}

}  // namespace hypercomm::detail
