// Seeds: addresses a node dials by address, whatever node answers there,
// and keeps dialing by name once it knows it (cluster.seeds). A seed's host
// may be a DNS name with several addresses (a Kubernetes headless Service,
// a round-robin record): each address is a node to dial. Resolving blocks,
// so the node actor runs it on a thread of its own.
#pragma once

#include <riomesh/config/settings.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace riomesh::actors {

// The addresses of one seed, or none and why (`error`).
using seed_resolver =
    std::function<std::vector<config::endpoint>(const config::endpoint& seed, std::string& error)>;

// The system's resolver (getaddrinfo): numeric addresses, in its order,
// each once.
std::vector<config::endpoint> resolve_by_dns(const config::endpoint& seed, std::string& error);

struct seed_addresses {
  std::vector<config::endpoint> found;  // each once, at most `max`
  std::vector<std::string> problems;    // one per seed that gave nothing
};

// Every seed's addresses, at most `max` in all: a name that resolves to
// thousands does not make the node dial thousands.
seed_addresses resolve_seeds(const std::vector<config::endpoint>& seeds,
                             const seed_resolver& resolve, std::size_t max);

}  // namespace riomesh::actors
