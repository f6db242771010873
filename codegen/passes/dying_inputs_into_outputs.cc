// DyingInputsIntoOutputs (see dying_inputs_into_outputs.h).
#include "codegen/passes/dying_inputs_into_outputs.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "codegen/ir/graph.h"
#include "codegen/ops/op_properties.h"
#include "codegen/passes/mutations_into_producers.h"

namespace tccd::codegen {
namespace {

using schedule::KernelLaunch;
using schedule::kUnused;
using schedule::Step;
using schedule::ValueId;

constexpr char kCudaAbi[] = "tccd-cuda-1";
constexpr char kCpuAbi[] = "tccd-cpu-1";

int64_t Bytes(const ir::TensorType& t) { return t.numel() * ir::DTypeBytes(t.dtype); }

// Whether every output of extern step `op` is a tensor of its own that the client allocates
// anew on every call: the op is in the op table as side-effect free (no in-place or out= form)
// and not a view or reshape, and it reads a value (a factory without one, say a new_zeros of
// constant arguments, may be a tensor the client made once at load: native_plan.py's
// constant_factory).
bool ReturnsFreshTensors(const schedule::ExternOp& op) {
  const OpProperties p = PropertiesOf(op.target);
  if (!p.pure || p.category == OpCategory::kUnknown || p.category == OpCategory::kView ||
      p.category == OpCategory::kReshape)
    return false;
  return !schedule::ReadsOf(op).empty();
}

}  // namespace

DyingInputsIntoOutputs::DyingInputsIntoOutputs(const std::vector<PointwiseKernel>& kernels,
                                               Options options)
    : options_(options) {
  for (const PointwiseKernel& k : kernels) by_name_[k.name] = &k;
}

absl::StatusOr<bool> DyingInputsIntoOutputs::Run(schedule::Schedule& schedule) {
  std::vector<Step>& steps = schedule.steps;
  const int n = static_cast<int>(steps.size());
  // Per value: the step defining it when that is a kernel launch's plain output or (with
  // Options::extern_outputs) a fresh output of an extern op (ResNet-50's convolutions), else -1.
  std::vector<int> kernel_def(schedule.values.size(), -1);
  for (int i = 0; i < n; ++i) {
    if (options_.extern_outputs && steps[i].is<schedule::ExternOp>() &&
        ReturnsFreshTensors(steps[i].as<schedule::ExternOp>())) {
      for (ValueId v : steps[i].outputs)
        if (v != kUnused) kernel_def[v] = i;
      continue;
    }
    if (!steps[i].is<KernelLaunch>()) continue;
    const std::vector<ValueId>& into = steps[i].as<KernelLaunch>().write_into;
    for (size_t o = 0; o < steps[i].outputs.size(); ++o) {
      const ValueId v = steps[i].outputs[o];
      if (v != kUnused && (into.empty() || into[o] == kUnused)) kernel_def[v] = i;
    }
  }
  absl::flat_hash_set<ValueId> written_into;
  for (const Step& step : steps)
    if (const std::vector<ValueId>* into = schedule::WriteIntoOf(step))
      for (ValueId k : *into)
        if (k != kUnused) written_into.insert(k);
  bool changed = false;
  for (int p = 0; p < n; ++p) {
    if (!steps[p].is<KernelLaunch>()) continue;
    KernelLaunch& launch = steps[p].as<KernelLaunch>();
    // A reordered kernel (loop_order.h) is as plain: it walks every operand in one permuted
    // order, and the strides compared below are that order's.
    if (launch.kernels.size() != 1) continue;
    const std::string& kind = launch.kernels[0].kind;
    const bool cuda = launch.entry.abi == kCudaAbi &&
                      (kind == "cuda_pointwise" ||
                       (options_.reordered_kernels && kind == "cuda_pointwise_reordered"));
    const bool cpu =
        options_.cpu_kernels && launch.entry.abi == kCpuAbi && kind == "cpu_pointwise_loop";
    if (!cuda && !cpu) continue;
    const int64_t min_bytes = cpu ? kCpuMinBytes : kMinBytes;
    auto found = by_name_.find(launch.kernels[0].name);
    if (found == by_name_.end()) continue;
    const PointwiseKernel& kernel = *found->second;
    if (kernel.is_row_reduction() || kernel.is_tile() || HasScatter(kernel)) continue;
    for (size_t o = 0; o < steps[p].outputs.size(); ++o) {
      const ValueId out = steps[p].outputs[o];
      if (out == kUnused || (!launch.write_into.empty() && launch.write_into[o] != kUnused))
        continue;
      for (size_t i = 0; i < launch.inputs.size(); ++i) {
        const ValueId v = launch.inputs[i];
        if (v < schedule.num_inputs || kernel_def[v] < 0 || kernel_def[v] >= p ||
            written_into.contains(v) || !(schedule.values[v] == schedule.values[out]) ||
            Bytes(schedule.values[v]) < min_bytes)
          continue;
        const absl::flat_hash_set<ValueId> aliases = AliasesOf(schedule, v);
        bool legal = true;
        for (const ir::Arg& a : schedule.outputs)
          schedule::ForEachValue(a, [&](ValueId r) { legal = legal && !aliases.contains(r); });
        for (int j = p + 1; legal && j < n; ++j)
          for (ValueId r : schedule::ReadsOf(steps[j])) legal = legal && !aliases.contains(r);
        for (size_t j = 0; legal && j < launch.inputs.size(); ++j) {
          if (!aliases.contains(launch.inputs[j])) continue;
          legal = launch.inputs[j] == v &&
                  CanWriteOutputOverInput(kernel, launch.expected_strides, static_cast<int>(j),
                                          static_cast<int>(o));
        }
        if (!legal) continue;
        if (launch.write_into.empty()) launch.write_into.assign(steps[p].outputs.size(), kUnused);
        launch.write_into[o] = v;
        written_into.insert(v);
        changed = true;
        break;
      }
    }
  }
  return changed;
}

}  // namespace tccd::codegen
