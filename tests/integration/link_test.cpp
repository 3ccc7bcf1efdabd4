// Connections over real channels (channel_pair.hpp: tcp here, rdma in the
// VM), each a link driven by an I/O thread with its actor on that thread:
// setup, messages with placed buffers from several threads, refusal,
// back-pressure before setup, the setup limit, a silent peer, draining,
// and the actor as others see it (asked, told, monitored). No node: what
// a link reports goes to a recorder.
#include "channel_pair.hpp"
#include "link_harness.hpp"

#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/io/connection_actor.hpp>
#include <riomesh/actors/io/connection_host.hpp>
#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/actors/io/link.hpp>
#include <riomesh/actors/io/send_order.hpp>
#include <riomesh/channels/tcp/tcp_channel.hpp>
#include <riomesh/channels/tcp/tcp_socket.hpp>
#include <riomesh/errc.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <doctest/doctest.h>

#include <poll.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

using namespace riomesh;
using namespace riomesh::actors;
using namespace riomesh::channels;
using namespace std::chrono_literals;
using test::actor_system_holder;
using test::io_thread;

namespace {

connection_params params(const std::string& name, const std::string& secret, bool dialed) {
  return test::link_params(name, secret, dialed);
}

// What the links reported, in order, for the test to wait on.
class recorder final : public link_events {
 public:
  struct report {
    std::string what;  // "established", "inbound", "writable", "closed"
    std::string text;  // the peer's name, or the reason
    bool stopped = false;
    inbound_message message = {};
  };
  static report of(std::string what, std::string text = {}, bool stopped = false) {
    report r;
    r.what = std::move(what);
    r.text = std::move(text);
    r.stopped = stopped;
    return r;
  }
  void established(actors::link& l) override { add(of("established", l.peer_name())); }
  void inbound(actors::link&, inbound_message& m) override {
    auto r = of("inbound");
    r.message = std::move(m);
    add(std::move(r));
  }
  void writable(actors::link&) override { add(of("writable")); }
  void closed(actors::link&, const std::string& reason, bool stopped) override {
    add(of("closed", reason, stopped));
  }
  // The next report; fails the test if none comes within `limit`.
  report next(std::chrono::milliseconds limit = 10s) {
    std::unique_lock<std::mutex> guard(lock_);
    if (!cv_.wait_for(guard, limit, [&] { return !reports_.empty(); }))
      FAIL("no report from the link within ", limit.count(), " ms");
    auto r = std::move(reports_.front());
    reports_.pop_front();
    return r;
  }
  // The next report of kind `what`, skipping others.
  report next(const std::string& what, std::chrono::milliseconds limit = 10s) {
    auto end = std::chrono::steady_clock::now() + limit;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      auto r = next(std::max(left, std::chrono::milliseconds(1)));
      if (r.what == what)
        return r;
    }
  }

 private:
  void add(report r) {
    std::lock_guard<std::mutex> guard(lock_);
    reports_.push_back(std::move(r));
    cv_.notify_all();
  }
  std::mutex lock_;
  std::condition_variable cv_;
  std::deque<report> reports_;
};

outbound_message numbered(int i) {
  outbound_message m;
  m.env.request_id = static_cast<std::uint64_t>(i);
  m.env.body = {static_cast<unsigned char>(i)};
  return m;
}

// Two connections over a channel pair, each on its own I/O thread, with
// the same secret: what most cases start from.
struct linked_pair : actor_system_holder {
  std::unique_ptr<io_thread> io_a = std::make_unique<io_thread>(*sys),
                             io_b = std::make_unique<io_thread>(*sys);
  io_loop &loop_a = io_a->loop, &loop_b = io_b->loop;
  std::shared_ptr<recorder> ra = std::make_shared<recorder>(), rb = std::make_shared<recorder>();
  std::shared_ptr<actors::link> a, b;
  connection_actor actor_a, actor_b;
  linked_pair() {
    auto [ca, cb] = test::channel_pair();
    std::tie(a, actor_a) = io_a->adopt(1, ca, params("node-a", "k", true), ra);
    std::tie(b, actor_b) = io_b->adopt(2, cb, params("node-b", "k", false), rb);
  }
  ~linked_pair() {
    io_a.reset();
    io_b.reset();
    actor_a = nullptr;
    actor_b = nullptr;
  }
};

