// CheckIrText; see fuzz_targets.h.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/ir/verifier.h"
#include "tests/fuzz/fuzz_targets.h"

namespace tccd::fuzz {

absl::Status CheckIrText(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ir::Graph> graph = ir::ParseGraph(text);
  if (!graph.ok()) {
    if (absl::IsInvalidArgument(graph.status())) return absl::OkStatus();
    return absl::InternalError(
        absl::StrCat("parse error is not INVALID_ARGUMENT: ", graph.status().ToString()));
  }
  // PrintGraph and ParseGraph are inverse (the IR tests rely on it).
  const std::string printed = ir::PrintGraph(*graph);
  absl::StatusOr<ir::Graph> again = ir::ParseGraph(printed);
  if (!again.ok())
    return absl::InternalError(
        absl::StrCat("printed graph does not parse: ", again.status().ToString(), "\n", printed));
  if (std::string reprinted = ir::PrintGraph(*again); reprinted != printed)
    return absl::InternalError(
        absl::StrCat("print(parse(print(g))) != print(g):\n", printed, "\nvs\n", reprinted));

  absl::Status verified = ir::VerifyGraph(*graph);
  if (!verified.ok() && !absl::IsInvalidArgument(verified))
    return absl::InternalError(
        absl::StrCat("verifier error is not INVALID_ARGUMENT: ", verified.ToString()));
  return absl::OkStatus();
}

}  // namespace tccd::fuzz
