#include <riomesh/runtime.hpp>

#include "admin_actor.hpp"
#include "metrics/metrics_server.hpp"
#include "metrics/prometheus_text.hpp"

#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/directory/directory.hpp>
#include <riomesh/actors/exchange/exchange.hpp>
#include <riomesh/actors/grants/grant_holder.hpp>
#include <riomesh/actors/io/connection_host.hpp>
#include <riomesh/actors/io/io_executor.hpp>
#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/actors/memory/iomap_manager.hpp>
#include <riomesh/actors/peers/node_table.hpp>
#include <riomesh/actors/scheduler.hpp>
#include <riomesh/buffer_inspect.hpp>
#include <riomesh/buffer_pool.hpp>
#include <riomesh/channels/fabric_choice.hpp>
#include <riomesh/channels/listener.hpp>
#include <riomesh/channels/memory/memory_region.hpp>
#include <riomesh/channels/verbs/memory_domain.hpp>
#include <riomesh/config/address.hpp>
#include <riomesh/config/loader.hpp>
#include <riomesh/log.hpp>

#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>
#include <caf/scoped_actor.hpp>

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <unordered_map>

namespace riomesh {
namespace {

std::unique_ptr<caf::actor_system_config> make_config(const config::settings& s,
                                                      const runtime::configure_fn& configure) {
  auto cfg = std::make_unique<caf::actor_system_config>();
  actors::apply(s.runtime, *cfg);
  // CAF 0.17 gives an actor system a node id (what actor handles carry, so
  // that one node's actor 7 is never taken for another's) only with its
  // middleman loaded. It stays idle: no multiplexer thread, no port.
  cfg->load<caf::io::middleman>();
  cfg->set("middleman.manual-multiplexing", true);
  cfg->add_error_category(error_category(), render_error);
  cfg->add_message_type<buffer>("riomesh::buffer");
  cfg->add_message_type<stat_report>("riomesh::stat_report");
  cfg->add_message_type<published_list>("riomesh::published_list");
  cfg->add_message_type<grant>("riomesh::grant");
  cfg->add_message_type<grant_status>("riomesh::grant_status");
  if (configure)
    configure(*cfg);
  return cfg;
}

actors::credentials credentials_of(const config::settings& s) {
  actors::credentials c;
  c.secret = s.cluster.secret;
  if (!s.node.key.empty())
    c.key = actors::node_key::from_seed(s.node.key);
  for (const auto& [name, key] : s.cluster.keys) {
    actors::public_key k{};
    std::copy(key.begin(), key.end(), k.begin());
    c.trusted[name] = k;
  }
  c.admins.insert(s.cluster.admins.begin(), s.cluster.admins.end());
  return c;
}

// Pool slabs are what the node sends from: with dma-buf arenas (device
// memory peers place into) they stay in host memory.
config::memory_provider pool_provider(const config::memory_settings& m) {
  return m.provider == config::memory_provider::dmabuf ? config::memory_provider::anonymous
                                                       : m.provider;
}

// Random per start: how peers tell this run of the node from an earlier one.
std::uint64_t incarnation() {
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) | rd();
}

actors::directory_params directory_params_of(const config::settings& s) {
  actors::directory_params d;
  auto& n = d.node;
  n.listen = s.node.listen;
  n.peers = s.cluster.peers;
  n.seeds = s.cluster.seeds;
  n.insecure = s.cluster.insecure;
  n.encrypt = s.channel.encrypt;
  n.sessions.max_sessions = s.cluster.max_sessions;
  n.sessions.arena_budget = s.memory.arena_budget;
  n.nodes = std::make_shared<actors::node_table>();
  n.channel = channels::channel_options::from(s);
  auto& c = n.connection;
  c.node_name = s.node.name;
  c.tls = std::make_shared<actors::tls_context>(s.node.name, credentials_of(s));
  c.incarnation = incarnation();
  c.arena_size = s.channel.arena;
  c.arena_min = s.channel.arena_min;
  c.lend_from = s.channel.rendezvous;
  c.fetches_lent = true;
  c.fetch_window = s.channel.fetch_window;
  c.arena_memory = {s.memory.provider, s.memory.dmabuf_device};
  // Segments given up are kept a while for the next arena that grows, up
  // to an eighth of the budget.
  c.arena_pool = actors::segment_pool::make(
      c.arena_memory, s.memory.arena_budget ? s.memory.arena_budget / 8 : 1ull << 30);
  c.max_pending = s.channel.max_pending;
  c.max_streamed = s.channel.max_streamed;
  c.max_streams = s.channel.max_streams;
  // Inline bodies hold everything below the threshold, and a little more.
  c.max_body = static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1u << 20, 2 * s.channel.eager_threshold + (64u << 10)));
  // The timers run a few times per keepalive, and often enough to notice a
  // silent peer well within peer_timeout.
  auto keep = std::chrono::duration_cast<std::chrono::milliseconds>(
      s.channel.keepalive.count() > 0 ? s.channel.keepalive : s.channel.peer_timeout);
  c.tick = std::clamp(keep / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(250));
  c.peer_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(s.channel.peer_timeout);
  // A node sets up a session in a few round trips; twice the peer timeout
  // (at least 2 s) is ample, and bounds how long a client that never
  // authenticates holds a descriptor.
  c.setup_limit =
      std::max(std::chrono::milliseconds(2000),
               2 * std::chrono::duration_cast<std::chrono::milliseconds>(s.channel.peer_timeout));
  d.eager_threshold = s.channel.eager_threshold;
  return d;
}

