#include <riomesh/actors/connection/fetch_order.hpp>

#include <algorithm>

namespace riomesh::actors {

bool fetch_order::hold(inbound_message&& m, const std::vector<std::size_t>& lent,
                       std::string& error) {
  if (held_.size() >= limits_.max_held ||
      m.env.body.size() > limits_.max_held_bytes - held_bytes_) {
    error = std::to_string(held_.size()) + " messages (" + std::to_string(held_bytes_) +
            " bytes inline) wait behind lent buffers not fetched yet: more than the " +
            std::to_string(limits_.max_held) + " messages or " +
            std::to_string(limits_.max_held_bytes) + " bytes this node holds";
    return false;
  }
  waiting w;
  w.ticket = next_ticket_++;
  w.missing = lent;
  for (auto i : lent)
    todo_.push_back(
        {w.ticket, i, m.env.buffers[i].offset, m.env.buffers[i].length, m.env.receiver});
  held_bytes_ += m.env.body.size();
  w.m = std::move(m);
  held_.push_back(std::move(w));
  return true;
}

std::optional<fetch_order::job> fetch_order::next() {
  if (todo_.empty())
    return std::nullopt;
  const auto& j = todo_.front();
  if (taken_ > 0 && j.length > limits_.window - std::min(limits_.window, taken_))
    return std::nullopt;
  auto out = j;
  todo_.pop_front();
  taken_ += out.length;
  ++started_;
  return out;
}

void fetch_order::retry(const job& j) {
  todo_.push_front(j);
  taken_ -= std::min(taken_, j.length);
  --started_;
}

bool fetch_order::landed(const job& j, buffer into) {
  if (held_.empty() || j.ticket < held_.front().ticket || started_ == 0)
    return false;
  auto pos = j.ticket - held_.front().ticket;
  if (pos >= held_.size())
    return false;
  auto& w = held_[pos];
  auto it = std::find(w.missing.begin(), w.missing.end(), j.index);
  if (it == w.missing.end())
    return false;  // not lent, or landed already
  w.missing.erase(it);
  w.m.placed[j.index] = std::move(into);
  --started_;
  return true;
}

void fetch_order::take_ready(std::vector<inbound_message>& out) {
  while (!held_.empty() && held_.front().missing.empty()) {
    held_bytes_ -= held_.front().m.env.body.size();
    out.push_back(std::move(held_.front().m));
    held_.pop_front();
  }
}

}  // namespace riomesh::actors
