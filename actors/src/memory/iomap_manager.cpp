#include <riomesh/actors/exchange/exchange.hpp>
#include <riomesh/actors/grants/grant_owner.hpp>
#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/actors/io/link.hpp>
#include <riomesh/actors/memory/iomap_manager.hpp>
#include <riomesh/channels/verbs/memory_domain.hpp>
#include <riomesh/errc.hpp>

#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <unordered_map>

namespace riomesh::actors {
namespace {

struct manager_state {
  iomap_manager_params p;
  std::chrono::nanoseconds every{0};
  // Requests whose link answers on its I/O thread, by key: the answer
  // comes back as a message, so only this actor's thread touches them.
  std::uint64_t next_key = 0;
  std::unordered_map<std::uint64_t, caf::typed_response_promise<std::uint64_t>> mapping;
  std::unordered_map<std::uint64_t, caf::typed_response_promise<bool>> unmapping;
  std::unordered_map<std::uint64_t, caf::typed_response_promise<grant>> lending;
  static inline const char* name = "riomesh.iomap_manager";
};

using self_ptr = iomap_manager_impl::stateful_pointer<manager_state>;

// Runs `work(link, me, key)` on `l`'s I/O thread, which answers with a
// message naming `key`; `waiting` keeps the promise until then.
template <class T, class Work>
caf::result<T> on_link(self_ptr self, std::shared_ptr<link> l,
                       std::unordered_map<std::uint64_t, caf::typed_response_promise<T>>& waiting,
                       Work work) {
  auto& st = self->state;
  auto key = st.next_key++;
  auto rp = self->template make_response_promise<T>();
  waiting.emplace(key, rp);
  st.p.loop->post([l = std::move(l), work = std::move(work),
                   me = caf::actor_cast<iomap_manager_impl>(self),
                   key]() mutable { work(*l, me, key); });
  return rp;
}

template <class T, class V>
void answer(std::unordered_map<std::uint64_t, caf::typed_response_promise<T>>& waiting,
            std::uint64_t key, V&& value) {
  auto it = waiting.find(key);
  if (it == waiting.end())
    return;
  it->second.deliver(std::forward<V>(value));
  waiting.erase(it);
}

iomap_manager_impl::behavior_type iomap_manager(self_ptr self, iomap_manager_params p) {
  auto& st = self->state;
  st.p = std::move(p);
  if (st.p.domain && st.p.idle.count() > 0) {
    st.every = std::clamp<std::chrono::nanoseconds>(st.p.idle / 4, std::chrono::milliseconds(10),
                                                    std::chrono::seconds(10));
    self->delayed_send(self, st.every, trim_atom::value);
  }
  return {
      [=](expose_atom, const std::string& peer, buffer& b) -> caf::result<std::uint64_t> {
        auto l = self->state.p.x->route_to(peer);
        if (!l)
          return make_error(errc::not_connected, "node '" + peer + "'");
        return on_link(
            self, std::move(l), self->state.mapping,
            [b = std::move(b)](link& l, const iomap_manager_impl& me, std::uint64_t key) mutable {
              link_mapped done{key, 0, {}};
              std::string error;
              if (!l.expose(std::move(b), done.offset, error))
                done.error = make_error(errc::too_large, error);
              caf::anon_send(me, std::move(done));
            });
      },
      [=](unexpose_atom, const std::string& peer, std::uint64_t offset) -> caf::result<bool> {
        auto l = self->state.p.x->route_to(peer);
        if (!l)
          return false;
        return on_link(self, std::move(l), self->state.unmapping,
                       [offset](link& l, const iomap_manager_impl& me, std::uint64_t key) {
                         caf::anon_send(me, link_unmapped{key, l.unexpose(offset)});
                       });
      },
      [=](grant_atom, const std::string& peer, buffer& b, std::uint8_t rights,
          bool once) -> caf::result<grant> {
        auto x = self->state.p.x;
        auto l = x->route_to(peer);
        if (!l)
          return make_error(errc::not_connected, "node '" + peer + "'");
        return on_link(self, std::move(l), self->state.lending,
                       [x, b = std::move(b), rights, once](link& l, const iomap_manager_impl& me,
                                                           std::uint64_t key) mutable {
                         link_lent done{key, {}, {}};
                         std::string error;
                         if (auto g = x->lent_grants().lend(l, std::move(b), rights, once, error))
                           done.lent = std::move(*g);
                         else
                           done.error =
                               make_error(errc::refused,
                                          "a grant for node '" + l.peer_name() + "' of " + error);
                         caf::anon_send(me, std::move(done));
                       });
      },
      [=](revoke_atom, std::uint64_t id) -> caf::result<bool> {
        auto x = self->state.p.x;
        auto g = x->lent_grants().take_back(id);
        if (!g)
          return false;
        auto l = x->route_to(g->holder);
        // A map lives on its connection: one that ended took it along.
        if (!g->map || !l || l->id() != g->link)
          return true;
        return on_link(self, std::move(l), self->state.unmapping,
                       [map = *g->map](link& l, const iomap_manager_impl& me, std::uint64_t key) {
                         l.unexpose(map);
                         caf::anon_send(me, link_unmapped{key, true});
                       });
      },
      [=](link_mapped& done) {
        if (done.error)
          answer(self->state.mapping, done.key, std::move(done.error));
        else
          answer(self->state.mapping, done.key, done.offset);
      },
      [=](link_unmapped& done) { answer(self->state.unmapping, done.key, done.done); },
      [=](link_lent& done) {
        if (done.error)
          answer(self->state.lending, done.key, std::move(done.error));
        else
          answer(self->state.lending, done.key, std::move(done.lent));
      },
      [=](trim_atom) {
        self->state.p.domain->trim(self->state.p.idle);
        self->delayed_send(self, self->state.every, trim_atom::value);
      },
  };
}

}  // namespace

iomap_manager_impl spawn_iomap_manager(caf::actor_system& sys, iomap_manager_params p) {
  return sys.spawn(iomap_manager, std::move(p));
}

}  // namespace riomesh::actors
