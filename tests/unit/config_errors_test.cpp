// Each class of config error: its message and the position it names.
#include "config_test_util.hpp"

using namespace riomesh;
using test::minimal;
using test::problem;
using test::problems;

TEST_CASE("unknown keys and sections suggest the closest valid one") {
  CHECK(problem(minimal + "channel:\n  sq_sise: 10\n") ==
        "node.yaml:5:3: channel: unknown key 'sq_sise'; did you mean 'sq_size'?");
  CHECK(problem(minimal + "chanel:\n  sq_size: 16\n") ==
        "node.yaml:4:1: unknown section 'chanel'; did you mean 'channel'?");
  CHECK(problem(minimal + "runtime:\n  colour: red\n") ==
        "node.yaml:5:3: runtime: unknown key 'colour' (valid: threads, policy, io_handler_limit)");
  auto misspelt =
      problems(minimal + "cluster:\n  peers:\n    - {name: a, adress: '127.0.0.1:1'}\n");
  REQUIRE(misspelt.size() == 2);
  CHECK(misspelt[0] == "node.yaml:6:7: cluster.peers[0]: missing required key 'address'");
  CHECK(misspelt[1] ==
        "node.yaml:6:17: cluster.peers[0]: unknown key 'adress'; did you mean 'address'?");
}

TEST_CASE("wrong types name what was expected and what was found") {
  CHECK(problem(minimal + "channel:\n  sq_size: [1, 2]\n") ==
        "node.yaml:5:12: channel.sq_size: expected a whole number, found a list");
  CHECK(problem(minimal + "channel:\n  sq_size: abc\n") ==
        "node.yaml:5:12: channel.sq_size: expected a whole number, found 'abc'");
  CHECK(problem(minimal + "cluster:\n  insecure: yes\n") ==
        "node.yaml:5:13: cluster.insecure: expected true or false, found 'yes'");
  CHECK(problem(minimal + "channel:\n  keepalive: 10\n") ==
        "node.yaml:5:14: channel.keepalive: '10' is not a duration: a whole number with a "
        "unit (ns, us, ms, s, min)");
  CHECK(problem(minimal + "node2: 1\n") ==
        "node.yaml:4:1: unknown section 'node2'; did you mean 'node'?");
  CHECK(problem(minimal + "logging: debug\n") ==
        "node.yaml:4:1: logging: expected a mapping of settings");
  CHECK(problem("node:\n  name: n1\n  listen: 127.0.0.1:1\n  fabric: rdma\n") ==
        "node.yaml:4:11: node.fabric: 'rdma' is not one of auto, verbs, tcp");
  CHECK(problem(minimal + "cluster:\n  peers: {a: 1}\n") ==
        "node.yaml:5:10: cluster.peers: expected a list of {name, address} entries");
  CHECK(problem(minimal + "channel:\n  sq_size:\n") ==
        "node.yaml:5:3: channel.sq_size: no value given");
}

TEST_CASE("values out of range give the range") {
  CHECK(problem(minimal + "channel:\n  sq_size: 0\n") ==
        "node.yaml:5:12: channel.sq_size: 0 is out of range (16 .. 65534)");
  CHECK(problem(minimal + "channel:\n  rq_size: 65535\n") ==
        "node.yaml:5:12: channel.rq_size: 65535 is out of range (16 .. 65534)");
  CHECK(problem(minimal + "channel:\n  send_buffer: 1KiB\n") ==
        "node.yaml:5:16: channel.send_buffer: 1KiB is below the minimum 4KiB");
  CHECK(problem(minimal + "channel:\n  arena: 8GiB\n") ==
        "node.yaml:5:10: channel.arena: 8GiB does not fit: the maximum is 2GiB (an iomap "
        "entry's length is 32 bits)");
  CHECK(problem(minimal + "channel:\n  arena: 99999999999999999999\n")
            .find("node.yaml:5:10: channel.arena: '99999999999999999999' is not a size") == 0);
  CHECK(problem(minimal + "channel:\n  iomap_size: 200\n") ==
        "node.yaml:5:15: channel.iomap_size: 200 cannot be announced to the peer: the wire "
        "carries 0..128 exactly, then multiples of 256 up to 32512 (use 128 or 256)");
  CHECK(problem(minimal + "channel:\n  iomap_size: 1000\n").find("(use 768 or 1024)") !=
        std::string::npos);
  CHECK(problem(minimal + "channel:\n  polling_time: 2s\n") ==
        "node.yaml:5:17: channel.polling_time: 2s is out of range (0 .. 1s)");
  CHECK(problem(minimal + "runtime:\n  threads: 0\n") ==
        "node.yaml:5:12: runtime.threads: 0 is out of range (1 .. 256), or auto");
}

