# Installs the layer libraries, their headers and a CMake package, so that a
# separate project can find_package(riomesh) and link riomesh::runtime.
include(CMakePackageConfigHelpers)
get_property(exported GLOBAL PROPERTY RIOMESH_EXPORTED_TARGETS)
install(TARGETS ${exported} EXPORT riomeshTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/riomesh)
install(EXPORT riomeshTargets NAMESPACE riomesh:: DESTINATION ${cmakedir})
configure_package_config_file(cmake/riomeshConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/riomeshConfig.cmake INSTALL_DESTINATION ${cmakedir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/riomeshConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/riomeshConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/riomeshConfigVersion.cmake
              cmake/riomeshDependencies.cmake
        DESTINATION ${cmakedir})
