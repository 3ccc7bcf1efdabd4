// One-sided reads and atomics on real verbs: what a node's connections
// negotiate (responder resources and initiator depth, the same both ways),
// what a map's access lets the peer do, and what connections speaking as
// rsockets keep (none). Runs in the soft-RoCE VM (ctest -L vm).
#include "rdma_pairs.hpp"

#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <vector>

using namespace riomesh;
using namespace riomesh::channels;
using namespace riomesh::test;
using channels::verbs::memory_limits;

namespace {

rdma_params reading(std::uint32_t depth, std::shared_ptr<memory_domain> d = nullptr) {
  auto p = with(std::move(d));
  p.read_depth = depth;
  p.engine.iomap_slots = 4;  // room for the peer's maps
  return p;
}

// Drives both sides until `of` reports an event of `kind` (its value),
// for at most 10 s.
std::optional<event> await(rdma_channel& of, rdma_channel& other, event_kind kind) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::vector<event> got;
  while (std::chrono::steady_clock::now() < until && !of.closed()) {
    of.progress();
    other.progress();
    got.clear();
    of.take_events(got);
    for (const auto& e : got)
      if (e.kind == kind)
        return e;
  }
  return std::nullopt;
}

std::vector<unsigned char> random_block(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> out(n);
  for (auto& b : out)
    b = static_cast<unsigned char>(rng());
  return out;
}

constexpr std::uint64_t at = std::uint64_t{1} << 40;
constexpr std::uint8_t all = map_access::write | map_access::read | map_access::atomic;

// `reader` reads what `owner` mapped for it, runs both atomics on one of
// its words, and a message it sends behind them arrives after them.
void reads_and_atomics(rdma_channel& reader, rdma_channel& owner, unsigned seed) {
  auto lent = random_block(64 * 1024, seed);
  auto original = lent;
  REQUIRE(owner.map(lent.data(), lent.size(), at, all).st == status::ok);
  REQUIRE(await(reader, owner, event_kind::peer_iomap));
  // Three destinations, one read: scattered at their ends.
  std::vector<unsigned char> a(10000), b(30000), c(20000);
  one_sided_access::destination into[3] = {
      {a.data(), a.size()}, {b.data(), b.size()}, {c.data(), c.size()}};
  auto r = reader.ioread(into, 3, at + 100, 7);
  REQUIRE(r.st == status::ok);
  CHECK(r.bytes == 60000);
  auto done = await(reader, owner, event_kind::ioread_done);
  REQUIRE(done);
  CHECK(done->token == 7);
  CHECK(std::memcmp(a.data(), original.data() + 100, a.size()) == 0);
  CHECK(std::memcmp(b.data(), original.data() + 10100, b.size()) == 0);
  CHECK(std::memcmp(c.data(), original.data() + 40100, c.size()) == 0);

  auto* word = reinterpret_cast<std::uint64_t*>(lent.data() + 4096);  // aligned: a page in
  REQUIRE(reinterpret_cast<std::uintptr_t>(word) % 8 == 0);
  *word = 40;
  REQUIRE(reader.ioatomic(atomic_op::fetch_add, at + 4096, 2, 0, 8).st == status::ok);
  auto added = await(reader, owner, event_kind::ioatomic_done);
  REQUIRE(added);
  CHECK(added->token == 8);
  CHECK(added->value == 40);
  CHECK(*word == 42);
  REQUIRE(reader.ioatomic(atomic_op::compare_swap, at + 4096, 41, 7, 9).st == status::ok);
  auto missed = await(reader, owner, event_kind::ioatomic_done);
  REQUIRE(missed);
  CHECK(missed->value == 42);
  CHECK(*word == 42);  // not 41: nothing swapped
  REQUIRE(reader.ioatomic(atomic_op::compare_swap, at + 4096, 42, 7, 10).st == status::ok);
  REQUIRE(await(reader, owner, event_kind::ioatomic_done));
  CHECK(*word == 7);
  CHECK(reader.ioatomic(atomic_op::fetch_add, at + 4100, 1, 0, 11).st == status::invalid);
  CHECK(reader.ioatomic(atomic_op::fetch_add, at + lent.size(), 1, 0, 11).st == status::no_mapping);

  // Fenced: the message behind a read finds the read done when it lands.
  std::vector<unsigned char> whole(lent.size());
  one_sided_access::destination all_of{whole.data(), whole.size()};
  REQUIRE(reader.ioread(&all_of, 1, at, 12).bytes == whole.size());
  CHECK(carries(reader, owner, "the read is done"));
  CHECK(await(reader, owner, event_kind::ioread_done));
  CHECK(std::memcmp(whole.data(), lent.data(), whole.size()) == 0);
  CHECK(owner.unmap(at) == status::ok);
}

}  // namespace

