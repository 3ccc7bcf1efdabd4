#include "verbs_link.hpp"

#include <pair.hpp>  // guarded_buffer

#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <infiniband/verbs.h>

#include <cstdlib>
#include <future>
#include <map>
#include <stdexcept>

namespace riomesh::channels::verbs {

struct rdma_channel_probe {
  static engine::engine& eng(rdma_channel& c) { return *c.eng_; }
  static void flush(rdma_channel& c) { c.post_work(); }
  static ibv_pd* pd(rdma_channel& c) { return c.pd_; }
};

}  // namespace riomesh::channels::verbs

namespace riomesh::property {
namespace {

using channels::verbs::rdma_channel;
using channels::verbs::rdma_channel_probe;
using channels::verbs::rdma_listener;
using channels::verbs::rdma_params;

std::string device_address() {
  const char* a = std::getenv("RIOMESH_RDMA_ADDR");
  return a && *a ? a : "10.77.0.1";
}

rdma_params params_of(const sim::side_config& c,
                      const std::shared_ptr<channels::verbs::memory_domain>& domain) {
  rdma_params p;
  p.engine = c.params;
  p.recv_ring = c.recv_ring;
  p.send_ring = c.send_ring;
  p.read_depth = c.params.max_rd_atomic;  // negotiated; the engine gets what both devices give
  p.domain = domain;
  return p;
}

class verbs_link final : public sim::engine_link {
 public:
  // `node`: both sides in one memory domain, as a node's connections are:
  // one protection domain, the rings reached through memory windows.
  verbs_link(const sim::side_config& a, const sim::side_config& b, bool node) {
    if (node) {
      // Every connection on the shared completion queue, as a node's are
      // with memory.shared_cq_from set.
      channels::verbs::memory_limits all_shared;
      all_shared.shared_cq_from = 1;
      domain_ = std::make_shared<channels::verbs::memory_domain>(all_shared);
    }
    std::string error;
    auto listener = rdma_listener::listen({device_address(), 0}, params_of(b, domain_), error);
    if (!listener)
      throw std::runtime_error("listen: " + error);
    config::endpoint to{device_address(), static_cast<std::uint16_t>(listener->port())};
    // connect() returns once established, which needs the accept: a thread.
    auto active = std::async(std::launch::async, [&] {
      std::string e;
      auto ch = rdma_channel::connect(to, params_of(a, domain_), e);
      if (!ch)
        throw std::runtime_error("connect: " + e);
      return ch;
    });
    ch_[1] = listener->accept(std::chrono::seconds(30), error);
    ch_[0] = active.get();
    if (!ch_[1])
      throw std::runtime_error("accept: " + error);
  }
  ~verbs_link() override {
    for (int i = 0; i < 2; ++i)
      for (auto& [lkey, mr] : mrs_[i])
        ibv_dereg_mr(mr);
  }

  engine::engine& eng(int i) override { return rdma_channel_probe::eng(*ch_[i]); }
  bool connect(bool) override { return eng(0).connected() && eng(1).connected(); }
  void flush(int i) override { rdma_channel_probe::flush(*ch_[i]); }
  std::size_t poll(int i, std::size_t) override {
    // The channel's own progress: completions, re-arming, the connection
    // manager's events, the disconnect once the engine has closed.
    bool any = ch_[i]->busy_poll();
    ch_[i]->progress();
    return any ? 1 : 0;
  }
  std::vector<engine::event> events(int i) override {
    std::vector<engine::event> out;
    eng(i).take_events(out);
    return out;
  }
  engine::region register_buffer(int i, sim::guarded_buffer& buffer, bool remote) override {
    int access =
        IBV_ACCESS_LOCAL_WRITE | (remote ? IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ : 0);
    ibv_mr* mr = ibv_reg_mr(rdma_channel_probe::pd(*ch_[i]), buffer.data(), buffer.size(), access);
    if (!mr)
      throw std::runtime_error("ibv_reg_mr failed");
    mrs_[i][mr->lkey] = mr;
    return {buffer.data(), buffer.size(), mr->lkey, mr->rkey};
  }
  void deregister(int i, std::uint32_t lkey) override {
    auto it = mrs_[i].find(lkey);
    if (it == mrs_[i].end())
      return;
    ibv_dereg_mr(it->second);
    mrs_[i].erase(it);
  }

  bool step() override { return false; }
  bool real_time() const override { return true; }
  bool can_cut() const override { return false; }
  void cut(const std::string&) override {}
  std::size_t pending_completions(int) const override { return 0; }
  // The device enforces queue sizes and access: a breach fails the engine
  // with the completion's status, which the scenario checks.
  std::string violation(int) const override { return {}; }
  std::uint64_t remote_access_errors(int) const override { return 0; }
  bool guards_intact() const override { return true; }

 private:
  std::shared_ptr<channels::verbs::memory_domain> domain_;  // outlives the channels
  std::unique_ptr<rdma_channel> ch_[2];
  std::map<std::uint32_t, ibv_mr*> mrs_[2];
};

}  // namespace

std::unique_ptr<sim::engine_link> over_verbs(const sim::side_config& a, const sim::side_config& b,
                                             std::uint64_t seed) {
  return std::make_unique<verbs_link>(a, b, seed % 2 == 1);
}

}  // namespace riomesh::property
