// Remote memory grants between nodes: node-a lends node-b a region of its
// memory; node-b writes into it and reads from it at random byte ranges,
// checked against a flat reference, and an actor on node-a told `then`
// finds the bytes in place. Use-once, revocation, forged grants and a lost
// owner: nothing of node-a's memory outside a grant changes, and every use
// ends with one status. On tcp here, on rdma in the VM.
#include "cluster.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;

namespace {

using witness_atom = caf::atom_constant<caf::atom("t_witness")>;
using tally_atom = caf::atom_constant<caf::atom("t_tally")>;
using keep_atom = caf::atom_constant<caf::atom("t_keep")>;

constexpr std::size_t guard = 4096 + 5;  // around the granted bytes, never touched

struct outcome {
  grant_status st = grant_status::remote_error;
  std::string detail;
};

// The offset of the region's first 8-byte word aligned in memory.
std::size_t first_word(const buffer& region) {
  std::size_t at = 0;
  while (reinterpret_cast<std::uintptr_t>(region.data() + at) % 8 != 0)
    ++at;
  return at;
}

// The status of operation `op`, as `self` (its status_to) hears it.
outcome status_of(caf::scoped_actor& self, std::uint64_t op) {
  outcome out{grant_status::remote_error, "no status within 60 s"};
  for (bool more = true; more;)
    self->receive(
        [&](grant_done_atom, std::uint64_t id, grant_status st, std::string& detail) {
          if (id != op)
            return;
          out = {st, std::move(detail)};
          more = false;
        },
        caf::after(60s) >> [&] { more = false; });
  return out;
}

// On the owner: (witness_atom, offset, length, checksum) says what a write
// put where; it checks that the bytes are there when it hears of it.
// (tally_atom) -> (told, found in place).
caf::actor spawn_witness(runtime& rt, buffer region) {
  auto counts = std::make_shared<std::pair<std::uint64_t, std::uint64_t>>();
  return spawn_fn(rt.system(), [region, counts](caf::event_based_actor*) -> caf::behavior {
    return {
        [region, counts](witness_atom, std::uint64_t offset, std::uint64_t length,
                         std::uint64_t sum) {
          ++counts->first;
          if (checksum(region.slice(offset, length).flatten()) == sum)
            ++counts->second;
        },
        [counts](tally_atom) { return caf::make_message(counts->first, counts->second); },
    };
  });
}

std::pair<std::uint64_t, std::uint64_t> tally(caf::scoped_actor& self, const caf::actor& w) {
  std::pair<std::uint64_t, std::uint64_t> out{0, 0};
  self->request(w, 30s, tally_atom::value)
      .receive(
          [&](std::uint64_t told, std::uint64_t found) {
            out = {told, found};
          },
          [&](caf::error& e) { FAIL(self->system().render(e)); });
  return out;
}

buffer random_bytes(runtime& rt, std::size_t n, std::mt19937& rng) {
  auto b = n >= (16u << 10) ? rt.allocate(n) : buffer::heap(n);
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::size_t i = 0; i < n; ++i)
    b.data()[i] = static_cast<unsigned char>(byte(rng));
  return b;
}

// A region of node-a with `guard` bytes on both sides, lent to node-b.
struct lent_region {
  buffer whole, region, reference, guards_before;
};
lent_region lend_setup(runtime& a, std::size_t size, std::mt19937& rng) {
  lent_region l;
  l.whole = a.allocate(size + 2 * guard);
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& c : l.whole)
    c = static_cast<unsigned char>(byte(rng));
  l.region = l.whole.slice(guard, size);
  l.reference = buffer::copy_of(l.region.data(), size);
  l.guards_before = buffer::copy_of(l.whole.data(), l.whole.size());
  return l;
}

// The guards are as they were, and the region as the reference says.
void check_untouched_outside(const lent_region& l) {
  auto n = l.whole.size();
  CHECK(std::memcmp(l.whole.data(), l.guards_before.data(), guard) == 0);
  CHECK(std::memcmp(l.whole.data() + n - guard, l.guards_before.data() + n - guard, guard) == 0);
  CHECK(std::memcmp(l.region.data(), l.reference.data(), l.region.size()) == 0);
}

