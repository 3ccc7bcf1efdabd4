#include "pair.hpp"

#include <riomesh/channels/wire/constants.hpp>

#include <algorithm>
#include <cstring>

namespace riomesh::sim {

guarded_buffer::guarded_buffer(std::size_t length) : bytes_(length + 2 * guard, pattern) {
  std::memset(data(), 0, length);
}

bool guarded_buffer::guards_intact() const {
  auto ok = [](unsigned char c) { return c == pattern; };
  return std::all_of(bytes_.begin(), bytes_.begin() + guard, ok) &&
         std::all_of(bytes_.end() - guard, bytes_.end(), ok);
}

engine_pair::engine_pair(const side_config& a, const side_config& b, std::uint64_t seed,
                         std::uint32_t rnr_retry)
    : net_(seed, std::max(a.params.sq_size, b.params.sq_size),
           std::max(a.params.rq_size, b.params.rq_size) + wire::control_slots, rnr_retry) {
  const side_config* config[2] = {&a, &b};
  for (int i = 0; i < 2; ++i) {
    auto& s = sides_[i];
    const auto& c = *config[i];
    s.target_list = std::make_unique<guarded_buffer>(wire::target_list_size(c.params.iomap_slots));
    s.recv_ring = std::make_unique<guarded_buffer>(c.recv_ring);
    s.send_ring = std::make_unique<guarded_buffer>(c.send_ring);
    engine::regions mem{register_buffer(i, *s.target_list, true),
                        register_buffer(i, *s.recv_ring, true),
                        register_buffer(i, *s.send_ring, false)};
    s.eng = std::make_unique<engine::engine>(c.params, mem);
    flush(i);
  }
}

engine::region engine_pair::register_buffer(int i, guarded_buffer& buffer, bool remote) {
  return net_.side(i).register_memory(buffer.data(), buffer.size(), remote, remote);
}

bool engine_pair::connect(bool stagger) {
  auto a = sides_[0].eng->local_conn_data();
  auto b = sides_[1].eng->local_conn_data();
  // Through the byte encoding, as the connection manager would carry it.
  auto wire_a = wire::encode(a);
  auto wire_b = wire::encode(b);
  auto peer_of_b = wire::decode_conn_data(wire_a.data(), wire_a.size());
  auto peer_of_a = wire::decode_conn_data(wire_b.data(), wire_b.size());
  bool ok = sides_[0].eng->start(std::get<wire::conn_data>(peer_of_a));
  flush(0);
  if (stagger)
    while (net_.step()) {
    }
  ok = ok && sides_[1].eng->start(std::get<wire::conn_data>(peer_of_b));
  flush(1);
  return ok;
}

void engine_pair::flush(int i) {
  auto& s = sides_[i];
  s.work.clear();
  s.eng->take_work(s.work);
  for (const auto& w : s.work)
    net_.side(i).post(w);
}

bool engine_pair::step() {
  // The rdma channel disconnects once its engine has closed and its writes
  // are acknowledged (or it failed); the peer's
  // channel takes in the completions already queued, then the event. The
  // disconnect travels apart from the writes, so it may come at any point
  // after, even before the acknowledgements of the peer's last writes.
  for (int i = 0; i < 2; ++i) {
    auto& e = *sides_[i].eng;
    if (!e.closed() || !(e.drained() || e.failed()) || sides_[i].disconnected ||
        net_.rng()() % 4 != 0)
      continue;
    sides_[i].disconnected = true;
    int peer = 1 - i;
    while (poll(peer, 64) > 0) {
    }
    sides_[peer].eng->on_disconnected("RDMA_CM_EVENT_DISCONNECTED");
    flush(peer);
    net_.cut("disconnected");  // both queue pairs leave the connected state
    return true;
  }
  return net_.step();
}

std::size_t engine_pair::poll(int i, std::size_t max) {
  auto done = net_.side(i).poll(max);
  for (const auto& c : done) {
    if (c.is_recv)
      sides_[i].eng->on_recv_completion(c.recv);
    else
      sides_[i].eng->on_send_completion(c.send);
  }
  flush(i);
  return done.size();
}

std::vector<engine::event> engine_pair::events(int i) {
  std::vector<engine::event> out;
  sides_[i].eng->take_events(out);
  return out;
}

std::string engine_pair::violation(int i) const {
  const auto& stats = net_.side(i).stats();
  return stats.violations > 0 ? stats.last_violation : std::string{};
}

bool engine_pair::guards_intact() const {
  for (const auto& s : sides_)
    if (!s.target_list->guards_intact() || !s.recv_ring->guards_intact() ||
        !s.send_ring->guards_intact())
      return false;
  return true;
}

}  // namespace riomesh::sim