// Said once, at start, per device: a node whose arenas are device memory
// on a device that cannot register it pays a copy per received byte.
void note_dmabuf_staging(channels::verbs::memory_domain& domain, const std::string& node) {
  std::string error, why;
  auto devices = domain.attach_all(error);
  if (!error.empty())
    throw std::runtime_error("node '" + node + "': " + error);
  for (auto* d : devices)
    if (!d->dmabuf(why))
      logging::warn(node, {"dmabuf_staged",
                           "",
                           {},
                           why + ": receive arenas are staged in host memory and copied into the "
                                 "dma-buf on delivery (counted as staged_bytes_in), and device "
                                 "memory sent on goes from a host copy (staged_bytes_out)"});
}

}  // namespace

struct runtime::impl {
  impl(config::settings s, const configure_fn& configure)
      : settings(std::move(s)),
        loop(settings.channel.polling_time, settings.channel.max_polling_time),
        cfg(make_config(settings, configure)),
        pool(std::make_unique<buffer_pool>(std::size_t{64} << 20, pool_provider(settings.memory))),
        system(*cfg) {
    logging::set_level(settings.logging.level);
    logging::set_format(settings.logging.format);
    if (settings.cluster.secret.empty() && settings.cluster.keys.empty() &&
        !settings.cluster.insecure && !config::is_loopback(settings.node.listen))
      throw std::runtime_error("node '" + settings.node.name + "': listening on " +
                               config::to_string(settings.node.listen) +
                               " without a cluster secret; set cluster.secret_file, listen on "
                               "loopback, or set cluster.insecure: true");
    if (settings.cluster.secret.empty() && settings.cluster.keys.empty())
      logging::warn(settings.node.name,
                    {"unauthenticated_peers_accepted",
                     "",
                     {},
                     "this node accepts unauthenticated peers: it has no cluster secret and no "
                     "keys, so any process that reaches " +
                         config::to_string(settings.node.listen) +
                         " may join under any name it likes (set cluster.secret_file or give "
                         "nodes keys: docs/security.md)"});
    auto params = directory_params_of(settings);
    params.node.connection.destination = [this](const std::string& peer, std::uint64_t receiver,
                                                std::uint64_t size) {
      return destination(peer, receiver, size);
    };
    std::string error;
    // Device memory that cannot be had is a configuration error: say so
    // now, not at the first connection.
    if (settings.memory.provider == config::memory_provider::dmabuf &&
        !channels::memory_region::make(params.node.connection.arena_memory, 4096, "riomesh-probe",
                                       error))
      throw std::runtime_error("node '" + settings.node.name + "': " + error);
    auto choice = channels::choose_fabric(settings.node, channels::probe_rdma_devices());
    if (choice.fabric == config::fabric_kind::verbs &&
        settings.channel.encrypt == config::encryption::on)
      throw std::runtime_error("node '" + settings.node.name +
                               "': channel.encrypt: on, and the fabric is rdma (" + choice.reason +
                               "): rdma places bytes by RDMA write, which TLS cannot cover; set "
                               "node.fabric: tcp, or channel.encrypt: auto");
    if (settings.memory.provider == config::memory_provider::dmabuf &&
        choice.fabric == config::fabric_kind::verbs)
      note_dmabuf_staging(*params.node.channel.memory, settings.node.name);
    if (choice.fabric == config::fabric_kind::verbs) {
      // The I/O thread takes the shared completion queues' signals itself:
      // a thread of their own would cost a switch per wake-up.
      memory = params.node.channel.memory;
      memory->watch_queues({[this](int fd, std::function<void()> ready) {
                              return loop.watch(fd, std::move(ready), false);
                            },
                            [this](int fd) { loop.unwatch(fd); }});
    }
    std::shared_ptr<channels::listener> l =
        channels::listen(params.node.listen, params.node.channel, error);
    if (!l)
      throw std::runtime_error("node '" + settings.node.name + "': " + error);
    port = l->port();
    actors::exchange_params xp;
    xp.node_name = settings.node.name;
    xp.eager_threshold = settings.channel.eager_threshold;
    xp.listen = {settings.node.listen.host, port};
    xp.nodes = params.node.nodes;
    x = actors::exchange::make(system, xp);
    // Peers learn who this node is (what its actor handles carry) and where
    // it listens from its session terms.
    params.node.connection.identity = x->identity();
    connections = std::make_unique<actors::connection_host>(system, loop);
    params.node.connections = connections.get();
    if (settings.runtime.io_handler_limit.count() > 0) {
      actors::io_executor_limits limits;
      limits.heavy = settings.runtime.io_handler_limit;
      x->run_actors_on(loop, limits);
    }
    public_iomap_manager = iomap_manager = actors::spawn_iomap_manager(
        system, {x, &loop,
                 choice.fabric == config::fabric_kind::verbs ? params.node.channel.memory : nullptr,
                 settings.memory.cache_idle});
    directory = actors::spawn_directory(system, loop, x, params, std::move(l));
    auto listen = settings.node.listen;
    listen.port = port;
    fabric = choice.reason;
    admin = detail::spawn_admin(system, directory,
                                {{"node", settings.node.name},
                                 {"listen", config::to_string(listen)},
                                 {"fabric", fabric},
                                 {"pid", std::to_string(::getpid())}},
                                [x = x] {
                                  return published_list{x->published_names(), {}};
                                });
  }
  ~impl() {
    metrics.reset();  // no scrape asks the actors while they go
    stop();
    // The node drains its links on the I/O thread; once it and the
    // directory are done, the thread stops before the actor system goes
    // (what it runs calls into CAF).
    if (directory) {
      caf::scoped_actor self{system};
      self->wait_for(directory);
    }
    loop.stop();
    // Connections that outlive the loop (none should) would need their
    // queues watched still.
    if (memory)
      memory->watch_queues({});
    // Published actors and proxies are held there: let them go, so the
    // actor system's destructor can wait for them to finish.
    if (x)
      x->clear();
    directory = nullptr;
    admin = nullptr;
    iomap_manager = nullptr;
    public_iomap_manager = nullptr;
  }
  void stop() {
    if (admin)
      caf::anon_send_exit(admin, caf::exit_reason::user_shutdown);
    if (iomap_manager)
      caf::anon_send_exit(iomap_manager, caf::exit_reason::user_shutdown);
    if (directory)
      caf::anon_send(directory, actors::stop_atom::value);
  }

