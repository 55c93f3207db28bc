// The byte-level entry points of every collective: check the local buffers (SizeMismatch) and
// the root, resolve the algorithm (AlgorithmError, before any message), stamp the message header
// that lets a receiver detect a disagreement (CollectiveMismatch), and dispatch to the algorithm
// files. Nothing here moves data between VPs except through the algorithms.
#include <hypercomm/errors.hpp>
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

std::string vp_name(const Proc& vp) { return "VP " + std::to_string(vp.id()); }

[[noreturn]] void size_error(const Proc& vp, Collective op, const std::string& what) {
  throw SizeMismatch(vp_name(vp) + ": " + to_string(op) + ": " + what);
}

std::size_t elements(std::size_t bytes, std::size_t elem_size) {
  return elem_size == 0 ? 0 : bytes / elem_size;
}

void check_root(const Proc& vp, Collective op, int root) {
  if (root < 0 || root >= vp.size())
    throw LinkError(vp_name(vp) + ": " + to_string(op) + " with root " + std::to_string(root) +
                    ", which is outside [0, " + std::to_string(vp.size()) + ")");
}

bool overlaps(ConstBytes a, ConstBytes b) noexcept {
  if (a.empty() || b.empty()) return false;
  const auto* a0 = a.data();
  const auto* b0 = b.data();
  return a0 < b0 + b.size() && b0 < a0 + a.size();
}

// One collective call on this VP: its algorithm, its header and its trace span.
class Call {
 public:
  Call(Proc& vp, Collective op, Algo requested, std::size_t bytes, int root = 0)
      : vp_(vp), choice_(select(op, vp, bytes, requested)) {
    tag_.sequence = vp.next_collective_sequence();
    tag_.root = static_cast<std::uint16_t>(root);
    tag_.kind = static_cast<std::uint8_t>(op);
    tag_.algo = static_cast<std::uint8_t>(choice_.algo);
    tag_.count = bytes;
    vp.begin_span(to_string(op), to_string(choice_.algo), bytes);
  }
  ~Call() { vp_.end_span(); }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  [[nodiscard]] Comm comm() const noexcept { return Comm{vp_, tag_}; }
  [[nodiscard]] const Choice& choice() const noexcept { return choice_; }
  [[nodiscard]] Algo algo() const noexcept { return choice_.algo; }
  [[nodiscard]] bool alone() const noexcept { return vp_.size() == 1; }

