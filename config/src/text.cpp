#include <riomesh/config/text.hpp>

#include <cctype>
#include <cstdio>

namespace riomesh::config {

bool is_node_name(std::string_view text) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (text.empty() || text.size() > 64 || !alnum(text[0]))
    return false;
  for (char c : text)
    if (!alnum(c) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto b = static_cast<unsigned char>(c);
    if (b == '\\') {
      out += "\\\\";
    } else if (b < 0x20 || b >= 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", b);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace riomesh::config
