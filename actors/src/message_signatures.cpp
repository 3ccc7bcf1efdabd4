#include <riomesh/message_signatures.hpp>

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/detail/dynamic_message_data.hpp>
#include <caf/make_counted.hpp>
#include <caf/message.hpp>
#include <caf/type_erased_value.hpp>
#include <caf/uniform_type_info_map.hpp>

#include <string>
#include <unordered_map>
#include <vector>

namespace riomesh::detail {

struct message_signatures::table {
  const caf::uniform_type_info_map& types;
  // By the whole name: a default value per element, in order.
  std::unordered_map<std::string, std::vector<caf::type_erased_value_ptr>> defaults;

  // The defaults for `name` ("@<>+T1+T2..."), or null if a type is unknown,
  // the name malformed, or the table full.
  const std::vector<caf::type_erased_value_ptr>* find(const std::string& name) {
    if (auto it = defaults.find(name); it != defaults.end())
      return &it->second;
    constexpr std::size_t prefix = 4;  // "@<>+"
    if (defaults.size() >= max_signatures || name.size() <= prefix ||
        name.compare(0, prefix, "@<>+") != 0)
      return nullptr;
    std::vector<caf::type_erased_value_ptr> values;
    for (std::size_t at = prefix;;) {
      auto end = name.find('+', at);
      auto value = types.make_value(name.substr(at, end == std::string::npos ? end : end - at));
      if (!value)
        return nullptr;
      values.push_back(std::move(value));
      if (end == std::string::npos)
        break;
      at = end + 1;
    }
    return &defaults.emplace(name, std::move(values)).first->second;
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
  const auto* values = known_->find(name);
  if (values == nullptr)
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
  out = caf::message{caf::message::data_ptr{std::move(data)}};
  left = source.remaining();
  return caf::none;
}

}  // namespace riomesh::detail
