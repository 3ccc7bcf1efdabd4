#include <riomesh/actors/grants/grant_wire.hpp>
#include <riomesh/channels/wire/byte_order.hpp>

#include <algorithm>

namespace riomesh::actors {

std::vector<unsigned char> encode(const grant_request& r) {
  std::vector<unsigned char> out;
  out.reserve(grant_request_size);
  wire::append_le<std::uint8_t>(
      out, static_cast<std::uint8_t>(static_cast<std::uint8_t>(r.op) | (r.done ? done_flag : 0) |
                                     (r.carried ? carried_flag : 0)));
  wire::append_le<std::uint64_t>(out, r.offset);
  wire::append_le<std::uint64_t>(out, r.length);
  wire::append_le<std::uint64_t>(out, r.destination);
  if (r.op == grant_op::compare_swap)
    wire::append_le<std::uint64_t>(out, r.swap);
  if (r.then_to != 0) {
    wire::append_le<std::uint64_t>(out, r.then_to);
    out.insert(out.end(), r.then_body.begin(), r.then_body.end());
  }
  return out;
}

std::optional<grant_request> decode_grant_request(const std::vector<unsigned char>& body,
                                                  std::string& error) {
  if (body.empty()) {
    error = "an empty grant use";
    return std::nullopt;
  }
  grant_request r;
  r.done = (body[0] & done_flag) != 0;
  r.carried = (body[0] & carried_flag) != 0;
  auto op = static_cast<std::uint8_t>(body[0] & ~(done_flag | carried_flag));
  if (op < static_cast<std::uint8_t>(grant_op::write) ||
      op > static_cast<std::uint8_t>(grant_op::compare_swap)) {
    error = "a grant use of unknown kind " + std::to_string(body[0]);
    return std::nullopt;
  }
  r.op = static_cast<grant_op>(op);
  if (r.done && r.op == grant_op::write) {
    error = "a grant write marked done (only reads and atomics are done one-sided)";
    return std::nullopt;
  }
  if (r.carried && (r.op != grant_op::write)) {
    error = "a grant " + std::string{r.op == grant_op::read ? "read" : "atomic"} +
            " carrying bytes (only writes do)";
    return std::nullopt;
  }
  auto size = r.op == grant_op::compare_swap ? grant_swap_size : grant_request_size;
  if (body.size() < size) {
    error = "a grant use of " + std::to_string(body.size()) + " bytes, not " + std::to_string(size);
    return std::nullopt;
  }
  if (body.size() > size) {
    if (body.size() < size + 8) {
      error = "a grant use of " + std::to_string(body.size()) + " bytes: " + std::to_string(size) +
              ", or at least " + std::to_string(size + 8) + " with a then message";
      return std::nullopt;
    }
    r.then_to = wire::load_le<std::uint64_t>(body.data() + size);
    if (r.then_to == 0) {
      error = "a grant use's then message for actor 0";
      return std::nullopt;
    }
    if (r.op == grant_op::read && !r.done) {
      // Its `then` must follow the bytes, which only the holder sees land.
      error = "a grant read carrying its then message";
      return std::nullopt;
    }
    r.then_body.assign(body.begin() + static_cast<std::ptrdiff_t>(size + 8), body.end());
  }
  r.offset = wire::load_le<std::uint64_t>(body.data() + 1);
  r.length = wire::load_le<std::uint64_t>(body.data() + 9);
  r.destination = wire::load_le<std::uint64_t>(body.data() + 17);
  if (r.op == grant_op::compare_swap)
    r.swap = wire::load_le<std::uint64_t>(body.data() + 25);
  if (r.op == grant_op::write && r.destination != 0) {
    error = "a grant write with a destination";
    return std::nullopt;
  }
  return r;
}

std::vector<unsigned char> encode(const grant_answer& a) {
  auto n = std::min(a.detail.size(), max_grant_detail);
  std::vector<unsigned char> out(1 + n);
  out[0] = static_cast<unsigned char>(a.st);
  std::copy_n(a.detail.data(), n, out.data() + 1);
  return out;
}

std::optional<grant_answer> decode_grant_answer(const std::vector<unsigned char>& body,
                                                std::string& error) {
  if (body.empty() || body.size() > 1 + max_grant_detail) {
    error = "a grant status of " + std::to_string(body.size()) + " bytes (1 to " +
            std::to_string(1 + max_grant_detail) + ")";
    return std::nullopt;
  }
  if (!grant_status_known(body[0])) {
    error = "unknown grant status " + std::to_string(body[0]);
    return std::nullopt;
  }
  grant_answer a;
  a.st = static_cast<grant_status>(body[0]);
  a.detail.assign(body.begin() + 1, body.end());
  return a;
}

}  // namespace riomesh::actors