// `rounds` writes and reads of `g` at random ranges, 1 byte to the whole
// grant, against `reference` (kept up to date): each write's then message
// is judged by `witness` (spawn_witness), each read is compared, and reads
// land in buffers `into_of(length)` gives.
void exercise(runtime& holder, caf::scoped_actor& self, const grant& g, buffer& reference,
              std::mt19937& rng, int rounds, const caf::actor& witness,
              const std::function<buffer(std::size_t)>& into_of) {
  auto size = reference.size();
  auto me = caf::actor_cast<caf::actor>(self);
  std::uint64_t writes = 0;
  for (int i = 0; i < rounds; ++i) {
    // Lengths spread over the magnitudes.
    auto bits = std::uniform_int_distribution<int>(0, 22)(rng);
    std::size_t length = std::uniform_int_distribution<std::size_t>(
        1, std::min<std::size_t>(size, std::size_t{1} << bits))(rng);
    std::size_t offset = std::uniform_int_distribution<std::size_t>(0, size - length)(rng);
    CAPTURE(i);
    CAPTURE(offset);
    CAPTURE(length);
    if (std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
      auto data = random_bytes(holder, length, rng);
      std::memcpy(reference.data() + offset, data.data(), length);
      auto op = holder.write(g, offset, data, me,
                             {witness, caf::make_message(witness_atom::value, std::uint64_t{offset},
                                                         std::uint64_t{length}, checksum(data))});
      auto got = status_of(self, op);
      REQUIRE_MESSAGE(got.st == grant_status::ok, to_string(got.st), ": ", got.detail);
      ++writes;
      // From the same sender, after the then message: it has been judged.
      auto [told, found] = tally(self, witness);
      CHECK(told == writes);
      CHECK(found == writes);
    } else {
      auto into = into_of(length);
      auto got = status_of(self, holder.read(g, offset, into, me));
      REQUIRE_MESSAGE(got.st == grant_status::ok, to_string(got.st), ": ", got.detail);
      CHECK(std::memcmp(into.flatten().data(), reference.data() + offset, length) == 0);
    }
  }
}

caf::expected<grant> grant_once_connected(runtime& owner, const std::string& holder,
                                          const buffer& region, grant_rights rights,
                                          bool once = false) {
  return once_connected([&] { return owner.make_grant(holder, region, rights, once); });
}

}  // namespace

TEST_CASE_FIXTURE(two_nodes,
                  "grant: writes and reads at random byte ranges match a flat reference, the "
                  "grant travels in a message, and the then message sees the bytes in place") {
  auto seed = std::random_device{}();
  MESSAGE("seed ", seed, " on ", fabric_under_test());
  std::mt19937 rng(seed);
  const std::size_t size = (3u << 20) + 12345;
  auto l = lend_setup(*a, size, rng);
  auto given = grant_once_connected(*a, "node-b", l.region, grant_rights::read_write);
  REQUIRE_MESSAGE(given, error_text(*a, given));
  CHECK(given->length == size);
  // The holder learns of it in a message, as an application would.
  auto keeper = spawn_fn(b->system(), [](caf::event_based_actor*) -> caf::behavior {
    auto kept = std::make_shared<grant>();
    return {[kept](grant& g) { *kept = g; }, [kept](keep_atom) { return *kept; }};
  });
  b->publish(keeper, "keeper");
  auto remote_keeper = a->remote_actor("node-b", "keeper");
  REQUIRE(remote_keeper);
  caf::scoped_actor self{b->system()};
  {
    caf::scoped_actor sender{a->system()};
    sender->send(*remote_keeper, *given);
    // Behind it from the same sender: kept by the time this is answered.
    sender->request(*remote_keeper, 30s, keep_atom::value)
        .receive([](grant&) {}, [&](caf::error& e) { FAIL(a->system().render(e)); });
  }
  grant g;
  self->request(keeper, 30s, keep_atom::value)
      .receive([&](grant& kept) { g = kept; }, [&](caf::error& e) { FAIL(b->system().render(e)); });
  REQUIRE(g.id == given->id);
  CHECK(g.owner == "node-a");
  CHECK(g.holder == "node-b");

  a->publish(spawn_witness(*a, l.region), "witness");
  auto witness = once_connected([&] { return b->remote_actor("node-a", "witness"); });
  REQUIRE(witness);
  exercise(*b, self, g, l.reference, rng, 60, *witness,
           [&](std::size_t n) { return b->allocate(n); });
  check_untouched_outside(l);
  CHECK(b->stats().node.payload_copied_out == 0);
}

