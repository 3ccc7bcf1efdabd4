// One engine against a scripted peer: the test plays the peer's part by
// writing into the engine's memory and feeding it completions, and reads the
// work the engine asks for. For rule-by-rule tests of the protocol.
#pragma once

#include <riomesh/channels/engine/engine.hpp>
#include <riomesh/channels/wire/iomap_size.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

namespace riomesh::test {

using namespace riomesh::engine;

// Keys and addresses of the scripted peer; the engine never touches them.
inline constexpr std::uint64_t peer_target_list = 0x1000;
inline constexpr std::uint32_t peer_target_key = 21;
inline constexpr std::uint64_t peer_ring = 0x200000;
inline constexpr std::uint32_t peer_ring_key = 22;
inline constexpr std::uint32_t ring_rkey = 12;
inline constexpr std::uint32_t send_lkey = 13;

struct peer_setup {
  std::uint16_t credits = 384;
  std::uint32_t half = 65536;
  std::uint32_t iomap_slots = 2;
  bool counts_iomap = true;  // a riomesh peer; false: a plain rsocket
};

struct lone_engine {
  std::vector<unsigned char> target_list, recv_ring, send_ring;
  engine::engine eng;
  std::vector<work> posted;  // everything taken from the engine, in order
  std::size_t completed = 0;

  explicit lone_engine(params p = {}, std::size_t ring = 128 * 1024, std::size_t send = 256 * 1024,
                       peer_setup peer = {})
      : target_list(wire::target_list_size(p.iomap_slots)),
        recv_ring(ring),
        send_ring(send),
        eng(p, regions{{target_list.data(), target_list.size(), 11, 11},
                       {recv_ring.data(), recv_ring.size(), ring_rkey, ring_rkey},
                       {send_ring.data(), send_ring.size(), send_lkey, send_lkey}}) {
    take();
    wire::conn_data cd;
    cd.flags = wire::flag_iomap | (peer.counts_iomap ? wire::flag_iomap_credit : 0);
    cd.credits = peer.credits;
    cd.target_iomap_size = wire::encode_iomap_size(peer.iomap_slots);
    cd.target_sgl = {peer_target_list, peer_target_key, 2};
    cd.data_buf = {peer_ring, peer_ring_key, peer.half};
    REQUIRE(eng.start(cd));
  }

  // The work the engine asked for since the last call.
  std::vector<work> take() {
    std::vector<work> out;
    eng.take_work(out);
    posted.insert(posted.end(), out.begin(), out.end());
    return out;
  }
  std::vector<event> events() {
    std::vector<event> out;
    eng.take_events(out);
    return out;
  }
  // Acknowledges every send posted so far, in order.
  void complete_all() {
    take();
    for (; completed < posted.size(); ++completed)
      if (posted[completed].kind != work_kind::post_recv)
        eng.on_send_completion({posted[completed].wr_id, completion_status::success, {}});
    take();
  }
  // The peer writes `length` stream bytes at ring offset `at` with DATA.
  void data(std::size_t at, std::uint32_t length, unsigned char fill = 'x') {
    std::memset(recv_ring.data() + at, fill, length);
    eng.on_recv_completion({length, length, completion_status::success, {}});
  }
  void imm(std::uint32_t value, std::uint32_t byte_len = 0) {
    eng.on_recv_completion({value, byte_len, completion_status::success, {}});
  }
  // The peer publishes a half into our target SGL slot `slot`.
  void publish(int slot, wire::sge s, std::uint32_t credit_limit) {
    wire::encode(s, target_list.data() + 16 * slot, wire::host_order());
    imm(0x80000000u | credit_limit, 16);
  }
  void iomap_slot(std::uint32_t i, wire::iomap_entry e) {
    wire::encode(e, target_list.data() + wire::iomap_slot_offset(i), wire::host_order());
  }
};

inline std::vector<std::uint32_t> lengths(const std::vector<work>& ws) {
  std::vector<std::uint32_t> out;
  for (const auto& w : ws)
    if (w.kind != work_kind::post_recv)
      out.push_back(static_cast<std::uint32_t>(w.length()));
  return out;
}

inline wire::sge payload_sge(const work& w) {
  REQUIRE(w.num_sge == 1);
  REQUIRE(w.sge[0].length == 16);
  return wire::decode_sge(reinterpret_cast<const unsigned char*>(w.sge[0].addr),
                          wire::host_order());
}

}  // namespace riomesh::test