// One I/O thread, for the cases that build their links themselves.
struct one_thread : actor_system_holder {
  std::unique_ptr<io_thread> io = std::make_unique<io_thread>(*sys);
  ~one_thread() { io.reset(); }
};

}  // namespace

TEST_CASE_FIXTURE(linked_pair,
                  "link: setup, then messages with placed buffers from several threads, in order") {
  auto up = ra->next("established");
  CHECK(up.text == "node-b");
  CHECK(a->authenticated());
  rb->next("established");
  // Two senders, each numbering its own messages: each one's order holds.
  const int per = 50;
  auto send = [&](int who) {
    for (int i = 0; i < per; ++i) {
      auto m = numbered(who * 1000 + i);
      auto payload = buffer::heap(10000 + static_cast<std::size_t>(i));
      for (std::size_t k = 0; k < payload.size(); ++k)
        payload[k] = static_cast<unsigned char>(i + k);
      m.placed = {payload};
      while (a->submit(std::move(m)) == link::submitted::congested)
        std::this_thread::sleep_for(1ms);
    }
  };
  std::thread s1(send, 1), s2(send, 2);
  s1.join();
  s2.join();
  int next[3] = {0, 0, 0};
  for (int n = 0; n < 2 * per; ++n) {
    auto r = rb->next("inbound");
    auto id = static_cast<int>(r.message.env.request_id);
    int who = id / 1000, i = id % 1000;
    REQUIRE((who == 1 || who == 2));
    CHECK(i == next[who]++);
    REQUIRE(r.message.placed.size() == 1);
    const auto& p = r.message.placed[0];
    CHECK(p.size() == 10000 + static_cast<std::size_t>(i));
    bool same = true;
    for (std::size_t k = 0; k < p.size(); ++k)
      same = same && p[k] == static_cast<unsigned char>(i + k);
    CHECK(same);
    CHECK(p.where() == buffer::origin::arena);
  }
  // Its actor answers for it.
  caf::scoped_actor self{*sys};
  connection_figures f;
  self->request(actor_a, 5s, stats_atom::value)
      .receive([&](const connection_figures& x) { f = x; },
               [&](caf::error& e) { FAIL(sys->render(e)); });
  CHECK(f.peer == "node-b");
  CHECK(f.phase == "up");
  CHECK(f.dialed);
  auto c = f.counters;
  CHECK(c.messages_out == 2 * per);
  CHECK(c.inline_bytes_out == 2 * per);  // one body byte each: nothing else copied
}

// Messages the core still holds (here: waiting for arena space the peer's
// application never gives back) fail with the connection when it ends,
// each once, as those still waiting in the link do.
TEST_CASE_FIXTURE(linked_pair, "link: what waits for the peer's space fails when the link ends") {
  ra->next("established");
  rb->next("established");
  std::mutex lock;
  std::vector<int> failed;
  const int count = 6;  // b's 1 MiB arena takes three of them
  for (int i = 0; i < count; ++i) {
    auto m = numbered(i);
    m.placed = {buffer::heap(300 << 10)};
    m.on_failure = [&, i](send_failure f, const std::string& why) {
      CHECK(f == send_failure::node_lost);
      CHECK(why.find("connection closed") != std::string::npos);
      std::lock_guard<std::mutex> guard(lock);
      failed.push_back(i);
    };
    REQUIRE(a->submit(std::move(m)) == link::submitted::queued);
  }
  // b's recorder holds what arrived, so its arena's space never comes back.
  std::vector<recorder::report> held;
  for (int i = 0; i < 3; ++i)
    held.push_back(rb->next("inbound"));
  CHECK(held.back().message.env.request_id == 2);
  loop_a.post([&] { a->cut("cut by the test"); });
  auto closed = ra->next("closed");
  CHECK(closed.text.find("cut by the test") != std::string::npos);
  CHECK_FALSE(closed.stopped);
  std::lock_guard<std::mutex> guard(lock);
  CHECK(failed == std::vector<int>{3, 4, 5});
}

