// The rsocket engine against a hostile peer: the peer writes what it likes
// into the memory we exposed to it (the target SGL list and the receive
// ring) and completes receives with any immediate and length, while the
// application sends, reads and acknowledges. The engine must turn every lie
// into a closed connection: AddressSanitizer sees any access outside our
// buffers, and the stream read back never exceeds what was asked.
#include "fuzz_input.hpp"

#include <riomesh/channels/engine/engine.hpp>
#include <riomesh/channels/wire/conn_data.hpp>
#include <riomesh/channels/wire/iomap_size.hpp>

#include <cstdlib>
#include <vector>

using namespace riomesh;
using namespace riomesh::engine;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input in(data, size);
  params p;
  p.iomap_slots = 2;
  std::vector<unsigned char> target_list(wire::target_list_size(p.iomap_slots));
  std::vector<unsigned char> recv_ring(8192), send_ring(16384), scratch(8192);
  riomesh::engine::engine eng(p, regions{{target_list.data(), target_list.size(), 11, 11},
                                         {recv_ring.data(), recv_ring.size(), 12, 12},
                                         {send_ring.data(), send_ring.size(), 13, 13}});
  std::vector<work> posted;
  std::vector<event> events;
  eng.take_work(posted);
  // The peer's connection data: as a riomesh peer would send it, or, when
  // the input says so, whatever the input holds.
  wire::conn_data cd;
  cd.flags = wire::flag_iomap | wire::flag_iomap_credit;
  cd.credits = 384;
  cd.target_iomap_size = wire::encode_iomap_size(2);
  cd.target_sgl = {0x1000, 21, 2};
  cd.data_buf = {0x200000, 22, 4096};
  if (in.take<std::uint8_t>() % 8 == 0) {
    unsigned char raw[wire::conn_data_size];
    for (auto& b : raw)
      b = in.take<std::uint8_t>();
    auto decoded = wire::decode_conn_data(raw, sizeof raw);
    if (auto* ok = std::get_if<wire::conn_data>(&decoded))
      cd = *ok;
  }
  if (!eng.start(cd))
    return 0;
  std::size_t completed = 0;
  while (!in.empty() && !eng.closed()) {
    switch (in.take<std::uint8_t>() % 6) {
      case 0: {  // the peer writes into our target list
        std::size_t at = in.take<std::uint16_t>() % target_list.size();
        const std::uint8_t* src;
        std::size_t n = in.chunk(src, target_list.size() - at);
        std::memcpy(target_list.data() + at, src, n);
        break;
      }
      case 1: {  // the peer writes stream bytes into our ring
        std::size_t at = in.take<std::uint16_t>() % recv_ring.size();
        const std::uint8_t* src;
        std::size_t n = in.chunk(src, recv_ring.size() - at);
        std::memcpy(recv_ring.data() + at, src, n);
        break;
      }
      case 2: {  // a receive completes, with any immediate and length
        auto imm = in.take<std::uint32_t>();
        auto len = in.take<std::uint32_t>();
        eng.on_recv_completion({imm, len, completion_status::success, {}});
        break;
      }
      case 3: {  // the application reads
        std::size_t want = 1 + in.take<std::uint16_t>() % scratch.size();
        if (eng.recv(scratch.data(), want).bytes > want)
          std::abort();
        break;
      }
      case 4: {  // the application sends
        std::size_t n = 1 + in.take<std::uint16_t>() % scratch.size();
        eng.send(scratch.data(), n);
        break;
      }
      case 5:  // our posted sends complete
        for (; completed < posted.size(); ++completed)
          if (posted[completed].kind != work_kind::post_recv)
            eng.on_send_completion({posted[completed].wr_id, completion_status::success, {}});
        break;
    }
    eng.take_work(posted);
    eng.take_events(events);
    events.clear();
  }
  return 0;
}
