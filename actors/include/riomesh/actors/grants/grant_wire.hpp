// The bodies of the two grant envelopes. A holder asks (grant_use: its
// receiver the grant's id, its request id the holder's operation id); the
// owner answers (grant_status, the same request id). Little-endian, fixed
// sizes, every field checked before it is believed.
#pragma once

#include <riomesh/actors/grants/grant_table.hpp>
#include <riomesh/grant.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace riomesh::actors {

// u8 op, u64 offset, u64 length, u64 destination (a read: where in the
// holder's maps the bytes go; a write: 0; fetch-and-add: the addend;
// compare-and-swap: the value expected), and for compare-and-swap only
// u64 the value to swap in.
// A write or an atomic may carry its `then` message after that: u64 the
// owner's actor it goes to (non-zero), then the message's serialized body
// (message_codec.hpp; its sender is the envelope's). The owner delivers it
// on its verdict, if that is ok: the bytes are in place by then.
// The op's top bit (done_flag) marks a read or an atomic the holder did
// itself, one-sided, ahead of this notice on the same connection: the
// owner only judges it, delivers its `then` (a read's may ride too), and
// answers. The next bit (carried_flag) marks a write whose bytes come in
// the envelope itself, as its one buffer: a use-once grant's, which the
// owner never maps for the holder and writes into place itself, after
// judging the use, so that it is used once and no more.
struct grant_request {
  grant_request(grant_op o = grant_op::write, std::uint64_t off = 0, std::uint64_t len = 0,
                std::uint64_t dest = 0, std::uint64_t sw = 0)
      : op(o), offset(off), length(len), destination(dest), swap(sw) {}
  grant_op op = grant_op::write;
  std::uint64_t offset = 0, length = 0, destination = 0, swap = 0;
  bool done = false;          // done one-sided by the holder: a notice
  bool carried = false;       // a write whose bytes are the envelope's buffer
  std::uint64_t then_to = 0;  // 0: no `then` rides on it
  std::vector<unsigned char> then_body;
};
constexpr std::size_t grant_request_size = 25;
constexpr std::uint8_t done_flag = 0x80;
constexpr std::uint8_t carried_flag = 0x40;
constexpr std::size_t grant_swap_size = 33;

// u8 status, then the detail as text (the owner's words: printable only
// once escaped). An atomic's old value goes in the envelope's receiver
// field, which an answer has no other use for.
struct grant_answer {
  grant_status st = grant_status::ok;
  std::string detail;
};
constexpr std::size_t max_grant_detail = 512;

std::vector<unsigned char> encode(const grant_request& r);
std::optional<grant_request> decode_grant_request(const std::vector<unsigned char>& body,
                                                  std::string& error);
std::vector<unsigned char> encode(const grant_answer& a);
std::optional<grant_answer> decode_grant_answer(const std::vector<unsigned char>& body,
                                                std::string& error);

}  // namespace riomesh::actors
