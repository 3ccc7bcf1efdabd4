// A tcp channel's bytes under TLS, once both sides have secured the stream
// (channel::secure) with the TLS 1.3 session that authenticated the peer.
// Inbound, records are read from the socket and decrypted straight into
// the place the protocol asks its bytes for (a placed payload: its map);
// OpenSSL's record layer decrypts in its own buffer and copies them there
// once. Outbound, the protocol's bytes are sealed into records, small
// frames joined into one record, gathered in a bounded buffer the shell
// writes out.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

struct ssl_st;

namespace riomesh::channels::tcp {

class tls_stream {
 public:
  // Takes `ssl` (its handshake done, nothing of it left unread) and reads
  // its records from `fd`; null with `error` set, and `ssl` not taken.
  static std::unique_ptr<tls_stream> over(ssl_st* ssl, int fd, std::string& error);
  ~tls_stream();
  tls_stream(const tls_stream&) = delete;
  tls_stream& operator=(const tls_stream&) = delete;

  enum class outcome { ok, would_block, eof, failed };
  struct read_result {
    std::size_t bytes = 0;
    outcome st = outcome::ok;
  };
  // Decrypts into [at, at + length); `error` says why if it failed.
  read_result read(void* at, std::size_t length, std::string& error);
  // Bytes wait inside (decrypted, or read and not yet decrypted): no
  // socket readiness will say so.
  bool pending() const;

  // Seals as many of the iovecs' bytes as fit below the bound; how many.
  std::size_t seal(const iovec* iov, std::size_t count, std::string& error);
  bool room() const { return sealed_.size() - sent_ < max_sealed; }
  // Writes sealed records to the socket; false with `error` on a socket error.
  bool send_some(int fd, std::string& error);
  bool drained() const { return sent_ == sealed_.size() && batch_.empty(); }

  // OpenSSL's sink for sealed records: to the socket at once when nothing
  // waits before them and it takes them, the rest kept (one copy less).
  void append(const char* data, std::size_t length);

 private:
  tls_stream(ssl_st* ssl, int fd) : ssl_(ssl), fd_(fd) {}
  bool write_record(const unsigned char* p, std::size_t n, std::string& error);
  bool flush_batch(std::string& error);

  static constexpr std::size_t max_sealed = 512 * 1024;
  static constexpr std::size_t max_record = 16 * 1024;
  static constexpr std::size_t small_piece = 2 * 1024;

  ssl_st* ssl_;
  int fd_;
  std::string send_error_;  // a socket error met while appending
  std::vector<unsigned char> sealed_;
  std::size_t sent_ = 0;
  std::vector<unsigned char> batch_;  // small pieces joined into one record
};

}  // namespace riomesh::channels::tcp
