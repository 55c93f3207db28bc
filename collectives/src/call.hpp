// One collective call on one VP (the call port the algorithms see through Comm), and the checks
// every entry point makes before it: membership, roots, buffer sizes, overlapping buffers.
#pragma once

#include <hypercomm/errors.hpp>
#include <hypercomm/group.hpp>
#include <string>

#include "operator_names.hpp"
#include "scratch.hpp"
#include "select.hpp"

namespace hypercomm::detail {

inline std::string vp_name(const Group& g) { return who(g.info(), g.proc().id()); }

[[noreturn]] inline void size_error(const Group& g, Collective op, const std::string& what) {
  throw SizeMismatch(vp_name(g) + ": " + to_string(op) + ": " + what);
}

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_not_member(const Group& g, Collective op) {
  throw LinkError(vp_name(g) + ": " + to_string(op) + " on an empty group (" + g.name() +
                  ", this VP split with a negative color and is in no group)");
}

// A VP outside every group of a split (color < 0) holds an empty group: it has no collective.
inline void check_member(const Group& g, Collective op) {
  if (g.info().size == 0) [[unlikely]]
    throw_not_member(g, op);
}

inline std::size_t elements(std::size_t bytes, std::size_t elem_size) {
  return elem_size == 0 ? 0 : bytes / elem_size;
}

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_bad_root(const Group& g, Collective op,
                                                                  int root) {
  throw LinkError(vp_name(g) + ": " + to_string(op) + " with root " + std::to_string(root) +
                  ", which is outside [0, " + std::to_string(g.size()) + ")" +
                  (g.info().shape == GroupInfo::Shape::world ? "" : " of " + g.name()));
}

inline void check_root(const Group& g, Collective op, int root) {
  if (root < 0 || root >= g.info().size) [[unlikely]]
    throw_bad_root(g, op, root);
}

// An irregular call's blocks as automatic weighs them (select.hpp): the largest and all of them.
struct Extent {
  std::size_t largest = 0;
  std::size_t total = 0;
};

// One collective call on this VP: its group, its algorithm, its header and its trace span.
class Call {
 public:
  // op_traits: the reduction's operator, as automatic weighs it (select.hpp); elem_size: the
  // size of the call's elements, which its mismatch messages count (set_call_element).
  Call(const Group& g, Collective op, Algo requested, std::size_t bytes, std::size_t elem_size,
       int root = 0, OperatorTraits op_traits = {})
      : Call(g, op, requested, bytes, 0, root, static_cast<std::uint32_t>(bytes), bytes,
             op_traits) {
    set_call_element(elem_size);
  }
  // An irregular collective: automatic weighs its largest block and its total, and the header's
  // count field carries `digest` (of the counts that every member must agree on, or 0).
  Call(const Group& g, Collective op, Algo requested, Extent blocks, int root, std::uint32_t digest)
      : Call(g, op, requested, blocks.largest, blocks.total, root, digest, blocks.total) {}
  ~Call() {
    port_.end_call();
    port_.end_span();
    set_call_element(outer_element_);
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  [[nodiscard]] Comm comm() const noexcept { return Comm{port_, group_, copy_tag(tag_)}; }
  [[nodiscard]] const Choice& choice() const noexcept { return choice_; }
  [[nodiscard]] Algo algo() const noexcept { return choice_.algo(); }
  [[nodiscard]] bool alone() const noexcept { return group_.size == 1; }
  // Runs the chosen card's algorithm with these arguments (and the choice's family and chunks).
  void run(Args args) const { run(comm(), args); }
  void run(const Comm& c, Args args) const {
    args.family = choice_.family;
    args.chunks = choice_.chunks;
    args.all_ports = choice_.all_ports;
    choice_.card->run(c, args);
    port_.check_call_end();
  }

 private:
  Call(const Group& g, Collective op, Algo requested, std::size_t bytes, std::size_t total,
       int root, std::uint32_t tag_count, std::uint64_t span_bytes, OperatorTraits op_traits = {})
      : port_(Port::of(g.proc())),
        group_(g.info()),
        choice_(select(op, group_, port_.options().links, bytes, requested, port_.id(),
                       port_.options().model, total, op == Collective::circular_shift ? root : 0,
                       op_traits, port_.shared_core_count())) {
    port_.check_thread(to_string(op));
    tag_ = make_tag(++group_.sequence, group_.id, static_cast<std::uint16_t>(root),
                    static_cast<std::uint8_t>(op), tag_algo(choice_.algo(), requested), tag_count);
    port_.begin_span(to_string(op), port_.tracing() ? to_string(choice_.algo()) : nullptr,
                     span_bytes, group_.id);
    try {
      port_.begin_call(tag_);  // published for the members' mismatch check (Port::begin_call)
    } catch (...) {            // a test's fault hook (runtime/src/faults.hpp)
      port_.end_call();
      port_.end_span();
      throw;
    }
  }

  Port& port_;
  GroupInfo& group_;
  Choice choice_;
  MessageTag tag_{};
  std::size_t outer_element_ = call_element();  // a call within a call (split's) restores it
};

// A private copy of `in` when it overlaps `out`, so that algorithms may read in after writing out.
inline ConstBytes separate(ConstBytes in, ConstBytes out, Buffer& storage) {
  if (!overlaps(in, out)) return in;
  storage.assign(in.begin(), in.end());
  return storage;
}

}  // namespace hypercomm::detail
