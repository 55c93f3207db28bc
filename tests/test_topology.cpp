// Topology arithmetic against brute-force oracles: links built from the textbook definition of
// each shape, BFS distances over those links, and standard routes built from coordinates.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
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

  [[nodiscard]] int size() const { return rows * cols; }
};

// Rings p = 1..17, every mesh rows, cols in 1..8, hypercubes d = 0..8.
std::vector<Shape> all_shapes() {
  std::vector<Shape> shapes;
  for (int p = 1; p <= 17; ++p) {
    shapes.push_back({Topology::ring(p), Kind::ring, 1, p, -1, "ring:" + std::to_string(p)});
  }
  for (int rows = 1; rows <= 8; ++rows) {
    for (int cols = 1; cols <= 8; ++cols) {
      shapes.push_back({Topology::mesh(rows, cols), Kind::mesh, rows, cols, -1,
                        "mesh:" + std::to_string(rows) + "x" + std::to_string(cols)});
    }
  }
  for (int d = 0; d <= 8; ++d) {
    shapes.push_back(
        {Topology::hypercube(d), Kind::hypercube, 1, 1 << d, d, "hypercube:" + std::to_string(d)});
  }
  return shapes;
}

using Links = std::vector<std::set<int>>;

// The links by definition: ring i - (i+1) mod p; torus (r, c) - (r, c+1) and (r, c) - (r+1, c)
// with wraparound; hypercube i - i XOR 2^k. A link from a VP to itself (p = 1, an extent of 1)
// is no link.
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
    case Kind::mesh:
      for (int r = 0; r < shape.rows; ++r) {
        for (int c = 0; c < shape.cols; ++c) {
          link(r * shape.cols + c, r * shape.cols + (c + 1) % shape.cols);
          link(r * shape.cols + c, ((r + 1) % shape.rows) * shape.cols + c);
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

// The standard route of API.md, walked on coordinates. Ring and mesh: columns first, then rows,
// each the shorter way round with ties going up. Hypercube: differing bits from the lowest.
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
  const auto direction = [](int from, int to, int extent) {
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

// Slot of the directed link from -> to by API rule, -1 for no link. Ring: up 0, down 1. Mesh:
// first match of column+1, column-1, row+1, row-1. Hypercube: the dimension crossed.
int oracle_slot(const Shape& shape, const Links& links, int from, int to) {
  if (links[from].count(to) == 0) return -1;
  if (shape.kind == Kind::hypercube) return std::countr_zero(static_cast<unsigned>(from ^ to));
  const int rows = shape.rows;
  const int cols = shape.cols;
  const int r = from / cols;
  const int c = from % cols;
  const int toward[] = {r * cols + (c + 1) % cols, r * cols + (c + cols - 1) % cols,
                        ((r + 1) % rows) * cols + c, ((r + rows - 1) % rows) * cols + c};
  for (int slot = 0; slot < 4; ++slot) {
    if (toward[slot] == to) return slot;
  }
  return -2;  // a linked VP that no direction reaches: the oracle itself is broken
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
    CHECK(t.name() == shape.name);
    CHECK(Topology::parse(t.name()) == t);
    const int expected_degree =
        shape.kind == Kind::ring ? 2 : (shape.kind == Kind::mesh ? 4 : shape.dimension);
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

TEST_CASE("id_at wraps both coordinates, negative ones too") {
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
        CHECK(id == row * shape.cols + col);
        CHECK(t.row_of(id) == row);
        CHECK(t.col_of(id) == col);
      }
    }
  }
  CHECK(Topology::mesh(3, 5).id_at(INT_MIN, INT_MIN) ==
        ((INT_MIN % 3 + 3) % 3) * 5 + (INT_MIN % 5 + 5) % 5);
  CHECK(Topology::mesh(3, 5).id_at(INT_MAX, INT_MAX) == (INT_MAX % 3) * 5 + INT_MAX % 5);
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
  // In range for the text, out of range for the factory.
  for (const std::string_view text :
       {"ring:0", "ring:4097", "mesh:0x3", "mesh:65x65", "mesh:1x4097", "hypercube:13"}) {
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
      "hypercube:3 3"};
  // clang-format on
  for (const std::string_view text : malformed) {
    // Control bytes are expected as \xHH, so that a NUL cannot cut the message short.
    std::string quoted = "\"";
    for (const char ch : text) {
      quoted += ch == '\0' ? std::string("\\x00") : std::string(1, ch);
    }
    quoted += "\"";
    check_topology_error(quoted, {quoted, "ring:P", "mesh:RxC", "hypercube:D"},
                         [text] { (void)Topology::parse(text); });
  }
}

TEST_CASE("ids outside [0, size) throw TopologyError naming the id and the size") {
  const Topology shapes[] = {Topology::ring(5), Topology::mesh(3, 5), Topology::hypercube(3),
                             Topology::hypercube(0)};
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
