// A large region of the node's memory (a receive arena, a pool slab), from
// the configured provider: private anonymous memory, a memfd (a file in
// memory that another local process can map by its descriptor), or a
// dma-buf (device memory, mapped for the CPU). Pages are given on first
// touch (or when registered); the mapping and descriptor go with the
// region.
#pragma once

#include <riomesh/config/settings.hpp>

#include <cstddef>
#include <memory>
#include <string>

namespace riomesh::channels {

// Which provider, and for dma-buf which DRM device ("" = the first that
// makes buffers).
struct memory_source {
  config::memory_provider provider = config::memory_provider::anonymous;
  std::string dmabuf_device;
};

class memory_region {
 public:
  // Null with `error` set; `name` labels a memfd (/proc/<pid>/maps shows
  // it as /memfd:<name>).
  static std::shared_ptr<memory_region> make(const memory_source& from, std::size_t size,
                                             const std::string& name, std::string& error);
  ~memory_region();
  memory_region(const memory_region&) = delete;
  memory_region& operator=(const memory_region&) = delete;

  unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }
  // The memfd or dma-buf whose offset 0 is data(), or -1 (anonymous).
  int fd() const { return fd_; }
  // Device memory: fd() is a dma-buf.
  bool dmabuf() const { return dmabuf_; }

 private:
  memory_region(unsigned char* data, std::size_t size, int fd, bool dmabuf)
      : data_(data), size_(size), fd_(fd), dmabuf_(dmabuf) {}
  unsigned char* data_;
  std::size_t size_;
  int fd_;
  bool dmabuf_;
};

}  // namespace riomesh::channels
