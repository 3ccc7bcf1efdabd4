// A large region of the node's memory (a receive arena, a pool slab), from
// the configured provider: private anonymous memory, or a memfd, a file in
// memory that another local process can map by its descriptor. Pages are
// given on first touch (or when registered); the mapping and descriptor go
// with the region.
#pragma once

#include <riomesh/config/settings.hpp>

#include <cstddef>
#include <memory>
#include <string>

namespace riomesh::channels {

class memory_region {
 public:
  // Null with `error` set; `name` labels a memfd (/proc/<pid>/maps shows
  // it as /memfd:<name>).
  static std::shared_ptr<memory_region> make(config::memory_provider provider, std::size_t size,
                                             const std::string& name, std::string& error);
  ~memory_region();
  memory_region(const memory_region&) = delete;
  memory_region& operator=(const memory_region&) = delete;

  unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }
  // The memfd whose offset 0 is data(), or -1 (anonymous memory).
  int fd() const { return fd_; }

 private:
  memory_region(unsigned char* data, std::size_t size, int fd)
      : data_(data), size_(size), fd_(fd) {}
  unsigned char* data_;
  std::size_t size_;
  int fd_;
};

}  // namespace riomesh::channels
