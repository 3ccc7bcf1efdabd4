#include <riomesh/actors/placement/lent_buffers.hpp>

namespace riomesh::actors {

namespace {
constexpr std::uint64_t page = 4096;
}

std::optional<std::uint64_t> lent_buffers::next_offset(std::uint64_t size, bool mapped) const {
  // A page between loans: a peer that reads past one finds no map.
  auto span = (size + page - 1) / page * page + page;
  auto next = mapped ? next_mapped_ : next_pushed_;
  auto end = mapped ? wire_envelope::lent_pushed_from : wire_envelope::lent_end;
  if (size == 0 || next >= end || span > end - next)
    return std::nullopt;
  return next;
}

std::uint64_t lent_buffers::lend(buffer b, bool mapped) {
  auto& next = mapped ? next_mapped_ : next_pushed_;
  auto at = next;
  next += (b.size() + page - 1) / page * page + page;
  bytes_ += b.size();
  loans_.emplace(at, loan{std::move(b), mapped, false});
  return at;
}

lent_buffers::loan* lent_buffers::find(std::uint64_t offset) {
  auto it = loans_.find(offset);
  return it == loans_.end() ? nullptr : &it->second;
}

std::optional<lent_buffers::loan> lent_buffers::take(std::uint64_t offset) {
  auto it = loans_.find(offset);
  if (it == loans_.end())
    return std::nullopt;
  auto l = std::move(it->second);
  loans_.erase(it);
  bytes_ -= l.data.size();
  return l;
}

}  // namespace riomesh::actors
