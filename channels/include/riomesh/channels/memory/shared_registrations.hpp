// One registration cache shared by every connection on a device, from
// whichever I/O thread sends: a pool slab sent to 64 peers is registered
// once. Lookups take a short lock and never wait on anything slower than
// the registration a miss makes. Each entry holds the memory it covers
// (`keep`) so a registration never outlives its pages; user memory that
// goes back to the user is invalidated before the next lookup
// (invalidation_bus.hpp).
#pragma once

#include <riomesh/channels/memory/invalidation_bus.hpp>
#include <riomesh/channels/memory/registration_cache.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace riomesh::channels {

class shared_registrations {
 public:
  struct pinned {
    std::uint64_t id = 0;
    registration reg;
    bool fresh = false;  // registered for this call (a miss)
  };

  shared_registrations(registrar& fabric, const registration_cache::limits& l);
  ~shared_registrations();
  shared_registrations(const shared_registrations&) = delete;
  shared_registrations& operator=(const shared_registrations&) = delete;

  // A registration covering [p, p + n), pinned until unpin(); `keep` holds
  // the memory while a registration made now covers it.
  std::optional<pinned> acquire(const void* p, std::size_t n, std::shared_ptr<const void> keep);
  void unpin(std::uint64_t id);
  // The live registration covering [p, p + n) (the caller holds a pin),
  // after the notices of memory gone: a range the user took back must not
  // be found for the bytes that come to live there.
  std::optional<registration> covering(const void* p, std::size_t n);

  // Gives back what nothing used since `before` (registration_cache::trim).
  std::size_t trim(registration_cache::clock::time_point before);

  registration_cache::counters stats() const;
  std::size_t entries() const;
  std::uint64_t bytes() const;

 private:
  // Registers through the fabric and keeps what the caller asked kept.
  class keeper : public registrar {
   public:
    explicit keeper(registrar& fabric) : fabric_(fabric) {}
    std::optional<registration> register_range(std::uintptr_t base, std::size_t length) override;
    void deregister(const registration& r) override;
    std::shared_ptr<const void> next_keep;

   private:
    registrar& fabric_;
    // By base and key, not base alone: a retired registration still in use
    // and its successor may share a base, and the one that goes must not
    // take the other's hold (the successor's pages could then be freed and
    // reused while the device still reads the old ones: stale bytes sent).
    std::map<std::pair<std::uintptr_t, std::uint32_t>, std::shared_ptr<const void>> keep_;
  };
  void take_invalidations();

  mutable std::mutex lock_;
  keeper keeper_;
  registration_cache cache_;
  std::shared_ptr<invalidation_bus::inbox> gone_;
};

}  // namespace riomesh::channels
