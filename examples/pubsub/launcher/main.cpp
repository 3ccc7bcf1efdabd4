// pubsub-cluster: runs a pub/sub cluster, one riomesh-node process per file,
// shows progress, ends with a table and a verdict (exit 0: every subscriber
// got every sample intact, and every node stopped cleanly on SIGTERM).
#include "cluster.hpp"
#include "faults.hpp"
#include "node_process.hpp"
#include "summary.hpp"

#include <riomesh/config/diagnostic.hpp>
#include <riomesh/version.hpp>

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

namespace {

using namespace pubsub::launch;
using clock_type = std::chrono::steady_clock;

const char* const usage =
    "usage: pubsub-cluster [options] NODE.yaml...\n"
    "  --node PROGRAM          the node program (default: riomesh-node beside this one)\n"
    "  --host ADDR             run every node on ADDR (e.g. one an RDMA device has); off\n"
    "                          loopback, a cluster secret is made for the run\n"
    "  --place NODE=ADDR[,...] NODE listens on ADDR and its peers find it there (before\n"
    "                          --host): a cluster spread over hosts, one launcher on each\n"
    "  --only NODE[,...]       run only these nodes here (the others run elsewhere); the\n"
    "                          verdict covers their actors\n"
    "  --finished-flag PATH    create PATH once this launcher's actors are done\n"
    "  --await-flag PATH       keep the nodes running until PATH exists (another host's\n"
    "                          --finished-flag, on a shared folder), within --timeout\n"
    "  --netns                 one network namespace per node, joined by veth (root)\n"
    "  --netem SPEC            with --netns: tc netem SPEC on both ends of every node's\n"
    "                          veth, so both directions suffer it (e.g. \"delay 5ms 2ms\n"
    "                          loss 1%\"; the kernel needs sch_netem, the VM's has it)\n"
    "  --partition NODE@SECONDS+DURATION  with --netns: SECONDS after sending starts,\n"
    "                          cut NODE off from all others for DURATION seconds (its\n"
    "                          bridge port goes down); fails if the run ends first\n"
    "  --set ACTOR.KEY=VALUE[,ACTOR.KEY=VALUE...]  actor parameters, to the node holding ACTOR\n"
    "  --kill NODE@SECONDS     kill -9 NODE that long after sending starts; start it again\n"
    "  --restart-after SECONDS how long a killed node stays down (default 1)\n"
    "  --timeout SECONDS       fail if the run takes longer (default 300)\n"
    "  --expect ACTOR:EVENT[,...]  fail unless ACTOR reported EVENT (e.g. sub-1:broker_lost);\n"
    "                          ACTOR:!EVENT fails if it did\n"
    "  --gaps-after-loss       a subscriber that reported its broker lost may have gaps\n"
    "                          (never bad samples): for a fabric that can stall\n"
    "  --quiet                 no progress lines\n"
    "  --help, --version\n"
    "SIGINT or SIGTERM ends a run: its nodes are stopped, the table so far printed.\n";

struct options {
  cluster_options cluster;
  std::string node_program, sets, kill_node, expect, netem, finished_flag, await_flag;
  std::set<std::string> only;
  double kill_at = 0, restart_after = 1, timeout = 300;
  std::optional<partition_plan> cut;
  bool quiet = false, gaps_after_loss = false;
};

std::string beside_me(const std::string& program) {
  char self[4096];
  auto n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return program;
  std::string path(self, static_cast<std::size_t>(n));
  auto dir = path.substr(0, path.rfind('/'));
  // The build tree keeps riomesh-node in tools/node, an install in bin/.
  for (const auto& candidate : {dir + "/" + program, dir + "/../../tools/" + program})
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  return program;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw std::invalid_argument("option '" + a + "' needs a value");
      return argv[++i];
    };
    if (a == "--node")
      o.node_program = value();
    else if (a == "--host")
      o.cluster.host = value();
    else if (a == "--netns")
      o.cluster.netns = true;
    else if (a == "--place") {
      std::istringstream items(value());
      for (std::string item; std::getline(items, item, ',');) {
        auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
          throw std::invalid_argument("--place wants NODE=ADDR, found '" + item + "'");
        o.cluster.place[item.substr(0, eq)] = item.substr(eq + 1);
      }
    } else if (a == "--only") {
      std::istringstream items(value());
      for (std::string item; std::getline(items, item, ',');)
        if (!item.empty())
          o.only.insert(item);
    } else if (a == "--finished-flag")
      o.finished_flag = value();
    else if (a == "--await-flag")
      o.await_flag = value();
    else if (a == "--set")
      o.sets += (o.sets.empty() ? "" : ",") + value();
    else if (a == "--kill") {
      auto v = value();
      auto at = v.find('@');
      if (at == std::string::npos)
        throw std::invalid_argument("--kill wants NODE@SECONDS, found '" + v + "'");
      o.kill_node = v.substr(0, at);
      o.kill_at = parse_seconds("--kill " + v, v.substr(at + 1));
    } else if (a == "--netem")
      o.netem = checked_netem_spec(value());
    else if (a == "--partition")
      o.cut = parse_partition(value());
    else if (a == "--restart-after")
      o.restart_after = parse_seconds(a, value());
    else if (a == "--timeout")
      o.timeout = parse_seconds(a, value());
    else if (a == "--expect")
      o.expect += (o.expect.empty() ? "" : ",") + value();
    else if (a == "--quiet")
      o.quiet = true;
    else if (a == "--gaps-after-loss")
      o.gaps_after_loss = true;
    else if (!a.empty() && a[0] == '-')
      throw std::invalid_argument("unknown option '" + a + "'");
    else
      o.cluster.files.push_back(a);
  }
  if (o.cluster.files.empty())
    throw std::invalid_argument("no node files given");
  if (!o.netem.empty() && !o.cluster.netns)
    throw std::invalid_argument("--netem \"" + o.netem +
                                "\": needs --netns, whose links it acts on");
  if (o.cut && !o.cluster.netns)
    throw std::invalid_argument("--partition " + o.cut->text +
                                ": needs --netns, whose links it acts on");
  if (o.node_program.empty())
    o.node_program = beside_me("riomesh-node");
  return o;
}

