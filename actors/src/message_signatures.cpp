#include <riomesh/message_signatures.hpp>

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/detail/dynamic_message_data.hpp>
#include <caf/make_counted.hpp>
#include <caf/message.hpp>
#include <caf/type_erased_value.hpp>
#include <caf/uniform_type_info_map.hpp>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

namespace riomesh::detail {

struct message_signatures::table {
  const caf::uniform_type_info_map& types;
  using values = std::vector<caf::type_erased_value_ptr>;
  // By the whole name: a default value per element, in order.
  std::unordered_map<std::string, values> defaults;

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
    : known_(new table{sys.types(), {}}) {}

message_signatures::~message_signatures() = default;

std::size_t message_signatures::size() const {
  return known_->defaults.size();
}

caf::error message_signatures::load(caf::execution_unit* unit, const char* bytes, std::size_t size,
                                    caf::message& out, std::size_t& left) {
  auto by_caf = [&] {
    caf::binary_deserializer source{unit, bytes, size};
    auto err = out.load(source);
    left = source.remaining();
    return err;
  };
  caf::binary_deserializer source{unit, bytes, size};
  std::uint16_t zero = 0;
  std::string name;
  if (unit == nullptr || source.begin_object(zero, name) || zero != 0)
    return by_caf();
  // A known signature, or one learned now and kept once a message of it
  // loaded (there is room, and it is no malformed name).
  table::values learned;
  const table::values* values = nullptr;
  if (auto it = known_->defaults.find(name); it != known_->defaults.end())
    values = &it->second;
  else if (known_->defaults.size() < max_signatures && known_->learn(name, learned))
    values = &learned;
  else
    return by_caf();
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
    known_->defaults.emplace(name, std::move(learned));
  out = caf::message{caf::message::data_ptr{std::move(data)}};
  left = source.remaining();
  return caf::none;
}

}  // namespace riomesh::detail
