// The registry of algorithm cards (collectives/src/registry.cpp) as the single description of
// every algorithm: its invariants, automatic's choice read off it, and collectives/ALGORITHMS.md
// checked against it. Two tables of ALGORITHMS.md are generated from the registry, between
// "<!-- generated: NAME -->" and "<!-- end generated -->"; after changing a card, rewrite them
// with
//
//   HYPERCOMM_UPDATE_DOCS=1 build/release/tests/test_registry
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <hypercomm/hypercomm.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "registry.hpp"
#include "select.hpp"

namespace hc = hypercomm;
namespace detail = hypercomm::detail;
using hc::Algo;
using hc::Collective;
using hc::Links;
using hc::Topology;

namespace {

constexpr const char* kAlgorithmsMd = HYPERCOMM_SOURCE_DIR "/collectives/ALGORITHMS.md";

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string algorithm_name(const hc::Card& card) {
  std::string s = hc::to_string(card.algo);
  if (card.variant != nullptr) s += std::string(" (") + card.variant + ")";
  return s;
}

// Every card: operation, algorithm, cost, restrictions, source.
std::string registry_table() {
  std::string s =
      "| operation | algorithm | cost | restrictions | source |\n|---|---|---|---|---|\n";
  for (const hc::Card& card : hc::cards())
    s += std::string("| ") + hc::to_string(card.op) + " | " + algorithm_name(card) + " | " +
         card.formula + " | " + card.restrictions + " | " + card.source + " |\n";
  return s;
}

std::string size_text(std::size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10)) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

// Automatic's choice from 8 B to 1 MiB on five machines: "a, from X: b, ...", with a core to
// each VP (shared_cores 0) or all of them sharing that many cores.
std::string choices_table(int shared_cores = 0) {
  const std::vector<Topology> machines{Topology::ring(8), Topology::ring(7), Topology::mesh(4, 4),
                                       Topology::mesh(3, 3), Topology::hypercube(4)};
  std::string s = "| operation | links |";
  for (const Topology& t : machines) s += " " + t.name() + " |";
  s += "\n|---|---|";
  for (std::size_t i = 0; i < machines.size(); ++i) s += "---|";
  s += "\n";
  for (int k = static_cast<int>(Collective::broadcast); k <= static_cast<int>(Collective::barrier);
       ++k) {
    const auto op = static_cast<Collective>(k);
    // Only the broadcasts', reductions' and scans' cards state their work (what shared cores
    // change).
    if (shared_cores > 0 && op != Collective::broadcast && op != Collective::reduce &&
        op != Collective::scan && op != Collective::exscan)
      continue;
    for (const Links links : {Links::routed, Links::strict}) {
      s += std::string("| ") + (links == Links::routed ? hc::to_string(op) : "") + " | " +
           (links == Links::routed ? "routed" : "strict") + " |";
      for (const Topology& t : machines) {
        std::string cell;
        const hc::Card* last = nullptr;
        const std::size_t most = op == Collective::barrier ? 8 : std::size_t{1} << 20;
        for (std::size_t bytes = 8; bytes <= most; bytes *= 2) {
          const std::size_t asked =
              op == Collective::all_to_all ? bytes * static_cast<std::size_t>(t.size()) : bytes;
          const hc::CallShape shape{.shift = t.size() / 2, .shared_cores = shared_cores};
          const hc::Card* card = hc::find_card(op, Algo::automatic, t, links, asked, shape);
          if (card == last) continue;
          cell += cell.empty() ? algorithm_name(*card)
                               : ", from " + size_text(bytes) + ": " + algorithm_name(*card);
          last = card;
        }
        s += " " + cell + " |";
      }
      s += "\n";
    }
  }
  return s;
}

// The text between the markers of section `name`, or "" (and CHECK fails) when absent.
std::string section(const std::string& doc, const std::string& name, std::size_t* begin = nullptr,
                    std::size_t* end = nullptr) {
  const std::string open = "<!-- generated: " + name + " -->\n", close = "<!-- end generated -->";
  const std::size_t a = doc.find(open);
  REQUIRE_MESSAGE(a != std::string::npos, "ALGORITHMS.md has no ", open);
  const std::size_t b = doc.find(close, a);
  REQUIRE(b != std::string::npos);
  if (begin != nullptr) *begin = a + open.size();
  if (end != nullptr) *end = b;
  return doc.substr(a + open.size(), b - a - open.size());
}

