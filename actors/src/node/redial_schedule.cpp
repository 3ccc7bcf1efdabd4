#include <riomesh/actors/node/redial_schedule.hpp>

#include <algorithm>

namespace riomesh::actors {

void redial_schedule::add(const std::string& peer, clock::time_point now) {
  peers_[peer] = peer_state{phase::waiting, now, now, 0};
}

std::vector<std::string> redial_schedule::due(clock::time_point now) {
  std::vector<std::string> out;
  for (auto& [name, p] : peers_)
    if (p.at == phase::waiting && p.due <= now) {
      p.at = phase::dialing;
      out.push_back(name);
    }
  return out;
}

void redial_schedule::connected(const std::string& peer, clock::time_point now) {
  auto& p = peers_[peer];
  p.at = phase::connected;
  p.since = now;
}

void redial_schedule::failed(const std::string& peer, clock::time_point now) {
  auto& p = peers_[peer];
  // A connection that held long enough was a success: start over.
  if (p.at == phase::connected && now - p.since >= limits_.stable)
    p.failures = 0;
  ++p.failures;
  p.at = phase::waiting;
  p.due = now + delay(p.failures);
}

std::chrono::milliseconds redial_schedule::delay(unsigned failures) {
  auto base = limits_.first.count();
  for (unsigned i = 1; i < failures && base < limits_.cap.count(); ++i)
    base *= 2;
  base = std::min<long long>(base, limits_.cap.count());
  std::uniform_real_distribution<double> factor(1 - limits_.spread, 1 + limits_.spread);
  return std::chrono::milliseconds(
      static_cast<long long>(static_cast<double>(base) * factor(rng_)));
}

std::optional<redial_schedule::clock::time_point> redial_schedule::next(clock::time_point) const {
  std::optional<clock::time_point> soonest;
  for (const auto& [name, p] : peers_)
    if (p.at == phase::waiting && (!soonest || p.due < *soonest))
      soonest = p.due;
  return soonest;
}

unsigned redial_schedule::failures(const std::string& peer) const {
  auto it = peers_.find(peer);
  return it == peers_.end() ? 0 : it->second.failures;
}

}  // namespace riomesh::actors
