// The status macros every component shares (base/ is header-only and depends on Abseil alone,
// so a layer that must not link proto/ can use them too).
// RETURN_IF_ERROR / ASSIGN_OR_RETURN for absl::Status and absl::StatusOr.
//
// Debian 12's Abseil (20220623) predates absl/status/status_macros.h, so tccd carries its own.
// Usage:
//   RETURN_IF_ERROR(store->Put(key, value));
//   ASSIGN_OR_RETURN(std::string bytes, store->GetBlob(digest));
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TCCD_CONCAT_INNER_(a, b) a##b
#define TCCD_CONCAT_(a, b) TCCD_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                    \
  do {                                           \
    ::absl::Status tccd_status_ = (expr);        \
    if (!tccd_status_.ok()) return tccd_status_; \
  } while (0)

#define TCCD_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                \
  if (!statusor.ok()) return statusor.status();           \
  lhs = std::move(statusor).value()

#define ASSIGN_OR_RETURN(lhs, rexpr) \
  TCCD_ASSIGN_OR_RETURN_IMPL_(TCCD_CONCAT_(tccd_statusor_, __LINE__), lhs, rexpr)

// An internal invariant that, when broken, fails the current request with INTERNAL rather than
// aborting the daemon (after XLA's TF_RET_CHECK).
#define RET_CHECK(cond)                                                                       \
  do {                                                                                        \
    if (!(cond))                                                                              \
      return ::absl::InternalError(std::string("tccd internal check failed: " #cond " at ") + \
                                   __FILE__ + ":" + std::to_string(__LINE__));                \
  } while (0)
