// Test-only fault injection (tests/test_faults.cpp): a hook that the runtime calls where a VP
// may be made to fail, so that the tests can throw any exception at a chosen VP, collective call
// and message of a real run and check that run releases every VP and rethrows it.
//
// Why a hook and not a build option: the tests then exercise the very library the users link.
// It costs nothing when unset: Port::begin_call loads the hook pointer once per collective call
// (a relaxed load of a line nobody writes) and calls nothing when it is null; the per-message
// point (FaultPoint::message) rides on the abort test that every send and receive makes anyway
// (Fabric::attention(): nonzero when the run is aborted or some VP watches its messages), so a
// message costs no more load or branch than before.
#pragma once

#include <cstdint>

#include "message.hpp"

namespace hypercomm {
class Proc;
}

namespace hypercomm::detail {

enum class FaultPoint : std::uint8_t {
  call_entry,  // a collective call begins on this VP (its header is in `tag`), before any message
  message,     // this VP is about to send or receive its message number `message` (from 1) of
               // the call; only after the hook set watch_messages at the call's entry
};

struct FaultSite {
  Proc& vp;
  FaultPoint point;
  const MessageTag& tag;
  int message = 0;              // FaultPoint::message: 1 for the call's first send or receive
  bool watch_messages = false;  // set at call_entry: call the hook before each message of the call
};

// The hook may throw any exception: it surfaces from the VP as if the call had thrown it.
using FaultHook = void (*)(FaultSite& site);
void set_fault_hook(FaultHook hook) noexcept;  // nullptr: none (the default)

}  // namespace hypercomm::detail
