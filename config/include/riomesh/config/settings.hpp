// The typed, validated settings of one node, as a YAML file describes them.
// Defaults mirror rsockets' (librdmacm) where rsockets has the concept.
#pragma once

#include <riomesh/config/diagnostic.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace riomesh::config {

using duration = std::chrono::nanoseconds;

enum class fabric_kind { automatic, verbs, tcp };
enum class scheduler_policy { sharing, stealing };
enum class log_level { trace, debug, info, warn, error, off };
// text: "riomesh[node] warn: ..."; json: one object per line, for log
// collectors.
enum class log_format { text, json };
// Where receive arenas and pool slabs come from: private anonymous memory,
// a memfd another local process can map (buffer::descriptor()), or dma-buf
// (device memory, for receive arenas; pool slabs stay in host memory).
enum class memory_provider { anonymous, memfd, dmabuf };
// Whether a tcp connection's stream is encrypted after its handshake: auto
// does so unless the peer is on a loopback address.
enum class encryption { automatic, on, off };

// A host (IPv4 or IPv6 literal, or a name resolved at connect time) and a
// port. Port 0 on a listen address means "any free port".
struct endpoint {
  std::string host;
  std::uint16_t port = 0;
  bool operator==(const endpoint& other) const { return host == other.host && port == other.port; }
};

struct node_settings {
  std::string name;
  endpoint listen;
  fabric_kind fabric = fabric_kind::automatic;
  std::string device;  // empty: the RDMA device that routes to the address
  // This node's Ed25519 key, which proves its name to peers that list its
  // public key: the file (resolved against the config file's folder) and
  // its 32-byte private seed, read at load time.
  std::string key_file;
  std::string key;
  // Where operators scrape /metrics and probe /healthz and /readyz over
  // HTTP; an empty host: off (the default).
  endpoint metrics;
};

struct peer_settings {
  std::string name;
  endpoint address;
};

struct cluster_settings {
  std::vector<peer_settings> peers;
  // Addresses to dial whatever node answers there, kept as peers by name
  // once known; a host name may resolve to several (a headless Service).
  std::vector<endpoint> seeds;
  std::string secret_file;  // resolved against the config file's folder
  std::string secret;       // its contents, read at load time
  bool insecure = false;
  // The nodes' public keys (32 bytes each), by name: from `keys` in the
  // file and from `keyring_file`. Non-empty: every peer must prove its name
  // with the key listed for it.
  std::vector<std::pair<std::string, std::string>> keys;
  std::string keyring_file;
  // Names of the keyring whose holders may control this node (dial, resolve
  // through its admin actor), as its own process may.
  std::vector<std::string> admins;
  // Sessions up at once (dialed and accepted); one more is refused, naming it.
  std::uint32_t max_sessions = 256;
};

