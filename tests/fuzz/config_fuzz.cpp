// The YAML loader against any text: it either yields settings or throws
// config::error naming the place; nothing else may escape, and it must not
// crash or hang.
#include <riomesh/config/diagnostic.hpp>
#include <riomesh/config/loader.hpp>

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string yaml(reinterpret_cast<const char*>(data), size);
  try {
    riomesh::config::load_string(yaml, "fuzz.yaml", "/nonexistent");
  } catch (const riomesh::config::error&) {
  }
  return 0;
}
