// The calls the rsocket interop cases make, implemented twice: on
// librdmacm's rsocket API (rsocket_api.cpp) and on a riomesh raw_socket
// (riomesh_api.cpp). The cases (cases.cpp) are written once against this,
// so rsocket against rsocket checks the cases themselves, and either mix
// checks riomesh against the real thing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace riomesh::interop {

enum class write_result { ok, no_mapping, failed };

class peer_api {
 public:
  virtual ~peer_api() = default;
  virtual const char* name() const = 0;
  // Blocking; `slots` iomap slots are offered to the peer. `ready_file`, if
  // given, is created once listening.
  virtual bool accept(const std::string& addr, const std::string& port, int slots,
                      const std::string& ready_file) = 0;
  virtual bool connect(const std::string& addr, const std::string& port, int slots) = 0;

  virtual bool send_all(const void* data, std::size_t n) = 0;
  // Up to n bytes: > 0 bytes, 0 at end of stream, -1 on error.
  virtual long recv_some(void* out, std::size_t n) = 0;
  // What one send call took: > 0 bytes, -1 on error.
  virtual long send_some(const void* data, std::size_t n) = 0;

  virtual bool riomap(void* base, std::size_t n, std::uint64_t offset) = 0;
  virtual bool riounmap(void* base, std::size_t n, std::uint64_t offset) = 0;
  virtual write_result riowrite(const void* data, std::size_t n, std::uint64_t offset) = 0;

  // Waits up to `timeout_ms` for the socket to be readable as poll(2)
  // means it (bytes, or end of stream, or an error): 1, 0 if not, -1 error.
  virtual int poll_in(int timeout_ms) = 0;
  virtual bool shutdown_write() = 0;
  virtual void close() = 0;
  virtual std::string error() const = 0;
};

std::unique_ptr<peer_api> make_peer_api();

}  // namespace riomesh::interop
