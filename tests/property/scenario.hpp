// One randomized run of two rsocket engines, drawn from its seed: queue and
// ring sizes, send and receive sizes, maps, riowrites, unmaps, shutdowns,
// polling order, and optionally a cut. Over the simulated fabric the seed
// determines the run exactly; over real verbs the hardware's timing varies.
//
// The two applications exchange a stream of records:
//   'D' len body     stream bytes from a per-direction generator
//   'M' id len off   "I mapped len bytes at offset off for you" (one
//                    buffer, or up to 4 pieces of random byte lengths, each
//                    registered and mapped alone at consecutive offsets:
//                    one offset space, as a grant over gathered memory)
//   'W' id len off s "I riowrote len bytes at off, checksum s" (from one
//                    source or gathered from up to 3 of its byte ranges)
// Where the connection has a read depth, a side also reads back (rioread,
// scattered into up to 3 destinations) random ranges of what it wrote into
// a peer's map, and checks them against its own copy when they land.
//   'F' id           "I am done with your map id"
//   'E'              "I will announce no more maps"
// so every byte of the stream, and every placed byte, is checked by the side
// that receives it, at the moment it reads the record that announces it.
#pragma once

#include <link.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace riomesh::property {

struct limits {
  std::uint64_t max_stream_bytes = 1u << 20;  // per direction, upper bound of the draw
  std::uint64_t min_stream_bytes = 0;         // > 0: big transfers over big enough rings
  bool allow_cut = true;
  bool tiny = false;  // queues of 4 and 8, rings of 64 and 256 bytes, both sides sending hard

  // Several MiB per direction over big enough rings, no cut.
  static limits large() {
    limits l;
    l.min_stream_bytes = 2u << 20;
    l.max_stream_bytes = 8u << 20;
    l.allow_cut = false;
    return l;
  }
  // Tiny queues and rings, both sides sending at full rate.
  static limits tiny_queues() {
    limits l;
    l.tiny = true;
    l.max_stream_bytes = 64u << 10;
    return l;
  }
};

struct outcome {
  bool ok = true;
  std::string failure;  // what went wrong, with the seed's configuration
  std::string config;   // the configuration drawn from the seed
  std::uint64_t iterations = 0;
  std::uint64_t stream_bytes = 0;  // both directions, verified
  std::uint64_t placed_bytes = 0;  // riowritten and verified
  std::uint64_t maps = 0;
  std::uint64_t gathered_maps = 0;  // of 2 or more pieces
  std::uint64_t split_writes = 0;   // riowrites that landed across a piece's end
  std::uint64_t read_bytes = 0;     // riowritten, read back by rioread and verified
  bool was_cut = false;
};

// Makes the two joined engines a scenario drives.
using link_factory = std::function<std::unique_ptr<sim::engine_link>(
    const sim::side_config& a, const sim::side_config& b, std::uint64_t seed)>;
std::unique_ptr<sim::engine_link> simulated(const sim::side_config& a, const sim::side_config& b,
                                            std::uint64_t seed);

outcome run_scenario(std::uint64_t seed, const limits& lim = {},
                     const link_factory& make = simulated);

struct totals {
  std::uint64_t runs = 0, cuts = 0, stream = 0, placed = 0, maps = 0, gathered = 0, split = 0,
                read = 0;
  std::string failure;  // the first failing seed, with its replay line; empty if none
};

// Runs seeds [first_seed, first_seed + count), stopping at the first failure;
// RIOMESH_SEED=<seed> in the environment runs just that one instead.
void run_many(std::uint64_t first_seed, std::uint64_t count, const limits& lim,
              const link_factory& make, totals& t);

}  // namespace riomesh::property