TEST_CASE(
    "grant: a grant over scatter-gather pieces is one offset space: writes, reads and "
    "atomics split at piece ends, against a flat reference") {
  // Each piece is a map of its own, and takes one of the peer's slots.
  auto sb = node_settings("node-b");
  sb.channel.iomap_size = 128;
  auto b = start_node(sb);
  auto sa = node_settings("node-a", {{"node-b", b->port()}});
  sa.channel.iomap_size = 128;
  auto a = start_node(sa);
  auto seed = std::random_device{}();
  MESSAGE("seed ", seed, " on ", fabric_under_test());
  std::mt19937 rng(seed);
  std::vector<std::vector<unsigned char>> user_memory;
  const std::size_t size = (1u << 20) + 777;
  auto reference = buffer::heap(size);
  fill(reference, seed);
  auto region = scattered(*a, reference, rng, user_memory);
  REQUIRE(region.pieces().size() > 1);
  auto g = grant_once_connected(*a, "node-b", region, grant_rights::read_write);
  REQUIRE_MESSAGE(g, error_text(*a, g));
  a->publish(spawn_witness(*a, region), "witness");
  auto witness = once_connected([&] { return b->remote_actor("node-a", "witness"); });
  REQUIRE(witness);
  caf::scoped_actor self{b->system()};
  std::vector<std::vector<unsigned char>> holder_memory;
  // Reads land in gathered buffers of the holder's too.
  exercise(*b, self, *g, reference, rng, 60, *witness, [&](std::size_t n) {
    auto zeros = buffer::heap(n);
    std::memset(zeros.data(), 0, n);
    return scattered(*b, zeros, rng, holder_memory);
  });
  CHECK(std::memcmp(region.flatten().data(), reference.data(), size) == 0);
  // An atomic on a word inside one piece works; across two it is refused.
  std::size_t at = 0;
  std::optional<std::size_t> inside, across;
  for (const auto& p : region.pieces()) {
    for (std::size_t k = 0; k + 8 <= p.size() && !inside; ++k)
      if (reinterpret_cast<std::uintptr_t>(p.data() + k) % 8 == 0)
        inside = at + k;
    if (!across && at >= 4)
      across = at - 4;
    at += p.size();
  }
  REQUIRE(inside);
  REQUIRE(across);
  auto me = caf::actor_cast<caf::actor>(self);
  auto op = b->fetch_add(*g, *inside, 5, me);
  self->receive(
      [&](grant_done_atom, std::uint64_t id, grant_status st, std::string& detail,
          std::uint64_t old) {
        CHECK(id == op);
        CHECK_MESSAGE(st == grant_status::ok, detail);
        std::uint64_t was = 0;
        std::memcpy(&was, reference.data() + *inside, 8);
        CHECK(old == was);
      },
      caf::after(30s) >> [] { FAIL("no status"); });
  op = b->fetch_add(*g, *across, 5, me);
  self->receive(
      [&](grant_done_atom, std::uint64_t id, grant_status st, std::string&, std::uint64_t) {
        CHECK(id == op);
        CHECK(st == grant_status::refused);
      },
      caf::after(30s) >> [] { FAIL("no status"); });
}

TEST_CASE_FIXTURE(two_nodes,
                  "grant: the then message sees the bytes in place from 1 B to 64 MiB, and reads "
                  "of the whole grant come back intact") {
  std::mt19937 rng(11);
  caf::scoped_actor self{b->system()};
  for (std::size_t size :
       {std::size_t{1}, std::size_t{4099}, (std::size_t{1} << 20) + 7, std::size_t{64} << 20}) {
    CAPTURE(size);
    auto l = lend_setup(*a, size, rng);
    auto g = grant_once_connected(*a, "node-b", l.region, grant_rights::read_write);
    REQUIRE_MESSAGE(g, error_text(*a, g));
    auto name = "witness-" + std::to_string(size);
    a->publish(spawn_witness(*a, l.region), name);
    auto witness = once_connected([&] { return b->remote_actor("node-a", name); });
    REQUIRE(witness);
    auto data = random_bytes(*b, size, rng);
    auto op = b->write(*g, 0, data, caf::actor_cast<caf::actor>(self),
                       {*witness, caf::make_message(witness_atom::value, std::uint64_t{0},
                                                    std::uint64_t{size}, checksum(data))});
    auto got = status_of(self, op);
    REQUIRE_MESSAGE(got.st == grant_status::ok, to_string(got.st), ": ", got.detail);
    auto [told, found] = tally(self, *witness);
    CHECK(told == 1);
    CHECK(found == 1);
    std::memcpy(l.reference.data(), data.data(), size);
    auto into = b->allocate(size);
    auto read_op = b->read(*g, 0, into, caf::actor_cast<caf::actor>(self));
    got = status_of(self, read_op);
    REQUIRE_MESSAGE(got.st == grant_status::ok, to_string(got.st), ": ", got.detail);
    CHECK(checksum(into) == checksum(data));
    check_untouched_outside(l);
    CHECK(a->revoke(*g));
  }
}

