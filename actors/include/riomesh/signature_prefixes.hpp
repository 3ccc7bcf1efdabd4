// Writing a CAF message as CAF 0.17's message::save writes it, with its
// signature's bytes made once per signature instead of once per message.
//
// CAF writes a message as an object named by its elements' type names
// ("@<>+@u64+@str"): for every message it looks up each element's name,
// builds that string and writes it. Writing the kept bytes instead saved
// about 370 of the 1,150 instructions that encoding an 8-byte message
// took (counted under callgrind). A signature_prefixes keeps,
// per list of element types, the bytes CAF's own serializer wrote for
// that object's start; a message of those types is that prefix, then its
// elements as CAF writes them. The bytes are CAF's, so every reader
// (CAF's loader, message_signatures.hpp) reads them as before.
//
// Shared by every thread that encodes for one actor system (senders run
// on any worker): kept signatures are never changed or dropped until the
// table goes, and a lookup takes no lock. Bounded: the node's own
// programs choose the types, but a table of slots has room for
// max_signatures; messages of others, of more than max_elements elements,
// or of a type the system does not know, are written by CAF's save (which
// reports the unknown type).
#pragma once

#include <caf/fwd.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <vector>

namespace riomesh::detail {

class signature_prefixes {
 public:
  static constexpr std::size_t max_signatures = 64, max_elements = 8;

  explicit signature_prefixes(caf::actor_system& sys);
  ~signature_prefixes();
  signature_prefixes(const signature_prefixes&) = delete;
  signature_prefixes& operator=(const signature_prefixes&) = delete;

  // The bytes CAF's message::save writes before the elements of `msg`
  // (its object's start), or null: `msg` is empty, too long, of a type
  // the system does not know, or of a signature there is no room for.
  const std::vector<unsigned char>* find(const caf::message& msg);
  // Signatures kept, and being made by threads that may find another's
  // (so a race can see the table full a moment early: that message goes
  // by CAF's save).
  std::size_t size() const { return kept_.load(std::memory_order_relaxed); }

 private:
  struct element_types;
  struct entry;
  static constexpr std::size_t slot_count = 2 * max_signatures;
  const entry* make(const element_types& t);

  caf::actor_system& sys_;
  std::array<std::atomic<const entry*>, slot_count> slots_{};
  std::atomic<std::size_t> kept_{0};
};

}  // namespace riomesh::detail
