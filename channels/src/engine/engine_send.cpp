// The sending half of the rsocket engine: stream DATA into the peer's
// published halves, iomap publications, and riowrite.
#include <riomesh/channels/engine/engine.hpp>

#include <algorithm>
#include <limits>

namespace riomesh::engine {
namespace {

// Where a gathered riowrite's sources, or a scattered rioread's
// destinations, stand: each work request takes the next bytes of the list.
class sge_cursor {
 public:
  sge_cursor(const local_sge* list, std::size_t count) : list_(list), count_(count) {}

  // Up to `limit` more bytes into `w`'s SGEs (at most `max_sge` of them,
  // clamped to 1..max_work_sges); how many.
  std::size_t fill(work& w, std::size_t limit, std::uint32_t max_sge) {
    std::size_t sges = std::clamp<std::size_t>(max_sge, 1, max_work_sges);
    std::size_t chunk = 0;
    w.num_sge = 0;
    while (chunk < limit && w.num_sge < sges && index_ < count_) {
      const auto& s = list_[index_];
      if (at_ == s.length) {
        ++index_;
        at_ = 0;
        continue;
      }
      auto k = std::min<std::size_t>(limit - chunk, s.length - at_);
      w.sge[w.num_sge++] = {s.addr + at_, static_cast<std::uint32_t>(k), s.lkey};
      at_ += k;
      chunk += k;
    }
    return chunk;
  }