void check_generated(const std::string& name, const std::string& want) {
  std::string doc = read_file(kAlgorithmsMd);
  std::size_t begin = 0, end = 0;
  const std::string have = section(doc, name, &begin, &end);
  if (have != want && std::getenv("HYPERCOMM_UPDATE_DOCS") != nullptr) {
    doc.replace(begin, end - begin, want);
    std::ofstream(kAlgorithmsMd) << doc;
    const std::string note = "rewrote the " + name + " table of collectives/ALGORITHMS.md";
    MESSAGE(note);
    return;
  }
  CHECK_MESSAGE(have == want, "collectives/ALGORITHMS.md's ", name,
                " table is not the registry's: run HYPERCOMM_UPDATE_DOCS=1 tests/test_registry");
}

}  // namespace

TEST_CASE("the registry: every collective has cards, grouped, each complete and unique") {
  const auto all = detail::registry();
  // (op, algo, variant) is unique: cards that share an Algo tell themselves apart.
  std::set<std::tuple<Collective, Algo, std::string>> seen;
  int previous = 0;
  for (const detail::AlgorithmCard* card : all) {
    const hc::Card& text = card->text;
    INFO(std::string(hc::to_string(text.op)), " / ", algorithm_name(text));
    CHECK(static_cast<int>(text.op) >= previous);  // grouped in Collective's order
    previous = static_cast<int>(text.op);
    CHECK((card->restriction != nullptr));
    CHECK((card->cost != nullptr));
    CHECK((card->run != nullptr));
    CHECK(text.source != nullptr);
    CHECK(text.formula != nullptr);
    CHECK(text.restrictions != nullptr);
    CHECK(seen.insert({text.op, text.algo, text.variant ? text.variant : ""}).second);
  }
  for (int k = static_cast<int>(Collective::broadcast);
       k <= static_cast<int>(Collective::reduce_scatterv); ++k) {
    const auto op = static_cast<Collective>(k);
    INFO(std::string(hc::to_string(op)));
    CHECK(!detail::cards_of(op).empty());
  }
  CHECK(hc::cards().size() == all.size());
}

TEST_CASE(
    "automatic's choice is the registry's cheapest card that can run, ties by the critical path "
    "where VPs share cores, then in order") {
  std::vector<Topology> machines;
  for (int p : {2, 3, 5, 8, 12}) machines.push_back(Topology::ring(p));
  for (auto [r, c] : {std::pair{2, 2}, {3, 3}, {2, 4}, {4, 4}})
    machines.push_back(Topology::mesh(r, c));
  for (int d : {1, 3, 4}) machines.push_back(Topology::hypercube(d));
  machines.push_back(Topology::parse("linear:6"));
  for (const Topology& t : machines)
    for (const Links links : {Links::routed, Links::strict})
      for (int k = static_cast<int>(Collective::broadcast);
           k <= static_cast<int>(Collective::barrier); ++k) {
        const auto op = static_cast<Collective>(k);
        for (std::size_t bytes :
             {std::size_t{0}, std::size_t{8}, std::size_t{4096}, std::size_t{1} << 20})
          for (const bool never_throws : {true, false})
            for (const int cores : {0, 2}) {
              INFO(std::string(hc::to_string(op)), " on ", t.name(),
                   links == Links::strict ? " strict " : " ", bytes, " B",
                   never_throws ? "" : ", an operator that may throw", ", shared cores ", cores);
              const detail::AlgorithmCard* best = nullptr;
              double best_cost = INFINITY, best_path = INFINITY;
              for (const detail::AlgorithmCard* card : detail::cards_of(op)) {
                // (The cards for a Gray-code ring group run only on one: not on these machines.)
                if (card->restriction(t, links) != nullptr || card->needs_gray_ring_group) continue;
                const double cost = detail::selection_cost(*card, t, links, bytes, 0, t.size() / 2,
                                                           {.never_throws = never_throws}, cores);
                const double path = detail::selection_cost(*card, t, links, bytes, 0, t.size() / 2,
                                                           {.never_throws = never_throws});
                // The reference machine's estimate has a closed form for every card and call,
                // and sharing cores never makes a card cheaper.
                CHECK(std::isfinite(cost));
                CHECK(cost >= path);
                CHECK(path >= 0);
                if (best == nullptr || cost < best_cost || (cost == best_cost && path < best_path))
                  best = card, best_cost = cost, best_path = path;
              }
              if (best == nullptr) {
                CHECK_THROWS_AS((void)hc::resolve(op, Algo::automatic, t, links, bytes),
                                hc::AlgorithmError);
                continue;
              }
              const hc::Card* chosen = hc::find_card(
                  op, Algo::automatic, t, links, bytes,
                  hc::CallShape{
                      .shift = t.size() / 2, .never_throws = never_throws, .shared_cores = cores});
              CHECK(chosen->algo == best->text.algo);
              CHECK(chosen->variant == best->text.variant);
            }
      }
}

