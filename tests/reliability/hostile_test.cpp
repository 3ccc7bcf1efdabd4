// Hostile peers against a node in its own process (runtime_peer): each lie
// must close that one connection with a logged reason naming it, while the
// node goes on serving an honest node (this process) with intact data, and
// exits cleanly at the end (under the sanitizers too: a report fails it).
// tcp here; rdma in the VM (RIOMESH_CHANNEL=rdma), with verbs lies as well.
#include "liar.hpp"
#include "verbs_liar.hpp"
#include "victim.hpp"

#include <cluster.hpp>
#include <process.hpp>
#include <sanitized.hpp>

#include <riomesh/actors/envelope/envelope.hpp>
#include <riomesh/actors/grants/grant_wire.hpp>
#include <riomesh/message_codec.hpp>

#include <caf/scoped_actor.hpp>
#include <caf/system_messages.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <thread>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;

namespace {

using scene = victim_scene;

}  // namespace

TEST_CASE("hostile: envelope lies each close only the liar's connection, with the reason") {
  scene s("envelope");
  auto like = node_settings("liar");
  int n = 0;
  for (const auto& lie : envelope_lies(like.channel.arena)) {
    CAPTURE(lie.what);
    auto name = "liar-" + std::to_string(++n);
    auto rss_before = s.victim.rss();
    std::atomic<std::uint64_t> peak{rss_before};
    std::atomic<bool> watching{true};
    std::thread watcher([&] {
      while (watching) {
        peak = std::max<std::uint64_t>(peak, s.victim.rss());
        std::this_thread::sleep_for(5ms);
      }
    });
    liar l(name, s.at(), like);
    l.say(lie.bytes);
    s.expect_cut_off(l, name, lie.expected_reason);
    watching = false;
    watcher.join();
    // No lie costs the victim more memory than one connection may hold:
    // its arena's pages (rdma registers, and so pins, the whole arena of
    // each connection), and what channel.max_streams streams of the lie's
    // pieces hold (8 x 2 MiB here).
    auto grown = static_cast<std::int64_t>(peak.load()) - static_cast<std::int64_t>(rss_before);
    MESSAGE(lie.what, ": victim RSS at most ", grown / 1024, " KiB more while it was told");
    auto allowed = (fabric_under_test() == "rdma" ? like.channel.arena : 0) + (48ull << 20);
    if (!sanitized)
      CHECK(grown < static_cast<std::int64_t>(allowed));
  }
  CHECK(s.victim.stop() == 0);
}

TEST_CASE("hostile: lies on the queue pair each close only the liar's connection") {
  if (fabric_under_test() != "rdma")
    return;  // rdma only (in the VM)
  scene s("verbs");
  auto like = node_settings("liar");
  int n = 0;
  for (auto lie : all_verbs_lies()) {
    CAPTURE(to_string(lie));
    auto name = "liar-" + std::to_string(++n);
    liar l(name, s.at(), like);
    tell(l.channel(), lie);
    s.expect_cut_off(l, name, expected_reason(lie));
  }
  CHECK(s.victim.stop() == 0);
}

TEST_CASE("hostile: a member's CAF system messages to a published actor are refused, it lives") {
  scene s("system");
  auto like = node_settings("member");
  liar l("member", s.at(), like);
  auto calc_id = l.resolve("calc");
  auto sink_id = l.resolve("sink");
  REQUIRE(calc_id != 0);
  REQUIRE(sink_id != 0);
  // Each what CAF 0.17 would act on instead of the actor's behavior.
  std::vector<std::pair<std::string, caf::message>> attacks = {
      {"exit_msg", caf::make_message(caf::exit_msg{caf::actor_addr{}, caf::exit_reason::kill})},
      {"exit_msg",
       caf::make_message(caf::exit_msg{caf::actor_addr{}, caf::exit_reason::user_shutdown})},
      {"error", caf::make_message(caf::make_error(caf::sec::runtime_error))},
      {"down_msg", caf::make_message(caf::down_msg{caf::actor_addr{}, caf::error{}})},
      {"sys_atom",
       caf::make_message(caf::sys_atom::value, caf::get_atom::value, std::string{"info"})},
  };
  std::uint64_t request = 100;
  for (auto& [kind, msg] : attacks) {
    for (auto target : {calc_id, sink_id}) {
      for (auto as : {actors::envelope_kind::message, actors::envelope_kind::request}) {
        encoded_message enc;
        std::string error;
        REQUIRE(encode_message(s.honest->system(), msg, 1 << 20, enc, error));
        actors::envelope e;
        e.kind = as;
        e.receiver = target;
        e.request_id = as == actors::envelope_kind::request ? ++request : 0;
        e.body = enc.body;
        std::vector<unsigned char> bytes;
        actors::encode(e, bytes);
        l.say(bytes);
      }
    }
    CHECK_MESSAGE(s.victim.wait_log("a CAF system message (" + kind + ") from the wire", 5s),
                  s.victim.log());
  }
  // Nothing stopped: the published actors answer the honest node, and the
  // member is still connected (it told no lie about the protocol).
  auto calc = s.honest->remote_actor<calc_actor>("node-b", "calc", 10s);
  REQUIRE_MESSAGE(calc, error_text(*s.honest, calc));
  caf::scoped_actor self{s.honest->system()};
  self->request(*calc, 10s, add_atom::value, 2, 3)
      .receive([](int sum) { CHECK(sum == 5); },
               [&](caf::error& e) { FAIL(s.honest->system().render(e)); });
  s.still_serves();
  auto log = s.victim.log();
  CHECK(log.find("from node 'member': to actor " + std::to_string(calc_id)) != std::string::npos);
  CHECK(log.find("lost node 'member'") == std::string::npos);
  CHECK(s.victim.stop() == 0);
}