TEST_CASE(
    "one-sided reads: a node's connections get read resources both ways, through windows or "
    "a private domain, and read and run atomics on what the other side mapped") {
  for (bool windows : {true, false}) {
    CAPTURE(windows);
    auto d = windows ? std::make_shared<memory_domain>(memory_limits{}) : nullptr;
    auto e = windows ? std::make_shared<memory_domain>(memory_limits{}) : nullptr;
    auto pairs = connect_pairs(1, reading(16, d), reading(16, e));
    auto& p = pairs[0];
    CHECK(p.dialer->uses_windows() == windows);
    CHECK(p.dialer->one_sided() != nullptr);
    CHECK(p.acceptor->one_sided() != nullptr);
    CHECK(p.dialer->protocol().parameters().max_rd_atomic > 0);
    reads_and_atomics(*p.dialer, *p.acceptor, 1);
    reads_and_atomics(*p.acceptor, *p.dialer, 2);
  }
}

TEST_CASE(
    "one-sided reads: a map for reading only refuses the peer's write, which fails its "
    "connection alone, and the memory is untouched") {
  auto d = std::make_shared<memory_domain>(memory_limits{});
  auto e = std::make_shared<memory_domain>(memory_limits{});
  auto pairs = connect_pairs(2, reading(16, d), reading(16, e));
  auto& writer = *pairs[0].dialer;
  auto& owner = *pairs[0].acceptor;
  auto lent = random_block(8192, 3);
  auto before = lent;
  REQUIRE(owner.map(lent.data(), lent.size(), at, map_access::read).st == status::ok);
  REQUIRE(await(writer, owner, event_kind::peer_iomap));
  std::vector<unsigned char> mine(8192);
  one_sided_access::destination into{mine.data(), mine.size()};
  REQUIRE(writer.ioread(&into, 1, at, 1).st == status::ok);
  REQUIRE(await(writer, owner, event_kind::ioread_done));
  CHECK(mine == before);
  // Writing or running an atomic needs more than the map allows.
  std::vector<unsigned char> forged(4096, 0xEE);
  REQUIRE(writer.iowrite(forged.data(), forged.size(), at, 2).st == status::ok);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!writer.closed() && std::chrono::steady_clock::now() < until) {
    writer.progress();
    owner.progress();
  }
  CHECK(writer.failed());
  MESSAGE("the write into a map for reading: " << writer.reason());
  CHECK(writer.reason().find("remote access error") != std::string::npos);
  CHECK(lent == before);
  // The other connection goes on, reads included.
  auto& other = *pairs[1].dialer;
  auto& its_owner = *pairs[1].acceptor;
  CHECK(carries(other, its_owner, "still here"));
  REQUIRE(its_owner.map(lent.data(), lent.size(), at, map_access::read).st == status::ok);
  REQUIRE(await(other, its_owner, event_kind::peer_iomap));
  std::fill(mine.begin(), mine.end(), 0);
  REQUIRE(other.ioread(&into, 1, at, 3).st == status::ok);
  REQUIRE(await(other, its_owner, event_kind::ioread_done));
  CHECK(mine == before);
}

TEST_CASE(
    "one-sided reads: a connection speaking as rsockets, or with a peer that offers none, "
    "negotiates none and refuses reads, atomics and maps for them") {
  for (auto [dial, accept] : {std::pair<std::uint32_t, std::uint32_t>{0, 0}, {16, 0}, {0, 16}}) {
    CAPTURE(dial);
    CAPTURE(accept);
    auto pairs = connect_pairs(1, reading(dial), reading(accept));
    auto& p = pairs[0];
    CHECK(p.dialer->one_sided() == nullptr);
    CHECK(p.acceptor->one_sided() == nullptr);
    CHECK(p.dialer->protocol().parameters().max_rd_atomic == 0);
    std::vector<unsigned char> block(4096);
    CHECK(p.acceptor->map(block.data(), block.size(), at, map_access::read).st ==
          status::unsupported);
    REQUIRE(p.acceptor->map(block.data(), block.size(), at).st == status::ok);
    REQUIRE(await(*p.dialer, *p.acceptor, event_kind::peer_iomap));
    one_sided_access::destination into{block.data(), 64};
    CHECK(p.dialer->ioread(&into, 1, at, 1).st == status::unsupported);
    CHECK(p.dialer->ioatomic(atomic_op::fetch_add, at, 1, 0, 2).st == status::unsupported);
    CHECK(carries(*p.dialer, *p.acceptor, "and streams as before"));
  }
}
