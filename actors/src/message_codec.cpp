#include <riomesh/buffer_inspect.hpp>
#include <riomesh/message_codec.hpp>
#include <riomesh/message_signatures.hpp>
#include <riomesh/signature_prefixes.hpp>

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/message.hpp>
#include <caf/sec.hpp>
#include <caf/serializer_impl.hpp>

#include <algorithm>

namespace riomesh {
namespace detail {
namespace {

// What the codec running on this thread wants done with buffers. CAF's
// serializers are final and carry no context of ours; serialization is
// synchronous, so the codec sets this around its own calls only.
struct codec_context {
  std::size_t threshold = 0;
  std::vector<buffer>* placed_out = nullptr;  // encoding
  std::size_t placed_count = 0;               // decoding
  const std::function<buffer(std::size_t)>* placed_in = nullptr;
  std::vector<bool> used;
  std::size_t body_size = 0;
  std::uint64_t copied = 0;  // buffer bytes that went inline, through the body
  // Encoding: the serializer's bytes, and where inline buffer bytes went.
  const std::vector<unsigned char>* sink_bytes = nullptr;
  std::vector<std::pair<std::size_t, std::size_t>>* opaque = nullptr;
};

thread_local codec_context* current = nullptr;

class scope {
 public:
  explicit scope(codec_context* c) : prev_(current) { current = c; }
  ~scope() { current = prev_; }
  scope(const scope&) = delete;
  scope& operator=(const scope&) = delete;