// One connection's queues, buffers and timers. Sizes are in bytes.
struct channel_settings {
  std::uint32_t sq_size = 384;
  std::uint32_t rq_size = 384;
  std::uint32_t inline_size = 64;
  std::uint64_t send_buffer = 128 * 1024;
  std::uint64_t recv_buffer = 128 * 1024;
  // rsockets defaults to 0 slots (no iomap); riomesh needs slots for the
  // receive arena and for the maps applications make.
  std::uint32_t iomap_size = 16;
  // rdma, between nodes: RDMA READs and atomics each side may have in
  // flight on a connection (both devices cap it). Above 0, a holder reads
  // grants and runs their atomics one-sided; 0: the owner's I/O thread
  // serves them, as it does on tcp.
  std::uint32_t read_depth = 16;
  duration polling_time = std::chrono::microseconds(50);
  // rdma: polls up to this while traffic keeps coming back within it. At
  // most polling_time (the default, 0) turns it off: the poll never grows.
  duration max_polling_time = std::chrono::nanoseconds::zero();
  std::uint64_t eager_threshold = 16 * 1024;
  std::uint64_t arena = 64ull * 1024 * 1024;
  // The arena is sized by demand between this and `arena`: an idle peer's
  // holds this much, a busy one's grows as its sender asks, within
  // memory.arena_budget. 0 (or at least `arena`): every arena is `arena`.
  std::uint64_t arena_min = 256 * 1024;
  // Buffers of at least this many bytes go by rendezvous to peers that
  // fetch them: they stay in the sender's memory, and the receiver reads
  // them (rdma) or has them pushed (tcp) into memory it chose, when its
  // fetch window allows; 0: every buffer is placed in the peer's arena.
  // 256 KiB: from there it paid on both fabrics (docs/benchmarks.md).
  std::uint64_t rendezvous = 256 * 1024;
  // What a node holds of one peer's lent buffers, fetched or being
  // fetched and not yet let go by its application.
  std::uint64_t fetch_window = 64ull * 1024 * 1024;
  std::uint32_t max_pending = 1024;
  // A buffer larger than the peer's arena streams through it in pieces and
  // is assembled (one copy) at the receiver, up to this size; 0: refused.
  std::uint64_t max_streamed = 4ull * 1024 * 1024 * 1024;
  // ... bounded per connection: the streamed buffers of one message
  // together hold at most max_streamed bytes, and number at most this.
  std::uint32_t max_streams = 8;
  duration keepalive = std::chrono::seconds(1);  // 0: off
  duration peer_timeout = std::chrono::seconds(5);
  encryption encrypt = encryption::automatic;
};

// What the node registers with its RDMA devices, node-wide (one memory
// domain per node: every connection on a device shares its registrations).
struct memory_settings {
  memory_provider provider = memory_provider::anonymous;
  // provider dmabuf: the DRM device whose buffers arenas are ("" = the
  // first /dev/dri/card* that makes them).
  std::string dmabuf_device;
  // Bytes the node may pin at once (registered memory is locked memory);
  // 0: bounded by RLIMIT_MEMLOCK only.
  std::uint64_t max_pinned = 0;
  // The cache of send registrations: entries and bytes kept while unused.
  std::uint32_t cache_entries = 1024;
  std::uint64_t cache_bytes = 1ull << 30;
  // A send registration nothing used for this long is given back (the
  // iomap manager looks every quarter of it); 0: kept until evicted.
  duration cache_idle = std::chrono::seconds(30);
  // A device's connections share its completion queues from the
  // this-many-th on (1: all); 0: none, each has its own.
  std::uint32_t shared_cq_from = 0;
  // Bytes the receive arenas of all sessions may take together; a session
  // that would pass it is refused, naming it. 0: unbounded.
  std::uint64_t arena_budget = 8ull << 30;
};

struct runtime_settings {
  std::uint32_t threads = 0;  // 0: one per core
  scheduler_policy policy = scheduler_policy::sharing;
  // The I/O thread runs the handler of an actor its delivery woke, unless
  // the actor's turns take longer than this (then the CAF workers do); 0:
  // the workers run every handler.
  duration io_handler_limit = std::chrono::milliseconds(1);
};

struct logging_settings {
  log_level level = log_level::info;
  log_format format = log_format::text;
};

// A parameter of an actor the file asks for: its text is read by the actor
// type's factory (actor_params.hpp), which knows what it should be.
struct actor_param {
  std::string key;
  std::string value;
  origin where;
};

// One entry of `actors:`: spawned by registered type, published by name.
struct actor_spec {
  std::string type;
  std::string name;
  std::vector<actor_param> params;
  origin where;
};

struct settings {
  node_settings node;
  cluster_settings cluster;
  channel_settings channel;
  memory_settings memory;
  runtime_settings runtime;
  logging_settings logging;
  std::vector<actor_spec> actors;
};

const char* to_string(fabric_kind value);
const char* to_string(scheduler_policy value);
const char* to_string(log_level value);
const char* to_string(log_format value);
const char* to_string(memory_provider value);
const char* to_string(encryption value);

}  // namespace riomesh::config