TEST_CASE_FIXTURE(two_nodes,
                  "grant: use-once ends with its first use, revoked ends at once, and a then "
                  "message goes only with an ok") {
  std::mt19937 rng(5);
  caf::scoped_actor self{b->system()};
  auto status_to = caf::actor_cast<caf::actor>(self);
  auto l = lend_setup(*a, 100000, rng);
  a->publish(spawn_witness(*a, l.region), "witness");
  auto witness = once_connected([&] { return b->remote_actor("node-a", "witness"); });
  REQUIRE(witness);
  auto then = [&](std::uint64_t offset, const buffer& d) {
    return runtime::then_message{*witness, caf::make_message(witness_atom::value, offset,
                                                             std::uint64_t{d.size()}, checksum(d))};
  };

  auto once = grant_once_connected(*a, "node-b", l.region, grant_rights::write, true);
  REQUIRE(once);
  auto data = random_bytes(*b, 5000, rng);
  CHECK(status_of(self, b->write(*once, 10, data, status_to, then(10, data))).st ==
        grant_status::ok);
  std::memcpy(l.reference.data() + 10, data.data(), data.size());
  auto second = random_bytes(*b, 5000, rng);
  auto used = status_of(self, b->write(*once, 10, second, status_to, then(10, second)));
  CHECK(used.st == grant_status::revoked);
  MESSAGE("a second use of a use-once grant: ", used.detail);

  auto read_once = grant_once_connected(*a, "node-b", l.region, grant_rights::read, true);
  REQUIRE(read_once);
  auto into = b->allocate(64 << 10);
  CHECK(status_of(self, b->read(*read_once, 0, into, status_to)).st == grant_status::ok);
  CHECK(status_of(self, b->read(*read_once, 0, into, status_to)).st == grant_status::revoked);

  auto g = grant_once_connected(*a, "node-b", l.region, grant_rights::read_write);
  REQUIRE(g);
  CHECK(a->revoke(*g));
  CHECK_FALSE(a->revoke(*g));
  auto late = random_bytes(*b, 70000, rng);
  auto refused = status_of(self, b->write(*g, 0, late, status_to, then(0, late)));
  CHECK(refused.st == grant_status::revoked);
  CHECK(refused.detail == "grant " + std::to_string(g->id) +
                              " of node 'node-a': no map at the owner for the write of 70000 "
                              "bytes at its offset 0 (revoked, used up, or past the grant's end)");
  CHECK(status_of(self, b->read(*g, 0, into, status_to)).st == grant_status::revoked);
  // The bytes that went through grants count on both sides: the one
  // write (5000) and the one read (64 KiB); nothing refused counts.
  auto held = b->stats().node, owned = a->stats().node;
  CHECK(held.grant_bytes_out == 5000);
  CHECK(held.grant_bytes_in == 64 << 10);
  CHECK(owned.grant_bytes_in == 5000);
  CHECK(owned.grant_bytes_out == 64 << 10);
  // Only the one good write was told.
  auto [told, found] = tally(self, *witness);
  CHECK(told == 1);
  CHECK(found == 1);
  check_untouched_outside(l);
}

