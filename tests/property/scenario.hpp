// One randomized run of two rsocket engines over the simulated fabric, fully
// determined by its seed: queue and ring sizes, send and receive sizes, maps,
// riowrites, unmaps, shutdowns, polling order, and optionally a cut.
//
// The two applications exchange a stream of records:
//   'D' len body     stream bytes from a per-direction generator
//   'M' id len off   "I mapped len bytes at offset off for you"
//   'W' id len off s "I riowrote len bytes at off, checksum s"
//   'F' id           "I am done with your map id"
//   'E'              "I will announce no more maps"
// so every byte of the stream, and every placed byte, is checked by the side
// that receives it, at the moment it reads the record that announces it.
#pragma once

#include <cstdint>
#include <string>

namespace riomesh::property {

struct limits {
  std::uint64_t max_stream_bytes = 1u << 20;  // per direction, upper bound of the draw
  std::uint64_t min_stream_bytes = 0;         // > 0: big transfers over big enough rings
  bool allow_cut = true;
  bool tiny = false;  // queues of 4 and 8, rings of 64 and 256 bytes, both sides sending hard
};

struct outcome {
  bool ok = true;
  std::string failure;  // what went wrong, with the seed's configuration
  std::string config;   // the configuration drawn from the seed
  std::uint64_t iterations = 0;
  std::uint64_t stream_bytes = 0;  // both directions, verified
  std::uint64_t placed_bytes = 0;  // riowritten and verified
  std::uint64_t maps = 0;
  bool was_cut = false;
};

outcome run_scenario(std::uint64_t seed, const limits& lim = {});

}  // namespace riomesh::property
