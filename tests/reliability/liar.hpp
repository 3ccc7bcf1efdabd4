// A hostile riomesh peer: it connects and authenticates as a node would,
// then says what no node ever would, to see the victim cut it off alone.
// Envelope lies go through the channel's stream on either fabric; verbs
// lies (verbs_liar.hpp) bypass our own engine and post to the queue pair.
#pragma once

#include <riomesh/actors/connection/session_hello.hpp>
#include <riomesh/actors/envelope/envelope.hpp>
#include <riomesh/actors/envelope/envelope_decoder.hpp>
#include <riomesh/channels/channel.hpp>
#include <riomesh/config/settings.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace riomesh::test {

class liar {
 public:
  // Connects to `to` with `like`'s fabric and secret, and finishes the
  // session setup (unless told not to: then it never says a word); throws
  // std::runtime_error saying which step failed.
  // `identity`: the identity block its hello claims (none: a tool's).
  liar(const std::string& name, const config::endpoint& to, const config::settings& like,
       bool with_session = true, const actors::node_identity& identity = {});
  ~liar();
  liar(const liar&) = delete;
  liar& operator=(const liar&) = delete;

  channels::channel& channel() { return *ch_; }
  // Writes all of `bytes` into the stream (within 10 s, or throws).
  void say(const std::vector<unsigned char>& bytes);
  // Asks the victim for the id of its actor published as `name` (0: none),
  // as a node's directory would; throws after 10 s without an answer.
  std::uint64_t resolve(const std::string& name);
  // The victim's next envelope of `kind` (others are skipped); throws
  // after `limit`.
  actors::envelope hear(actors::envelope_kind kind,
                        std::chrono::milliseconds limit = std::chrono::seconds(10));
  // Runs the channel until the victim has closed it; false after `limit`.
  bool wait_closed(std::chrono::milliseconds limit);
  // One round of the channel's progress, waiting up to `ms` for its fd.
  void run_once(int ms);

 private:
  std::unique_ptr<channels::channel> ch_;
  std::vector<actors::envelope> heard_;  // read while looking for another kind
  actors::envelope_decoder in_{{1 << 20, 1 << 30, 1 << 20, 256}};
};

// Envelope bytes no riomesh node sends (envelope.hpp's layout), each with
// the words the victim's reason must contain.
struct envelope_lie {
  std::string what, expected_reason;
  std::vector<unsigned char> bytes;
};
std::vector<envelope_lie> envelope_lies(std::uint64_t victim_arena);

}  // namespace riomesh::test
