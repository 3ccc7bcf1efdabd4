#include <riomesh/actors/connection/session_hello.hpp>

#include <riomesh/channels/wire/byte_order.hpp>
#include <riomesh/config/text.hpp>

#include <algorithm>

namespace riomesh::actors {
namespace {

constexpr std::uint8_t hello_kind = 1, refusal_kind = 2, confirm_kind = 3, wrong_node_kind = 4;
constexpr std::uint8_t encrypt_flag = 1, identity_flag = 2, fetches_lent_flag = 4;
constexpr std::size_t max_refusal = 1024;

// Reads fields off a message, failing once for good at the first that
// does not fit.
class reader {
 public:
  explicit reader(const std::vector<unsigned char>& b) : b_(b) {}
  template <class T>
  T get() {
    if (!need(sizeof(T)))
      return 0;
    T v = wire::load_le<T>(b_.data() + at_);
    at_ += sizeof(T);
    return v;
  }
  std::string text(std::size_t n) {
    if (!need(n))
      return {};
    std::string s(b_.begin() + static_cast<long>(at_), b_.begin() + static_cast<long>(at_ + n));
    at_ += n;
    return s;
  }
  bool ok() const { return ok_; }
  bool done() const { return ok_ && at_ == b_.size(); }

 private:
  bool need(std::size_t n) {
    ok_ = ok_ && b_.size() - at_ >= n;
    return ok_;
  }
  const std::vector<unsigned char>& b_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

session_message malformed(std::string what) {
  session_message m;
  m.text = std::move(what);
  return m;
}

}  // namespace

bool is_listen_host(const std::string& host) {
  return host.size() <= 255 && std::all_of(host.begin(), host.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '-' || c == ':' || c == '_' || c == '%';
         });
}

std::vector<unsigned char> encode_hello(const session_hello& h) {
  std::vector<unsigned char> out;
  const auto& t = h.terms;
  bool identity = t.identity.valid();
  out.push_back(hello_kind);
  out.push_back(static_cast<unsigned char>((h.encrypt ? encrypt_flag : 0) |
                                           (identity ? identity_flag : 0) |
                                           (t.fetches_lent ? fetches_lent_flag : 0)));
  out.push_back(static_cast<unsigned char>(h.name.size()));
  out.insert(out.end(), h.name.begin(), h.name.end());
  wire::append_le<std::uint16_t>(out, t.max_buffers);
  wire::append_le<std::uint32_t>(out, t.max_body);
  wire::append_le<std::uint64_t>(out, t.arena_size);
  wire::append_le<std::uint64_t>(out, t.incarnation);
  wire::append_le<std::uint32_t>(out, t.silence_limit_ms);
  wire::append_le<std::uint64_t>(out, t.max_streamed);
  wire::append_le<std::uint32_t>(out, t.max_streams);
  wire::append_le<std::uint64_t>(out, t.arena_first);
  if (identity) {
    const auto& id = t.identity;
    auto host = id.listen_host.substr(0, 255);
    wire::append_le<std::uint32_t>(out, id.process_id);
    out.insert(out.end(), id.host_id.begin(), id.host_id.end());
    wire::append_le<std::uint16_t>(out, id.listen_port);
    out.push_back(static_cast<unsigned char>(host.size()));
    out.insert(out.end(), host.begin(), host.end());
  }
  return out;
}

std::vector<unsigned char> encode_refusal(const std::string& why, bool wrong_node) {
  std::vector<unsigned char> out{wrong_node ? wrong_node_kind : refusal_kind};
  auto text = why.substr(0, max_refusal);
  wire::append_le<std::uint16_t>(out, static_cast<std::uint16_t>(text.size()));
  out.insert(out.end(), text.begin(), text.end());
  return out;
}

std::vector<unsigned char> encode_confirm() {
  return {confirm_kind};
}

session_message decode_session_message(const std::vector<unsigned char>& bytes) {
  reader r(bytes);
  auto kind = r.get<std::uint8_t>();
  session_message m;
  if (kind == confirm_kind) {
    if (!r.done())
      return malformed("a confirmation with " + std::to_string(bytes.size()) + " bytes");
    m.what = session_message::kind::confirm;
    return m;
  }
  if (kind == refusal_kind || kind == wrong_node_kind) {
    m.wrong_node = kind == wrong_node_kind;
    auto n = r.get<std::uint16_t>();
    if (n > max_refusal)
      return malformed("a refusal of " + std::to_string(n) + " bytes");
    m.text = config::printable(r.text(n));
    if (!r.done())
      return malformed("a refusal whose length does not match");
    m.what = session_message::kind::refusal;
    return m;
  }
  if (kind != hello_kind)
    return malformed("a session message of kind " + std::to_string(kind));
  auto flags = r.get<std::uint8_t>();
  if (flags & ~(encrypt_flag | identity_flag | fetches_lent_flag))
    return malformed("unknown hello flags " + std::to_string(flags));
  auto& h = m.hello;
  h.encrypt = flags & encrypt_flag;
  h.name = r.text(r.get<std::uint8_t>());
  if (r.ok() && !config::is_node_name(h.name))
    return malformed("node name '" + config::printable(h.name) +
                     "' is not valid: " + config::node_name_rule);
  auto& t = h.terms;
  t.fetches_lent = flags & fetches_lent_flag;
  t.max_buffers = r.get<std::uint16_t>();
  t.max_body = r.get<std::uint32_t>();
  t.arena_size = r.get<std::uint64_t>();
  t.incarnation = r.get<std::uint64_t>();
  t.silence_limit_ms = r.get<std::uint32_t>();
  t.max_streamed = r.get<std::uint64_t>();
  t.max_streams = r.get<std::uint32_t>();
  t.arena_first = r.get<std::uint64_t>();
  if (r.ok() && t.arena_first > t.arena_size)
    return malformed("a first arena of " + std::to_string(t.arena_first) +
                     " bytes, larger than its arena of " + std::to_string(t.arena_size));
  if (flags & identity_flag) {
    auto& id = t.identity;
    id.process_id = r.get<std::uint32_t>();
    auto host = r.text(20);
    if (r.ok())
      std::copy(host.begin(), host.end(), id.host_id.begin());
    id.listen_port = r.get<std::uint16_t>();
    id.listen_host = r.text(r.get<std::uint8_t>());
    if (r.ok() && !id.valid())
      return malformed("an identity with no host id");
    if (r.ok() && !is_listen_host(id.listen_host))
      return malformed("a listen host that is no address ('" + config::printable(id.listen_host) +
                       "')");
  }
  if (!r.done())
    return malformed("a hello of " + std::to_string(bytes.size()) + " bytes that does not parse");
  m.what = session_message::kind::hello;
  return m;
}

}  // namespace riomesh::actors
