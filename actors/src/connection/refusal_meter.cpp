#include <riomesh/actors/connection/refusal_meter.hpp>

namespace riomesh::actors {

refusal_meter::verdict refusal_meter::note(clock::time_point now) {
  verdict v;
  if (!started_ || now - window_start_ >= limits_.window) {
    v.unlogged = unlogged_;
    window_start_ = now;
    in_window_ = unlogged_ = 0;
    started_ = true;
  }
  ++total_;
  ++in_window_;
  v.log = in_window_ <= limits_.logged;
  if (!v.log) {
    v.first_unlogged = unlogged_ == 0;
    ++unlogged_;
  }
  v.cut = in_window_ > limits_.cut_after;
  return v;
}

}  // namespace riomesh::actors
