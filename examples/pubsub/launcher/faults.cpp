#include "faults.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace pubsub::launch {
namespace {

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f s", s);
  return text;
}

}  // namespace

double parse_seconds(const std::string& option, const std::string& text) {
  char* end = nullptr;
  double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (std::isnan(v) || std::isinf(v) || *end != '\0' || v < 0)
    throw std::invalid_argument(option + ": '" + text + "' is not a number of seconds >= 0");
  return v;
}

std::string checked_netem_spec(const std::string& spec) {
  if (spec.find_first_not_of(' ') == std::string::npos)
    throw std::invalid_argument("--netem wants a tc netem spec, e.g. \"delay 5ms 2ms loss 1%\"");
  for (char c : spec)
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string(" .%/_-").find(c) == std::string::npos)
      throw std::invalid_argument("--netem: '" + spec + "' has '" + std::string(1, c) +
                                  "', which is no part of a tc netem spec");
  return spec;
}

partition_plan parse_partition(const std::string& text) {
  auto at = text.find('@');
  auto plus = at == std::string::npos ? std::string::npos : text.find('+', at);
  if (at == 0 || plus == std::string::npos)
    throw std::invalid_argument(
        "--partition wants NODE@SECONDS+DURATION (e.g. broker@2+7), found '" + text + "'");
  partition_plan p;
  p.node = text.substr(0, at);
  p.at = parse_seconds("--partition " + text, text.substr(at + 1, plus - at - 1));
  p.duration = parse_seconds("--partition " + text, text.substr(plus + 1));
  if (p.duration <= 0)
    throw std::invalid_argument("--partition " + text + ": the duration must be more than 0 s");
  p.text = text;
  return p;
}

partition::partition(partition_plan plan, const std::vector<node_plan>& plans, netns_fabric& fabric)
    : plan_(std::move(plan)), fabric_(fabric) {
  while (index_ < plans.size() && plans[index_].name != plan_.node)
    ++index_;
  if (index_ == plans.size())
    throw std::invalid_argument("--partition " + plan_.text + ": no node named '" + plan_.node +
                                "'");
}

void partition::tick(double since_sending, std::ostream& out) {
  if (since_sending < 0 || healed_)
    return;
  auto since = [](clock::time_point t) {
    return std::chrono::duration<double>(clock::now() - t).count();
  };
  if (!cut_since_ && since_sending >= plan_.at) {
    auto asked = clock::now();
    fabric_.cut(index_, true);
    // The duration counts from when the link is down: in the VM, under TCG,
    // ip itself took up to 1.6 s, which would have shortened the outage.
    cut_since_ = clock::now();
    out << "pubsub-cluster: " << seconds(since_sending) << " into sending: cut " << plan_.node
        << " off from every other node for " << seconds(plan_.duration) << " (ip took "
        << seconds(since(asked)) << ")\n";
  } else if (cut_since_ && since(*cut_since_) >= plan_.duration) {
    auto asked = clock::now();
    fabric_.cut(index_, false);
    healed_ = true;
    out << "pubsub-cluster: " << seconds(since_sending) << " into sending: " << plan_.node
        << " joined again after " << seconds(since(*cut_since_)) << " cut off (ip took "
        << seconds(since(asked)) << ")\n";
  }
}

std::string partition::unfinished() const {
  if (healed_)
    return {};
  return "--partition " + plan_.text + ": the run ended before " + plan_.node + " was " +
         (cut_since_ ? "joined again" : "cut off");
}

}  // namespace pubsub::launch
