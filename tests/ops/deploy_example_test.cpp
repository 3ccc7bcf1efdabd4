// examples/deploy/kubernetes.yaml, checked as far as this machine can: it
// parses, holds the objects the docs describe, and each node file in its
// ConfigMap loads as riomesh-node would load it (with a secret standing in
// for the mounted one).
#include <riomesh/config/loader.hpp>
#include <riomesh/config/secret_file.hpp>

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>
#include <temp_folder.hpp>

#include <map>
#include <regex>
#include <string>

using namespace riomesh;

TEST_CASE("deploy: the Kubernetes example parses and its node files load") {
  auto docs =
      YAML::LoadAllFromFile(std::string{RIOMESH_SOURCE_DIR} + "/examples/deploy/kubernetes.yaml");
  std::map<std::string, YAML::Node> by_kind;
  for (const auto& d : docs)
    by_kind[d["kind"].as<std::string>()] = d;
  REQUIRE(by_kind.count("Service"));
  REQUIRE(by_kind.count("ConfigMap"));
  REQUIRE(by_kind.count("StatefulSet"));
  CHECK(by_kind["Service"]["spec"]["clusterIP"].as<std::string>() == "None");
  auto set = by_kind["StatefulSet"]["spec"];
  CHECK(set["serviceName"].as<std::string>() == "riomesh");
  auto replicas = set["replicas"].as<int>();
  auto container = set["template"]["spec"]["containers"][0];
  CHECK(container["readinessProbe"]["httpGet"]["path"].as<std::string>() == "/readyz");
  CHECK(container["livenessProbe"]["httpGet"]["path"].as<std::string>() == "/healthz");

  riomesh::test::temp_folder folder{"riomesh-deploy"};
  auto dir = folder.path.string();
  std::string error;
  REQUIRE_MESSAGE(config::make_secret_file(dir + "/cluster.secret", error), error);
  auto files = by_kind["ConfigMap"]["data"];
  CHECK(static_cast<int>(files.size()) == replicas);  // one per pod: $(POD_NAME).yaml
  for (int i = 0; i < replicas; ++i) {
    auto name = "riomesh-" + std::to_string(i);
    REQUIRE_MESSAGE(files[name + ".yaml"], name << ".yaml is missing");
    auto text = std::regex_replace(files[name + ".yaml"].as<std::string>(),
                                   std::regex{"/etc/riomesh/secret/cluster.secret"},
                                   dir + "/cluster.secret");
    config::settings s;
    try {
      s = config::load_string(text, name + ".yaml", dir);
    } catch (const config::error& e) {
      FAIL(e.what());
    }
    CHECK(s.node.name == name);
    CHECK(s.node.metrics.port == 9464);
    REQUIRE(s.cluster.seeds.size() == 1);
    CHECK(s.cluster.seeds[0].host == "riomesh.riomesh.svc.cluster.local");
    CHECK(s.logging.format == config::log_format::json);
  }
}
