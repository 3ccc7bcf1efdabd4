#include <riomesh/config/address.hpp>

#include <arpa/inet.h>

#include <cctype>

namespace riomesh::config {
namespace {

bool is_ipv4(const std::string& host) {
  in_addr addr{};
  return inet_pton(AF_INET, host.c_str(), &addr) == 1;
}

bool is_ipv6(const std::string& host) {
  in6_addr addr{};
  return inet_pton(AF_INET6, host.c_str(), &addr) == 1;
}

// RFC 1123 host names: dot-separated labels of letters, digits and inner
// hyphens, at most 63 characters each and 253 in all.
bool is_hostname(std::string_view host) {
  if (host.empty() || host.size() > 253)
    return false;
  std::size_t label = 0;
  char prev = '.';
  for (char c : host) {
    if (c == '.') {
      if (label == 0 || prev == '-')
        return false;
      label = 0;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || (c == '-' && label > 0)) {
      if (++label > 63)
        return false;
    } else {
      return false;
    }
    prev = c;
  }
  return label > 0 && prev != '-';
}

}  // namespace

std::variant<endpoint, std::string> parse_endpoint(std::string_view text) {
  std::string host;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos)
      return std::string{"missing ']' after the IPv6 address"};
    host = std::string{text.substr(1, close - 1)};
    if (!is_ipv6(host))
      return "'" + host + "' is not an IPv6 address";
    if (close + 1 >= text.size() || text[close + 1] != ':')
      return std::string{"expected ':port' after ']'"};
    port_text = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return std::string{"expected host:port (e.g. 127.0.0.1:7471)"};
    host = std::string{text.substr(0, colon)};
    if (host.find(':') != std::string::npos)
      return std::string{"an IPv6 address needs brackets: [addr]:port"};
    port_text = text.substr(colon + 1);
    bool numeric = !host.empty() && host.find_first_not_of("0123456789.") == std::string::npos;
    if (numeric ? !is_ipv4(host) : !is_hostname(host))
      return "'" + host + "' is not " + (numeric ? "an IPv4 address" : "a valid host name");
  }
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string_view::npos)
    return "port '" + std::string{port_text} + "' is not a number from 0 to 65535";
  unsigned long port = std::stoul(std::string{port_text});
  if (port > 65535)
    return "port " + std::to_string(port) + " is out of range (0 .. 65535)";
  return endpoint{host, static_cast<std::uint16_t>(port)};
}

std::string to_string(const endpoint& value) {
  if (value.host.find(':') != std::string::npos)
    return "[" + value.host + "]:" + std::to_string(value.port);
  return value.host + ":" + std::to_string(value.port);
}

bool is_loopback(const endpoint& value) {
  if (value.host == "localhost")
    return true;
  in_addr v4{};
  if (inet_pton(AF_INET, value.host.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, value.host.c_str(), &v6) == 1)
    return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

}  // namespace riomesh::config
