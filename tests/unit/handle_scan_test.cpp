// Finding the actor handles in a serialized message (reach/handle_scan):
// each one CAF wrote, once, and none made of application bytes.
#include <riomesh/actors/reach/handle_scan.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using riomesh::actors::handle_scan;

namespace {

std::vector<unsigned char> node_id(unsigned char host) {
  std::vector<unsigned char> id{'r', 'i', 'o', 'm', 'e', 's', 'h', '!', 0, 0, 0x10, 0x20};
  id.resize(32, host);
  return id;
}

// An actor handle as CAF 0.17 writes it: the id big-endian, then the node.
void put_handle(std::vector<unsigned char>& body, std::uint64_t actor, unsigned char host) {
  for (int shift = 56; shift >= 0; shift -= 8)
    body.push_back(static_cast<unsigned char>(actor >> shift));
  auto id = node_id(host);
  body.insert(body.end(), id.begin(), id.end());
}

}  // namespace

TEST_CASE("handle scan: handles in the clear are found once each, none inside application bytes") {
  handle_scan scan{node_id(1)};
  std::vector<unsigned char> body(12, 0);  // a message header of sorts
  put_handle(body, 7, 1);
  std::size_t opaque_from = body.size();
  body.resize(body.size() + 100, 0xab);  // an inline buffer ...
  put_handle(body, 9, 2);                // ... that holds a handle's bytes
  body.resize(body.size() + 20, 0xab);
  // A handle's bytes that begin in the buffer and end outside it.
  put_handle(body, 11, 3);
  std::size_t opaque_to = body.size() - 20;
  put_handle(body, 7, 1);  // the first again: one entry
  put_handle(body, 8, 4);
  body.resize(body.size() + 5, 0);

  auto found = scan.scan(body.data(), body.size(), {{opaque_from, opaque_to}});
  REQUIRE(found.size() == 2);
  CHECK(found[0].actor == 7);
  CHECK(found[0].node.first == 0x1020);
  CHECK(found[1].actor == 8);
  CHECK(found[1].node.second[0] == 4);

  // With nothing opaque, the buffer's handle counts too (and the
  // straddling one, which is whole in the bytes).
  auto all = scan.scan(body.data(), body.size(), {});
  CHECK(all.size() == 4);
  // Ranges that reach past the body, or a body too short for a handle.
  CHECK(scan.scan(body.data(), body.size(), {{opaque_from, body.size() + 100}}).size() == 1);
  CHECK(scan.scan(body.data(), 39, {}).empty());
}
