// The reductions' operators by name: each operator and element type a program reduces with is
// named before main runs (core.hpp: operator_named), so that a CollectiveMismatch between
// members that pass different operators can say which.
#include "operator_names.hpp"

#include <cstdio>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>

namespace hypercomm::detail {

namespace {

struct Names {
  std::mutex lock;
  std::multimap<std::uint16_t, std::string> by_digest;
};
Names& names() {
  static Names instance;
  return instance;
}

// "[with T = double; Op = std::plus<void>]" (GCC's text) or "[T = double, Op = std::plus<>]"
// (Clang's) as "std::plus<void> on double" or "std::plus<> on double".
std::string readable(std::string_view signature) {
  for (const auto& [open, separator] :
       {std::pair{std::string_view("[with T = "), std::string_view("; Op = ")},
        std::pair{std::string_view("[T = "), std::string_view(", Op = ")}}) {
    const auto t = signature.find(open);
    const auto op = signature.rfind(separator);
    if (t == std::string_view::npos || op == std::string_view::npos || op < t ||
        signature.back() != ']')
      continue;
    const auto element = signature.substr(t + open.size(), op - (t + open.size()));
    const auto function =
        signature.substr(op + separator.size(), signature.size() - 1 - (op + separator.size()));
    return std::string(function) + " on " + std::string(element);
  }
  return std::string(signature);
}

}  // namespace

void name_operator(std::uint16_t digest, const char* signature) {
  Names& n = names();
  const std::lock_guard hold(n.lock);
  std::string text = readable(signature);
  const auto [first, last] = n.by_digest.equal_range(digest);
  for (auto it = first; it != last; ++it)
    if (it->second == text) return;
  n.by_digest.emplace(digest, std::move(text));
}

std::string operator_name(std::uint16_t digest, std::uint16_t mask) {
  Names& n = names();
  const std::lock_guard hold(n.lock);
  std::string found;
  int matches = 0;
  for (const auto& [key, text] : n.by_digest)
    if ((key & mask) == (digest & mask)) found += (matches++ == 0 ? "" : " or ") + text;
  if (matches == 1 || (matches > 1 && mask == 0xFFFF)) return found;
  if (matches > 1) return {};  // reduce's four bits: several operators of this program have them
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%04x", static_cast<unsigned>(digest & mask));
  return std::string("with digest ") + hex;  // named in no part of this program
}

}  // namespace hypercomm::detail