TEST_CASE(
    "grant: a holder with forged grants, ranges or rights fails alone, and nothing of the "
    "owner's memory outside what it was given changes") {
  auto a = start_node(node_settings("node-a"));
  auto b = start_node(node_settings("node-b", {{"node-a", a->port()}}));
  auto c = start_node(node_settings("node-c", {{"node-a", a->port()}}));
  std::mt19937 rng(9);
  auto l = lend_setup(*a, 200000, rng);
  auto rw = grant_once_connected(*a, "node-b", l.region, grant_rights::read_write);
  auto ro = grant_once_connected(*a, "node-b", l.region.slice(0, 1000), grant_rights::read);
  REQUIRE(rw);
  REQUIRE(ro);
  // Both holders' own sides of their connections are up.
  a->publish(spawn_sink(a->system()), "sink");
  REQUIRE(once_connected([&] { return b->remote_actor("node-a", "sink"); }));
  REQUIRE(once_connected([&] { return c->remote_actor("node-a", "sink"); }));
  caf::scoped_actor self_b{b->system()}, self_c{c->system()};
  auto to_b = caf::actor_cast<caf::actor>(self_b);
  auto to_c = caf::actor_cast<caf::actor>(self_c);
  auto data = random_bytes(*b, 70000, rng);
  auto bad_before = a->stats().node.bad_inbound;

  // node-c with node-b's grant, claiming to be its holder: no map on
  // node-c's connection for a write, nor for a one-sided read (rdma);
  // where the owner serves reads (tcp), its answer.
  auto stolen = *rw;
  stolen.holder = "node-c";
  auto read_stolen = status_of(self_c, c->read(stolen, 0, c->allocate(70000), to_c));
  MESSAGE("node-c reading with node-b's grant: ", read_stolen.detail);
  if (rw->one_sided) {
    CHECK(read_stolen.st == grant_status::revoked);
    CHECK(read_stolen.detail.find("no mapping") != std::string::npos);
  } else {
    CHECK(read_stolen.st == grant_status::refused);
    CHECK(read_stolen.detail.find("was not given to node 'node-c'") != std::string::npos);
  }
  auto write_stolen = status_of(self_c, c->write(stolen, 0, data, to_c));
  CHECK(write_stolen.st == grant_status::revoked);
  MESSAGE("node-c writing with node-b's grant: ", write_stolen.detail);
  // As node-b's grant unchanged, node-c refuses it itself.
  CHECK(status_of(self_c, c->write(*rw, 0, data, to_c)).st == grant_status::refused);

  // node-b stretching its grant: longer than given, or an id never given.
  auto longer = *rw;
  longer.length = l.whole.size();
  auto stretched_read = status_of(self_b, b->read(longer, 150000, b->allocate(60000), to_b));
  CHECK(stretched_read.st == grant_status::out_of_range);
  // Past the map's end: the holder's side finds no map there (and a peer
  // that wrote anyway would find its connection closed, on tcp as a
  // protocol error, on rdma as a remote access error).
  auto stretched_write = status_of(self_b, b->write(longer, 195000, data.slice(0, 10000), to_b));
  CHECK(stretched_write.st == grant_status::revoked);
  // Named by its grant and the holder's offset, not the connection's map.
  CHECK(stretched_write.detail ==
        "grant " + std::to_string(rw->id) +
            " of node 'node-a': no map at the owner for the write of 10000 bytes at its offset "
            "195000 (revoked, used up, or past the grant's end)");
  // What fell inside the grant landed, as any write's bytes before a failure.
  std::memcpy(l.reference.data() + 195000, data.data(), 5000);
  auto made_up = *rw;
  made_up.id = 4242;
  auto read_made_up = b->allocate(100);
  auto made_up_read = status_of(self_b, b->read(made_up, 0, read_made_up, to_b));
  if (rw->one_sided) {
    // Read one-sided, the map decides, not the id claimed: node-b reads
    // only through the map of the grant it was given, and nothing else.
    CHECK(made_up_read.st == grant_status::ok);
    CHECK(std::memcmp(read_made_up.data(), l.reference.data(), 100) == 0);
  } else {
    CHECK(made_up_read.st == grant_status::refused);
  }
  // A read-only grant claimed writable: no map was ever made for it.
  auto widened = *ro;
  widened.rights = static_cast<std::uint8_t>(grant_rights::read_write);
  auto widened_write = status_of(self_b, b->write(widened, 0, data.slice(0, 1000), to_b));
  CHECK(widened_write.st == grant_status::refused);
  CHECK(widened_write.detail.find("has no map to write into") != std::string::npos);
  // The honest holder checks before anything goes out.
  CHECK(status_of(self_b, b->write(*ro, 0, data.slice(0, 10), to_b)).st == grant_status::refused);
  CHECK(status_of(self_b, b->read(*rw, 199999, b->allocate(2), to_b)).st ==
        grant_status::out_of_range);
  // The forged claims the owner judged were seen as such (one-sided, no
  // claim reached it: each failed at node-b's or node-c's own side).
  if (!rw->one_sided)
    CHECK(a->stats().node.bad_inbound > bad_before);

  check_untouched_outside(l);
  // The honest use still works, for both.
  auto into = b->allocate(1000);
  CHECK(status_of(self_b, b->read(*ro, 0, into, to_b)).st == grant_status::ok);
  CHECK(std::memcmp(into.data(), l.reference.data(), 1000) == 0);
  auto mine = once_connected(
      [&] { return a->make_grant("node-c", l.region.slice(500, 100), grant_rights::read); });
  REQUIRE(mine);
  auto into_c = c->allocate(100);
  CHECK(status_of(self_c, c->read(*mine, 0, into_c, to_c)).st == grant_status::ok);
  CHECK(std::memcmp(into_c.data(), l.reference.data() + 500, 100) == 0);
}

