// Registration of the memory a channel's placements come from and go to,
// for fabrics whose device must know it (rdma: channel::registration());
// tcp reads and writes through the CPU and needs none.
#pragma once

#include <riomesh/channels/engine/types.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace riomesh::channels {

// A pinned registration of memory iowrite() sources come from.
struct memory_pin {
  std::uint64_t id = 0;
  bool fresh = false;  // registered by this call (a miss)
};

struct map_result {
  engine::status st = engine::status::ok;
  std::uint64_t offset = 0;
};

class memory_registration {
 public:
  // Pins a registration covering [base, base + length) that iowrite()
  // sources will come from, instead of one per call (from the cache the
  // node's connections on the device share, registered on a miss); `keep`
  // holds the memory for as long as a registration made now covers it.
  // Nothing if none can be had: iowrite then registers for the one call.
  virtual std::optional<memory_pin> pin_memory(const void* base, std::size_t length,
                                               std::shared_ptr<const void> keep) = 0;
  virtual void unpin_memory(std::uint64_t id) = 0;
  // Whether device memory that a dma-buf gives can be mapped as it is
  // (`why` says what the device lacks). If not, the owner stages what
  // arrives in host memory and copies it over.
  virtual bool maps_dmabuf(std::string& why) const = 0;
  // channel::map() of memory whose bytes are dma-buf `fd` from its offset
  // 0 (base is the CPU mapping of that offset).
  virtual map_result map_dmabuf(void* base, std::size_t length, int fd,
                                std::optional<std::uint64_t> offset) = 0;

 protected:
  ~memory_registration() = default;
};

}  // namespace riomesh::channels
