#include "cm_support.hpp"

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace riomesh::channels::verbs::detail {

std::string sys_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

void set_nonblocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

rdma_cm_event* next_event(rdma_event_channel* ch, int timeout_ms) {
  pollfd p{ch->fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) != 1)
    return nullptr;
  rdma_cm_event* ev = nullptr;
  return rdma_get_cm_event(ch, &ev) == 0 ? ev : nullptr;
}

bool expect_event(rdma_event_channel* ch, rdma_cm_event_type expected, int timeout_ms,
                  std::string& error, std::vector<unsigned char>* private_data) {
  rdma_cm_event* ev = next_event(ch, timeout_ms);
  if (!ev) {
    error = std::string{"timed out waiting for "} + rdma_event_str(expected);
    return false;
  }
  bool ok = ev->event == expected && ev->status == 0;
  if (!ok)
    error = std::string{rdma_event_str(ev->event)} + " (status " + std::to_string(ev->status) +
            ") instead of " + rdma_event_str(expected);
  if (ok && private_data && ev->param.conn.private_data)
    private_data->assign(static_cast<const unsigned char*>(ev->param.conn.private_data),
                         static_cast<const unsigned char*>(ev->param.conn.private_data) +
                             ev->param.conn.private_data_len);
  rdma_ack_cm_event(ev);
  return ok;
}

bool set_ack_timeout(rdma_cm_id* id, std::uint8_t exponent, std::string& error) {
  if (exponent == 0 || rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &exponent,
                                       sizeof exponent) == 0)
    return true;
  error = sys_error("rdma_cm cannot set the ACK timeout (4.096 us << " + std::to_string(exponent) +
                    ")");
  return false;
}

rdma_conn_param conn_param(const std::array<unsigned char, wire::conn_data_size>& data,
                           std::uint32_t read_depth) {
  rdma_conn_param p{};
  p.private_data = data.data();
  p.private_data_len = static_cast<std::uint8_t>(data.size());
  // The same depth both ways (rsockets: 0, no RDMA READ), infinite
  // receiver-not-ready retry.
  p.responder_resources = static_cast<std::uint8_t>(std::min<std::uint32_t>(read_depth, 255));
  p.initiator_depth = p.responder_resources;
  p.flow_control = 1;
  p.retry_count = 7;
  p.rnr_retry_count = 7;
  return p;
}

}  // namespace riomesh::channels::verbs::detail