TEST_CASE("a dma-buf device that is not an absolute path") {
  CHECK(problem(minimal + "memory:\n  dmabuf_device: dri/card0\n") ==
        "node.yaml:5:18: memory.dmabuf_device: expected an absolute path such as /dev/dri/card0, "
        "found 'dri/card0'");
}

TEST_CASE("malformed addresses and ports") {
  CHECK(problem("node:\n  name: n1\n  listen: 127.0.0.1\n") ==
        "node.yaml:3:11: node.listen: malformed address '127.0.0.1': expected host:port "
        "(e.g. 127.0.0.1:7471)");
  CHECK(problem("node:\n  name: n1\n  listen: 127.0.0.1:99999\n") ==
        "node.yaml:3:11: node.listen: malformed address '127.0.0.1:99999': port 99999 is out "
        "of range (0 .. 65535)");
  CHECK(problem(minimal + "cluster:\n  peers:\n    - name: a\n      address: 1.2.3:4\n") ==
        "node.yaml:7:16: cluster.peers[0].address: malformed address '1.2.3:4': '1.2.3' is "
        "not an IPv4 address");
}

TEST_CASE("missing required keys and sections") {
  CHECK(problem("node:\n  name: n1\n") == "node.yaml:1:1: node: missing required key 'listen'");
  CHECK(problem("channel:\n  sq_size: 16\n") ==
        "node.yaml:1:1: missing required section 'node' (with name, listen)");
  CHECK(problem("") ==
        "node.yaml:1:1: the file is empty; a node needs at least node.name and node.listen");
  CHECK(problem(minimal + "cluster:\n  peers:\n    - name: a\n") ==
        "node.yaml:6:7: cluster.peers[0]: missing required key 'address'");
}

TEST_CASE("duplicates: peer names, keys, the node's own name") {
  CHECK(problem(minimal + "cluster:\n  peers:\n    - name: a\n      address: 127.0.0.1:1\n"
                          "    - name: a\n      address: 127.0.0.1:2\n") ==
        "node.yaml:8:13: cluster.peers[1].name: duplicate peer name 'a' (first at "
        "node.yaml:6:13)");
  // The first entry's address is malformed: the name still counts.
  auto both = problems(minimal +
                       "cluster:\n  peers:\n    - name: broker\n      address: nowhere\n"
                       "    - name: broker\n      address: 127.0.0.1:2\n");
  REQUIRE(both.size() == 2);
  CHECK(both[0].find("node.yaml:7:16: cluster.peers[0].address: ") == 0);
  CHECK(both[1] ==
        "node.yaml:8:13: cluster.peers[1].name: duplicate peer name 'broker' (first at "
        "node.yaml:6:13)");
  CHECK(problem(minimal + "cluster:\n  peers:\n    - {name: n1, address: '127.0.0.1:1'}\n") ==
        "node.yaml:6:14: cluster.peers[0].name: 'n1' is this node's own name");
  CHECK(problem("node:\n  name: a\n  name: b\n  listen: 127.0.0.1:1\n") ==
        "node.yaml:3:3: node.name: set twice (first at node.yaml:2:9)");
  CHECK(problem(minimal + "node:\n  fabric: tcp\n") ==
        "node.yaml:4:1: node: section appears twice");
}

