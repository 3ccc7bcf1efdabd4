// The two sides of grants alone (grant_owner.hpp, grant_holder.hpp), over
// one connection between two real links (tcp here, rdma in the VM), with a
// stand-in for the exchange around them (grant_port.hpp): what lands in
// the owner's memory, what each use's status says and in what order the
// holder's actors hear, and what the owner counts as a peer's misbehaviour.
#include "channel_pair.hpp"
#include "link_harness.hpp"

#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/actors/grants/grant_holder.hpp>
#include <riomesh/actors/grants/grant_owner.hpp>

#include <caf/actor_cast.hpp>
#include <caf/make_message.hpp>
#include <caf/scoped_actor.hpp>

#include <doctest/doctest.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>

using namespace riomesh;
using namespace riomesh::actors;
using namespace std::chrono_literals;

namespace {

constexpr auto rw = static_cast<std::uint8_t>(grant_rights::read_write);

// A node as far as its grants go: both sides, and the port they use,
// over its one link.
class grant_node final : public link_events, public grant_port {
 public:
  explicit grant_node(const std::string& name) : owner(*this, name), holder(*this, name) {}

  // What the port was asked to hand to an actor, in order.
  struct handed {
    caf::strong_actor_ptr to;
    caf::message msg;
  };

  grant_owner owner;
  grant_holder holder;
  std::shared_ptr<link> on;  // set before the I/O thread adopts it
  std::weak_ptr<grant_port> self;
  // A `then` rides on its use as the exchange's codec would put it there
  // (a body of one byte, for actor 1 of the owner's); otherwise every
  // `then` goes after the status, from the holder.
  bool rides = false;
  // What the owner delivered of `then` messages that rode: the actor, the body.
  std::vector<std::pair<std::uint64_t, std::vector<unsigned char>>> delivered;

  // link_events
  void established(link&) override {
    note([&] { up_ = true; });
  }
  void inbound(link& l, inbound_message& m) override {
    if (m.env.kind == envelope_kind::message)
      return note([&] { ++arrived_; });  // a grant carried to its holder
    if (m.env.kind == envelope_kind::grant_use)
      return owner.used(l, m);
    if (m.env.kind == envelope_kind::grant_status)
      return holder.answered(l, m.env);
  }
  void writable(link&) override {}
  void closed(link& l, const std::string& reason, bool) override {
    owner.link_closed(l);
    holder.link_closed(l, reason);
  }

  // grant_port
  std::weak_ptr<grant_port> lifetime() const override { return self; }
  std::shared_ptr<link> route_to(const std::string& peer) const override {
    return on && on->peer_name() == peer ? on : nullptr;
  }
  link::submitted submit(link& l, outbound_message&& m) override { return l.submit(std::move(m)); }
  void enqueue(const caf::strong_actor_ptr& to, const caf::strong_actor_ptr&,
               caf::message msg) override {
    note([&] { handed_.push_back({to, std::move(msg)}); });
  }
  void carry_then(link&, grant_request& r, outbound_message&, grant_wait& w) override {
    if (!rides || !w.then_to)
      return;
    r.then_to = 1;
    r.then_body = {0x42};
    w.then_to = nullptr;
    w.then = caf::message{};
  }
  void deliver(link&, inbound_message& m) override {
    note([&] { delivered.emplace_back(m.env.receiver, m.env.body); });
  }
  void misbehaved(link&, const std::string& what) override {
    note([&] { misbehaved_.push_back(what); });
  }

  void await_up() {
    std::unique_lock<std::mutex> guard(lock_);
    REQUIRE(cv_.wait_for(guard, 10s, [&] { return up_; }));
  }
  // Until `n` messages arrived from the peer.
  void await_arrived(std::size_t n) {
    std::unique_lock<std::mutex> guard(lock_);
    REQUIRE(cv_.wait_for(guard, 10s, [&] { return arrived_ >= n; }));
  }
  // The next hand-off to an actor; fails the test if none comes in 10 s.
  handed next() {
    std::unique_lock<std::mutex> guard(lock_);
    REQUIRE(cv_.wait_for(guard, 10s, [&] { return !handed_.empty(); }));
    auto h = std::move(handed_.front());
    handed_.pop_front();
    return h;
  }
  std::vector<std::string> misbehaviour() {
    std::lock_guard<std::mutex> guard(lock_);
    return misbehaved_;
  }

