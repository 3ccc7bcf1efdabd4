#include <riomesh/actors/connection/send_registrations.hpp>

namespace riomesh::actors {

std::optional<std::uint64_t> send_registrations::pin(const buffer& b) {
  auto* reg = io_.registration();
  if (!reg || b.empty())
    return std::nullopt;
  std::optional<channels::memory_pin> p;
  if (const auto* home = b.home_block())
    p = reg->pin_memory(home->base, home->length, home->keep);
  else if (b.where() == buffer::origin::user)
    p = reg->pin_memory(b.data(), b.size(), nullptr);
  if (!p) {
    ++stats_.per_write;
    return std::nullopt;
  }
  ++(p->fresh ? stats_.registrations : stats_.hits);
  return p->id;
}

}  // namespace riomesh::actors
