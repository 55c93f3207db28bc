// Topology arithmetic against brute-force oracles: links built from the textbook definition of
// each shape, BFS distances over those links, and standard routes built from coordinates.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <hypercomm/errors.hpp>
#include <hypercomm/topology.hpp>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <vector>

using hypercomm::Topology;
using hypercomm::TopologyError;
using hypercomm::Wrap;
using Kind = hypercomm::Topology::Kind;

namespace {

// One shape under test with the facts it must report, taken from how it was made rather than
// from the Topology's own accessors.
struct Shape {
  Topology topology;
  Kind kind;
  int rows;
  int cols;
  int dimension;
  std::string name;
  bool wraps = true;  // false: a linear array or an open mesh, no wraparound links

  [[nodiscard]] int size() const { return rows * cols; }
};

// Rings and linear arrays p = 1..17, every torus and open mesh rows, cols in 1..8 (1x1, 1x4, 4x1,
// 2x3, 3x3 and 4x4 among them), hypercubes d = 0..8.
std::vector<Shape> all_shapes() {
  std::vector<Shape> shapes;
  for (int p = 1; p <= 17; ++p) {
    shapes.push_back({Topology::ring(p), Kind::ring, 1, p, -1, "ring:" + std::to_string(p)});
    shapes.push_back(
        {Topology::linear(p), Kind::linear, 1, p, -1, "linear:" + std::to_string(p), false});
  }
  for (int rows = 1; rows <= 8; ++rows) {
    for (int cols = 1; cols <= 8; ++cols) {
      const std::string extents = std::to_string(rows) + "x" + std::to_string(cols);
      shapes.push_back({Topology::mesh(rows, cols), Kind::mesh, rows, cols, -1, "mesh:" + extents});
      shapes.push_back({Topology::mesh(rows, cols, Wrap::none), Kind::mesh, rows, cols, -1,
                        "mesh:" + extents + ":open", false});
    }
  }
  for (int d = 0; d <= 8; ++d) {
    shapes.push_back(
        {Topology::hypercube(d), Kind::hypercube, 1, 1 << d, d, "hypercube:" + std::to_string(d)});
  }
  return shapes;
}

using Links = std::vector<std::set<int>>;

// The links by definition: ring i - (i+1) mod p; linear array i - i+1 for i+1 < p; torus
// (r, c) - (r, c+1) and (r, c) - (r+1, c) with wraparound; open mesh the same inside the grid
// only; hypercube i - i XOR 2^k. A link from a VP to itself (p = 1, an extent of 1) is no link.
Links oracle_links(const Shape& shape) {
  const int n = shape.size();
  Links links(static_cast<std::size_t>(n));
  const auto link = [&](int a, int b) {
    if (a == b) return;
    links[a].insert(b);
    links[b].insert(a);
  };
  switch (shape.kind) {
    case Kind::ring:
      for (int i = 0; i < n; ++i) link(i, (i + 1) % n);
      break;
    case Kind::linear:
      for (int i = 0; i + 1 < n; ++i) link(i, i + 1);
      break;
    case Kind::mesh:
      for (int r = 0; r < shape.rows; ++r) {
        for (int c = 0; c < shape.cols; ++c) {
          if (shape.wraps) {
            link(r * shape.cols + c, r * shape.cols + (c + 1) % shape.cols);
            link(r * shape.cols + c, ((r + 1) % shape.rows) * shape.cols + c);
            continue;
          }
          if (c + 1 < shape.cols) link(r * shape.cols + c, r * shape.cols + c + 1);
          if (r + 1 < shape.rows) link(r * shape.cols + c, (r + 1) * shape.cols + c);
        }
      }
      break;
    case Kind::hypercube:
      for (int i = 0; i < n; ++i) {
        for (int k = 0; k < shape.dimension; ++k) link(i, i ^ (1 << k));
      }
      break;
  }
  return links;
}

// Hop counts from source over the oracle links.
std::vector<int> bfs_distances(const Links& links, int source) {
  std::vector<int> distance(links.size(), -1);
  std::queue<int> frontier;
  distance[source] = 0;
  frontier.push(source);
  while (!frontier.empty()) {
    const int at = frontier.front();
    frontier.pop();
    for (const int next : links[at]) {
      if (distance[next] < 0) {
        distance[next] = distance[at] + 1;
        frontier.push(next);
      }
    }
  }
  return distance;
}

// The standard route of API.md, walked on coordinates. Ring and torus: columns first, then rows,
// each the shorter way round with ties going up. Linear array and open mesh: columns first, then
// rows, each straight toward the target. Hypercube: differing bits from the lowest.
std::vector<int> oracle_route(const Shape& shape, int a, int b) {
  std::vector<int> path{a};
  if (shape.kind == Kind::hypercube) {
    int at = a;
    for (int k = 0; k < shape.dimension; ++k) {
      if (((a ^ b) >> k) & 1) {
        at ^= 1 << k;
        path.push_back(at);
      }
    }
    return path;
  }
  const auto direction = [&shape](int from, int to, int extent) {
    if (!shape.wraps) return to > from ? +1 : -1;
    const int up = ((to - from) % extent + extent) % extent;
    return up <= extent - up ? +1 : -1;
  };
  int row = a / shape.cols;
  int col = a % shape.cols;
  const int target_row = b / shape.cols;
  const int target_col = b % shape.cols;
  const int col_step = direction(col, target_col, shape.cols);
  while (col != target_col) {
    col = (col + col_step + shape.cols) % shape.cols;
    path.push_back(row * shape.cols + col);
  }
  const int row_step = direction(row, target_row, shape.rows);
  while (row != target_row) {
    row = (row + row_step + shape.rows) % shape.rows;
    path.push_back(row * shape.cols + col);
  }
  return path;
}

// Slot of the directed link from -> to by API rule, -1 for no link. Ring and linear array: up 0,
// down 1. Mesh: first match of column+1, column-1, row+1, row-1 (wrapping on the torus, only
// inside the grid on the open mesh). Hypercube: the dimension crossed.
int oracle_slot(const Shape& shape, const Links& links, int from, int to) {
  if (links[from].count(to) == 0) return -1;
  if (shape.kind == Kind::hypercube) return std::countr_zero(static_cast<unsigned>(from ^ to));
  const int rows = shape.rows;
  const int cols = shape.cols;
  const int r = from / cols;
  const int c = from % cols;
  const int toward[] = {
      shape.wraps ? r * cols + (c + 1) % cols : (c + 1 < cols ? from + 1 : -1),
      shape.wraps ? r * cols + (c + cols - 1) % cols : (c > 0 ? from - 1 : -1),
      shape.wraps ? ((r + 1) % rows) * cols + c : (r + 1 < rows ? from + cols : -1),
      shape.wraps ? ((r + rows - 1) % rows) * cols + c : (r > 0 ? from - cols : -1)};
  for (int slot = 0; slot < 4; ++slot) {
    if (toward[slot] == to) return slot;
  }
  return -2;  // a linked VP that no direction reaches: the oracle itself is broken
}

// FNV-1a (64-bit) over every answer the Topology gives for one shape.
struct Fingerprint {
  std::uint64_t hash = 14695981039346656037ull;
  void add(long long value) {
    auto bits = static_cast<std::uint64_t>(value);
    for (int k = 0; k < 8; ++k, bits >>= 8) {
      hash ^= bits & 0xffu;
      hash *= 1099511628211ull;
    }
  }
  void add(const std::vector<int>& values) {
    add(static_cast<long long>(values.size()));
    for (const int v : values) add(v);
  }
  void add(const std::string& text) {
    add(static_cast<long long>(text.size()));
    for (const char ch : text) add(ch);
  }
};

std::uint64_t fingerprint_of(const Topology& t) {
  Fingerprint f;
  f.add(t.name());
  f.add(t.size());
  f.add(t.rows());
  f.add(t.cols());
  f.add(t.dimension());
  f.add(t.max_degree());
  for (int a = 0; a < t.size(); ++a) {
    f.add(t.neighbors(a));
    f.add(t.row_of(a));
    f.add(t.col_of(a));
    for (int b = 0; b < t.size(); ++b) {
      f.add(t.adjacent(a, b) ? 1 : 0);
      f.add(t.distance(a, b));
      f.add(t.route(a, b));
      f.add(t.next_hop(a, b));
      f.add(t.link_slot(a, b));
    }
  }
  for (int r = -2 * t.rows(); r < 2 * t.rows(); ++r) {
    for (int c = -2 * t.cols(); c < 2 * t.cols(); ++c) f.add(t.id_at(r, c));
  }
  return f.hash;
}

// Runs action and checks it throws TopologyError whose message contains every fragment.
void check_topology_error(std::string_view what, const std::vector<std::string>& fragments,
                          const std::function<void()>& action) {
  INFO("call: " << what);
  std::string message;
  bool thrown = false;
  try {
    action();
  } catch (const TopologyError& error) {
    thrown = true;
    message = error.what();
  } catch (const std::exception& error) {
    FAIL_CHECK("threw another exception type: " << error.what());
    return;
  }
  CHECK_MESSAGE(thrown, "expected hypercomm::TopologyError, nothing was thrown");
  INFO("message: " << message);
  for (const std::string& fragment : fragments) {
    CHECK_MESSAGE(message.find(fragment) != std::string::npos, "missing \"" << fragment << "\"");
  }
}

}  // namespace

