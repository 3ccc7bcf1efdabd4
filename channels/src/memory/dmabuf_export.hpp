// Device memory as a dma-buf descriptor: a dumb buffer of a DRM device
// (a GPU's driver, or vgem), exported through PRIME. The descriptor keeps
// the buffer alive; nothing else of the device is held open.
#pragma once

#include <cstddef>
#include <string>

namespace riomesh::channels::detail {

// A dma-buf of at least `size` bytes from `device` ("" = the first
// /dev/dri/card* that makes one), or -1 with `error` set.
int export_dmabuf(const std::string& device, std::size_t size, std::string& error);

}  // namespace riomesh::channels::detail