TEST_CASE("grant: uses in flight when the owner goes each end with one status") {
  auto a = start_node(node_settings("node-a"));
  auto b = start_node(node_settings("node-b", {{"node-a", a->port()}}));
  std::mt19937 rng(3);
  auto l = lend_setup(*a, 8 << 20, rng);
  auto g = grant_once_connected(*a, "node-b", l.region, grant_rights::read_write);
  REQUIRE(g);
  a->publish(spawn_sink(a->system()), "sink");  // node-b's side is up too
  REQUIRE(once_connected([&] { return b->remote_actor("node-a", "sink"); }));
  caf::scoped_actor self{b->system()};
  auto status_to = caf::actor_cast<caf::actor>(self);
  auto data = random_bytes(*b, 8 << 20, rng);
  std::vector<std::uint64_t> ops;
  for (int i = 0; i < 8; ++i) {
    ops.push_back(b->write(*g, 0, data, status_to));
    ops.push_back(b->read(*g, 0, b->allocate(8 << 20), status_to));
  }
  a->stop();
  std::map<std::uint64_t, outcome> seen;
  while (seen.size() < ops.size()) {
    bool timed_out = false;
    self->receive(
        [&](grant_done_atom, std::uint64_t id, grant_status st, std::string& detail) {
          CHECK_MESSAGE(seen.count(id) == 0, "operation ", id, " ended twice");
          seen[id] = {st, detail};
        },
        caf::after(60s) >> [&] { timed_out = true; });
    REQUIRE_FALSE(timed_out);
  }
  std::size_t dropped = 0;
  for (auto op : ops) {
    auto& o = seen[op];
    CHECK_MESSAGE((o.st == grant_status::ok || o.st == grant_status::dropped), to_string(o.st),
                  ": ", o.detail);
    dropped += o.st == grant_status::dropped;
  }
  MESSAGE(dropped, " of ", ops.size(), " uses were in flight when node-a stopped");
  // Afterwards, at once.
  auto after = status_of(self, b->write(*g, 0, data, status_to));
  CHECK(after.st == grant_status::dropped);
  CHECK(after.detail == "node 'node-a' is not connected");
}

TEST_CASE(
    "grant: atomics from 4 nodes on one word count to the exact total, each old value "
    "seen once") {
  auto a = start_node(node_settings("node-a"));
  std::vector<std::unique_ptr<runtime>> holders;
  for (auto name : {"node-b", "node-c", "node-d", "node-e"})
    holders.push_back(start_node(node_settings(name, {{"node-a", a->port()}})));
  auto words = a->allocate(64);
  std::memset(words.data(), 0, 64);
  REQUIRE(reinterpret_cast<std::uintptr_t>(words.data()) % 8 == 0);
  a->publish(spawn_sink(a->system()), "sink");
  std::vector<grant> grants;
  for (auto& h : holders) {
    auto name = h->node_name();
    REQUIRE(once_connected([&] { return h->remote_actor("node-a", "sink"); }));
    auto g = once_connected([&] { return a->make_grant(name, words, grant_rights::read_write); });
    REQUIRE_MESSAGE(g, error_text(*a, g));
    grants.push_back(*g);
  }
  constexpr std::uint64_t adds = 200, swaps = 40;
  std::vector<std::vector<std::uint64_t>> seen(holders.size());
  std::vector<std::string> failures(holders.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < holders.size(); ++i)
    threads.emplace_back([&, i] {
      auto& h = *holders[i];
      caf::scoped_actor self{h.system()};
      auto me = caf::actor_cast<caf::actor>(self);
      auto answer = [&](std::uint64_t op, std::uint64_t& old) {
        bool ok = false;
        for (bool more = true; more;)
          self->receive(
              [&](grant_done_atom, std::uint64_t id, grant_status st, std::string& detail,
                  std::uint64_t value) {
                if (st != grant_status::ok)
                  failures[i] = to_string(st) + ": " + detail;
                ok = id == op && st == grant_status::ok;
                old = value;
                more = false;
              },
              caf::after(60s) >>
                  [&] {
                    failures[i] = "no answer";
                    more = false;
                  });
        return ok;
      };
      // All adds in flight at once: the owner takes them in any order.
      std::vector<std::uint64_t> ops;
      for (std::uint64_t k = 0; k < adds; ++k)
        ops.push_back(h.fetch_add(grants[i], 0, 1, me));
      for (std::size_t k = 0; k < ops.size(); ++k) {
        std::uint64_t old = 0;
        bool ok = false;
        self->receive(
            [&](grant_done_atom, std::uint64_t, grant_status st, std::string& detail,
                std::uint64_t value) {
              ok = st == grant_status::ok;
              if (!ok)
                failures[i] = to_string(st) + ": " + detail;
              old = value;
            },
            caf::after(60s) >> [&] { failures[i] = "no answer"; });
        if (!ok)
          return;
        seen[i].push_back(old);
      }
      // Increments by compare-and-swap, retried until each lands.
      std::uint64_t guess = 0;
      for (std::uint64_t k = 0; k < swaps;) {
        std::uint64_t old = 0;
        if (!answer(h.compare_swap(grants[i], 8, guess, guess + 1, me), old))
          return;
        if (old == guess)
          ++k;
        guess = old == guess ? guess + 1 : old;
      }
    });
  for (auto& t : threads)
    t.join();
  for (auto& f : failures)
    CHECK_MESSAGE(f.empty(), f);
  std::vector<std::uint64_t> all;
  for (auto& s : seen)
    all.insert(all.end(), s.begin(), s.end());
  std::sort(all.begin(), all.end());
  REQUIRE(all.size() == holders.size() * adds);
  for (std::uint64_t k = 0; k < all.size(); ++k)
    REQUIRE(all[k] == k);
  std::uint64_t total = 0, swapped = 0;
  std::memcpy(&total, words.data(), 8);
  std::memcpy(&swapped, words.data() + 8, 8);
  CHECK(total == holders.size() * adds);
  CHECK(swapped == holders.size() * swaps);

  // A word that is not aligned in the owner's memory is refused by it.
  caf::scoped_actor self{holders[0]->system()};
  auto odd = once_connected(
      [&] { return a->make_grant("node-b", words.slice(4, 32), grant_rights::read_write); });
  REQUIRE(odd);
  auto op = holders[0]->fetch_add(*odd, 0, 1, caf::actor_cast<caf::actor>(self));
  self->receive(
      [&](grant_done_atom, std::uint64_t id, grant_status st, std::string& detail, std::uint64_t) {
        CHECK(id == op);
        CHECK(st == grant_status::refused);
        CHECK(detail.find("aligned in memory") != std::string::npos);
      },
      caf::after(30s) >> [] { FAIL("no status"); });
}

