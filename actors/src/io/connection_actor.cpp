#include <riomesh/actors/io/connection_actor.hpp>
#include <riomesh/actors/io/connection_host.hpp>
#include <riomesh/actors/io/link.hpp>
#include <riomesh/actors/io/send_order.hpp>
#include <riomesh/errc.hpp>

#include <caf/actor_system.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace riomesh::actors {
namespace {

// What the link tells its own actor: it closed, and why.
using connection_impl = connection_actor::extend<caf::reacts_to<closed_atom, std::string, bool>>;

class connection final : public connection_impl::base {
 public:
  using super = connection_impl::base;

  connection(caf::actor_config& cfg, connection_host& host, std::weak_ptr<link> l)
      : super(cfg), host_(host), link_(std::move(l)) {}

  const char* name() const override { return "riomesh.connection"; }

  // Wherever a message comes from, the actor wakes on the I/O thread.
  using super::enqueue;
  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit*) override {
    super::enqueue(std::move(what), &host_);
  }

  // A sender's message goes straight to the link: no behavior to match.
  caf::invoke_message_result consume(caf::mailbox_element& x) override {
    if (!is_order(x))
      return super::consume(x);
    auto l = link_.lock();
    hand_over(l.get(), x);
    if (l)
      l->took(1);
    return caf::invoke_message_result::consumed;
  }

  // Senders' messages at the head of the mailbox go to the link in one
  // sweep, without CAF's per-message round (a clock read every third
  // message); CAF's own turn then takes what is left, in order. The link
  // sends what it took at once.
  caf::resumable::resume_result resume(caf::execution_unit* eu, size_t max) override {
    if (getf(is_initialized_flag) && alive()) {
      auto l = link_.lock();
      mailbox().fetch_more();
      auto& q = get_normal_queue();
      std::size_t n = 0;
      for (auto* x = q.peek(); x != nullptr && is_order(*x); x = q.peek(), ++n)
        hand_over(l.get(), *q.take_front());
      if (l && n > 0)
        l->took(n);
    }
    auto r = super::resume(eu, max);
    if (std::exchange(taken_, false))
      if (auto l = link_.lock())
        l->on_wake(link::clock::now());
    return r;
  }

  behavior_type make_behavior() override {
    return {
        [this](stats_atom) {
          connection_figures f;
          f.actor = id();
          if (auto l = link_.lock()) {
            f.id = l->id();
            f.peer = l->peer_name();
            f.remote = l->remote();
            f.phase = phase_name(static_cast<std::uint8_t>(l->current_phase()));
            f.dialed = l->dialed();
            f.counters = l->stats();
          } else {
            f.phase = "closed";
          }
          return f;
        },
        [this](drain_atom) {
          if (auto l = link_.lock())
            l->drain(nullptr);
        },
        [this](close_atom, const std::string& reason) {
          if (auto l = link_.lock())
            l->drop(reason);
        },
        [this](evict_atom, const std::string& reason) {
          if (auto l = link_.lock())
            l->evict(reason);
        },
        [this](closed_atom, const std::string& reason, bool stopped) {
          quit(make_error(stopped ? errc::stopped : errc::node_lost, reason));
        },
    };
  }

 private:
  static bool is_order(caf::mailbox_element& x) {
    auto& content = x.content();
    return content.size() == 1 && content.match_element<send_order>(0);
  }

  void hand_over(link* l, caf::mailbox_element& x) {
    auto m = x.content().get_mutable_as<send_order>(0).take();
    if (l)
      l->take(std::move(m));
    else if (m.on_failure)
      m.on_failure(send_failure::node_lost, "connection closed before the message went");
    taken_ = true;
  }

  connection_host& host_;
  std::weak_ptr<link> link_;
  bool taken_ = false;
};

}  // namespace

connection_actor spawn_connection(caf::actor_system& sys, connection_host& host,
                                  const std::shared_ptr<link>& l) {
  // Hidden: the actor system does not wait for connections at its end
  // (the I/O thread ends them). Lazy: its first turn is on the I/O thread.
  auto actor =
      sys.spawn<connection, caf::hidden + caf::lazy_init>(std::ref(host), std::weak_ptr<link>(l));
  l->bind(caf::actor_cast<caf::strong_actor_ptr>(actor));
  return caf::actor_cast<connection_actor>(actor);
}

const char* phase_name(std::uint8_t phase) {
  switch (static_cast<link::phase>(phase)) {
    case link::phase::setting_up:
      return "setting up";
    case link::phase::up:
      return "up";
    case link::phase::draining:
      return "draining";
    case link::phase::farewell:
      return "saying farewell";
    case link::phase::shut:
      return "shut";
    case link::phase::leaving:
      return "leaving";
    case link::phase::closed:
      return "closed";
  }
  return "?";
}

}  // namespace riomesh::actors
