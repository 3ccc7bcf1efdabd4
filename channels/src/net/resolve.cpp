#include "resolve.hpp"

#include <riomesh/config/address.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>

namespace riomesh::channels::net {

addrinfo_list resolve(const config::endpoint& at, bool passive, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* list = nullptr;
  int rc = getaddrinfo(at.host.c_str(), std::to_string(at.port).c_str(), &hints, &list);
  if (rc != 0) {
    error = "cannot resolve " + config::to_string(at) + ": " + gai_strerror(rc);
    return nullptr;
  }
  return addrinfo_list(list);
}

std::string name_of(const sockaddr* sa) {
  if (!sa)
    return "?";
  char host[INET6_ADDRSTRLEN] = "?";
  if (sa->sa_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    return std::string{host} + ":" + std::to_string(ntohs(in->sin_port));
  }
  auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
  inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
  return "[" + std::string{host} + "]:" + std::to_string(ntohs(in6->sin6_port));
}

}  // namespace riomesh::channels::net
