// The tcp channel's protocol as a hostile peer's bytes reach it, split as
// the input chooses, with the application reading the stream and exposing
// one region for the peer's placements. Whatever the peer sends, only the
// region may be written (AddressSanitizer sees the guard bytes around it)
// and the stream read back never exceeds what was asked. An input that
// starts with 0xFE plays a node's gated connection: the peer's maps and
// placements wait until the session is authorized (an op of its own).
#include "fuzz_input.hpp"

#include <riomesh/channels/tcp/tcp_protocol.hpp>

#include <cstdlib>
#include <cstring>
#include <vector>

using namespace riomesh::channels;
using namespace riomesh::channels::tcp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  riomesh::fuzz::input in(data, size);
  tcp_params p;
  p.gated = size > 0 && data[0] == 0xFE;
  if (p.gated)
    in.take<std::uint8_t>();
  p.recv_ring = 4096;
  p.max_frame = 1u << 16;
  tcp_protocol proto(p, "fuzz-peer");
  // The exposed region sits inside a larger block: its guards must stay intact.
  std::vector<unsigned char> block(3 * 4096, 0xAB);
  unsigned char* region = block.data() + 4096;
  std::vector<unsigned char> scratch(8192);
  std::vector<event> events;
  constexpr std::uint64_t map_at = 0x10000;
  bool withdrawn = false;
  while (!in.empty() && !proto.closed()) {
    switch (in.take<std::uint8_t>() % (p.gated ? 5 : 4)) {
      case 0:
      case 1: {  // bytes from the peer, into wherever the protocol says
        iovec iov[2];
        std::size_t parts = proto.read_targets(iov);
        if (parts == 0)
          break;
        // As readv fills them: the first, then the second (the next header,
        // or what is read ahead once authorized).
        std::size_t room = iov[0].iov_len + (parts > 1 ? iov[1].iov_len : 0);
        const std::uint8_t* src;
        std::size_t n = in.chunk(src, 1 + in.take<std::uint16_t>() % room);
        std::size_t first = std::min(n, iov[0].iov_len);
        std::memcpy(iov[0].iov_base, src, first);
        if (n > first)
          std::memcpy(iov[1].iov_base, src + first, n - first);
        proto.on_read(n);
        break;
      }
      case 2: {  // the application reads
        std::size_t want = 1 + in.take<std::uint16_t>() % scratch.size();
        auto r = proto.recv(scratch.data(), want);
        if (r.bytes > want)
          std::abort();
        break;
      }
      case 3: {  // the application exposes the region at 0x10000 (once or not), or withdraws it
        auto how = in.take<std::uint8_t>() % 3;
        if (how > 0) {
          if (proto.map(region, 4096, std::uint64_t{map_at}, how == 2).st == status::ok)
            withdrawn = false;
        } else if (auto st =
                       proto.unmap(in.take<std::uint8_t>() % 2 ? map_at : in.take<std::uint64_t>());
                   st == status::ok || st == status::incomplete) {
          // The memory is ours again at once: nothing may land in it now.
          std::memset(region, 0xCD, 4096);
          withdrawn = true;
        }
        break;
      }
      case 4: {  // the session is authenticated (gated only)
        proto.authorize();
        // Held means read nothing more; nothing was placed meanwhile.
        if (!proto.held_frame().empty())
          std::abort();
        break;
      }
    }
    proto.take_events(events);
    events.clear();
  }
  for (std::size_t i = 0; i < 4096; ++i)
    if (block[i] != 0xAB || block[2 * 4096 + i] != 0xAB)
      std::abort();  // a placement outside the region
  for (std::size_t i = 0; withdrawn && i < 4096; ++i)
    if (region[i] != 0xCD)
      std::abort();  // a placement into a withdrawn region
  return 0;
}
