// Sizes and durations with units, as users write them in config files:
// "64KiB", "8 MiB", "1GiB", "10us", "250ms", "2s".
#pragma once

#include <riomesh/config/settings.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace riomesh::config {

// Binary (KiB, MiB, GiB, TiB) and decimal (kB, MB, GB, TB) units, or B; a bare
// integer is bytes. Empty on syntax error or overflow of 64 bits.
std::optional<std::uint64_t> parse_size(std::string_view text);
// ns, us, ms, s, min; a bare 0 is allowed (it means "off"). Empty on error.
std::optional<duration> parse_duration(std::string_view text);

// The shortest exact spelling: 131072 -> "128KiB", 1000 -> "1000B".
std::string format_size(std::uint64_t bytes);
// For people reading figures: "1.5 GiB", "300 B" (rounded, binary units).
std::string approximate_size(double bytes);
// 10000ns -> "10us", 1500ms -> "1500ms".
std::string format_duration(duration value);

}  // namespace riomesh::config
