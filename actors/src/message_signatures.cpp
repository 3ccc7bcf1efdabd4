#include <riomesh/message_signatures.hpp>

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/detail/dynamic_message_data.hpp>
#include <caf/make_counted.hpp>
#include <caf/message.hpp>
#include <caf/serializer_impl.hpp>
#include <caf/type_erased_value.hpp>
#include <caf/uniform_type_info_map.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace riomesh::detail {

namespace {

// The start of an object as CAF's binary serializer writes it: a u16 type
// number, high byte first (0: named), the name's length in 7-bit groups,
// low group first, and the name's bytes. Read here in place, no string
// made; `at`: the bytes it took.
bool read_object_start(const unsigned char* p, std::size_t n, std::string_view& name,
                       std::size_t& at) {
  if (n < 3 || p[0] != 0 || p[1] != 0)
    return false;
  std::size_t length = 0;
  at = 2;
  for (unsigned shift = 0;; shift += 7) {
    if (at == n || shift > 28)
      return false;
    auto byte = p[at++];
    length |= static_cast<std::size_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0)
      break;
  }
  if (length > n - at)
    return false;
  name = std::string_view{reinterpret_cast<const char*>(p + at), length};
  at += length;
  return true;
}

// Whether read_object_start reads what this CAF writes: checked once, on a
// short name and on one whose length takes two groups. Otherwise CAF's
// deserializer reads every start.
bool starts_read_in_place(caf::actor_system& sys) {
  for (std::size_t size : {8, 200}) {
    std::string name(size, 'n');
    std::vector<unsigned char> bytes;
    caf::serializer_impl<std::vector<unsigned char>> sink{sys.dummy_execution_unit(), bytes};
    std::uint16_t zero = 0;
    std::string_view read;
    std::size_t at = 0;
    if (sink.begin_object(zero, name) || !read_object_start(bytes.data(), bytes.size(), read, at) ||
        read != name || at != bytes.size())
      return false;
  }
  return true;
}

}  // namespace

struct message_signatures::table {
  const caf::uniform_type_info_map& types;
  bool in_place;  // starts_read_in_place
  using values = std::vector<caf::type_erased_value_ptr>;
  // By the whole name: a default value per element, in order. Looked up
  // by a view of the bytes (std::less<>).
  std::map<std::string, values, std::less<>> defaults;

  // The defaults for `name` ("@<>+T1+T2..."), into `out`; false if a type
  // is unknown, the name malformed, or longer than a signature worth
  // keeping (a peer chooses it: CAF's loader, which keeps nothing, reads
  // those).
  bool learn(const std::string& name, values& out) const {
    constexpr std::size_t prefix = 4;  // "@<>+"
    if (name.size() <= prefix || name.size() > max_name || name.compare(0, prefix, "@<>+") != 0 ||
        static_cast<std::size_t>(std::count(name.begin(), name.end(), '+')) > max_elements)
      return false;
    for (std::size_t at = prefix;;) {
      auto end = name.find('+', at);
      auto value = types.make_value(name.substr(at, end == std::string::npos ? end : end - at));
      if (!value || out.size() == max_elements)
        return false;
      out.push_back(std::move(value));
      if (end == std::string::npos)
        return true;
      at = end + 1;
    }
  }
};

message_signatures::message_signatures(caf::actor_system& sys)
    : known_(new table{sys.types(), starts_read_in_place(sys), {}}) {}

message_signatures::~message_signatures() = default;

std::size_t message_signatures::size() const {
  return known_->defaults.size();
}

bool message_signatures::reads_in_place() const {
  return known_->in_place;
}

caf::error message_signatures::load(caf::execution_unit* unit, const char* bytes, std::size_t size,
                                    caf::message& out, std::size_t& left) {
  auto by_caf = [&] {
    caf::binary_deserializer source{unit, bytes, size};
    auto err = out.load(source);
    left = source.remaining();
    return err;
  };
  if (unit == nullptr)
    return by_caf();
  std::string spelled;  // the name, where CAF's deserializer read it
  std::string_view name;
  std::size_t at = 0;
  if (known_->in_place) {
    if (!read_object_start(reinterpret_cast<const unsigned char*>(bytes), size, name, at))
      return by_caf();
  } else {
    caf::binary_deserializer start{unit, bytes, size};
    std::uint16_t zero = 0;
    if (start.begin_object(zero, spelled) || zero != 0)
      return by_caf();
    name = spelled;
    at = size - start.remaining();
  }
  // A known signature, or one learned now and kept once a message of it
  // loaded (there is room, and it is no malformed name).
  table::values learned;
  const table::values* values = nullptr;
  if (auto it = known_->defaults.find(name); it != known_->defaults.end())
    values = &it->second;
  else if (known_->defaults.size() < max_signatures && known_->learn(std::string{name}, learned))
    values = &learned;
  else
    return by_caf();
  caf::binary_deserializer source{unit, bytes + at, size - at};
  auto data = caf::make_counted<caf::detail::dynamic_message_data>();
  for (const auto& d : *values) {
    auto value = d->copy();
    if (auto err = value->load(source))
      return err;
    data->append(std::move(value));
  }
  if (auto err = source.end_object())
    return err;
  if (values == &learned)
    known_->defaults.emplace(std::string{name}, std::move(learned));
  out = caf::message{caf::message::data_ptr{std::move(data)}};
  left = source.remaining();
  return caf::none;
}

}  // namespace riomesh::detail
