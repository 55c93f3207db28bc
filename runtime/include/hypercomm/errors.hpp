// Typed errors of the public contract (API.md, "Errors"). Every message names the VP, the
// operation and the values that disagree.
#pragma once

#include <hypercomm/export.hpp>
#include <stdexcept>
#include <string>

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A topology shape or text that does not describe a supported machine.
class TopologyError : public Error {
 public:
  using Error::Error;
};

// A send or receive to an id outside [0, p), to oneself, or (Links::strict) to a non-neighbour.
class LinkError : public Error {
 public:
  using Error::Error;
};

// A buffer whose size disagrees with the message or with the collective's layout.
class SizeMismatch : public Error {
 public:
  using Error::Error;
};

// VPs that disagree on the collective, its root, its count or its algorithm.
class CollectiveMismatch : public Error {
 public:
  using Error::Error;
};

// A forced algorithm that cannot run on this topology, p or link mode.
class AlgorithmError : public Error {
 public:
  using Error::Error;
};

// Thrown into every blocked VP when another VP failed or a deadlock was detected.
class Aborted : public Error {
 public:
  using Error::Error;
};

// Every unfinished VP waited for longer than Options::deadlock_timeout with nothing delivered.
class Deadlock : public Error {
 public:
  using Error::Error;
};

}  // namespace hypercomm

HYPERCOMM_PUBLIC_END
