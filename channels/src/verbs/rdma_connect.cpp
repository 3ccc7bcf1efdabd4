// Establishing rdma connections with rdma_cm: resolve, connect, listen and
// accept, with the connection data as private data in both directions.
#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <riomesh/config/address.hpp>

#include "../net/resolve.hpp"
#include "cm_support.hpp"

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace riomesh::channels::verbs {

using detail::conn_param;
using detail::expect_event;
using detail::next_event;
using detail::set_nonblocking;
using detail::sys_error;

std::unique_ptr<rdma_channel> rdma_channel::connect(const config::endpoint& to,
                                                    const rdma_params& p, std::string& error) {
  std::unique_ptr<rdma_channel> ch(new rdma_channel);
  auto* events = rdma_create_event_channel();
  rdma_cm_id* id = nullptr;
  if (!events || rdma_create_id(events, &id, nullptr, RDMA_PS_TCP) != 0) {
    error = sys_error("rdma_cm is not available (no RDMA device, or rdma_ucm not loaded)");
    if (events)
      rdma_destroy_event_channel(events);
    return nullptr;
  }
  ch->cm_events_ = events;
  ch->id_ = id;
  auto list = net::resolve(to, false, error);
  if (!list)
    return nullptr;
  int rc = rdma_resolve_addr(id, nullptr, list->ai_addr, p.timeout_ms);
  std::string step;
  if (rc != 0 || !expect_event(events, RDMA_CM_EVENT_ADDR_RESOLVED, p.timeout_ms, step)) {
    error = "rdma_cm cannot resolve " + config::to_string(to) + ": " +
            (rc ? std::string{std::strerror(errno)} : step);
    return nullptr;
  }
  rc = rdma_resolve_route(id, p.timeout_ms);
  if (rc != 0 || !expect_event(events, RDMA_CM_EVENT_ROUTE_RESOLVED, p.timeout_ms, step)) {
    error = "rdma_cm cannot find a route to " + config::to_string(to) + ": " +
            (rc ? std::string{std::strerror(errno)} : step);
    return nullptr;
  }
  if (!detail::set_ack_timeout(id, rdma_params::ack_timeout_for(p.peer_timeout), error) ||
      !ch->setup(id, events, p, false, error))
    return nullptr;
  auto mine = wire::encode(ch->eng_->local_conn_data());
  auto param = conn_param(mine, ch->read_cap_);
  std::vector<unsigned char> theirs;
  if (rdma_connect(id, &param) != 0 ||
      !expect_event(events, RDMA_CM_EVENT_ESTABLISHED, p.timeout_ms, step, &theirs)) {
    error = "cannot connect to " + config::to_string(to) + ": " + step;
    return nullptr;
  }
  auto peer = wire::decode_conn_data(theirs.data(), theirs.size());
  if (auto* bad = std::get_if<std::string>(&peer)) {
    error = "peer " + config::to_string(to) + ": " + *bad;
    return nullptr;
  }
  ch->peer_ = net::name_of(rdma_get_peer_addr(id));
  ch->settle_reads();
  set_nonblocking(events->fd);
  // Our windows are bound before anything we send: the peer writes to us
  // only after our first write (it holds its sends until then), which the
  // send queue orders after the binds.
  if (!ch->bind(ch->target_x_, error) || !ch->bind(ch->ring_x_, error)) {
    error = "peer " + ch->peer_ + ": " + error;
    return nullptr;
  }
  if (!ch->eng_->start(std::get<wire::conn_data>(peer))) {
    error = "peer " + ch->peer_ + ": " + ch->eng_->reason();
    return nullptr;
  }
  ch->post_work();
  return ch;
}

rdma_listener::~rdma_listener() {
  if (id_)
    rdma_destroy_id(id_);
  if (events_)
    rdma_destroy_event_channel(events_);
}

std::unique_ptr<rdma_listener> rdma_listener::listen(const config::endpoint& at,
                                                     const rdma_params& p, std::string& error) {
  std::unique_ptr<rdma_listener> l(new rdma_listener);
  l->params_ = p;
  l->events_ = rdma_create_event_channel();
  if (!l->events_ || rdma_create_id(l->events_, &l->id_, nullptr, RDMA_PS_TCP) != 0) {
    error = sys_error("rdma_cm is not available (no RDMA device, or rdma_ucm not loaded)");
    return nullptr;
  }
  auto list = net::resolve(at, true, error);
  if (!list)
    return nullptr;
  int rc = rdma_bind_addr(l->id_, list->ai_addr);
  if (rc != 0 || rdma_listen(l->id_, 16) != 0) {
    error = sys_error("rdma_cm cannot listen on " + config::to_string(at));
    return nullptr;
  }
  return l;
}

int rdma_listener::port() const {
  return ntohs(rdma_get_src_port(id_));
}
int rdma_listener::fd() const {
  return events_->fd;
}

bool rdma_listener::refuse(std::string& peer) {
  while (rdma_cm_event* ev = next_event(events_, 0)) {
    if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
      rdma_ack_cm_event(ev);
      continue;
    }
    rdma_cm_id* child = ev->id;
    peer = net::name_of(rdma_get_peer_addr(child));
    rdma_reject(child, nullptr, 0);
    rdma_ack_cm_event(ev);
    rdma_destroy_id(child);
    return true;
  }
  return false;
}

