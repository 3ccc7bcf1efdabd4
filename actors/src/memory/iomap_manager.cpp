#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/exchange/exchange.hpp>
#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/actors/io/link.hpp>
#include <riomesh/actors/memory/iomap_manager.hpp>
#include <riomesh/buffer_inspect.hpp>
#include <riomesh/channels/verbs/memory_domain.hpp>
#include <riomesh/errc.hpp>
#include <riomesh/grant.hpp>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <algorithm>
#include <unordered_map>

namespace riomesh::actors {
namespace {

struct manager_state {
  iomap_manager_params p;
  std::chrono::nanoseconds every{0};
  // Requests whose link answers on its I/O thread: the answer comes back
  // as a message, so only this actor's thread touches its promises.
  std::uint64_t next_key = 0;
  std::unordered_map<std::uint64_t, caf::response_promise> waiting;
  static inline const char* name = "riomesh.iomap_manager";
};

using self_ptr = caf::stateful_actor<manager_state>*;

template <class T>
void answer(self_ptr self, std::uint64_t key, T&& value) {
  auto it = self->state.waiting.find(key);
  if (it == self->state.waiting.end())
    return;
  it->second.deliver(std::forward<T>(value));
  self->state.waiting.erase(it);
}

// Runs `work(link, me, key)` on `l`'s I/O thread; it answers the current
// request by sending (atom, key, result) to `me`.
template <class Result, class Work>
caf::result<Result> on_link(self_ptr self, std::shared_ptr<link> l, Work work) {
  auto& st = self->state;
  auto key = st.next_key++;
  st.waiting[key] = self->make_response_promise();
  st.p.loop->post([l = std::move(l), work = std::move(work), me = caf::actor_cast<caf::actor>(self),
                   key]() mutable { work(*l, me, key); });
  return caf::delegated<Result>{};
}

caf::behavior iomap_manager(self_ptr self, iomap_manager_params p) {
  auto& st = self->state;
  st.p = std::move(p);
  if (st.p.domain && st.p.idle.count() > 0) {
    st.every = std::clamp<std::chrono::nanoseconds>(st.p.idle / 4, std::chrono::milliseconds(10),
                                                    std::chrono::seconds(10));
    self->delayed_send(self, st.every, trim_atom::value);
  }
  return {
      [=](trim_atom) {
        self->state.p.domain->trim(self->state.p.idle);
        self->delayed_send(self, self->state.every, trim_atom::value);
      },
      [=](expose_atom, const std::string& peer, buffer& b) -> caf::result<std::uint64_t> {
        auto l = self->state.p.x->route_to(peer);
        if (!l)
          return make_error(errc::not_connected, "node '" + peer + "'");
        return on_link<std::uint64_t>(
            self, std::move(l),
            [b = std::move(b)](link& l, const caf::actor& me, std::uint64_t key) mutable {
              std::uint64_t offset = 0;
              std::string error;
              if (l.expose(std::move(b), offset, error))
                caf::anon_send(me, expose_atom::value, key, offset);
              else
                caf::anon_send(me, expose_atom::value, key, make_error(errc::too_large, error));
            });
      },
      [=](expose_atom, std::uint64_t key, std::uint64_t offset) { answer(self, key, offset); },
      [=](expose_atom, std::uint64_t key, caf::error& e) { answer(self, key, std::move(e)); },
      [=](unexpose_atom, const std::string& peer, std::uint64_t offset) -> caf::result<bool> {
        auto l = self->state.p.x->route_to(peer);
        if (!l)
          return false;
        return on_link<bool>(self, std::move(l),
                             [offset](link& l, const caf::actor& me, std::uint64_t key) {
                               caf::anon_send(me, unexpose_atom::value, key, l.unexpose(offset));
                             });
      },
      [=](unexpose_atom, std::uint64_t key, bool done) { answer(self, key, done); },
      [=](grant_atom, const std::string& peer, buffer& b, std::uint8_t rights,
          bool once) -> caf::result<grant> {
        auto x = self->state.p.x;
        auto l = x->route_to(peer);
        if (!l)
          return make_error(errc::not_connected, "node '" + peer + "'");
        return on_link<grant>(
            self, std::move(l),
            [x, b = std::move(b), rights, once](link& l, const caf::actor& me,
                                                std::uint64_t key) mutable {
              std::string error;
              if (auto g = x->lend(l, std::move(b), rights, once, error))
                caf::anon_send(me, grant_atom::value, key, std::move(*g));
              else
                caf::anon_send(me, grant_atom::value, key,
                               make_error(errc::refused,
                                          "a grant for node '" + l.peer_name() + "' of " + error));
            });
      },
      [=](grant_atom, std::uint64_t key, grant& g) { answer(self, key, std::move(g)); },
      [=](grant_atom, std::uint64_t key, caf::error& e) { answer(self, key, std::move(e)); },
      [=](revoke_atom, std::uint64_t id) -> caf::result<bool> {
        auto x = self->state.p.x;
        auto g = x->take_back(id);
        if (!g)
          return false;
        auto l = x->route_to(g->holder);
        // A map lives on its connection: one that ended took it along.
        if (!g->map || !l || l->id() != g->link)
          return true;
        return on_link<bool>(self, std::move(l),
                             [map = *g->map](link& l, const caf::actor& me, std::uint64_t key) {
                               l.unexpose(map);
                               caf::anon_send(me, revoke_atom::value, key, true);
                             });
      },
      [=](revoke_atom, std::uint64_t key, bool done) { answer(self, key, done); },
  };
}

}  // namespace

caf::actor spawn_iomap_manager(caf::actor_system& sys, iomap_manager_params p) {
  return sys.spawn(iomap_manager, std::move(p));
}

}  // namespace riomesh::actors