TEST_CASE_FIXTURE(two_nodes,
                  "grant: more reads in flight than the owner has map slots for wait for one, "
                  "and all end well") {
  std::mt19937 rng(21);
  auto l = lend_setup(*a, 1 << 20, rng);
  auto g = grant_once_connected(*a, "node-b", l.region, grant_rights::read);
  REQUIRE(g);
  a->publish(spawn_sink(a->system()), "sink");
  REQUIRE(once_connected([&] { return b->remote_actor("node-a", "sink"); }));
  caf::scoped_actor self{b->system()};
  auto me = caf::actor_cast<caf::actor>(self);
  // 16 slots (channel.iomap_size): 60 reads of 16 KiB each at once.
  std::map<std::uint64_t, std::pair<buffer, std::size_t>> reads;
  for (std::size_t k = 0; k < 60; ++k) {
    auto into = b->allocate(16 << 10);
    auto offset = k * (16 << 10);
    reads.emplace(b->read(*g, offset, into, me), std::make_pair(into, offset));
  }
  for (std::size_t k = 0; k < 60; ++k) {
    self->receive(
        [&](grant_done_atom, std::uint64_t op, grant_status st, std::string& detail) {
          REQUIRE_MESSAGE(st == grant_status::ok, to_string(st), ": ", detail);
          auto it = reads.find(op);
          REQUIRE(it != reads.end());
          CHECK(std::memcmp(it->second.first.data(), l.reference.data() + it->second.second,
                            16 << 10) == 0);
          reads.erase(it);
        },
        caf::after(60s) >> [] { FAIL("no status"); });
  }
  CHECK(reads.empty());
  // All destinations were given back.
  for (const auto& [peer, c] : b->stats().peers)
    CHECK(c.exposed_maps == 0);
}

TEST_CASE_FIXTURE(two_nodes,
                  "grant: a write's and an atomic's then message ride on the use, without a round "
                  "trip, and a one-sided read's; a read's served by the owner and one carrying a "
                  "placed buffer follow the answer") {
  std::mt19937 rng(33);
  auto l = lend_setup(*a, 1 << 16, rng);
  auto g = grant_once_connected(*a, "node-b", l.region, grant_rights::read_write);
  REQUIRE(g);
  // Counts the then messages it gets, of either shape.
  auto told = std::make_shared<std::uint64_t>(0);
  a->publish(spawn_fn(a->system(),
                      [told](caf::event_based_actor*) -> caf::behavior {
                        return {[told](witness_atom, std::uint64_t) { ++*told; },
                                [told](witness_atom, const buffer&) { ++*told; },
                                [told](tally_atom) { return *told; }};
                      }),
             "counter");
  auto counter = once_connected([&] { return b->remote_actor("node-a", "counter"); });
  REQUIRE(counter);
  caf::scoped_actor self{b->system()};
  auto me = caf::actor_cast<caf::actor>(self);
  auto then = [&](std::uint64_t i) {
    return runtime::then_message{*counter, caf::make_message(witness_atom::value, i)};
  };
  auto carried_before = a->stats().node.thens_carried;
  for (std::uint64_t i = 0; i < 3; ++i) {
    auto data = random_bytes(*b, 1000, rng);
    auto got = status_of(self, b->write(*g, i * 1000, data, me, then(i)));
    REQUIRE_MESSAGE(got.st == grant_status::ok, got.detail);
  }
  auto aligned = first_word(l.region);
  auto op = b->fetch_add(*g, aligned, 1, me, then(3));
  self->receive(
      [&](grant_done_atom, std::uint64_t id, grant_status st, std::string& detail, std::uint64_t) {
        CHECK(id == op);
        CHECK_MESSAGE(st == grant_status::ok, detail);
      },
      caf::after(30s) >> [] { FAIL("no status"); });
  auto into = b->allocate(4096);
  auto read = status_of(self, b->read(*g, 0, into, me, then(4)));
  REQUIRE_MESSAGE(read.st == grant_status::ok, read.detail);
  // A pool buffer of 1 MiB is placed, not serialized: it cannot ride.
  auto big = b->allocate(1 << 20);
  auto data = random_bytes(*b, 100, rng);
  auto got = status_of(
      self, b->write(*g, 0, data, me, {*counter, caf::make_message(witness_atom::value, big)}));
  REQUIRE_MESSAGE(got.st == grant_status::ok, got.detail);
  // The last two went from the holder before their statuses came here.
  self->request(*counter, 30s, tally_atom::value)
      .receive([](std::uint64_t n) { CHECK(n == 6); },
               [&](caf::error& e) { FAIL(b->system().render(e)); });
  CHECK(a->stats().node.thens_carried - carried_before == (g->one_sided ? 5 : 4));
}

