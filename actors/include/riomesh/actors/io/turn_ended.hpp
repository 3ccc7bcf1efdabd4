// What an execution unit on the I/O thread does after an actor's turn.
#pragma once

#include <caf/resumable.hpp>

namespace riomesh::actors {

// True if `job` wants another turn (it keeps its reference); otherwise the
// unit's reference to it goes, as CAF's own units let go of an actor that
// waits for its next message or is done.
inline bool wants_another_turn(caf::resumable* job, caf::resumable::resume_result r) {
  if (r == caf::resumable::resume_later)
    return true;
  intrusive_ptr_release(job);
  return false;
}

}  // namespace riomesh::actors
