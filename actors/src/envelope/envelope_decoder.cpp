#include <riomesh/actors/envelope/envelope_decoder.hpp>

#include <riomesh/channels/wire/byte_order.hpp>

#include <algorithm>
#include <cstring>

namespace riomesh::actors {
namespace {

bool known_kind(std::uint8_t k) {
  return k >= static_cast<std::uint8_t>(envelope_kind::message) &&
         k <= static_cast<std::uint8_t>(envelope_kind::arena);
}

}  // namespace

bool envelope_decoder::fail(const std::string& why) {
  error_ = "envelope " + std::to_string(count_ + 1) + ": " + why;
  return false;
}

bool envelope_decoder::check_header() {
  const unsigned char* h = buf_;
  if (wire::load_le<std::uint32_t>(h) != wire_envelope::magic)
    return fail("bad magic (not a riomesh envelope, or the stream lost its place)");
  if (h[4] != wire_envelope::version)
    return fail("version " + std::to_string(h[4]) + ", this node speaks " +
                std::to_string(wire_envelope::version));
  if (!known_kind(h[5]))
    return fail("unknown kind " + std::to_string(h[5]));
  current_ = envelope{};
  current_.kind = static_cast<envelope_kind>(h[5]);
  buffers_left_ = wire::load_le<std::uint16_t>(h + 6);
  current_.sender = wire::load_le<std::uint64_t>(h + 8);
  current_.receiver = wire::load_le<std::uint64_t>(h + 16);
  current_.request_id = wire::load_le<std::uint64_t>(h + 24);
  body_left_ = wire::load_le<std::uint32_t>(h + 32);
  current_.flags = wire::load_le<std::uint32_t>(h + 36);
  if (current_.flags & ~(envelope::body_placed | envelope::lent))
    return fail("unknown flags " + std::to_string(current_.flags));
  bool carries = current_.kind == envelope_kind::message ||
                 current_.kind == envelope_kind::request ||
                 current_.kind == envelope_kind::response;
  if (current_.flags & envelope::lent) {
    if (!limits_.accepts_lent)
      return fail("lent buffers, which this node did not offer to fetch");
    if (!carries || buffers_left_ == 0)
      return fail(std::string{"a "} + to_string(current_.kind) + " with lent buffers");
  }
  if (current_.flags & envelope::body_placed) {
    if (!carries || buffers_left_ == 0 || body_left_ != 0)
      return fail(std::string{"a "} + to_string(current_.kind) +
                  " with a placed body needs one buffer for it and no inline body");
  }
  if (buffers_left_ > limits_.max_buffers)
    return fail(std::to_string(buffers_left_) + " buffers, more than the " +
                std::to_string(limits_.max_buffers) + " allowed");
  if (body_left_ > limits_.max_body)
    return fail("body of " + std::to_string(body_left_) + " bytes, more than the " +
                std::to_string(limits_.max_body) + " allowed");
  if (current_.kind == envelope_kind::release && body_left_ != 0)
    return fail("a release carries no body");
  if (current_.kind == envelope_kind::farewell && (buffers_left_ != 0 || body_left_ != 0))
    return fail("a farewell carries no buffers and no body");
  if (current_.kind == envelope_kind::arena && body_left_ != wire_arena_step::body_size)
    return fail("an arena step carries a " + std::to_string(wire_arena_step::body_size) +
                "-byte body");
  if (current_.kind == envelope_kind::piece && (buffers_left_ != 1 || body_left_ != 12))
    return fail("a piece carries one buffer and a 12-byte body");
  bool control =
      (current_.kind >= envelope_kind::resolve && current_.kind <= envelope_kind::down) ||
      current_.kind >= envelope_kind::watch;
  // A use-once grant's write carries its bytes: one buffer.
  if (current_.kind == envelope_kind::grant_use && buffers_left_ > 1)
    return fail("a grant use carries one buffer at most");
  if (control && current_.kind != envelope_kind::grant_use && buffers_left_ != 0)
    return fail(std::string{"a "} + to_string(current_.kind) + " carries no buffers");
  current_.buffers.reserve(buffers_left_);
  current_.body.reserve(body_left_);
  return true;
}

// Two buffers of one envelope sharing arena space: the receiver would hand
// the application one buffer's bytes inside another's, and later give the
// space back twice. Allocations are whole granules, so compare those.
bool envelope_decoder::check_overlaps() {
  const auto& b = current_.buffers;
  if (b.size() < 2)
    return true;
  std::vector<std::size_t> order(b.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return b[x].offset < b[y].offset; });
  auto granule = [](std::uint64_t n) {
    return (n + wire_envelope::granule - 1) / wire_envelope::granule * wire_envelope::granule;
  };
  for (std::size_t k = 1; k < order.size(); ++k) {
    const auto& lo = b[order[k - 1]];
    const auto& hi = b[order[k]];
    if (lo.offset + granule(lo.length) > hi.offset) {
      auto i = std::min(order[k - 1], order[k]), j = std::max(order[k - 1], order[k]);
      auto at = [&](std::size_t n) {
        return std::to_string(n) + " (offset " + std::to_string(b[n].offset) + ", length " +
               std::to_string(b[n].length) + ")";
      };
      return fail("buffers " + at(i) + " and " + at(j) + " overlap");
    }
  }
  return true;
}