TEST_CASE_FIXTURE(two_nodes,
                  "grant: on rdma the holder reads and runs atomics one-sided and the owner's CPU "
                  "serves none; on tcp the owner serves them") {
  std::mt19937 rng(41);
  auto l = lend_setup(*a, 1 << 16, rng);
  auto g = grant_once_connected(*a, "node-b", l.region, grant_rights::read_write);
  REQUIRE(g);
  bool rdma = fabric_under_test() == "rdma";
  CHECK(g->one_sided == rdma);
  caf::scoped_actor self{b->system()};
  auto me = caf::actor_cast<caf::actor>(self);
  auto served_before = a->stats().node.grants_served;
  auto fetched_before = b->stats().node.grants_fetched;
  auto aligned = first_word(l.region);
  std::uint64_t word = 0;
  std::memcpy(&word, l.reference.data() + aligned, 8);
  for (std::uint64_t i = 0; i < 10; ++i) {
    auto into = b->allocate(5000);
    auto read = status_of(self, b->read(*g, 1000 * i, into, me));
    REQUIRE_MESSAGE(read.st == grant_status::ok, read.detail);
    CHECK(std::memcmp(into.data(), l.reference.data() + 1000 * i, 5000) == 0);
    b->fetch_add(*g, aligned, 3, me);
    self->receive(
        [&](grant_done_atom, std::uint64_t, grant_status st, std::string& detail,
            std::uint64_t old) {
          REQUIRE_MESSAGE(st == grant_status::ok, detail);
          CHECK(old == word + 3 * i);
        },
        caf::after(30s) >> [] { FAIL("no status"); });
  }
  std::uint64_t now = 0;
  std::memcpy(&now, l.region.data() + aligned, 8);
  CHECK(now == word + 30);
  auto served = a->stats().node.grants_served - served_before;
  auto fetched = b->stats().node.grants_fetched - fetched_before;
  CHECK(served == (rdma ? 0 : 20));
  CHECK(fetched == (rdma ? 20 : 0));
}

TEST_CASE_FIXTURE(two_nodes,
                  "grant: read grants past the holder's map slots are served by the owner, and "
                  "every read of every grant ends well") {
  std::mt19937 rng(43);
  auto l = lend_setup(*a, 24 * 4096, rng);
  std::vector<grant> lent;
  for (std::size_t k = 0; k < 24; ++k) {
    auto g = grant_once_connected(*a, "node-b", l.region.slice(k * 4096, 4096), grant_rights::read);
    REQUIRE(g);
    lent.push_back(*g);
  }
  auto one_sided =
      std::count_if(lent.begin(), lent.end(), [](const grant& g) { return g.one_sided; });
  MESSAGE(one_sided, " of 24 read grants one-sided");
  if (fabric_under_test() == "rdma") {
    CHECK(one_sided > 0);
    CHECK(one_sided < 24);  // channel.iomap_size is 16
  } else {
    CHECK(one_sided == 0);
  }
  caf::scoped_actor self{b->system()};
  auto me = caf::actor_cast<caf::actor>(self);
  // b's side of the connection a dialed is up once a's confirmation is in,
  // which may be after a made its grants.
  for (int i = 0; i < 250 && b->stats().peers.empty(); ++i)
    std::this_thread::sleep_for(20ms);
  for (std::size_t k = 0; k < lent.size(); ++k) {
    auto into = b->allocate(4096);
    auto got = status_of(self, b->read(lent[k], 0, into, me));
    REQUIRE_MESSAGE(got.st == grant_status::ok, got.detail);
    CHECK(std::memcmp(into.data(), l.reference.data() + k * 4096, 4096) == 0);
  }
  for (const auto& g : lent)
    CHECK(a->revoke(g));
}
