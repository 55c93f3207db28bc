// The byte-level entry points of every collective: check the local buffers (SizeMismatch) and
// the root, resolve the algorithm (AlgorithmError, before any message), stamp the message header
// that lets a receiver detect a disagreement (CollectiveMismatch), and dispatch to the algorithm
// files. Nothing here moves data between VPs except through the algorithms.
#include <hypercomm/errors.hpp>
#include <hypercomm/group.hpp>
#include <string>
#include <vector>

#include "exchange.hpp"
#include "rooted.hpp"
#include "select.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

// Declared here, written beside the other scans: the mesh prefix (row chains, then the last
// column, then the rows again), for meshes where VP i and i+1 are not all neighbours.
void scan_mesh(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, bool exclusive);

namespace {

std::string vp_name(const Group& g) { return who(g.info(), g.proc().id()); }

[[noreturn]] void size_error(const Group& g, Collective op, const std::string& what) {
  throw SizeMismatch(vp_name(g) + ": " + to_string(op) + ": " + what);
}

// A VP outside every group of a split (color < 0) holds an empty group: it has no collective.
void check_member(const Group& g, Collective op) {
  if (g.info().size == 0)
    throw LinkError(vp_name(g) + ": " + to_string(op) + " on an empty group (" + g.name() +
                    ", this VP split with a negative color and is in no group)");
}

std::size_t elements(std::size_t bytes, std::size_t elem_size) {
  return elem_size == 0 ? 0 : bytes / elem_size;
}

void check_root(const Group& g, Collective op, int root) {
  if (root < 0 || root >= g.size())
    throw LinkError(vp_name(g) + ": " + to_string(op) + " with root " + std::to_string(root) +
                    ", which is outside [0, " + std::to_string(g.size()) + ")" +
                    (g.info().shape == GroupInfo::Shape::world ? "" : " of " + g.name()));
}

bool overlaps(ConstBytes a, ConstBytes b) noexcept {
  if (a.empty() || b.empty()) return false;
  const auto* a0 = a.data();
  const auto* b0 = b.data();
  return a0 < b0 + b.size() && b0 < a0 + a.size();
}

// One collective call on this VP: its group, its algorithm, its header and its trace span.
class Call {
 public:
  Call(const Group& g, Collective op, Algo requested, std::size_t bytes, int root = 0)
      : vp_(g.proc()),
        group_(g.info()),
        choice_(select(op, group_, vp_.options().links, bytes, requested, vp_.id())) {
    tag_.sequence = ++group_.sequence;
    tag_.group = group_.id;
    tag_.root = static_cast<std::uint16_t>(root);
    tag_.kind = static_cast<std::uint8_t>(op);
    tag_.algo = static_cast<std::uint8_t>(choice_.algo);
    tag_.count = static_cast<std::uint32_t>(bytes);
    vp_.begin_span(to_string(op), to_string(choice_.algo), bytes);
  }
  ~Call() { vp_.end_span(); }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  [[nodiscard]] Comm comm() const noexcept { return Comm{vp_, group_, tag_}; }
  [[nodiscard]] const Choice& choice() const noexcept { return choice_; }
  [[nodiscard]] Algo algo() const noexcept { return choice_.algo; }
  [[nodiscard]] bool alone() const noexcept { return group_.size == 1; }

 private:
  Proc& vp_;
  GroupInfo& group_;
  Choice choice_;
  MessageTag tag_{};
};

// A private copy of `in` when it overlaps `out`, so that algorithms may read in after writing out.
ConstBytes separate(ConstBytes in, ConstBytes out, Buffer& storage) {
  if (!overlaps(in, out)) return in;
  storage.assign(in.begin(), in.end());
  return storage;
}

}  // namespace

void broadcast(const Group& g, Bytes buf, std::size_t elem_size, int root, Algo algo) {
  check_member(g, Collective::broadcast);
  check_root(g, Collective::broadcast, root);
  const Call call(g, Collective::broadcast, algo, buf.size(), root);
  if (call.alone()) return;
  const Comm c = call.comm();
  switch (call.algo()) {
    case Algo::hypercube: return broadcast_hypercube(c, buf, root);
    case Algo::esbt: return broadcast_esbt(c, buf, root, call.choice().chunks);
    case Algo::mesh: return broadcast_mesh(c, buf, root);
    case Algo::two_phase: return broadcast_two_phase(c, buf, elem_size, root, call.choice().family);
    default: return broadcast_ring(c, buf, root, Ring::all(g.size()));
  }
}

