// The byte-level entry points of every collective: check the local buffers (SizeMismatch) and
// the root, resolve the algorithm (AlgorithmError, before any message), stamp the message header
// that lets a receiver detect a disagreement (CollectiveMismatch), and run the chosen card's
// algorithm (card.hpp). Nothing here moves data between VPs except through the algorithms.
#include <hypercomm/errors.hpp>
#include <hypercomm/group.hpp>
#include <string>
#include <vector>

#include "call.hpp"
#include "select.hpp"

namespace hypercomm::detail {

void broadcast(const Group& g, Bytes buf, std::size_t elem_size, int root, Algo algo) {
  check_member(g, Collective::broadcast);
  check_root(g, Collective::broadcast, root);
  const Call call(g, Collective::broadcast, algo, buf.size(), elem_size, root);
  if (call.alone()) return;
  call.run({.out = buf, .root = root, .elem_size = elem_size});
}

void reduce(const Group& g, ConstBytes in, Bytes out, const Reducer& op, int root, Algo algo) {
  check_member(g, Collective::reduce);
  check_root(g, Collective::reduce, root);
  if (g.info().rank == root ? out.size() != in.size() : !out.empty() && out.size() != in.size())
    size_error(g, Collective::reduce,
               "out holds " + std::to_string(elements(out.size(), op.elem_size)) +
                   " elements but in holds " + std::to_string(elements(in.size(), op.elem_size)) +
                   (g.info().rank == root ? " (the root's out must match in)"
                                          : " (a non-root's out must be empty or match in)"));
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, Collective::reduce, algo, in.size(), op.elem_size, reduction_root(op, root),
                  traits_of(op));
  if (call.alone()) return copy_bytes(out, in);
  call.run({.in = in, .out = out, .op = &op, .root = root, .elem_size = op.elem_size});
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
  const Call call(g, Collective::all_reduce, algo, in.size(), op.elem_size, reduction_root(op),
                  traits_of(op));
  if (call.alone()) return copy_bytes(out, in);
  call.run({.in = in, .out = out, .op = &op, .elem_size = op.elem_size});
}

void all_gather(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, Algo algo) {
  check_member(g, Collective::all_gather);
  const int p = g.info().size;
  if (out.size() != in.size() * static_cast<std::size_t>(p))
    size_error(g, Collective::all_gather,
               "out holds " + std::to_string(elements(out.size(), elem_size)) +
                   " elements but p * in = " + std::to_string(p) + " * " +
                   std::to_string(elements(in.size(), elem_size)) + " are needed");
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, Collective::all_gather, algo, in.size(), elem_size);
  const Blocks blocks = Blocks::equal(in.size(), p);
  copy_bytes(blocks.block(out, g.info().rank), in);  // received blocks land in place around it
  if (call.alone()) return;
  call.run({.in = in, .out = out, .blocks = &blocks, .elem_size = elem_size});
}

void reduce_scatter(const Group& g, ConstBytes in, Bytes out, const Reducer& op, Algo algo) {
  check_member(g, Collective::reduce_scatter);
  const int p = g.info().size;
  if (in.size() != out.size() * static_cast<std::size_t>(p))
    size_error(g, Collective::reduce_scatter,
               "in holds " + std::to_string(elements(in.size(), op.elem_size)) +
                   " elements but p * out = " + std::to_string(p) + " * " +
                   std::to_string(elements(out.size(), op.elem_size)) + " are needed");
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, Collective::reduce_scatter, algo, out.size(), op.elem_size, reduction_root(op),
                  traits_of(op));
  if (call.alone()) return copy_bytes(out, in);
  const Blocks blocks = Blocks::equal(out.size(), p);
  call.run({.in = in, .out = out, .blocks = &blocks, .op = &op, .elem_size = op.elem_size});
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
  const Call call(g, kind, Algo::automatic, in.size(), op.elem_size, reduction_root(op),
                  traits_of(op));
  if (call.alone()) {
    if (!exclusive) copy_bytes(out, in);
    return;
  }
  call.run({.in = in, .out = out, .op = &op, .elem_size = op.elem_size});
}

void scatter(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, int root) {
  check_member(g, Collective::scatter);
  const int p = g.info().size;
  check_root(g, Collective::scatter, root);
  if (g.info().rank == root && in.size() != out.size() * static_cast<std::size_t>(p))
    size_error(g, Collective::scatter,
               "the root's in holds " + std::to_string(elements(in.size(), elem_size)) +
                   " elements but p * out = " + std::to_string(p) + " * " +
                   std::to_string(elements(out.size(), elem_size)) + " are needed");
  Buffer storage;
  if (g.info().rank == root) in = separate(in, out, storage);
  const Call call(g, Collective::scatter, Algo::automatic, out.size(), elem_size, root);
  if (call.alone()) return copy_bytes(out, in);
  const Blocks blocks = Blocks::equal(out.size(), p);
  call.run({.in = in, .out = out, .blocks = &blocks, .root = root, .elem_size = elem_size});
}

void gather(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, int root) {
  check_member(g, Collective::gather);
  const int p = g.info().size;
  check_root(g, Collective::gather, root);
  if (g.info().rank == root && out.size() != in.size() * static_cast<std::size_t>(p))
    size_error(g, Collective::gather,
               "the root's out holds " + std::to_string(elements(out.size(), elem_size)) +
                   " elements but p * in = " + std::to_string(p) + " * " +
                   std::to_string(elements(in.size(), elem_size)) + " are needed");
  Buffer storage;
  if (g.info().rank == root) in = separate(in, out, storage);
  const Call call(g, Collective::gather, Algo::automatic, in.size(), elem_size, root);
  if (call.alone()) return copy_bytes(out, in);
  const Blocks blocks = Blocks::equal(in.size(), p);
  call.run({.in = in, .out = out, .blocks = &blocks, .root = root, .elem_size = elem_size});
}

void all_to_all(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, Algo algo) {
  check_member(g, Collective::all_to_all);
  const auto p = static_cast<std::size_t>(g.info().size);
  if (in.size() != out.size() || elements(in.size(), elem_size) % p != 0)
    size_error(g, Collective::all_to_all,
               "in holds " + std::to_string(elements(in.size(), elem_size)) + " and out " +
                   std::to_string(elements(out.size(), elem_size)) +
                   " elements; both must hold p = " + std::to_string(p) + " equal blocks");
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, Collective::all_to_all, algo, in.size(), elem_size);
  if (call.alone()) return copy_bytes(out, in);
  call.run({.in = in, .out = out, .elem_size = elem_size});
}

void circular_shift(const Group& g, ConstBytes in, Bytes out, std::size_t elem_size, int shift) {
  check_member(g, Collective::circular_shift);
  const int p = g.info().size;
  if (out.size() != in.size())
    size_error(g, Collective::circular_shift,
               "out holds " + std::to_string(elements(out.size(), elem_size)) +
                   " elements but in holds " + std::to_string(elements(in.size(), elem_size)));
  const int q = ((shift % p) + p) % p;
  Buffer storage;
  in = separate(in, out, storage);
  const Call call(g, Collective::circular_shift, Algo::automatic, in.size(), elem_size, q);
  if (call.alone() || q == 0) return copy_bytes(out, in);
  call.run({.in = in, .out = out, .root = q, .elem_size = elem_size});
}

void barrier(const Group& g) {
  check_member(g, Collective::barrier);
  const Call call(g, Collective::barrier, Algo::automatic, 0, 0);
  if (call.alone()) return;
  call.run({});
}

}  // namespace hypercomm::detail
