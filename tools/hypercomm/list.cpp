// `hypercomm list`: every algorithm card (collectives/ALGORITHMS.md) as a table: operation,
// algorithm, cost formula, restrictions, source; long cells wrap to fit the terminal.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "verify.hpp"

namespace hypercomm::cli {

namespace {

constexpr std::size_t kColumns = 5;
using Row = std::array<std::string, kColumns>;

// Columns of the terminal on stdout, else $COLUMNS, else 160.
std::size_t terminal_width() {
  winsize size{};
  if (isatty(STDOUT_FILENO) != 0 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    const long n = std::strtol(columns, nullptr, 10);
    if (n > 0) return static_cast<std::size_t>(n);
  }
  return 160;
}

// Words of `text` in lines of at most `width` characters (a longer word gets a line of its own).
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t end = std::min(text.find(' ', i), text.size());
    const std::string word = text.substr(i, end - i);
    i = end + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) lines.push_back(line), line.clear();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

class ListCommand final : public Command {
 public:
  explicit ListCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("list",
                                 "List every algorithm card: cost formula, restrictions, source");
    app_->add_option("--op,-o", op_, "only this collective");
    app_->add_option("--width,-w", width_, "table width (default: the terminal's, else 160)")
        ->check(CLI::Range(60, 10000));
  }

  int execute() override {
    std::optional<Collective> only;
    if (!op_.empty()) only = parse_op(op_);
    std::vector<Row> rows;
    for (const Card& card : cards())
      if (!only || card.op == *only)
        rows.push_back({to_string(card.op),
                        std::string(to_string(card.algo)) +
                            (card.variant != nullptr ? std::string(" (") + card.variant + ")" : ""),
                        card.formula, card.restrictions, card.source});
    const Row header{"operation", "algorithm", "cost", "restrictions", "source"};

    // Operation and algorithm keep their width; cost, restrictions and source share the rest
    // 45 : 25 : 30, each no wider than its longest cell.
    std::array<std::size_t, kColumns> width{};
    for (const Row& row : rows)
      for (std::size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], row[c].size());
    for (std::size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], header[c].size());
    const std::size_t total = width_ > 0 ? static_cast<std::size_t>(width_) : terminal_width();
    const std::size_t fixed = width[0] + width[1] + 2 * (kColumns - 1);
    const std::size_t rest = total > fixed + 60 ? total - fixed : 60;
    const std::array<std::size_t, 3> share{rest * 45 / 100, rest * 25 / 100, rest * 30 / 100};
    for (std::size_t c = 2; c < kColumns; ++c) width[c] = std::min(width[c], share[c - 2]);

    const auto print = [&](const Row& row) {
      std::array<std::vector<std::string>, kColumns> cells;
      std::size_t lines = 1;
      for (std::size_t c = 0; c < kColumns; ++c) {
        cells[c] = c < 2 ? std::vector<std::string>{row[c]} : wrap(row[c], width[c]);
        lines = std::max(lines, cells[c].size());
      }
      for (std::size_t l = 0; l < lines; ++l) {
        std::string text;
        for (std::size_t c = 0; c < kColumns; ++c) {
          const std::string cell = l < cells[c].size() ? cells[c][l] : "";
          text += cell;
          if (c + 1 < kColumns)
            text += std::string(width[c] - std::min(width[c], cell.size()) + 2, ' ');
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();
        std::printf("%s\n", text.c_str());
      }
    };
    print(header);
    Row rule;
    for (std::size_t c = 0; c < kColumns; ++c) rule[c] = std::string(width[c], '-');
    print(rule);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (r > 0 && rows[r][0] != rows[r - 1][0]) std::printf("\n");
      print(rows[r]);
    }

    std::printf("\n%zu algorithms. --bytes (m in the formulas) is what one VP passes:\n",
                rows.size());
    for (int k = 1; k <= static_cast<int>(Collective::reduce_scatterv); ++k) {
      const auto op = static_cast<Collective>(k);
      if (only && op != *only) continue;
      std::printf("  %-15s %s; %s\n", to_string(op), meaning_of_bytes(op),
                  takes_algo(op) ? "--algo picks the algorithm (automatic: the lowest cost)"
                                 : "chooses its algorithm by topology");
    }
    return kExitOk;
  }

 private:
  std::string op_;
  int width_ = 0;
};

}  // namespace

std::unique_ptr<Command> make_list_command(CLI::App& parent) {
  return std::make_unique<ListCommand>(parent);
}

}  // namespace hypercomm::cli
