#include <riomesh/channels/memory/memory_region.hpp>

#include "dmabuf_export.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace riomesh::channels {

std::shared_ptr<memory_region> memory_region::make(const memory_source& from, std::size_t size,
                                                   const std::string& name, std::string& error) {
  int fd = -1;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
  bool device = from.provider == config::memory_provider::dmabuf;
  if (device) {
    std::string why;
    fd = detail::export_dmabuf(from.dmabuf_device, size, why);
    if (fd < 0) {
      error = "no dma-buf of " + std::to_string(size) + " bytes for " + name + ": " + why +
              " (memory.provider: dmabuf)";
      return nullptr;
    }
    flags = MAP_SHARED;
  } else if (from.provider == config::memory_provider::memfd) {
    fd = memfd_create(name.c_str(), MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) {
      error = "cannot create a memfd of " + std::to_string(size) + " bytes for " + name + ": " +
              std::strerror(errno) + " (memory.provider: memfd)";
      if (fd >= 0)
        ::close(fd);
      return nullptr;
    }
    flags = MAP_SHARED;
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, flags, fd, 0);
  if (p == MAP_FAILED) {
    error =
        "cannot map " + std::to_string(size) + " bytes for " + name + ": " + std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    return nullptr;
  }
  return std::shared_ptr<memory_region>(
      new memory_region(static_cast<unsigned char*>(p), size, fd, device));
}

memory_region::~memory_region() {
  munmap(data_, size_);
  if (fd_ >= 0)
    ::close(fd_);
}

}  // namespace riomesh::channels
