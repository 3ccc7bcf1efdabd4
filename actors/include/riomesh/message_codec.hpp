// A CAF message to and from an envelope body. Buffers at or above the
// eager threshold are not serialized: they are listed, in order, for the
// connection to place by iowrite (their descriptors go in the envelope),
// and on the receiving side each becomes the view the connection gives
// for its descriptor. Everything else is CAF's binary serialization of the
// message (its types must be added to both nodes' configs).
#pragma once

#include <riomesh/buffer.hpp>

#include <caf/fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace riomesh {
namespace detail {
class message_signatures;
class signature_prefixes;
}  // namespace detail

struct encoded_message {
  std::vector<unsigned char> body;
  std::vector<buffer> placed;  // for descriptors 0, 1, ... in this order
  std::uint64_t copied = 0;    // buffer bytes that went inline instead
  // Where in the body those inline bytes lie, [begin, end): application
  // data, in which nothing of CAF's (an actor handle) can be.
  std::vector<std::pair<std::size_t, std::size_t>> opaque;
};

// False with `error` set (the message names the type that failed).
// `context`: what CAF's serializer runs in; it decides how actor handles
// are written (null: the system's own, which knows no other node).
// `prefixes`, if given, writes known signatures without CAF's lookups by
// name (signature_prefixes.hpp; the same bytes).
bool encode_message(caf::actor_system& sys, const caf::message& msg, std::size_t eager_threshold,
                    encoded_message& out, std::string& error,
                    caf::execution_unit* context = nullptr,
                    detail::signature_prefixes* prefixes = nullptr);

// `placed(i)` is the buffer for descriptor i < `placed_count`, a view of
// where its bytes landed. `copied`, if given, gets the buffer bytes that
// came inline (copied out of the body). `context` gives actor handles of
// other nodes their proxies (its proxy registry). `signatures`, if given,
// reads known signatures without CAF's lookups by name (one thread at a
// time: message_signatures.hpp).
bool decode_message(caf::actor_system& sys, const unsigned char* body, std::size_t size,
                    std::size_t placed_count, const std::function<buffer(std::size_t)>& placed,
                    caf::message& out, std::string& error, std::uint64_t* copied = nullptr,
                    caf::execution_unit* context = nullptr,
                    detail::message_signatures* signatures = nullptr);

}  // namespace riomesh
