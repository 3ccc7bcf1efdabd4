// Byte-exact checks of the rsocket wire layouts against vectors worked out by
// hand from rsocket-wire.md (§1.2, §2, §4.2, §6).
#include <riomesh/channels/wire/conn_data.hpp>
#include <riomesh/channels/wire/immediate.hpp>
#include <riomesh/channels/wire/iomap_size.hpp>
#include <riomesh/channels/wire/sge.hpp>

#include <doctest/doctest.h>

#include <vector>

using namespace riomesh::wire;
using bytes = std::vector<unsigned char>;

TEST_CASE("connection data: the spec's example, byte for byte") {
  conn_data cd;
  cd.flags = flag_iomap;
  cd.credits = 384;
  cd.target_iomap_size = 1;
  cd.target_sgl = {0x000055d0c0a01000ull, 0x1234, 2};
  cd.data_buf = {0x00007f3a18000000ull, 0x5678, 0x80000};
  const bytes expected = {0x01, 0x02, 0x01, 0x80, 0x00, 0x00, 0x00, 0x01,  //
                          0x00, 0x00, 0x55, 0xd0, 0xc0, 0xa0, 0x10, 0x00,  //
                          0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x02,  //
                          0x00, 0x00, 0x7f, 0x3a, 0x18, 0x00, 0x00, 0x00,  //
                          0x00, 0x00, 0x56, 0x78, 0x00, 0x08, 0x00, 0x00};
  auto encoded = encode(cd);
  CHECK(bytes(encoded.begin(), encoded.end()) == expected);
  auto decoded = decode_conn_data(expected.data(), expected.size());
  REQUIRE(std::holds_alternative<conn_data>(decoded));
  CHECK(std::get<conn_data>(decoded) == cd);
  CHECK(std::get<conn_data>(decoded).order() == byte_order::little);
}

TEST_CASE("connection data: big-endian flag, padding, bounds and version") {
  conn_data cd;
  cd.flags = flag_big_endian | flag_iomap;
  auto encoded = encode(cd);
  CHECK(encoded[1] == 0x03);
  bytes padded(encoded.begin(), encoded.end());
  padded.resize(56, 0);  // IB pads REQ private data to 56 bytes
  auto decoded = decode_conn_data(padded.data(), padded.size());
  REQUIRE(std::holds_alternative<conn_data>(decoded));
  CHECK(std::get<conn_data>(decoded).order() == byte_order::big);

  auto short_data = decode_conn_data(padded.data(), 39);
  REQUIRE(std::holds_alternative<std::string>(short_data));
  CHECK(std::get<std::string>(short_data) ==
        "connection data has 39 bytes; at least 40 are needed");
  CHECK(std::holds_alternative<std::string>(decode_conn_data(nullptr, 0)));

  padded[0] = 2;
  auto wrong = decode_conn_data(padded.data(), padded.size());
  REQUIRE(std::holds_alternative<std::string>(wrong));
  CHECK(std::get<std::string>(wrong) ==
        "connection data has protocol version 2; only version 1 is spoken");
}

TEST_CASE("immediates: op in bits 31..29, data in 28..0") {
  CHECK(encode({op::data, 16}) == 0x00000010u);
  CHECK(encode({op::sgl, 0 + 384}) == 0x80000180u);
  CHECK(encode({op::sgl, 192 + 384}) == 0x80000240u);
  CHECK(encode({op::sgl, 0x1fffd}) == 0x8001fffdu);
  CHECK(encode({op::iomap_sgl, 0}) == 0xc0000000u);
  CHECK(encode({op::iomap_sgl, 5}) == 0xc0000005u);
  CHECK(encode({op::ctrl, static_cast<std::uint32_t>(ctrl_code::disconnect)}) == 0xe0000000u);
  CHECK(encode({op::ctrl, static_cast<std::uint32_t>(ctrl_code::shutdown)}) == 0xe0000002u);
  CHECK(encode({op::data, 0x1fffffff}) == 0x1fffffffu);
  CHECK_FALSE(encode({op::data, 0x20000000}));

  CHECK(decode(0x80000180u) == immediate{op::sgl, 384});
  CHECK(decode(0x2000000au) == immediate{op::reserved_data1, 10});
  CHECK(decode(0xe0000002u) == immediate{op::ctrl, 2});
  CHECK(decode(0x1fffffffu) == immediate{op::data, 0x1fffffff});
}

