#include <riomesh/actors/placement/lent_buffers.hpp>

namespace riomesh::actors {

namespace {
constexpr std::uint64_t page = 4096;
}

std::optional<std::uint64_t> lent_buffers::next_offset(std::uint64_t size) const {
  // A page between loans: a peer that reads past one finds no map.
  auto span = (size + page - 1) / page * page + page;
  if (size == 0 || next_ >= wire_envelope::lent_end || span > wire_envelope::lent_end - next_)
    return std::nullopt;
  return next_;
}

std::uint64_t lent_buffers::lend(buffer b, bool mapped) {
  auto at = next_;
  next_ += (b.size() + page - 1) / page * page + page;
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
