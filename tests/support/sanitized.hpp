// Whether this build runs under AddressSanitizer: its quarantine keeps
// freed memory resident, so resident-memory bounds measure ASan there, not
// riomesh, and are only reported.
#pragma once

namespace riomesh::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif
#else
inline constexpr bool sanitized = false;
#endif

}  // namespace riomesh::test
