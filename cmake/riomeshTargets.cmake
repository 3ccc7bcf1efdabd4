# riomesh_add_library(NAME SOURCES... [DEPENDS targets...] [PRIVATE_DEPENDS targets...]
#                     [INSTALL_HEADERS paths...])
# One library per layer: riomesh_<name>, exported as riomesh::<name>, with its
# headers under <layer>/include. Only INSTALL_HEADERS (paths under include/)
# are installed: what an application includes, and what those include. The
# rest are the layers' own.
function(riomesh_add_library name)
  cmake_parse_arguments(arg "" "" "SOURCES;DEPENDS;PRIVATE_DEPENDS;INSTALL_HEADERS" ${ARGN})
  set(target riomesh_${name})
  add_library(${target} ${arg_SOURCES})
  add_library(riomesh::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME riomesh_${name})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${target} PUBLIC ${arg_DEPENDS} PRIVATE ${arg_PRIVATE_DEPENDS})
  riomesh_set_warnings(${target})
  set_property(GLOBAL APPEND PROPERTY RIOMESH_EXPORTED_TARGETS ${target})
  foreach(header ${arg_INSTALL_HEADERS})
    get_filename_component(dir ${header} DIRECTORY)
    install(FILES include/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${dir})
  endforeach()
endfunction()

function(riomesh_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(RIOMESH_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(RIOMESH_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "RIOMESH_FUZZ needs clang (libFuzzer): configure with CXX=clang++")
  endif()
  # Coverage for libFuzzer in every library the targets reach.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(RIOMESH_SANITIZE)
  add_compile_options(-fsanitize=${RIOMESH_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${RIOMESH_SANITIZE})
endif()
