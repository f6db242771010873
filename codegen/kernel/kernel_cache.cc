// KernelKey: a length-prefixed binary serialisation of the kernel (exact: doubles by their bit
// pattern, so two constants that print alike never share a key), hashed with SHA-256.
#include "codegen/kernel/kernel_cache.h"

#include <array>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"

namespace tccd::codegen {
namespace {

class Serializer {
 public:
  void Int(int64_t v) {
    char bytes[8];
    std::memcpy(bytes, &v, 8);
    out_.append(bytes, 8);
  }
  void Double(double v) {
    int64_t bits = 0;
    std::memcpy(&bits, &v, 8);
    Int(bits);
  }
  void Str(const std::string& s) {
    Int(static_cast<int64_t>(s.size()));
    out_ += s;
  }
  template <typename T>
  void Ints(const std::vector<T>& values) {
    Int(static_cast<int64_t>(values.size()));
    for (const T& v : values) Int(static_cast<int64_t>(v));
  }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

}  // namespace

std::string KernelKey(const PointwiseKernel& kernel, const std::string& backend,
                      const std::string& target_key, const std::string& fingerprint) {
  Serializer s;
  s.Str("tccd-kernel");
  s.Int(kKernelKeyVersion);
  s.Str(backend);
  s.Str(target_key);
  s.Str(fingerprint);
  s.Ints(kernel.shape);
  s.Ints(kernel.input_dtypes);
  s.Ints(kernel.output_dtypes);
  s.Int(static_cast<int64_t>(kernel.body.size()));
  for (const PwInstr& instr : kernel.body) {
    s.Int(static_cast<int64_t>(instr.op));
    s.Int(static_cast<int64_t>(instr.dtype));
    s.Ints(instr.args);
    s.Int(instr.operand);
    s.Double(instr.fvalue);
    s.Int(instr.ivalue);
  }
  s.Int(kernel.reduction.num_reduced_dims);
  s.Ints(kernel.reduction.row_operand);
  s.Int(static_cast<int64_t>(kernel.reduction.axis));
  s.Ints(kernel.reduction.kept_broadcast);
  s.Int(static_cast<int64_t>(kernel.entries));
  // Appended only when set, so the keys of kernels without zero tails stay what they were
  // (every field before is length-prefixed: no kernel's bytes are a prefix of another's).
  if (!kernel.output_zero_tail.empty()) s.Ints(kernel.output_zero_tail);
  // Likewise the fixed layouts (a zero-tail kernel is a row kernel, which never has them: the
  // two never both follow).
  if (!kernel.fixed_strides.empty()) {
    s.Str("fixed-strides");
    s.Ints(kernel.fixed_strides);
  }
  // Likewise a tiled kernel's section (never with fixed layouts: the verifier says so).
  if (kernel.is_tile()) {
    s.Str("tile");
    s.Int(kernel.tile.read_dim);
    s.Int(kernel.tile.write_dim);
    s.Ints(kernel.tile.strides);
  }

  llvm::SHA256 hash;
  hash.update(llvm::StringRef(s.bytes()));
  const std::array<uint8_t, 32> digest = hash.final();
  std::string hex;
  hex.reserve(64);
  for (uint8_t byte : digest) absl::StrAppend(&hex, absl::Hex(byte, absl::kZeroPad2));
  return hex;
}

}  // namespace tccd::codegen
