#include "dmabuf_export.hpp"

#include <drm.h>
#include <drm_mode.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace riomesh::channels::detail {

namespace {

int ioctl_retry(int fd, unsigned long request, void* arg) {
  int r;
  do
    r = ::ioctl(fd, request, arg);
  while (r < 0 && (errno == EINTR || errno == EAGAIN));
  return r;
}

// One row of one byte per pixel per page: dumb buffers are sized by
// width x height x bpp, and drivers align the pitch to their liking.
int export_from(const std::string& path, std::size_t size, std::string& error) {
  int drm = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (drm < 0) {
    error = path + ": " + std::strerror(errno);
    return -1;
  }
  drm_mode_create_dumb dumb{};
  dumb.width = 4096;
  dumb.height = static_cast<std::uint32_t>((size + 4095) / 4096);
  dumb.bpp = 8;
  int fd = -1;
  if (ioctl_retry(drm, DRM_IOCTL_MODE_CREATE_DUMB, &dumb) != 0) {
    error = path + ": cannot create a buffer of " + std::to_string(size) +
            " bytes: " + std::strerror(errno);
  } else if (dumb.size < size) {
    error = path + ": the device made " + std::to_string(dumb.size) + " bytes of the " +
            std::to_string(size) + " asked for";
  } else {
    drm_prime_handle prime{};
    prime.handle = dumb.handle;
    prime.flags = DRM_CLOEXEC | DRM_RDWR;
    if (ioctl_retry(drm, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime) != 0)
      error = path + ": cannot export a buffer as dma-buf: " + std::strerror(errno);
    else
      fd = prime.fd;
  }
  if (dumb.handle != 0) {  // the dma-buf holds the buffer from here
    drm_mode_destroy_dumb gone{};
    gone.handle = dumb.handle;
    ioctl_retry(drm, DRM_IOCTL_MODE_DESTROY_DUMB, &gone);
  }
  ::close(drm);
  return fd;
}

}  // namespace

int export_dmabuf(const std::string& device, std::size_t size, std::string& error) {
  if (!device.empty())
    return export_from(device, size, error);
  std::string tried;
  for (int card = 0; card < 16; ++card) {
    auto path = "/dev/dri/card" + std::to_string(card);
    if (::access(path.c_str(), F_OK) != 0)
      continue;
    std::string why;
    int fd = export_from(path, size, why);
    if (fd >= 0)
      return fd;
    tried += (tried.empty() ? "" : "; ") + why;
  }
  error = tried.empty() ? "no DRM device (/dev/dri/card*) to take dma-buf memory from" : tried;
  return -1;
}

}  // namespace riomesh::channels::detail
