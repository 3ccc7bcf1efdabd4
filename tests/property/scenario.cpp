#include "scenario.hpp"

#include <pair.hpp>
#include <pattern.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>

namespace riomesh::property {
namespace {

using engine::status;

struct failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The message is only put together when the check fails: checks run on
// every step, and building strings there would dominate the run time.
template <class... Parts>
void expect(bool condition, const Parts&... parts) {
  if (condition)
    return;
  std::ostringstream what;
  (what << ... << parts);
  throw failure(what.str());
}

template <class T>
void put(std::vector<unsigned char>& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}
template <class T>
T get(const unsigned char* p) {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<T>(static_cast<T>(p[i]) << (8 * i));
  return v;
}

std::vector<unsigned char> record(char type, const std::vector<unsigned char>& body) {
  std::vector<unsigned char> out{static_cast<unsigned char>(type)};
  put<std::uint32_t>(out, static_cast<std::uint32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

struct config {
  sim::side_config side[2];
  std::uint64_t budget[2] = {0, 0};
  int send_bias = 50;  // percent of application actions that send
  bool cut = false;
  std::uint64_t cut_at = 0;

  std::string describe() const {
    std::ostringstream s;
    for (int i = 0; i < 2; ++i) {
      const auto& c = side[i];
      s << (i ? " b{" : "a{") << "sq=" << c.params.sq_size << " rq=" << c.params.rq_size
        << " inline=" << c.params.inline_size << " rbuf=" << c.recv_ring << " sbuf=" << c.send_ring
        << " iomap=" << c.params.iomap_slots << " credit=" << c.params.iomap_credit
        << " first=" << c.params.first_chunk << " sge=" << c.params.max_sge
        << " rd=" << c.params.max_rd_atomic << " bytes=" << budget[i] << "}";
    }
    s << " send_bias=" << send_bias;
    if (cut)
      s << " cut_at=" << cut_at;
    return s.str();
  }
};

template <class T, std::size_t N>
T pick(std::mt19937_64& rng, const T (&choices)[N]) {
  return choices[rng() % N];
}

config draw(std::mt19937_64& rng, const limits& lim) {
  config c;
  for (auto& s : c.side) {
    s.params.sq_size = pick(rng, {4u, 8u, 16u, 64u, 384u});
    s.params.rq_size = pick(rng, {4u, 8u, 16u, 64u, 384u});
    s.params.inline_size = pick(rng, {0u, 16u, 64u, 256u});
    s.params.iomap_slots = pick(rng, {0u, 1u, 4u, 16u});
    s.params.iomap_credit = rng() % 4 != 0;
    s.params.max_sge = pick(rng, {1u, 2u, 3u, 8u});  // real verbs: the queue pair's
    s.recv_ring = pick(rng, {std::size_t{64}, std::size_t{256}, std::size_t{4096},
                             std::size_t{65536}, std::size_t{262144}});
    s.send_ring =
        pick(rng, {std::size_t{128}, std::size_t{512}, std::size_t{8192}, std::size_t{131072}});
    if (lim.min_stream_bytes > 0) {
      s.recv_ring = pick(rng, {std::size_t{65536}, std::size_t{262144}, std::size_t{1u << 20}});
      s.send_ring = pick(rng, {std::size_t{8192}, std::size_t{131072}});
    }
    if (lim.tiny) {
      s.params.sq_size = pick(rng, {4u, 8u});
      s.params.rq_size = pick(rng, {4u, 8u});
      s.recv_ring = pick(rng, {std::size_t{64}, std::size_t{256}});
      s.send_ring = 128;
    }
    s.params.first_chunk = s.recv_ring < 4096 ? 16 : 2048;
  }
  for (int i = 0; i < 2; ++i) {
    // Log-uniform from 1 byte to the limit, and no more than the peer's
    // ring can carry in a sensible number of steps.
    double exponent = std::uniform_real_distribution<double>(
        0, std::log2(static_cast<double>(lim.max_stream_bytes)))(rng);
    auto bytes = static_cast<std::uint64_t>(std::exp2(exponent));
    c.budget[i] = std::min<std::uint64_t>(bytes, c.side[1 - i].recv_ring * 512);
    if (lim.min_stream_bytes > 0)
      c.budget[i] = lim.min_stream_bytes + rng() % (lim.max_stream_bytes - lim.min_stream_bytes);
  }
  // RDMA READs each way: the same on both sides, as the connection
  // manager settles them (over verbs, what the devices give).
  auto depth = pick(rng, {0u, 1u, 4u, 16u});
  for (auto& s : c.side)
    s.params.max_rd_atomic = depth;
  c.send_bias = lim.tiny ? 90 : pick(rng, {30, 50, 90});
  c.cut = lim.allow_cut && rng() % 10 == 0;
  c.cut_at = 1 + rng() % 20000;
  return c;
}

class app {
 public:
  app(int me, std::uint64_t stream_seed_out, std::uint64_t stream_seed_in, sim::engine_link& pair,
      std::uint64_t budget, outcome& out)
      : me_(me),
        pair_(pair),
        out_gen_(stream_seed_out),
        in_gen_(stream_seed_in),
        budget_(budget),
        out_(out) {}

  engine::engine& eng() { return pair_.eng(me_); }

  bool act(std::mt19937_64& rng, int send_bias) {
    handle_events();
    int roll = static_cast<int>(rng() % 100);
    bool progress = false;
    if (roll < send_bias)
      progress = send_some(rng);
    else if (roll < send_bias + (100 - send_bias) * 2 / 3)
      progress = recv_some(rng);
    else if (auto what = rng() % 3; what == 0)
      progress = map_one(rng);
    else
      progress = what == 1 ? iowrite_some(rng) : ioread_some(rng);
    return maybe_shutdown() || progress;
  }

  bool finished() const {
    return shut_wr_ && got_eof_ && sources_.empty() && my_maps_.empty() && reads_.empty() &&
           !reading_;
  }
  bool stopped() const { return got_eof_ || closed_; }

  void handle_events() {
    for (const auto& ev : pair_.events(me_)) {
      if (ev.kind == engine::event_kind::iowrite_done) {
        auto it = sources_.find(ev.token);
        expect(it != sources_.end(), "iowrite_done for unknown token ", ev.token);
        expect(ev.bytes <= it->second.bytes_left, "iowrite_done for more bytes than written");
        it->second.bytes_left -= ev.bytes;
        if (it->second.bytes_left == 0) {
          pair_.deregister(me_, it->second.reg.lkey);
          sources_.erase(it);
        }
      } else if (ev.kind == engine::event_kind::ioread_done) {
        read_landed(ev);
      } else if (ev.kind == engine::event_kind::closed) {
        closed_ = true;
      }
    }
  }

  bool maps_guarded() const {
    for (const auto& [id, m] : my_maps_)
      if (!m->guards_intact())
        return false;
    return true;
  }

 private:
  // A map the peer may write: its pieces, each its own buffer and
  // registration, mapped at consecutive offsets from `offset`.
  struct owned_map {
    struct piece {
      explicit piece(std::size_t n) : buf(n) {}
      sim::guarded_buffer buf;
      engine::region reg;
    };
    std::vector<std::unique_ptr<piece>> pieces;
    std::uint64_t offset = 0, length = 0;

    bool guards_intact() const {
      for (const auto& p : pieces)
        if (!p->buf.guards_intact())
          return false;
      return true;
    }
    // Whether [at, at + n) of the offset space crosses a piece's end.
    bool spans(std::uint64_t at, std::size_t n) const {
      std::uint64_t end = offset;
      for (const auto& p : pieces) {
        end += p->buf.size();
        if (at < end)
          return at + n > end;
      }
      return false;
    }
    // The bytes at [at, at + n) of the map's offset space, across pieces.
    std::vector<unsigned char> bytes(std::uint64_t at, std::size_t n) const {
      std::vector<unsigned char> out;
      std::uint64_t start = offset;
      for (const auto& p : pieces) {
        std::uint64_t end = start + p->buf.size();
        if (at < end && at + n > start) {
          auto from = std::max(at, start), to = std::min<std::uint64_t>(at + n, end);
          out.insert(out.end(), p->buf.data() + (from - start), p->buf.data() + (to - start));
        }
        start = end;
      }
      return out;
    }
  };
  struct peer_map {
    std::uint32_t id, length;
    std::uint64_t offset;
    int writes_left;
    std::uint32_t next = 0;            // first byte not yet written
    std::vector<unsigned char> wrote;  // what we wrote there, to read back
  };
  // A read of bytes we wrote into a peer's map, into up to 3 destinations
  // (ranges of one buffer); resumed with the same token where the queue
  // stopped taking it.
  struct ioread_op {
    std::uint32_t map_id = 0;
    std::uint64_t at = 0;
    std::size_t length = 0, done = 0, landed = 0;
    std::unique_ptr<sim::guarded_buffer> into;
    engine::region reg;
    std::vector<unsigned char> expected;
    std::vector<std::size_t> cuts;
  };
  struct iowrite_op {
    std::uint32_t map_id;
    std::uint64_t at;
    std::size_t length, done = 0;
    std::unique_ptr<sim::guarded_buffer> src;
    engine::region reg;
    std::uint64_t token, sum;
    bool zero_copy;
    // Zero-copy from byte ranges of the source, one after another: where
    // each range after the first starts (none: one range).
    std::vector<std::size_t> cuts = {};

    // The source's ranges from `done` on, as scatter-gather entries.
    std::vector<engine::local_sge> sges() const {
      std::vector<engine::local_sge> out;
      std::size_t from = done;
      for (std::size_t k = 0; k <= cuts.size(); ++k) {
        std::size_t end = k < cuts.size() ? cuts[k] : length;
        if (end > from) {
          out.push_back({reg.addr() + from, static_cast<std::uint32_t>(end - from), reg.lkey});
          from = end;
        }
      }
      return out;
    }
  };
  struct source {
    std::unique_ptr<sim::guarded_buffer> src;
    engine::region reg;
    std::uint64_t bytes_left;
  };

  bool next_record(std::mt19937_64& rng) {
    outpos_ = 0;
    if (!control_.empty()) {
      outbuf_ = std::move(control_.front());
      control_.pop_front();
      return true;
    }
    if (budget_ > 0) {
      int kind = static_cast<int>(rng() % 100);
      std::uint64_t n = kind < 60   ? 1 + rng() % 256
                        : kind < 85 ? 1 + rng() % 8192
                        : kind < 97 ? 1 + rng() % (128 * 1024)
                                    : 1 + rng() % (4 * 1024 * 1024);
      n = std::min(n, budget_);
      budget_ -= n;
      outbuf_.assign(1, 'D');
      put<std::uint32_t>(outbuf_, static_cast<std::uint32_t>(n));
      for (std::uint64_t i = 0; i < n; ++i)
        outbuf_.push_back(out_gen_.next());
      return true;
    }
    if (!sent_end_) {
      outbuf_ = record('E', {});
      sent_end_ = true;
      return true;
    }
    outbuf_.clear();
    return false;
  }

  bool send_some(std::mt19937_64& rng) {
    if (shut_wr_ || closed_)
      return false;
    if (outpos_ == outbuf_.size() && !next_record(rng))
      return false;
    auto r = eng().send(outbuf_.data() + outpos_, outbuf_.size() - outpos_);
    if (r.st == status::closed)
      return false;
    expect(r.st == status::ok || r.st == status::would_block, "send: ", engine::to_string(r.st));
    outpos_ += r.bytes;
    return r.bytes > 0;
  }

  bool recv_some(std::mt19937_64& rng) {
    if (got_eof_)
      return false;
    if (rng() % 3 == 0) {  // in place
      auto [p, n] = eng().peek();
      if (n > 0) {
        std::size_t k = 1 + rng() % n;
        feed(p, k);
        eng().consume(k);
        return true;
      }
    }
    std::size_t size = 1 + rng() % (rng() % 3 == 0 ? 65536 : 512);
    scratch_.resize(size);
    auto r = eng().recv(scratch_.data(), size);
    if (r.st == status::eof) {
      expect(header_fill_ == 0, "end of stream inside a record");
      got_eof_ = true;
      return true;
    }
    if (r.st == status::closed || r.st == status::would_block)
      return false;
    expect(r.st == status::ok, "recv: ", engine::to_string(r.st));
    feed(scratch_.data(), r.bytes);
    return r.bytes > 0;
  }

  void feed(const unsigned char* p, std::size_t n) {
    while (n > 0) {
      if (header_fill_ < 5) {
        header_[header_fill_++] = *p++;
        --n;
        if (header_fill_ == 5) {
          type_ = static_cast<char>(header_[0]);
          body_left_ = get<std::uint32_t>(header_ + 1);
          body_.clear();
          expect(std::string{"DMWFE"}.find(type_) != std::string::npos,
                 "stream corrupted: record type ", int{header_[0]});
          expect(type_ == 'D' || body_left_ <= 32, "stream corrupted: record length");
          if (body_left_ == 0)
            finish_record();
        }
        continue;
      }
      std::size_t k = std::min<std::size_t>(n, body_left_);
      if (type_ == 'D') {
        for (std::size_t i = 0; i < k; ++i)
          if (p[i] != in_gen_.next())
            throw failure("stream byte " + std::to_string(out_.stream_bytes + i) +
                          " differs from what was sent");
        out_.stream_bytes += k;
      } else {
        body_.insert(body_.end(), p, p + k);
      }
      p += k;
      n -= k;
      body_left_ -= static_cast<std::uint32_t>(k);
      if (body_left_ == 0)
        finish_record();
    }
  }

  void finish_record() {
    header_fill_ = 0;
    const unsigned char* b = body_.data();
    switch (type_) {
      case 'M':
        peer_maps_.push_back({get<std::uint32_t>(b), get<std::uint32_t>(b + 4),
                              get<std::uint64_t>(b + 8), static_cast<int>(rng_() % 4), 0,
                              std::vector<unsigned char>(get<std::uint32_t>(b + 4))});
        break;
      case 'W': {
        auto id = get<std::uint32_t>(b);
        auto len = get<std::uint32_t>(b + 4);
        auto at = get<std::uint64_t>(b + 8);
        auto sum = get<std::uint64_t>(b + 16);
        auto it = my_maps_.find(id);
        expect(it != my_maps_.end(), "W for unknown map");
        auto& m = *it->second;
        expect(at >= m.offset && at - m.offset + len <= m.length, "W outside the map");
        // The placed bytes are there before the record that announces them.
        auto placed = m.bytes(at, len);
        expect(test::checksum(placed.data(), placed.size()) == sum,
               "riowritten bytes not in place when the stream announced them");
        out_.placed_bytes += len;
        out_.split_writes += m.spans(at, len) ? 1 : 0;
        break;
      }
      case 'F': {
        auto it = my_maps_.find(get<std::uint32_t>(b));
        expect(it != my_maps_.end(), "F for unknown map");
        auto& m = *it->second;
        expect(m.guards_intact(), "bytes written outside a mapped region");
        for (auto& p : m.pieces) {
          auto st = eng().riounmap(p->reg.addr(), p->reg.length);
          expect(st == status::ok || eng().closed(), "riounmap failed");
          pair_.deregister(me_, p->reg.lkey);
        }
        my_maps_.erase(it);
        break;
      }
      case 'E':
        got_end_ = true;
        break;
      default:
        break;
    }
  }

  bool map_one(std::mt19937_64& rng) {
    if (sent_end_ || closed_ || my_maps_.size() >= 4)
      return false;
    std::size_t len = 1 + rng() % (rng() % 4 == 0 ? 65536 : 512);
    // A quarter of the maps are gathered: 2 to 4 pieces, cut at random bytes.
    std::size_t count = rng() % 4 == 0 ? std::min<std::size_t>(len, 2 + rng() % 3) : 1;
    std::vector<std::size_t> cuts{0, len};
    while (cuts.size() < count + 1) {
      auto c = 1 + rng() % (len - 1);
      if (std::find(cuts.begin(), cuts.end(), c) == cuts.end())
        cuts.push_back(c);
    }
    std::sort(cuts.begin(), cuts.end());
    auto m = std::make_unique<owned_map>();
    m->length = len;
    bool local_only = rng() % 8 == 0;
    // Pieces after the first go at offsets this side picks: consecutive.
    std::optional<std::uint64_t> offset;
    if (count > 1 || rng() % 2) {
      offset = next_offset_;
      next_offset_ += len + rng() % 100;
    }
    auto undo = [&] {
      for (auto& p : m->pieces) {
        if (p->reg.length > 0 && eng().riounmap(p->reg.addr(), p->reg.length) != status::ok)
          expect(eng().closed(), "riounmap of a piece");
        pair_.deregister(me_, p->reg.lkey);
      }
    };
    for (std::size_t k = 0; k < count; ++k) {
      auto piece = std::make_unique<owned_map::piece>(cuts[k + 1] - cuts[k]);
      piece->reg = pair_.register_buffer(me_, piece->buf, !local_only);
      auto at = offset ? std::optional<std::uint64_t>{*offset + cuts[k]} : std::nullopt;
      auto r = eng().riomap(piece->reg, !local_only, at);
      if (r.st != status::ok) {
        expect(r.st == status::no_space || r.st == status::closed,
               "riomap: ", engine::to_string(r.st));
        pair_.deregister(me_, piece->reg.lkey);
        undo();
        return false;
      }
      if (k == 0)
        m->offset = r.offset;
      m->pieces.push_back(std::move(piece));
    }
    if (local_only) {
      undo();
      return false;
    }
    std::vector<unsigned char> body;
    put<std::uint32_t>(body, next_id_);
    put<std::uint32_t>(body, static_cast<std::uint32_t>(len));
    put<std::uint64_t>(body, m->offset);
    control_.push_back(record('M', body));
    ++out_.maps;
    out_.gathered_maps += m->pieces.size() > 1 ? 1 : 0;
    my_maps_[next_id_++] = std::move(m);
    return true;
  }

  bool iowrite_some(std::mt19937_64& rng) {
    if (shut_wr_ || closed_)
      return false;
    if (!active_) {
      if (peer_maps_.empty())
        return false;
      auto idx = rng() % peer_maps_.size();
      auto& pm = peer_maps_[idx];
      if (reading_ && reads_[*reading_].map_id == pm.id)
        return false;  // done with it only once our read of it is posted
      if (pm.writes_left-- <= 0) {
        finish_peer_map(idx);
        return true;
      }
      // Each write takes fresh bytes of the map: a later write to the same
      // bytes could land before the peer has read the earlier announcement.
      if (pm.next == pm.length) {
        finish_peer_map(idx);
        return true;
      }
      std::size_t n = 1 + rng() % (pm.length - pm.next);
      std::size_t start = pm.next;
      pm.next += static_cast<std::uint32_t>(n);
      iowrite_op op{pm.id,
                    pm.offset + start,
                    n,
                    0,
                    std::make_unique<sim::guarded_buffer>(n),
                    {},
                    next_token_++,
                    0,
                    rng() % 2 == 0};
      for (std::size_t i = 0; i < n; ++i)
        op.src->data()[i] = static_cast<unsigned char>(rng());
      std::copy(op.src->data(), op.src->data() + n, pm.wrote.begin() + start);
      op.sum = test::checksum(op.src->data(), n);
      if (op.zero_copy)
        op.reg = pair_.register_buffer(me_, *op.src, false);
      if (op.zero_copy && n > 2 && rng() % 3 == 0) {
        for (int k = 0; k < 2; ++k)
          op.cuts.push_back(1 + rng() % (n - 1));
        std::sort(op.cuts.begin(), op.cuts.end());
      }
      // Its completions may come before the last of it is written.
      if (op.zero_copy)
        sources_[op.token] = {nullptr, op.reg, op.length};
      active_ = std::move(op);
    }
    auto& op = *active_;
    std::size_t left = op.length - op.done;
    engine::io_result r;
    if (!op.zero_copy) {
      r = eng().riowrite_copy(op.src->data() + op.done, left, op.at + op.done);
    } else {
      auto sges = op.sges();
      r = eng().riowrite_sges(sges.data(), sges.size(), op.at + op.done, op.token);
    }
    if (r.st == status::closed)
      return false;
    expect(r.st == status::ok || r.st == status::would_block,
           "riowrite: ", engine::to_string(r.st));
    op.done += r.bytes;
    if (op.done == op.length) {
      std::vector<unsigned char> body;
      put<std::uint32_t>(body, op.map_id);
      put<std::uint32_t>(body, static_cast<std::uint32_t>(op.length));
      put<std::uint64_t>(body, op.at);
      put<std::uint64_t>(body, op.sum);
      control_.push_back(record('W', body));
      if (op.zero_copy)
        if (auto it = sources_.find(op.token); it != sources_.end())
          it->second.src = std::move(op.src);
      active_.reset();
    }
    return r.bytes > 0;
  }

  // Reads back a random range of what we wrote into one of the peer's
  // maps, all of whose writes are posted: the responder runs our requests
  // in order, so the read finds them. Its 'F' may follow before the read
  // completes: the engine fences it behind the read, so the peer unmaps
  // only after the read took its bytes.
  bool ioread_some(std::mt19937_64& rng) {
    if (shut_wr_ || closed_ || eng().parameters().max_rd_atomic == 0)
      return false;
    if (!reading_) {
      std::vector<std::size_t> ready;
      for (std::size_t k = 0; k < peer_maps_.size(); ++k)
        if (peer_maps_[k].next > 0 && !(active_ && active_->map_id == peer_maps_[k].id))
          ready.push_back(k);
      if (ready.empty())
        return false;
      auto& pm = peer_maps_[ready[rng() % ready.size()]];
      std::size_t n = 1 + rng() % pm.next;
      std::size_t start = rng() % (pm.next - n + 1);
      ioread_op op;
      op.map_id = pm.id;
      op.at = pm.offset + start;
      op.length = n;
      op.into = std::make_unique<sim::guarded_buffer>(n);
      op.reg = pair_.register_buffer(me_, *op.into, false);
      op.expected.assign(pm.wrote.begin() + start, pm.wrote.begin() + start + n);
      if (n > 2 && rng() % 3 == 0) {
        for (int k = 0; k < 2; ++k)
          op.cuts.push_back(1 + rng() % (n - 1));
        std::sort(op.cuts.begin(), op.cuts.end());
      }
      reading_ = next_token_++;
      reads_[*reading_] = std::move(op);
    }
    auto& op = reads_[*reading_];
    std::vector<engine::local_sge> into;
    std::size_t from = op.done;
    for (std::size_t k = 0; k <= op.cuts.size(); ++k) {
      std::size_t end = k < op.cuts.size() ? op.cuts[k] : op.length;
      if (end > from) {
        into.push_back({op.reg.addr() + from, static_cast<std::uint32_t>(end - from), op.reg.lkey});
        from = end;
      }
    }
    auto r = eng().rioread(into.data(), into.size(), op.at + op.done, *reading_);
    if (r.st == status::closed)
      return false;
    expect(r.st == status::ok || r.st == status::would_block, "rioread: ", engine::to_string(r.st));
    op.done += r.bytes;
    if (op.done == op.length)
      reading_.reset();
    return r.bytes > 0;
  }

  void read_landed(const engine::event& ev) {
    auto it = reads_.find(ev.token);
    expect(it != reads_.end(), "ioread_done for unknown token ", ev.token);
    auto& op = it->second;
    op.landed += ev.bytes;
    expect(op.landed <= op.done, "ioread_done for more bytes than read");
    if (op.landed < op.length)
      return;
    expect(op.into->guards_intact(), "a read wrote outside its destination");
    expect(std::equal(op.expected.begin(), op.expected.end(), op.into->data()),
           "bytes read back differ from those written (", op.length, " at offset ", op.at, ")");
    out_.read_bytes += op.length;
    pair_.deregister(me_, op.reg.lkey);
    reads_.erase(it);
  }

  void finish_peer_map(std::size_t idx) {
    std::vector<unsigned char> body;
    put<std::uint32_t>(body, peer_maps_[idx].id);
    control_.push_back(record('F', body));
    peer_maps_.erase(peer_maps_.begin() + static_cast<std::ptrdiff_t>(idx));
  }

  bool maybe_shutdown() {
    if (shut_wr_ || closed_ || !got_end_ || active_ || reading_)
      return false;
    while (!peer_maps_.empty())  // the peer announces no more: release them all
      finish_peer_map(0);
    if (!sent_end_ || outpos_ != outbuf_.size() || !control_.empty())
      return false;
    auto st = eng().shutdown(engine::shutdown_how::write);
    expect(st == status::ok || eng().closed(), "shutdown failed");
    shut_wr_ = true;
    return true;
  }

  int me_;
  sim::engine_link& pair_;
  test::pattern out_gen_, in_gen_;
  std::uint64_t budget_;
  outcome& out_;
  std::mt19937_64 rng_{0};

  std::vector<unsigned char> outbuf_;
  std::size_t outpos_ = 0;
  std::deque<std::vector<unsigned char>> control_;
  bool sent_end_ = false, got_end_ = false, shut_wr_ = false, got_eof_ = false, closed_ = false;

  unsigned char header_[5];
  int header_fill_ = 0;
  char type_ = 0;
  std::uint32_t body_left_ = 0;
  std::vector<unsigned char> body_, scratch_;

  std::map<std::uint32_t, std::unique_ptr<owned_map>> my_maps_;
  std::uint32_t next_id_ = 1;
  std::uint64_t next_offset_ = 4096;
  std::vector<peer_map> peer_maps_;
  std::optional<iowrite_op> active_;
  std::optional<std::uint64_t> reading_;      // the read being posted, by token
  std::map<std::uint64_t, ioread_op> reads_;  // posted, until all of each landed
  std::uint64_t next_token_ = 1;
  std::map<std::uint64_t, source> sources_;
};

void check_invariants(sim::engine_link& pair, bool cut) {
  for (int i = 0; i < 2; ++i) {
    auto& e = pair.eng(i);
    auto st = e.state();
    const char* who = i ? "b: " : "a: ";
    if (e.connected())
      expect(static_cast<std::uint16_t>(st.send_limit - st.sends) <= st.peer_credits, who,
             "credits went negative");
    expect(st.control_in_flight <= wire::control_slots, who, "control budget exceeded");
    auto violation = pair.violation(i);
    expect(violation.empty(), who, violation);
    if (!cut) {
      expect(pair.remote_access_errors(i) == 0, who, "remote access error");
      expect(!e.failed(), who, "failed: ", e.reason());
    }
  }
}

// What an engine that made no progress waits for: to read a deadlock by.
std::string stall_report(const engine::engine& e) {
  auto st = e.state();
  std::ostringstream out;
  const char* blocker = e.send_blocker();
  out << (blocker ? std::string("cannot send: ") + blocker : std::string("can send")) << "; sends "
      << st.sends << " limit " << st.send_limit << " peer credits " << st.peer_credits
      << " consumed " << st.consumed << "; in flight: data " << st.data_in_flight << " control "
      << st.control_in_flight << "; unread " << st.queued_bytes << " received " << st.bytes_received
      << " published " << st.bytes_published;
  if (const auto* wr = e.oldest_posted())
    out << "; oldest posted: wr " << wr->wr_id << " role " << static_cast<int>(wr->role)
        << " bytes " << wr->bytes;
  else
    out << "; nothing posted";
  return out.str();
}

// Bounds a run without progress: in steps on the simulated fabric, where
// nothing happens between steps; in time on hardware, where writes land
// while we look elsewhere and the VM's emulated CPU is slow.
class idle_watch {
 public:
  explicit idle_watch(bool real_time) : real_time_(real_time) {}
  void saw(bool progress) {
    if (progress) {
      steps_ = 0;
      since_ = clock::now();
    } else {
      ++steps_;
    }
  }
  bool stuck() const {
    return real_time_ ? clock::now() - since_ > std::chrono::seconds(20) : steps_ >= 20000;
  }
  const char* limit() const { return real_time_ ? "20 s" : "20000 steps"; }

 private:
  using clock = std::chrono::steady_clock;
  bool real_time_;
  std::uint64_t steps_ = 0;
  clock::time_point since_ = clock::now();
};

}  // namespace

std::unique_ptr<sim::engine_link> simulated(const sim::side_config& a, const sim::side_config& b,
                                            std::uint64_t seed) {
  return std::make_unique<sim::engine_pair>(a, b, seed);
}

outcome run_scenario(std::uint64_t seed, const limits& lim, const link_factory& make) {
  outcome out;
  std::mt19937_64 rng(seed);
  config cfg = draw(rng, lim);
  out.config = cfg.describe();
  try {
    auto link = make(cfg.side[0], cfg.side[1], rng());
    auto& pair = *link;
    cfg.cut = cfg.cut && pair.can_cut();
    out.was_cut = cfg.cut;
    expect(pair.connect(rng() % 2 == 0), "connect failed: ", pair.eng(0).reason(),
           pair.eng(1).reason());
    std::uint64_t a_to_b = rng(), b_to_a = rng();
    app apps[2] = {app(0, a_to_b, b_to_a, pair, cfg.budget[0], out),
                   app(1, b_to_a, a_to_b, pair, cfg.budget[1], out)};
    std::uint64_t disconnect_at = 0;
    bool cut = false;
    idle_watch idle(pair.real_time());
    for (;;) {
      ++out.iterations;
      if (cfg.cut && !cut && out.iterations == cfg.cut_at) {
        pair.cut("cable pulled");
        cut = true;
        disconnect_at = out.iterations + rng() % 200;
      }
      if (cut && out.iterations == disconnect_at)
        for (int i = 0; i < 2; ++i)
          pair.eng(i).on_disconnected("connection manager: peer unreachable");
      bool progress = false;
      auto roll = rng() % 100;
      if (roll < 35) {
        progress = pair.step();
      } else if (roll < 55) {
        progress = pair.poll(static_cast<int>(roll % 2), 1 + rng() % 8) > 0;
      } else {
        int i = static_cast<int>(roll % 2);
        progress = apps[i].act(rng, cfg.send_bias);
        pair.flush(i);
      }
      check_invariants(pair, cut);
      if (apps[0].finished() && apps[1].finished())
        break;
      if (cut && out.iterations > disconnect_at && pair.eng(0).closed() && pair.eng(1).closed() &&
          pair.pending_completions(0) == 0 && pair.pending_completions(1) == 0)
        break;
      idle.saw(progress);
      if (idle.stuck())
        expect(false, "no progress for ", idle.limit(),
               " (deadlock):\n    a: ", stall_report(pair.eng(0)),
               "\n    b: ", stall_report(pair.eng(1)));
    }
    if (!cut) {
      // Close both ends; every byte was read, so this must end cleanly.
      pair.eng(0).shutdown(engine::shutdown_how::both);
      pair.eng(1).shutdown(engine::shutdown_how::both);
      idle_watch closing(pair.real_time());
      while (!(pair.eng(0).closed() && pair.eng(1).closed()) && !closing.stuck()) {
        pair.flush(0);
        pair.flush(1);
        bool moved = pair.step();
        moved = pair.poll(0, 8) > 0 || moved;
        moved = pair.poll(1, 8) > 0 || moved;
        if (!moved && !pair.real_time())
          break;
        closing.saw(moved);
      }
      expect(pair.eng(0).closed() && pair.eng(1).closed(), "close did not complete");
      expect(!pair.eng(0).failed() && !pair.eng(1).failed(), "close failed: ", pair.eng(0).reason(),
             " / ", pair.eng(1).reason());
    } else {
      expect(pair.eng(0).closed() && pair.eng(1).closed(), "a cut left an engine open");
    }
    expect(pair.guards_intact() && apps[0].maps_guarded() && apps[1].maps_guarded(),
           "bytes written outside a registered region");
  } catch (const failure& f) {
    out.ok = false;
    out.failure = f.what();
  } catch (const std::exception& e) {
    out.ok = false;
    out.failure = e.what();
  }
  return out;
}

void run_many(std::uint64_t first_seed, std::uint64_t count, const limits& lim,
              const link_factory& make, totals& t) {
  if (const char* one = std::getenv("RIOMESH_SEED")) {
    first_seed = std::strtoull(one, nullptr, 0);
    count = 1;
  }
  for (std::uint64_t seed = first_seed; seed < first_seed + count; ++seed) {
    auto out = run_scenario(seed, lim, make);
    if (!out.ok) {
      t.failure = "seed " + std::to_string(seed) + " failed after " +
                  std::to_string(out.iterations) + " steps: " + out.failure +
                  "\n  config: " + out.config + "\n  replay: RIOMESH_SEED=" + std::to_string(seed);
      return;
    }
    ++t.runs;
    t.cuts += out.was_cut;
    t.stream += out.stream_bytes;
    t.placed += out.placed_bytes;
    t.maps += out.maps;
    t.gathered += out.gathered_maps;
    t.split += out.split_writes;
    t.read += out.read_bytes;
  }
}

}  // namespace riomesh::property
