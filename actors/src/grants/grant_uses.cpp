#include <riomesh/actors/grants/grant_uses.hpp>

namespace riomesh::actors {

bool grant_uses::add(std::uint64_t op, grant_wait w) {
  std::lock_guard<std::mutex> guard(lock_);
  auto& on = links_[w.link];
  if (on.uses >= max_grant_uses)
    return false;
  ++on.uses;
  on.reads += w.into_map ? 1 : 0;
  waits_.emplace(op, std::move(w));
  return true;
}

void grant_uses::forget(std::uint64_t link, const grant_wait& w) {
  auto it = links_.find(link);
  if (it == links_.end())
    return;
  --it->second.uses;
  it->second.reads -= w.into_map ? 1 : 0;
  if (it->second.uses == 0)
    links_.erase(it);
}

std::optional<grant_wait> grant_uses::take(std::uint64_t op, std::uint64_t link) {
  std::lock_guard<std::mutex> guard(lock_);
  auto it = waits_.find(op);
  if (it == waits_.end() || it->second.link != link)
    return std::nullopt;
  auto w = std::move(it->second);
  waits_.erase(it);
  forget(link, w);
  return w;
}

void grant_uses::note_fetched(std::uint64_t op, std::uint64_t value) {
  std::lock_guard<std::mutex> guard(lock_);
  if (auto it = waits_.find(op); it != waits_.end())
    it->second.fetched = value;
}

std::size_t grant_uses::reads_in_flight(std::uint64_t link) const {
  std::lock_guard<std::mutex> guard(lock_);
  auto it = links_.find(link);
  return it == links_.end() ? 0 : it->second.reads;
}

std::vector<std::pair<std::uint64_t, grant_wait>> grant_uses::drop_link(std::uint64_t link) {
  std::vector<std::pair<std::uint64_t, grant_wait>> ended;
  std::lock_guard<std::mutex> guard(lock_);
  links_.erase(link);
  for (auto it = waits_.begin(); it != waits_.end();) {
    if (it->second.link == link) {
      ended.emplace_back(it->first, std::move(it->second));
      it = waits_.erase(it);
    } else {
      ++it;
    }
  }
  return ended;
}

std::size_t grant_uses::size() const {
  std::lock_guard<std::mutex> guard(lock_);
  return waits_.size();
}

bool parked_reads::waiting(std::uint64_t link) const {
  auto it = by_link_.find(link);
  return it != by_link_.end() && !it->second.empty();
}

bool parked_reads::push_back(std::uint64_t link, parked_read r) {
  auto& q = by_link_[link];
  if (q.size() >= max_grant_uses)
    return false;
  q.push_back(std::move(r));
  return true;
}

bool parked_reads::push_front(std::uint64_t link, parked_read r) {
  auto& q = by_link_[link];
  if (q.size() >= max_grant_uses)
    return false;
  q.push_front(std::move(r));
  return true;
}

std::optional<parked_read> parked_reads::pop_front(std::uint64_t link) {
  auto it = by_link_.find(link);
  if (it == by_link_.end() || it->second.empty())
    return std::nullopt;
  auto r = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty())
    by_link_.erase(it);
  return r;
}

std::size_t parked_reads::size(std::uint64_t link) const {
  auto it = by_link_.find(link);
  return it == by_link_.end() ? 0 : it->second.size();
}

std::deque<parked_read> parked_reads::drop_link(std::uint64_t link) {
  auto it = by_link_.find(link);
  if (it == by_link_.end())
    return {};
  auto q = std::move(it->second);
  by_link_.erase(it);
  return q;
}

}  // namespace riomesh::actors