TEST_CASE("shape accessors, names and parse round trip") {
  for (const Shape& shape : all_shapes()) {
    const Topology& t = shape.topology;
    CAPTURE(shape.name);
    CHECK(t.kind() == shape.kind);
    CHECK(t.size() == shape.size());
    CHECK(t.rows() == shape.rows);
    CHECK(t.cols() == shape.cols);
    CHECK(t.dimension() == shape.dimension);
    CHECK(t.wraps() == shape.wraps);
    CHECK(t.name() == shape.name);
    CHECK(Topology::parse(t.name()) == t);
    const int expected_degree = shape.kind == Kind::ring || shape.kind == Kind::linear
                                    ? 2
                                    : (shape.kind == Kind::mesh ? 4 : shape.dimension);
    CHECK(t.max_degree() == expected_degree);
  }
}

TEST_CASE("names and parsing of hand-picked shapes") {
  CHECK(Topology::ring(8).name() == "ring:8");
  CHECK(Topology::mesh(4, 4).name() == "mesh:4x4");
  CHECK(Topology::mesh(2, 3).name() == "mesh:2x3");
  CHECK(Topology::hypercube(3).name() == "hypercube:3");
  CHECK(Topology::parse("ring:8") == Topology::ring(8));
  CHECK(Topology::parse("mesh:2x3") == Topology::mesh(2, 3));
  CHECK(Topology::parse("mesh:3x2") != Topology::mesh(2, 3));
  CHECK(Topology::parse("hypercube:3") == Topology::hypercube(3));
  CHECK(Topology::parse("  hypercube:3\t\n") == Topology::hypercube(3));
  CHECK(Topology::parse("ring:008") == Topology::ring(8));
  CHECK(Topology::parse("hypercube:0") == Topology::hypercube(0));
  // Same VP count, different kinds: not equal.
  CHECK(Topology::ring(4) != Topology::mesh(1, 4));
  CHECK(Topology::ring(4) != Topology::hypercube(2));
  // The limits themselves are accepted.
  CHECK(Topology::ring(4096).size() == 4096);
  CHECK(Topology::mesh(64, 64).size() == 4096);
  CHECK(Topology::mesh(1, 4096).size() == 4096);
  CHECK(Topology::mesh(4096, 1).size() == 4096);
  CHECK(Topology::hypercube(12).size() == 4096);
  CHECK(Topology::parse("mesh:4096x1") == Topology::mesh(4096, 1));
}

