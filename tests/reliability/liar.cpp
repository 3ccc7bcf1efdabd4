#include "liar.hpp"

#include <riomesh/actors/connection/session_drive.hpp>
#include <riomesh/actors/envelope/envelope.hpp>
#include <riomesh/actors/envelope/envelope_decoder.hpp>
#include <riomesh/actors/placement/arena_steps.hpp>
#include <riomesh/channels/listener.hpp>
#include <riomesh/channels/wire/byte_order.hpp>

#include <poll.h>

#include <stdexcept>

namespace riomesh::test {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

// The liar proves what `like` lets it prove: the secret, and a node key.
actors::credentials credentials_of(const config::settings& like) {
  actors::credentials c;
  c.secret = like.cluster.secret;
  if (!like.node.key.empty())
    c.key = actors::node_key::from_seed(like.node.key);
  return c;
}

}  // namespace

liar::liar(const std::string& name, const config::endpoint& to, const config::settings& like,
           bool with_session, const actors::node_identity& identity) {
  std::string error;
  ch_ = channels::connect(to, channels::channel_options::from(like), error);
  if (!ch_)
    throw std::runtime_error(name + ": connect: " + error);
  if (!with_session)
    return;
  // Terms a node would offer; the victim maps its arena for us on seeing them.
  actors::session_terms terms;
  terms.arena_size = 1 << 20;
  terms.max_body = 1 << 20;
  terms.max_buffers = 256;
  terms.identity = identity;
  actors::session_setup::options o;
  o.mine.name = name;
  o.mine.terms = terms;
  o.dialer = true;
  actors::session_setup setup(std::make_shared<actors::tls_context>(name, credentials_of(like)),
                              actors::over(*ch_, std::move(o)));
  auto deadline = clock_type::now() + 10s;
  while (!setup.established()) {
    if (setup.failed())
      throw std::runtime_error(name + ": session setup: " + setup.reason());
    if (clock_type::now() > deadline)
      throw std::runtime_error(name + ": session setup took over 10 s");
    if (!actors::drive_session(*ch_, setup))
      run_once(10);
  }
}

liar::~liar() = default;

void liar::run_once(int ms) {
  ch_->progress();
  pollfd p{ch_->wait_fd(), static_cast<short>(POLLIN | (ch_->wants_write() ? POLLOUT : 0)), 0};
  ch_->arm();
  ::poll(&p, 1, ms);
  ch_->progress();
}

void liar::say(const std::vector<unsigned char>& bytes) {
  std::size_t done = 0;
  auto deadline = clock_type::now() + 10s;
  while (done < bytes.size()) {
    auto r = ch_->send(bytes.data() + done, bytes.size() - done);
    done += r.bytes;
    if (ch_->closed())
      throw std::runtime_error("the victim closed before the lie was out: " + ch_->reason());
    if (clock_type::now() > deadline)
      throw std::runtime_error("the lie did not go out within 10 s");
    if (r.bytes == 0)
      run_once(10);
  }
  for (int i = 0; i < 5; ++i)  // let the fabric take it before we wait
    run_once(1);
}

std::uint64_t liar::resolve(const std::string& name) {
  actors::envelope ask;
  ask.kind = actors::envelope_kind::resolve;
  ask.request_id = 1;
  ask.body.assign(name.begin(), name.end());
  std::vector<unsigned char> bytes;
  actors::encode(ask, bytes);
  say(bytes);
  return hear(actors::envelope_kind::resolved).sender;
}

actors::envelope liar::hear(actors::envelope_kind kind, std::chrono::milliseconds limit) {
  for (auto it = heard_.begin(); it != heard_.end(); ++it)
    if (it->kind == kind) {
      auto e = std::move(*it);
      heard_.erase(it);
      return e;
    }
  auto& in = in_;
  auto deadline = clock_type::now() + limit;
  while (clock_type::now() < deadline) {
    for (auto [p, n] = ch_->peek(); n > 0; std::tie(p, n) = ch_->peek()) {
      ch_->consume(in.feed(p, n));
      if (in.failed())
        throw std::runtime_error("the victim's stream: " + in.error());
      while (auto e = in.next()) {
        if (e->kind == kind)
          return std::move(*e);
        if (heard_.size() < 1024)
          heard_.push_back(std::move(*e));
      }
    }
    if (ch_->closed())
      throw std::runtime_error("the victim closed the connection: " + ch_->reason());
    run_once(10);
  }
  throw std::runtime_error(std::string{"no "} + actors::to_string(kind) + " within the limit");
}

bool liar::wait_closed(std::chrono::milliseconds limit) {
  auto deadline = clock_type::now() + limit;
  while (!ch_->closed()) {
    if (clock_type::now() > deadline)
      return false;
    for (auto [p, n] = ch_->peek(); n > 0; std::tie(p, n) = ch_->peek())
      ch_->consume(n);  // whatever the victim still says
    ch_->tick(clock_type::now());
    run_once(20);
  }
  return true;
}

