#include "runner.hpp"

#include "../size_name.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

namespace bench {
namespace {

// A contender's server: started, asked for its port, stopped by closing
// its stdin; it answers with its peak RSS.
class server {
 public:
  server(const std::string& self, const std::string& kind) {
    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0)
      return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::close(in[1]);
      ::close(out[0]);
      ::execl(self.c_str(), self.c_str(), "serve", kind.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = ::fdopen(out[0], "r");
    std::string word;
    if (next_line(word) && word.rfind("ready ", 0) == 0)
      port_ = static_cast<std::uint16_t>(std::stoul(word.substr(6)));
  }
  ~server() { stop(); }
  std::uint16_t port() const { return port_; }
  long stop() {
    if (pid_ <= 0)
      return rss_;
    ::close(to_);
    std::string line;
    while (next_line(line))
      if (line.rfind("peak_rss_kib ", 0) == 0)
        rss_ = std::stol(line.substr(13));
    int status;
    ::waitpid(pid_, &status, 0);
    std::fclose(from_);
    pid_ = -1;
    return rss_;
  }

 private:
  bool next_line(std::string& line) {
    char buf[512];
    if (!std::fgets(buf, sizeof buf, from_))
      return false;
    line = buf;
    while (!line.empty() && line.back() == '\n')
      line.pop_back();
    return true;
  }
  pid_t pid_ = -1;
  int to_ = -1;
  FILE* from_ = nullptr;
  std::uint16_t port_ = 0;
  long rss_ = 0;
};

std::map<std::string, std::string> fields(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string w;
  while (in >> w)
    if (auto eq = w.find('='); eq != std::string::npos)
      out[w.substr(0, eq)] = w.substr(eq + 1);
  return out;
}

bool run_once(const settings& s, const std::string& kind, const job& j, row& r) {
  server srv(s.self, kind);
  if (!srv.port()) {
    std::cerr << "actor_bench: the " << kind << " server did not start\n";
    return false;
  }
  std::ostringstream cmd;
  cmd << s.self << " drive " << kind << " " << srv.port() << " " << j.pattern << " " << j.size
      << " " << j.count << " " << j.window;
  FILE* p = ::popen(cmd.str().c_str(), "r");
  char buf[512];
  bool ok = false;
  while (p && std::fgets(buf, sizeof buf, p)) {
    std::string line = buf;
    if (line.rfind("result ", 0) != 0)
      continue;
    auto f = fields(line);
    outcome o;
    o.seconds = std::stod(f["seconds"]);
    o.msgs_per_s = std::stod(f["rate"]);
    o.mib_per_s = std::stod(f["mib_s"]);
    o.p50_us = std::stod(f["p50_us"]);
    o.p99_us = std::stod(f["p99_us"]);
    auto copied = std::stoll(f["copied"]);
    o.known_copies = copied >= 0;
    o.copied = o.known_copies ? static_cast<std::uint64_t>(copied) : 0;
    if (!r.ok || o.msgs_per_s > 0)
      r.client_rss_kib = std::max(r.client_rss_kib, std::stol(f["rss_kib"]));
    r.o = o;
    ok = o.seconds > 0;
  }
  if (p)
    ok = ::pclose(p) == 0 && ok;
  r.server_rss_kib = std::max(r.server_rss_kib, srv.stop());
  return ok;
}

struct case_spec {
  std::string name;
  job j;
};

std::vector<case_spec> cases(bool quick) {
  std::vector<case_spec> out;
  for (std::size_t size : {4096ul, 65536ul, 1ul << 20, 16ul << 20}) {
    // About 1 GiB per run, at least 64 messages (quick: 8 MiB, at least 4).
    std::uint64_t count =
        std::max<std::uint64_t>(quick ? 4 : 64, (quick ? 8ull << 20 : 1ull << 30) / size);
    if (!quick && size == 4096)
      count = 100000;
    out.push_back({size_name(size) + " stream", {"stream", size, count, 16}});
  }
  out.push_back({"8 B stream", {"stream", 8, quick ? 2000u : 200000u, 128}});
  out.push_back({"8 B round trip", {"rtt", 8, quick ? 200u : 20000u, 1}});
  return out;
}

}  // namespace

std::vector<row> run_all(const settings& s) {
  std::vector<row> rows;
  auto all = cases(s.quick);
  int reps = s.quick ? 1 : s.reps;
  std::size_t step = 0, steps = all.size() * 3;
  for (const auto& c : all)
    for (const char* kind : {"riomesh", "caf", "raw"}) {
      ++step;
      std::fprintf(stderr, "[%2zu/%zu] %-16s %-8s", step, steps, c.name.c_str(), kind);
      std::vector<row> runs;
      for (int i = 0; i < reps; ++i) {
        row r{c.name, kind, c.j, {}, 0, 0, false};
        r.ok = run_once(s, kind, c.j, r);
        std::fprintf(stderr, " %s", r.ok ? "." : "x");
        runs.push_back(r);
      }
      // The median by rate; a failed run sorts first and loses.
      std::sort(runs.begin(), runs.end(),
                [](const row& a, const row& b) { return a.o.msgs_per_s < b.o.msgs_per_s; });
      auto median = runs[runs.size() / 2];
      median.ok = std::all_of(runs.begin(), runs.end(), [](const row& r) { return r.ok; });
      std::fprintf(stderr, "  %10.1f msg/s %9.1f MiB/s\n", median.o.msgs_per_s, median.o.mib_per_s);
      rows.push_back(median);
    }
  return rows;
}

}  // namespace bench
