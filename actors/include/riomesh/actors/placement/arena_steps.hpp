// The arena envelope's steps, by which a receiver sizes its arena by
// demand (arena_sizing.hpp) with its sender:
//   want  (sender):   a = bytes it could not place
//   moved (receiver): new space goes to [a, a + b) from now on
//   left  (sender):   nothing more goes to the segment at a, the one moved
//                     from: everything placed there is announced before this
//   kept  (receiver): no more space now; a = the current segment's size
// and, for buffers lent by rendezvous (rendezvous.hpp), the fetch's:
//   fetched (receiver): the lent buffer at a (b bytes) is read; the
//                       sender's map of it may go (fenced behind the read)
//   pull    (receiver): write the lent buffer at a into my map at b
//   pushed  (sender):   the lent buffer at a is in the receiver's map
#pragma once

#include <riomesh/actors/envelope/envelope.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace riomesh::actors {

struct arena_step {
  enum class kind : std::uint8_t {
    want = 1,
    moved = 2,
    left = 3,
    kept = 4,
    fetched = 5,
    pull = 6,
    pushed = 7
  };
  kind what = kind::want;
  std::uint64_t a = 0, b = 0;
};

envelope encode_step(const arena_step& s);
// The step in an arena envelope, or nothing with `error` set.
std::optional<arena_step> decode_step(const envelope& e, std::string& error);

}  // namespace riomesh::actors
