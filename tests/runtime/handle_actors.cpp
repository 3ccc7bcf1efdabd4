#include "handle_actors.hpp"

#include <caf/scoped_actor.hpp>
#include <caf/system_messages.hpp>

#include <stdexcept>
#include <thread>

namespace riomesh::test {

using namespace std::chrono_literals;

collector::collector(caf::actor_config& cfg) : caf::event_based_actor(cfg) {}

caf::behavior collector::make_behavior() {
  return {[=](const std::string& text) { lines_.push_back(text); },
          [=](fetch_atom) { return lines_; }};
}

caf::behavior forwarder::make_behavior() {
  // What it cannot place (undelivered notices for handles it was sent) it
  // drops: printed, it would fill a runtime_peer's unread stdout.
  set_default_handler(caf::drop);
  set_down_handler(
      [=](caf::down_msg& d) { lines_.push_back("down: " + system().render(d.reason)); });
  set_exit_handler(
      [=](caf::exit_msg& e) { lines_.push_back("exit: " + system().render(e.reason)); });
  return {
      [=](const to_whom& m) { send(m.who, m.text); },
      [=](const to_address& m) {
        send(caf::actor_cast<caf::actor>(m.who), m.text + " (by address)");
        send(caf::actor_cast<caf::actor>(m.weak), m.text + " (by weak pointer)");
        send(caf::actor_cast<caf::actor>(m.strong), m.text + " (by strong pointer)");
      },
      [=](const to_calc& m) -> caf::result<int> {
        auto rp = make_response_promise<int>();
        request(m.who, 10s, add_atom::value, 20, 22)
            .then([=](int sum) mutable { rp.deliver(sum); },
                  [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
        return rp;
      },
      [=](const caf::actor& via, const to_whom& m) { send(via, m); },
      [=](watch_atom, const caf::actor& who) { monitor(who); },
      [=](tie_atom, const caf::actor& who) { link_to(who); },
      [=](fetch_atom) { return lines_; },
      [=](const std::string& text) { lines_.push_back(text); },
  };
}

std::vector<std::string> lines_of(runtime& rt, const caf::actor& who) {
  caf::scoped_actor self{rt.system()};
  std::vector<std::string> out;
  self->request(who, 10s, fetch_atom::value)
      .receive([&](std::vector<std::string>& l) { out = std::move(l); },
               [&](caf::error& e) { throw std::runtime_error(rt.system().render(e)); });
  return out;
}

bool hears(runtime& rt, const caf::actor& who, const std::string& text) {
  for (auto end = std::chrono::steady_clock::now() + 15s; std::chrono::steady_clock::now() < end;
       std::this_thread::sleep_for(20ms))
    for (const auto& l : lines_of(rt, who))
      if (l.rfind(text, 0) == 0)
        return true;
  return false;
}

}  // namespace riomesh::test