// A handler the I/O thread runs gives its messages to the link directly,
// but never past orders still in the connection actor's mailbox: here the
// thread is held while another thread queues, so the mailbox is full when
// the thread's own sends come.
TEST_CASE_FIXTURE(linked_pair,
                  "link: the I/O thread's own sends keep their place behind queued ones") {
  ra->next("established");
  rb->next("established");
  const int per = 40;
  std::promise<void> release, held, sent_here;
  loop_a.post([&, go = release.get_future().share()] {
    held.set_value();
    go.wait();  // meanwhile another thread queues; the actor cannot take them
    for (int i = per; i < 2 * per; ++i)
      CHECK(a->submit(numbered(i)) == link::submitted::queued);
    sent_here.set_value();
  });
  held.get_future().wait();
  for (int i = 0; i < per; ++i)
    REQUIRE(a->submit(numbered(i)) == link::submitted::queued);
  release.set_value();
  sent_here.get_future().wait();
  for (int i = 0; i < 2 * per; ++i)
    CHECK(static_cast<int>(rb->next("inbound").message.env.request_id) == i);
  // With the mailbox empty, the thread's sends go straight on, in order.
  loop_a.post([&] {
    for (int i = 2 * per; i < 3 * per; ++i)
      CHECK(a->submit(numbered(i)) == link::submitted::queued);
  });
  for (int i = 2 * per; i < 3 * per; ++i)
    CHECK(static_cast<int>(rb->next("inbound").message.env.request_id) == i);
}

TEST_CASE_FIXTURE(one_thread, "link: a wrong secret closes both, with the reason") {
  auto [ca, cb] = test::channel_pair();
  auto ra = std::make_shared<recorder>(), rb = std::make_shared<recorder>();
  auto a = io->adopt(1, ca, params("node-a", "right", true), ra);
  auto b = io->adopt(2, cb, params("node-b", "wrong", false), rb);
  for (auto* r : {ra.get(), rb.get()}) {
    auto closed = r->next("closed");
    CHECK(closed.text.find("wrong cluster secret") != std::string::npos);
  }
}

TEST_CASE_FIXTURE(one_thread,
                  "link: before setup, sends queue within max_pending, and are refused beyond") {
  auto [ca, cb] = test::channel_pair();  // nobody answers on cb: setup never finishes
  auto ra = std::make_shared<recorder>();
  auto p = params("node-a", "k", true);
  p.max_pending = 2;
  auto a = io->adopt(1, ca, p, ra).first;
  CHECK(a->submit(numbered(1)) == link::submitted::queued);
  CHECK(a->submit(numbered(2)) == link::submitted::queued);
  CHECK(a->submit(numbered(3)) == link::submitted::congested);
  CHECK(a->depth() == 2);
}

TEST_CASE_FIXTURE(one_thread, "link: at the setup limit the peer is told in band") {
  // A peer that never answers the greeting: given up on, it must read a
  // clean end, not a failure. An rsocket client hears of nothing else: a
  // queue pair torn down without a word leaves its next write hanging.
  auto [ca, cb] = test::channel_pair();
  auto ra = std::make_shared<recorder>();
  auto p = params("node-a", "k", true);
  p.setup_limit = std::chrono::milliseconds(300);
  auto a = io->adopt(1, ca, p, ra);
  auto closed = ra->next("closed");
  CHECK(closed.text.find("no session within 300 ms") != std::string::npos);
  auto end = std::chrono::steady_clock::now() + 5s;
  status ended = status::would_block;
  char chunk[256];
  while (std::chrono::steady_clock::now() < end) {
    cb->progress();
    auto r = cb->recv(chunk, sizeof chunk);
    if (r.st != status::ok && r.st != status::would_block) {
      ended = r.st;
      break;
    }
  }
  CHECK_MESSAGE(ended == status::eof, "the peer saw ", std::string(to_string(ended)), ": ",
                cb->reason());
}

