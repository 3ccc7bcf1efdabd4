#include "resources.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>

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
  auto command = "rdma resource show mr pid " + std::to_string(::getpid()) + " 2>/dev/null";
  FILE* p = ::popen(command.c_str(), "r");
  if (!p)
    return -1;
  long lines = 0;
  char buf[512];
  bool any = false;
  while (std::fgets(buf, sizeof buf, p)) {
    any = true;
    lines += std::string(buf).find("mrn ") != std::string::npos;
  }
  int st = ::pclose(p);
  return st == 0 || any ? lines : -1;
}

std::string resources_text() {
  return "fds " + std::to_string(open_descriptors()) + ", mrs " +
         std::to_string(memory_registrations());
}

}  // namespace riomesh::test