  config::settings settings;
  // Outlives the loop's links, which report to it.
  std::shared_ptr<actors::exchange> x;
  // Outlives the actor system, whose actors post to it; stopped before it.
  actors::io_loop loop;
  std::unique_ptr<caf::actor_system_config> cfg;  // must outlive `system`
  // Outlives `system`, whose destructor waits for the actors: one still
  // running may allocate.
  std::unique_ptr<buffer_pool> pool;
  // Actors' destinations for lent buffers (receive_into), read on the I/O
  // thread as each fetch starts.
  std::mutex destinations_lock;
  std::unordered_map<std::uint64_t, destination_fn> destinations;
  buffer destination(const std::string& peer, std::uint64_t receiver, std::uint64_t size) {
    destination_fn fn;
    {
      std::lock_guard<std::mutex> guard(destinations_lock);
      auto it = destinations.find(receiver);
      if (it != destinations.end())
        fn = it->second;
    }
    auto b = fn ? fn(size, peer) : buffer{};
    return b.size() >= size ? b : pool->allocate(size);
  }
  caf::actor_system system;
  // The connections' actors run on the loop's thread; gone before the
  // system (the loop stopped first and let them go).
  std::unique_ptr<actors::connection_host> connections;
  actors::directory_actor directory;
  admin_actor admin;
  // Exposes memory to peers, lends it; gives back idle registrations.
  actors::iomap_manager_impl iomap_manager;
  iomap_manager_actor public_iomap_manager;  // the same, as applications see it
  std::string fabric;
  std::uint16_t port = 0;
  // On rdma: the node's memory domain, whose shared completion queues the
  // loop watches.
  std::shared_ptr<channels::verbs::memory_domain> memory;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::unique_ptr<detail::metrics_server> metrics;

