// The node query and its answer, as a hostile peer may write them: every
// answer in order or none, bounded, and what went wrong said.
#include <riomesh/actors/peers/node_query.hpp>

#include <doctest/doctest.h>

using namespace riomesh;
using namespace riomesh::actors;

namespace {

node_table::key key(std::uint32_t process, std::uint8_t host) {
  node_table::key k{};
  k.first = process;
  k.second.fill(host);
  return k;
}

node_table::node named(const std::string& name, const std::string& host, std::uint16_t port) {
  node_table::node n;
  n.name = name;
  n.address = {host, port};
  return n;
}

}  // namespace

TEST_CASE("node query: the ids asked go and come back, at most max_node_query") {
  std::vector<node_table::key> keys{key(1, 0xaa), key(70000, 0x01)};
  auto body = encode_node_query(keys);
  CHECK(body.size() == 48);
  CHECK(decode_node_query(body) == keys);
  body.push_back(7);  // a partial id: ignored
  CHECK(decode_node_query(body) == keys);
  std::vector<node_table::key> many(max_node_query + 10, key(3, 3));
  CHECK(decode_node_query(encode_node_query(many)).size() == max_node_query);
  std::vector<unsigned char> huge((max_node_query + 100) * 24, 0);
  CHECK(decode_node_query(huge).size() == max_node_query);
}

TEST_CASE("node info: known and unknown nodes, in the order asked") {
  std::vector<unsigned char> body;
  append_node_answer(body, named("node-c", "10.0.0.3", 7000));
  append_node_answer(body, std::nullopt);
  append_node_answer(body, named("node-d", "", 0));
  std::string error;
  auto answers = decode_node_info(body, 3, error);
  REQUIRE(answers);
  CHECK((*answers)[0].known);
  CHECK((*answers)[0].name == "node-c");
  CHECK((*answers)[0].where.host == "10.0.0.3");
  CHECK((*answers)[0].where.port == 7000);
  CHECK_FALSE((*answers)[1].known);
  CHECK((*answers)[2].name == "node-d");
  CHECK((*answers)[2].where.host.empty());
  // Names and hosts are cut at 255 bytes, as their length byte says.
  body.clear();
  append_node_answer(body, named(std::string(300, 'n'), std::string(400, 'h'), 1));
  answers = decode_node_info(body, 1, error);
  REQUIRE(answers);
  CHECK((*answers)[0].name.size() == 255);
  CHECK((*answers)[0].where.host.size() == 255);
}

TEST_CASE("node info: short, cut or overlong bodies are refused whole, saying where") {
  std::vector<unsigned char> body;
  append_node_answer(body, named("node-c", "10.0.0.3", 7000));
  std::string error;
  CHECK_FALSE(decode_node_info(body, 2, error));
  CHECK(error ==
        "answer 2 of 2 is missing (the body ends at byte " + std::to_string(body.size()) + ")");
  for (std::size_t cut = 1; cut < body.size(); ++cut) {
    std::vector<unsigned char> part(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(cut));
    CHECK_FALSE(decode_node_info(part, 1, error));
    CHECK(error.rfind("answer 1 of 1 is cut short", 0) == 0);
  }
  auto longer = body;
  longer.push_back(0);
  CHECK_FALSE(decode_node_info(longer, 1, error));
  CHECK(error == "1 bytes after the 1 answers asked for");
  // A length byte pointing past the end: refused, nothing read beyond it.
  std::vector<unsigned char> lie{1, 200, 'x'};
  CHECK_FALSE(decode_node_info(lie, 1, error));
  CHECK(decode_node_info({}, 0, error));
}
