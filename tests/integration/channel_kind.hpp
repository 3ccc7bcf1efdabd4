// How the contract suite gets a connected pair of channels across two
// processes, for each kind of channel. The suite itself knows only channel.
#pragma once

#include <riomesh/channels/channel.hpp>

#include <chrono>
#include <memory>

namespace riomesh::test {

class channel_kind {
 public:
  virtual ~channel_kind() = default;
  virtual const char* name() const = 0;
  // In the parent, before fork.
  virtual void listen() = 0;
  virtual std::unique_ptr<channels::channel> accept(std::chrono::milliseconds timeout) = 0;
  // In the child, after fork.
  virtual std::unique_ptr<channels::channel> connect() = 0;
};

std::unique_ptr<channel_kind> tcp_kind();

}  // namespace riomesh::test