TEST_CASE_FIXTURE(one_thread, "link: a silent peer is lost within peer_timeout + 1 s") {
  using namespace riomesh::channels::tcp;
  if (std::getenv("RIOMESH_CHANNEL") && std::string{std::getenv("RIOMESH_CHANNEL")} == "rdma")
    return;  // tcp's own timer; rdma's transport notices a dead peer itself
  // Our side times out after 400 ms of silence; the peer, set up by hand
  // and then never driven again, sends nothing more (its kernel still
  // acknowledges our bytes: only the protocol can tell it is gone).
  tcp_params quick;
  quick.keepalive = std::chrono::milliseconds(100);
  quick.peer_timeout = std::chrono::milliseconds(400);
  auto l = listen_on({"127.0.0.1", 0});
  REQUIRE(l.fd >= 0);
  std::string error;
  std::shared_ptr<channel> mine = tcp_channel::connect(
      {"127.0.0.1", static_cast<std::uint16_t>(local_port(l.fd))}, quick, {}, error);
  REQUIRE(static_cast<bool>(mine));
  pollfd pfd{l.fd, POLLIN, 0};
  REQUIRE(::poll(&pfd, 1, 5000) == 1);
  auto s = accept_from(l.fd, {});
  ::close(l.fd);
  tcp_channel theirs(s.fd, s.peer, tcp_params{});
  auto ra = std::make_shared<recorder>();
  auto a = io->adopt(1, mine, params("node-a", "k", true), ra);
  session_terms terms;
  terms.arena_size = 1 << 20;
  terms.max_body = 1 << 16;
  terms.max_buffers = 32;
  session_setup::options o;
  o.mine.name = "node-b";
  o.mine.terms = terms;
  credentials c;
  c.secret = "k";
  session_setup setup(std::make_shared<tls_context>("node-b", c), over(theirs, std::move(o)));
  auto end = std::chrono::steady_clock::now() + 10s;
  while (!setup.established() && !setup.failed() && std::chrono::steady_clock::now() < end) {
    theirs.progress();
    drive_session(theirs, setup);
  }
  REQUIRE(setup.established());
  ra->next("established");
  auto silent_since = std::chrono::steady_clock::now();
  auto closed = ra->next("closed");
  CHECK_FALSE(closed.stopped);
  auto took = std::chrono::steady_clock::now() - silent_since;
  CHECK(closed.text.find("silent for") != std::string::npos);
  CHECK(took < std::chrono::milliseconds(400 + 1000));
  MESSAGE(
      "declared lost after " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                             << " ms: " << closed.text);
}

TEST_CASE_FIXTURE(
    linked_pair,
    "link: draining sends what is queued, says farewell, and the peer sees it stopped") {
  ra->next("established");
  rb->next("established");
  for (int i = 0; i < 100; ++i)
    REQUIRE(a->submit(numbered(i)) == link::submitted::queued);
  std::promise<void> drained;
  loop_a.post([&] { a->drain([&] { drained.set_value(); }); });
  // Refused from here on: the node stops.
  std::this_thread::sleep_for(50ms);
  CHECK(a->submit(numbered(100)) != link::submitted::queued);
  for (int i = 0; i < 100; ++i)
    CHECK(rb->next("inbound").message.env.request_id == static_cast<std::uint64_t>(i));
  auto closed = rb->next("closed");
  CHECK(closed.stopped);
  CHECK(closed.text.find("it stopped") != std::string::npos);
  CHECK(drained.get_future().wait_for(10s) == std::future_status::ready);
}