void reduce(const Group& g, ConstBytes in, Bytes out, const Reducer& op, int root, Algo algo) {
  check_member(g, Collective::reduce);
  check_root(g, Collective::reduce, root);
  if (g.rank() == root ? out.size() != in.size() : !out.empty() && out.size() != in.size())
    size_error(g, Collective::reduce,
               "out holds " + std::to_string(elements(out.size(), op.elem_size)) +
                   " elements but in holds " + std::to_string(elements(in.size(), op.elem_size)) +
                   (g.rank() == root ? " (the root's out must match in)"
                                     : " (a non-root's out must be empty or match in)"));
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, Collective::reduce, algo, in.size(), root);
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  switch (call.algo()) {
    case Algo::hypercube: return reduce_hypercube(c, in, out, op, root);
    case Algo::mesh: return reduce_mesh(c, in, out, op, root);
    case Algo::two_phase: return reduce_two_phase(c, in, out, op, root, call.choice().family);
    default: return reduce_ring(c, in, out, op, root, Ring::all(g.size()));
  }
}

void all_reduce(const Group& g, ConstBytes in, Bytes out, const Reducer& op, Algo algo) {
  check_member(g, Collective::all_reduce);
  if (out.size() != in.size())
    size_error(g, Collective::all_reduce,
               "out holds " + std::to_string(elements(out.size(), op.elem_size)) +
                   " elements but in holds " + std::to_string(elements(in.size(), op.elem_size)));
  // in may be out; a partial overlap gets a private copy of in, as the other collectives do.
  Buffer storage;
  if (in.data() != out.data()) in = separate(in, out, storage);
  const Call call(g, Collective::all_reduce, algo, in.size());
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  switch (call.algo()) {
    case Algo::hypercube: return all_reduce_hypercube(c, in, out, op);
    case Algo::mesh: return all_reduce_mesh(c, in, out, op);
    case Algo::two_phase: return all_reduce_two_phase(c, in, out, op, call.choice().family);
    default: return all_reduce_ring(c, in, out, op);
  }
}

void all_gather(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, Algo algo) {
  check_member(g, Collective::all_gather);
  const int p = g.size();
  if (out.size() != in.size() * static_cast<std::size_t>(p))
    size_error(g, Collective::all_gather,
               "out holds " + std::to_string(elements(out.size(), elem_size)) +
                   " elements but p * in = " + std::to_string(p) + " * " +
                   std::to_string(elements(in.size(), elem_size)) + " are needed");
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, Collective::all_gather, algo, in.size());
  const Blocks blocks(out.size(), elem_size, p);
  copy_bytes(blocks.block(out, g.rank()), in);  // received blocks land in place around it
  if (call.alone()) return;
  const Comm c = call.comm();
  switch (call.algo()) {
    case Algo::hypercube: return all_gather_hypercube(c, out, blocks);
    case Algo::mesh: return all_gather_mesh(c, out, blocks);
    default: return all_gather_ring(c, out, Segments{blocks, 0, 1, 1}, Ring::all(p));
  }
}

void reduce_scatter(const Group& g, ConstBytes in, Bytes out, const Reducer& op, Algo algo) {
  check_member(g, Collective::reduce_scatter);
  const int p = g.size();
  if (in.size() != out.size() * static_cast<std::size_t>(p))
    size_error(g, Collective::reduce_scatter,
               "in holds " + std::to_string(elements(in.size(), op.elem_size)) +
                   " elements but p * out = " + std::to_string(p) + " * " +
                   std::to_string(elements(out.size(), op.elem_size)) + " are needed");
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, Collective::reduce_scatter, algo, out.size());
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  const Blocks blocks(in.size(), op.elem_size, p);
  switch (call.algo()) {
    case Algo::hypercube: return reduce_scatter_hypercube(c, in, out, blocks, op);
    case Algo::mesh: return reduce_scatter_mesh(c, in, out, blocks, op);
    default: return reduce_scatter_ring(c, in, out, blocks, op);
  }
}

void scan(const Group& g, ConstBytes in, Bytes out, const Reducer& op, bool exclusive) {
  const Collective kind = exclusive ? Collective::exscan : Collective::scan;
  check_member(g, kind);
  if (out.size() != in.size())
    size_error(g, kind,
               "out holds " + std::to_string(elements(out.size(), op.elem_size)) +
                   " elements but in holds " + std::to_string(elements(in.size(), op.elem_size)));
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, kind, Algo::automatic, in.size());
  if (call.alone()) {
    if (!exclusive) copy_bytes(out, in);
    return;
  }
  const Comm c = call.comm();
  switch (call.algo()) {
    case Algo::hypercube: return scan_hypercube(c, in, out, op, exclusive);
    case Algo::mesh: return scan_mesh(c, in, out, op, exclusive);
    default: return scan_ring(c, in, out, op, exclusive);
  }
}