namespace {

std::vector<unsigned char> encoded(const actors::envelope& e) {
  std::vector<unsigned char> out;
  actors::encode(e, out);
  return out;
}

// A valid header for `e`, then `patch` applied to its bytes.
template <class Patch>
std::vector<unsigned char> patched(const actors::envelope& e, Patch patch) {
  auto out = encoded(e);
  patch(out.data());
  return out;
}

}  // namespace

std::vector<envelope_lie> envelope_lies(std::uint64_t victim_arena) {
  using actors::envelope;
  using actors::envelope_kind;
  std::vector<envelope_lie> lies;
  envelope outside{envelope_kind::message, 1, 1, 0, {{victim_arena - 100, 4096}}, {0}};
  lies.push_back(
      {"a buffer descriptor reaching past the arena", "outside the arena", encoded(outside)});
  envelope far{envelope_kind::message, 1, 1, 0, {{1ull << 62, 4096}}, {0}};
  lies.push_back({"a buffer descriptor far beyond the arena", "outside the arena", encoded(far)});
  lies.push_back({"an arena step leaving a segment never moved from",
                  "not the one this node moved from",
                  encoded(actors::encode_step({actors::arena_step::kind::left, 12345, 0}))});
  lies.push_back({"an arena moved over its own first segment, by a sender whose arena is fixed",
                  "moved its arena",
                  encoded(actors::encode_step({actors::arena_step::kind::moved, 0, 4096}))});
  auto unknown = actors::encode_step({});
  unknown.body[0] = 9;
  lies.push_back({"an arena step of an unknown kind", "unknown kind 9", encoded(unknown)});
  envelope release{envelope_kind::release, 0, 0, 0, {{0, 65536}}, {}};
  lies.push_back(
      {"a release of arena space never given", "release of arena space", encoded(release)});
  envelope plain{envelope_kind::message, 1, 1, 0, {}, {0}};
  lies.push_back(
      {"a declared count of 65535 buffers", "65535 buffers", patched(plain, [](unsigned char* h) {
         wire::store<std::uint16_t>(h + 6, 0xffff, wire::byte_order::little);
       })});
  lies.push_back(
      {"a declared body of 4 GiB", "4294967295 bytes", patched(plain, [](unsigned char* h) {
         wire::store<std::uint32_t>(h + 32, 0xffffffffu, wire::byte_order::little);
       })});
  std::vector<unsigned char> huge_total(12, 0);
  wire::store<std::uint64_t>(huge_total.data() + 4, 1ull << 60, wire::byte_order::little);
  envelope piece{envelope_kind::piece, 1, 1, 0, {{0, 4096}}, huge_total};
  lies.push_back(
      {"a streamed buffer declaring 2^60 bytes", "a streamed buffer of", encoded(piece)});
  // A new buffer index in every piece: each would be assembled apart.
  std::vector<unsigned char> many;
  for (std::uint32_t index = 0; index < 24; ++index) {
    std::vector<unsigned char> body(12, 0);
    wire::store<std::uint32_t>(body.data(), index, wire::byte_order::little);
    wire::store<std::uint64_t>(body.data() + 4, 64ull << 20, wire::byte_order::little);
    envelope p{envelope_kind::piece, 1, 1, 0, {{index * 4096ull, 4096}}, body};
    auto bytes = encoded(p);
    many.insert(many.end(), bytes.begin(), bytes.end());
  }
  lies.push_back({"24 pieces, each of a new streamed buffer", "buffers streaming at once", many});
  envelope overlapping{envelope_kind::message, 1, 1, 0, {{0, 8192}, {4096, 4096}}, {0}};
  lies.push_back(
      {"two buffers of one envelope in the same arena space", "overlap", encoded(overlapping)});
  // Rendezvous: loans this node never made, and one past the lender's range.
  constexpr auto lent_at = actors::wire_envelope::lent_from;
  envelope past_lent{
      envelope_kind::message, 1, 1, 0, {{actors::wire_envelope::lent_end - 100, 4096}}, {0},
      envelope::lent};
  lies.push_back({"a lent buffer reaching past the lender's range", "past the sender's maps",
                  encoded(past_lent)});
  lies.push_back({"a pull of a buffer never lent", "to be pushed: not lent",
                  encoded(actors::encode_step({actors::arena_step::kind::pull, lent_at, 0}))});
  lies.push_back({"a fetch said done of a buffer never lent", "says it fetched",
                  encoded(actors::encode_step({actors::arena_step::kind::fetched, lent_at, 64}))});
  lies.push_back({"a push said done that was never asked for", "says it pushed",
                  encoded(actors::encode_step({actors::arena_step::kind::pushed, lent_at, 0}))});
  lies.push_back({"bytes that are no envelope", "bad magic", std::vector<unsigned char>(64, 0x5a)});
  return lies;
}

}  // namespace riomesh::test
