// All-to-all personalized with blocks of any sizes (all_to_allv): Grama et al., Algorithm 4.10's
// pairwise exchange, each pair swapping the blocks they hold for each other.
//
// Step i is a sendrecv: VP v's clock becomes max(c_v + ts + tw*out_v(i), arrival of in_v(i)), so
// T is the longest path through the p - 1 steps, with no closed form for uneven counts
// (textbook_bounds_v bounds it by the equal-count forms); it also lies between the largest sum
// of one VP's sends and the sum over the steps of their largest message:
//
//   max_v sum_i (ts + tw*out_v(i))  <=  T  <=  sum_i max_v (ts + tw*out_v(i) + th*hops)
//
// and with equal blocks of m it is (ts + tw*m)*(p - 1) (+ th*(p/2)*log p on a hypercube).
//
// Restrictions: Links::routed unless p <= 2 (step i's partner is not a neighbour). On p = 2^d the
// partner of step i is my_id XOR i (E-cube order: no two pairs of a step share a hypercube link
// when routed over a hypercube); otherwise step i sends to my_id + i and receives from my_id - i
// (mod p). Send and receive sizes differ: the receiver's recv_counts say what it expects, and a
// sender whose count disagrees makes the receiver throw SizeMismatch naming both counts
// (irregular.cpp), never deliver a truncated block.
//
// When VPs outnumber cores the exchange may instead run as one meeting in shared memory
// (Port::meet): the p - 1 steps on the model clocks, each VP's messages of its own blocks' sizes
// (Rounds::sent_bytes), and every block moved once from the sender's in to the receiver's out.
// The members' counts differ, so none can tell from its own whether the whole exchange is small:
// every member meets, and the last to arrive, which sees them all, checks that each block's two
// counts agree and moves every block itself when they total at most kMeetingTotal; beyond, each
// VP copies the blocks it receives, straight from the senders' ins, and the VPs meet once more
// before any leaves (its in must stay until the others have read it).
#include <cstring>
#include <hypercomm/errors.hpp>
#include <string>

#include "card.hpp"
#include "exchange.hpp"
#include "select.hpp"

namespace hypercomm::detail {

namespace {

// The most that the last VP to arrive moves for all of them (as all_to_all's meeting).
constexpr std::size_t kMeetingTotal = std::size_t{1} << 20;

// What a VP brings to the meeting: where its blocks are and go.
struct Member {
  const std::byte* in;
  const Blocks* sent;
  std::byte* out;
  const Blocks* received;
};

struct Exchange {
  std::size_t elem_size;
  int me;                  // the last arriver, which reports a disagreement
  const GroupInfo* group;  // its group, which the report names
};

// What the meeting tells every VP (its result): whether its blocks have come (a 64-bit flag),
// then where every VP's are (p Member pointers).
[[nodiscard]] constexpr std::size_t outcome_bytes(int p) noexcept {
  return sizeof(std::uint64_t) + static_cast<std::size_t>(p) * sizeof(const Member*);
}

// Step `step`'s partners (the book's step i = step + 1): id XOR i on 2^d ranks, else id + i to
// send and id - i to receive; the messages' loop and the meeting's rounds both use them.
[[nodiscard]] int step_partner_to(int id, int step, int p) noexcept {
  return is_power_of_two(p) ? id ^ (step + 1) : (id + step + 1) % p;
}
[[nodiscard]] int step_partner_from(int id, int step, int p) noexcept {
  return is_power_of_two(p) ? id ^ (step + 1) : (id - step - 1 + p) % p;
}
[[nodiscard]] std::size_t step_bytes(const void* input, int id, int step, int p) noexcept {
  return static_cast<const Member*>(input)->sent->size(step_partner_to(id, step, p));
}

// The last arriver's: every pair's counts agree (else SizeMismatch, in elements, naming both
// ranks and both counts), then every block moved when they are few, and the members listed.
void exchange_blocks(const void* context, std::span<const void* const> inputs, Bytes result,
                     Bytes /*scratch*/) {
  // Not a structured binding: a lambda below uses elem_size, which Clang before 16 cannot capture.
  const Exchange& exchange = *static_cast<const Exchange*>(context);
  const std::size_t elem_size = exchange.elem_size;
  const int me = exchange.me;
  const GroupInfo* const group = exchange.group;
  const int p = static_cast<int>(inputs.size());
  const auto member = [&](int i) { return static_cast<const Member*>(inputs[i]); };
  std::size_t total = 0;
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) {
      const std::size_t sends = member(i)->sent->size(j), expects = member(j)->received->size(i);
      total += sends;
      if (sends == expects) continue;
      const auto elements = [&](std::size_t bytes) { return std::to_string(bytes / elem_size); };
      const std::string from = std::to_string(i), to = std::to_string(j);
      throw SizeMismatch(who(*group, me) + ": all_to_allv: rank " + from + " sends " +
                         elements(sends) + " elements to rank " + to + " (its send_counts[" + to +
                         "]) but rank " + to + " expects " + elements(expects) +
                         " (its recv_counts[" + from + "]) (they met in shared memory)");
    }
  const bool moved = total <= kMeetingTotal;
  if (moved)
    for (int i = 0; i < p; ++i)
      for (int j = 0; j < p; ++j)
        if (const std::size_t n = member(i)->sent->size(j); n != 0)
          std::memcpy(member(j)->out + member(j)->received->offset(i),
                      member(i)->in + member(i)->sent->offset(j), n);
  const std::uint64_t flag = moved ? 1 : 0;
  std::memcpy(result.data(), &flag, sizeof flag);
  for (int i = 0; i < p; ++i) {
    const Member* m = member(i);
    std::memcpy(result.data() + sizeof flag + static_cast<std::size_t>(i) * sizeof m, &m, sizeof m);
  }
}

// The exchange as a meeting (false: it may not meet; send the messages).
bool meet_pairwise(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                   const Blocks& received, std::size_t elem_size) {
  if (!c.is_call(Collective::all_to_allv)) return false;
  const int p = c.p();
  const Member mine{in.data(), &sent, out.data(), &received};
  const Exchange context{elem_size == 0 ? 1 : elem_size, c.port.id(), &c.group};
  Port::Rounds rounds{p - 1, 0, step_partner_to, step_partner_from};
  rounds.sent_bytes = step_bytes;
  Buffer told(outcome_bytes(p));
  if (!c.meet(rounds, &mine, exchange_blocks, &context, told, Port::Results::shared, told.size()))
    return false;
  std::uint64_t moved = 0;
  std::memcpy(&moved, told.data(), sizeof moved);
  if (moved != 0) return true;
  // Too much for one VP: this VP's blocks, from their senders' ins; then nobody leaves (and
  // reuses its in) before every VP has copied.
  for (int i = 0; i < p; ++i) {
    const Member* sender = nullptr;
    std::memcpy(&sender, told.data() + sizeof moved + static_cast<std::size_t>(i) * sizeof sender,
                sizeof sender);
    copy_bytes(received.block(out, i),
               ConstBytes(sender->in + sender->sent->offset(c.id()), sender->sent->size(c.id())));
  }
  const bool met = c.meet({0, 0, step_partner_to, step_partner_from});
  (void)met;  // it met above, and every meeting of a run may
  return true;
}

}  // namespace

