#include "verbs_liar.hpp"

#include <riomesh/channels/verbs/rdma_channel.hpp>
#include <riomesh/channels/wire/constants.hpp>
#include <riomesh/channels/wire/immediate.hpp>
#include <riomesh/channels/wire/sge.hpp>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <chrono>
#include <stdexcept>
#include <thread>

namespace riomesh::channels::verbs {

// The liar reaches into its own channel: the queue pair to post on, and
// what the victim wrote into its target list.
struct rdma_channel_probe {
  static ibv_qp* qp(rdma_channel& c) { return c.id_->qp; }
  static ibv_pd* pd(rdma_channel& c) { return c.pd_; }
  static engine::engine& eng(rdma_channel& c) { return *c.eng_; }
  static const std::vector<unsigned char>& targets(rdma_channel& c) { return c.target_list_; }
};

}  // namespace riomesh::channels::verbs

namespace riomesh::test {

using channels::verbs::rdma_channel;
using channels::verbs::rdma_channel_probe;

std::vector<verbs_lie> all_verbs_lies() {
  return {verbs_lie::bad_key,           verbs_lie::outside_iomap,   verbs_lie::bogus_credits,
          verbs_lie::data_beyond_space, verbs_lie::length_mismatch, verbs_lie::unknown_op,
          verbs_lie::unknown_ctrl};
}

const char* to_string(verbs_lie lie) {
  switch (lie) {
    case verbs_lie::bad_key:
      return "a write with a wrong rkey";
    case verbs_lie::outside_iomap:
      return "a write past the end of the mapped arena";
    case verbs_lie::bogus_credits:
      return "an SGL update granting bogus credits";
    case verbs_lie::data_beyond_space:
      return "DATA longer than the target space given";
    case verbs_lie::length_mismatch:
      return "a DATA immediate longer than its write";
    case verbs_lie::unknown_op:
      return "an immediate with a reserved op";
    case verbs_lie::unknown_ctrl:
      return "an unknown control code";
  }
  return "?";
}

std::string expected_reason(verbs_lie lie) {
  switch (lie) {
    case verbs_lie::bogus_credits:
      return "beyond the peer's queue";
    case verbs_lie::data_beyond_space:
      return "DATA of";
    case verbs_lie::length_mismatch:
      return "the write carried";
    case verbs_lie::unknown_op:
      return "unknown op";
    case verbs_lie::unknown_ctrl:
      return "unknown control code";
    default:
      return "";
  }
}

namespace {

// Memory to write from, registered with the liar's protection domain.
class scratch {
 public:
  scratch(ibv_pd* pd, std::size_t n) : bytes_(n, 0x66) {
    mr_ = ibv_reg_mr(pd, bytes_.data(), n, IBV_ACCESS_LOCAL_WRITE);
    if (!mr_)
      throw std::runtime_error("liar: cannot register its scratch memory");
  }
  ~scratch() { ibv_dereg_mr(mr_); }
  ibv_sge sge(std::size_t n) {
    return {reinterpret_cast<std::uintptr_t>(bytes_.data()), static_cast<std::uint32_t>(n),
            mr_->lkey};
  }

 private:
  std::vector<unsigned char> bytes_;
  ibv_mr* mr_ = nullptr;
};

void post(ibv_qp* qp, ibv_sge* sge, std::uint64_t addr, std::uint32_t rkey,
          std::optional<wire::immediate> imm) {
  ibv_send_wr wr{};
  wr.wr_id = 0x11a7;  // unknown to the liar's engine: it may fail too
  wr.sg_list = sge;
  wr.num_sge = sge && sge->length ? 1 : 0;
  wr.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
  if (imm) {
    auto value = wire::encode(*imm);
    if (!value)
      throw std::logic_error("liar: immediate data too large");
    wr.imm_data = wire::to_wire(*value);
  }
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = addr;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  if (int e = ibv_post_send(qp, &wr, &bad))
    throw std::runtime_error("liar: ibv_post_send: " + std::to_string(e));
}

// The victim's arena as mapped for us: the slot at offset 0.
wire::iomap_entry arena_map(rdma_channel& ch) {
  auto& eng = rdma_channel_probe::eng(ch);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    ch.progress();
    for (std::uint32_t i = 0; i < eng.parameters().iomap_slots; ++i) {
      auto e = eng.target_iomap(i);
      if (e.target.length > 0 && e.offset == 0)
        return e;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("liar: the victim's arena map never arrived");
}

// The lowest target the victim gave us in its receive ring.
wire::sge first_target(rdma_channel& ch) {
  const auto& list = rdma_channel_probe::targets(ch);
  wire::sge best;
  for (std::uint32_t i = 0; i < wire::target_sgl_slots; ++i) {
    auto s = wire::decode_sge(list.data() + i * wire::sge_size, wire::host_order());
    if (s.length > 0 && (best.length == 0 || s.addr < best.addr))
      best = s;
  }
  if (best.length == 0)
    throw std::runtime_error("liar: the victim gave no receive target");
  return best;
}

}  // namespace

void tell(channels::channel& channel, verbs_lie lie) {
  auto* ch = dynamic_cast<rdma_channel*>(&channel);
  if (!ch)
    throw std::logic_error("verbs lies need an rdma channel");
  auto* qp = rdma_channel_probe::qp(*ch);
  scratch from(rdma_channel_probe::pd(*ch), 256 << 10);
  auto consumed = rdma_channel_probe::eng(*ch).state().consumed;
  switch (lie) {
    case verbs_lie::bad_key: {
      auto map = arena_map(*ch);
      auto s = from.sge(4096);
      return post(qp, &s, map.target.addr, map.target.key ^ 0x5a5a00, std::nullopt);
    }
    case verbs_lie::outside_iomap: {
      auto map = arena_map(*ch);
      auto s = from.sge(4096);
      return post(qp, &s, map.target.addr + map.target.length, map.target.key, std::nullopt);
    }
    case verbs_lie::bogus_credits: {
      // The victim has sent us `consumed` messages; this limit grants it
      // 0x4000 more, far beyond any receive queue we posted.
      auto limit = static_cast<std::uint16_t>(consumed + 0x4000);
      return post(qp, nullptr, 0, 0, wire::immediate{wire::op::sgl, limit});
    }
    case verbs_lie::data_beyond_space: {
      auto t = first_target(*ch);
      std::uint32_t n = std::min<std::uint32_t>(t.length + 4096, 256 << 10);
      auto s = from.sge(n);
      return post(qp, &s, t.addr, t.key, wire::immediate{wire::op::data, n});
    }
    case verbs_lie::length_mismatch:
      return post(qp, nullptr, 0, 0, wire::immediate{wire::op::data, 4096});
    case verbs_lie::unknown_op:
      return post(qp, nullptr, 0, 0, wire::immediate{wire::op::reserved_data1, 7});
    case verbs_lie::unknown_ctrl:
      return post(qp, nullptr, 0, 0, wire::immediate{wire::op::ctrl, 9});
  }
}

}  // namespace riomesh::test
