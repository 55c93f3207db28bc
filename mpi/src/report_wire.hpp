// A process's part of a Report as bytes, so that every process can put the whole machine's
// Report together (MpiRemote::combine): clocks, counts, link traffic, operations and events of
// this process's VPs, and how its run ended.
#pragma once

#include <cstddef>
#include <hypercomm/report.hpp>
#include <span>
#include <string>
#include <vector>

namespace hypercomm::mpi::detail {

struct ReportPart {
  Report report;        // this process's VPs only (clocks, operations in VP order)
  std::string error;    // what() of the error the run failed with here
  bool failed = false;  // whether it failed here
  std::string problem;  // a message left unreceived here (CollectiveMismatch's text)
};

[[nodiscard]] std::vector<std::byte> encode(const ReportPart& part);
[[nodiscard]] ReportPart decode(std::span<const std::byte> bytes);

// Appends the next process's part (its VPs follow those already merged): clocks and operations
// appended, counts and link traffic summed, events appended, wall time and model time the
// longest.
void merge(Report& whole, Report part);

}  // namespace hypercomm::mpi::detail
