// How CAF serializes a riomesh::buffer: include this where a message type
// has a buffer field. Under a riomesh codec (message_codec.hpp) a buffer at
// or above eager_threshold becomes a placement descriptor (its bytes travel
// by iowrite, not through the serializer) and anything smaller goes inline;
// under any other CAF serializer the bytes go inline.
#pragma once

#include <riomesh/buffer.hpp>

#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>

#include <type_traits>

namespace caf {
class serializer;
class deserializer;
}  // namespace caf

namespace riomesh {

namespace detail {
caf::error save_buffer(caf::serializer& f, const buffer& x);
caf::error load_buffer(caf::deserializer& f, buffer& x);
}  // namespace detail

inline caf::error inspect(caf::serializer& f, buffer& x) {
  return detail::save_buffer(f, x);
}
inline caf::error inspect(caf::deserializer& f, buffer& x) {
  return detail::load_buffer(f, x);
}
// to_string and other read-only inspectors: the size, not the bytes.
template <class Inspector>
typename std::enable_if<Inspector::reads_state &&
                            !std::is_base_of<caf::serializer, Inspector>::value,
                        typename Inspector::result_type>::type
inspect(Inspector& f, buffer& x) {
  auto size = static_cast<std::uint64_t>(x.size());
  return f(caf::meta::type_name("riomesh::buffer"), size);
}

}  // namespace riomesh
