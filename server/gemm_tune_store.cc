// GemmTuneStore; see gemm_tune_store.h.
#include "server/gemm_tune_store.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace tccd::server {
namespace {

absl::Status ValidateIdentity(const std::string& gpu_name, int32_t sm, int64_t cublaslt_version) {
  if (gpu_name.empty() || gpu_name.size() > kMaxGemmTuneNameBytes)
    return absl::InvalidArgumentError(
        absl::StrCat("gemm tunes: gpu_name must be 1 to ", kMaxGemmTuneNameBytes, " bytes"));
  if (sm < 10 || sm > 1000)
    return absl::InvalidArgumentError(absl::StrCat("gemm tunes: sm ", sm, " is not a compute "
                                                   "capability (major * 10 + minor)"));
  if (cublaslt_version <= 0)
    return absl::InvalidArgumentError("gemm tunes: cublaslt_version must be positive");
  return absl::OkStatus();
}

std::vector<uint64_t> GemmWords(const v1::GemmTuneEntry& entry) {
  return {entry.gemm().begin(), entry.gemm().end()};
}

}  // namespace

std::string GemmTuneRow(const std::string& gpu_name, int32_t sm, int64_t cublaslt_version) {
  // 1: the first table layout. The NUL separators keep names apart ("a" + "1" vs "a1").
  return cache::Sha256Hex(absl::StrCat("tccd-gemm-tunes/1\n", gpu_name, std::string(1, '\0'), sm,
                                       std::string(1, '\0'), cublaslt_version));
}

absl::Status ValidateGemmTunes(const v1::GemmTuneTable& table) {
  RETURN_IF_ERROR(ValidateIdentity(table.gpu_name(), table.sm(), table.cublaslt_version()));
  if (table.entries_size() > kMaxGemmTunesPerPut)
    return absl::InvalidArgumentError(absl::StrCat("gemm tunes: a put carries at most ",
                                                   kMaxGemmTunesPerPut, " entries, not ",
                                                   table.entries_size()));
  for (int i = 0; i < table.entries_size(); ++i) {
    const v1::GemmTuneEntry& e = table.entries(i);
    if (e.gemm_size() != kGemmTuneKeyWords)
      return absl::InvalidArgumentError(absl::StrCat("gemm tunes: entry ", i, " has ",
                                                     e.gemm_size(), " gemm words, not ",
                                                     kGemmTuneKeyWords));
    if (e.algo_size() != kGemmTuneAlgoWords)
      return absl::InvalidArgumentError(absl::StrCat("gemm tunes: entry ", i, " has ",
                                                     e.algo_size(), " algo words, not ",
                                                     kGemmTuneAlgoWords));
    if (e.workspace_bytes() > kMaxGemmTuneWorkspaceBytes)
      return absl::InvalidArgumentError(absl::StrCat("gemm tunes: entry ", i, " needs ",
                                                     e.workspace_bytes(),
                                                     " workspace bytes; at most ",
                                                     kMaxGemmTuneWorkspaceBytes));
    // m, n, k and batch (words 0, 1, 2, 6) of a tuned matmul are positive.
    for (int w : {0, 1, 2, 6})
      if (e.gemm(w) == 0 || e.gemm(w) > (uint64_t{1} << 40))
        return absl::InvalidArgumentError(absl::StrCat("gemm tunes: entry ", i, " has size word ",
                                                       w, " = ", e.gemm(w), " (not a matmul's)"));
    if (!(e.chosen_us() >= 0.0f) || !(e.heuristic_us() >= 0.0f))
      return absl::InvalidArgumentError(
          absl::StrCat("gemm tunes: entry ", i, " has a negative or NaN timing"));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::GemmTuneTable> GemmTuneStore::Put(const v1::GemmTuneTable& table,
                                                     int64_t now_unix_ms) {
  RETURN_IF_ERROR(ValidateGemmTunes(table));
  const std::string row = GemmTuneRow(table.gpu_name(), table.sm(), table.cublaslt_version());
  absl::MutexLock lock(&put_mu_);
  absl::StatusOr<v1::GemmTuneTable> stored = store_->GetGemmTunes(row);
  v1::GemmTuneTable merged;
  if (stored.ok()) {
    merged = *std::move(stored);
  } else if (absl::IsDataLoss(stored.status())) {
    // An unreadable row cannot be merged; this put starts the table over (processes that
    // loaded the lost choices keep them; later ones take what is stored from now on).
    spdlog::warn("gemm tunes: {}; starting it over", std::string(stored.status().message()));
  } else if (!absl::IsNotFound(stored.status())) {
    return stored.status();
  }
  // By gemm words: the stored entries first, so they stay (first writer wins); within one put,
  // the first entry of a gemm.
  std::map<std::vector<uint64_t>, v1::GemmTuneEntry> entries;
  for (const v1::GemmTuneEntry& e : merged.entries()) entries.emplace(GemmWords(e), e);
  for (const v1::GemmTuneEntry& e : table.entries()) entries.emplace(GemmWords(e), e);
  if (entries.size() > static_cast<size_t>(kMaxGemmTunesPerTable))
    return absl::ResourceExhaustedError(absl::StrCat(
        "the gemm tune table of ", absl::CHexEscape(table.gpu_name()), " sm", table.sm(),
        " would hold ", entries.size(), " entries; at most ", kMaxGemmTunesPerTable));
  merged.set_gpu_name(table.gpu_name());
  merged.set_sm(table.sm());
  merged.set_cublaslt_version(table.cublaslt_version());
  merged.set_puts(merged.puts() + 1);
  merged.set_updated_unix_ms(now_unix_ms);
  merged.clear_entries();
  for (auto& [words, e] : entries) *merged.add_entries() = std::move(e);
  RETURN_IF_ERROR(store_->PutGemmTunes(row, merged));
  return merged;
}

absl::StatusOr<v1::GemmTuneTable> GemmTuneStore::Get(const v1::GemmTuneRequest& request) {
  RETURN_IF_ERROR(ValidateIdentity(request.gpu_name(), request.sm(), request.cublaslt_version()));
  absl::StatusOr<v1::GemmTuneTable> table = store_->GetGemmTunes(
      GemmTuneRow(request.gpu_name(), request.sm(), request.cublaslt_version()));
  if (absl::IsNotFound(table.status()))
    return absl::NotFoundError(absl::StrCat("no gemm tunes for ",
                                            absl::CHexEscape(request.gpu_name()), " sm",
                                            request.sm(), " cuBLASLt ",
                                            request.cublaslt_version()));
  return table;
}

}  // namespace tccd::server