TEST_CASE_FIXTURE(linked_pair,
                  "link: a draining link keeps reading until the peer ends its side too") {
  ra->next("established");
  rb->next("established");
  // b's I/O thread is held: it reads nothing and answers nothing. Closed
  // now, a's socket would be reset by the first late byte from b (a release,
  // a credit) and the reset would take with it whatever b had not read.
  std::promise<void> hold, holding;
  auto held = hold.get_future().share();
  loop_b.post([held, &holding] {
    holding.set_value();
    held.wait();
  });
  holding.get_future().wait();  // from here b's thread takes nothing in
  for (int i = 0; i < 20; ++i)
    REQUIRE(a->submit(numbered(i)) == link::submitted::queued);
  std::promise<void> drained;
  auto done = drained.get_future();
  loop_a.post([&] { a->drain([&] { drained.set_value(); }); });
  CHECK(done.wait_for(300ms) == std::future_status::timeout);
  hold.set_value();
  for (int i = 0; i < 20; ++i)
    CHECK(rb->next("inbound").message.env.request_id == static_cast<std::uint64_t>(i));
  CHECK(rb->next("closed").stopped);
  CHECK(done.wait_for(10s) == std::future_status::ready);
  CHECK(ra->next("closed").text == "this node stopped");
}

TEST_CASE_FIXTURE(linked_pair,
                  "connection actor: told to close, it ends with the reason its monitors see, "
                  "and a message that reaches it after that fails to its sender") {
  ra->next("established");
  rb->next("established");
  caf::scoped_actor self{*sys};
  self->monitor(actor_a);
  caf::anon_send(actor_a, close_atom::value, std::string{"the test is over"});
  CHECK(ra->next("closed").text == "the test is over");
  caf::error why;
  self->receive([&](caf::down_msg& d) { why = d.reason; });
  CHECK(is(why, errc::node_lost));
  CHECK(sys->render(why).find("the test is over") != std::string::npos);
  // The link refuses at once; an order already on its way when the
  // mailbox closed tells its sender as it goes.
  CHECK(a->submit(numbered(1)) == link::submitted::closed);
  std::promise<std::string> failed;
  auto m = numbered(2);
  m.on_failure = [&](send_failure f, const std::string& detail) {
    failed.set_value(std::string{f == send_failure::node_lost ? "lost: " : "other: "} + detail);
  };
  caf::anon_send(caf::actor_cast<caf::actor>(actor_a), send_order{std::move(m)});
  auto got = failed.get_future();
  REQUIRE(got.wait_for(5s) == std::future_status::ready);
  CHECK(got.get().rfind("lost: ", 0) == 0);
}

TEST_CASE_FIXTURE(linked_pair,
                  "connection actor: told to drain, it sends what is queued first, and both "
                  "ends see an orderly stop") {
  ra->next("established");
  rb->next("established");
  caf::scoped_actor self{*sys};
  self->monitor(actor_a);
  self->monitor(actor_b);
  for (int i = 0; i < 50; ++i)
    REQUIRE(a->submit(numbered(i)) == link::submitted::queued);
  caf::anon_send(actor_a, drain_atom::value);
  for (int i = 0; i < 50; ++i)
    CHECK(rb->next("inbound").message.env.request_id == static_cast<std::uint64_t>(i));
  CHECK(rb->next("closed").stopped);
  for (int i = 0; i < 2; ++i)
    self->receive([&](caf::down_msg& d) {
      CHECK_MESSAGE(is(d.reason, errc::stopped), sys->render(d.reason));
    });
}

TEST_CASE_FIXTURE(one_thread, "connection actor: asked while its session is set up, it says so") {
  auto [ca, cb] = test::channel_pair();  // nobody answers on cb
  auto ra = std::make_shared<recorder>();
  auto a = io->adopt(7, ca, params("node-a", "k", true), ra);
  caf::scoped_actor self{*sys};
  self->request(a.second, 5s, stats_atom::value)
      .receive(
          [&](const connection_figures& f) {
            CHECK(f.id == 7);
            CHECK(f.phase == "setting up");
            CHECK(f.peer.empty());
            CHECK_FALSE(f.remote.empty());
          },
          [&](caf::error& e) { FAIL(sys->render(e)); });
  caf::anon_send(a.second, evict_atom::value, std::string{"room for newer ones"});
  CHECK(ra->next("closed").text.find("room for newer ones") != std::string::npos);
}
