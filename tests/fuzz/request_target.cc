// CheckRequest; see fuzz_targets.h.
#include <string>

#include "absl/strings/str_cat.h"
#include "codegen/pipeline.h"
#include "codegen/plan_runtime/plan_descriptor.h"
#include "server/request_checks.h"
#include "tccd/v1/tccd.pb.h"
#include "tests/fuzz/fuzz_targets.h"

namespace tccd::fuzz {
namespace {

// INTERNAL (or UNKNOWN: an exception the daemon would have turned into INTERNAL) means a bug of
// ours reached through input.
absl::Status NotInternal(const absl::Status& status, const char* stage) {
  if (status.code() == absl::StatusCode::kInternal || status.code() == absl::StatusCode::kUnknown)
    return absl::InternalError(absl::StrCat(stage, " returned ", status.ToString()));
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckRequest(const uint8_t* data, size_t size) {
  v1::CompileRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return absl::OkStatus();

  absl::Status valid = server::ValidateCompileRequest(request);
  if (absl::Status s = NotInternal(valid, "ValidateCompileRequest"); !s.ok() || !valid.ok())
    return s;

  absl::StatusOr<codegen::Prepared> prepared = codegen::Prepare(server::CompileInputOf(request));
  if (absl::Status s = NotInternal(prepared.status(), "Prepare"); !s.ok() || !prepared.ok())
    return s;
  const std::string key = server::ComputeRequestKey(request, *prepared, "fuzz");
  if (key.size() != 64)
    return absl::InternalError(absl::StrCat("compile key \"", key, "\" is not a SHA-256"));

  absl::StatusOr<codegen::Lowered> lowered = codegen::Lower(*prepared);
  if (absl::Status s = NotInternal(lowered.status(), "Lower"); !s.ok() || !lowered.ok()) return s;
  return NotInternal(codegen::WritePlanDescriptor(lowered->plan).status(), "WritePlanDescriptor");
}

}  // namespace tccd::fuzz