void scatter(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, int root) {
  check_member(g, Collective::scatter);
  const int p = g.size();
  check_root(g, Collective::scatter, root);
  if (g.rank() == root && in.size() != out.size() * static_cast<std::size_t>(p))
    size_error(g, Collective::scatter,
               "the root's in holds " + std::to_string(elements(in.size(), elem_size)) +
                   " elements but p * out = " + std::to_string(p) + " * " +
                   std::to_string(elements(out.size(), elem_size)) + " are needed");
  Buffer storage;
  if (g.rank() == root) in = separate(in, out, storage);
  const Call call(g, Collective::scatter, Algo::automatic, out.size(), root);
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  const Blocks blocks(out.size() * static_cast<std::size_t>(p), elem_size, p);
  switch (call.algo()) {
    case Algo::hypercube: return scatter_hypercube(c, in, out, blocks, root);
    case Algo::mesh: return scatter_mesh(c, in, out, blocks, root);
    default: return scatter_ring(c, in, out, blocks, root);
  }
}

void gather(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, int root) {
  check_member(g, Collective::gather);
  const int p = g.size();
  check_root(g, Collective::gather, root);
  if (g.rank() == root && out.size() != in.size() * static_cast<std::size_t>(p))
    size_error(g, Collective::gather,
               "the root's out holds " + std::to_string(elements(out.size(), elem_size)) +
                   " elements but p * in = " + std::to_string(p) + " * " +
                   std::to_string(elements(in.size(), elem_size)) + " are needed");
  Buffer storage;
  if (g.rank() == root) in = separate(in, out, storage);
  const Call call(g, Collective::gather, Algo::automatic, in.size(), root);
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  const Blocks blocks(in.size() * static_cast<std::size_t>(p), elem_size, p);
  switch (call.algo()) {
    case Algo::hypercube: return gather_hypercube(c, in, out, blocks, root);
    case Algo::mesh: return gather_mesh(c, in, out, blocks, root);
    default: return gather_ring(c, in, out, blocks, root);
  }
}

void all_to_all(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, Algo algo) {
  check_member(g, Collective::all_to_all);
  const auto p = static_cast<std::size_t>(g.size());
  if (in.size() != out.size() || elements(in.size(), elem_size) % p != 0)
    size_error(g, Collective::all_to_all,
               "in holds " + std::to_string(elements(in.size(), elem_size)) + " and out " +
                   std::to_string(elements(out.size(), elem_size)) +
                   " elements; both must hold p = " + std::to_string(p) + " equal blocks");
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, Collective::all_to_all, algo, in.size());
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  const std::size_t block = in.size() / p;
  switch (call.algo()) {
    case Algo::hypercube: return all_to_all_pairwise(c, in, out, block);
    case Algo::dimension_exchange: return all_to_all_dimension_exchange(c, in, out, block);
    case Algo::mesh: return all_to_all_mesh(c, in, out, block);
    default: return all_to_all_ring(c, in, out, block);
  }
}

void circular_shift(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, int shift) {
  check_member(g, Collective::circular_shift);
  const int p = g.size();
  if (out.size() != in.size())
    size_error(g, Collective::circular_shift,
               "out holds " + std::to_string(elements(out.size(), elem_size)) +
                   " elements but in holds " + std::to_string(elements(in.size(), elem_size)));
  const int q = ((shift % p) + p) % p;
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, Collective::circular_shift, Algo::automatic, in.size(), q);
  if (call.alone() || q == 0) return copy_bytes(out, in);
  const Comm c = call.comm();
  switch (call.algo()) {
    case Algo::hypercube: return circular_shift_hypercube(c, in, out, q);
    case Algo::mesh: return circular_shift_mesh(c, in, out, q);
    default: return circular_shift_ring(c, in, out, q);
  }
}

void barrier(const Group& g) {
  check_member(g, Collective::barrier);
  const Call call(g, Collective::barrier, Algo::automatic, 0);
  if (call.alone()) return;
  const Comm c = call.comm();
  if (call.algo() == Algo::hypercube) return barrier_hypercube(c);
  if (g.proc().options().links == Links::routed) return barrier_dissemination(c);
  if (call.algo() == Algo::mesh) return barrier_mesh(c);
  return barrier_ring(c);
}

}  // namespace hypercomm::detail
