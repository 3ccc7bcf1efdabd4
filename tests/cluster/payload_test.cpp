// The pub/sub payload: a pattern per publisher and sequence number, its
// checksum, and what a subscriber says about a payload that fails it.
#include <payload.hpp>

#include <doctest/doctest.h>

#include <cstring>

using pubsub::checksum;
using pubsub::damage;
using pubsub::fill;

TEST_CASE("payload: damage names where it differs and whose pattern lies there") {
  auto b = riomesh::buffer::heap(65536);
  fill(b, "pub-1", 7);
  auto sum = checksum(b);
  CHECK(damage(b, "pub-1", 7) == "payload intact (the checksum sent with it is wrong)");

  auto later = riomesh::buffer::heap(65536);
  fill(later, "pub-1", 9);
  std::memcpy(b.data() + 4096, later.data() + 4096, 4096);  // a neighbour's bytes, in place
  CHECK(checksum(b) != sum);
  CHECK(damage(b, "pub-1", 7) ==
        "4096 of 65536 bytes differ, from 4096 to 8192; the first holds seq 9");

  std::memset(b.data() + 65536 - 16, 0, 16);
  CHECK(damage(b, "pub-1", 7) ==
        "4112 of 65536 bytes differ, from 4096 to 65536; the first holds seq 9");

  fill(b, "pub-1", 7);
  std::memset(b.data(), 0, 8);
  CHECK(damage(b, "pub-1", 7) == "8 of 65536 bytes differ, from 0 to 8; the first holds zeros");
  b.data()[0] = 1;
  CHECK(damage(b, "pub-1", 7) ==
        "8 of 65536 bytes differ, from 0 to 8; the first holds no sample's pattern");
}