TEST_CASE("secret files: unreadable, too short") {
  CHECK(problem(minimal + "cluster:\n  secret_file: /nonexistent/secret\n") ==
        "node.yaml:5:16: cluster.secret_file: cannot read secret file '/nonexistent/secret': No "
        "such file or directory");
  auto path = test::temp_file("short.secret", "tooshort\n");
  CHECK(problem(minimal + "cluster:\n  secret_file: " + path + "\n") ==
        "node.yaml:5:16: cluster.secret_file: secret file '" + path +
            "' holds 8 bytes; at least 16 are needed");
}

TEST_CASE("checks across keys point at the key that must change") {
  CHECK(problem("node:\n  name: n1\n  listen: 0.0.0.0:7471\n") ==
        "node.yaml:3:11: node.listen: 0.0.0.0:7471 is not a loopback address, and the cluster "
        "has neither a secret_file nor keys; set cluster.secret_file or cluster.keys, or "
        "cluster.insecure: true to accept unauthenticated peers");
  CHECK(
      problems("node:\n  name: n1\n  listen: 0.0.0.0:7471\ncluster:\n  insecure: true\n").empty());
  CHECK(problem(minimal + "channel:\n  arena: 1MiB\n  eager_threshold: 2MiB\n") ==
        "node.yaml:6:20: channel.eager_threshold: 2MiB is larger than channel.arena (1MiB): "
        "no placed buffer could ever fit");
  CHECK(problem(minimal + "channel:\n  keepalive: 5s\n") ==
        "node.yaml:5:14: channel.peer_timeout: 5s must be longer than channel.keepalive (5s), "
        "or a live peer would be declared lost between two keepalives");
  CHECK(problem(minimal + "channel:\n  recv_buffer: 4097\n") ==
        "node.yaml:5:16: channel.recv_buffer: 4097B must be even: the ring is published to "
        "the peer in two halves");
}

TEST_CASE("YAML syntax errors carry the parser's position") {
  auto p = problem("node:\n  name: [n1\n  listen: 127.0.0.1:1\n");
  CHECK(p.find("node.yaml:") == 0);
  CHECK(p.find(": YAML syntax error: ") != std::string::npos);
}

TEST_CASE("all problems of a file are reported at once, in file order") {
  auto all = problems(
      "node:\n  name: n1\n  listen: 127.0.0.1:1\nchannel:\n  sq_size: 0\n  inline: x\n"
      "logging:\n  level: loud\n");
  REQUIRE(all.size() == 3);
  CHECK(all[0].find("node.yaml:5:12: channel.sq_size") == 0);
  CHECK(all[1].find("node.yaml:6:11: channel.inline") == 0);
  CHECK(all[2] ==
        "node.yaml:8:10: logging.level: 'loud' is not one of trace, debug, info, warn, error, "
        "off");
}

TEST_CASE("checks across keys run beside problems of single keys, and leave out failed ones") {
  auto all = problems(
      "cluster:\n  peers:\n    - {name: n1, address: '127.0.0.1:2'}\n"
      "    - {name: b, adress: x}\n    - {name: n1, address: '127.0.0.1:3'}\n"
      "node:\n  name: n1\n  listen: 127.0.0.1:1\n"
      "channel:\n  keepalive: soon\n  sq_size: 1\n");
  REQUIRE(all.size() == 7);
  // In line order, whatever check found them.
  CHECK(all[0] == "node.yaml:3:14: cluster.peers[0].name: 'n1' is this node's own name");
  CHECK(all[1] == "node.yaml:4:7: cluster.peers[1]: missing required key 'address'");
  CHECK(all[2].find("node.yaml:4:17: cluster.peers[1]: unknown key 'adress'") == 0);
  CHECK(all[3] == "node.yaml:5:14: cluster.peers[2].name: 'n1' is this node's own name");
  CHECK(all[4] ==
        "node.yaml:5:14: cluster.peers[2].name: duplicate peer name 'n1' (first at "
        "node.yaml:3:14)");
  CHECK(all[5].find("node.yaml:10:14: channel.keepalive: 'soon' is not a duration") == 0);
  CHECK(all[6] == "node.yaml:11:12: channel.sq_size: 1 is out of range (16 .. 65534)");
  // keepalive could not be read: no "peer_timeout must be longer" about its default.
}

