// session_bench: how long a session takes to set up, from dial to a node
// that answers, with the cluster secret or with node keys. Each round makes
// a new node (its start is not timed), dials the listening node by address
// (runtime::connect: connect, handshake, hellos), then pings its admin
// actor once: the session carries a message both ways. Prints the spread.
//
//   session_bench [--rounds N] [--proof secret|keys]
#include <riomesh/admin.hpp>
#include <riomesh/runtime.hpp>

#include <caf/scoped_actor.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

std::string seed() {
  std::string s(32, '\0');
  EVP_PKEY* k = nullptr;
  EVP_PKEY_CTX* g = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr);
  EVP_PKEY_keygen_init(g);
  EVP_PKEY_keygen(g, &k);
  std::size_t n = s.size();
  EVP_PKEY_get_raw_private_key(k, reinterpret_cast<unsigned char*>(s.data()), &n);
  EVP_PKEY_free(k);
  EVP_PKEY_CTX_free(g);
  return s;
}

std::string public_of(const std::string& priv) {
  EVP_PKEY* k = EVP_PKEY_new_raw_private_key(
      EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(priv.data()), priv.size());
  std::string pub(32, '\0');
  std::size_t n = pub.size();
  EVP_PKEY_get_raw_public_key(k, reinterpret_cast<unsigned char*>(pub.data()), &n);
  EVP_PKEY_free(k);
  return pub;
}

riomesh::config::settings settings_for(const std::string& name) {
  riomesh::config::settings s;
  s.node.name = name;
  s.node.listen = {"127.0.0.1", 0};
  s.node.fabric = riomesh::config::fabric_kind::tcp;
  s.channel.arena = 4ull << 20;
  s.runtime.threads = 1;
  s.logging.level = riomesh::config::log_level::error;
  return s;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 50;
  std::string proof = "secret";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string{argv[++i]} : std::string{}; };
    if (a == "--rounds")
      rounds = std::max(2, std::atoi(next().c_str()));
    else if (a == "--proof")
      proof = next();
    else {
      std::fprintf(stderr, "usage: session_bench [--rounds N] [--proof secret|keys]\n");
      return 2;
    }
  }
  const std::string secret = "session-bench-secret-0123456789";
  auto server_settings = settings_for("server");
  std::vector<std::string> client_keys;
  if (proof == "keys") {
    server_settings.node.key = seed();
    for (int i = 0; i < rounds; ++i) {
      client_keys.push_back(seed());
      server_settings.cluster.keys.emplace_back("client-" + std::to_string(i),
                                                public_of(client_keys.back()));
    }
  } else {
    server_settings.cluster.secret = secret;
  }
  riomesh::runtime server(server_settings);
  riomesh::config::endpoint at{"127.0.0.1", server.port()};
  std::vector<double> setup_ms, first_ms;
  for (int i = 0; i < rounds; ++i) {
    auto s = settings_for("client-" + std::to_string(i));
    if (proof == "keys") {
      s.node.key = client_keys[static_cast<std::size_t>(i)];
      s.cluster.keys.emplace_back("server", public_of(server_settings.node.key));
    } else {
      s.cluster.secret = secret;
    }
    riomesh::runtime client(s);
    auto t0 = clock_type::now();
    auto name = client.connect(at, std::chrono::seconds(10));
    auto t1 = clock_type::now();
    if (!name) {
      std::fprintf(stderr, "session_bench: round %d: %s\n", i,
                   client.system().render(name.error()).c_str());
      return 1;
    }
    auto admin = client.remote_actor("server", riomesh::admin_name, std::chrono::seconds(10));
    caf::scoped_actor self{client.system()};
    bool ok = false;
    if (admin)
      self->request(*admin, std::chrono::seconds(10), riomesh::ping_atom::value)
          .receive([&](const std::string&) { ok = true; }, [&](caf::error&) {});
    auto t2 = clock_type::now();
    if (!ok) {
      std::fprintf(stderr, "session_bench: round %d: no answer through the session\n", i);
      return 1;
    }
    setup_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    first_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
  }
  std::printf("session setup over tcp on loopback, %s, %d rounds (ms)\n", proof.c_str(), rounds);
  std::printf("%-28s %8s %8s %8s\n", "", "p10", "p50", "p90");
  std::printf("%-28s %8.2f %8.2f %8.2f\n", "dial to session", percentile(setup_ms, 0.1),
              percentile(setup_ms, 0.5), percentile(setup_ms, 0.9));
  std::printf("%-28s %8.2f %8.2f %8.2f\n", "dial to first answer", percentile(first_ms, 0.1),
              percentile(first_ms, 0.5), percentile(first_ms, 0.9));
  return 0;
}
