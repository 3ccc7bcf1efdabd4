#include <riomesh/signature_prefixes.hpp>

#include <caf/actor_system.hpp>
#include <caf/message.hpp>
#include <caf/serializer_impl.hpp>
#include <caf/uniform_type_info_map.hpp>

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <string>

namespace riomesh::detail {

// A message's element types, read once per message (each a virtual call).
struct signature_prefixes::element_types {
  std::array<caf::rtti_pair, max_elements> of;
  std::size_t count = 0;

  explicit element_types(const caf::message& msg) : count(msg.size()) {
    for (std::size_t i = 0; i < count; ++i)
      of[i] = msg.type(i);
  }
  std::size_t hash() const {
    std::size_t h = count;
    for (std::size_t i = 0; i < count; ++i)
      h = h * 1000003u ^ of[i].first ^ std::hash<const void*>{}(of[i].second);
    return h;
  }
};

struct signature_prefixes::entry {
  std::vector<caf::rtti_pair> types;
  std::vector<unsigned char> prefix;

  bool matches(const element_types& t) const {
    return std::equal(types.begin(), types.end(), t.of.begin(), t.of.begin() + t.count);
  }
};

signature_prefixes::signature_prefixes(caf::actor_system& sys) : sys_(sys) {}

signature_prefixes::~signature_prefixes() {
  for (auto& s : slots_)
    delete s.load(std::memory_order_relaxed);
}

const std::vector<unsigned char>* signature_prefixes::find(const caf::message& msg) {
  if (msg.empty() || msg.size() > max_elements)
    return nullptr;
  element_types types{msg};
  const entry* made = nullptr;
  // Ours, made in vain: another thread kept the same signature first.
  auto drop_made = [&] {
    if (made != nullptr) {
      delete made;
      kept_.fetch_sub(1, std::memory_order_relaxed);
    }
  };
  for (std::size_t i = types.hash() % slot_count, probes = 0; probes < slot_count;
       i = (i + 1) % slot_count, ++probes) {
    auto* e = slots_[i].load(std::memory_order_acquire);
    if (e == nullptr) {
      if (made == nullptr && (made = make(types)) == nullptr)
        return nullptr;
      // Another thread may fill the slot first: then look at what it put.
      if (slots_[i].compare_exchange_strong(e, made, std::memory_order_acq_rel))
        return &made->prefix;
    }
    if (e->matches(types)) {
      drop_made();
      return &e->prefix;
    }
  }
  drop_made();  // never: there are twice as many slots as signatures kept
  return nullptr;
}

// What CAF's message::save names the object, written by CAF's serializer;
// null where CAF's save has to run (to report an unknown type) or the
// table is full.
const signature_prefixes::entry* signature_prefixes::make(const element_types& t) {
  // Full: no name built for nothing (CAF's save builds it again).
  if (kept_.load(std::memory_order_relaxed) >= max_signatures)
    return nullptr;
  auto& types = sys_.types();
  std::string name = "@<>";
  auto e = std::make_unique<entry>();
  for (std::size_t i = 0; i < t.count; ++i) {
    const auto& portable = types.portable_name(t.of[i]);
    if (portable == types.default_type_name())
      return nullptr;
    name += '+';
    name += portable;
  }
  e->types.assign(t.of.begin(), t.of.begin() + t.count);
  if (kept_.fetch_add(1, std::memory_order_relaxed) >= max_signatures) {
    kept_.fetch_sub(1, std::memory_order_relaxed);
    return nullptr;
  }
  caf::serializer_impl<std::vector<unsigned char>> sink{sys_.dummy_execution_unit(), e->prefix};
  std::uint16_t zero = 0;
  if (sink.begin_object(zero, name)) {
    kept_.fetch_sub(1, std::memory_order_relaxed);
    return nullptr;
  }
  return e.release();
}

}  // namespace riomesh::detail
