// Node ids, the decode's notes and the proxies of the handle table.
#include <riomesh/actors/peers/handle_table.hpp>

#include <caf/actor_system.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>

#include <openssl/sha.h>

#include <algorithm>
#include <cstdio>

namespace riomesh::actors {
namespace {

// What the decode running on this thread met (decode_scope::met).
thread_local decode_scope::met* decoding = nullptr;

std::string hex(const node_table::key& k) {
  std::string out;
  char b[3];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(b, sizeof b, "%02x", k.second[static_cast<std::size_t>(i)]);
    out += b;
  }
  return out + "..#" + std::to_string(k.first);
}

}  // namespace

// ---- node ids ---------------------------------------------------------------------

node_identity identity_of(const caf::node_id& n) {
  node_identity out;
  auto* d = dynamic_cast<const caf::node_id::default_data*>(n.operator->());
  if (!d)
    return out;
  out.process_id = d->process_id();
  auto host = d->host_id();
  std::copy(host.begin(), host.end(), out.host_id.begin());
  return out;
}

caf::node_id node_id_of(const node_identity& id) {
  caf::node_id::default_data::host_id_type host;
  std::copy(id.host_id.begin(), id.host_id.end(), host.begin());
  return caf::make_node_id(id.process_id, host);
}

node_identity synthesized_identity(const std::string& name) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  std::string seed = "riomesh node " + name;
  SHA1(reinterpret_cast<const unsigned char*>(seed.data()), seed.size(), digest);
  node_identity id;
  id.process_id = 1;
  std::copy(digest, digest + id.host_id.size(), id.host_id.begin());
  return id;
}

// ---- what a decode met --------------------------------------------------------------

decode_scope::decode_scope() : prev_(decoding) {
  decoding = &met_;
}

decode_scope::~decode_scope() {
  decoding = prev_;
}

std::vector<node_table::key> decode_scope::unknown() const {
  auto keys = met_.unknown;
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

std::string decode_scope::unresolvable() const {
  std::string out;
  for (const auto& k : met_.unresolvable)
    out += (out.empty() ? "" : ", ") + hex(k);
  return out;
}

// ---- the table ----------------------------------------------------------------------

handle_table::codec_unit::codec_unit(caf::actor_system& sys, caf::proxy_registry& proxies)
    : caf::execution_unit(&sys) {
  proxy_registry_ptr(&proxies);
}

void handle_table::codec_unit::exec_later(caf::resumable* job) {
  system().scheduler().enqueue(job);
}

handle_table::handle_table(caf::actor_system& sys, std::string self,
                           std::shared_ptr<node_table> nodes, std::size_t max_proxies_per_peer,
                           proxy_maker make)
    : self_(std::move(self)),
      nodes_(nodes ? std::move(nodes) : std::make_shared<node_table>()),
      make_(std::move(make)),
      census_(max_proxies_per_peer),
      proxies_(sys, *this),
      codec_(sys, proxies_) {}

// clear() emptied the registry while the actor system ran; what is left (a
// table never cleared) goes without its proxies being told.
handle_table::~handle_table() = default;

bool handle_table::learn_peer(const std::string& peer, const node_identity& id,
                              const std::string& seen_at, caf::node_id& out) {
  auto told = id.valid() ? id : synthesized_identity(peer);
  if (!nodes_->learn(peer, told, listen_address(told, seen_at)))
    return false;
  nodes_->live(peer, true);
  out = actors::node_id_of(told);
  return true;
}

caf::node_id handle_table::node_id_of(const std::string& peer) const {
  if (auto n = nodes_->by_name(peer))
    return actors::node_id_of(n->id);
  return actors::node_id_of(synthesized_identity(peer));
}

caf::strong_actor_ptr handle_table::make_proxy(caf::node_id nid, caf::actor_id aid) {
  if (aid == 0 || !nid)
    return nullptr;  // a null handle
  auto key = node_table::key_of(identity_of(nid));
  auto n = nodes_->by_id(key);
  if (!n || n->name == self_) {
    if (decoding)
      (unresolvable_.contains(key) ? decoding->unresolvable : decoding->unknown).push_back(key);
    return nullptr;
  }
  if (!census_.admit(n->name, nid))
    return nullptr;
  return make_(n->name, nid, aid);
}

caf::strong_actor_ptr handle_table::proxy_for(const std::string& peer, const caf::node_id& nid,
                                              std::uint64_t id) {
  if (!nid)  // not learned yet: by name
    return proxy_for(peer, id);
  return proxies_.get_or_put(nid, id);
}

caf::strong_actor_ptr handle_table::proxy_for(const std::string& peer, std::uint64_t id) {
  if (!nodes_->by_name(peer))  // a peer known by name only (it told no identity)
    nodes_->learn(peer, synthesized_identity(peer), {});
  return proxies_.get_or_put(node_id_of(peer), id);
}

void handle_table::kill(const std::string& peer, std::uint64_t id, const caf::error& why) {
  auto nid = node_id_of(peer);
  if (!proxies_.get(nid, id))
    return;
  proxies_.erase(nid, id, why);
  census_.release(peer);
}

void handle_table::lose(const std::string& peer, const caf::error& why) {
  std::vector<caf::strong_actor_ptr> doomed;
  for (const auto& nid : census_.forget(peer))
    for (auto& p : proxies_.get_all(nid))
      if (p)
        doomed.push_back(std::move(p));
  for (auto& p : doomed)
    proxies_.erase(p->node(), p->id(), why);
}

void handle_table::clear() {
  proxies_.clear();
  census_.clear();
}

}  // namespace riomesh::actors
