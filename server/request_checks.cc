// Request checks, CompileInput and compile key; see request_checks.h.
#include "server/request_checks.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cache/compile_key.h"
#include "cache/store.h"

namespace tccd::server {
namespace {

// Request field limits: generous for any real client, small enough that a bogus
// request cannot make us log or key megabytes.
constexpr size_t kMaxIdBytes = 256;  // job_id, graph_name
constexpr size_t kMaxModeBytes = 64;
constexpr int kMaxExtraOptions = 256;
constexpr size_t kMaxExtraKeyBytes = 256;
constexpr size_t kMaxExtraValueBytes = 64 << 10;

// An unset mode means torch.compile's default; both spellings share one key.
std::string NormalizedMode(const v1::CompileRequest& request) {
  return request.options().mode().empty() ? "default" : request.options().mode();
}

cache::CompileKeyParts KeyParts(const v1::CompileRequest& request,
                                const codegen::Prepared& prepared,
                                const std::string& compiler_fingerprint) {
  cache::CompileKeyParts parts;
  parts.canonical_graph = prepared.canonical_ir;
  // Constant inputs: their bytes change the program, so their digests are part of the graph.
  for (const v1::Constant& c : request.graph().constants())
    absl::StrAppend(&parts.canonical_graph, "constant %a", c.input(),
                    " sha256:", cache::Sha256Hex(c.data()), "\n");
  parts.target = prepared.target_key;
  parts.mode = NormalizedMode(request);
  for (const auto& [key, value] : request.options().extra()) {
    parts.options.emplace(key, value);
  }
  parts.tccd_version = compiler_fingerprint;
  return parts;
}

}  // namespace

std::string ForLog(absl::string_view text, size_t max_chars) {
  if (text.empty()) return "-";
  std::string out;
  for (char c : text.substr(0, max_chars)) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      absl::StrAppend(&out, "\\x", absl::Hex(u, absl::kZeroPad2));
    } else {
      out += c;
    }
  }
  if (text.size() > max_chars) out += "...";
  return out;
}

absl::Status ValidateCompileRequest(const v1::CompileRequest& request) {
  if (!request.has_graph()) {
    return absl::InvalidArgumentError("CompileRequest.graph is missing");
  }
  if (!request.has_target()) {
    return absl::InvalidArgumentError("CompileRequest.target is missing");
  }
  if (request.job_id().size() > kMaxIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("CompileRequest.job_id is longer than ", kMaxIdBytes, " bytes"));
  }
  if (request.progress_id().size() > kMaxIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("CompileRequest.progress_id is longer than ", kMaxIdBytes, " bytes"));
  }
  if (request.graph_name().size() > kMaxIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("CompileRequest.graph_name is longer than ", kMaxIdBytes, " bytes"));
  }
  const v1::CompileOptions& options = request.options();
  if (options.mode().size() > kMaxModeBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("CompileOptions.mode is longer than ", kMaxModeBytes, " bytes"));
  }
  if (options.extra_size() > kMaxExtraOptions) {
    return absl::InvalidArgumentError(absl::StrCat("CompileOptions.extra has ",
                                                   options.extra_size(), " entries; at most ",
                                                   kMaxExtraOptions, " are allowed"));
  }
  for (const auto& [key, value] : options.extra()) {
    if (key.empty() || key.size() > kMaxExtraKeyBytes || value.size() > kMaxExtraValueBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CompileOptions.extra[\"", ForLog(key), "\"]: keys must be 1 to ", kMaxExtraKeyBytes,
          " bytes and values at most ", kMaxExtraValueBytes, " bytes"));
    }
  }
  return absl::OkStatus();
}

namespace {
std::string ExtraOption(const v1::CompileRequest& request, const std::string& key) {
  auto it = request.options().extra().find(key);
  return it == request.options().extra().end() ? std::string() : it->second;
}

// CompileOptions.extra[key] is "1", "True" or "true" (Python's str(True) included).
bool ExtraFlag(const v1::CompileRequest& request, const std::string& key) {
  auto it = request.options().extra().find(key);
  if (it == request.options().extra().end()) return false;
  const std::string& v = it->second;
  return v == "1" || v == "True" || v == "true";
}
}  // namespace

codegen::CompileInput CompileInputOf(const v1::CompileRequest& request) {
  return codegen::CompileInput{
      .graph = &request.graph(),
      .target = &request.target(),
      .mode = NormalizedMode(request),
      .fallback_random = ExtraFlag(request, "fallback_random"),
      .deterministic = ExtraFlag(request, "deterministic_algorithms"),
      .free_layout_outputs = ExtraOption(request, "tccd_free_layout_outputs"),
      .released_inputs = ExtraOption(request, "tccd_released_inputs"),
      .shape_env = &request.shape_env()};
}

std::string ComputeRequestKey(const v1::CompileRequest& request, const codegen::Prepared& prepared,
                              const std::string& compiler_fingerprint) {
  return cache::ComputeCompileKey(KeyParts(request, prepared, compiler_fingerprint));
}

v1::KeyComponents ComputeKeyComponents(const v1::CompileRequest& request,
                                       const codegen::Prepared& prepared,
                                       const std::string& compiler_fingerprint) {
  const cache::CompileKeyParts parts = KeyParts(request, prepared, compiler_fingerprint);
  v1::KeyComponents components;
  // The canonical graph's first line is its signature, "graph(%a0: TYPE, %a1: TYPE) {"
  // (codegen/ir/printer.cc); every node line ends in " -> TYPE(S)". Types go to `inputs`,
  // the rest is `graph`, so a shape change alone reads as an input change.
  absl::string_view text = parts.canonical_graph;
  const size_t header_end = text.find(") {\n");
  absl::string_view header =
      header_end == absl::string_view::npos ? "" : text.substr(0, header_end);
  absl::string_view body = header_end == absl::string_view::npos ? text : text.substr(header_end);
  if (absl::ConsumePrefix(&header, "graph(") && !header.empty()) {
    for (absl::string_view input : absl::StrSplit(header, ", %a")) {
      const size_t colon = input.find(": ");
      components.add_input_types(
          std::string(colon == absl::string_view::npos ? input : input.substr(colon + 2)));
    }
  }
  std::string graph;
  int nodes = 0;
  for (absl::string_view line : absl::StrSplit(body, '\n')) {
    if (absl::StartsWith(line, "  %")) {
      ++nodes;
      const size_t arrow = line.rfind(" -> ");
      if (arrow != absl::string_view::npos) line = line.substr(0, arrow);
    }
    absl::StrAppend(&graph, line, "\n");
  }
  components.set_graph_digest(cache::Sha256Hex(graph));
  components.set_graph_nodes(nodes);
  components.set_inputs_digest(cache::Sha256Hex(absl::StrJoin(components.input_types(), "\n")));
  components.set_target(parts.target);
  components.set_mode(parts.mode);
  std::string options = absl::StrCat(parts.mode.size(), ":", parts.mode);
  for (const auto& [key, value] : parts.options) {
    absl::StrAppend(&options, key.size(), ":", key, value.size(), ":", value);
    (*components.mutable_options())[key] = value;
  }
  components.set_options_digest(cache::Sha256Hex(options));
  components.set_compiler(parts.tccd_version);
  components.set_graph_name(request.graph_name());
  return components;
}

}  // namespace tccd::server