 private:
  template <class F>
  void note(F f) {
    std::lock_guard<std::mutex> guard(lock_);
    f();
    cv_.notify_all();
  }
  std::mutex lock_;
  std::condition_variable cv_;
  bool up_ = false;
  std::size_t arrived_ = 0;
  std::deque<handed> handed_;
  std::vector<std::string> misbehaved_;
};

// A use's status as its actor gets it.
struct status {
  std::uint64_t op = 0;
  grant_status st = grant_status::ok;
  std::string detail;
  std::uint64_t value = 0;
};

status status_of(const caf::message& m) {
  status s;
  REQUIRE(m.size() >= 4);
  REQUIRE(m.match_element<grant_done_atom>(0));
  s.op = m.get_as<std::uint64_t>(1);
  s.st = m.get_as<grant_status>(2);
  s.detail = m.get_as<std::string>(3);
  if (m.size() == 5)
    s.value = m.get_as<std::uint64_t>(4);
  return s;
}

// Node a holds, node b owns; each on its own I/O thread.
struct grant_pair : test::actor_system_holder {
  std::unique_ptr<test::io_thread> io_a = std::make_unique<test::io_thread>(*sys),
                                   io_b = std::make_unique<test::io_thread>(*sys);
  std::shared_ptr<grant_node> a = std::make_shared<grant_node>("node-a"),
                              b = std::make_shared<grant_node>("node-b");
  connection_actor actor_a, actor_b;
  caf::scoped_actor user{*sys}, then_target{*sys};
  caf::strong_actor_ptr status_to = caf::actor_cast<caf::strong_actor_ptr>(user);
  caf::strong_actor_ptr then_to = caf::actor_cast<caf::strong_actor_ptr>(then_target);

  grant_pair() {
    a->self = a;
    b->self = b;
    auto [ca, cb] = test::channel_pair();
    actor_a = start(*io_a, a, 1, ca, test::link_params("node-a", "k", true));
    actor_b = start(*io_b, b, 2, cb, test::link_params("node-b", "k", false));
    a->await_up();
    b->await_up();
  }
  ~grant_pair() {
    io_a.reset();
    io_b.reset();
    actor_a = nullptr;
    actor_b = nullptr;
  }
  // n's link, set in n before its I/O thread runs it.
  connection_actor start(test::io_thread& io, const std::shared_ptr<grant_node>& n,
                         std::uint64_t id, std::shared_ptr<channels::channel> ch,
                         const connection_params& p) {
    n->on = std::make_shared<link>(id, std::move(ch), p, io.loop, n);
    auto actor = spawn_connection(*sys, io.host, n->on);
    io.loop.adopt(n->on);
    return actor;
  }
  // Runs `f` on `io`'s thread and waits for it.
  template <class F>
  auto on_thread(test::io_thread& io, F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto done = task.get_future();
    io.loop.post([&] { task(); });
    return done.get();
  }
  // `region` lent by b to a.
  grant lend(buffer region, std::uint8_t rights, bool once = false) {
    auto g = on_thread(*io_b, [&] {
      std::string error;
      auto out = b->owner.lend(*b->on, region, rights, once, error);
      INFO(error);
      return out;
    });
    REQUIRE(g);
    // The grant reaches its holder as in a program: in a message on the
    // stream behind the map's announcement, so the holder's channel knows
    // the map before any use (handed over directly, a use could race it
    // and find no map: seen under load).
    outbound_message m;
    m.env.kind = envelope_kind::message;
    m.env.body = {1};
    CHECK(on_thread(*io_b, [&] { return b->on->submit(std::move(m)); }) == link::submitted::queued);
    a->await_arrived(++carried_);
    return *g;
  }
  std::size_t carried_ = 0;
  status write(const grant& g, std::uint64_t offset, buffer data) {
    auto op = a->holder.next_op();
    a->holder.write(g, op, offset, std::move(data), status_to, nullptr, {});
    auto s = status_of(a->next().msg);
    CHECK(s.op == op);
    return s;
  }
  status read(const grant& g, std::uint64_t offset, buffer into) {
    auto op = a->holder.next_op();
    on_thread(*io_a, [&] { a->holder.read(*a->on, g, op, offset, into, status_to, nullptr, {}); });
    auto s = status_of(a->next().msg);
    CHECK(s.op == op);
    return s;
  }
};

buffer pattern(std::size_t n, unsigned char seed) {
  auto b = buffer::heap(n);
  for (std::size_t i = 0; i < n; ++i)
    b.data()[i] = static_cast<unsigned char>(seed + i * 7);
  return b;
}

bool same(const unsigned char* x, const unsigned char* y, std::size_t n) {
  return std::memcmp(x, y, n) == 0;
}

}  // namespace

