#include "summary.hpp"

#include <riomesh/config/units.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace pubsub::launch {
namespace {

std::string human_bytes(const std::string& text) {
  return text.empty() ? "-" : riomesh::config::approximate_size(std::stod(text));
}

std::string or_dash(const std::string& s) {
  return s.empty() ? "-" : s;
}

}  // namespace

std::optional<event> parse_event(const std::string& line) {
  std::istringstream in(line);
  std::string tag, role, actor, kind;
  if (!(in >> tag >> role >> actor >> kind) || tag != "pubsub" || actor.size() < 2 ||
      actor.back() != ':')
    return std::nullopt;
  event e{role, actor.substr(0, actor.size() - 1), kind, {}};
  std::string word;
  while (in >> word) {
    auto eq = word.find('=');
    if (eq != std::string::npos)
      e.values[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return e;
}

void scoreboard::expect(const std::string& actor, const std::string& role,
                        const std::string& node) {
  actors_.push_back({actor, role, node, std::nullopt, std::nullopt, {}, {}});
}

void scoreboard::add(const event& e) {
  for (auto& a : actors_) {
    if (a.name != e.actor)
      continue;
    if (!stopping_)
      a.seen.push_back(e.kind);
    if (e.kind == "progress")
      a.last_progress = e;
    else if (e.kind == "summary" || e.kind == "done")
      a.final = e;
    else if (e.kind != "ready" && e.kind != "sending" && e.kind != "subscribed" &&
             e.kind != "broker_found" && e.kind != "first" && e.kind != "subscriber_joined")
      a.notes.push_back(stopping_ ? e.kind + " (while stopping)" : e.kind);
  }
}

void scoreboard::restarted(const std::string& node) {
  for (auto& a : actors_)
    if (a.node == node) {
      a.final.reset();
      a.last_progress.reset();
      a.notes.push_back("restarted");
    }
}

bool scoreboard::finished() const {
  for (const auto& a : actors_)
    if (a.role != "broker" && !a.final)
      return false;
  return true;
}

bool scoreboard::sending() const {
  return std::any_of(actors_.begin(), actors_.end(), [](const actor_entry& a) {
    return a.role == "publisher" &&
           std::find(a.seen.begin(), a.seen.end(), "sending") != a.seen.end();
  });
}

std::string scoreboard::progress(double seconds) const {
  char head[32];
  std::snprintf(head, sizeof head, "[%6.1fs]", seconds);
  std::string out = head;
  for (const auto& a : actors_) {
    if (a.role == "broker")
      continue;
    out += "  " + a.name + " ";
    if (a.final)
      out += "done";
    else if (!a.last_progress)
      out += "starting";
    else if (a.role == "publisher")
      out += a.last_progress->get("acked") + "/" + a.last_progress->get("total") + " acked";
    else
      out += a.last_progress->get("messages") + " got, " + a.last_progress->get("rate_mps") + "/s";
  }
  return out;
}

void scoreboard::print_table(std::ostream& out) const {
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %-10s %9s %10s %10s %9s %9s %9s %10s %5s %4s %4s\n",
                "actor", "role", "messages", "bytes", "msg/s", "MiB/s", "p50 us", "p99 us",
                "copied", "gaps", "dup", "bad");
  out << line;
  for (const auto& a : actors_) {
    if (a.role == "broker")
      continue;
    if (!a.final && !a.last_progress) {
      std::snprintf(line, sizeof line, "%-12s %-10s  (no result)\n", a.name.c_str(),
                    a.role.c_str());
      out << line;
      continue;
    }
    if (!a.final) {  // a run cut short: its last progress report
      const auto& p = *a.last_progress;
      auto count = a.role == "publisher" ? p.get("acked") : p.get("messages");
      std::snprintf(line, sizeof line, "%-12s %-10s %9s %10s %10s  (so far: no final report)\n",
                    a.name.c_str(), a.role.c_str(), or_dash(count).c_str(), "-",
                    or_dash(p.get("rate_mps")).c_str());
      out << line;
      continue;
    }
    const auto& f = *a.final;
    bool sub = a.role == "subscriber";
    std::snprintf(line, sizeof line, "%-12s %-10s %9s %10s %10s %9s %9s %9s %10s %5s %4s %4s\n",
                  a.name.c_str(), a.role.c_str(), f.get("messages").c_str(),
                  sub ? human_bytes(f.get("bytes")).c_str() : "-", f.get("rate_mps").c_str(),
                  or_dash(f.get("mib_s")).c_str(), or_dash(f.get("p50_us")).c_str(),
                  or_dash(f.get("p99_us")).c_str(),
                  sub ? human_bytes(f.get("copied_bytes")).c_str() : "-",
                  or_dash(f.get("gaps")).c_str(), or_dash(f.get("duplicates")).c_str(),
                  or_dash(f.get("bad")).c_str());
    out << line;
  }
  for (const auto& a : actors_) {
    if (a.role != "broker" || !a.last_progress)
      continue;
    const auto& p = *a.last_progress;
    out << "  " << a.name << ": " << p.get("posts") << " posts, " << p.get("deliveries")
        << " deliveries; payload copied in " << human_bytes(p.get("copied_in")) << ", out "
        << human_bytes(p.get("copied_out")) << "; placed out " << human_bytes(p.get("placed_out"))
        << "; registrations " << p.get("registrations") << ", cache hits "
        << p.get("registration_hits") << "\n";
  }
  for (const auto& a : actors_) {
    if (a.notes.empty())
      continue;
    std::map<std::string, int> counts;
    for (const auto& n : a.notes)
      ++counts[n];
    out << "  " << a.name << ":";
    for (const auto& [n, c] : counts)
      out << " " << n << (c > 1 ? " x" + std::to_string(c) : "");
    out << "\n";
  }
}

std::vector<std::string> scoreboard::problems(const std::string& expected,
                                              bool gaps_after_loss) const {
  std::vector<std::string> out;
  std::istringstream list(expected);
  std::string item;
  while (std::getline(list, item, ',')) {
    auto colon = item.find(':');
    auto actor = item.substr(0, colon),
         kind = colon == std::string::npos ? "" : item.substr(colon + 1);
    bool unwanted = !kind.empty() && kind[0] == '!';
    if (unwanted)
      kind.erase(0, 1);
    bool seen = false;
    for (const auto& a : actors_)
      if (a.name == actor)
        for (const auto& k : a.seen)
          seen = seen || k == kind;
    if (unwanted && seen)
      out.push_back(actor + " reported " + kind);
    else if (!unwanted && !seen)
      out.push_back(actor + " never reported " + kind);
  }
  for (const auto& a : actors_) {
    if (a.role == "broker")
      continue;
    if (!a.final) {
      out.push_back(a.name + ": no result");
      continue;
    }
    if (a.role != "subscriber")
      continue;
    bool lost = std::find(a.seen.begin(), a.seen.end(), "broker_lost") != a.seen.end();
    for (const char* key : {"gaps", "bad"}) {
      if (a.final->get(key) == "0" || (gaps_after_loss && lost && key == std::string{"gaps"}))
        continue;
      out.push_back(a.name + ": " + key + "=" + a.final->get(key));
    }
    // Started again after its publishers ended, or back from a loss only
    // then (where gaps after a loss are allowed), it has nothing to get;
    // the broker told it the streams ended, which is how it finished.
    bool restarted = std::find(a.notes.begin(), a.notes.end(), "restarted") != a.notes.end();
    bool told_ended = std::find(a.seen.begin(), a.seen.end(), "stream_ended") != a.seen.end();
    bool missed_all = told_ended && (restarted || (gaps_after_loss && lost));
    if (a.final->get("messages") == "0" && !missed_all)
      out.push_back(a.name + ": received nothing");
  }
  return out;
}

}  // namespace pubsub::launch