 private:
  const local_sge* list_;
  std::size_t count_, index_ = 0, at_ = 0;
};

}  // namespace

bool engine::has_credit() const {
  return sseq_no_ != sseq_comp_;
}

wire::sge engine::current_target() const {
  return wire::decode_sge(mem_.target_list.base + wire::sge_size * target_slot_,
                          wire::host_order());
}

// The slot is updated in its registered memory before the write is posted:
// once the last bytes of a half are on the wire, the peer may republish into
// this very slot, and must find it already exhausted (rsocket-wire.md §3.2).
void engine::consume_target(std::uint32_t n) {
  auto slot = current_target();
  slot.addr += n;
  slot.length -= n;
  wire::encode(slot, mem_.target_list.base + wire::sge_size * target_slot_, wire::host_order());
  if (slot.length == 0)
    target_slot_ = (target_slot_ + 1) % wire::target_sgl_slots;
}

bool engine::can_send() const {
  return send_blocker() == nullptr;
}

const char* engine::send_blocker() const {
  if (phase_ != phase::connected)
    return "not connected";
  if (!write_open_)
    return "its write side is shut";
  if (!queue_.data_available())
    return "its send queue is full";
  if (ring_.available() < low_water_)
    return "its send ring is full";
  if (!has_credit())
    return "no credit from the peer";
  if (current_target().length == 0)
    return "no receive buffer from the peer";
  return nullptr;
}

void engine::note_blocked(bool stream) {
  (stream ? stream_blocked_ : iowrite_blocked_) = true;
  if (stream && !has_credit())
    ++credit_stalls_;
}

void engine::check_writable() {
  bool stream = stream_blocked_ && can_send() && !iomaps_.has_pending();
  bool iowrite = iowrite_blocked_ && phase_ == phase::connected && queue_.data_available() &&
                 ring_.available() >= low_water_;
  if (!stream && !iowrite)
    return;
  stream_blocked_ = iowrite_blocked_ = false;
  emit({event_kind::writable});
}

std::optional<io_result> engine::refuse_write() const {
  if (phase_ == phase::idle)
    return io_result{0, status::invalid};
  if (failed() || (phase_ == phase::disconnected && write_open_))
    return io_result{0, status::closed};
  if (!write_open_)
    return io_result{0, status::shut_down};
  return std::nullopt;
}

// Entries go out before any later DATA, so the peer has them by the time it
// reads whatever announces them.
bool engine::publish_iomaps() {
  while (iomaps_.has_pending()) {
    if (phase_ != phase::connected || !queue_.data_available() ||
        ring_.available() < wire::iomap_entry_size || (peer_counts_iomap_ && !has_credit())) {
      note_blocked(true);
      return false;
    }
    const auto& pub = iomaps_.next_pending();
    unsigned char entry[wire::iomap_entry_size];
    wire::encode(pub.entry, entry, peer_order_);
    work w;
    w.kind = work_kind::write_with_imm;
    w.remote_addr = peer_iomap_.addr + wire::iomap_entry_size * pub.index;
    w.rkey = peer_iomap_.key;
    w.imm = *wire::encode({wire::op::iomap_sgl, pub.index});
    w.num_sge = ring_.put(entry, sizeof entry, w.sge);
    w.inline_data = sizeof entry <= params_.inline_size;
    posted_wr record;
    record.role = wr_role::iomap;
    record.ring_bytes = sizeof entry;
    // A plain rsocket never returns the credit of an IOMAP_SGL (its known
    // leak): count it only toward a peer that counts it back.
    if (peer_counts_iomap_)
      ++sseq_no_;
    iomaps_.pop_pending();
    post(w, record);
  }
  return true;
}

io_result engine::send(const void* data, std::size_t length) {
  if (auto refused = refuse_write())
    return *refused;
  return write_stream(static_cast<const unsigned char*>(data), length);
}

io_result engine::write_stream(const unsigned char* data, std::size_t length) {
  if (length == 0)
    return {0, status::ok};
  if (!publish_iomaps())
    return {0, status::would_block};
  // Small first, doubling: the first bytes leave early and big sends still
  // end up in max_transfer pieces (rsend's overlap scheme, §3.2).
  std::size_t chunk_limit = std::min(params_.first_chunk, params_.max_transfer);
  std::size_t sent = 0;
  while (sent < length && can_send()) {
    std::size_t left = length - sent;
    std::size_t chunk = std::min(chunk_limit, left);
    if (chunk_limit < left)
      chunk_limit = std::min<std::size_t>(chunk_limit * 2, params_.max_transfer);
    chunk = std::min({chunk, ring_.available(), std::size_t{current_target().length},
                      std::size_t{wire::max_data_length}});
    auto target = current_target();
    work w;
    w.kind = work_kind::write_with_imm;
    w.remote_addr = target.addr;
    w.rkey = target.key;
    w.imm = *wire::encode({wire::op::data, static_cast<std::uint32_t>(chunk)});
    w.num_sge = ring_.put(data + sent, chunk, w.sge);
    w.inline_data = chunk <= params_.inline_size;
    consume_target(static_cast<std::uint32_t>(chunk));
    ++sseq_no_;
    posted_wr record;
    record.role = wr_role::data;
    record.ring_bytes = static_cast<std::uint32_t>(chunk);
    post(w, record);
    sent += chunk;
  }
  if (sent < length) {
    note_blocked(true);
    return {sent, status::would_block};
  }
  return {sent, status::ok};
}

iomap_table::added engine::riomap(const region& r, bool remote_write,
                                  std::optional<std::uint64_t> offset) {
  if (phase_ != phase::connected)
    return {failed() || phase_ == phase::disconnected ? status::closed : status::invalid};
  auto added = iomaps_.add(r, remote_write, offset);
  if (added.st == status::ok)
    publish_iomaps();
  return added;
}

status engine::riounmap(std::uint64_t addr, std::uint64_t length) {
  auto st = iomaps_.remove(addr, length);
  if (st == status::ok && phase_ == phase::connected)
    publish_iomaps();
  return st;
}

std::optional<wire::iomap_entry> engine::find_target_iomap(std::uint64_t offset) const {
  for (std::uint32_t i = 0; i < params_.iomap_slots; ++i) {
    auto entry = target_iomap(i);
    if (entry.contains(offset))
      return entry;
  }
  return std::nullopt;
}

wire::iomap_entry engine::target_iomap(std::uint32_t index) const {
  if (index >= params_.iomap_slots)
    return {};
  return wire::decode_iomap_entry(mem_.target_list.base + wire::iomap_slot_offset(index),
                                  wire::host_order());
}

io_result engine::riowrite(const local_sge& source, std::uint64_t offset, std::uint64_t token) {
  return riowrite_sges(&source, 1, offset, token);
}

io_result engine::riowrite_sges(const local_sge* sources, std::size_t count, std::uint64_t offset,
                                std::uint64_t token) {
  if (auto refused = refuse_write())
    return *refused;
  std::size_t length = 0;
  for (std::size_t i = 0; i < count; ++i)
    length += sources[i].length;
  return write_mapped(nullptr, sources, count, length, offset, token);
}

io_result engine::riowrite_copy(const void* data, std::size_t length, std::uint64_t offset) {
  if (auto refused = refuse_write())
    return *refused;
  return write_mapped(static_cast<const unsigned char*>(data), nullptr, 0, length, offset, 0);
}

// Writes [offset, offset + length) of the peer's mapped space, one mapping
// at a time: a write never crosses the end of an entry. The bytes come
// from the send ring (a copy) or from the sources, read in order, a work
// request taking as many as it may carry.
io_result engine::write_mapped(const unsigned char* copy_from, const local_sge* sources,
                               std::size_t count, std::size_t length, std::uint64_t offset,
                               std::uint64_t token) {
  if (length == 0)
    return {0, status::ok};
  if (offset > std::numeric_limits<std::uint64_t>::max() - length)
    return {0, status::invalid};
  if (!publish_iomaps())
    return {0, status::would_block};
  std::size_t chunk_limit = std::min(params_.first_chunk, params_.max_transfer);
  std::size_t written = 0;
  sge_cursor from(sources, count);
  status stopped = status::ok;
  while (written < length) {
    std::uint64_t at = offset + written;
    auto entry = find_target_iomap(at);
    if (!entry) {
      stopped = status::no_mapping;
      break;
    }
    std::size_t left = length - written;
    std::size_t in_entry = entry->target.length - (at - entry->offset);
    if (!queue_.data_available() ||
        (copy_from && ring_.available() < std::min<std::size_t>(low_water_, left))) {
      note_blocked(false);
      stopped = status::would_block;
      break;
    }
    work w;
    w.kind = work_kind::write;
    w.remote_addr = entry->target.addr + (at - entry->offset);
    w.rkey = entry->target.key;
    posted_wr record;
    record.role = wr_role::iowrite;
    record.token = token;
    std::size_t chunk;
    if (copy_from) {
      chunk = std::min(chunk_limit, left);
      if (chunk_limit < left)
        chunk_limit = std::min<std::size_t>(chunk_limit * 2, params_.max_transfer);
      chunk = std::min({chunk, ring_.available(), in_entry});
      w.num_sge = ring_.put(copy_from + written, chunk, w.sge);
      record.ring_bytes = static_cast<std::uint32_t>(chunk);
    } else {
      chunk =
          from.fill(w, std::min({left, in_entry, std::size_t{params_.max_write}}), params_.max_sge);
    }
    w.inline_data = chunk <= params_.inline_size;
    post(w, record);
    written += chunk;
  }
  if (written > 0 && sources) {  // a copy is reusable at once: nothing to report
    auto& last = queue_.newest();
    last.last = true;
    last.token_bytes = written;
  }
  return {written, stopped};
}

// Reads go where writes would: the peer's iomap entries say where its
// mapped space lies. They take send queue slots like writes and nothing of
// the ring; the queue pair holds back those beyond its initiator depth.
io_result engine::rioread(const local_sge* into, std::size_t count, std::uint64_t offset,
                          std::uint64_t token) {
  if (auto refused = refuse_write())
    return *refused;
  if (params_.max_rd_atomic == 0)
    return {0, status::unsupported};
  std::size_t length = 0;
  for (std::size_t i = 0; i < count; ++i)
    length += into[i].length;
  if (length == 0)
    return {0, status::ok};
  if (offset > std::numeric_limits<std::uint64_t>::max() - length)
    return {0, status::invalid};
  std::size_t done = 0;
  sge_cursor to(into, count);
  status stopped = status::ok;
  while (done < length) {
    std::uint64_t at = offset + done;
    auto entry = find_target_iomap(at);
    if (!entry) {
      stopped = status::no_mapping;
      break;
    }
    if (!queue_.data_available()) {
      note_blocked(false);
      stopped = status::would_block;
      break;
    }
    std::size_t in_entry = entry->target.length - (at - entry->offset);
    std::size_t limit = std::min({length - done, in_entry, std::size_t{params_.max_write}});
    work w;
    w.kind = work_kind::read;
    w.remote_addr = entry->target.addr + (at - entry->offset);
    w.rkey = entry->target.key;
    std::size_t chunk = to.fill(w, limit, params_.max_sge);
    posted_wr record;
    record.role = wr_role::ioread;
    record.token = token;
    post(w, record);
    done += chunk;
  }
  if (done > 0) {
    auto& last = queue_.newest();
    last.last = true;
    last.token_bytes = done;
  }
  return {done, stopped};
}

io_result engine::rioatomic(work_kind kind, const local_sge& result, std::uint64_t offset,
                            std::uint64_t a, std::uint64_t b, std::uint64_t token) {
  if (auto refused = refuse_write())
    return *refused;
  if (params_.max_rd_atomic == 0)
    return {0, status::unsupported};
  if ((kind != work_kind::fetch_add && kind != work_kind::compare_swap) || result.length != 8 ||
      offset > std::numeric_limits<std::uint64_t>::max() - 8)
    return {0, status::invalid};
  auto entry = find_target_iomap(offset);
  if (!entry)
    return {0, status::no_mapping};
  if (entry->target.length - (offset - entry->offset) < 8)
    return {0, status::invalid};  // a word across the entry's end is no word
  std::uint64_t remote = entry->target.addr + (offset - entry->offset);
  if (remote % 8 != 0)
    return {0, status::invalid};
  if (!queue_.data_available()) {
    note_blocked(false);
    return {0, status::would_block};
  }
  work w;
  w.kind = kind;
  w.remote_addr = remote;
  w.rkey = entry->target.key;
  w.num_sge = 1;
  w.sge[0] = result;
  w.compare_add = a;
  w.swap = b;
  posted_wr record;
  record.role = wr_role::ioatomic;
  record.token = token;
  post(w, record);
  return {8, status::ok};
}

}  // namespace riomesh::engine
