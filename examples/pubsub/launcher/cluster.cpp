#include "cluster.hpp"

#include <riomesh/config/secret_file.hpp>

#include <riomesh/config/address.hpp>
#include <riomesh/config/loader.hpp>
#include <riomesh/config/print.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <stdexcept>

namespace pubsub::launch {
namespace {

void run(const std::string& command) {
  if (std::system((command + " 2>&1").c_str()) != 0)
    throw std::runtime_error(
        "'" + command +
        "' failed (network namespaces need root and iproute2; netem needs sch_netem)");
}

std::string output_of(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen((command + " 2>&1").c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p))
      out += buf;
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
    out.pop_back();
  return out;
}

std::string write_secret(const std::string& dir) {
  std::random_device rd;
  std::string secret;
  const char* alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int i = 0; i < 43; ++i)
    secret += alphabet[rd() % 62];
  auto path = dir + "/cluster.secret";
  std::ofstream(path) << secret << "\n";
  return path;
}

std::string role_of(const std::string& type) {
  auto dot = type.rfind('.');
  return dot == std::string::npos ? type : type.substr(dot + 1);
}

}  // namespace

netns_fabric::netns_fabric(std::size_t nodes)
    : prefix_("rp" + std::to_string(::getpid() % 100000)), nodes_(nodes) {
  run("ip netns add " + prefix_ + "-hub");
  run("ip -n " + prefix_ + "-hub link add br0 type bridge");
  run("ip -n " + prefix_ + "-hub link set br0 up");
  for (std::size_t i = 0; i < nodes; ++i) {
    auto ns = name_of(i), a = prefix_ + "-" + std::to_string(i) + "a",
         b = prefix_ + "-" + std::to_string(i) + "b";
    run("ip netns add " + ns);
    run("ip link add " + a + " type veth peer name " + b);
    run("ip link set " + a + " netns " + ns);
    run("ip link set " + b + " netns " + prefix_ + "-hub");
    run("ip -n " + prefix_ + "-hub link set " + b + " master br0 up");
    run("ip -n " + ns + " addr add " + address_of(i) + "/24 dev " + a);
    run("ip -n " + ns + " link set " + a + " up");
    run("ip -n " + ns + " link set lo up");
  }
}

netns_fabric::~netns_fabric() {
  for (std::size_t i = 0; i < nodes_; ++i)
    std::system(("ip netns del " + name_of(i) + " 2>/dev/null").c_str());
  std::system(("ip netns del " + prefix_ + "-hub 2>/dev/null").c_str());
}

std::string netns_fabric::impair(const std::string& netem_spec) {
  for (std::size_t i = 0; i < nodes_; ++i) {
    auto at = prefix_ + "-" + std::to_string(i);
    run("tc -n " + name_of(i) + " qdisc add dev " + at + "a root netem " + netem_spec);
    run("tc -n " + prefix_ + "-hub qdisc add dev " + at + "b root netem " + netem_spec);
  }
  // tc takes some specs in other words than given: show the kernel's.
  return output_of("tc -n " + prefix_ + "-hub qdisc show dev " + prefix_ + "-0b");
}

void netns_fabric::cut(std::size_t node, bool off) {
  run("ip -n " + prefix_ + "-hub link set " + prefix_ + "-" + std::to_string(node) + "b " +
      (off ? "down" : "up"));
}

std::string netns_fabric::name_of(std::size_t node) const {
  return prefix_ + "-" + std::to_string(node);
}

std::string netns_fabric::address_of(std::size_t node) const {
  return "10.231.0." + std::to_string(node + 1);
}

// The cluster's secret, made on its first run where its files name one that
// is not there yet (the example's: examples/pubsub/cluster/.secrets/, which
// git ignores), and kept for later runs.
void ensure_secrets(const std::vector<std::string>& files) {
  for (const auto& f : files) {
    auto path = riomesh::config::secret_file_named_in(f);
    if (path.empty() || ::access(path.c_str(), F_OK) == 0)
      continue;
    std::string error;
    if (!riomesh::config::make_secret_file(path, error))
      throw std::runtime_error(f + ": cluster.secret_file: " + error);
    std::cerr << "pubsub-cluster: made the cluster's secret, " << path
              << " (kept for later runs)\n";
  }
}

std::vector<node_plan> prepare(const cluster_options& options, const netns_fabric* fabric) {
  ensure_secrets(options.files);
  std::vector<riomesh::config::settings> nodes;
  for (const auto& f : options.files)
    nodes.push_back(riomesh::config::load_file(f));
  std::map<std::string, std::string> host_of;  // node name -> where it listens now
  for (std::size_t i = 0; i < nodes.size(); ++i)
    host_of[nodes[i].node.name] =
        fabric ? fabric->address_of(i)
               : (options.host.empty() ? nodes[i].node.listen.host : options.host);
  for (const auto& [name, address] : options.place) {
    if (!host_of.count(name))
      throw std::invalid_argument("--place " + name + "=" + address +
                                  ": none of the cluster's nodes is named '" + name + "'");
    host_of[name] = address;
  }
  std::string secret;
  std::vector<node_plan> out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto& s = nodes[i];
    node_plan plan{s.node.name, options.files[i], fabric ? fabric->name_of(i) : "", {}};
    for (const auto& a : s.actors)
      plan.actors.emplace_back(a.name, role_of(a.type));
    if (fabric || !options.host.empty() || !options.place.empty()) {
      s.node.listen.host = host_of[s.node.name];
      for (auto& p : s.cluster.peers) {
        auto it = host_of.find(p.name);
        if (it == host_of.end())
          throw std::runtime_error(options.files[i] + ": peer '" + p.name +
                                   "' is none of the cluster's nodes");
        p.address.host = it->second;
      }
      if (s.cluster.secret.empty() && !riomesh::config::is_loopback(s.node.listen)) {
        if (secret.empty())
          secret = write_secret(options.run_dir);
        s.cluster.secret_file = secret;
      }
      // The copy lives in the run folder: files it names, relative to
      // where the launcher runs, must still be found from there.
      for (auto* path : {&s.cluster.secret_file, &s.cluster.keyring_file, &s.node.key_file})
        if (!path->empty())
          *path = std::filesystem::absolute(*path).string();
      plan.file = options.run_dir + "/" + s.node.name + ".yaml";
      std::ofstream(plan.file) << riomesh::config::to_yaml(s);
    }
    out.push_back(std::move(plan));
  }
  return out;
}

}  // namespace pubsub::launch
