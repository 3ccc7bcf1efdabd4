// Hand-made tcp channel frames, as a hostile or scripted peer sends them.
#pragma once

#include <riomesh/channels/tcp/frame.hpp>

#include <vector>

namespace riomesh::test {

inline std::vector<unsigned char> bytes_of(const channels::tcp::frame& f) {
  auto h = channels::tcp::encode(f);
  return {h.begin(), h.end()};
}

inline channels::tcp::frame make(channels::tcp::frame_kind k, std::uint32_t length = 0,
                                 std::uint64_t offset = 0, std::uint64_t extra = 0) {
  channels::tcp::frame f;
  f.kind = k;
  f.length = length;
  f.offset = offset;
  f.extra = extra;
  return f;
}

inline std::vector<unsigned char> hello() {
  return bytes_of(make(channels::tcp::frame_kind::hello, 0, channels::tcp::protocol_version,
                       channels::tcp::hello_magic));
}

inline std::vector<unsigned char> operator+(std::vector<unsigned char> a,
                                            const std::vector<unsigned char>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace riomesh::test
