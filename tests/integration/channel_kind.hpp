// How the contract suite gets a connected pair of channels across two
// processes, for each kind of channel. The suite itself knows only channel.
#pragma once

#include <riomesh/channels/channel.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace riomesh::test {

class channel_kind {
 public:
  virtual ~channel_kind() = default;
  virtual const char* name() const = 0;
  // In the test process: listen, and say where, as ADDRESS:PORT (passed to
  // the peer process). The address is RIOMESH_CONTRACT_ADDR if set (another
  // host's peer must reach it), else the kind's own default.
  virtual std::string listen() = 0;
  virtual std::unique_ptr<channels::channel> accept(std::chrono::milliseconds timeout) = 0;
  // In the peer process, a fresh exec: verbs state does not survive fork.
  virtual std::unique_ptr<channels::channel> connect(const std::string& where) = 0;
};

std::unique_ptr<channel_kind> tcp_kind();
std::unique_ptr<channel_kind> rdma_kind();
// The kind under test: RIOMESH_CHANNEL=rdma or tcp (the default).
std::unique_ptr<channel_kind> kind_under_test();

// RIOMESH_CONTRACT_ADDR, or `fallback`.
std::string listen_address(const std::string& fallback);
// ADDRESS:PORT, as listen() says it.
struct where_to {
  std::string address;
  std::uint16_t port = 0;
};
where_to parse_where(const std::string& where);

}  // namespace riomesh::test
