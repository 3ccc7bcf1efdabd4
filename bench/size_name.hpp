// "4 KiB", "1 MiB": sizes as the bench tables print them.
#pragma once

#include <cstddef>
#include <string>

inline std::string size_name(std::size_t n) {
  if (n >= (1u << 20))
    return std::to_string(n >> 20) + " MiB";
  if (n >= 1024)
    return std::to_string(n >> 10) + " KiB";
  return std::to_string(n) + " B";
}