TEST_CASE("hostile: a member's forged grant uses and answers are refused by name, it stays") {
  scene s("grant");
  liar l("member", s.at(), node_settings("member"));
  auto use = [&](std::uint64_t grant_id, std::uint64_t op, std::vector<unsigned char> body) {
    actors::envelope e;
    e.kind = actors::envelope_kind::grant_use;
    e.receiver = grant_id;
    e.request_id = op;
    e.body = std::move(body);
    std::vector<unsigned char> bytes;
    actors::encode(e, bytes);
    l.say(bytes);
  };
  auto request = [](actors::grant_op op, std::uint64_t offset, std::uint64_t length,
                    std::uint64_t destination) {
    return actors::encode(actors::grant_request{op, offset, length, destination, 0});
  };
  // Grants never given, at wild ranges and destinations, of every kind.
  use(12345, 1, request(actors::grant_op::write, 0, 1 << 20, 0));
  use(~0ull, 2, request(actors::grant_op::read, ~0ull - 3, ~0ull, 1ull << 62));
  use(1, 3, request(actors::grant_op::fetch_add, 8, 8, 1));
  // Bodies no node sends.
  auto odd = request(actors::grant_op::read, 0, 1, 0);
  odd[0] = 9;
  use(1, 4, odd);
  use(1, 5, {1, 2, 3});
  use(1, 6, request(actors::grant_op::write, 0, 8, 77));  // a write with a destination
  // A then message riding on a read, on a cut-off use, and for actor 0.
  auto read_then = actors::grant_request{actors::grant_op::read, 0, 8, 0};
  read_then.then_to = 1;
  read_then.then_body = {0};
  use(1, 7, actors::encode(read_then));
  auto cut = request(actors::grant_op::write, 0, 8, 0);
  cut.resize(actors::grant_request_size + 4, 1);
  use(1, 8, cut);
  auto nobody = request(actors::grant_op::write, 0, 8, 0);
  nobody.resize(actors::grant_request_size + 9, 0);
  use(1, 9, nobody);
  // Notices of uses done one-sided: a write claiming it, and a read of a
  // grant never given, with a then message that must not go.
  auto done_write = request(actors::grant_op::write, 0, 8, 0);
  done_write[0] |= actors::done_flag;
  use(1, 10, done_write);
  auto done_read = read_then;
  done_read.done = true;
  use(4242, 11, actors::encode(done_read));
  // Answers to uses this node never made.
  auto answer = [&](std::uint64_t op, std::vector<unsigned char> body) {
    actors::envelope e;
    e.kind = actors::envelope_kind::grant_status;
    e.request_id = op;
    e.body = std::move(body);
    std::vector<unsigned char> bytes;
    actors::encode(e, bytes);
    l.say(bytes);
  };
  answer(77, actors::encode(actors::grant_answer{grant_status::ok, "\x1b[2Jforged"}));
  answer(78, {200});
  for (const auto& said :
       {"grant 12345 was never given", "grant 18446744073709551615 was never given",
        "grant 1 was never given", "a grant use of unknown kind 9",
        "a grant use of 3 bytes, not 25", "a grant write with a destination",
        "a grant read carrying its then message",
        "a grant use of 29 bytes: 25, or at least 33 with a then message",
        "a grant use's then message for actor 0",
        "a grant write marked done (only reads and atomics are done one-sided)",
        "grant 4242 was never given",
        "a grant status for operation 77, which this node did not ask it for",
        "unknown grant status 200"})
    CHECK_MESSAGE(s.victim.wait_log(said, 10s), said, "\n", s.victim.log());
  // Refused, counted, and nothing more: the member is still a member.
  l.run_once(100);
  s.still_serves();
  CHECK(s.victim.log().find("lost node 'member'") == std::string::npos);
  CHECK(s.victim.stop() == 0);
}