TEST_CASE("neighbors equal the links of the definition") {
  for (const Shape& shape : all_shapes()) {
    const Links links = oracle_links(shape);
    CAPTURE(shape.name);
    for (int id = 0; id < shape.size(); ++id) {
      CAPTURE(id);
      const std::vector<int> got = shape.topology.neighbors(id);
      CHECK(got == std::vector<int>(links[id].begin(), links[id].end()));
      // Spelled out as well, in case the oracle is wrong: ascending, unique, never id.
      CHECK(std::is_sorted(got.begin(), got.end()));
      CHECK(std::adjacent_find(got.begin(), got.end()) == got.end());
      CHECK(std::find(got.begin(), got.end(), id) == got.end());
      CHECK(static_cast<int>(got.size()) <= shape.topology.max_degree());
    }
  }
}

TEST_CASE("neighbors of hand-picked shapes") {
  using V = std::vector<int>;
  CHECK(Topology::ring(1).neighbors(0).empty());
  CHECK(Topology::ring(2).neighbors(0) == V{1});
  CHECK(Topology::ring(5).neighbors(0) == V{1, 4});
  CHECK(Topology::mesh(1, 1).neighbors(0).empty());
  CHECK(Topology::mesh(1, 3).neighbors(1) == V{0, 2});
  CHECK(Topology::mesh(2, 3).neighbors(0) == V{1, 2, 3});
  CHECK(Topology::mesh(4, 4).neighbors(5) == V{1, 4, 6, 9});
  CHECK(Topology::mesh(4, 4).neighbors(0) == V{1, 3, 4, 12});
  CHECK(Topology::hypercube(0).neighbors(0).empty());
  CHECK(Topology::hypercube(3).neighbors(5) == V{1, 4, 7});
}

TEST_CASE("adjacent is symmetric and equals neighbour membership") {
  for (const Shape& shape : all_shapes()) {
    const Topology& t = shape.topology;
    CAPTURE(shape.name);
    for (int a = 0; a < shape.size(); ++a) {
      const std::vector<int> around = t.neighbors(a);
      for (int b = 0; b < shape.size(); ++b) {
        CAPTURE(a);
        CAPTURE(b);
        const bool is_neighbor = std::find(around.begin(), around.end(), b) != around.end();
        CHECK(t.adjacent(a, b) == is_neighbor);
        CHECK(t.adjacent(a, b) == t.adjacent(b, a));
      }
      CHECK_FALSE(t.adjacent(a, a));
    }
  }
}

TEST_CASE("distance equals the BFS distance over the links") {
  for (const Shape& shape : all_shapes()) {
    const Links links = oracle_links(shape);
    CAPTURE(shape.name);
    for (int a = 0; a < shape.size(); ++a) {
      const std::vector<int> hops = bfs_distances(links, a);
      for (int b = 0; b < shape.size(); ++b) {
        CAPTURE(a);
        CAPTURE(b);
        CHECK(shape.topology.distance(a, b) == hops[b]);
      }
    }
  }
}

TEST_CASE("route is the standard route: shortest, over links, by the tie rules") {
  for (const Shape& shape : all_shapes()) {
    const Topology& t = shape.topology;
    const Links links = oracle_links(shape);
    CAPTURE(shape.name);
    for (int a = 0; a < shape.size(); ++a) {
      const std::vector<int> hops = bfs_distances(links, a);
      for (int b = 0; b < shape.size(); ++b) {
        CAPTURE(a);
        CAPTURE(b);
        const std::vector<int> path = t.route(a, b);
        REQUIRE(!path.empty());
        CHECK(path.front() == a);
        CHECK(path.back() == b);
        CHECK(static_cast<int>(path.size()) == hops[b] + 1);
        for (std::size_t k = 1; k < path.size(); ++k) {
          CHECK(links[path[k - 1]].count(path[k]) == 1);
        }
        CHECK(path == oracle_route(shape, a, b));
        CHECK(t.next_hop(a, b) == (a == b ? a : path[1]));
      }
    }
  }
}

TEST_CASE("routes of hand-picked pairs") {
  using V = std::vector<int>;
  CHECK(Topology::ring(8).route(0, 4) == V{0, 1, 2, 3, 4});  // tie: up
  CHECK(Topology::ring(8).route(4, 0) == V{4, 5, 6, 7, 0});  // tie: up, wrapping
  CHECK(Topology::ring(8).route(0, 5) == V{0, 7, 6, 5});
  CHECK(Topology::ring(8).route(3, 3) == V{3});
  CHECK(Topology::ring(2).route(1, 0) == V{1, 0});
  // (0,0) -> (2,3) on 3x4: column 0 -> 3 the short way (down to 3), then row 0 -> 2 (up to 2).
  CHECK(Topology::mesh(3, 4).route(0, 11) == V{0, 3, 11});
  // (0,0) -> (2,2) on 4x4: both ties go up, columns first.
  CHECK(Topology::mesh(4, 4).route(0, 10) == V{0, 1, 2, 6, 10});
  CHECK(Topology::hypercube(3).route(0, 7) == V{0, 1, 3, 7});
  CHECK(Topology::hypercube(3).route(5, 2) == V{5, 4, 6, 2});
  CHECK(Topology::hypercube(3).next_hop(6, 0) == 4);
  CHECK(Topology::mesh(4, 4).next_hop(0, 12) == 12);
}