  // What the node's actors say within `timeout`; nullopt if they did not.
  std::optional<node_stats> stats_within(std::chrono::milliseconds timeout) {
    caf::scoped_actor self{system};
    std::optional<node_stats> out;
    self->request(directory, timeout, actors::stats_atom::value)
        .receive([&](node_stats& s) { out = std::move(s); }, [&](caf::error&) {});
    return out;
  }
  detail::metrics_handlers metrics_handlers() {
    detail::metrics_handlers h;
    h.metrics = [this]() -> std::optional<std::string> {
      auto s = stats_within(std::chrono::seconds(5));
      if (!s)
        return std::nullopt;
      detail::metrics_snapshot snap;
      snap.stats = std::move(*s);
      snap.uptime_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - started)
                           .count();
      auto listen = settings.node.listen;
      listen.port = port;
      snap.facts = {{"node", settings.node.name},
                    {"listen", config::to_string(listen)},
                    {"fabric", fabric.substr(0, fabric.find(':'))}};
      for (const auto& p : settings.cluster.peers)
        snap.configured_peers.push_back(p.name);
      return detail::prometheus_text(snap);
    };
    h.alive = [this]() -> std::string {
      caf::scoped_actor self{system};
      std::string problem = "node '" + settings.node.name + "' did not answer within 2 s";
      self->request(admin, std::chrono::seconds(2), ping_atom::value)
          .receive([&](const std::string&) { problem.clear(); }, [&](caf::error&) {});
      return problem;
    };
    h.ready = [this]() -> std::string {
      auto s = stats_within(std::chrono::seconds(2));
      if (!s)
        return "node '" + settings.node.name + "' did not answer within 2 s";
      std::string missing;
      for (const auto& p : settings.cluster.peers) {
        bool up = false;
        for (const auto& [name, c] : s->peers)
          up = up || name == p.name;
        if (!up)
          missing += (missing.empty() ? "" : ", ") + p.name;
      }
      if (missing.empty())
        return {};
      return "not connected to configured peers (cluster.peers): " + missing;
    };
    return h;
  }
};

runtime::runtime(config::settings settings, configure_fn configure)
    : impl_(std::make_unique<impl>(std::move(settings), configure)) {
  publish(impl_->admin, admin_name);
  impl_->x->guard(caf::actor_cast<caf::strong_actor_ptr>(impl_->admin), detail::admin_refusal);
  if (!impl_->settings.node.metrics.host.empty())
    serve_metrics(impl_->settings.node.metrics);
}

runtime runtime::from_file(const std::string& path, const config::overrides& extra,
                           configure_fn configure) {
  return runtime{config::load_file(path, extra), std::move(configure)};
}

caf::expected<std::string> runtime::connect(const config::endpoint& where,
                                            std::chrono::milliseconds timeout) {
  caf::scoped_actor self{impl_->system};
  caf::expected<std::string> out{std::string{}};
  self->request(impl_->directory, timeout, dial_atom::value, where.host, where.port)
      .receive([&](std::string& name) { out = std::move(name); },
               [&](caf::error& e) { out = std::move(e); });
  return out;
}

runtime::runtime(runtime&&) noexcept = default;
runtime& runtime::operator=(runtime&&) noexcept = default;
runtime::~runtime() = default;

const config::settings& runtime::settings() const {
  return impl_->settings;
}