TEST_CASE_FIXTURE(grant_pair,
                  "grant sides: a write lands in the lent region, a read brings it back, an "
                  "atomic runs on its word, and a `then` reaches its actor before the status") {
  auto region = buffer::heap(4096);
  std::memset(region.data(), 0, region.size());
  auto g = lend(region, rw);
  CHECK(g.owner == "node-b");
  CHECK(g.holder == "node-a");
  CHECK(g.length == 4096);

  auto data = pattern(1000, 3);
  auto w = write(g, 96, data);
  CHECK(w.st == grant_status::ok);
  CHECK(same(region.data() + 96, data.data(), data.size()));
  CHECK(region.data()[95] == 0);
  CHECK(region.data()[1096] == 0);

  auto into = buffer::heap(512);
  auto r = read(g, 96, into);
  CHECK(r.st == grant_status::ok);
  CHECK(same(into.data(), data.data(), into.size()));

  auto op = a->holder.next_op();
  a->holder.atomic(g, op, grant_op::fetch_add, 2048, 5, 0, status_to, then_to,
                   caf::make_message(std::string("after the add")));
  auto first = a->next();
  CHECK(first.to == then_to);
  REQUIRE(first.msg.match_elements<std::string>());
  CHECK(first.msg.get_as<std::string>(0) == "after the add");
  auto added = status_of(a->next().msg);
  CHECK(added.op == op);
  CHECK(added.st == grant_status::ok);
  CHECK(added.value == 0);
  std::uint64_t word = 0;
  std::memcpy(&word, region.data() + 2048, 8);
  CHECK(word == 5);

  CHECK(b->misbehaviour().empty());
  CHECK(a->holder.in_flight() == 0);
  CHECK(a->holder.counters().bytes_out == 1000);
  CHECK(a->holder.counters().bytes_in == 512);
}

TEST_CASE_FIXTURE(grant_pair,
                  "grant sides: a use-once write brings its bytes and ends the grant; a revoked "
                  "grant refuses what comes after") {
  auto region = buffer::heap(256);
  std::memset(region.data(), 0, region.size());
  auto g = lend(region, rw, true);
  CHECK(g.once);
  CHECK(g.map == 0);  // never mapped for its holder
  auto data = pattern(200, 9);
  CHECK(write(g, 10, data).st == grant_status::ok);
  CHECK(same(region.data() + 10, data.data(), data.size()));
  CHECK(b->owner.counters().copied_in == 200);
  CHECK(b->owner.size() == 0);  // used up
  auto again = write(g, 10, pattern(8, 1));
  CHECK(again.st == grant_status::revoked);
  CHECK(same(region.data() + 10, data.data(), data.size()));

  auto kept = buffer::heap(64);
  std::memset(kept.data(), 0, kept.size());
  auto k = lend(kept, static_cast<std::uint8_t>(grant_rights::read));
  auto back = b->owner.take_back(k.id);
  REQUIRE(back);
  CHECK_FALSE(b->owner.take_back(k.id));
  if (back->map)  // the caller's to take down (rdma maps it for one-sided reads)
    on_thread(*io_b, [&] { return b->on->unexpose(*back->map); });
  auto late = read(k, 0, buffer::heap(64));
  CHECK(late.st == grant_status::revoked);
}

