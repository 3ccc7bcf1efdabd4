// stream_peer: the traffic patterns of librdmacm's rstream and riostream
// (custom mode: -S size -C count -I iterations), spoken by a riomesh
// raw_socket over verbs, so that rstream or riostream itself can be the
// peer on the other end.
//
//   stream_peer [-i] -s ADDR [-p PORT] -S SIZE -C COUNT -I ITER [-v] [-n]      (client)
//   stream_peer [-i] -b ADDR [-p PORT] -S SIZE -C COUNT -I ITER [-v] [-n] [-r FILE] (server;
//               creates FILE once it listens, so a script knows when to start its peer)
//
// -i: riostream's pattern (riomap + riowrite, completion by a marker byte)
//     instead of rstream's (send / recv).
// -v: the tools' verification: a per-process running counter (mod 256) in
//     every stream byte, the 16-byte sync included (rstream), or in every
//     byte but the marker of each burst's last transfer (riostream).
// -n: non-blocking calls driven by poll(), as rstream -T n does.
// Exit code 0 when everything went through and checked out.
#include <riomesh/channels/raw_socket.hpp>

#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace riomesh;
using namespace riomesh::channels;
using namespace std::chrono_literals;

namespace {

struct options {
  std::string server, bind_addr, port = "7471", ready_file;
  std::size_t size = 1000, count = 1000, iterations = 1;
  bool verify = false, nonblocking = false, iomap = false;
};

unsigned char sent_counter = 0, recv_counter = 0;

bool send_n(raw_socket& s, const options& o, std::vector<unsigned char>& buf, std::size_t n) {
  if (o.verify)
    for (std::size_t i = 0; i < n; ++i)
      buf[i] = sent_counter++;
  for (std::size_t done = 0; done < n;) {
    auto r = s.send(buf.data() + done, n - done);
    done += r.bytes;
    if (r.st != status::ok && r.st != status::would_block)
      return false;
    if (done < n && (s.poll(poll_out, 60s) & (poll_out | poll_closed)) != poll_out)
      return false;
  }
  return true;
}

bool recv_n(raw_socket& s, const options& o, std::vector<unsigned char>& buf, std::size_t n) {
  for (std::size_t done = 0; done < n;) {
    auto r = s.recv(buf.data() + done, n - done);
    done += r.bytes;
    if (r.st != status::ok && r.st != status::would_block)
      return false;
    if (done < n && r.bytes == 0 && !(s.poll(poll_in, 60s) & poll_in))
      return false;
  }
  if (o.verify)
    for (std::size_t i = 0; i < n; ++i)
      if (buf[i] != recv_counter++) {
        std::fprintf(stderr, "stream_peer: byte %zu of a %zu-byte message differs\n", i, n);
        return false;
      }
  return true;
}

// 16 bytes each way, client first. rstream counts them in its -v check,
// riostream neither fills nor checks them.
bool sync(raw_socket& s, options o, bool client) {
  o.verify = o.verify && !o.iomap;
  std::vector<unsigned char> b(16);
  return client ? send_n(s, o, b, 16) && recv_n(s, o, b, 16)
                : recv_n(s, o, b, 16) && send_n(s, o, b, 16);
}

bool rstream_pattern(raw_socket& s, const options& o, bool client) {
  std::vector<unsigned char> buf(o.size);
  bool ok = sync(s, o, client);
  for (std::size_t it = 0; ok && it < o.iterations; ++it) {
    for (std::size_t c = 0; ok && c < o.count; ++c)
      ok = client ? send_n(s, o, buf, o.size) : recv_n(s, o, buf, o.size);
    for (std::size_t c = 0; ok && c < o.count; ++c)
      ok = client ? recv_n(s, o, buf, o.size) : send_n(s, o, buf, o.size);
  }
  return ok;
}

// Waits until the last byte of our mapped buffer reads `marker`; the peer
// writes it last. Progress keeps credits and receives flowing meanwhile.
bool await_marker(raw_socket& s, const volatile unsigned char& last, unsigned char marker) {
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (last != marker) {
    if (s.closed() || std::chrono::steady_clock::now() > deadline)
      return false;
    s.poll(poll_in, 0ms);
  }
  return true;
}

bool riowrite_all(raw_socket& s, const unsigned char* from, std::size_t n) {
  for (std::size_t done = 0; done < n;) {
    auto r = s.riowrite(from + done, n - done, done);
    done += r.bytes;
    if (r.st == status::would_block && !s.blocking())
      s.poll(poll_out, 60s);
    else if (r.st != status::ok && r.st != status::would_block) {
      std::fprintf(stderr, "stream_peer: riowrite: %s\n", to_string(r.st));
      return false;
    }
  }
  return true;
}

bool riostream_pattern(raw_socket& s, const options& o, bool client) {
  // The last byte of each buffer is the marker. Until a burst's final
  // transfer it must not read as the next marker, on either side.
  std::vector<unsigned char> local(o.size), out(o.size);
  local.back() = out.back() = 0xff;
  auto m = s.riomap(local.data(), local.size(), 0);
  if (m.st != status::ok) {
    std::fprintf(stderr, "stream_peer: riomap: %s\n", to_string(m.st));
    return false;
  }
  bool ok = sync(s, o, client);
  unsigned char marker = 0;
  auto write_burst = [&] {
    for (std::size_t c = 0; ok && c + 1 < o.count; ++c)
      ok = riowrite_all(s, out.data(), o.size);
    out.back() = marker++;
    if (o.verify)  // riostream's check: a running counter over all but the marker
      for (std::size_t i = 0; i + 1 < o.size; ++i)
        out[i] = sent_counter++;
    ok = ok && riowrite_all(s, out.data(), o.size);
  };
  auto read_burst = [&] {
    unsigned char expect = marker++;
    ok = ok && await_marker(s, local.back(), expect);
    if (ok && o.verify)
      for (std::size_t i = 0; i + 1 < o.size; ++i)
        if (local[i] != recv_counter++) {
          std::fprintf(stderr, "stream_peer: placed byte %zu differs\n", i);
          ok = false;
          break;
        }
  };
  for (std::size_t it = 0; ok && it < o.iterations; ++it) {
    if (client) {
      write_burst();
      read_burst();
    } else {
      read_burst();
      write_burst();
    }
  }
  s.riounmap(0);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int opt; (opt = getopt(argc, argv, "s:b:p:S:C:I:vnir:")) != -1;) {
    switch (opt) {
      case 's':
        o.server = optarg;
        break;
      case 'b':
        o.bind_addr = optarg;
        break;
      case 'p':
        o.port = optarg;
        break;
      case 'S':
        o.size = std::strtoull(optarg, nullptr, 0);
        break;
      case 'C':
        o.count = std::strtoull(optarg, nullptr, 0);
        break;
      case 'I':
        o.iterations = std::strtoull(optarg, nullptr, 0);
        break;
      case 'v':
        o.verify = true;
        break;
      case 'n':
        o.nonblocking = true;
        break;
      case 'i':
        o.iomap = true;
        break;
      case 'r':
        o.ready_file = optarg;
        break;
      default:
        std::fprintf(stderr,
                     "usage: stream_peer [-i] -s ADDR|-b ADDR [-p PORT] -S SIZE -C COUNT -I ITER "
                     "[-v] [-n] [-r FILE]\n");
        return 2;
    }
  }
  bool client = !o.server.empty();
  config::endpoint at{client ? o.server : o.bind_addr,
                      static_cast<std::uint16_t>(std::stoi(o.port))};
  channel_options opt;
  opt.fabric = config::fabric_kind::verbs;
  opt.plain_rsocket = true;
  opt.settings.recv_buffer = opt.settings.send_buffer = 1u << 20;  // rstream's default -B
  opt.settings.iomap_size = o.iomap ? 1 : 0;                       // as riostream asks
  std::string error;
  std::unique_ptr<raw_socket> s;
  if (client) {
    // The rsocket server may not be listening yet: retry for a while.
    for (int i = 0; i < 100 && !s; ++i)
      if (!(s = raw_socket::connect(at, opt, error)))
        std::this_thread::sleep_for(100ms);
  } else if (auto l = listen(at, opt, error)) {
    if (!o.ready_file.empty())
      std::fclose(std::fopen(o.ready_file.c_str(), "w"));
    s = raw_socket::accept(*l, 30s, opt, error);
  }
  if (!s) {
    std::fprintf(stderr, "stream_peer: %s\n", error.c_str());
    return 1;
  }
  s->set_blocking(!o.nonblocking);
  s->set_timeout(60s);
  bool ok = o.iomap ? riostream_pattern(*s, o, client) : rstream_pattern(*s, o, client);
  if (!ok) {
    std::fprintf(stderr, "stream_peer: failed: %s\n",
                 s->closed() ? s->reason().c_str() : "timed out");
    return 1;
  }
  s->close();
  std::printf("stream_peer: %s, %s, %zu x %zu bytes x %zu iterations each way%s\n",
              o.iomap ? "riostream pattern" : "rstream pattern", client ? "client" : "server",
              o.count, o.size, o.iterations, o.verify ? ", every byte verified" : "");
  return 0;
}
