#include <riomesh/actors/node/seeds.hpp>

#include <riomesh/config/address.hpp>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>

namespace riomesh::actors {

std::vector<config::endpoint> resolve_by_dns(const config::endpoint& seed, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  auto port = std::to_string(seed.port);
  if (int rc = getaddrinfo(seed.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    error = gai_strerror(rc);
    return {};
  }
  std::vector<config::endpoint> out;
  for (auto* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* where = nullptr;
    if (a->ai_family == AF_INET)
      where = &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr;
    else if (a->ai_family == AF_INET6)
      where = &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr;
    if (!where || !inet_ntop(a->ai_family, where, text, sizeof text))
      continue;
    config::endpoint e{text, seed.port};
    if (std::find(out.begin(), out.end(), e) == out.end())
      out.push_back(std::move(e));
  }
  freeaddrinfo(found);
  if (out.empty())
    error = "no IPv4 or IPv6 address";
  return out;
}

seed_addresses resolve_seeds(const std::vector<config::endpoint>& seeds,
                             const seed_resolver& resolve, std::size_t max) {
  seed_addresses r;
  for (const auto& seed : seeds) {
    std::string error;
    auto addresses = resolve(seed, error);
    if (addresses.empty())
      r.problems.push_back("seed " + config::to_string(seed) + ": " +
                           (error.empty() ? std::string{"no address"} : error));
    for (auto& a : addresses) {
      if (r.found.size() >= max)
        return r;
      if (std::find(r.found.begin(), r.found.end(), a) == r.found.end())
        r.found.push_back(std::move(a));
    }
  }
  return r;
}

}  // namespace riomesh::actors
