// Clients that never become nodes, on rdma, beside liar.hpp's channels: an
// rsocket client (librdmacm's own rsocket API) that connects and then
// leaves or waits for the node to end the connection; and a bare rdma_cm
// client that asks for a connection and never takes its last step (no
// RTU), so the connection stays half open on the node's side.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

struct rdma_cm_id;
struct rdma_event_channel;

namespace riomesh::test {

// rsocket + rconnect to host:port; the rsocket descriptor, or -1.
int rsocket_dial(const std::string& host, std::uint16_t port);
// The way event-driven programs connect: O_NONBLOCK first, so rconnect
// only starts (EINPROGRESS) and rpoll drives the rest. Returns the
// descriptor mid-connect, or -1 if rconnect failed outright.
int rsocket_start_dial(const std::string& host, std::uint16_t port);
// rsocket_start_dial, then rpoll until connected: the descriptor, or -1 if
// the connect failed or took longer than `limit`.
int rsocket_dial_nonblocking(const std::string& host, std::uint16_t port,
                             std::chrono::milliseconds limit);
void rsocket_close(int fd);
// Sends all of `bytes`; false if the rsocket would not take them.
bool rsocket_send_all(int fd, const std::vector<unsigned char>& bytes);
// Reads (and drops) until the peer ends the connection in band, which is
// all a v44 rsocket that connected blocking hears of; a non-blocking one
// waits in rpoll between reads. The byte count, or -1 on a read error.
long rsocket_read_to_end(int fd);
// Runs `step` (rsocket calls, which take no timeout) on a thread of its
// own: false if it has not returned within `limit`, and the thread is left
// behind, stuck.
bool returns_within(std::chrono::milliseconds limit, std::function<void()> step);

class half_open_client {
 public:
  // Resolves host:port and sends a connection request carrying valid
  // rsocket connection data, for a queue pair it does not have; throws
  // std::runtime_error saying which step failed.
  half_open_client(const std::string& host, std::uint16_t port);
  ~half_open_client();
  half_open_client(const half_open_client&) = delete;
  half_open_client& operator=(const half_open_client&) = delete;

  // The connection manager events seen so far ("RDMA_CM_EVENT_..."),
  // taken without waiting.
  const std::vector<std::string>& events();

 private:
  void release();

  rdma_event_channel* ch_ = nullptr;
  rdma_cm_id* id_ = nullptr;
  std::vector<std::string> events_;
};

}  // namespace riomesh::test
