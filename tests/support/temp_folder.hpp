// A fresh folder under the system's temp directory, removed with all it
// holds when the test ends, whatever the ending.
#pragma once

#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace riomesh::test {

struct temp_folder {
  std::filesystem::path path;
  explicit temp_folder(const std::string& prefix = "riomesh") {
    std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~temp_folder() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  temp_folder(const temp_folder&) = delete;
  temp_folder& operator=(const temp_folder&) = delete;
};

}  // namespace riomesh::test
