// The envelope decoder against a hostile byte stream, fed in pieces whose
// sizes the input chooses. What it delivers must keep every promise the
// decoder makes: buffers inside our arena (or, in an envelope that lends
// them, inside the sender's lent range), released ranges inside the
// peer's, no more descriptors or body bytes than offered.
#include "fuzz_input.hpp"

#include <riomesh/actors/envelope/envelope_decoder.hpp>

#include <cstdlib>

using namespace riomesh::actors;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  riomesh::fuzz::input in(data, size);
  envelope_limits l;
  l.arena_size = 1u << 20;
  l.peer_arena_size = 1u << 19;
  l.max_body = 4096;
  l.max_buffers = 16;
  l.accepts_lent = true;
  envelope_decoder d(l);
  while (!in.empty() && !d.failed()) {
    const std::uint8_t* p;
    std::size_t n = in.chunk(p, 1 + in.take<std::uint8_t>() % 64);
    std::size_t used = 0;
    while (used < n && !d.failed()) {
      used += d.feed(p + used, n - used);
      if (auto e = d.next()) {
        if (e->body.size() > l.max_body || e->buffers.size() > l.max_buffers)
          std::abort();
        std::uint64_t limit = e->kind == envelope_kind::release ? l.peer_arena_size : l.arena_size;
        for (const auto& b : e->buffers) {
          if ((e->flags & envelope::lent) && b.offset >= wire_envelope::lent_from) {
            if (b.offset >= wire_envelope::lent_end ||
                b.length > wire_envelope::lent_end - b.offset)
              std::abort();
            continue;
          }
          if (b.offset > limit || b.length > limit - b.offset)
            std::abort();
        }
      }
    }
  }
  return 0;
}
