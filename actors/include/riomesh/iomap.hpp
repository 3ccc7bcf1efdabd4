// The iomap manager's interface, for actors that expose memory to a peer
// or lend it without blocking (runtime::iomap_manager(); the runtime's
// expose, unexpose, make_grant and revoke ask it and wait):
//   (expose_atom, node, buffer) -> the offset node writes to
//   (unexpose_atom, node, offset) -> whether a map was taken down
//   (grant_atom, node, buffer, rights, once) -> the grant (riomesh/grant.hpp)
//   (revoke_atom, grant id) -> whether it was still given; once answered,
//     no use of it succeeds and its map is down
#pragma once

#include <riomesh/atoms.hpp>
#include <riomesh/buffer.hpp>
#include <riomesh/buffer_inspect.hpp>
#include <riomesh/grant.hpp>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>

namespace riomesh {

using iomap_manager_actor = caf::typed_actor<
    caf::replies_to<expose_atom, std::string, buffer>::with<std::uint64_t>,
    caf::replies_to<unexpose_atom, std::string, std::uint64_t>::with<bool>,
    caf::replies_to<grant_atom, std::string, buffer, std::uint8_t, bool>::with<grant>,
    caf::replies_to<revoke_atom, std::uint64_t>::with<bool>>;

}  // namespace riomesh
