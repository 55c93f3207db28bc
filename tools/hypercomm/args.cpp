// Argument parsing shared by the subcommands (args.hpp).
#include "args.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace hypercomm::cli {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

const char* to_string(DataType t) noexcept { return t == DataType::int64 ? "int64" : "double"; }

std::size_t size_of(DataType t) noexcept {
  return t == DataType::int64 ? sizeof(std::int64_t) : sizeof(double);
}

DataType parse_type(std::string_view text) {
  const std::string_view t = trim(text);
  if (t == "int64" || t == "int64_t" || t == "long") return DataType::int64;
  if (t == "double" || t == "float64") return DataType::float64;
  throw UsageError("unknown element type " + quoted(text) +
                   " for --type (expected int64 or double)");
}

std::uint64_t parse_bytes(std::string_view text, std::string_view option) {
  const std::string_view t = trim(text);
  const auto bad = [&](const std::string& why) {
    return UsageError("bad size " + quoted(text) + " for " + std::string(option) + ": " + why);
  };
  std::size_t digits = 0;
  while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
  if (digits == 0) {
    if (!t.empty() && t.front() == '-') throw bad("a size cannot be negative");
    throw bad("expected a number of bytes, optionally with a suffix K, M or G (powers of 1024)");
  }
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const auto digit = static_cast<std::uint64_t>(t[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) throw bad("too large");
    value = value * 10 + digit;
  }
  std::string_view suffix = trim(t.substr(digits));
  std::uint64_t unit = 1;
  if (!suffix.empty()) {
    switch (std::toupper(static_cast<unsigned char>(suffix.front()))) {
      case 'K': unit = 1ULL << 10, suffix.remove_prefix(1); break;
      case 'M': unit = 1ULL << 20, suffix.remove_prefix(1); break;
      case 'G': unit = 1ULL << 30, suffix.remove_prefix(1); break;
      default: break;
    }
    // Optional "B", or "iB" after a unit: 8B, 4KB, 4KiB.
    if (!(suffix.empty() || iequals(suffix, "B") || (unit > 1 && iequals(suffix, "iB"))))
      throw bad("unknown suffix; use K, M or G (powers of 1024) or plain bytes");
  }
  if (value > std::numeric_limits<std::uint64_t>::max() / unit) throw bad("too large");
  return value * unit;
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes >= (1ULL << 30) && bytes % (1ULL << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1ULL << 20) && bytes % (1ULL << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1ULL << 10) && bytes % (1ULL << 10) == 0)
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string format_seconds(double seconds) {
  char text[64];
  const double a = std::fabs(seconds);
  if (seconds == 0) return "0 s";
  if (!std::isfinite(seconds)) return "n/a";
  if (a >= 1)
    std::snprintf(text, sizeof text, "%.4g s", seconds);
  else if (a >= 1e-3)
    std::snprintf(text, sizeof text, "%.4g ms", seconds * 1e3);
  else if (a >= 1e-6)
    std::snprintf(text, sizeof text, "%.4g us", seconds * 1e6);
  else
    std::snprintf(text, sizeof text, "%.4g ns", seconds * 1e9);
  return text;
}

Topology parse_topology(std::string_view text) {
  try {
    return Topology::parse(trim(text));
  } catch (const TopologyError& e) {
    throw UsageError("bad topology " + quoted(text) + ": " + e.what());
  }
}

std::string operation_names() {
  std::string names;
  for (int k = 1; k <= static_cast<int>(Collective::reduce_scatterv); ++k)
    names += std::string(names.empty() ? "" : ", ") + to_string(static_cast<Collective>(k));
  return names;
}

std::string algorithm_names() {
  std::string names;
  for (int k = 0; k <= 255; ++k) {  // every enumerator has a name, the others "unknown"
    const std::string name = to_string(static_cast<Algo>(k));
    if (name != "unknown") names += (names.empty() ? "" : ", ") + name;
  }
  return names;
}

Collective parse_op(std::string_view text) {
  std::string name(trim(text));
  for (char& c : name)
    if (c == '-') c = '_';  // all-reduce as well as all_reduce
  if (const auto op = parse_collective(name)) return *op;
  throw UsageError("unknown operation " + quoted(text) + " (expected one of: " + operation_names() +
                   ")");
}

Algo parse_algo_name(std::string_view text) {
  std::string name(trim(text));
  for (char& c : name)
    if (c == '-') c = '_';
  if (name == "auto") return Algo::automatic;
  if (const auto algo = parse_algo(name)) return *algo;
  throw UsageError("unknown algorithm " + quoted(text) + " (expected one of: " + algorithm_names() +
                   ")");
}

Links parse_links(std::string_view text) {
  const std::string_view t = trim(text);
  if (t == "routed") return Links::routed;
  if (t == "strict") return Links::strict;
  throw UsageError("unknown link mode " + quoted(text) +
                   " for --links (expected routed or strict)");
}

const char* to_string(Links links) noexcept { return links == Links::strict ? "strict" : "routed"; }

std::vector<std::string> split_list(const std::vector<std::string>& values,
                                    std::string_view option) {
  std::vector<std::string> items;
  for (const std::string& value : values) {
    std::string_view rest = value;
    while (true) {
      const auto comma = rest.find(',');
      const std::string_view item = trim(rest.substr(0, comma));
      if (item.empty())
        throw UsageError("empty item in " + std::string(option) + " " + quoted(value) +
                         " (expected a comma-separated list)");
      items.emplace_back(item);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return items;
}

std::string reason_of(const Error& e) {
  std::string_view what = e.what();
  if (what.starts_with("VP ")) {
    const auto colon = what.find(": ");
    if (colon != std::string_view::npos) what.remove_prefix(colon + 2);
  }
  return std::string(what);
}

}  // namespace hypercomm::cli
