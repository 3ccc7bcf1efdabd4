#include <riomesh/actors/connection/direct_fetch.hpp>
#include <riomesh/actors/connection/send_registrations.hpp>

namespace riomesh::actors {

fetch_flights::state fetch_flights::start(direct_fetch& f, std::string& why) {
  if (head_ == 0) {
    head_ = next_token_++;
    head_done_ = 0;
    auto& fl = flights_[head_];
    fl.into = f.into;
    fl.done = std::move(f.done);
    if (f.op == direct_fetch::kind::read && io_.registration())
      for (const auto& p : f.into.gathered() ? f.into.pieces() : std::vector<buffer>{f.into})
        if (auto lease = regs_.pin(p))
          fl.leases.push_back(*lease);
  }
  auto it = flights_.find(head_);
  auto& fl = it->second;
  if (f.op == direct_fetch::kind::read)
    return read(f, fl, why);
  auto op = f.op == direct_fetch::kind::fetch_add ? channels::atomic_op::fetch_add
                                                  : channels::atomic_op::compare_swap;
  auto* one_sided = io_.one_sided();
  auto r = one_sided ? one_sided->ioatomic(op, f.offset, f.a, f.b, head_)
                     : channels::io_result{0, channels::status::unsupported};
  if (r.st == channels::status::would_block)
    return state::waiting;
  if (r.st != channels::status::ok) {
    why = r.st == channels::status::invalid
              ? "an atomic needs an 8-byte word aligned in memory, within one map; the word at "
                "offset " +
                    std::to_string(f.offset) + " of the peer's maps is not one"
              : "an atomic at offset " + std::to_string(f.offset) +
                    " of the peer's maps: " + engine::to_string(r.st);
    fl.all_posted = fl.refused = true;
    head_ = 0;
    finish(it, 0);
    return r.st == channels::status::no_mapping ? state::unmapped : state::refused;
  }
  fl.calls = 1;
  fl.all_posted = true;
  head_ = 0;
  return state::posted;
}

fetch_flights::state fetch_flights::read(direct_fetch& f, flight& fl, std::string& why) {
  auto total = f.into.size();
  while (head_done_ < total) {
    std::vector<channels::one_sided_access::destination> into;
    std::size_t skip = head_done_;
    for (const auto& p : f.into.gathered() ? f.into.pieces() : std::vector<buffer>{f.into}) {
      if (skip >= p.size()) {
        skip -= p.size();
        continue;
      }
      into.push_back({const_cast<unsigned char*>(p.data()) + skip, p.size() - skip});
      skip = 0;
    }
    auto* one_sided = io_.one_sided();
    auto r = one_sided ? one_sided->ioread(into.data(), into.size(), f.offset + head_done_, head_)
                       : channels::io_result{0, channels::status::unsupported};
    if (r.bytes > 0) {
      ++fl.calls;
      head_done_ += r.bytes;
    }
    if (head_done_ == total)
      break;
    if (r.st == channels::status::would_block)
      return state::waiting;
    if (r.st != channels::status::ok || r.bytes == 0) {
      why = "a read of " + std::to_string(total) + " bytes at offset " +
            std::to_string(f.offset + head_done_) +
            " of the peer's maps: " + engine::to_string(r.st);
      fl.all_posted = fl.refused = true;
      auto it = flights_.find(head_);
      head_ = 0;
      if (it->second.calls == 0)
        finish(it, 0);
      if (r.st != channels::status::no_mapping)
        return state::refused;
      return head_done_ > 0 ? state::past_map : state::unmapped;
    }
  }
  fl.all_posted = true;
  auto it = flights_.find(head_);
  head_ = 0;
  if (it->second.calls == 0)  // nothing to read
    finish(it, 0);
  return state::posted;
}

fetch_flights::~fetch_flights() {
  for (const auto& [token, fl] : flights_)
    for (auto id : fl.leases)
      regs_.unpin(id);
}

bool fetch_flights::complete(const channels::event& e) {
  if (e.kind != channels::event_kind::ioread_done && e.kind != channels::event_kind::ioatomic_done)
    return false;
  auto it = flights_.find(e.token);
  if (it == flights_.end())
    return false;
  if (it->second.calls > 0)
    --it->second.calls;
  if (it->second.calls == 0 && it->second.all_posted)
    finish(it, e.value);
  return true;
}

void fetch_flights::finish(std::map<std::uint64_t, flight>::iterator it, std::uint64_t value) {
  auto fl = std::move(it->second);
  flights_.erase(it);
  for (auto id : fl.leases)
    regs_.unpin(id);
  if (!fl.refused && fl.done)
    fl.done(value);
}

}  // namespace riomesh::actors
