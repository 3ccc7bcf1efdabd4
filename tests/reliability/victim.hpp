// What the reliability suites share: a victim node in its own process
// (runtime_peer) with an honest node of this process connected to it, the
// environment its children start with, and why a liar's session setup
// failed.
#pragma once

#include "liar.hpp"

#include <riomesh/actors/handshake/node_key.hpp>

#include <cluster.hpp>
#include <process.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace riomesh::test {

// Where the test's nodes listen: loopback on tcp, the VM's device address
// on rdma.
config::endpoint node_at(std::uint16_t port);

// The victim ("node-b", serving), and an honest node-a connected to it that
// checks, with a fresh payload each time, that it still serves.
struct victim_scene {
  explicit victim_scene(const std::string& what,
                        const std::vector<std::string>& args = {"node-b", "serve"});
  ~victim_scene();
  void still_serves();
  config::endpoint at() const { return node_at(victim.port()); }
  // The lie went out: the victim must drop that liar, say why, and go on.
  void expect_cut_off(liar& l, const std::string& name, const std::string& reason);

  std::string log_path;
  peer_process victim;
  std::unique_ptr<runtime> honest;
  caf::actor sink;
  std::uint64_t round = 0;
};

// A new node key, written where RUNTIME_PEER_KEY can find it (removed at
// the end of its scope), and its public half as a keyring takes it.
struct key_file {
  explicit key_file(const std::string& name);
  ~key_file();
  std::string public_text() const;
  actors::node_key key;
  std::string path;
};

// Why a liar claiming `name` could not set up its session at `to` (empty:
// it could).
std::string setup_failure(const std::string& name, const config::endpoint& to,
                          const config::settings& like, const actors::node_identity& id = {});

}  // namespace riomesh::test
