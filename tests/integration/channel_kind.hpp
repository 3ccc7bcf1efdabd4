// How the contract suite gets a connected pair of channels across two
// processes, for each kind of channel. The suite itself knows only channel.
#pragma once

#include <riomesh/channels/channel.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace riomesh::test {

class channel_kind {
 public:
  virtual ~channel_kind() = default;
  virtual const char* name() const = 0;
  // In the test process: listen, and say where (passed to the peer process).
  virtual std::string listen() = 0;
  virtual std::unique_ptr<channels::channel> accept(std::chrono::milliseconds timeout) = 0;
  // In the peer process, a fresh exec: verbs state does not survive fork.
  virtual std::unique_ptr<channels::channel> connect(const std::string& where) = 0;
};

std::unique_ptr<channel_kind> tcp_kind();
std::unique_ptr<channel_kind> rdma_kind();
// The kind under test: RIOMESH_CHANNEL=rdma or tcp (the default).
std::unique_ptr<channel_kind> kind_under_test();

}  // namespace riomesh::test
