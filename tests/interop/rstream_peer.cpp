// rstream_peer: the traffic pattern of librdmacm's rstream (custom mode:
// -S size -C count -I iterations, optionally -v), spoken by a riomesh raw
// rdma channel, so that rstream itself can be the peer on the other end.
//
//   rstream_peer -s ADDR [-p PORT] -S SIZE -C COUNT -I ITER [-v]   (client)
//   rstream_peer -b ADDR [-p PORT] -S SIZE -C COUNT -I ITER [-v] [-r FILE]   (server;
//                creates FILE once it listens, so a script knows when to start rstream)
//
// With -v every byte carries a per-process running counter (mod 256), the
// 16-byte sync messages included, and the receiver checks its own counter,
// as rstream -T v does. Exit code 0 when all went through.
#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <drive.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace riomesh;
using namespace riomesh::channels;
using namespace riomesh::channels::verbs;
using namespace std::chrono_literals;

namespace {

unsigned char sent_counter = 0, recv_counter = 0;
bool verify = false;

bool send_n(channel& ch, std::vector<unsigned char>& buf, std::size_t n) {
  if (verify)
    for (std::size_t i = 0; i < n; ++i)
      buf[i] = sent_counter++;
  return test::send_all(ch, buf.data(), n, 60s);
}

bool recv_n(channel& ch, std::vector<unsigned char>& buf, std::size_t n) {
  if (!test::recv_all(ch, buf.data(), n, 60s))
    return false;
  if (verify)
    for (std::size_t i = 0; i < n; ++i)
      if (buf[i] != recv_counter++) {
        std::fprintf(stderr, "rstream_peer: byte %zu of a %zu-byte message differs\n", i, n);
        return false;
      }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string server, bind_addr, port = "7471", ready_file;
  std::size_t size = 1000, count = 1000, iterations = 1;
  for (int opt; (opt = getopt(argc, argv, "s:b:p:S:C:I:vr:")) != -1;) {
    switch (opt) {
      case 's': server = optarg; break;
      case 'b': bind_addr = optarg; break;
      case 'p': port = optarg; break;
      case 'S': size = std::strtoull(optarg, nullptr, 0); break;
      case 'C': count = std::strtoull(optarg, nullptr, 0); break;
      case 'I': iterations = std::strtoull(optarg, nullptr, 0); break;
      case 'v': verify = true; break;
      case 'r': ready_file = optarg; break;
      default:
        std::fprintf(stderr, "usage: rstream_peer -s ADDR|-b ADDR [-p PORT] -S SIZE -C COUNT -I ITER [-v]\n");
        return 2;
    }
  }
  bool is_client = !server.empty();
  config::endpoint at{is_client ? server : bind_addr, static_cast<std::uint16_t>(std::stoi(port))};
  rdma_params params;
  params.recv_ring = params.send_ring = 1u << 20;  // as rstream's default -B
  std::string error;
  std::unique_ptr<rdma_channel> ch;
  if (is_client) {
    // The rsocket server may not be listening yet: retry for a while.
    for (int i = 0; i < 100 && !ch; ++i) {
      ch = rdma_channel::connect(at, params, error);
      if (!ch)
        std::this_thread::sleep_for(100ms);
    }
  } else {
    auto listener = rdma_listener::listen(at, params, error);
    if (listener && !ready_file.empty())
      std::fclose(std::fopen(ready_file.c_str(), "w"));
    if (listener)
      ch = listener->accept(30s, error);
  }
  if (!ch) {
    std::fprintf(stderr, "rstream_peer: %s\n", error.c_str());
    return 1;
  }
  std::vector<unsigned char> buf(std::max<std::size_t>(size, 16));
  bool ok = is_client ? send_n(*ch, buf, 16) && recv_n(*ch, buf, 16)
                      : recv_n(*ch, buf, 16) && send_n(*ch, buf, 16);
  for (std::size_t it = 0; ok && it < iterations; ++it) {
    for (std::size_t c = 0; ok && c < count; ++c)
      ok = is_client ? send_n(*ch, buf, size) : recv_n(*ch, buf, size);
    for (std::size_t c = 0; ok && c < count; ++c)
      ok = is_client ? recv_n(*ch, buf, size) : send_n(*ch, buf, size);
  }
  if (!ok) {
    std::fprintf(stderr, "rstream_peer: failed: %s\n",
                 ch->closed() ? ch->reason().c_str() : "timed out");
    return 1;
  }
  ch->shutdown(shutdown_how::both);
  test::drive(*ch, [&] { return ch->closed(); }, 5s);
  std::printf("rstream_peer: %s, %zu x %zu bytes x %zu iterations each way%s\n",
              is_client ? "client" : "server", count, size, iterations,
              verify ? ", every byte verified" : "");
  return 0;
}
