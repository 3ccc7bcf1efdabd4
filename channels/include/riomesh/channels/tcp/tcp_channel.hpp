// The tcp channel: tcp_protocol on a non-blocking socket. A thin shell: it
// moves bytes between the socket and where the protocol says they belong.
#pragma once

#include <riomesh/channels/channel.hpp>
#include <riomesh/channels/tcp/tcp_protocol.hpp>
#include <riomesh/channels/tcp/tcp_socket.hpp>
#include <riomesh/channels/tcp/tls_stream.hpp>

#include <memory>

namespace riomesh::channels::tcp {

class tcp_channel final : public channel, public stream_guard {
 public:
  // Takes ownership of a connected socket.
  tcp_channel(int fd, std::string peer, const tcp_params& p);
  ~tcp_channel() override;
  tcp_channel(const tcp_channel&) = delete;
  tcp_channel& operator=(const tcp_channel&) = delete;

  // Connects; empty with `error` set on failure.
  static std::unique_ptr<tcp_channel> connect(const config::endpoint& to, const tcp_params& p,
                                              const socket_options& opt, std::string& error);

  io_result send(const void* data, std::size_t length) override;
  io_result recv(void* out, std::size_t length) override;
  std::pair<const unsigned char*, std::size_t> peek() override { return proto_.peek(); }
  void consume(std::size_t n) override;
  // Write access only: the peer reads nothing one-sided over tcp.
  map_result map(void* base, std::size_t length, std::optional<std::uint64_t> offset,
                 std::uint8_t access = map_access::write) override;
  status unmap(std::uint64_t offset) override;
  io_result iowrite(const void* source, std::size_t length, std::uint64_t offset,
                    std::uint64_t token) override;
  io_result iowrite_pieces(const piece* pieces, std::size_t count, std::uint64_t offset,
                           std::uint64_t token) override;
  status shutdown(shutdown_how how) override;
  // Corked, sends up to half a coalesced frame are copied and joined,
  // iowrites queue by reference: one sendmsg when uncorked. Reading
  // waits for progress() too, not for each consume().
  void cork(bool on) override;
  bool drained() const override { return !proto_.wants_write() && (!tls_ || tls_->drained()); }
  // A KEEPALIVE frame, if nothing else is waiting to go.
  void keepalive();
  // Keepalive and peer_timeout.
  void tick(std::chrono::steady_clock::time_point now) override;
  void keep_alive_within(std::chrono::nanoseconds silence) override {
    proto_.keep_alive_within(silence);
  }

  int wait_fd() const override { return fd_; }
  bool wants_write() const override { return !drained(); }
  void progress() override;
  // Records read ahead wait inside TLS, where the socket cannot signal
  // them: look again before sleeping, if there is room to take them.
  bool arm() override {
    return tls_ && proto_.input_secured() && tls_->pending() && proto_.takes_bytes();
  }
  bool take_events(std::vector<event>& out) override { return proto_.take_events(out); }
  bool has_events() const override { return proto_.has_events(); }
  stream_guard* guard() override { return this; }
  void authorize() override;
  std::string held_frame() const override { return proto_.held_frame(); }
  // Queues our SECURE; from it on both directions go in TLS records
  // (tls_stream.hpp).
  bool secure(ssl_st* tls, std::string& error) override;
  bool encrypted() const override { return tls_ != nullptr; }

  bool closed() const override { return proto_.closed(); }
  bool failed() const override { return proto_.failed(); }
  const std::string& reason() const override { return proto_.reason(); }
  const std::string& peer() const override { return proto_.peer(); }
  const tcp_protocol& protocol() const { return proto_; }
  // sendmsg calls that wrote something, for tests and statistics.
  std::uint64_t writes() const { return writes_; }

 private:
  void flush();
  void flush_sealed();
  void read_some();
  void count_read(std::size_t n);
  static constexpr std::size_t quick_ack_from = 64 * 1024;
  std::size_t read_since_ack_ = 0;
  io_result send_corked(const unsigned char* data, std::size_t length);
  void release_socket();

  int fd_;
  tcp_protocol proto_;
  std::unique_ptr<tls_stream> tls_;
  bool corked_ = false;
  // read_some() stopped for want of room (the ring full): reading what the
  // application frees is worth a system call; after a short read it is not.
  bool wants_room_ = false;
  std::uint64_t writes_ = 0;
};

}  // namespace riomesh::channels::tcp