TEST_CASE("immediates travel big-endian, whatever the host") {
  std::uint32_t wire = to_wire(0x80000180u);
  const auto* raw = reinterpret_cast<const unsigned char*>(&wire);
  CHECK(bytes(raw, raw + 4) == bytes{0x80, 0x00, 0x01, 0x80});
  CHECK(from_wire(wire) == 0x80000180u);
}

TEST_CASE("iomap size scale encoding: the spec's table") {
  struct row {
    std::uint32_t requested;
    std::uint8_t encoded;
    std::uint32_t decoded;
  };
  const row table[] = {{0, 0x00, 0},       {1, 0x01, 1},        {100, 0x64, 100},
                       {128, 0x80, 128},   {129, 0x80, 128},    {255, 0x80, 128},
                       {256, 0x81, 256},   {511, 0x81, 256},    {1000, 0x83, 768},
                       {4096, 0x90, 4096}, {10000, 0xa7, 9984}, {32767, 0xff, 32512},
                       {32768, 0x80, 128}, {40000, 0x9c, 7168}};
  for (const auto& r : table) {
    CAPTURE(r.requested);
    CHECK(encode_iomap_size(r.requested) == r.encoded);
    CHECK(decode_iomap_size(r.encoded) == r.decoded);
  }
  CHECK(iomap_size_exact(128));
  CHECK(iomap_size_exact(512));
  CHECK_FALSE(iomap_size_exact(200));
  CHECK_FALSE(iomap_size_exact(32768));
}

TEST_CASE("target SGE and iomap entry in either destination byte order") {
  const sge s{0x1122334455667788ull, 0xaabbccdd, 0x01020304};
  unsigned char out[24];
  encode(s, out, byte_order::little);
  CHECK(bytes(out, out + 16) == bytes{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  //
                                      0xdd, 0xcc, 0xbb, 0xaa, 0x04, 0x03, 0x02, 0x01});
  CHECK(decode_sge(out, byte_order::little) == s);
  encode(s, out, byte_order::big);
  CHECK(bytes(out, out + 16) == bytes{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,  //
                                      0xaa, 0xbb, 0xcc, 0xdd, 0x01, 0x02, 0x03, 0x04});
  CHECK(decode_sge(out, byte_order::big) == s);

  const iomap_entry e{0x0102030405060708ull, s};
  encode(e, out, byte_order::little);
  CHECK(bytes(out, out + 8) == bytes{0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01});
  CHECK(bytes(out + 8, out + 24) == bytes{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  //
                                          0xdd, 0xcc, 0xbb, 0xaa, 0x04, 0x03, 0x02, 0x01});
  CHECK(decode_iomap_entry(out, byte_order::little) == e);
  encode(e, out, byte_order::big);
  CHECK(out[0] == 0x01);
  CHECK(out[23] == 0x04);
  CHECK(decode_iomap_entry(out, byte_order::big) == e);
}

TEST_CASE("iomap entries match offsets from their offset up to offset + length") {
  iomap_entry e{1000, {0x5000, 7, 100}};
  CHECK(e.contains(1000));
  CHECK(e.contains(1099));
  CHECK_FALSE(e.contains(1100));
  CHECK_FALSE(e.contains(999));
  CHECK_FALSE(iomap_entry{}.contains(0));  // unwritten slot
  iomap_entry top{~0ull - 9, {0, 1, 10}};  // offset near 2^64: no overflow
  CHECK(top.contains(~0ull));
  CHECK_FALSE(top.contains(5));
  CHECK(target_list_size(1) == 56);
  CHECK(iomap_slot_offset(2) == 80);
}