const std::string& runtime::node_name() const {
  return impl_->settings.node.name;
}

std::uint16_t runtime::port() const {
  return impl_->port;
}

std::uint16_t runtime::serve_metrics(const config::endpoint& at) {
  impl_->metrics.reset();
  try {
    impl_->metrics = std::make_unique<detail::metrics_server>(at, impl_->metrics_handlers());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("node '" + impl_->settings.node.name + "': " + e.what());
  }
  logging::info(impl_->settings.node.name,
                {"metrics_served",
                 "",
                 {{"port", std::uint64_t{impl_->metrics->port()}}},
                 "metrics at http://" + config::to_string({at.host, impl_->metrics->port()}) +
                     "/metrics (also /healthz, /readyz)"});
  return impl_->metrics->port();
}

std::uint16_t runtime::metrics_port() const {
  return impl_->metrics ? impl_->metrics->port() : 0;
}

std::size_t runtime::worker_threads() const {
  return impl_->system.scheduler().num_workers();
}

caf::actor_system& runtime::system() {
  return impl_->system;
}

const admin_actor& runtime::admin() const {
  return impl_->admin;
}

const iomap_manager_actor& runtime::iomap_manager() const {
  return impl_->public_iomap_manager;
}

const std::string& runtime::fabric() const {
  return impl_->fabric;
}

std::string runtime::interface_of(const std::set<std::string>& types) {
  std::string out;
  for (auto& t : types)
    out += (out.empty() ? "" : "\n") + t;
  return out;
}

bool runtime::publish_ptr(caf::strong_actor_ptr who, const std::string& name,
                          std::string interface) {
  caf::scoped_actor self{impl_->system};
  bool ok = false;
  self->request(impl_->directory, std::chrono::seconds(10), actors::publish_atom::value, name,
                std::move(who), std::move(interface))
      .receive([&](bool done) { ok = done; }, [&](caf::error&) {});
  return ok;
}

bool runtime::unpublish(const std::string& name) {
  caf::scoped_actor self{impl_->system};
  bool ok = false;
  self->request(impl_->directory, std::chrono::seconds(10), actors::unpublish_atom::value, name)
      .receive([&](bool done) { ok = done; }, [&](caf::error&) {});
  return ok;
}

caf::expected<caf::strong_actor_ptr> runtime::resolve(const std::string& node,
                                                      const std::string& name,
                                                      std::chrono::milliseconds timeout,
                                                      std::string& interface) {
  caf::scoped_actor self{impl_->system};
  caf::expected<caf::strong_actor_ptr> out{caf::strong_actor_ptr{}};
  // The directory times out first, with the better reason.
  self->request(impl_->directory, timeout + std::chrono::seconds(5), actors::resolve_atom::value,
                node, name, timeout)
      .receive(
          [&](caf::strong_actor_ptr& who, std::string& iface) {
            out = std::move(who);
            interface = std::move(iface);
          },
          [&](caf::error& e) { out = std::move(e); });
  return out;
}

buffer runtime::allocate(std::size_t size) {
  return impl_->pool->allocate(size);
}

void runtime::receive_into_id(std::uint64_t receiver, destination_fn fn) {
  std::lock_guard<std::mutex> guard(impl_->destinations_lock);
  if (fn)
    impl_->destinations[receiver] = std::move(fn);
  else
    impl_->destinations.erase(receiver);
}

buffer runtime::wrap(void* data, std::size_t size, std::function<void()> release) {
  if (size < impl_->settings.channel.eager_threshold) {
    auto b = buffer::copy_of(data, size);
    if (release)
      release();
    return b;
  }
  return buffer::wrap(data, size, std::move(release));
}

caf::expected<std::uint64_t> runtime::expose(const std::string& node, buffer b) {
  caf::scoped_actor self{impl_->system};
  caf::expected<std::uint64_t> out{std::uint64_t{0}};
  self->request(impl_->iomap_manager, std::chrono::seconds(10), actors::expose_atom::value, node,
                std::move(b))
      .receive([&](std::uint64_t offset) { out = offset; }, [&](caf::error& e) { out = e; });
  return out;
}

