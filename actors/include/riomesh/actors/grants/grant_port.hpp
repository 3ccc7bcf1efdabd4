// What the two sides of grants (grant_owner.hpp, grant_holder.hpp) need of
// the exchange they live in: its connections, its actors' mailboxes, and
// its codec for a `then` that rides on a use. The exchange implements it;
// a test can stand in for it.
#pragma once

#include <riomesh/actors/io/link.hpp>

#include <caf/fwd.hpp>

#include <memory>
#include <string>

namespace riomesh::actors {

struct grant_request;
struct grant_wait;
struct inbound_message;
struct outbound_message;

class grant_port {
 public:
  // Alive while the exchange is: what callbacks that may outlive it hold.
  virtual std::weak_ptr<grant_port> lifetime() const = 0;
  // The connection kept to `peer` (null: none).
  virtual std::shared_ptr<link> route_to(const std::string& peer) const = 0;
  // Onto `l`'s outbox, counted as a hand-off.
  virtual link::submitted submit(link& l, outbound_message&& m) = 0;
  // Into an actor's mailbox, counted as a hand-off.
  virtual void enqueue(const caf::strong_actor_ptr& to, const caf::strong_actor_ptr& from,
                       caf::message msg) = 0;
  // Moves `w`'s `then` into the use `r` (its sender into `m`) when it can
  // ride there; otherwise it stays in `w`, for the holder to send after
  // the answer.
  virtual void carry_then(link& l, grant_request& r, outbound_message& m, grant_wait& w) = 0;
  // A `then` that rode on a use, delivered as `l`'s peer's message.
  virtual void deliver(link& l, inbound_message& m) = 0;
  // What `l`'s peer sent was refused: counted and logged within its bounds.
  virtual void misbehaved(link& l, const std::string& what) = 0;

 protected:
  ~grant_port() = default;
};

}  // namespace riomesh::actors
