// Node keys in a node's file: its own private key, and the public keys of
// the nodes whose names must be proven. Keys made by OpenSSL's tools work
// as well as riomesh's own.
#include "config_test_util.hpp"

#include <riomesh/config/key_text.hpp>

#include <doctest/doctest.h>

using namespace riomesh;

namespace {

// An Ed25519 key pair printed by `openssl genpkey -algorithm ed25519` and
// `openssl pkey -pubout` (a test vector: never used as a real key).
const std::string openssl_private =
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEIHZ4IaSiRRsWcJCBQP5LXCcGoKkLN8jeePXPAlj9QgPS\n"
    "-----END PRIVATE KEY-----\n";
const std::string openssl_public_der =
    "MCowBQYDK2VwAyEAF1Z9dS0GJ6/2zn/5s1ntnxeaII6qtVZuhNo+4bt2XtE=";

}  // namespace

TEST_CASE("keys: base64 both ways") {
  CHECK(config::encode_base64("") == "");
  CHECK(config::encode_base64("f") == "Zg==");
  CHECK(config::encode_base64("fo") == "Zm8=");
  CHECK(config::encode_base64("foo") == "Zm9v");
  CHECK(config::decode_base64("Zm9vYg==") == std::string("foob"));
  CHECK(config::decode_base64(" Zm9v\nYmE= ") == std::string("fooba"));
  CHECK_FALSE(config::decode_base64("Zm9v!"));
  CHECK_FALSE(config::decode_base64("Zg==Zg"));
}

TEST_CASE("keys: an OpenSSL private key and its public key, in both public forms") {
  std::string error;
  auto seed = config::parse_private_key(openssl_private, error);
  REQUIRE_MESSAGE(seed.size() == 32, error);
  auto der = config::parse_public_key(openssl_public_der, error);
  REQUIRE_MESSAGE(der.size() == 32, error);
  auto raw = config::parse_public_key(config::public_key_text(der), error);
  CHECK(raw == der);
  // Our own PEM reads back to the same seed.
  CHECK(config::parse_private_key(config::private_key_pem(seed), error) == seed);
  CHECK(config::parse_private_key("no pem here", error).empty());
  CHECK(error == "not a PEM private key (no BEGIN/END PRIVATE KEY lines)");
  CHECK(config::parse_public_key("AAAA", error).empty());
  CHECK(error == "not an Ed25519 public key (3 bytes; expected 32, or the 44 of its DER form)");
}

TEST_CASE("keys: node.key_file, cluster.keys and cluster.keyring_file load, with errors placed") {
  auto key = test::temp_file("node-test.key", openssl_private);
  auto ring = test::temp_file("node-test.keyring",
                              "# the cluster's nodes\n\nnode-b " + openssl_public_der +
                                  "\nnode-c AAAA\nnode-d\nbad!name " + openssl_public_der + "\n");
  std::string error;
  auto pub = config::parse_public_key(openssl_public_der, error);
  auto good =
      config::load_string(test::minimal + "  key_file: " + key +
                              "\ncluster:\n  keys:\n    node-a: " + openssl_public_der + "\n",
                          "node.yaml");
  CHECK(good.node.key == config::parse_private_key(openssl_private, error));
  CHECK(good.node.key_file == key);
  REQUIRE(good.cluster.keys.size() == 1);
  CHECK(good.cluster.keys[0] == std::pair<std::string, std::string>{"node-a", pub});

  auto bad = test::problems(test::minimal + "cluster:\n  keyring_file: " + ring +
                            "\n  keys:\n    node-b: " + openssl_public_der + "\n");
  REQUIRE(bad.size() == 4);
  // The file's own problems in line order, then those of the files it names.
  CHECK(bad[0] == "node.yaml:7:13: cluster.keys: node 'node-b' is listed twice");
  CHECK(bad[1] == ring +
                      ":4:1: keyring: the key of node 'node-c' is not an Ed25519 public key "
                      "(3 bytes; expected 32, or the 44 of its DER form)");
  CHECK(bad[2] == ring + ":5:1: keyring: expected 'NAME BASE64-KEY' on the line");
  CHECK(bad[3] == ring +
                      ":6:1: keyring: 'bad!name' is not a valid name: 1 to 64 letters, "
                      "digits, '-', '_' or '.', starting with a letter or digit");
  CHECK(test::problem(test::minimal + "  key_file: /nonexistent.key\n") ==
        "node.yaml:4:13: node.key_file: cannot read key file '/nonexistent.key': No such file or "
        "directory");
  auto not_a_key = test::temp_file("node-test.notkey", "hello\n");
  CHECK(test::problem(test::minimal + "  key_file: " + not_a_key + "\n") ==
        "node.yaml:4:13: node.key_file: key file '" + not_a_key +
            "': not a PEM private key (no BEGIN/END PRIVATE KEY lines)");
  // With keys (and no secret), a public address is allowed.
  CHECK(test::problems("node:\n  name: n1\n  listen: 0.0.0.0:7471\ncluster:\n  keys:\n    a: " +
                       openssl_public_der + "\n")
            .empty());
}
