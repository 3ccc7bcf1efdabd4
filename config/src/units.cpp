#include <riomesh/config/units.hpp>

#include <cctype>
#include <cstdio>
#include <limits>

namespace riomesh::config {
namespace {

struct unit {
  std::string_view suffix;
  std::uint64_t factor;
};

constexpr std::uint64_t KiB = 1024;
constexpr unit size_units[] = {
    {"B", 1},
    {"KiB", KiB},
    {"MiB", KiB* KiB},
    {"GiB", KiB* KiB* KiB},
    {"TiB", KiB* KiB* KiB* KiB},
    {"kB", 1000},
    {"KB", 1000},
    {"MB", 1000 * 1000},
    {"GB", 1000 * 1000 * 1000},
    {"TB", 1000ull * 1000 * 1000 * 1000},
};

constexpr unit duration_units[] = {
    {"ns", 1},
    {"us", 1000},
    {"ms", 1000 * 1000},
    {"s", 1000 * 1000 * 1000},
    {"min", 60ull * 1000 * 1000 * 1000},
};

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

// Splits "64 KiB" into 64 and "KiB". Digits only: a sign or a fraction is a
// syntax error, since no setting here is negative or fractional.
bool split_number(std::string_view text, std::uint64_t& number, std::string_view& suffix) {
  text = trim(text);
  std::size_t i = 0;
  number = 0;
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    auto digit = static_cast<std::uint64_t>(text[i] - '0');
    if (number > (max - digit) / 10)
      return false;
    number = number * 10 + digit;
    ++i;
  }
  if (i == 0)
    return false;
  suffix = trim(text.substr(i));
  return true;
}

template <std::size_t N>
std::optional<std::uint64_t> scale(std::uint64_t number, std::string_view suffix,
                                   const unit (&units)[N]) {
  for (const auto& u : units) {
    if (u.suffix != suffix)
      continue;
    if (number > std::numeric_limits<std::uint64_t>::max() / u.factor)
      return std::nullopt;
    return number * u.factor;
  }
  return std::nullopt;
}

// The largest of the first `count` units that divides `value` exactly.
std::string format(std::uint64_t value, const unit* units, std::size_t count,
                   std::string_view zero) {
  if (value == 0)
    return std::string{zero};
  for (std::size_t i = count; i-- > 0;) {
    if (value % units[i].factor == 0)
      return std::to_string(value / units[i].factor) + std::string{units[i].suffix};
  }
  return std::to_string(value);
}

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::uint64_t number;
  std::string_view suffix;
  if (!split_number(text, number, suffix))
    return std::nullopt;
  if (suffix.empty())
    return number;
  return scale(number, suffix, size_units);
}

std::optional<duration> parse_duration(std::string_view text) {
  std::uint64_t number;
  std::string_view suffix;
  if (!split_number(text, number, suffix))
    return std::nullopt;
  if (suffix.empty())
    return number == 0 ? std::optional<duration>{duration::zero()} : std::nullopt;
  auto ns = scale(number, suffix, duration_units);
  if (!ns || *ns > static_cast<std::uint64_t>(duration::max().count()))
    return std::nullopt;
  return duration{static_cast<duration::rep>(*ns)};
}

std::string format_size(std::uint64_t bytes) {
  // Binary units only: B, KiB, MiB, GiB, TiB are the first five.
  return format(bytes, size_units, 5, "0B");
}

std::string approximate_size(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4)
    bytes /= 1024, ++u;
  char out[32];
  std::snprintf(out, sizeof out, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
  return out;
}

std::string format_duration(duration value) {
  // Minutes read oddly for protocol timers; stop at seconds.
  return format(static_cast<std::uint64_t>(value.count()), duration_units, 4, "0");
}

}  // namespace riomesh::config