TEST_CASE_FIXTURE(grant_pair,
                  "grant sides: a holder that claims more than it was lent is refused, and its "
                  "owner's memory past the grant is untouched") {
  auto backing = buffer::heap(8192);
  std::memset(backing.data(), 0x5a, backing.size());
  auto region = backing.slice(0, 4096);
  auto g = lend(region, rw);
  auto forged = g;
  forged.length = 8192;  // the holder's copy says more than the owner gave
  auto r = read(forged, 4000, buffer::heap(1000));
  CHECK(r.st == grant_status::out_of_range);
  auto w = write(forged, 4096, pattern(100, 1));
  CHECK(w.st == grant_status::revoked);  // no map there at the owner
  for (std::size_t i = 4096; i < backing.size(); ++i)
    if (backing.data()[i] != 0x5a)
      FAIL("byte ", i, " past the grant changed");
  if (std::string(test::channel_pair_kind()) == "tcp") {
    // Only where the owner's CPU serves the read does it see the claim.
    auto said = b->misbehaviour();
    REQUIRE(!said.empty());
    CHECK(said[0] ==
          "1000 bytes at offset 4000 of grant " + std::to_string(g.id) + ", which has 4096");
  }
}

TEST_CASE_FIXTURE(grant_pair,
                  "grant sides: a `then` that rides on a use is delivered by the owner with an ok "
                  "verdict only") {
  a->rides = true;
  auto region = buffer::heap(128);
  std::memset(region.data(), 0, region.size());
  auto g = lend(region, rw, true);
  auto data = pattern(16, 5);
  auto op = a->holder.next_op();
  a->holder.write(g, op, 0, data, status_to, then_to, caf::make_message(1));
  auto first = status_of(a->next().msg);  // the status alone: the `then` rode
  CHECK(first.st == grant_status::ok);
  CHECK(same(region.data(), data.data(), data.size()));
  {
    auto got = on_thread(*io_b, [&] { return b->delivered; });
    REQUIRE(got.size() == 1);
    CHECK(got[0].first == 1);
    CHECK(got[0].second == std::vector<unsigned char>{0x42});
  }
  CHECK(b->owner.counters().thens_carried == 1);
  // Used up: the second use's `then` rides too, and is not delivered.
  op = a->holder.next_op();
  a->holder.write(g, op, 0, pattern(16, 6), status_to, then_to, caf::make_message(2));
  CHECK(status_of(a->next().msg).st == grant_status::revoked);
  CHECK(on_thread(*io_b, [&] { return b->delivered.size(); }) == 1);
  CHECK(b->owner.counters().thens_carried == 1);
  CHECK(same(region.data(), data.data(), data.size()));
}

TEST_CASE_FIXTURE(grant_pair, "grant sides: a use of a node that is not connected fails at once") {
  grant g;
  g.owner = "node-c";
  g.holder = "node-a";
  g.id = 1;
  g.length = 64;
  g.map = 0x1000;
  g.rights = rw;
  auto w = write(g, 0, pattern(8, 0));
  CHECK(w.st == grant_status::dropped);
  CHECK(w.detail == "node 'node-c' is not connected");
  auto op = a->holder.next_op();
  a->holder.atomic(g, op, grant_op::compare_swap, 8, 0, 1, status_to, nullptr, {});
  auto s = status_of(a->next().msg);
  CHECK(s.st == grant_status::dropped);
}
