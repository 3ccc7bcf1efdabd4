#include <riomesh/actors/reach/system_message.hpp>

#include <caf/atom.hpp>
#include <caf/downstream_msg.hpp>
#include <caf/error.hpp>
#include <caf/message.hpp>
#include <caf/system_messages.hpp>
#include <caf/type_nr.hpp>
#include <caf/upstream_msg.hpp>

namespace riomesh::actors {

const char* system_message_kind(const caf::message& m) {
  if (m.empty())
    return nullptr;
  // Each kind is one of CAF's built-in types, known by its number: a
  // user's type (number 0), what nearly every message starts with, is
  // told apart by one look, not by a comparison per kind.
  auto nr = m.type(0).first;
  if (nr == 0)
    return nullptr;
  if (nr == caf::type_nr<caf::exit_msg>::value)
    return "exit_msg";
  if (nr == caf::type_nr<caf::down_msg>::value)
    return "down_msg";
  if (nr == caf::type_nr<caf::group_down_msg>::value)
    return "group_down_msg";
  if (nr == caf::type_nr<caf::timeout_msg>::value)
    return "timeout_msg";
  if (nr == caf::type_nr<caf::open_stream_msg>::value)
    return "open_stream_msg";
  if (nr == caf::type_nr<caf::upstream_msg>::value)
    return "upstream_msg";
  if (nr == caf::type_nr<caf::downstream_msg>::value)
    return "downstream_msg";
  if (nr == caf::type_nr<caf::error>::value && m.size() == 1)
    return "error";
  if (nr == caf::type_nr<caf::atom_value>::value &&
      m.get_as<caf::atom_value>(0) == caf::sys_atom::value)
    return "sys_atom";
  return nullptr;
}

}  // namespace riomesh::actors
