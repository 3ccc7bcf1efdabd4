#include <riomesh/actors/peers/node_query.hpp>
#include <riomesh/channels/wire/byte_order.hpp>

#include <algorithm>

namespace riomesh::actors {
namespace {

constexpr std::size_t key_size = 24;  // u32 process id, 20 bytes host id

void append_text(std::vector<unsigned char>& out, const std::string& s) {
  auto n = std::min<std::size_t>(s.size(), 255);
  out.push_back(static_cast<unsigned char>(n));
  out.insert(out.end(), s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
}

// A length-prefixed text at `at`; false if the body ends first.
bool read_text(const std::vector<unsigned char>& b, std::size_t& at, std::string& out) {
  if (at >= b.size() || b.size() - at - 1 < b[at])
    return false;
  auto n = b[at];
  out.assign(b.begin() + static_cast<std::ptrdiff_t>(at + 1),
             b.begin() + static_cast<std::ptrdiff_t>(at + 1 + n));
  at += 1 + n;
  return true;
}

}  // namespace

std::vector<unsigned char> encode_node_query(const std::vector<node_table::key>& keys) {
  std::vector<unsigned char> out;
  auto n = std::min(keys.size(), max_node_query);
  out.reserve(n * key_size);
  for (std::size_t i = 0; i < n; ++i) {
    wire::append_le<std::uint32_t>(out, keys[i].first);
    out.insert(out.end(), keys[i].second.begin(), keys[i].second.end());
  }
  return out;
}

std::vector<node_table::key> decode_node_query(const std::vector<unsigned char>& body) {
  std::vector<node_table::key> keys(std::min(body.size() / key_size, max_node_query));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const unsigned char* p = body.data() + i * key_size;
    keys[i].first = wire::load_le<std::uint32_t>(p);
    std::copy_n(p + 4, keys[i].second.size(), keys[i].second.begin());
  }
  return keys;
}

void append_node_answer(std::vector<unsigned char>& out, const std::optional<node_table::node>& n) {
  out.push_back(n ? 1 : 0);
  if (!n)
    return;
  append_text(out, n->name);
  append_text(out, n->address.host);
  wire::append_le<std::uint16_t>(out, n->address.port);
}

std::optional<std::vector<node_answer>> decode_node_info(const std::vector<unsigned char>& b,
                                                         std::size_t asked, std::string& error) {
  std::vector<node_answer> answers(asked);
  std::size_t at = 0;
  for (std::size_t i = 0; i < asked; ++i) {
    auto& a = answers[i];
    auto where = "answer " + std::to_string(i + 1) + " of " + std::to_string(asked);
    if (at >= b.size()) {
      error = where + " is missing (the body ends at byte " + std::to_string(at) + ")";
      return std::nullopt;
    }
    a.known = b[at++] != 0;
    if (!a.known)
      continue;
    if (!read_text(b, at, a.name) || !read_text(b, at, a.where.host) || b.size() - at < 2) {
      error = where + " is cut short at byte " + std::to_string(b.size());
      return std::nullopt;
    }
    a.where.port = wire::load_le<std::uint16_t>(b.data() + at);
    at += 2;
  }
  if (at != b.size()) {
    error = std::to_string(b.size() - at) + " bytes after the " + std::to_string(asked) +
            " answers asked for";
    return std::nullopt;
  }
  return answers;
}

}  // namespace riomesh::actors