// "--set" items go to the node whose file lists the actor.
std::map<std::string, std::string> sets_by_node(const std::string& sets,
                                                const std::vector<node_plan>& plans) {
  std::map<std::string, std::string> out;
  std::size_t start = 0;
  while (start < sets.size()) {
    auto end = sets.find(',', start);
    auto item = sets.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? sets.size() : end + 1;
    auto actor = item.substr(0, item.find('.'));
    bool found = false;
    for (const auto& p : plans)
      for (const auto& a : p.actors)
        if (a.first == actor) {
          found = true;
          out[p.name] += (out[p.name].empty() ? "" : ",") + item;
        }
    if (!found)
      throw std::invalid_argument("--set " + item + ": no node runs an actor named '" + actor +
                                  "'");
  }
  return out;
}

// The --expect items about actors this launcher runs: with --only, the
// others are another host's launcher's to judge.
std::string expected_here(const options& o, const std::vector<node_plan>& plans) {
  if (o.only.empty())
    return o.expect;
  std::set<std::string> here;
  for (const auto& p : plans)
    if (o.only.count(p.name))
      for (const auto& a : p.actors)
        here.insert(a.first);
  std::string out;
  std::istringstream items(o.expect);
  for (std::string item; std::getline(items, item, ',');)
    if (here.count(item.substr(0, item.find(':'))))
      out += (out.empty() ? "" : ",") + item;
  return out;
}

// SIGINT, SIGTERM or SIGHUP to the launcher: the run ends as a failed one
// does (its nodes stopped, the table so far, the run folder removed).
volatile std::sig_atomic_t stop_signal = 0;

void on_stop_signal(int sig) {
  stop_signal = sig;
}

void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    ::sigaction(sig, &sa, nullptr);
}

const char* signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
}

// The run folder and what the run wrote there, whatever way the run ends.
struct run_folder {
  std::string path;
  ~run_folder() {
    std::error_code ignored;
    if (!path.empty())
      std::filesystem::remove_all(path, ignored);
  }
};

struct run_state {
  std::vector<std::unique_ptr<node_process>> nodes;
  scoreboard board;
  std::vector<std::string> problems;
};

void drain_output(run_state& r) {
  for (auto& n : r.nodes)
    for (const auto& line : n->read_lines()) {
      auto e = parse_event(line);
      if (e)
        r.board.add(*e);
      // Progress lines feed the status line; everything else is shown.
      if (!(e && e->kind == "progress"))
        std::cout << "[" << n->name() << "] " << line << "\n";
    }
  std::cout.flush();
}

void wait_output(run_state& r, int ms) {
  std::vector<pollfd> fds;
  for (auto& n : r.nodes)
    if (n->fd() >= 0)
      fds.push_back({n->fd(), POLLIN, 0});
  ::poll(fds.data(), fds.size(), ms);
}

