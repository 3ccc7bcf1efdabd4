#include "config_test_util.hpp"

#include <riomesh/config/print.hpp>

using namespace riomesh;
using namespace std::chrono_literals;

TEST_CASE("a minimal file gets the rsockets defaults") {
  auto s = config::load_string(test::minimal, "node.yaml");
  CHECK(s.node.name == "n1");
  CHECK(s.node.listen == config::endpoint{"127.0.0.1", 7471});
  CHECK(s.node.fabric == config::fabric_kind::automatic);
  CHECK(s.channel.sq_size == 384);
  CHECK(s.channel.rq_size == 384);
  CHECK(s.channel.inline_size == 64);
  CHECK(s.channel.send_buffer == 128 * 1024);
  CHECK(s.channel.recv_buffer == 128 * 1024);
  CHECK(s.channel.polling_time == 50us);
  CHECK(s.channel.max_polling_time == 0ns);
  CHECK(s.runtime.policy == config::scheduler_policy::sharing);
  CHECK(s.runtime.io_handler_limit == 1ms);
  CHECK(s.logging.level == config::log_level::info);
  CHECK(s.cluster.peers.empty());
  CHECK_FALSE(s.cluster.insecure);
}

TEST_CASE("every key is read, with units") {
  auto s = config::load_string(R"(
node:
  name: broker
  listen: "[::1]:0"
  fabric: tcp
  device: rxe0
cluster:
  peers:
    - {name: a, address: "10.0.0.2:7471"}
    - name: b
      address: host-b.example:7000
  insecure: true
channel:
  sq_size: 16
  rq_size: 65534
  inline: 0
  send_buffer: 4KiB
  recv_buffer: 1MiB
  iomap_size: 512
  read_depth: 0
  polling_time: 0
  max_polling_time: 250us
  eager_threshold: 64KiB
  arena: 2GiB
  max_pending: 7
  keepalive: 250ms
  peer_timeout: 2s
runtime:
  threads: 3
  policy: stealing
memory:
  provider: dmabuf
  dmabuf_device: /dev/dri/card1
logging:
  level: debug
)",
                               "node.yaml");
  CHECK(s.memory.provider == config::memory_provider::dmabuf);
  CHECK(s.memory.dmabuf_device == "/dev/dri/card1");
  CHECK(s.node.listen == config::endpoint{"::1", 0});
  CHECK(s.node.fabric == config::fabric_kind::tcp);
  CHECK(s.node.device == "rxe0");
  REQUIRE(s.cluster.peers.size() == 2);
  CHECK(s.cluster.peers[0].name == "a");
  CHECK(s.cluster.peers[1].address == config::endpoint{"host-b.example", 7000});
  CHECK(s.cluster.insecure);
  CHECK(s.channel.sq_size == 16);
  CHECK(s.channel.rq_size == 65534);
  CHECK(s.channel.inline_size == 0);
  CHECK(s.channel.send_buffer == 4096);
  CHECK(s.channel.recv_buffer == 1 << 20);
  CHECK(s.channel.iomap_size == 512);
  CHECK(s.channel.read_depth == 0);
  CHECK(s.channel.polling_time == 0ns);
  CHECK(s.channel.max_polling_time == 250us);
  CHECK(s.channel.eager_threshold == 65536);
  CHECK(s.channel.arena == 2ull << 30);
  CHECK(s.channel.max_pending == 7);
  CHECK(s.channel.keepalive == 250ms);
  CHECK(s.channel.peer_timeout == 2s);
  CHECK(s.runtime.threads == 3);
  CHECK(s.runtime.policy == config::scheduler_policy::stealing);
  CHECK(s.logging.level == config::log_level::debug);
}

TEST_CASE("the secret is read relative to the config file's folder") {
  test::temp_file("cluster.secret", "0123456789abcdef0123\n");
  auto s = config::load_string(test::minimal + "cluster:\n  secret_file: cluster.secret\n",
                               "node.yaml", RIOMESH_BINARY_DIR);
  CHECK(s.cluster.secret == "0123456789abcdef0123");
  CHECK(s.cluster.secret_file == std::string{RIOMESH_BINARY_DIR} + "/cluster.secret");
}

TEST_CASE("a secret permits a non-loopback listen address") {
  auto path = test::temp_file("cluster2.secret", "abcdefghijklmnopq");
  auto s = config::load_string(
      "node:\n  name: n\n  listen: 0.0.0.0:1\ncluster:\n  secret_file: " + path + "\n",
      "node.yaml");
  CHECK(s.node.listen.host == "0.0.0.0");
}

TEST_CASE("printed settings load back to the same settings") {
  auto original = config::load_string(test::minimal +
                                          "cluster:\n  peers: [{name: p, address: '[::1]:9'}]\n"
                                          "channel: {arena: 3MiB, keepalive: 0}\n",
                                      "node.yaml");
  auto text = config::to_yaml(original);
  auto again = config::load_string(text, "printed.yaml");
  CHECK(config::to_yaml(again) == text);
  CHECK(again.channel.arena == 3u << 20);
  CHECK(again.channel.keepalive == 0ns);
  REQUIRE(again.cluster.peers.size() == 1);
  CHECK(again.cluster.peers[0].address == config::endpoint{"::1", 9});
  CHECK(text.find("threads: auto") != std::string::npos);
}