TEST_CASE("link_slot: distinct per neighbour, by the API rule, -1 otherwise") {
  for (const Shape& shape : all_shapes()) {
    const Topology& t = shape.topology;
    const Links links = oracle_links(shape);
    CAPTURE(shape.name);
    for (int from = 0; from < shape.size(); ++from) {
      std::set<int> used;
      for (int to = 0; to < shape.size(); ++to) {
        CAPTURE(from);
        CAPTURE(to);
        const int slot = t.link_slot(from, to);
        CHECK(slot == oracle_slot(shape, links, from, to));
        if (links[from].count(to) == 1) {
          CHECK(slot >= 0);
          CHECK(slot < t.max_degree());
          CHECK(used.insert(slot).second);
        } else {
          CHECK(slot == -1);
        }
      }
    }
  }
  CHECK(Topology::ring(2).link_slot(1, 0) == 0);  // (1 + 1) mod 2 == 0 wins over 1 - 1
  CHECK(Topology::ring(5).link_slot(0, 4) == 1);
  CHECK(Topology::mesh(4, 4).link_slot(0, 1) == 0);
  CHECK(Topology::mesh(4, 4).link_slot(0, 3) == 1);
  CHECK(Topology::mesh(4, 4).link_slot(0, 4) == 2);
  CHECK(Topology::mesh(4, 4).link_slot(0, 12) == 3);
  CHECK(Topology::mesh(2, 2).link_slot(0, 2) == 2);  // row+1 and row-1 coincide
  CHECK(Topology::hypercube(4).link_slot(3, 11) == 3);
  CHECK(Topology::hypercube(4).link_slot(3, 3) == -1);
  CHECK(Topology::hypercube(4).link_slot(3, 0) == -1);
}

TEST_CASE("id_at wraps both coordinates, negative ones too; open shapes have no VP outside") {
  for (const Shape& shape : all_shapes()) {
    const Topology& t = shape.topology;
    CAPTURE(shape.name);
    for (int r = -2 * shape.rows; r < 2 * shape.rows; ++r) {
      for (int c = -2 * shape.cols; c < 2 * shape.cols; ++c) {
        const int row = ((r % shape.rows) + shape.rows) % shape.rows;
        const int col = ((c % shape.cols) + shape.cols) % shape.cols;
        CAPTURE(r);
        CAPTURE(c);
        const int id = t.id_at(r, c);
        if (!shape.wraps && (r != row || c != col)) {
          CHECK(id == -1);
          continue;
        }
        CHECK(id == row * shape.cols + col);
        CHECK(t.row_of(id) == row);
        CHECK(t.col_of(id) == col);
      }
    }
  }
  CHECK(Topology::mesh(3, 5).id_at(INT_MIN, INT_MIN) ==
        ((INT_MIN % 3 + 3) % 3) * 5 + (INT_MIN % 5 + 5) % 5);
  CHECK(Topology::mesh(3, 5).id_at(INT_MAX, INT_MAX) == (INT_MAX % 3) * 5 + INT_MAX % 5);
  CHECK(Topology::mesh(3, 5, Wrap::none).id_at(INT_MIN, INT_MIN) == -1);
  CHECK(Topology::mesh(3, 5, Wrap::none).id_at(INT_MAX, 0) == -1);
  CHECK(Topology::mesh(3, 5, Wrap::none).id_at(2, 4) == 14);
  CHECK(Topology::linear(4).id_at(0, 4) == -1);
  CHECK(Topology::linear(4).id_at(1, 0) == -1);
  CHECK(Topology::linear(4).id_at(0, 3) == 3);
}

TEST_CASE("invalid shapes throw TopologyError naming the value") {
  check_topology_error("ring(0)", {"ring", "p = 0"}, [] { (void)Topology::ring(0); });
  check_topology_error("ring(-1)", {"-1"}, [] { (void)Topology::ring(-1); });
  check_topology_error("ring(4097)", {"4097"}, [] { (void)Topology::ring(4097); });
  check_topology_error("ring(INT_MIN)", {}, [] { (void)Topology::ring(INT_MIN); });
  check_topology_error("mesh(0, 3)", {"mesh", "0x3"}, [] { (void)Topology::mesh(0, 3); });
  check_topology_error("mesh(3, 0)", {"3x0"}, [] { (void)Topology::mesh(3, 0); });
  check_topology_error("mesh(-1, -1)", {}, [] { (void)Topology::mesh(-1, -1); });  // product 1
  check_topology_error("mesh(-64, -64)", {}, [] { (void)Topology::mesh(-64, -64); });
  check_topology_error("mesh(65, 65)", {"65x65"}, [] { (void)Topology::mesh(65, 65); });
  check_topology_error("mesh(4097, 1)", {}, [] { (void)Topology::mesh(4097, 1); });
  check_topology_error("mesh(2, 2049)", {}, [] { (void)Topology::mesh(2, 2049); });
  // rows * cols in 32 bits would wrap to 0 and to -1, both "<= 4096".
  check_topology_error("mesh(65536, 65536)", {}, [] { (void)Topology::mesh(65536, 65536); });
  check_topology_error("mesh(65537, 65535)", {}, [] { (void)Topology::mesh(65537, 65535); });
  check_topology_error("mesh(INT_MAX, INT_MAX)", {},
                       [] { (void)Topology::mesh(INT_MAX, INT_MAX); });
  check_topology_error("hypercube(-1)", {"hypercube", "d = -1"},
                       [] { (void)Topology::hypercube(-1); });
  check_topology_error("hypercube(13)", {"13"}, [] { (void)Topology::hypercube(13); });
  check_topology_error("hypercube(32)", {}, [] { (void)Topology::hypercube(32); });
  check_topology_error("linear(0)", {"linear", "p = 0"}, [] { (void)Topology::linear(0); });
  check_topology_error("linear(-1)", {"linear", "-1"}, [] { (void)Topology::linear(-1); });
  check_topology_error("linear(4097)", {"4097"}, [] { (void)Topology::linear(4097); });
  check_topology_error("linear(INT_MIN)", {}, [] { (void)Topology::linear(INT_MIN); });
  check_topology_error("linear(INT_MAX)", {}, [] { (void)Topology::linear(INT_MAX); });
  check_topology_error("mesh(0, 3, none)", {"mesh", "0x3", "open mesh"},
                       [] { (void)Topology::mesh(0, 3, Wrap::none); });
  check_topology_error("mesh(3, 0, none)", {"3x0"}, [] { (void)Topology::mesh(3, 0, Wrap::none); });
  check_topology_error("mesh(-1, -1, none)", {}, [] { (void)Topology::mesh(-1, -1, Wrap::none); });
  check_topology_error("mesh(65, 65, none)", {"65x65"},
                       [] { (void)Topology::mesh(65, 65, Wrap::none); });
  check_topology_error("mesh(2, 3, Wrap(7))", {"2x3", "Wrap(7)"},
                       [] { (void)Topology::mesh(2, 3, static_cast<Wrap>(7)); });
  check_topology_error("mesh(1, 4097, none)", {},
                       [] { (void)Topology::mesh(1, 4097, Wrap::none); });
  check_topology_error("mesh(65536, 65536, none)", {},
                       [] { (void)Topology::mesh(65536, 65536, Wrap::none); });
  check_topology_error("mesh(0, 3, around)", {"torus"},
                       [] { (void)Topology::mesh(0, 3, Wrap::around); });
  // In range for the text, out of range for the factory.
  for (const std::string_view text :
       {"ring:0", "ring:4097", "mesh:0x3", "mesh:65x65", "mesh:1x4097", "hypercube:13", "linear:0",
        "linear:4097", "mesh:0x3:open", "mesh:3x0:open", "mesh:65x65:open", "mesh:4097x1:open"}) {
    check_topology_error(text, {}, [text] { (void)Topology::parse(text); });
  }
}