void all_to_allv_pairwise(const Comm& c, ConstBytes in, const Blocks& sent, Bytes out,
                          const Blocks& received, std::size_t elem_size) {
  if (meet_pairwise(c, in, sent, out, received, elem_size)) return;
  const int p = c.p();
  const int my_id = c.id();
  copy_bytes(received.block(out, my_id), sent.block(in, my_id));  // M[my_id, my_id] stays here
  for (int step = 0; step + 1 < p; ++step) {                      // the book's step i = step + 1
    const int dest = step_partner_to(my_id, step, p);
    const int src = step_partner_from(my_id, step, p);
    // Send M[my_id, dest]; receive M[src, my_id] straight into its place in out.
    c.sendrecv(dest, sent.block(in, dest), src, received.block(out, src));
  }
}

namespace {
// Selection: one block of at most b a step (each step's congestion where p = 2^d).
// textbook_time_v: equal blocks of m, (p-1)*(ts + tw*m) plus, on a hypercube, th*(p/2)*log p
// (step i's routes have popcount(i) links); uneven, or th > 0 on routes whose lengths differ
// within a step: no closed form.
double all_to_allv_pairwise_cost(const CostQuery& q) {
  const int p = q.p();
  if (q.selection) {
    double cost = 0;
    for (int i = 1; i < p; ++i) cost += q.w(q.cap(1) * q.congestion(i));
    return cost;
  }
  if (!q.equal_counts()) return kNoClosedForm;
  const double block = q.as_regular().m() / p;
  double hops = 0;
  if (q.th() != 0) {
    if (q.t.kind() == Topology::Kind::hypercube)
      hops = (p / 2) * q.d();
    else if (p == 2)
      hops = q.t.distance(0, 1);
    else
      return kNoClosedForm;
  }
  return (p - 1) * q.w(block) + q.th() * hops;
}
const char* all_to_allv_pairwise_restriction(const Topology& t, Links links) noexcept {
  if (links == Links::routed || t.size() <= 2 || (t.size() == 3 && t.ring_adjacent()))
    return nullptr;
  return "its pairwise exchange sends to every other rank, which needs Links::routed";
}
}  // namespace

extern const AlgorithmCard all_to_allv_pairwise_card{
    {Collective::all_to_allv, Algo::hypercube,
     "Grama et al., Algorithm 4.10 with per-pair counts: step i swaps the blocks with id XOR i "
     "(2^d ranks; else sends to id + i, receives from id - i)",
     "uneven: no closed form (each step waits for the partner's clock); equal blocks of m: "
     "(ts + tw*m)*(p-1) + th*(p/2)*log p on a hypercube (th > 0 elsewhere: no closed form)",
     "Links::routed (p > 2); any p", "(ts + tw m)(p - 1)"},
    all_to_allv_pairwise_restriction,
    all_to_allv_pairwise_cost,
    [](const Comm& c, const Args& a) {
      all_to_allv_pairwise(c, a.in, *a.blocks, a.out, *a.received, a.elem_size);
    }};

}  // namespace hypercomm::detail