 private:
  Proc& vp_;
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

void broadcast(Proc& vp, Bytes buf, std::size_t elem_size, int root, Algo algo) {
  check_root(vp, Collective::broadcast, root);
  const Call call(vp, Collective::broadcast, algo, buf.size(), root);
  if (call.alone()) return;
  const Comm c = call.comm();
  switch (call.algo()) {
    case Algo::hypercube: return broadcast_hypercube(c, buf, root);
    case Algo::esbt: return broadcast_esbt(c, buf, root, call.choice().chunks);
    case Algo::mesh: return broadcast_mesh(c, buf, root);
    case Algo::two_phase: return broadcast_two_phase(c, buf, elem_size, root, call.choice().family);
    default: return broadcast_ring(c, buf, root, Group::all(vp.size()));
  }
}

void reduce(Proc& vp, ConstBytes in, Bytes out, const Reducer& op, int root, Algo algo) {
  check_root(vp, Collective::reduce, root);
  if (vp.id() == root ? out.size() != in.size() : !out.empty() && out.size() != in.size())
    size_error(vp, Collective::reduce,
               "out holds " + std::to_string(elements(out.size(), op.elem_size)) +
                   " elements but in holds " + std::to_string(elements(in.size(), op.elem_size)) +
                   (vp.id() == root ? " (the root's out must match in)"
                                    : " (a non-root's out must be empty or match in)"));
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(vp, Collective::reduce, algo, in.size(), root);
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  switch (call.algo()) {
    case Algo::hypercube: return reduce_hypercube(c, in, out, op, root);
    case Algo::mesh: return reduce_mesh(c, in, out, op, root);
    case Algo::two_phase: return reduce_two_phase(c, in, out, op, root, call.choice().family);
    default: return reduce_ring(c, in, out, op, root, Group::all(vp.size()));
  }
}

void all_reduce(Proc& vp, ConstBytes in, Bytes out, const Reducer& op, Algo algo) {
  if (out.size() != in.size())
    size_error(vp, Collective::all_reduce,
               "out holds " + std::to_string(elements(out.size(), op.elem_size)) +
                   " elements but in holds " + std::to_string(elements(in.size(), op.elem_size)));
  // in may be out; a partial overlap gets a private copy of in, as the other collectives do.
  Buffer storage;
  if (in.data() != out.data()) in = separate(in, out, storage);
  const Call call(vp, Collective::all_reduce, algo, in.size());
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  switch (call.algo()) {
    case Algo::hypercube: return all_reduce_hypercube(c, in, out, op);
    case Algo::mesh: return all_reduce_mesh(c, in, out, op);
    case Algo::two_phase: return all_reduce_two_phase(c, in, out, op, call.choice().family);
    default: return all_reduce_ring(c, in, out, op);
  }
}

void all_gather(Proc& vp, ConstBytes in, Bytes out, std::size_t elem_size, Algo algo) {
  const int p = vp.size();
  if (out.size() != in.size() * static_cast<std::size_t>(p))
    size_error(vp, Collective::all_gather,
               "out holds " + std::to_string(elements(out.size(), elem_size)) +
                   " elements but p * in = " + std::to_string(p) + " * " +
                   std::to_string(elements(in.size(), elem_size)) + " are needed");
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(vp, Collective::all_gather, algo, in.size());
  const Blocks blocks(out.size(), elem_size, p);
  copy_bytes(blocks.block(out, vp.id()), in);  // received blocks land in place around it
  if (call.alone()) return;
  const Comm c = call.comm();
  switch (call.algo()) {
    case Algo::hypercube: return all_gather_hypercube(c, out, blocks);
    case Algo::mesh: return all_gather_mesh(c, out, blocks);
    default: return all_gather_ring(c, out, Segments{blocks, 0, 1, 1}, Group::all(p));
  }
}

void reduce_scatter(Proc& vp, ConstBytes in, Bytes out, const Reducer& op, Algo algo) {
  const int p = vp.size();
  if (in.size() != out.size() * static_cast<std::size_t>(p))
    size_error(vp, Collective::reduce_scatter,
               "in holds " + std::to_string(elements(in.size(), op.elem_size)) +
                   " elements but p * out = " + std::to_string(p) + " * " +
                   std::to_string(elements(out.size(), op.elem_size)) + " are needed");
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(vp, Collective::reduce_scatter, algo, out.size());
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  const Blocks blocks(in.size(), op.elem_size, p);
  switch (call.algo()) {
    case Algo::hypercube: return reduce_scatter_hypercube(c, in, out, blocks, op);
    case Algo::mesh: return reduce_scatter_mesh(c, in, out, blocks, op);
    default: return reduce_scatter_ring(c, in, out, blocks, op);
  }
}

void scan(Proc& vp, ConstBytes in, Bytes out, const Reducer& op, bool exclusive) {
  const Collective kind = exclusive ? Collective::exscan : Collective::scan;
  if (out.size() != in.size())
    size_error(vp, kind,
               "out holds " + std::to_string(elements(out.size(), op.elem_size)) +
                   " elements but in holds " + std::to_string(elements(in.size(), op.elem_size)));
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(vp, kind, Algo::automatic, in.size());
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

void scatter(Proc& vp, ConstBytes in, Bytes out, std::size_t elem_size, int root) {
  const int p = vp.size();
  check_root(vp, Collective::scatter, root);
  if (vp.id() == root && in.size() != out.size() * static_cast<std::size_t>(p))
    size_error(vp, Collective::scatter,
               "the root's in holds " + std::to_string(elements(in.size(), elem_size)) +
                   " elements but p * out = " + std::to_string(p) + " * " +
                   std::to_string(elements(out.size(), elem_size)) + " are needed");
  Buffer storage;
  if (vp.id() == root) in = separate(in, out, storage);
  const Call call(vp, Collective::scatter, Algo::automatic, out.size(), root);
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  const Blocks blocks(out.size() * static_cast<std::size_t>(p), elem_size, p);
  switch (call.algo()) {
    case Algo::hypercube: return scatter_hypercube(c, in, out, blocks, root);
    case Algo::mesh: return scatter_mesh(c, in, out, blocks, root);
    default: return scatter_ring(c, in, out, blocks, root);
  }
}

void gather(Proc& vp, ConstBytes in, Bytes out, std::size_t elem_size, int root) {
  const int p = vp.size();
  check_root(vp, Collective::gather, root);
  if (vp.id() == root && out.size() != in.size() * static_cast<std::size_t>(p))
    size_error(vp, Collective::gather,
               "the root's out holds " + std::to_string(elements(out.size(), elem_size)) +
                   " elements but p * in = " + std::to_string(p) + " * " +
                   std::to_string(elements(in.size(), elem_size)) + " are needed");
  Buffer storage;
  if (vp.id() == root) in = separate(in, out, storage);
  const Call call(vp, Collective::gather, Algo::automatic, in.size(), root);
  if (call.alone()) return copy_bytes(out, in);
  const Comm c = call.comm();
  const Blocks blocks(in.size() * static_cast<std::size_t>(p), elem_size, p);
  switch (call.algo()) {
    case Algo::hypercube: return gather_hypercube(c, in, out, blocks, root);
    case Algo::mesh: return gather_mesh(c, in, out, blocks, root);
    default: return gather_ring(c, in, out, blocks, root);
  }
}

void all_to_all(Proc& vp, ConstBytes in, Bytes out, std::size_t elem_size, Algo algo) {
  const auto p = static_cast<std::size_t>(vp.size());
  if (in.size() != out.size() || elements(in.size(), elem_size) % p != 0)
    size_error(vp, Collective::all_to_all,
               "in holds " + std::to_string(elements(in.size(), elem_size)) + " and out " +
                   std::to_string(elements(out.size(), elem_size)) +
                   " elements; both must hold p = " + std::to_string(p) + " equal blocks");
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(vp, Collective::all_to_all, algo, in.size());
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

void circular_shift(Proc& vp, ConstBytes in, Bytes out, std::size_t elem_size, int shift) {
  const int p = vp.size();
  if (out.size() != in.size())
    size_error(vp, Collective::circular_shift,
               "out holds " + std::to_string(elements(out.size(), elem_size)) +
                   " elements but in holds " + std::to_string(elements(in.size(), elem_size)));
  const int q = ((shift % p) + p) % p;
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(vp, Collective::circular_shift, Algo::automatic, in.size(), q);
  if (call.alone() || q == 0) return copy_bytes(out, in);
  const Comm c = call.comm();
  switch (call.algo()) {
    case Algo::hypercube: return circular_shift_hypercube(c, in, out, q);
    case Algo::mesh: return circular_shift_mesh(c, in, out, q);
    default: return circular_shift_ring(c, in, out, q);
  }
}

void barrier(Proc& vp) {
  const Call call(vp, Collective::barrier, Algo::automatic, 0);
  if (call.alone()) return;
  const Comm c = call.comm();
  if (call.algo() == Algo::hypercube) return barrier_hypercube(c);
  if (vp.options().links == Links::routed) return barrier_dissemination(c);
  if (call.algo() == Algo::mesh) return barrier_mesh(c);
  return barrier_ring(c);
}

}  // namespace hypercomm::detail
