// Reading a CAF message as CAF 0.17's message::save wrote it, with the
// lookups by type name done once per signature instead of once per
// element of every message.
//
// CAF writes a message as an object whose name lists its elements' type
// names ("@<>+@u64+@str"); its loader splits that string and finds each
// name among the system's types, element by element, every time: about a
// thousand instructions for an 8-byte message. A message_signatures keeps,
// per signature, a default value of each element's type, and a message's
// elements are copies of those, loaded from the bytes: the values CAF's
// loader would make (its factory's defaults). The object's start (its
// name) is read in place, where this CAF writes it as expected (checked
// once, against CAF's own bytes), and looked up by a view of it. What it
// does not know is CAF's loader's, so errors read as CAF's.
//
// One per actor system (its types), used by one thread at a time: the
// exchange's, on the I/O thread. Bounded: a peer names the signatures,
// so a signature is kept only once a message of it loaded, only if it is
// short (max_elements, max_name), and only up to max_signatures; others
// are read the slow way.
#pragma once

#include <caf/fwd.hpp>

#include <cstddef>
#include <memory>

namespace riomesh::detail {

class message_signatures {
 public:
  static constexpr std::size_t max_signatures = 64;
  // Longer signatures are read by CAF's loader every time: what is kept
  // stays small (64 of these at most).
  static constexpr std::size_t max_elements = 32, max_name = 1024;

  explicit message_signatures(caf::actor_system& sys);
  ~message_signatures();
  message_signatures(const message_signatures&) = delete;
  message_signatures& operator=(const message_signatures&) = delete;

  // Loads `out` from the `size` bytes at `bytes` as caf::message::load
  // does, in the context `unit` (how handles in it are read); `left`: the
  // bytes after the message.
  caf::error load(caf::execution_unit* unit, const char* bytes, std::size_t size, caf::message& out,
                  std::size_t& left);
  // Signatures known.
  std::size_t size() const;
  // Whether starts are read in place (this CAF writes them as expected);
  // otherwise by CAF's deserializer.
  bool reads_in_place() const;

 private:
  struct table;
  std::unique_ptr<table> known_;
};

}  // namespace riomesh::detail
