// Name resolution and address printing shared by the tcp and rdma channels.
#pragma once

#include <riomesh/config/settings.hpp>

#include <netdb.h>
#include <sys/socket.h>

#include <memory>
#include <string>

namespace riomesh::channels::net {

struct addrinfo_free {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};
using addrinfo_list = std::unique_ptr<addrinfo, addrinfo_free>;

// getaddrinfo for a stream endpoint; empty with `error` naming the address.
addrinfo_list resolve(const config::endpoint& at, bool passive, std::string& error);

// "10.0.0.1:7471" or "[fe80::1]:7471".
std::string name_of(const sockaddr* sa);

}  // namespace riomesh::channels::net
