#include "validate.hpp"

#include <riomesh/config/address.hpp>
#include <riomesh/config/units.hpp>

#include <map>

namespace riomesh::config::detail {
namespace {

// Every entry with a readable name counts, whether or not the rest of it
// could be read (reader::peer_names): s.cluster.peers holds only the whole
// ones.
void check_peers(const settings& s, reader& in) {
  std::map<std::string, std::string> first;
  for (const auto& [name, entry] : in.peer_names()) {
    auto path = entry + ".name";
    if (name == s.node.name && !in.is_failed("node.name"))
      in.fail(in.where(path), path + ": '" + name + "' is this node's own name");
    auto [it, fresh] = first.emplace(name, path);
    if (!fresh)
      in.fail(in.where(path), path + ": duplicate peer name '" + name + "' (first at " +
                                  in.where(it->second).to_string() + ")");
  }
}

// Whether any of `paths` could not be read: a check across them would judge
// a default the user never chose.
bool any_failed(const reader& in, std::initializer_list<const char*> paths) {
  for (const char* p : paths)
    if (in.is_failed(p))
      return true;
  return false;
}

// Without a secret or keys any process that reaches the port could map our
// memory: only loopback is safe, unless the user says otherwise in so many
// words.
void check_exposure(const settings& s, reader& in) {
  if (any_failed(in, {"node.listen", "cluster.secret_file", "cluster.keys", "cluster.keyring_file",
                      "cluster.insecure"}))
    return;
  if (!s.cluster.secret.empty() || !s.cluster.keys.empty() || s.cluster.insecure ||
      is_loopback(s.node.listen))
    return;
  in.fail(in.where("node.listen"),
          "node.listen: " + to_string(s.node.listen) +
              " is not a loopback address, and the cluster has neither a secret_file nor "
              "keys; set cluster.secret_file or cluster.keys, or cluster.insecure: true to "
              "accept unauthenticated peers");
}

// An admin is a holder of a key the keyring lists: only a key proves who
// may control the node.
void check_admins(const settings& s, reader& in) {
  if (any_failed(in, {"cluster.admins", "cluster.keys", "cluster.keyring_file"}))
    return;
  for (std::size_t i = 0; i < s.cluster.admins.size(); ++i) {
    const auto& name = s.cluster.admins[i];
    bool listed = false;
    for (const auto& [n, k] : s.cluster.keys)
      listed = listed || n == name;
    if (!listed)
      in.fail(in.where("cluster.admins"),
              "cluster.admins: '" + name +
                  "' has no key in cluster.keys or cluster.keyring_file: an admin proves "
                  "itself by its key");
  }
}

void check_channel(const channel_settings& c, reader& in) {
  if (c.recv_buffer % 2 != 0 && !in.is_failed("channel.recv_buffer"))
    in.fail(in.where("channel.recv_buffer"),
            "channel.recv_buffer: " + format_size(c.recv_buffer) +
                " must be even: the ring is published to the peer in two halves");
  if (c.eager_threshold > c.arena && !any_failed(in, {"channel.eager_threshold", "channel.arena"}))
    in.fail(in.where("channel.eager_threshold"),
            "channel.eager_threshold: " + format_size(c.eager_threshold) +
                " is larger than channel.arena (" + format_size(c.arena) +
                "): no placed buffer could ever fit");
  // Point at whichever of the two the user wrote.
  auto timers = in.is_set("channel.peer_timeout") ? "channel.peer_timeout" : "channel.keepalive";
  if (c.keepalive.count() != 0 && c.peer_timeout <= c.keepalive &&
      !any_failed(in, {"channel.keepalive", "channel.peer_timeout"}))
    in.fail(in.where(timers),
            "channel.peer_timeout: " + format_duration(c.peer_timeout) +
                " must be longer than channel.keepalive (" + format_duration(c.keepalive) +
                "), or a live peer would be declared lost between two keepalives");
}

}  // namespace

void validate(const settings& value, reader& in) {
  check_peers(value, in);
  check_exposure(value, in);
  check_admins(value, in);
  if (value.channel.encrypt == encryption::on && value.node.fabric == fabric_kind::verbs &&
      !any_failed(in, {"channel.encrypt", "node.fabric"}))
    in.fail(in.where("channel.encrypt"),
            "channel.encrypt: on needs node.fabric tcp (or auto, on a machine without RDMA): "
            "rdma places bytes by RDMA write, which TLS cannot cover (docs/security.md)");
  check_channel(value.channel, in);
}

}  // namespace riomesh::config::detail
