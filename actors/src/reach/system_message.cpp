#include <riomesh/actors/reach/system_message.hpp>

#include <caf/atom.hpp>
#include <caf/downstream_msg.hpp>
#include <caf/error.hpp>
#include <caf/message.hpp>
#include <caf/system_messages.hpp>
#include <caf/upstream_msg.hpp>

namespace riomesh::actors {

const char* system_message_kind(const caf::message& m) {
  if (m.empty())
    return nullptr;
  if (m.match_element<caf::exit_msg>(0))
    return "exit_msg";
  if (m.match_element<caf::down_msg>(0))
    return "down_msg";
  if (m.match_element<caf::group_down_msg>(0))
    return "group_down_msg";
  if (m.match_element<caf::timeout_msg>(0))
    return "timeout_msg";
  if (m.match_element<caf::open_stream_msg>(0))
    return "open_stream_msg";
  if (m.match_element<caf::upstream_msg>(0))
    return "upstream_msg";
  if (m.match_element<caf::downstream_msg>(0))
    return "downstream_msg";
  if (m.size() == 1 && m.match_element<caf::error>(0))
    return "error";
  if (m.match_element<caf::atom_value>(0) && m.get_as<caf::atom_value>(0) == caf::sys_atom::value)
    return "sys_atom";
  return nullptr;
}

}  // namespace riomesh::actors
