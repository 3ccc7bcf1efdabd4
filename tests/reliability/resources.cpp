#include "resources.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace riomesh::test {

std::size_t open_descriptors() {
  std::size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (auto* e = ::readdir(d))
      n += e->d_name[0] != '.';
    ::closedir(d);
    --n;  // the directory being read
  }
  return n;
}

std::string descriptor_list() {
  std::string out;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (auto* e = ::readdir(d)) {
      if (e->d_name[0] == '.')
        continue;
      char target[256] = {};
      auto path = std::string{"/proc/self/fd/"} + e->d_name;
      auto n = ::readlink(path.c_str(), target, sizeof target - 1);
      out += std::string{e->d_name} + "=" + (n > 0 ? std::string(target, n) : "?") + " ";
    }
    ::closedir(d);
  }
  return out;
}

long rdma_resources(const std::string& kind) {
  // Device-wide, from the kernel's resource tracking: `rdma resource show`
  // prints "pd N cq N qp N cm_id N mr N ..." per device. Not per process:
  // the kernel files a resource under the thread that created it, and
  // threads come and go.
  FILE* p = ::popen("rdma resource show 2>/dev/null", "r");
  if (!p)
    return -1;
  long total = 0;
  bool any = false;
  char buf[512];
  auto key = " " + kind + " ";
  while (std::fgets(buf, sizeof buf, p)) {
    std::string line = buf;
    auto at = line.find(key);
    if (at == std::string::npos)
      continue;
    any = true;
    total += std::strtol(line.c_str() + at + key.size(), nullptr, 10);
  }
  ::pclose(p);
  return any ? total : -1;
}

long memory_registrations() {
  return rdma_resources("mr");
}

std::string resources_text() {
  return "fds " + std::to_string(open_descriptors()) + ", mrs " +
         std::to_string(memory_registrations());
}

}  // namespace riomesh::test