std::unique_ptr<rdma_channel> rdma_listener::accept(std::chrono::milliseconds timeout,
                                                    std::string& error) {
  rdma_cm_event* ev = next_event(events_, static_cast<int>(timeout.count()));
  if (!ev) {
    error = "no connection request within " + std::to_string(timeout.count()) + " ms";
    return nullptr;
  }
  if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
    error = std::string{"unexpected "} + rdma_event_str(ev->event);
    rdma_ack_cm_event(ev);
    return nullptr;
  }
  rdma_cm_id* child = ev->id;
  // What the peer asks of reads each way (0 from rsocket peers).
  auto asked =
      std::min<std::uint32_t>(ev->param.conn.responder_resources, ev->param.conn.initiator_depth);
  std::vector<unsigned char> theirs(static_cast<const unsigned char*>(ev->param.conn.private_data),
                                    static_cast<const unsigned char*>(ev->param.conn.private_data) +
                                        ev->param.conn.private_data_len);
  rdma_ack_cm_event(ev);
  std::unique_ptr<rdma_channel> ch(new rdma_channel);
  // Each connection gets its own event channel: its DISCONNECTED must reach
  // it, not the listener.
  auto* own = rdma_create_event_channel();
  if (!own || rdma_migrate_id(child, own) != 0) {
    error = sys_error("cannot give the connection its own event channel");
    rdma_reject(child, nullptr, 0);
    rdma_destroy_id(child);
    if (own)
      rdma_destroy_event_channel(own);
    return nullptr;
  }
  ch->peer_ = net::name_of(rdma_get_peer_addr(child));
  auto peer = wire::decode_conn_data(theirs.data(), theirs.size());
  if (auto* bad = std::get_if<std::string>(&peer)) {
    error = "peer " + ch->peer_ + ": " + *bad;
    rdma_reject(child, nullptr, 0);
    ch->id_ = child;
    ch->cm_events_ = own;
    return nullptr;
  }
  if (!detail::set_ack_timeout(child, rdma_params::ack_timeout_for(params_.peer_timeout), error) ||
      !ch->setup(child, own, params_, true, error)) {
    rdma_reject(child, nullptr, 0);
    return nullptr;
  }
  if (!ch->eng_->start(std::get<wire::conn_data>(peer))) {
    error = "peer " + ch->peer_ + ": " + ch->eng_->reason();
    rdma_reject(child, nullptr, 0);
    return nullptr;
  }
  // The same both ways: ours is the peer's other way round.
  ch->read_depth_ = std::min(ch->read_cap_, asked);
  // Held from here: waiting for the window binds takes completions in,
  // and whatever that lets the engine post must not go before the peer
  // has written (see holding_).
  ch->holding_ = ch->windows_;
  if (ch->own_qp_ && !ch->ready_own_qp(error)) {
    error = "peer " + ch->peer_ + ": " + error;
    rdma_reject(child, nullptr, 0);
    return nullptr;
  }
  auto mine = wire::encode(ch->eng_->local_conn_data());
  auto param = conn_param(mine, ch->read_depth_);
  if (ch->own_qp_)
    param.qp_num = ch->qp_->qp_num;
  // The queue pair is ready to send once accepted. The peer's last step
  // (its RTU, then ESTABLISHED here) comes through the channel's own
  // events: waiting for it here would let a client that never takes it
  // stall the caller, the node, for the whole timeout.
  set_nonblocking(own->fd);
  if (rdma_accept(child, &param) != 0) {
    error = sys_error("peer " + ch->peer_ + ": accept failed");
    return nullptr;
  }
  ch->settle_reads();
  ch->establishing_since_ = std::chrono::steady_clock::now();
  ch->post_work();
  return ch;
}

}  // namespace riomesh::channels::verbs
