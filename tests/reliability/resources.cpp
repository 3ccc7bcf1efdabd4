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

long memory_registrations() {
  // Device-wide, from the kernel's resource tracking: `rdma resource show`
  // prints "mr N" per device. Not per process: the kernel files a resource
  // under the thread that created it, and threads come and go.
  FILE* p = ::popen("rdma resource show 2>/dev/null", "r");
  if (!p)
    return -1;
  long total = 0;
  bool any = false;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) {
    std::string line = buf;
    auto at = line.find(" mr ");
    if (at == std::string::npos)
      continue;
    any = true;
    total += std::strtol(line.c_str() + at + 4, nullptr, 10);
  }
  ::pclose(p);
  return any ? total : -1;
}

std::string resources_text() {
  return "fds " + std::to_string(open_descriptors()) + ", mrs " +
         std::to_string(memory_registrations());
}

}  // namespace riomesh::test
