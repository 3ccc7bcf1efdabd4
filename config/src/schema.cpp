#include "schema.hpp"

#include <riomesh/config/address.hpp>
#include <riomesh/config/key_text.hpp>
#include <riomesh/config/text.hpp>
#include <riomesh/config/units.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

namespace riomesh::config::detail {
namespace {

using namespace std::chrono_literals;
constexpr std::uint64_t KiB = 1024, MiB = KiB * KiB, GiB = MiB * KiB;

// A member of one section of settings, e.g. &settings::channel + &channel_settings::sq_size.
template <class S, class T>
struct slot {
  S settings::*part;
  T S::*member;
  T& operator()(settings& s) const { return (s.*part).*member; }
  const T& operator()(const settings& s) const { return (s.*part).*member; }
};

template <class Enum>
using names = std::vector<std::pair<const char*, Enum>>;

const names<fabric_kind> fabric_names = {
    {"auto", fabric_kind::automatic}, {"verbs", fabric_kind::verbs}, {"tcp", fabric_kind::tcp}};
const names<scheduler_policy> policy_names = {{"sharing", scheduler_policy::sharing},
                                              {"stealing", scheduler_policy::stealing}};
const names<memory_provider> provider_names = {{"anonymous", memory_provider::anonymous},
                                               {"memfd", memory_provider::memfd},
                                               {"dmabuf", memory_provider::dmabuf}};
const names<encryption> encryption_names = {
    {"auto", encryption::automatic}, {"on", encryption::on}, {"off", encryption::off}};
const names<log_level> level_names = {{"trace", log_level::trace}, {"debug", log_level::debug},
                                      {"info", log_level::info},   {"warn", log_level::warn},
                                      {"error", log_level::error}, {"off", log_level::off}};

const names<log_format> format_names = {{"text", log_format::text}, {"json", log_format::json}};

template <class Enum>
bool read_choice(const value_ref& value, const names<Enum>& table, Enum& out) {
  std::string text;
  if (!value.scalar(text, "one of the listed words"))
    return false;
  std::string listed;
  for (const auto& [name, e] : table) {
    if (text == name) {
      out = e;
      return true;
    }
    listed += listed.empty() ? name : std::string{", "} + name;
  }
  value.fail("'" + text + "' is not one of " + listed);
  return false;
}

bool parse_count(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = 0;
  for (char c : text) {
    auto digit = static_cast<std::uint64_t>(c - '0');
    if (out > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
      return false;
    out = out * 10 + digit;
  }
  return true;
}

std::string range(const std::string& lo, const std::string& hi) {
  return "(" + lo + " .. " + hi + ")";
}

template <class S>
field count_field(std::string key, slot<S, std::uint32_t> at, std::uint32_t lo, std::uint32_t hi) {
  return {
      key, false,
      [=](const value_ref& v, settings& s) {
        std::string text;
        if (!v.scalar(text, "a whole number"))
          return;
        std::uint64_t n;
        if (!parse_count(text, n))
          return v.fail("expected a whole number, found '" + text + "'");
        if (n < lo || n > hi)
          return v.fail(text + " is out of range " + range(std::to_string(lo), std::to_string(hi)));
        at(s) = static_cast<std::uint32_t>(n);
      },
      [=](const settings& s) { return YAML::Node(std::to_string(at(s))); }};
}

template <class S>
field size_field(std::string key, slot<S, std::uint64_t> at, std::uint64_t lo, std::uint64_t hi,
                 std::string why_max = {}) {
  return {key, false,
          [=](const value_ref& v, settings& s) {
            std::string text;
            if (!v.scalar(text, "a size such as 64KiB"))
              return;
            if (!text.empty() && text[0] == '-')
              return v.fail(text + " is negative: a size is 0 or more");
            auto n = parse_size(text);
            if (!n)
              return v.fail("'" + text +
                            "' is not a size: a whole number with an optional unit "
                            "(B, KiB, MiB, GiB, TiB, kB, MB, GB, TB), or it does not fit "
                            "in 64 bits");
            if (*n < lo)
              return v.fail(text + " is below the minimum " + format_size(lo));
            if (*n > hi)
              return v.fail(text + " does not fit: the maximum is " + format_size(hi) +
                            (why_max.empty() ? "" : " (" + why_max + ")"));
            at(s) = *n;
          },
          [=](const settings& s) { return YAML::Node(format_size(at(s))); }};
}

template <class S>
field duration_field(std::string key, slot<S, duration> at, duration lo, duration hi) {
  return {key, false,
          [=](const value_ref& v, settings& s) {
            std::string text;
            if (!v.scalar(text, "a duration such as 250ms"))
              return;
            if (!text.empty() && text[0] == '-')
              return v.fail(text + " is negative: a duration is 0 or more");
            auto d = parse_duration(text);
            if (!d)
              return v.fail("'" + text +
                            "' is not a duration: a whole number with a unit "
                            "(ns, us, ms, s, min)");
            if (*d < lo || *d > hi)
              return v.fail(text + " is out of range " +
                            range(format_duration(lo), format_duration(hi)));
            at(s) = *d;
          },
          [=](const settings& s) { return YAML::Node(format_duration(at(s))); }};
}

template <class S>
field flag_field(std::string key, slot<S, bool> at) {
  return {key, false,
          [=](const value_ref& v, settings& s) {
            std::string text;
            if (!v.scalar(text, "true or false"))
              return;
            if (text == "true" || text == "false")
              at(s) = text == "true";
            else
              v.fail("expected true or false, found '" + text + "'");
          },
          [=](const settings& s) { return YAML::Node(at(s) ? "true" : "false"); }};
}

template <class S, class Enum>
field choice_field(std::string key, slot<S, Enum> at, const names<Enum>& table) {
  return {key, false,
          [=, &table](const value_ref& v, settings& s) { read_choice(v, table, at(s)); },
          [=](const settings& s) { return YAML::Node(to_string(at(s))); }};
}

field name_field(std::string key, slot<node_settings, std::string> at, bool required) {
  return {key, required, [=](const value_ref& v, settings& s) { read_name(v, at(s)); },
          [=](const settings& s) { return YAML::Node(at(s)); }};
}

field endpoint_field(std::string key, slot<node_settings, endpoint> at, bool required) {
  return {key, required, [=](const value_ref& v, settings& s) { read_endpoint(v, at(s)); },
          [=](const settings& s) { return YAML::Node(to_string(at(s))); }};
}

// "HOST:PORT", or off.
field metrics_field() {
  return {"metrics", false,
          [](const value_ref& v, settings& s) {
            std::string text;
            if (!v.scalar(text, "host:port, or off"))
              return;
            if (text == "off" || text.empty())
              s.node.metrics = {};
            else
              read_endpoint(v, s.node.metrics);
          },
          [](const settings& s) {
            return YAML::Node(s.node.metrics.host.empty() ? std::string{"off"}
                                                          : to_string(s.node.metrics));
          }};
}

field device_field() {
  return {"device", false,
          [](const value_ref& v, settings& s) {
            std::string text;
            if (v.scalar(text, "an RDMA device name such as mlx5_0"))
              s.node.device = text;
          },
          [](const settings& s) { return YAML::Node(s.node.device); }};
}

field dmabuf_device_field() {
  return {
      "dmabuf_device", false,
      [](const value_ref& v, settings& s) {
        std::string text;
        if (!v.scalar(text, "a DRM device such as /dev/dri/card0"))
          return;
        if (!text.empty() && text.front() != '/')
          return v.fail("expected an absolute path such as /dev/dri/card0, found '" + text + "'");
        s.memory.dmabuf_device = text;
      },
      [](const settings& s) { return YAML::Node(s.memory.dmabuf_device); }};
}

// Reads one `- name: ... address: ...` entry of cluster.peers.
void read_peer(const value_ref& v, settings& s) {
  if (!v.node.IsMap())
    return v.fail("expected a mapping with name and address");
  peer_settings peer;
  bool has_name = false, has_address = false;
  for (auto it = v.node.begin(); it != v.node.end(); ++it) {
    auto key = it->first.Scalar();
    value_ref item{it->second, v.path + "." + key, v.in.at(it->second.Mark()), v.in};
    if (item.node.IsNull())
      item.where = v.in.at(it->first.Mark());
    if (key == "name") {
      has_name = read_name(item, peer.name);
      v.in.record(item.path, item.where);
    } else if (key == "address") {
      has_address = read_endpoint(item, peer.address);
    } else {
      auto hint = closest(key, {"name", "address"});
      v.in.fail(v.in.at(it->first.Mark()),
                v.path + ": unknown key '" + key + "'" +
                    (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
    }
  }
  if (has_name)
    v.in.peer_names().emplace_back(peer.name, v.path);
  if (!v.node["name"])
    v.fail("missing required key 'name'");
  if (!v.node["address"])
    v.fail("missing required key 'address'");
  if (!has_name || !has_address)
    return;
  s.cluster.peers.push_back(std::move(peer));
}

field peers_field() {
  return {"peers", false,
          [](const value_ref& v, settings& s) {
            if (v.node.IsNull())
              return;
            if (!v.node.IsSequence())
              return v.fail("expected a list of {name, address} entries");
            for (std::size_t i = 0; i < v.node.size(); ++i) {
              const YAML::Node& entry = v.node[i];
              read_peer(value_ref{entry, v.path + "[" + std::to_string(i) + "]",
                                  v.in.at(entry.Mark()), v.in},
                        s);
            }
          },
          [](const settings& s) {
            YAML::Node list(YAML::NodeType::Sequence);
            for (const auto& p : s.cluster.peers) {
              YAML::Node entry;
              entry["name"] = p.name;
              entry["address"] = to_string(p.address);
              list.push_back(entry);
            }
            return list;
          }};
}

// "HOST:PORT" entries; HOST may be a DNS name, resolved while the node runs.
field seeds_field() {
  return {"seeds", false,
          [](const value_ref& v, settings& s) {
            if (v.node.IsNull())
              return;
            if (!v.node.IsSequence())
              return v.fail("expected a list of host:port entries");
            for (std::size_t i = 0; i < v.node.size(); ++i) {
              const YAML::Node& entry = v.node[i];
              endpoint e;
              if (read_endpoint(value_ref{entry, v.path + "[" + std::to_string(i) + "]",
                                          v.in.at(entry.Mark()), v.in},
                                e))
                s.cluster.seeds.push_back(std::move(e));
            }
          },
          [](const settings& s) {
            YAML::Node list(YAML::NodeType::Sequence);
            for (const auto& e : s.cluster.seeds)
              list.push_back(to_string(e));
            return list;
          }};
}

// The secret is read when the file is loaded, so that an unreadable or empty
// secret stops the node before it listens, not at the first handshake.
bool read_text_file(const value_ref& v, const std::string& what, std::string& path,
                    std::string& text) {
  std::string given;
  if (!v.scalar(given, "a file path") || given.empty())
    return false;
  path = !given.empty() && given[0] != '/' ? v.in.base_dir() + "/" + given : given;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    v.fail("cannot read " + what + " '" + path + "': " + std::strerror(errno));
    return false;
  }
  text.assign(std::istreambuf_iterator<char>(in), {});
  return true;
}

field secret_field() {
  return {"secret_file", false,
          [](const value_ref& v, settings& s) {
            std::string path, secret;
            if (!read_text_file(v, "secret file", path, secret))
              return;
            while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r'))
              secret.pop_back();
            if (secret.size() < 16)
              return v.fail("secret file '" + path + "' holds " + std::to_string(secret.size()) +
                            " bytes; at least 16 are needed");
            s.cluster.secret_file = path;
            s.cluster.secret = std::move(secret);
          },
          [](const settings& s) { return YAML::Node(s.cluster.secret_file); }};
}

field key_file_field() {
  return {"key_file", false,
          [](const value_ref& v, settings& s) {
            std::string path, text, error;
            if (!read_text_file(v, "key file", path, text))
              return;
            auto seed = parse_private_key(text, error);
            if (seed.empty())
              return v.fail("key file '" + path + "': " + error);
            s.node.key_file = path;
            s.node.key = std::move(seed);
          },
          [](const settings& s) { return YAML::Node(s.node.key_file); }};
}

// One public key, for `name`, from `text`; false (with the problem recorded
// at `where`) if it is no key, or the name is listed twice.
bool add_key(settings& s, reader& in, const origin& where, const std::string& context,
             const std::string& name, const std::string& text) {
  if (!is_node_name(name)) {
    in.fail(where, context + ": '" + printable(name) + "' is not a valid name: " + node_name_rule);
    return false;
  }
  std::string error;
  auto key = parse_public_key(text, error);
  if (key.empty()) {
    in.fail(where, context + ": the key of node '" + name + "' is " + error);
    return false;
  }
  for (const auto& [known, k] : s.cluster.keys)
    if (known == name) {
      in.fail(where, context + ": node '" + name + "' is listed twice");
      return false;
    }
  s.cluster.keys.emplace_back(name, std::move(key));
  return true;
}

field keys_field() {
  return {"keys", false,
          [](const value_ref& v, settings& s) {
            if (v.node.IsNull())
              return;
            if (!v.node.IsMap())
              return v.fail("expected a mapping of node names to base64 public keys");
            for (auto it = v.node.begin(); it != v.node.end(); ++it) {
              auto name = it->first.Scalar();
              value_ref item{it->second, v.path + "." + name, v.in.at(it->second.Mark()), v.in};
              std::string text;
              if (item.scalar(text, "a base64 public key"))
                add_key(s, v.in, item.where, v.path, name, text);
            }
          },
          [](const settings& s) {
            YAML::Node map(YAML::NodeType::Map);
            for (const auto& [name, key] : s.cluster.keys)
              map[name] = public_key_text(key);
            return map;
          }};
}

// A keyring file: one "NAME BASE64-KEY" per line; blank lines and lines
// starting with '#' are skipped. Problems name the file and line.
field keyring_field() {
  return {"keyring_file", false,
          [](const value_ref& v, settings& s) {
            std::string path, text;
            if (!read_text_file(v, "keyring file", path, text))
              return;
            s.cluster.keyring_file = path;
            std::istringstream lines(text);
            std::string line;
            for (int n = 1; std::getline(lines, line); ++n) {
              std::istringstream words(line);
              std::string name, key, extra;
              words >> name;
              if (name.empty() || name[0] == '#')
                continue;
              words >> key >> extra;
              origin at{path, n, 1};
              if (key.empty() || !extra.empty()) {
                v.in.fail(at, "keyring: expected 'NAME BASE64-KEY' on the line");
                continue;
              }
              add_key(s, v.in, at, "keyring", name, key);
            }
          },
          [](const settings& s) { return YAML::Node(s.cluster.keyring_file); }};
}

// cluster.admins: names the keyring lists (validate.cpp checks that).
field admins_field() {
  return {"admins", false,
          [](const value_ref& v, settings& s) {
            if (v.node.IsNull())
              return;
            if (!v.node.IsSequence())
              return v.fail("expected a list of node names");
            for (std::size_t i = 0; i < v.node.size(); ++i) {
              value_ref item{v.node[i], v.path + "[" + std::to_string(i) + "]",
                             v.in.at(v.node[i].Mark()), v.in};
              std::string name;
              if (read_name(item, name))
                s.cluster.admins.push_back(name);
            }
          },
          [](const settings& s) {
            YAML::Node list(YAML::NodeType::Sequence);
            for (const auto& n : s.cluster.admins)
              list.push_back(n);
            return list;
          }};
}

// The iomap slot count travels in 8 bits (rsocket-wire.md §1.2.3): 0..128
// exactly, then multiples of 256 up to 32512. Anything else would announce a
// different size than we use.
field iomap_field() {
  auto base = count_field(
      "iomap_size",
      slot<channel_settings, std::uint32_t>{&settings::channel, &channel_settings::iomap_size}, 0,
      32512);
  auto plain = base.read;
  base.read = [plain](const value_ref& v, settings& s) {
    auto before = v.in.problems().size();
    plain(v, s);
    auto n = s.channel.iomap_size;
    if (v.in.problems().size() == before && n > 128 && n % 256 != 0) {
      v.fail(std::to_string(n) +
             " cannot be announced to the peer: the wire carries 0..128 exactly, then "
             "multiples of 256 up to 32512 (use " +
             std::to_string(n < 256 ? 128 : n / 256 * 256) + " or " +
             std::to_string((n / 256 + 1) * 256) + ")");
      s.channel.iomap_size = channel_settings{}.iomap_size;
    }
  };
  return base;
}

field threads_field() {
  return {"threads", false,
          [](const value_ref& v, settings& s) {
            std::string text;
            if (!v.scalar(text, "a thread count or auto"))
              return;
            if (text == "auto") {
              s.runtime.threads = 0;
              return;
            }
            std::uint64_t n;
            if (!parse_count(text, n))
              return v.fail("expected a whole number or auto, found '" + text + "'");
            if (n < 1 || n > 256)
              return v.fail(text + " is out of range (1 .. 256), or auto");
            s.runtime.threads = static_cast<std::uint32_t>(n);
          },
          [](const settings& s) {
            return YAML::Node(s.runtime.threads == 0 ? std::string{"auto"}
                                                     : std::to_string(s.runtime.threads));
          }};
}

std::vector<section> make_schema() {
  using N = node_settings;
  using C = channel_settings;
  auto ch = [](auto C::*m) {
    return slot<C, std::remove_reference_t<decltype(C{}.*m)>>{&settings::channel, m};
  };
  using M = memory_settings;
  auto mem = [](auto M::*m) {
    return slot<M, std::remove_reference_t<decltype(M{}.*m)>>{&settings::memory, m};
  };
  return {
      {"node",
       {name_field("name", {&settings::node, &N::name}, true),
        endpoint_field("listen", {&settings::node, &N::listen}, true),
        choice_field("fabric", slot<N, fabric_kind>{&settings::node, &N::fabric}, fabric_names),
        device_field(), key_file_field(), metrics_field()}},
      {"cluster",
       {peers_field(), seeds_field(), secret_field(), keys_field(), keyring_field(), admins_field(),
        flag_field("insecure",
                   slot<cluster_settings, bool>{&settings::cluster, &cluster_settings::insecure}),
        count_field("max_sessions",
                    slot<cluster_settings, std::uint32_t>{&settings::cluster,
                                                          &cluster_settings::max_sessions},
                    1, 65536)}},
      {"channel",
       {count_field("sq_size", ch(&C::sq_size), 16, 65534),
        count_field("rq_size", ch(&C::rq_size), 16, 65534),
        count_field("inline", ch(&C::inline_size), 0, 4096),
        size_field("send_buffer", ch(&C::send_buffer), 4 * KiB, GiB),
        size_field("recv_buffer", ch(&C::recv_buffer), 4 * KiB, GiB),
        iomap_field(),
        count_field("read_depth", ch(&C::read_depth), 0, 255),
        duration_field("polling_time", ch(&C::polling_time), 0ns, 1s),
        duration_field("max_polling_time", ch(&C::max_polling_time), 0ns, 1s),
        size_field("eager_threshold", ch(&C::eager_threshold), 0, GiB),
        size_field("arena", ch(&C::arena), MiB, 2 * GiB, "an iomap entry's length is 32 bits"),
        size_field("arena_min", ch(&C::arena_min), 0, 2 * GiB),
        size_field("rendezvous", ch(&C::rendezvous), 0, 1024 * GiB),
        size_field("fetch_window", ch(&C::fetch_window), 64 * KiB, 64 * GiB),
        count_field("max_pending", ch(&C::max_pending), 1, 1u << 20),
        size_field("max_streamed", ch(&C::max_streamed), 0, 1024 * GiB),
        count_field("max_streams", ch(&C::max_streams), 1, 256),
        duration_field("keepalive", ch(&C::keepalive), 0ns, std::chrono::hours(1)),
        duration_field("peer_timeout", ch(&C::peer_timeout), 10ms, std::chrono::hours(1)),
        choice_field("encrypt", ch(&C::encrypt), encryption_names)}},
      {"memory",
       {choice_field("provider", mem(&M::provider), provider_names), dmabuf_device_field(),
        size_field("max_pinned", mem(&M::max_pinned), 0, 1024 * GiB),
        count_field("cache_entries", mem(&M::cache_entries), 1, 1u << 20),
        size_field("cache_bytes", mem(&M::cache_bytes), MiB, 1024 * GiB),
        duration_field("cache_idle", mem(&M::cache_idle), 0ns, std::chrono::hours(24)),
        count_field("shared_cq_from", mem(&M::shared_cq_from), 0, 1u << 20),
        size_field("arena_budget", mem(&M::arena_budget), 0, 1024 * GiB)}},
      {"runtime",
       {threads_field(),
        choice_field(
            "policy",
            slot<runtime_settings, scheduler_policy>{&settings::runtime, &runtime_settings::policy},
            policy_names),
        duration_field("io_handler_limit",
                       slot<runtime_settings, duration>{&settings::runtime,
                                                        &runtime_settings::io_handler_limit},
                       0ns, 1s)}},
      {"logging",
       {choice_field(
            "level",
            slot<logging_settings, log_level>{&settings::logging, &logging_settings::level},
            level_names),
        choice_field(
            "format",
            slot<logging_settings, log_format>{&settings::logging, &logging_settings::format},
            format_names)}},
  };
}

}  // namespace

std::vector<std::string> section::keys() const {
  std::vector<std::string> out;
  for (const auto& f : fields)
    out.push_back(f.key);
  return out;
}

const field* section::find(const std::string& key) const {
  for (const auto& f : fields)
    if (f.key == key)
      return &f;
  return nullptr;
}

const std::vector<section>& schema() {
  static const std::vector<section> sections = make_schema();
  return sections;
}

bool read_name(const value_ref& v, std::string& out) {
  std::string text;
  if (!v.scalar(text, "a name"))
    return false;
  if (!is_node_name(text)) {
    v.fail("'" + text + "' is not a valid name: " + node_name_rule);
    return false;
  }
  out = text;
  return true;
}

bool read_endpoint(const value_ref& value, endpoint& out) {
  std::string text;
  if (!value.scalar(text, "host:port"))
    return false;
  auto parsed = parse_endpoint(text);
  if (auto* problem = std::get_if<std::string>(&parsed)) {
    value.fail("malformed address '" + text + "': " + *problem);
    return false;
  }
  out = std::get<endpoint>(parsed);
  return true;
}

bool read_fabric(const value_ref& value, fabric_kind& out) {
  return read_choice(value, fabric_names, out);
}

bool read_log_level(const value_ref& value, log_level& out) {
  return read_choice(value, level_names, out);
}

}  // namespace riomesh::config::detail

namespace riomesh::config {

const char* to_string(fabric_kind value) {
  switch (value) {
    case fabric_kind::verbs:
      return "verbs";
    case fabric_kind::tcp:
      return "tcp";
    default:
      return "auto";
  }
}

const char* to_string(scheduler_policy value) {
  return value == scheduler_policy::stealing ? "stealing" : "sharing";
}

const char* to_string(memory_provider value) {
  static const char* const text[] = {"anonymous", "memfd", "dmabuf"};
  return text[static_cast<int>(value)];
}

const char* to_string(encryption value) {
  static const char* const text[] = {"auto", "on", "off"};
  return text[static_cast<int>(value)];
}

const char* to_string(log_format value) {
  return value == log_format::json ? "json" : "text";
}

const char* to_string(log_level value) {
  static const char* const text[] = {"trace", "debug", "info", "warn", "error", "off"};
  return text[static_cast<int>(value)];
}

}  // namespace riomesh::config
