// Envelope bodies kept per thread for the next message. A small message's
// body is a vector allocated where it is encoded (or decoded) and freed
// once its bytes went on the stream (or its message was delivered); on
// the I/O thread, where both ends of a round trip run, those are four
// allocations per round trip for bodies of a few dozen bytes. Bodies given
// back here are taken again: a thread that only takes (a worker that
// encodes) allocates as before, one that only gives keeps at most
// `kept` of them.
#pragma once

#include <cstddef>
#include <vector>

namespace riomesh::actors::body_pool {

constexpr std::size_t kept = 64;
constexpr std::size_t largest = 16 * 1024;  // larger ones are freed, not kept

// An empty vector, with the room of one given back if any.
std::vector<unsigned char> take();
// `body`'s storage, for a later take() on this thread (freed if the thread
// keeps enough, or if it is large).
void give(std::vector<unsigned char>&& body);

}  // namespace riomesh::actors::body_pool