TEST_CASE("parse rejects malformed text, quoting it and listing the accepted forms") {
  using namespace std::string_view_literals;  // "ring:8\0"sv keeps its NUL
  // clang-format off
  const std::string_view malformed[] = {
      "", " ", ":8", "torus:8", "Ring:8", "RING:8",
      "ring", "ring:", "ring8", "ring:x", "ring:8x", "ring:-8", "ring:+8", "ring: 8", "ring :8",
      "ring::8", "ring:8:", "ring:0x10", "ring:8.0", "ring:1e1", "ring:8\0"sv,
      "ring:2147483648", "ring:99999999999999999999",
      "mesh:4", "mesh:4x", "mesh:x4", "mesh:x", "mesh:4x4x4", "mesh:4X4", "mesh:4*4",
      "mesh:4 x 4", "mesh:-4x4", "mesh:4x-4", "mesh:4x99999999999",
      "hypercube", "hypercube:", "hypercube:3.0", "hypercube:three", "hypercube:-1",
      "hypercube:3 3",
      "linear", "linear:", "linear:x", "linear:-1", "linear:+4", "linear:4x1", "linear:4:open",
      "Linear:4", "line:4", "linear: 4", "linear:4.0",
      "mesh:2x2:closed", "mesh:2x2:", "mesh:2x2:OPEN", "mesh:2x2:Open", "mesh:2x2:open:open",
      "mesh:2x2 :open", "mesh:2x2: open", "mesh:2x2open", "mesh:2x2:torus", "mesh:2x2:around",
      "mesh::open", "mesh:open", "mesh:2:open", "mesh:x2:open", "mesh:2x:open", "mesh:2x2x2:open",
      "mesh:open:2x2", "ring:8:open", "hypercube:3:open", "mesh:2x2:open\0"sv};
  // clang-format on
  for (const std::string_view text : malformed) {
    // Control bytes are expected as \xHH, so that a NUL cannot cut the message short.
    std::string quoted = "\"";
    for (const char ch : text) {
      quoted += ch == '\0' ? std::string("\\x00") : std::string(1, ch);
    }
    quoted += "\"";
    check_topology_error(quoted,
                         {quoted, "ring:P", "linear:P", "mesh:RxC", "mesh:RxC:open", "hypercube:D"},
                         [text] { (void)Topology::parse(text); });
  }
}

TEST_CASE("ids outside [0, size) throw TopologyError naming the id and the size") {
  const Topology shapes[] = {Topology::ring(5),
                             Topology::mesh(3, 5),
                             Topology::hypercube(3),
                             Topology::hypercube(0),
                             Topology::linear(5),
                             Topology::linear(1),
                             Topology::mesh(3, 5, Wrap::none)};
  for (const Topology& t : shapes) {
    CAPTURE(t.name());
    const std::string size = std::to_string(t.size());
    for (const int bad : {-1, t.size(), t.size() + 7, INT_MIN, INT_MAX}) {
      CAPTURE(bad);
      const std::string id = std::to_string(bad);
      const std::vector<std::string> facts = {id, size};
      check_topology_error("neighbors", facts, [&] { (void)t.neighbors(bad); });
      check_topology_error("adjacent(bad, 0)", facts, [&] { (void)t.adjacent(bad, 0); });
      check_topology_error("adjacent(0, bad)", facts, [&] { (void)t.adjacent(0, bad); });
      check_topology_error("distance(bad, 0)", facts, [&] { (void)t.distance(bad, 0); });
      check_topology_error("distance(0, bad)", facts, [&] { (void)t.distance(0, bad); });
      check_topology_error("route(bad, 0)", facts, [&] { (void)t.route(bad, 0); });
      check_topology_error("route(0, bad)", facts, [&] { (void)t.route(0, bad); });
      check_topology_error("next_hop(bad, 0)", facts, [&] { (void)t.next_hop(bad, 0); });
      check_topology_error("next_hop(0, bad)", facts, [&] { (void)t.next_hop(0, bad); });
      check_topology_error("link_slot(bad, 0)", facts, [&] { (void)t.link_slot(bad, 0); });
      check_topology_error("link_slot(0, bad)", facts, [&] { (void)t.link_slot(0, bad); });
    }
  }
}