TEST_CASE("negative durations and sizes are named as such") {
  CHECK(problem(minimal + "channel:\n  keepalive: -1s\n") ==
        "node.yaml:5:14: channel.keepalive: -1s is negative: a duration is 0 or more");
  CHECK(problem(minimal + "channel:\n  arena: -4MiB\n") ==
        "node.yaml:5:10: channel.arena: -4MiB is negative: a size is 0 or more");
}

TEST_CASE("YAML indentation errors get a hint") {
  CHECK(problem("node:\n  name: n1\n   listen: 127.0.0.1:1\n") ==
        "node.yaml:3:10: YAML syntax error: illegal map value (check the indentation of this "
        "line and the one before it: the keys of one mapping start in the same column, "
        "indented with spaces, never tabs)");
  CHECK(problem(minimal + "channel:\n  sq_size: 16\n\tarena: 1MiB\n") ==
        "node.yaml:6:1: YAML syntax error: illegal tab when looking for indentation (indent "
        "with spaces: YAML does not allow tabs there)");
  CHECK(problem(minimal + "channel:\nsq_size: 16\n") ==
        "node.yaml:5:1: unknown section 'sq_size'; 'sq_size' is a key of section 'channel': "
        "indent it under 'channel:'");
}

TEST_CASE("trust settings: admins need keys, encryption needs tcp, encrypt and budgets read") {
  CHECK(problem(minimal + "cluster:\n  admins: [ops]\n") ==
        "node.yaml:5:11: cluster.admins: 'ops' has no key in cluster.keys or "
        "cluster.keyring_file: an admin proves itself by its key");
  CHECK(problem("node:\n  name: n1\n  listen: 127.0.0.1:1\n  fabric: verbs\nchannel:\n  encrypt: "
                "on\n") ==
        "node.yaml:6:12: channel.encrypt: on needs node.fabric tcp (or auto, on a machine "
        "without RDMA): rdma places bytes by RDMA write, which TLS cannot cover "
        "(docs/security.md)");
  CHECK(problem(minimal + "channel:\n  encrypt: maybe\n") ==
        "node.yaml:5:12: channel.encrypt: 'maybe' is not one of auto, on, off");
  CHECK(problem(minimal + "cluster:\n  max_sessions: 0\n") ==
        "node.yaml:5:17: cluster.max_sessions: 0 is out of range (1 .. 65536)");
  CHECK(problems(minimal + "memory:\n  arena_budget: 2GiB\ncluster:\n  max_sessions: 8\n").empty());
}

TEST_CASE("cluster.seeds: host:port entries, a DNS name allowed, each bad one at its line") {
  auto s = config::load_string(minimal + "cluster:\n  seeds: ['pods.svc:7471', '10.0.0.9:7471']\n",
                               "node.yaml", ".");
  REQUIRE(s.cluster.seeds.size() == 2);
  CHECK(s.cluster.seeds[0].host == "pods.svc");
  CHECK(s.cluster.seeds[1].port == 7471);
  CHECK(problem(minimal + "cluster:\n  seeds:\n    - pods.svc\n") ==
        "node.yaml:6:7: cluster.seeds[0]: malformed address 'pods.svc': expected host:port "
        "(e.g. 127.0.0.1:7471)");
  CHECK(problem(minimal + "cluster:\n  seeds: pods.svc:7471\n") ==
        "node.yaml:5:10: cluster.seeds: expected a list of host:port entries");
}