// SIGTERM to all; each must exit 0 within `limit`.
void stop_all(run_state& r, double limit) {
  r.board.stopping();
  for (auto& n : r.nodes)
    n->signal(SIGTERM);
  auto deadline = clock_type::now() + std::chrono::duration<double>(limit);
  for (;;) {
    bool all = true;
    for (auto& n : r.nodes)
      all = n->reap() && all;
    drain_output(r);
    if (all || clock_type::now() > deadline)
      break;
    wait_output(r, 50);
  }
  for (auto& n : r.nodes) {
    if (n->running()) {
      r.problems.push_back("node " + n->name() + " did not stop within " +
                           std::to_string(int(limit)) + " s of SIGTERM");
      n->signal(SIGKILL);
      while (!n->reap())
        ::usleep(1000);
    } else if (n->exit_code() != 0) {
      r.problems.push_back("node " + n->name() + " stopped with " + n->how_ended());
    }
  }
}

int run(const options& o) {
  std::string dir_template = std::filesystem::temp_directory_path() / "pubsub-cluster.XXXXXX";
  auto cluster = o.cluster;
  if (!::mkdtemp(dir_template.data()))
    throw std::runtime_error("cannot make a run folder " + dir_template + ": " +
                             std::strerror(errno));
  run_folder folder{dir_template};
  cluster.run_dir = folder.path;
  std::unique_ptr<netns_fabric> fabric;
  if (cluster.netns)
    fabric = std::make_unique<netns_fabric>(cluster.files.size());
  auto plans = prepare(cluster, fabric.get());
  std::optional<partition> cut;
  if (o.cut)
    cut.emplace(*o.cut, plans, *fabric);
  if (!o.netem.empty()) {
    auto kernel = fabric->impair(o.netem);
    std::cout << "pubsub-cluster: netem " << o.netem << " on both ends of " << plans.size()
              << " veth pairs; the kernel has: " << kernel << "\n";
  }
  auto sets = sets_by_node(o.sets, plans);
  for (const auto& name : o.only)
    if (std::none_of(plans.begin(), plans.end(),
                     [&](const node_plan& p) { return p.name == name; }))
      throw std::invalid_argument("--only: none of the cluster's nodes is named '" + name + "'");
  run_state r;
  for (const auto& p : plans) {
    if (!o.only.empty() && !o.only.count(p.name))
      continue;
    std::vector<std::string> argv;
    if (!p.netns.empty())
      argv = {"ip", "netns", "exec", p.netns};
    argv.insert(argv.end(), {o.node_program, "--config", p.file});
    if (sets.count(p.name))
      argv.insert(argv.end(), {"--set", sets[p.name]});
    r.nodes.push_back(std::make_unique<node_process>(p.name, argv));
    for (const auto& [actor, role] : p.actors)
      r.board.expect(actor, role, p.name);
  }
  std::cout << "pubsub-cluster: " << r.nodes.size() << " nodes here, run folder " << cluster.run_dir
            << (fabric ? ", one network namespace each" : "") << "\n";
  node_process* victim = nullptr;
  for (auto& n : r.nodes)
    if (n->name() == o.kill_node)
      victim = n.get();
  if (!o.kill_node.empty() && !victim)
    throw std::invalid_argument("--kill: no node named '" + o.kill_node + "'");
  // The kill's clock starts when a publisher here says it is sending.
  bool publisher_here = false;
  for (const auto& p : plans)
    if (o.only.empty() || o.only.count(p.name))
      for (const auto& [actor, role] : p.actors)
        publisher_here = publisher_here || role == "publisher";
  if (victim && !publisher_here)
    throw std::invalid_argument(
        "--kill: none of the nodes run here has a publisher, whose sending starts its clock");
  for (auto& n : r.nodes)
    n->start();
  auto start = clock_type::now();
  auto seconds = [&] { return std::chrono::duration<double>(clock_type::now() - start).count(); };
  double sending_at = -1, killed_at = -1, last_progress = 0;
  // A kill asked for always happens, and the node starts again: a run that
  // ended before either would pass without testing what it was asked to.
  while (!r.board.finished() || (victim && (killed_at < 0 || victim->restarts == 0))) {
    wait_output(r, 100);
    drain_output(r);
    if (sending_at < 0 && r.board.sending())
      sending_at = seconds();
    if (victim && sending_at >= 0 && killed_at < 0 && seconds() - sending_at >= o.kill_at) {
      std::cout << "pubsub-cluster: kill -9 " << victim->name() << "\n";
      victim->signal(SIGKILL);
      while (!victim->reap())
        ::usleep(1000);
      drain_output(r);
      r.board.restarted(victim->name());
      killed_at = seconds();
    }
    if (cut)
      cut->tick(sending_at < 0 ? -1 : seconds() - sending_at, std::cout);
    if (victim && killed_at >= 0 && !victim->running() && victim->restarts == 0 &&
        seconds() - killed_at >= o.restart_after) {
      std::cout << "pubsub-cluster: starting " << victim->name() << " again\n";
      victim->start();
      victim->restarts = 1;
    }
    for (auto& n : r.nodes)
      if (n->reap() && !(n.get() == victim && victim->restarts == 0 && killed_at >= 0)) {
        drain_output(r);
        r.problems.push_back("node " + n->name() + " ended early: " + n->how_ended());
      }
    if (stop_signal)
      r.problems.push_back(std::string{"interrupted by "} + signal_name(stop_signal) +
                           ": the table shows the run so far");
    if (!r.problems.empty())
      break;
    if (seconds() > o.timeout) {
      r.problems.push_back("timed out after " + std::to_string(int(o.timeout)) + " s");
      break;
    }
    if (!o.quiet && seconds() - last_progress >= 2) {
      last_progress = seconds();
      std::cout << r.board.progress(seconds()) << "\n";
    }
  }
  double ran = seconds();
  // One more report interval: the broker's last counters cover the whole run.
  for (double until = seconds() + 1.2; r.problems.empty() && seconds() < until;) {
    wait_output(r, 100);
    drain_output(r);
  }
  // Failed too: the other host need not wait for us to its timeout.
  if (!o.finished_flag.empty())
    std::ofstream(o.finished_flag) << (r.problems.empty() ? "finished\n" : "failed\n");
  // The other host's actors may still need these nodes (its subscribers
  // the broker here): up until it says it is done.
  if (r.problems.empty() && !o.await_flag.empty()) {
    while (::access(o.await_flag.c_str(), F_OK) != 0 && !stop_signal && seconds() < o.timeout) {
      wait_output(r, 100);
      drain_output(r);
      for (auto& n : r.nodes)
        if (n->reap())
          r.problems.push_back("node " + n->name() + " ended early: " + n->how_ended());
      if (!r.problems.empty())
        break;
    }
    if (r.problems.empty() && ::access(o.await_flag.c_str(), F_OK) != 0)
      r.problems.push_back("the other host never said it finished (" + o.await_flag + ")");
  }
  stop_all(r, 15);
  char took[64];
  std::snprintf(took, sizeof took, "%.1f", ran);
  std::cout << "\npubsub-cluster: finished in " << took << " s\n";
  r.board.print_table(std::cout);
  auto expected = expected_here(o, plans);
  auto found = r.board.problems(expected, o.gaps_after_loss);
  found.insert(found.begin(), r.problems.begin(), r.problems.end());
  if (cut && !cut->unfinished().empty())
    found.push_back(cut->unfinished());
  for (const auto& p : found)
    std::cout << "FAILED: " << p << "\n";
  // Good, but only because --gaps-after-loss let a lost session's gaps pass.
  bool gaps_taken = o.gaps_after_loss && !r.board.problems(expected).empty();
  if (found.empty())
    std::cout << (gaps_taken ? "OK: every sample a subscriber got was intact and in order (gaps "
                               "only after a broker loss); every node stopped cleanly\n"
                             : "OK: every subscriber got every sample intact and in order; every "
                               "node stopped cleanly\n");
  if (stop_signal)
    return 128 + stop_signal;
  return found.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << usage;
      return 0;
    }
    if (a == "--version") {
      std::cout << "pubsub-cluster (riomesh " << riomesh::version << ")\n";
      return 0;
    }
  }
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "pubsub-cluster: " << e.what() << "\n" << usage;
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  catch_stop_signals();
  if (o.cluster.netns && ::geteuid() != 0) {
    std::cout << "pubsub-cluster: skipped: --netns needs root\n";
    return 77;  // ctest's "skipped"
  }
  try {
    return run(o);
  } catch (const riomesh::config::error& e) {
    for (const auto& d : e.problems())
      std::cerr << d.to_string() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "pubsub-cluster: " << e.what() << "\n";
    return 1;
  }
}
