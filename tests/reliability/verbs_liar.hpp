// Lies told below our own engine, by posting to the liar's queue pair
// directly: what a buggy or malicious rsocket peer could put on the wire.
// The victim's device refuses some (bad keys, writes outside a map); its
// engine must refuse the rest (credits, DATA lengths, ops).
#pragma once

#include <riomesh/channels/channel.hpp>

#include <string>
#include <vector>

namespace riomesh::test {

enum class verbs_lie {
  bad_key,            // a write into the victim's arena with a wrong rkey
  outside_iomap,      // a write just past the end of the victim's arena
  bogus_credits,      // an SGL update granting far more than the queue
  data_beyond_space,  // DATA longer than the target the victim gave us
  length_mismatch,    // a DATA immediate saying more than the write carried
  unknown_op,         // an immediate with a reserved op
  unknown_ctrl,       // a control message with an unknown code
};
std::vector<verbs_lie> all_verbs_lies();
const char* to_string(verbs_lie lie);
// Words the victim's reason must contain; empty when the device refuses
// the write and the victim can only see the connection fail.
std::string expected_reason(verbs_lie lie);

// Tells `lie` on `ch`, an rdma channel whose session is set up; throws
// std::runtime_error if the victim's map or targets never arrived.
void tell(channels::channel& ch, verbs_lie lie);

}  // namespace riomesh::test
