// MutationsIntoProducers (see mutations_into_producers.h).
#include "codegen/passes/mutations_into_producers.h"

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "codegen/ops/op_properties.h"

namespace tccd::codegen {
namespace {

using schedule::ExternOp;
using schedule::KernelLaunch;
using schedule::kUnused;
using schedule::Step;
using schedule::ValueId;

// copy_(self, src[, non_blocking]) with both refs: (self, src), else nullopt-like {-1, -1}.
std::pair<ValueId, ValueId> CopyOperands(const Step& step) {
  if (!step.is<ExternOp>()) return {kUnused, kUnused};
  const ExternOp& op = step.as<ExternOp>();
  if (op.target != "aten::copy_.default" || op.args.size() < 2 || !op.args[0].is_ref() ||
      !op.args[1].is_ref())
    return {kUnused, kUnused};
  return {op.args[0].ref().node, op.args[1].ref().node};
}

}  // namespace

absl::flat_hash_set<ValueId> AliasesOf(const schedule::Schedule& schedule, ValueId k) {
  absl::flat_hash_set<ValueId> set = {k};
  for (const Step& step : schedule.steps) {
    std::vector<ValueId> reads;
    if (step.is<schedule::Alias>()) {
      reads.push_back(step.as<schedule::Alias>().base);
    } else if (step.is<ExternOp>() &&
               (IsViewOp(step.as<ExternOp>().target) ||
                // A reshape returns a view of its input wherever the strides allow one.
                PropertiesOf(step.as<ExternOp>().target).category == OpCategory::kReshape ||
                step.as<ExternOp>().target == "aten::copy_.default")) {
      reads = schedule::ReadsOf(step.as<ExternOp>());
    } else {
      continue;
    }
    if (reads.empty() || !set.contains(reads.front())) continue;
    for (ValueId v : step.outputs)
      if (v != kUnused) set.insert(v);
  }
  return set;
}

bool CanWriteOutputOverInput(const PointwiseKernel& kernel, const std::vector<int64_t>& strides,
                             int input, int output) {
  const int n_in = static_cast<int>(kernel.input_dtypes.size());
  const int n_out = static_cast<int>(kernel.output_dtypes.size());
  const size_t rank = kernel.shape.size();
  if (input < 0 || input >= n_in || output < 0 || output >= n_out) return false;
  if (strides.size() != static_cast<size_t>(kernel.num_operands()) * rank) return false;
  if (HasRuntimeShape(kernel) || IsGatherOperand(kernel, input) || kernel.zero_tail(output) != 0)
    return false;
  const int out_operand = n_in + output;
  if (kernel.input_dtypes[input] != kernel.output_dtypes[output]) return false;
  // A point reads the input exactly where it writes the output.
  for (size_t d = 0; d < rank; ++d)
    if (strides[input * rank + d] != strides[out_operand * rank + d]) return false;
  const RowReduction& r = kernel.reduction;
  if (kernel.is_row_reduction()) {
    if (r.row_operand.size() == static_cast<size_t>(kernel.num_operands()) &&
        r.row_operand[input] != r.row_operand[out_operand])
      return false;
    if (r.kept_broadcast.size() == static_cast<size_t>(kernel.num_operands()) &&
        (r.kept_broadcast[input] || r.kept_broadcast[out_operand]))
      return false;
  }
  // Each address of the output is written by one point (or one row / column of a reduction):
  // zero strides only on dims of size 1 or on reduced dims.
  const size_t nred = static_cast<size_t>(r.num_reduced_dims);
  for (size_t d = 0; d < rank; ++d) {
    const bool reduced =
        kernel.is_row_reduction() && (kernel.is_column_reduction() ? d < nred : d >= rank - nred);
    if (strides[out_operand * rank + d] == 0 && kernel.shape[d] != 1 && !reduced) return false;
  }
  // Loads of the input feed only the one store to the output, and precede it.
  std::vector<bool> depends(kernel.body.size(), false);
  int store = -1, stores = 0, last_load = -1;
  for (size_t i = 0; i < kernel.body.size(); ++i) {
    const PwInstr& in = kernel.body[i];
    if (in.op == PwOp::kLoad && in.operand == input) {
      depends[i] = true;
      last_load = static_cast<int>(i);
    }
    for (int a : in.args)
      if (a >= 0 && static_cast<size_t>(a) < i && depends[a]) depends[i] = true;
    if (in.op != PwOp::kStore) continue;
    if (in.operand == output) {
      ++stores;
      store = static_cast<int>(i);
    } else if (depends[i]) {
      return false;
    }
  }
  return stores == 1 && last_load < store;
}

MutationsIntoProducers::MutationsIntoProducers(const std::vector<PointwiseKernel>& kernels) {
  for (const PointwiseKernel& k : kernels) by_name_[k.name] = &k;
}

absl::StatusOr<bool> MutationsIntoProducers::Run(schedule::Schedule& schedule) {
  std::vector<Step>& steps = schedule.steps;
  const int n = static_cast<int>(steps.size());
  // Where each value is defined, and how often each input is copied into.
  std::vector<int> def_step(schedule.values.size(), -1);
  absl::flat_hash_map<ValueId, int> copies_into;
  for (int i = 0; i < n; ++i) {
    for (ValueId v : steps[i].outputs)
      if (v != kUnused) def_step[v] = i;
    if (const ValueId self = CopyOperands(steps[i]).first; self != kUnused) ++copies_into[self];
  }
  std::vector<bool> drop(n, false);
  for (int c = 0; c < n; ++c) {
    const auto [k, v] = CopyOperands(steps[c]);
    if (k == kUnused || k >= schedule.num_inputs || copies_into[k] != 1) continue;
    bool result_read = false;  // copy_'s own result (self): left alone when anything reads it
    for (ValueId out : steps[c].outputs) result_read = result_read || out != kUnused;
    if (result_read || v < 0 || static_cast<size_t>(v) >= schedule.values.size() ||
        schedule.values[k] != schedule.values[v])
      continue;
    // The copied value may be a view of the kernel's output over the same bytes (batch norm's
    // [C] view of its [C, 1, 1] running statistic): the output itself is written into k, and
    // views nothing else reads go with the copy.
    std::vector<int> views;  // view steps from the output to v, v's first
    ValueId value = v;
    while (def_step[value] >= 0 && def_step[value] < c) {
      const Step& d = steps[def_step[value]];
      const bool view =
          d.is<schedule::Alias>() || (d.is<ExternOp>() && IsViewOp(d.as<ExternOp>().target));
      const std::vector<ValueId> reads = view ? schedule::ReadsOf(d) : std::vector<ValueId>{};
      if (reads.empty() || d.outputs.size() != 1 ||
          !schedule::CanWriteInto(schedule.values[reads.front()], schedule.values[k]))
        break;
      views.push_back(def_step[value]);
      value = reads.front();
    }
    const int p = def_step[value];
    if (p < 0 || p >= c || !steps[p].is<KernelLaunch>()) continue;
    KernelLaunch& launch = steps[p].as<KernelLaunch>();
    if (launch.kernels.size() != 1) continue;
    auto found = by_name_.find(launch.kernels[0].name);
    if (found == by_name_.end()) continue;
    int output = -1;
    for (size_t o = 0; o < steps[p].outputs.size(); ++o)
      if (steps[p].outputs[o] == value) output = static_cast<int>(o);
    if (output < 0 || (!launch.write_into.empty() && launch.write_into[output] != kUnused))
      continue;
    const absl::flat_hash_set<ValueId> aliases = AliasesOf(schedule, k);
    bool legal = true;
    // The kernel may read the input itself or a view of it (batch norm's [C, 1, 1] view of
    // running_mean) at the same element offset: the strides compared are the iteration space's.
    for (size_t i = 0; legal && i < launch.inputs.size(); ++i) {
      const ValueId in = launch.inputs[i];
      if (!aliases.contains(in)) continue;
      legal = schedule.values[in].storage_offset == schedule.values[k].storage_offset &&
              schedule.values[in].dtype == schedule.values[k].dtype &&
              CanWriteOutputOverInput(*found->second, launch.expected_strides, static_cast<int>(i),
                                      output);
    }
    for (int j = p + 1; legal && j < c; ++j)
      for (ValueId r : schedule::ReadsOf(steps[j])) legal = legal && !aliases.contains(r);
    if (!legal) continue;
    if (launch.write_into.empty()) launch.write_into.assign(steps[p].outputs.size(), kUnused);
    launch.write_into[output] = k;
    drop[c] = true;
    // The views between the output and the copy, where the copy was their only reader.
    for (int d : views) {
      const ValueId out = steps[d].outputs[0];
      bool read = false;
      for (int j = 0; j < n && !read; ++j) {
        if (drop[j]) continue;
        for (ValueId r : schedule::ReadsOf(steps[j])) read = read || r == out;
      }
      for (const ir::Arg& a : schedule.outputs)
        schedule::ForEachValue(a, [&](ValueId r) { read = read || r == out; });
      if (read) break;
      drop[d] = true;
    }
  }
  std::vector<Step> kept;
  for (int i = 0; i < n; ++i)
    if (!drop[i]) kept.push_back(std::move(steps[i]));
  const bool changed = static_cast<int>(kept.size()) != n;
  steps = std::move(kept);
  return changed;
}

}  // namespace tccd::codegen
