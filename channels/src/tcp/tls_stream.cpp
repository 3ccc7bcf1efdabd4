#include <riomesh/channels/tcp/tls_stream.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace riomesh::channels::tcp {
namespace {

int sink_write(BIO* b, const char* data, int length) {
  static_cast<tls_stream*>(BIO_get_data(b))->append(data, static_cast<std::size_t>(length));
  return length;
}

long sink_ctrl(BIO*, int cmd, long, void*) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

int sink_create(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

// Where sealed records go: appended to the stream's buffer, never refused
// (the stream bounds what it seals instead).
BIO_METHOD* sink_method() {
  static BIO_METHOD* m = [] {
    BIO_METHOD* x = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "riomesh records");
    BIO_meth_set_write(x, sink_write);
    BIO_meth_set_ctrl(x, sink_ctrl);
    BIO_meth_set_create(x, sink_create);
    return x;
  }();
  return m;
}

std::string tls_error(const char* what) {
  std::string out = what;
  int reason = 0;
  while (auto e = ERR_get_error()) {
    if (!reason)
      reason = ERR_GET_REASON(e);
    const char* text = ERR_reason_error_string(e);
    out += std::string(out == what ? ": " : "; ") + (text ? text : "unknown OpenSSL error");
  }
  if (reason == SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC)
    out += " (a record that does not decrypt: changed on the way, or not from the peer)";
  return out;
}

}  // namespace

std::unique_ptr<tls_stream> tls_stream::over(ssl_st* ssl, int fd, std::string& error) {
  if (!ssl || !SSL_is_init_finished(ssl)) {
    error = "no finished TLS session to encrypt with";
    return nullptr;
  }
  std::unique_ptr<tls_stream> s(new tls_stream(ssl, fd));
  BIO* in = BIO_new_socket(fd, BIO_NOCLOSE);
  BIO* out = BIO_new(sink_method());
  if (!in || !out) {
    BIO_free(in);
    BIO_free(out);
    s->ssl_ = nullptr;
    error = tls_error("cannot make the TLS stream's BIOs");
    return nullptr;
  }
  BIO_set_data(out, s.get());
  // The handshake's memory BIOs are empty: every record of it was read whole.
  SSL_set0_rbio(ssl, in);
  SSL_set0_wbio(ssl, out);
  SSL_set_read_ahead(ssl, 1);  // as many records per read as the socket has
  SSL_clear_mode(ssl, SSL_MODE_RELEASE_BUFFERS);
  // The protocol ends the stream with its own SHUTDOWN frame.
  SSL_set_options(ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
  return s;
}

tls_stream::~tls_stream() {
  if (ssl_)
    SSL_free(ssl_);
}

void tls_stream::append(const char* data, std::size_t length) {
  if (sent_ == sealed_.size()) {
    sealed_.clear();
    sent_ = 0;
    while (length > 0 && send_error_.empty()) {
      ssize_t n = ::send(fd_, data, length, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR)
          continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
          send_error_ = std::string{"send failed: "} + std::strerror(errno);
        break;
      }
      data += n;
      length -= static_cast<std::size_t>(n);
    }
  }
  sealed_.insert(sealed_.end(), data, data + length);
}

tls_stream::read_result tls_stream::read(void* at, std::size_t length, std::string& error) {
  ERR_clear_error();
  int n = SSL_read(ssl_, at, static_cast<int>(std::min<std::size_t>(length, 1u << 30)));
  if (n > 0)
    return {static_cast<std::size_t>(n), outcome::ok};
  switch (SSL_get_error(ssl_, n)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      return {0, outcome::would_block};
    case SSL_ERROR_ZERO_RETURN:
      return {0, outcome::eof};
    case SSL_ERROR_SYSCALL:
      if (errno == 0)
        return {0, outcome::eof};
      error = std::string{"receive failed: "} + std::strerror(errno);
      return {0, outcome::failed};
    default:
      error = tls_error("TLS");
      return {0, outcome::failed};
  }
}

bool tls_stream::pending() const {
  return SSL_has_pending(ssl_) == 1;
}

bool tls_stream::write_record(const unsigned char* p, std::size_t n, std::string& error) {
  ERR_clear_error();
  // The sink never refuses: SSL_write seals all of it, one record per 16 KiB.
  if (SSL_write(ssl_, p, static_cast<int>(n)) <= 0) {
    error = tls_error("TLS");
    return false;
  }
  return true;
}

bool tls_stream::flush_batch(std::string& error) {
  if (batch_.empty())
    return true;
  bool ok = write_record(batch_.data(), batch_.size(), error);
  batch_.clear();
  return ok;
}

std::size_t tls_stream::seal(const iovec* iov, std::size_t count, std::string& error) {
  std::size_t took = 0;
  for (std::size_t i = 0; i < count && room(); ++i) {
    auto* p = static_cast<const unsigned char*>(iov[i].iov_base);
    std::size_t n = iov[i].iov_len;
    if (n < small_piece) {
      if (batch_.size() + n > max_record && !flush_batch(error))
        return took;
      batch_.insert(batch_.end(), p, p + n);
    } else {
      if (!flush_batch(error) || !write_record(p, n, error))
        return took;
    }
    took += n;
  }
  flush_batch(error);
  return took;
}

bool tls_stream::send_some(int fd, std::string& error) {
  if (!send_error_.empty()) {
    error = send_error_;
    return false;
  }
  while (sent_ < sealed_.size()) {
    ssize_t n =
        ::send(fd, sealed_.data() + sent_, sealed_.size() - sent_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return true;
      error = std::string{"send failed: "} + std::strerror(errno);
      return false;
    }
    sent_ += static_cast<std::size_t>(n);
  }
  sealed_.clear();
  sent_ = 0;
  return true;
}

}  // namespace riomesh::channels::tcp
