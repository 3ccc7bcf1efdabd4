// The address of the soft-RoCE device in the test VM, for the doctest
// suites that run only there (tools/vm-run.sh sets it).
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

inline std::string addr() {
  const char* a = std::getenv("RIOMESH_RDMA_ADDR");
  REQUIRE_MESSAGE(a, "run in the VM: tools/vm-run.sh");
  return a;
}