TEST_CASE("linear arrays and open meshes: names, parsing, equality and wraps") {
  CHECK(Topology::linear(8).name() == "linear:8");
  CHECK(Topology::linear(1).name() == "linear:1");
  CHECK(Topology::mesh(4, 4, Wrap::none).name() == "mesh:4x4:open");
  CHECK(Topology::mesh(3, 5, Wrap::none).name() == "mesh:3x5:open");
  CHECK(Topology::mesh(4, 4, Wrap::around).name() == "mesh:4x4");
  CHECK(Topology::parse("linear:8") == Topology::linear(8));
  CHECK(Topology::parse("linear:1") == Topology::linear(1));
  CHECK(Topology::parse(" linear:007\n") == Topology::linear(7));
  CHECK(Topology::parse("mesh:3x5:open") == Topology::mesh(3, 5, Wrap::none));
  CHECK(Topology::parse("mesh:3x5:open").name() == "mesh:3x5:open");
  CHECK(Topology::parse("\tmesh:4x4:open ") == Topology::mesh(4, 4, Wrap::none));
  CHECK(Topology::parse("mesh:4x4") == Topology::mesh(4, 4, Wrap::around));
  CHECK(Topology::parse("linear:4096").size() == 4096);
  CHECK(Topology::parse("mesh:64x64:open").size() == 4096);
  CHECK(Topology::parse("mesh:1x4096:open").size() == 4096);
  // The default of mesh() is the torus; torus and open mesh differ, as do the shapes of p VPs
  // in a row.
  CHECK(Topology::mesh(3, 3) == Topology::mesh(3, 3, Wrap::around));
  CHECK(Topology::mesh(3, 3) != Topology::mesh(3, 3, Wrap::none));
  CHECK(Topology::mesh(1, 1) != Topology::mesh(1, 1, Wrap::none));
  CHECK(Topology::mesh(3, 5, Wrap::none) != Topology::mesh(5, 3, Wrap::none));
  CHECK(Topology::linear(4) != Topology::ring(4));
  CHECK(Topology::linear(4) != Topology::mesh(1, 4, Wrap::none));
  CHECK(Topology::linear(4) != Topology::mesh(1, 4));
  CHECK(Topology::linear(4) == Topology::linear(4));
  CHECK(Topology::linear(4) != Topology::linear(5));
  // Kinds and the accessors the rest of the library reads.
  CHECK(Topology::linear(6).kind() == Kind::linear);
  CHECK(Topology::mesh(2, 3, Wrap::none).kind() == Kind::mesh);
  CHECK(Topology::linear(6).rows() == 1);
  CHECK(Topology::linear(6).cols() == 6);
  CHECK(Topology::linear(6).dimension() == -1);
  CHECK(Topology::linear(6).max_degree() == 2);
  CHECK(Topology::linear(1).max_degree() == 2);
  CHECK(Topology::mesh(2, 3, Wrap::none).max_degree() == 4);
  CHECK(Topology::mesh(1, 1, Wrap::none).max_degree() == 4);
  CHECK(Topology::ring(5).wraps());
  CHECK(Topology::ring(1).wraps());
  CHECK(Topology::mesh(3, 3).wraps());
  CHECK(Topology::hypercube(3).wraps());
  CHECK(Topology::hypercube(0).wraps());
  CHECK_FALSE(Topology::linear(5).wraps());
  CHECK_FALSE(Topology::linear(1).wraps());
  CHECK_FALSE(Topology::mesh(3, 3, Wrap::none).wraps());
  CHECK_FALSE(Topology::mesh(1, 1, Wrap::none).wraps());
}

