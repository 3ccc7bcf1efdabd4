// Protocol constants of librdmacm's rsockets, stream sockets, version 1
// (rdma-core v44; unchanged through v64). Names follow the protocol's roles,
// values are the wire's.
#pragma once

#include <cstddef>
#include <cstdint>

namespace riomesh::wire {

inline constexpr std::uint8_t protocol_version = 1;

// rs_conn_data.flags
inline constexpr std::uint8_t flag_big_endian = 0x01;  // sender's host is big-endian
inline constexpr std::uint8_t flag_iomap = 0x02;       // iomap slots follow the target SGL
// riomesh's extension, ignored by rsockets: "I count an IOMAP_SGL as a consumed
// message when it arrives". A sender then counts its own IOMAP_SGL against
// credits; toward a plain rsocket (which never returns that credit) it does not.
inline constexpr std::uint8_t flag_iomap_credit = 0x80;

inline constexpr std::uint32_t target_sgl_slots = 2;  // RS_SGL_SIZE
inline constexpr std::size_t sge_size = 16;           // struct rs_sge
inline constexpr std::size_t iomap_entry_size = 24;   // struct rs_iomap
inline constexpr std::size_t conn_data_size = 40;     // struct rs_conn_data

// Offset of iomap slot i in a target buffer list.
inline constexpr std::size_t iomap_slot_offset(std::size_t i) {
  return target_sgl_slots * sge_size + i * iomap_entry_size;
}
inline constexpr std::size_t target_list_size(std::size_t iomap_slots) {
  return iomap_slot_offset(iomap_slots);
}

inline constexpr std::uint32_t first_chunk = 2048;     // RS_OLAP_START_SIZE
inline constexpr std::uint32_t max_transfer = 65536;   // RS_MAX_TRANSFER
inline constexpr std::uint32_t send_low_water = 2048;  // RS_SNDLOWAT
inline constexpr std::uint32_t control_slots = 4;      // RS_QP_CTRL_SIZE
inline constexpr std::uint32_t min_queue = 16;         // RS_QP_MIN_SIZE
inline constexpr std::uint32_t max_queue = 65534;      // RS_QP_MAX_SIZE
inline constexpr std::uint32_t max_iomap_slots = 32512;
inline constexpr std::uint32_t max_data_length = (1u << 29) - 1;  // 29-bit immediate data

}  // namespace riomesh::wire
