// Helpers shared by the rdma channel's setup, connect and accept: errors
// with errno, rdma_cm event waits, the connection parameters rsockets uses.
#pragma once

#include <riomesh/channels/wire/conn_data.hpp>

#include <rdma/rdma_cma.h>

#include <array>
#include <string>
#include <vector>

namespace riomesh::channels::verbs::detail {

// `what`, then strerror(errno).
std::string sys_error(const std::string& what);
void set_nonblocking(int fd);

// Waits for the next connection manager event on `ch`; null on timeout.
rdma_cm_event* next_event(rdma_event_channel* ch, int timeout_ms);

// Waits for `expected`; anything else is an error named in `error`. The
// event's private data is copied to `private_data` if given.
bool expect_event(rdma_event_channel* ch, rdma_cm_event_type expected, int timeout_ms,
                  std::string& error, std::vector<unsigned char>* private_data = nullptr);

// Sets the queue pair's ACK timeout exponent (0: leaves rdma_cm's) on
// `id`, before the connect or accept that takes the queue pair to RTS.
bool set_ack_timeout(rdma_cm_id* id, std::uint8_t exponent, std::string& error);

// Connect / accept parameters carrying our connection data, as rsockets sets them.
rdma_conn_param conn_param(const std::array<unsigned char, wire::conn_data_size>& data,
                           std::uint32_t read_depth);

}  // namespace riomesh::channels::verbs::detail
