# Finds what riomesh links against, the Debian way (see caf-0.17.md §1).
# Used by the build and again by the installed riomeshConfig.cmake, so a
# consumer project gets the same imported targets.
include(CMakeFindDependencyMacro)
find_package(Threads REQUIRED)

# CAF 0.17 ships neither a CMake package nor a .pc file: wrap the libraries.
if(NOT TARGET riomesh_dep::caf_core)
  find_path(RIOMESH_CAF_INCLUDE_DIR caf/all.hpp)
  find_library(RIOMESH_CAF_CORE_LIB caf_core)
  find_library(RIOMESH_CAF_IO_LIB caf_io)
  if(NOT RIOMESH_CAF_INCLUDE_DIR OR NOT RIOMESH_CAF_CORE_LIB OR NOT RIOMESH_CAF_IO_LIB)
    message(FATAL_ERROR "CAF 0.17 not found (Debian: apt-get install libcaf-dev, or run tools/deps.sh)")
  endif()
  add_library(riomesh_dep::caf_core INTERFACE IMPORTED)
  set_target_properties(riomesh_dep::caf_core PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${RIOMESH_CAF_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${RIOMESH_CAF_CORE_LIB};Threads::Threads")
  add_library(riomesh_dep::caf_io INTERFACE IMPORTED)
  # caf_io alone leaves core symbols undefined: always link both.
  set_target_properties(riomesh_dep::caf_io PROPERTIES
    INTERFACE_LINK_LIBRARIES "${RIOMESH_CAF_IO_LIB};riomesh_dep::caf_core")
endif()

find_package(yaml-cpp 0.7 REQUIRED CONFIG)   # target: yaml-cpp (no namespace in 0.7)
find_package(OpenSSL REQUIRED COMPONENTS Crypto SSL)
find_package(PkgConfig REQUIRED)
pkg_check_modules(RIOMESH_IBVERBS REQUIRED IMPORTED_TARGET libibverbs)
pkg_check_modules(RIOMESH_RDMACM REQUIRED IMPORTED_TARGET librdmacm)
# The operators' HTTP endpoint (node.metrics): a well-kept server, not ours.
pkg_check_modules(RIOMESH_HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
# riomesh-node under systemd (Type=notify, the watchdog): libsystemd's sd_notify.
pkg_check_modules(RIOMESH_SYSTEMD REQUIRED IMPORTED_TARGET libsystemd)