TEST_CASE("one validation: the collective and resolve reject a forced algorithm alike") {
  const Topology ring6 = Topology::ring(6);
  std::string from_resolve, from_run;
  try {
    (void)hc::resolve(Collective::broadcast, Algo::esbt, ring6, Links::routed, 64);
  } catch (const hc::AlgorithmError& e) {
    from_resolve = e.what();
  }
  hc::Options opt;
  opt.pinning = hc::Pinning::none;
  try {
    hc::run(
        ring6,
        [](hc::Proc& vp) {
          std::vector<int> buf(16);
          hc::broadcast(vp, buf, 0, Algo::esbt);
        },
        opt);
  } catch (const hc::AlgorithmError& e) {
    from_run = e.what();
  }
  CHECK(from_resolve == "broadcast with Algo::esbt cannot run on ring:6: it needs p = 2^d VPs");
  // The collective's message is resolve's, prefixed with the VP.
  CHECK(from_run.size() > from_resolve.size());
  CHECK(from_run.substr(from_run.size() - from_resolve.size()) == from_resolve);
  CHECK(from_run.rfind("VP ", 0) == 0);
  std::string unknown;
  try {
    (void)hc::resolve(Collective::all_gather, Algo::esbt, ring6, Links::routed, 64);
  } catch (const hc::AlgorithmError& e) {
    unknown = e.what();
  }
  CHECK(unknown == "all_gather has no esbt algorithm (it has: automatic, hypercube, mesh, ring)");
  try {
    (void)hc::resolve(Collective::all_gather, static_cast<Algo>(77), ring6, Links::routed, 64);
  } catch (const hc::AlgorithmError& e) {
    unknown = e.what();
  }
  CHECK(unknown ==
        "all_gather has no algorithm Algo(77), a value Algo does not name (it has: automatic, "
        "hypercube, mesh, ring)");
}

TEST_CASE("collectives/ALGORITHMS.md: a section per card, and the generated tables current") {
  const std::string doc = read_file(kAlgorithmsMd);
  REQUIRE(!doc.empty());
  for (const hc::Card& card : hc::cards()) {
    if (card.op >= Collective::all_gatherv) continue;  // the irregular ones share a section
    const std::string op = hc::to_string(card.op), algo = hc::to_string(card.algo);
    INFO(op, " / ", algo);
    // "### broadcast / hypercube", or a heading that names several operations.
    bool found = false;
    for (std::size_t at = doc.find("\n### "); at != std::string::npos;
         at = doc.find("\n### ", at + 1)) {
      const std::string heading = doc.substr(at + 5, doc.find('\n', at + 1) - at - 5);
      if (heading.find(op + " / " + algo) != std::string::npos) found = true;
    }
    CHECK_MESSAGE(found, "no \"### ", op, " / ", algo, "\" section");
  }
  check_generated("registry", registry_table());
  check_generated("choices", choices_table());
  check_generated("choices on 2 shared cores", choices_table(2));
}
