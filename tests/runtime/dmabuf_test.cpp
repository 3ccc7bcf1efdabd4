// Receive arenas in device memory (memory.provider: dmabuf): buffers from a
// DRM device (vgem in the VM), exported as dma-buf. Over tcp the bytes are
// read straight into the device memory's mapping; on rdma over rxe, which
// cannot register dma-buf, they are placed in a host staging arena and
// copied over before delivery, and the copy is counted. Only the VM has a
// DRM device; there the test must run.
#include "cluster.hpp"

#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace riomesh;
using namespace riomesh::test;

namespace {

// The checksum of `b` if it is an arena buffer whose descriptor, mapped as
// another process (or a device driver) would, shows its bytes; else 0.
std::uint64_t checked_in_place(const buffer& b) {
  auto d = b.descriptor();
  if (b.where() != buffer::origin::arena || !d)
    return 0;
  // From offset 0: vgem (Debian's 6.1) maps page 0 for any mmap offset of
  // its dma-bufs.
  auto span = d->second + b.size();
  void* view = mmap(nullptr, span, PROT_READ, MAP_SHARED, d->first, 0);
  if (view == MAP_FAILED)
    return 0;
  bool same = std::memcmp(static_cast<unsigned char*>(view) + d->second, b.data(), b.size()) == 0;
  munmap(view, span);
  return same ? checksum(b) : 0;
}

// What the process writes to stderr (where the node logs) while `f` runs.
template <class F>
std::string stderr_of(F&& f) {
  std::fflush(stderr);
  int saved = ::dup(2);
  FILE* into = std::tmpfile();
  REQUIRE(into);
  ::dup2(::fileno(into), 2);
  f();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::string text;
  std::rewind(into);
  for (int c; (c = std::fgetc(into)) != EOF;)
    text += char(c);
  std::fclose(into);
  return text;
}

}  // namespace

TEST_CASE(
    "dma-buf: receive arenas in device memory (vgem): read straight in over tcp, staged in "
    "host memory and copied (counted) on rdma, where rxe cannot register dma-buf") {
  if (::access("/dev/dri/card0", F_OK) != 0) {
    REQUIRE_MESSAGE(std::getenv("RIOMESH_RDMA_ADDR") == nullptr,
                    "no /dev/dri/card0 in the VM: vgem did not load");
    MESSAGE("no DRM device on this machine: the dma-buf case runs in the VM (ctest -L vm)");
    return;
  }
  bool rdma = fabric_under_test() == "rdma";
  auto sb = node_settings("node-b");
  sb.memory.provider = config::memory_provider::dmabuf;
  sb.channel.arena = 16 << 20;
  sb.channel.eager_threshold = 0;  // the echoes too: every buffer placed, none inline
  sb.channel.rendezvous = 0;       // placed in the device's arena, none lent
  std::unique_ptr<runtime> b;
  // A device that cannot register dma-buf is named when the node starts,
  // before any connection pays for it.
  auto said = stderr_of([&] { b = start_node(sb); });
  if (rdma)
    CHECK_MESSAGE(said.find("cannot register dma-buf: Operation not supported: receive arenas are "
                            "staged in host memory") != std::string::npos,
                  said);
  else
    CHECK_MESSAGE(said.find("staged") == std::string::npos, said);
  auto sa = node_settings("node-a", {{"node-b", b->port()}});
  sa.channel.eager_threshold = 0;  // every buffer placed, none inline
  sa.channel.rendezvous = 0;
  auto a = start_node(sa);
  b->publish(spawn_fn(b->system(),
                      [](caf::event_based_actor*) -> caf::behavior {
                        return {[](sum_atom, const buffer& data) { return checked_in_place(data); },
                                [](echo_atom, const buffer& data) { return data; }};
                      }),
             "checker");
  auto to = a->remote_actor("node-b", "checker");
  REQUIRE(to);
  std::uint64_t total = 0;
  for (std::size_t size : {std::size_t{1}, std::size_t{4095}, std::size_t{4099},
                           std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{6} << 20}) {
    auto data = a->allocate(size);
    fill(data, size);
    CHECK_MESSAGE(sum_at(*a, *to, data) == checksum(data), size << " bytes");
    // Sent on from device memory: back to a, whole.
    caf::scoped_actor self{a->system()};
    self->request(*to, std::chrono::seconds(10), echo_atom::value, data)
        .receive([&](const buffer& back) { CHECK(matches(back, size)); },
                 [&](const caf::error& e) { FAIL(a->system().render(e)); });
    total += 2 * size;  // there, and there again for the echo
  }
  auto s = b->stats();
  REQUIRE(s.peers.size() == 1);
  const auto& in = s.peers[0].second;
  MESSAGE("on " << fabric_under_test() << ": " << in.bytes_placed_in << " bytes placed, "
                << in.staged_bytes_in << " staged");
  CHECK(in.bytes_placed_in == total);
  CHECK(in.staged_bytes_in == (rdma ? total : 0));
  CHECK(in.staged_bytes_out == (rdma ? total / 2 : 0));  // the echoes, from device memory
  CHECK(s.node.payload_copied_in == 0);
}

TEST_CASE("dma-buf: a node whose DRM device makes no buffers refuses to start, naming the key") {
  auto s = node_settings("node-a");
  s.memory.provider = config::memory_provider::dmabuf;
  s.memory.dmabuf_device = "/dev/dri/card99";
  try {
    start_node(s);
    FAIL("started with device memory from a device that does not exist");
  } catch (const std::runtime_error& e) {
    std::string why = e.what();
    INFO(why);
    CHECK(why.find("/dev/dri/card99") != std::string::npos);
    CHECK(why.find("memory.provider: dmabuf") != std::string::npos);
  }
}
