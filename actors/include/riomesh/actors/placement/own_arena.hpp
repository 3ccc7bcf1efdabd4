// The receiver's own arena as its peer may write into it: one segment or,
// while it moves (arena_steps.hpp), the one it moved from too. Each
// segment is memory of its own at an offset of the peer's view; a placed
// buffer must lie wholly within one, or the peer lied.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

namespace riomesh::actors {

// The peer's view of an arena sized by demand lies below this offset; the
// maps applications make start there.
constexpr std::uint64_t arena_span = std::uint64_t{1} << 40;

struct arena_segment {
  std::uint64_t offset = 0, size = 0;  // in the peer's view
  unsigned char* data = nullptr;
  std::shared_ptr<void> owner;  // the memory: views hold it too
  int fd = -1;                  // a memfd whose offset 0 is data, or -1
};

class own_arena {
 public:
  // The first segment, or the one moved to: new buffers land there.
  void add(arena_segment s);
  // The segment that holds [offset, offset + length), or null.
  const arena_segment* holding(std::uint64_t offset, std::uint64_t length) const;
  const arena_segment* current() const;
  bool in_current(std::uint64_t offset) const;
  // The peer left the segment at `offset`: forgotten (its views live on).
  bool remove(std::uint64_t offset);
  std::size_t segments() const { return by_offset_.size(); }
  std::uint64_t held_bytes() const;
  template <class F>
  void each(F&& f) const {
    for (const auto& [at, s] : by_offset_)
      f(s);
  }
  // Where the next segment goes: past every one so far, with a gap, so
  // that no merged release spans two.
  std::uint64_t next_offset() const { return next_; }

 private:
  std::map<std::uint64_t, arena_segment> by_offset_;
  std::uint64_t current_ = 0;
  std::uint64_t next_ = 0;
};

}  // namespace riomesh::actors