TEST_CASE("linear arrays and open meshes by hand: the edge cases") {
  using V = std::vector<int>;
  // linear:1 and mesh:1x1:open: one VP, no link.
  for (const Topology& one : {Topology::linear(1), Topology::mesh(1, 1, Wrap::none)}) {
    CAPTURE(one.name());
    CHECK(one.size() == 1);
    CHECK(one.neighbors(0).empty());
    CHECK_FALSE(one.adjacent(0, 0));
    CHECK(one.distance(0, 0) == 0);
    CHECK(one.route(0, 0) == V{0});
    CHECK(one.next_hop(0, 0) == 0);
    CHECK(one.link_slot(0, 0) == -1);
  }
  // linear:2: the one link, both directions, in two different slots (ring:2 uses slot 0 both
  // ways, since (1 + 1) mod 2 == 0).
  const Topology two = Topology::linear(2);
  CHECK(two.neighbors(0) == V{1});
  CHECK(two.neighbors(1) == V{0});
  CHECK(two.adjacent(0, 1));
  CHECK(two.adjacent(1, 0));
  CHECK(two.link_slot(0, 1) == 0);
  CHECK(two.link_slot(1, 0) == 1);
  CHECK(two.route(1, 0) == V{1, 0});
  CHECK(two.distance(1, 0) == 1);
  // linear:5: no wraparound, so the ends are 4 apart and the route never takes the short way.
  const Topology line = Topology::linear(5);
  CHECK(line.neighbors(0) == V{1});
  CHECK(line.neighbors(2) == V{1, 3});
  CHECK(line.neighbors(4) == V{3});
  CHECK_FALSE(line.adjacent(0, 4));
  CHECK_FALSE(line.adjacent(0, 2));
  CHECK(line.distance(0, 4) == 4);
  CHECK(line.distance(4, 1) == 3);
  CHECK(line.route(0, 4) == V{0, 1, 2, 3, 4});
  CHECK(line.route(4, 0) == V{4, 3, 2, 1, 0});
  CHECK(line.route(3, 1) == V{3, 2, 1});
  CHECK(line.next_hop(4, 0) == 3);
  CHECK(line.link_slot(2, 3) == 0);
  CHECK(line.link_slot(2, 1) == 1);
  CHECK(line.link_slot(4, 0) == -1);
  CHECK(line.link_slot(0, 4) == -1);
  // mesh:3x3:open: corners have 2 links, edges 3, the centre 4; no wraparound.
  const Topology grid = Topology::mesh(3, 3, Wrap::none);
  CHECK(grid.neighbors(0) == V{1, 3});
  CHECK(grid.neighbors(1) == V{0, 2, 4});
  CHECK(grid.neighbors(4) == V{1, 3, 5, 7});
  CHECK(grid.neighbors(8) == V{5, 7});
  CHECK_FALSE(grid.adjacent(0, 2));
  CHECK_FALSE(grid.adjacent(0, 6));
  CHECK_FALSE(grid.adjacent(2, 3));  // consecutive ids, different rows
  CHECK(grid.distance(0, 8) == 4);
  CHECK(grid.distance(2, 6) == 4);
  CHECK(grid.route(0, 8) == V{0, 1, 2, 5, 8});  // along the row first
  CHECK(grid.route(8, 0) == V{8, 7, 6, 3, 0});
  CHECK(grid.route(2, 6) == V{2, 1, 0, 3, 6});
  CHECK(grid.route(6, 2) == V{6, 7, 8, 5, 2});
  CHECK(grid.next_hop(0, 6) == 3);
  CHECK(grid.link_slot(4, 5) == 0);
  CHECK(grid.link_slot(4, 3) == 1);
  CHECK(grid.link_slot(4, 7) == 2);
  CHECK(grid.link_slot(4, 1) == 3);
  CHECK(grid.link_slot(0, 2) == -1);
  CHECK(grid.link_slot(0, 6) == -1);
  // The torus of the same extents keeps its wraparound links.
  CHECK(Topology::mesh(3, 3).neighbors(0) == V{1, 2, 3, 6});
  CHECK(Topology::mesh(3, 3).route(0, 8) == V{0, 2, 8});
  // mesh:1xN:open is a linear array laid along a row; mesh:Nx1:open one down a column, its
  // links in the row slots 2 and 3.
  const Topology row = Topology::mesh(1, 4, Wrap::none);
  const Topology column = Topology::mesh(4, 1, Wrap::none);
  const Topology line4 = Topology::linear(4);
  for (int a = 0; a < 4; ++a) {
    CAPTURE(a);
    CHECK(row.neighbors(a) == line4.neighbors(a));
    CHECK(column.neighbors(a) == line4.neighbors(a));
    for (int b = 0; b < 4; ++b) {
      CAPTURE(b);
      CHECK(row.route(a, b) == line4.route(a, b));
      CHECK(column.route(a, b) == line4.route(a, b));
      CHECK(row.link_slot(a, b) == line4.link_slot(a, b));
      const int slot = column.link_slot(a, b);
      CHECK(slot == (b == a + 1 ? 2 : (b == a - 1 ? 3 : -1)));
    }
  }
  CHECK(column.route(3, 0) == V{3, 2, 1, 0});
  CHECK(column.row_of(3) == 3);
  CHECK(column.col_of(3) == 0);
}

TEST_CASE("open shapes: routes go straight, along the row first, and never wrap") {
  for (const Shape& shape : all_shapes()) {
    if (shape.wraps) continue;
    const Topology& t = shape.topology;
    const Links links = oracle_links(shape);
    CAPTURE(shape.name);
    for (int a = 0; a < shape.size(); ++a) {
      const std::vector<int> hops = bfs_distances(links, a);
      for (int b = 0; b < shape.size(); ++b) {
        CAPTURE(a);
        CAPTURE(b);
        const std::vector<int> path = t.route(a, b);
        // The Manhattan distance, which on a grid without wraparound is the BFS distance.
        const int manhattan =
            std::abs(t.row_of(a) - t.row_of(b)) + std::abs(t.col_of(a) - t.col_of(b));
        CHECK(t.distance(a, b) == manhattan);
        CHECK(t.distance(a, b) == hops[b]);
        CHECK(static_cast<int>(path.size()) == manhattan + 1);
        bool turned = false;  // once the route moves along a column it stays there
        for (std::size_t k = 1; k < path.size(); ++k) {
          const int from = path[k - 1];
          const int to = path[k];
          CHECK(t.adjacent(from, to));
          const int dr = t.row_of(to) - t.row_of(from);
          const int dc = t.col_of(to) - t.col_of(from);
          CHECK(std::abs(dr) + std::abs(dc) == 1);  // one grid step, never across the edge
          if (dc != 0) {
            CHECK_FALSE(turned);
            CHECK(dc == (t.col_of(b) > t.col_of(from) ? 1 : -1));  // toward the target column
          } else {
            turned = true;
            CHECK(t.col_of(from) == t.col_of(b));
            CHECK(dr == (t.row_of(b) > t.row_of(from) ? 1 : -1));
          }
        }
      }
    }
  }
}