bool runtime::unexpose(const std::string& node, std::uint64_t offset) {
  caf::scoped_actor self{impl_->system};
  bool done = false;
  self->request(impl_->iomap_manager, std::chrono::seconds(10), actors::unexpose_atom::value, node,
                offset)
      .receive([&](bool ok) { done = ok; }, [&](caf::error&) {});
  return done;
}

void runtime::write(const std::string& node, std::uint64_t offset, buffer data,
                    const caf::actor& notify) {
  // Straight to the link, as a message to a remote actor goes: a write
  // and a message sent after it from one thread arrive in that order.
  impl_->x->place(node, offset, std::move(data), caf::actor_cast<caf::strong_actor_ptr>(notify));
}

caf::expected<grant> runtime::make_grant(const std::string& node, buffer region,
                                         grant_rights rights, bool once) {
  caf::scoped_actor self{impl_->system};
  caf::expected<grant> out{grant{}};
  self->request(impl_->iomap_manager, std::chrono::seconds(10), actors::grant_atom::value, node,
                std::move(region), static_cast<std::uint8_t>(rights), once)
      .receive([&](grant& g) { out = std::move(g); }, [&](caf::error& e) { out = e; });
  return out;
}

bool runtime::revoke(const grant& g) {
  if (g.owner != impl_->settings.node.name)
    return false;
  caf::scoped_actor self{impl_->system};
  bool done = false;
  self->request(impl_->iomap_manager, std::chrono::seconds(10), actors::revoke_atom::value, g.id)
      .receive([&](bool ok) { done = ok; }, [&](caf::error&) {});
  return done;
}

std::uint64_t runtime::write(const grant& g, std::uint64_t offset, buffer data,
                             const caf::actor& status_to, then_message then) {
  auto op = impl_->x->held_grants().next_op();
  // As any write: on this thread, ahead of what it sends next.
  impl_->x->held_grants().write(g, op, offset, std::move(data),
                                caf::actor_cast<caf::strong_actor_ptr>(status_to),
                                caf::actor_cast<caf::strong_actor_ptr>(then.to), then.msg);
  return op;
}

std::uint64_t runtime::read(const grant& g, std::uint64_t offset, buffer into,
                            const caf::actor& status_to, then_message then) {
  auto x = impl_->x;
  auto op = x->held_grants().next_op();
  auto status = caf::actor_cast<caf::strong_actor_ptr>(status_to);
  auto l = x->route_to(g.owner);
  if (!l) {
    x->held_grants().failed(op, status, grant_status::dropped,
                            "node '" + g.owner + "' is not connected");
    return op;
  }
  // The destination is mapped on the link's own thread, the request sent
  // behind the map.
  impl_->loop.post([x, l, g, op, offset, into = std::move(into), status,
                    then_to = caf::actor_cast<caf::strong_actor_ptr>(then.to),
                    msg = std::move(then.msg)]() mutable {
    x->held_grants().read(*l, g, op, offset, std::move(into), status, then_to, msg);
  });
  return op;
}

std::uint64_t runtime::fetch_add(const grant& g, std::uint64_t offset, std::uint64_t add,
                                 const caf::actor& status_to, then_message then) {
  auto op = impl_->x->held_grants().next_op();
  impl_->x->held_grants().atomic(g, op, actors::grant_op::fetch_add, offset, add, 0,
                                 caf::actor_cast<caf::strong_actor_ptr>(status_to),
                                 caf::actor_cast<caf::strong_actor_ptr>(then.to), then.msg);
  return op;
}

std::uint64_t runtime::compare_swap(const grant& g, std::uint64_t offset, std::uint64_t expected,
                                    std::uint64_t desired, const caf::actor& status_to,
                                    then_message then) {
  auto op = impl_->x->held_grants().next_op();
  impl_->x->held_grants().atomic(g, op, actors::grant_op::compare_swap, offset, expected, desired,
                                 caf::actor_cast<caf::strong_actor_ptr>(status_to),
                                 caf::actor_cast<caf::strong_actor_ptr>(then.to), then.msg);
  return op;
}

node_stats runtime::stats() {
  return impl_->stats_within(std::chrono::seconds(15)).value_or(node_stats{});
}

void runtime::notify_writable(const std::string& node, const caf::actor& who) {
  caf::anon_send(impl_->directory, actors::notify_atom::value, node, who);
}

void runtime::stop() {
  impl_->stop();
}

}  // namespace riomesh