 private:
  codec_context* prev_;
};

constexpr std::uint8_t inline_bytes = 0;
constexpr std::uint8_t placed = 1;

caf::error fail(std::string what) {
  return caf::make_error(caf::sec::invalid_argument, "riomesh::buffer: " + std::move(what));
}

}  // namespace

caf::error save_buffer(caf::serializer& f, const buffer& x) {
  auto* ctx = current;
  if (ctx && ctx->placed_out && !x.empty() && x.size() >= ctx->threshold) {
    std::uint8_t tag = placed;
    auto index = static_cast<std::uint32_t>(ctx->placed_out->size());
    ctx->placed_out->push_back(x);
    return f(tag, index);
  }
  std::uint8_t tag = inline_bytes;
  std::size_t n = x.size();
  if (ctx)
    ctx->copied += n;
  // A gathered buffer goes inline piece after piece: one sequence of bytes.
  auto bytes = [&]() -> caf::error {
    auto from = ctx && ctx->sink_bytes ? ctx->sink_bytes->size() : 0;
    caf::error err;
    if (!x.gathered()) {
      if (n > 0)
        err = f.apply_raw(n, const_cast<unsigned char*>(x.data()));
    } else {
      for (const auto& p : x.pieces())
        if ((err = f.apply_raw(p.size(), const_cast<unsigned char*>(p.data()))))
          break;
    }
    if (!err && ctx && ctx->opaque && n > 0)
      ctx->opaque->emplace_back(from, ctx->sink_bytes->size());
    return err;
  };
  return caf::error::eval([&] { return f(tag); }, [&] { return f.begin_sequence(n); }, bytes,
                          [&] { return f.end_sequence(); });
}

caf::error load_buffer(caf::deserializer& f, buffer& x) {
  std::uint8_t tag = 0;
  if (auto err = f(tag))
    return err;
  auto* ctx = current;
  if (tag == placed) {
    std::uint32_t index = 0;
    if (auto err = f(index))
      return err;
    if (!ctx || !ctx->placed_in)
      return fail("a placed buffer outside a riomesh connection");
    if (index >= ctx->placed_count)
      return fail("placed buffer " + std::to_string(index) + ", but the envelope lists " +
                  std::to_string(ctx->placed_count));
    if (ctx->used[index])
      return fail("placed buffer " + std::to_string(index) + " used twice");
    ctx->used[index] = true;
    x = (*ctx->placed_in)(index);
    return {};
  }
  if (tag != inline_bytes)
    return fail("unknown encoding " + std::to_string(tag));
  std::size_t n = 0;
  if (auto err = f.begin_sequence(n))
    return err;
  // A lying length must not become a huge allocation.
  if (ctx && n > ctx->body_size)
    return fail("inline length " + std::to_string(n) + " exceeds the message");
  x = buffer::heap(n);
  if (ctx)
    ctx->copied += n;
  if (n > 0)
    if (auto err = f.apply_raw(n, x.data()))
      return err;
  return f.end_sequence();
}

}  // namespace detail

namespace {

// As msg.save(sink), from a kept prefix where there is one.
caf::error save_message(const caf::message& msg, caf::serializer& sink,
                        detail::signature_prefixes* prefixes) {
  const auto* prefix = prefixes ? prefixes->find(msg) : nullptr;
  if (!prefix)
    return msg.save(sink);
  if (auto err = sink.apply_raw(prefix->size(), const_cast<unsigned char*>(prefix->data())))
    return err;
  for (std::size_t i = 0; i < msg.size(); ++i)
    if (auto err = msg.save(i, sink))
      return err;
  return sink.end_object();
}

}  // namespace

bool encode_message(caf::actor_system& sys, const caf::message& msg, std::size_t eager_threshold,
                    encoded_message& out, std::string& error, caf::execution_unit* context,
                    detail::signature_prefixes* prefixes) {
  detail::codec_context ctx;
  ctx.threshold = eager_threshold;
  ctx.placed_out = &out.placed;
  detail::scope s(&ctx);
  // CAF's serializer appends to its vector, growing it: from empty, a
  // small body cost four allocations (counted under callgrind). The
  // thread's scratch vector keeps its room from one message to the next;
  // a message encoded inside another's encoding has a vector of its own.
  using bytes_type = std::vector<unsigned char>;
  thread_local bytes_type scratch;
  thread_local bool scratch_taken = false;
  bytes_type own;
  bool mine = !scratch_taken;
  auto& bytes = mine ? scratch : own;
  bytes.clear();
  if (bytes.capacity() < 256)
    bytes.reserve(256);
  scratch_taken = true;
  struct give_back {
    bool mine;
    ~give_back() {
      if (mine)
        scratch_taken = false;
    }
  } release{mine};
  ctx.sink_bytes = &bytes;
  ctx.opaque = &out.opaque;
  caf::serializer_impl<bytes_type> sink{context ? context : sys.dummy_execution_unit(), bytes};
  // msg.save, not sink(msg): the latter drops the error of an unregistered
  // type and writes nothing (caf-0.17.md §4).
  if (auto err = save_message(msg, sink, prefixes)) {
    error = "cannot encode " + to_string(msg) + ": " + sys.render(err);
    out.placed.clear();
    out.opaque.clear();
    return false;
  }
  // A small body is copied out (an allocation of its size); a large one
  // leaves in the scratch's storage, which costs the scratch an allocation
  // for the next. Swapping always made 8 B one-way messages 7% slower
  // (256-byte bodies in flight instead of 40), copying always cost 4 KiB
  // one-way ones 0.2x raw TCP.
  auto size = bytes.size();
  if (size < 1024) {
    out.body.assign(bytes.begin(), bytes.end());
  } else {
    out.body.swap(bytes);
    bytes.clear();
    if (mine)
      bytes.reserve(std::min<std::size_t>(size, 64 * 1024));
  }
  out.copied = ctx.copied;
  return true;
}

bool decode_message(caf::actor_system& sys, const unsigned char* body, std::size_t size,
                    std::size_t placed_count, const std::function<buffer(std::size_t)>& placed,
                    caf::message& out, std::string& error, std::uint64_t* copied,
                    caf::execution_unit* context, detail::message_signatures* signatures) {
  detail::codec_context ctx;
  ctx.placed_count = placed_count;
  ctx.placed_in = &placed;
  ctx.used.assign(placed_count, false);
  ctx.body_size = size;
  detail::scope s(&ctx);
  caf::message m;
  std::size_t left = 0;
  auto* unit = context ? context : sys.dummy_execution_unit();
  auto* from = reinterpret_cast<const char*>(body);
  caf::error err;
  if (signatures) {
    err = signatures->load(unit, from, size, m, left);
  } else {
    caf::binary_deserializer source{unit, from, size};
    err = m.load(source);
    left = source.remaining();
  }
  if (err) {
    error = "cannot decode the message: " + sys.render(err);
    return false;
  }
  if (left != 0) {
    error = "cannot decode the message: " + std::to_string(left) + " bytes left after it";
    return false;
  }
  for (std::size_t i = 0; i < placed_count; ++i)
    if (!ctx.used[i]) {
      error =
          "placed buffer " + std::to_string(i) + " is listed but the message has no place for it";
      return false;
    }
  out = std::move(m);
  if (copied)
    *copied = ctx.copied;
  return true;
}

}  // namespace riomesh
