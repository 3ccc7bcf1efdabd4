// One memory domain per node: per RDMA device, one protection domain that
// every connection on the device uses, and one cache of the registrations
// the node sends from, so memory is registered once however many peers it
// goes to. It counts and bounds what the node pins (registered memory is
// locked memory): a registration past `memory.max_pinned` or past
// RLIMIT_MEMLOCK is refused with an error naming both.
//
// A shared protection domain makes a remotely writable registration's key
// valid on every queue pair in it. What a connection exposes to its peer
// (receive ring, target lists, arena maps) is therefore reached through a
// type 2 memory window bound to that connection's queue pair only; a
// device without them gives each connection a private domain instead
// (device::windows()).
#pragma once

#include <riomesh/stats.hpp>

#include <riomesh/channels/memory/registration_cache.hpp>
#include <riomesh/channels/memory/shared_registrations.hpp>
#include <riomesh/channels/verbs/shared_cq.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct ibv_context;
struct ibv_pd;
struct ibv_mr;

namespace riomesh::channels::verbs {

struct memory_limits {
  std::uint64_t max_pinned = 0;  // 0: RLIMIT_MEMLOCK only
  registration_cache::limits cache;
  // A device's connections share its completion queues (shared_cq.hpp)
  // from the this-many-th on (1: all of them); 0: none, each has its own.
  std::uint32_t shared_cq_from = 0;
};

class memory_domain {
 public:
  using counters = memory_counters;

  // The domain's view of one device.
  class device {
   public:
    ~device();
    device(const device&) = delete;
    device& operator=(const device&) = delete;
    ibv_pd* pd() const { return pd_; }
    const std::string& name() const { return name_; }
    // Queue pairs of this domain reach exposed memory through windows.
    bool windows() const { return windows_; }
    // Registers [base, base + n) with `access` (ibv_access_flags), counted
    // and bounded; null with `error` set. `dmabuf` >= 0: the bytes are
    // device memory, that dma-buf's from its offset 0, and `base` is their
    // CPU mapping (the address the keys use).
    ibv_mr* register_region(void* base, std::size_t n, int access, std::string& error,
                            int dmabuf = -1);
    void deregister(ibv_mr* mr);
    // Whether the device registers dma-buf; if not, `why` (asked once, when
    // the domain opened the device).
    bool dmabuf(std::string& why) const {
      why = dmabuf_refusal_;
      return dmabuf_refusal_.empty();
    }
    // The send registrations every connection on this device shares.
    shared_registrations& sends() { return *sends_; }
    // A completion queue the device's connections share, with `room`
    // entries reserved in it for one more queue pair: the first one that can
    // hold them, a new one when none can (a queue holds at most the device's
    // max_cqe, and each queue pair reserves its send and receive queues);
    // null with `error` set.
    shared_cq* completions(std::uint32_t room, std::string& error);
    // A connection left `q`: a queue opened beyond the first closes once
    // nothing is on it (the first stays, for the next that shares).
    void left(shared_cq* q);
    // A connection of the node on this device came or went; whether the
    // one that came shares the device's completion queues
    // (memory_limits::shared_cq_from).
    bool joined();
    void parted() { --connections_; }

   private:
    friend class memory_domain;
    device(memory_domain& owner, ibv_context* ctx, ibv_pd* pd, bool windows);
    class send_fabric;
    memory_domain& owner_;
    ibv_pd* pd_;
    bool windows_;
    std::string name_;
    std::string dmabuf_refusal_;
    std::unique_ptr<send_fabric> fabric_;
    std::unique_ptr<shared_registrations> sends_;
    ibv_context* ctx_;
    std::mutex cq_lock_;
    std::vector<std::unique_ptr<shared_cq>> cqs_;
    std::atomic<std::uint32_t> connections_{0};
  };

  explicit memory_domain(const memory_limits& l);
  ~memory_domain();
  memory_domain(const memory_domain&) = delete;
  memory_domain& operator=(const memory_domain&) = delete;

  // The device behind `ctx`, its protection domain allocated on first use;
  // null with `error` set.
  device* attach(ibv_context* ctx, std::string& error);
  // Attaches every RDMA device the process has (librdmacm's contexts, the
  // ones connections come with), so that what a device cannot do is known
  // when the node starts; empty with `error` set if one cannot be.
  std::vector<device*> attach_all(std::string& error);
  // Gives back the send registrations no connection used for `idle`, on
  // every device; how many.
  std::size_t trim(std::chrono::nanoseconds idle);
  counters stats() const;

  // Who waits for the shared completion queues' signals (shared_cq.hpp):
  // the node's progress thread, which calls `ready` on its own thread once
  // `fd` is readable (`watch`: false if it cannot) until `unwatch(fd)`.
  // Without one (the default, or empty), each queue has a thread of its
  // own. Set before the node's connections come; cleared after its
  // progress thread stopped, before that thread's loop goes.
  struct queue_watch {
    std::function<bool(int fd, std::function<void()> ready)> watch;
    std::function<void(int fd)> unwatch;
  };
  void watch_queues(queue_watch w);

 private:
  // A queue opened or about to close: into and out of the watch.
  void watch_queue(shared_cq& q);
  void unwatch_queue(shared_cq& q);
  void watch_locked(shared_cq& q);  // watch_lock_ held
  void unwatch_locked(shared_cq& q);
  // Reserves n pinned bytes against the bounds; false with `error` set.
  bool reserve(std::size_t n, std::string& error);
  void release(std::size_t n);

  memory_limits limits_;
  mutable std::mutex lock_;
  std::map<ibv_context*, std::unique_ptr<device>> devices_;
  std::mutex watch_lock_;  // after lock_ and a device's cq_lock_
  queue_watch watch_;
  std::atomic<std::uint64_t> registrations_{0}, registered_{0}, pinned_{0}, peak_{0}, refused_{0};
};

}  // namespace riomesh::channels::verbs
