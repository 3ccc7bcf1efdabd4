#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/directory/remote_proxy.hpp>
#include <riomesh/actors/exchange/exchange.hpp>

#include <caf/mailbox_element.hpp>
#include <caf/make_actor.hpp>
#include <caf/node_id.hpp>

#include <openssl/sha.h>

#include <unistd.h>

namespace riomesh::actors {

remote_proxy::remote_proxy(caf::actor_config& cfg, std::shared_ptr<exchange> x, std::string peer,
                           std::uint64_t remote_id)
    : caf::actor_proxy(cfg),
      exchange_(std::move(x)),
      peer_(std::move(peer)),
      remote_id_(remote_id) {}

void remote_proxy::enqueue(caf::mailbox_element_ptr what, caf::execution_unit* ctx) {
  std::shared_ptr<exchange> x;
  caf::error why;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    x = exchange_;
    why = reason_;
  }
  if (x) {
    // On the sender's thread, straight to the link: no mailbox between.
    x->forward(peer_, remote_id_, ctrl(), *what);
    return;
  }
  // Gone: a requester learns why at once instead of waiting for a timeout.
  if (what->mid.is_request() && what->sender)
    what->sender->enqueue(ctrl(), what->mid.response_id(), caf::make_message(std::move(why)), ctx);
}

void remote_proxy::kill_proxy(caf::execution_unit* ctx, caf::error reason) {
  std::shared_ptr<exchange> x;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    x.swap(exchange_);
    reason_ = reason;
  }
  cleanup(std::move(reason), ctx);
}

caf::strong_actor_ptr make_remote_proxy(caf::actor_system& sys, std::shared_ptr<exchange> x,
                                        const std::string& peer, std::uint64_t remote_id) {
  // Distinct from this node's id, and the same for every proxy of a peer.
  unsigned char digest[SHA_DIGEST_LENGTH];
  std::string seed = "riomesh node " + peer;
  SHA1(reinterpret_cast<const unsigned char*>(seed.data()), seed.size(), digest);
  caf::node_id::default_data::host_id_type host;
  std::copy(digest, digest + host.size(), host.begin());
  auto nid = caf::make_node_id(static_cast<std::uint32_t>(remote_id & 0xffffffffu) | 1u, host);
  caf::actor_config cfg;
  return caf::make_actor<remote_proxy, caf::strong_actor_ptr>(
      sys.next_actor_id(), std::move(nid), &sys, cfg, std::move(x), peer, remote_id);
}

}  // namespace riomesh::actors
