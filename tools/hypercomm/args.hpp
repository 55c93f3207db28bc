// Argument parsing shared by the subcommands of the `hypercomm` command: sizes with K/M/G
// suffixes, topologies, operations, algorithms, link modes and element types, each turned into a
// UsageError (one line, exit code 2) when it does not parse.
#pragma once

#include <cstdint>
#include <hypercomm/hypercomm.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hypercomm::cli {

// Exit codes of the command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitWrong = 1;  // a result failed verification, or the run itself failed
inline constexpr int kExitUsage = 2;  // a bad argument

// A bad argument: main prints "hypercomm: error: <what>" on stderr and exits with kExitUsage.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The element type a run moves and reduces.
enum class DataType { int64, float64 };
[[nodiscard]] const char* to_string(DataType t) noexcept;
[[nodiscard]] std::size_t size_of(DataType t) noexcept;
[[nodiscard]] DataType parse_type(std::string_view text);

// "8", "8B", "64K", "1M", "2G", "4KiB": bytes, the suffixes powers of 1024. `option` names the
// option in the error message.
[[nodiscard]] std::uint64_t parse_bytes(std::string_view text, std::string_view option);
// "1 MiB", "64 KiB", "1000 B": exact, the largest unit that divides.
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);
// "1.23 ms", "456 ns": three significant digits in the best unit.
[[nodiscard]] std::string format_seconds(double seconds);

[[nodiscard]] Topology parse_topology(std::string_view text);
[[nodiscard]] Collective parse_op(std::string_view text);
[[nodiscard]] Algo parse_algo_name(std::string_view text);
[[nodiscard]] Links parse_links(std::string_view text);
[[nodiscard]] const char* to_string(Links links) noexcept;

// The names every collective and algorithm answers to, comma separated (for error messages).
[[nodiscard]] std::string operation_names();
[[nodiscard]] std::string algorithm_names();

// Items of comma-separated lists, blanks trimmed; an empty item is a UsageError.
[[nodiscard]] std::vector<std::string> split_list(const std::vector<std::string>& values,
                                                  std::string_view option);

// The reason an AlgorithmError gives, without the "VP n: " prefix the runtime adds.
[[nodiscard]] std::string reason_of(const Error& e);

}  // namespace hypercomm::cli
