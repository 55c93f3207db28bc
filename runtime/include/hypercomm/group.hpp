// A group of VPs (API.md, "Groups"): an ordered subset of the machine's VPs with its own ranks
// 0..n-1 and its own topology, so that a collective runs on a row, a column, a subcube or a
// split set exactly as on a machine of that shape. A Group is a small value that refers to the
// VP that made it and is valid during that VP's run.
#pragma once

#include <hypercomm/errors.hpp>
#include <hypercomm/export.hpp>
#include <hypercomm/proc.hpp>
#include <hypercomm/topology.hpp>
#include <string>

// Internal (hidden in a shared library): declared before the public region.
namespace hypercomm::detail {
struct GroupInfo;
}  // namespace hypercomm::detail

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm {

class Group {
 public:
  Group(Proc& vp, detail::GroupInfo& info) noexcept : vp_(&vp), info_(&info) {}

  [[nodiscard]] int rank() const noexcept;  // this VP's rank, -1 when not a member (size() == 0)
  [[nodiscard]] int size() const noexcept;
  [[nodiscard]] int vp(int rank) const;  // the machine VP id of a member; LinkError outside
  [[nodiscard]] const Topology& topology() const noexcept;
  // "row 2 of mesh:4x4", "column 1 of mesh:4x4", "subcube 0b0101 of VP 3 of hypercube:4",
  // "split color 2", or the machine's name for the whole machine.
  [[nodiscard]] std::string name() const;

  // Point-to-point by group rank: Proc::send / recv / sendrecv to the member's VP.
  template <MessageRange R>
  void send(int rank, const R& data) const {
    vp_->send(peer(rank, "send"), data);
  }
  // A size mismatch names the group and both ranks besides the VPs.
  template <MutableMessageRange R>
  void recv(int rank, R&& data) const {
    const int from = peer(rank, "recv");
    try {
      vp_->recv(from, data);
    } catch (const SizeMismatch& e) {
      throw_in_group(e, rank);
    }
  }
  template <MessageRange S, MutableMessageRange R>
  void sendrecv(int rank, const S& out, R&& in) const {
    const int partner = peer(rank, "sendrecv");
    try {
      vp_->sendrecv(partner, out, in);
    } catch (const SizeMismatch& e) {
      throw_in_group(e, rank);
    }
  }

  // The VP this group value belongs to, and the group's description (for the collectives).
  [[nodiscard]] Proc& proc() const noexcept { return *vp_; }
  [[nodiscard]] detail::GroupInfo& info() const noexcept { return *info_; }

 private:
  [[nodiscard]] int peer(int rank, const char* op) const;  // checks rank, names the group
  [[noreturn]] void throw_in_group(const SizeMismatch& e, int from_rank) const;

  Proc* vp_;
  detail::GroupInfo* info_;
};

}  // namespace hypercomm

HYPERCOMM_PUBLIC_END
