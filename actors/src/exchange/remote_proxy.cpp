#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/exchange/exchange.hpp>
#include <riomesh/actors/exchange/remote_proxy.hpp>

#include <caf/mailbox_element.hpp>
#include <caf/make_actor.hpp>
#include <caf/node_id.hpp>
#include <caf/system_messages.hpp>

namespace riomesh::actors {
namespace {

thread_local int quiet = 0;

}  // namespace

remote_proxy::quiet_links::quiet_links() {
  ++quiet;
}

remote_proxy::quiet_links::~quiet_links() {
  --quiet;
}

remote_proxy::remote_proxy(caf::actor_config& cfg, std::shared_ptr<exchange> x, std::string peer)
    : caf::actor_proxy(cfg), exchange_(std::move(x)), peer_(std::move(peer)) {}

std::shared_ptr<exchange> remote_proxy::live_exchange() {
  std::lock_guard<std::mutex> guard(mtx_);
  return exchange_;
}

void remote_proxy::enqueue(caf::mailbox_element_ptr what, caf::execution_unit* ctx) {
  std::shared_ptr<exchange> x;
  caf::error why;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    x = exchange_;
    why = reason_;
  }
  // A linked actor's exit reaches the remote node as that actor's down, and
  // nobody stops another node's actors with an exit message.
  if (what->content().match_elements<caf::exit_msg>())
    return;
  if (x) {
    // On the sender's thread, straight to the link: no mailbox between.
    x->forward(peer_, id(), ctrl(), *what);
    return;
  }
  // Gone: a requester learns why at once instead of waiting for a timeout.
  if (what->mid.is_request() && what->sender)
    what->sender->enqueue(ctrl(), what->mid.response_id(), caf::make_message(std::move(why)), ctx);
}

bool remote_proxy::add_backlink(caf::abstract_actor* other) {
  if (!caf::actor_proxy::add_backlink(other))
    return false;
  if (quiet == 0)
    if (auto x = live_exchange())
      x->tell_link(peer_, id(), other->ctrl(), true);
  return true;
}

bool remote_proxy::remove_backlink(caf::abstract_actor* other) {
  if (!caf::actor_proxy::remove_backlink(other))
    return false;
  if (quiet == 0)
    if (auto x = live_exchange())
      x->tell_link(peer_, id(), other->ctrl(), false);
  return true;
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
                                        const std::string& peer, const caf::node_id& nid,
                                        std::uint64_t id) {
  caf::actor_config cfg;
  return caf::make_actor<remote_proxy, caf::strong_actor_ptr>(id, nid, &sys, cfg, std::move(x),
                                                              peer);
}

}  // namespace riomesh::actors
