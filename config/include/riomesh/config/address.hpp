// "host:port" parsing for listen and peer addresses.
#pragma once

#include <riomesh/config/settings.hpp>

#include <string>
#include <string_view>
#include <variant>

namespace riomesh::config {

// Accepts "10.0.0.1:7471", "[fe80::1]:7471", "node-a.example:7471".
// Returns the endpoint, or a message saying what is malformed.
std::variant<endpoint, std::string> parse_endpoint(std::string_view text);

// "[::1]:7471" for IPv6 literals, "host:port" otherwise.
std::string to_string(const endpoint& value);

// True for 127.0.0.0/8, ::1 and "localhost": addresses only this host reaches.
bool is_loopback(const endpoint& value);

}  // namespace riomesh::config
