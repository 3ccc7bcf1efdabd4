// Pairs of rdma channels connected in one process, driven by hand, for the
// suites that run only in the soft-RoCE VM.
#pragma once

#include "vm_address.hpp"

#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace riomesh::test {

using channels::verbs::memory_domain;
using channels::verbs::rdma_channel;
using channels::verbs::rdma_listener;
using channels::verbs::rdma_params;

inline rdma_params with(std::shared_ptr<memory_domain> d) {
  rdma_params p;
  p.domain = std::move(d);
  return p;
}

struct pair {
  std::unique_ptr<rdma_channel> dialer, acceptor;
};

// `n` connections from dialers with `dialing` to acceptors with `accepting`.
inline std::vector<pair> connect_pairs(int n, const rdma_params& dialing,
                                       const rdma_params& accepting) {
  std::string error;
  auto listener = rdma_listener::listen({addr(), 0}, accepting, error);
  REQUIRE_MESSAGE(listener, error);
  std::vector<pair> out;
  for (int i = 0; i < n; ++i) {
    pair p;
    std::string accept_error;
    std::thread acceptor(
        [&] { p.acceptor = listener->accept(std::chrono::seconds(10), accept_error); });
    p.dialer = rdma_channel::connect({addr(), static_cast<std::uint16_t>(listener->port())},
                                     dialing, error);
    acceptor.join();
    REQUIRE_MESSAGE(p.dialer, error);
    REQUIRE_MESSAGE(p.acceptor, accept_error);
    out.push_back(std::move(p));
  }
  return out;
}

// `n` connections from the dialers' domain to the acceptors'.
inline std::vector<pair> connect_pairs(int n, const std::shared_ptr<memory_domain>& dialers,
                                       const std::shared_ptr<memory_domain>& acceptors) {
  return connect_pairs(n, with(dialers), with(acceptors));
}

// Up to `n` bytes read at `to` within 5 s, driving both sides.
inline std::string receive(rdma_channel& from, rdma_channel& to, std::size_t n) {
  std::string got(n, '\0');
  std::size_t have = 0;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (have < n && std::chrono::steady_clock::now() < until) {
    from.progress();
    to.progress();
    have += to.recv(got.data() + have, n - have).bytes;
  }
  return got.substr(0, have);
}

// Sends `text` from `from` and reads it at `to`.
inline bool carries(rdma_channel& from, rdma_channel& to, const std::string& text) {
  auto sent = from.send(text.data(), text.size());
  return sent.bytes == text.size() && receive(from, to, text.size()) == text;
}

}  // namespace riomesh::test