bool envelope_decoder::check_descriptor(const arena_ref& r, std::size_t index) {
  auto where = "buffer " + std::to_string(index) + " (offset " + std::to_string(r.offset) +
               ", length " + std::to_string(r.length) + "): ";
  if (r.length == 0)
    return fail(where + "empty");
  // Overflow-safe: offset + length is never computed.
  // A release names space in the peer's arena, anything else ours.
  bool release = current_.kind == envelope_kind::release;
  if ((current_.flags & envelope::lent) && r.offset >= wire_envelope::lent_from) {
    if (r.offset >= wire_envelope::lent_end || r.length > wire_envelope::lent_end - r.offset)
      return fail(where + "a lent buffer past the sender's maps");
    return true;
  }
  auto size = release ? limits_.peer_arena_size : limits_.arena_size;
  if (r.offset >= size || r.length > size - r.offset)
    return fail(where + "outside the " + (release ? "peer's " : "") + "arena of " +
                std::to_string(size) + " bytes");
  return true;
}

std::size_t envelope_decoder::feed(const unsigned char* p, std::size_t n) {
  std::size_t used = 0;
  while (used < n && !failed() && !done_) {
    if (stage_ == stage::header || stage_ == stage::descriptors) {
      std::size_t want =
          stage_ == stage::header ? wire_envelope::header_size : wire_envelope::descriptor_size;
      std::size_t k = std::min(want - have_, n - used);
      std::memcpy(buf_ + have_, p + used, k);
      have_ += k;
      used += k;
      if (have_ < want)
        break;
      have_ = 0;
      if (stage_ == stage::header) {
        if (!check_header())
          break;
      } else {
        arena_ref r{wire::load_le<std::uint64_t>(buf_), wire::load_le<std::uint64_t>(buf_ + 8)};
        if (!check_descriptor(r, current_.buffers.size()))
          break;
        current_.buffers.push_back(r);
        --buffers_left_;
        if (buffers_left_ == 0 && !check_overlaps())
          break;
      }
      stage_ = buffers_left_ > 0 ? stage::descriptors : stage::body;
    } else {
      std::size_t k = std::min<std::size_t>(body_left_, n - used);
      current_.body.insert(current_.body.end(), p + used, p + used + k);
      body_left_ -= static_cast<std::uint32_t>(k);
      used += k;
    }
    if (stage_ == stage::body && body_left_ == 0) {
      done_ = std::move(current_);
      stage_ = stage::header;
      ++count_;
    }
  }
  return used;
}

std::optional<envelope> envelope_decoder::next() {
  auto out = std::move(done_);
  done_.reset();
  return out;
}

}  // namespace riomesh::actors