TEST_CASE("link_slot of open shapes: one slot per link, the direction it leaves in") {
  for (const Shape& shape : all_shapes()) {
    if (shape.wraps) continue;
    const Topology& t = shape.topology;
    CAPTURE(shape.name);
    for (int from = 0; from < shape.size(); ++from) {
      CAPTURE(from);
      const std::vector<int> around = t.neighbors(from);
      std::set<int> slots;
      for (const int to : around) {
        const int slot = t.link_slot(from, to);
        // column + 1, column - 1, row + 1, row - 1.
        const int expected = to == from + 1 && t.row_of(to) == t.row_of(from)   ? 0
                             : to == from - 1 && t.row_of(to) == t.row_of(from) ? 1
                             : to == from + shape.cols                          ? 2
                                                                                : 3;
        CHECK(slot == expected);
        slots.insert(slot);
      }
      CHECK(slots.size() == around.size());  // injective: every link of `from` its own counter
      if (shape.kind == Kind::linear || shape.rows == 1) {
        CHECK(slots.size() <= 2);
        CHECK((slots.empty() || *slots.rbegin() <= 1));
      }
    }
  }
}

TEST_CASE("torus, ring and hypercube answers are those of before linear arrays and open meshes") {
  // fingerprint_of over every answer of each shape, folded per family. The expected values were
  // computed with the same function against the topology code of commit dc36ec2, before linear
  // arrays and open meshes existed; the oracle tests above check the answers themselves.
  Fingerprint rings, meshes, cubes;
  for (int p = 1; p <= 17; ++p) {
    rings.add(static_cast<long long>(fingerprint_of(Topology::ring(p))));
  }
  for (int rows = 1; rows <= 8; ++rows) {
    for (int cols = 1; cols <= 8; ++cols) {
      meshes.add(static_cast<long long>(fingerprint_of(Topology::mesh(rows, cols))));
    }
  }
  for (int d = 0; d <= 8; ++d) {
    cubes.add(static_cast<long long>(fingerprint_of(Topology::hypercube(d))));
  }
  CHECK(rings.hash == 0xacc6608d3ce87726ull);
  CHECK(meshes.hash == 0x95a6c828611cb98aull);
  CHECK(cubes.hash == 0x63cde23b06a7ff54ull);
}

TEST_CASE("ring_distance is the shorter way round") {
  for (int p = 1; p <= 17; ++p) {
    for (int a = 0; a < p; ++a) {
      for (int b = 0; b < p; ++b) {
        int up = 0;
        for (int at = a; at != b; at = (at + 1) % p) ++up;
        int down = 0;
        for (int at = a; at != b; at = (at + p - 1) % p) ++down;
        CAPTURE(p);
        CAPTURE(a);
        CAPTURE(b);
        CHECK(hypercomm::ring_distance(a, b, p) == std::min(up, down));
      }
    }
  }
}

TEST_CASE("gray code: a Hamiltonian cycle of the hypercube, inverted by gray_inverse") {
  static_assert(hypercomm::gray(0) == 0 && hypercomm::gray(1) == 1 && hypercomm::gray(2) == 3 &&
                hypercomm::gray(3) == 2 && hypercomm::gray(4) == 6);
  static_assert(hypercomm::gray_inverse(6) == 4);
  for (int d = 1; d <= 12; ++d) {
    const unsigned n = 1u << d;
    const Topology cube = Topology::hypercube(d);
    std::vector<bool> seen(n, false);
    CAPTURE(d);
    for (unsigned i = 0; i < n; ++i) {
      CAPTURE(i);
      const unsigned code = hypercomm::gray(i);
      const unsigned next = hypercomm::gray((i + 1) % n);  // the last wraps to the first
      REQUIRE(code < n);
      CHECK_FALSE(seen[code]);
      seen[code] = true;
      CHECK(std::popcount(code ^ next) == 1);
      CHECK(cube.adjacent(static_cast<int>(code), static_cast<int>(next)));
      CHECK(hypercomm::gray_inverse(code) == i);
      CHECK(hypercomm::gray(hypercomm::gray_inverse(i)) == i);
    }
  }
  for (const unsigned i : {0xFFFFu, 0x12345678u, 0xFFFFFFFFu, 0x80000000u}) {
    CHECK(hypercomm::gray_inverse(hypercomm::gray(i)) == i);
  }
}

TEST_CASE("ring_adjacent and lines_ring_adjacent agree with adjacent() link by link") {
  for (const char* name :
       {"ring:1",        "ring:2",        "ring:3",        "ring:8",        "linear:1",
        "linear:2",      "linear:3",      "linear:8",      "mesh:1x2",      "mesh:1x5",
        "mesh:1x5:open", "mesh:2x1:open", "mesh:2x2",      "mesh:2x2:open", "mesh:2x3:open",
        "mesh:3x3",      "mesh:4x4",      "mesh:4x4:open", "mesh:5x1",      "hypercube:0",
        "hypercube:1",   "hypercube:2",   "hypercube:3"}) {
    const auto t = hypercomm::Topology::parse(name);
    CAPTURE(name);
    const int p = t.size();
    bool ring = true;
    for (int i = 0; i < p && p > 1; ++i) ring = ring && t.adjacent(i, (i + 1) % p);
    CHECK(t.ring_adjacent() == ring);
    if (t.kind() != hypercomm::Topology::Kind::mesh) continue;
    bool lines = true;
    for (int r = 0; r < t.rows(); ++r)
      for (int c = 0; c < t.cols() && t.cols() > 1; ++c)
        lines = lines && t.adjacent(r * t.cols() + c, r * t.cols() + (c + 1) % t.cols());
    for (int c = 0; c < t.cols(); ++c)
      for (int r = 0; r < t.rows() && t.rows() > 1; ++r)
        lines = lines && t.adjacent(r * t.cols() + c, ((r + 1) % t.rows()) * t.cols() + c);
    CHECK(t.lines_ring_adjacent() == lines);
  }
}
