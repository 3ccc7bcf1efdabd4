// rdma_bench: riomesh's raw socket (raw_socket.hpp) between two processes,
// as rstream runs: one serves (-b), one connects (-s) and reports.
//
//   send      one-way stream: COUNT blocking sends of SIZE, then an ack
//   riowrite  zero-copy placement: COUNT iowrites of SIZE from registered
//             memory into the server's map, then a stream message (it
//             arrives after the writes) and an ack
//   lat       ping-pong of SIZE bytes; half the round trip, as ib_write_lat
//
// The client prints one line: "rdma_bench TEST SIZE: VALUE UNIT" (Gb/s as
// rstream and perftest count them, 10^9 bits; usec).
// Usage: rdma_bench -b ADDR [-p PORT]              serve until killed
//        rdma_bench -s ADDR [-p PORT] -T TEST -S SIZE -C COUNT [-f tcp] [-n]
//   -n  non-blocking calls, spinning (rstream's default); else blocking
#include <riomesh/channels/raw_socket.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace riomesh;
using namespace riomesh::channels;
using clock_type = std::chrono::steady_clock;

namespace {

enum class test : std::uint32_t { send = 1, riowrite = 2, lat = 3 };

struct request {
  test kind;
  std::uint32_t size;
  std::uint64_t count;
};

constexpr std::size_t map_window = 8u << 20;  // the server's map: writes cycle through it

[[noreturn]] void die(const std::string& what, const raw_socket* s = nullptr) {
  std::fprintf(stderr, "rdma_bench: %s%s%s\n", what.c_str(), s ? ": " : "",
               s ? s->reason().c_str() : "");
  std::exit(1);
}

// Blocking, or non-blocking and spinning on the calls (-n), as rstream by
// default does.
void send_all(raw_socket& s, const void* data, std::size_t n) {
  auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t done = 0; done < n;) {
    auto r = s.send(p + done, n - done);
    if (r.st != status::ok && r.st != status::would_block)
      die("send", &s);
    done += r.bytes;
  }
}

void recv_all(raw_socket& s, void* out, std::size_t n) {
  auto* p = static_cast<unsigned char*>(out);
  for (std::size_t got = 0; got < n;) {
    auto r = s.recv(p + got, n - got);
    if (r.st != status::ok && r.st != status::would_block)
      die("recv", &s);
    got += r.bytes;
  }
}

void serve_one(raw_socket& s) {
  request req{};
  recv_all(s, &req, sizeof req);
  std::vector<unsigned char> buf(std::max<std::size_t>(req.size, 1));
  unsigned char ack = 1;
  switch (req.kind) {
    case test::send:
      for (std::uint64_t i = 0; i < req.count; ++i)
        recv_all(s, buf.data(), req.size);
      send_all(s, &ack, 1);
      break;
    case test::riowrite: {
      std::vector<unsigned char> region(std::max<std::size_t>(map_window, req.size));
      auto m = s.riomap(region.data(), region.size(), 0);
      if (m.st != status::ok)
        die("riomap", &s);
      send_all(s, &m.offset, sizeof m.offset);  // carries the map's publication
      std::uint64_t end = 0;
      recv_all(s, &end, sizeof end);
      send_all(s, &ack, 1);
      s.riounmap(m.offset);
      break;
    }
    case test::lat:
      for (std::uint64_t i = 0; i < req.count; ++i) {
        recv_all(s, buf.data(), req.size);
        send_all(s, buf.data(), req.size);
      }
      break;
  }
  s.close();
}

