// Why a message queued for a peer did not go out, and whom that is told.
//
// Every message through a proxy carries the callback that tells its
// sender. std::function keeps 16 bytes inline and allocates for more; the
// proxy's callback holds 48 (the exchange, the request's wait, sender,
// message id, proxy), so std::function cost an allocation and a free per
// message. failure_callback keeps up to `capacity` bytes inline and only
// larger callables (those that carry strings, all off the message path)
// on the heap.
#pragma once

#include <cstddef>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

namespace riomesh::actors {

enum class send_failure {
  not_mapped,  // a direct write or fetch found no map at the peer
  past_map,    // a fetch that runs past the end of the peer's map
  misfit,      // a fetch the fabric cannot do there (a word not aligned, no reads)
  too_large,   // beyond what the peer accepts (its session terms)
  node_lost,   // the connection ended first
  stopped,     // this node is stopping
};

class failure_callback {
 public:
  static constexpr std::size_t capacity = 56;  // with the table pointer: 64 bytes

  failure_callback() noexcept = default;
  failure_callback(std::nullptr_t) noexcept {}
  template <class F, class T = std::decay_t<F>,
            class = std::enable_if_t<!std::is_same_v<T, failure_callback> &&
                                     !std::is_same_v<T, std::nullptr_t>>>
  failure_callback(F&& f) {
    static_assert(std::is_invocable_v<const T&, send_failure, const std::string&>);
    // As std::function: a null function pointer, or an empty function,
    // makes an empty callback.
    if constexpr (std::is_pointer_v<T> || std::is_member_pointer_v<T> ||
                  std::is_constructible_v<bool, const T&>)
      if (!static_cast<bool>(f))
        return;
    if constexpr (stored_inline<T>) {
      new (&storage_) T(std::forward<F>(f));
      ops_ = &inline_ops<T>;
    } else {
      new (&storage_) T*(new T(std::forward<F>(f)));
      ops_ = &heap_ops<T>;
    }
  }
  failure_callback(const failure_callback& other) {
    if (other.ops_)
      other.ops_->copy(&storage_, &other.storage_);
    ops_ = other.ops_;
  }
  failure_callback(failure_callback&& other) noexcept {
    ops_ = other.ops_;
    if (ops_)
      ops_->move(&storage_, &other.storage_);
    other.ops_ = nullptr;
  }
  failure_callback& operator=(const failure_callback& other) {
    if (this != &other)
      *this = failure_callback(other);
    return *this;
  }
  failure_callback& operator=(failure_callback&& other) noexcept {
    if (this != &other) {
      reset();
      ops_ = other.ops_;
      if (ops_)
        ops_->move(&storage_, &other.storage_);
      other.ops_ = nullptr;
    }
    return *this;
  }
  failure_callback& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  ~failure_callback() { reset(); }

  // Whether a callable of type T is kept without an allocation.
  template <class T>
  static constexpr bool stored_inline =
      sizeof(T) <= capacity &&
      alignof(T) <= alignof(std::max_align_t) && std::is_nothrow_move_constructible_v<T>;

  explicit operator bool() const noexcept { return ops_ != nullptr; }
  void operator()(send_failure f, const std::string& why) const { ops_->call(&storage_, f, why); }

 private:
  struct ops {
    void (*call)(const void*, send_failure, const std::string&);
    void (*copy)(void* to, const void* from);
    void (*move)(void* to, void* from) noexcept;  // leaves `from` destroyed
    void (*destroy)(void*) noexcept;
  };
  template <class T>
  static constexpr ops inline_ops{
      [](const void* s, send_failure f, const std::string& why) {
        (*static_cast<const T*>(s))(f, why);
      },
      [](void* to, const void* from) { new (to) T(*static_cast<const T*>(from)); },
      [](void* to, void* from) noexcept {
        new (to) T(std::move(*static_cast<T*>(from)));
        static_cast<T*>(from)->~T();
      },
      [](void* s) noexcept { static_cast<T*>(s)->~T(); }};
  template <class T>
  static constexpr ops heap_ops{
      [](const void* s, send_failure f, const std::string& why) {
        (**static_cast<T* const*>(s))(f, why);
      },
      [](void* to, const void* from) { new (to) T*(new T(**static_cast<T* const*>(from))); },
      [](void* to, void* from) noexcept { new (to) T*(*static_cast<T**>(from)); },
      [](void* s) noexcept { delete *static_cast<T**>(s); }};

  void reset() noexcept {
    if (ops_)
      ops_->destroy(&storage_);
    ops_ = nullptr;
  }

  alignas(std::max_align_t) mutable unsigned char storage_[capacity];
  const ops* ops_ = nullptr;
};

}  // namespace riomesh::actors