double run_client(raw_socket& s, const request& req) {
  send_all(s, &req, sizeof req);
  std::vector<unsigned char> buf(std::max<std::size_t>(req.size, 1), 0x5a);
  unsigned char ack = 0;
  auto t0 = clock_type::now();
  switch (req.kind) {
    case test::send:
      for (std::uint64_t i = 0; i < req.count; ++i)
        send_all(s, buf.data(), req.size);
      recv_all(s, &ack, 1);
      break;
    case test::riowrite: {
      std::uint64_t base = 0;
      recv_all(s, &base, sizeof base);
      if (!s.register_memory(buf.data(), buf.size()))
        die("register_memory", &s);
      std::size_t slots = std::max<std::size_t>(map_window / req.size, 1);
      t0 = clock_type::now();
      for (std::uint64_t i = 0; i < req.count; ++i) {
        std::uint64_t at = base + (i % slots) * req.size;
        for (std::size_t done = 0; done < req.size;) {
          auto r = s.iowrite(buf.data() + done, req.size - done, at + done, i + 1);
          done += r.bytes;
          if (r.st == status::would_block)
            s.poll(poll_out,
                   s.blocking() ? std::nullopt : std::optional<std::chrono::milliseconds>{0});
          else if (r.st != status::ok)
            die("iowrite", &s);
        }
      }
      std::uint64_t end = req.count;
      send_all(s, &end, sizeof end);  // behind every write
      recv_all(s, &ack, 1);
      break;
    }
    case test::lat:
      for (std::uint64_t i = 0; i < req.count; ++i) {
        send_all(s, buf.data(), req.size);
        recv_all(s, buf.data(), req.size);
      }
      break;
  }
  double seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  s.close();
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  std::string server, bind_addr, port = "7474", kind = "send";
  bool spin = false;
  request req{test::send, 65536, 1000};
  channel_options opt;
  opt.fabric = config::fabric_kind::verbs;
  opt.timeout = std::chrono::seconds(20);
  for (int c; (c = getopt(argc, argv, "s:b:p:T:S:C:f:n")) != -1;) {
    switch (c) {
      case 's':
        server = optarg;
        break;
      case 'b':
        bind_addr = optarg;
        break;
      case 'p':
        port = optarg;
        break;
      case 'T':
        kind = optarg;
        break;
      case 'S':
        req.size = static_cast<std::uint32_t>(std::strtoul(optarg, nullptr, 0));
        break;
      case 'n':
        spin = true;
        break;
      case 'C':
        req.count = std::strtoull(optarg, nullptr, 0);
        break;
      case 'f':
        opt.fabric =
            std::string{optarg} == "tcp" ? config::fabric_kind::tcp : config::fabric_kind::verbs;
        break;
      default:
        return 2;
    }
  }
  req.kind = kind == "riowrite" ? test::riowrite : kind == "lat" ? test::lat : test::send;
  if (server.empty() == bind_addr.empty() || req.size == 0 ||
      (kind != "send" && kind != "riowrite" && kind != "lat")) {
    std::fprintf(stderr, "usage: %s -b ADDR | -s ADDR -T send|riowrite|lat -S SIZE -C COUNT\n",
                 argv[0]);
    return 2;
  }
  auto p = static_cast<std::uint16_t>(std::stoi(port));
  std::string error;
  if (!bind_addr.empty()) {
    auto l = listen({bind_addr, p}, opt, error);
    if (!l)
      die(error);
    for (;;) {
      auto s = raw_socket::accept(*l, std::chrono::hours(1), opt, error);
      if (!s)
        die(error);
      s->set_blocking(!spin);
      serve_one(*s);
    }
  }
  std::unique_ptr<raw_socket> s;
  for (int tries = 0; !s && tries < 50; ++tries) {  // the server may not listen yet
    s = raw_socket::connect({server, p}, opt, error);
    if (!s)
      usleep(100000);
  }
  if (!s)
    die(error);
  s->set_blocking(!spin);
  double seconds = run_client(*s, req);
  if (req.kind == test::lat)
    std::printf("rdma_bench lat %u: %.2f usec\n", req.size, seconds * 1e6 / req.count / 2);
  else
    std::printf("rdma_bench %s %u: %.3f Gb/s\n", kind.c_str(), req.size,
                static_cast<double>(req.size) * req.count * 8 / seconds / 1e9);
  return 0;
}
