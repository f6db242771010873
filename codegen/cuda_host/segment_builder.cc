// Schedule -> schedule with segment steps, plus the host program (see segment_builder.h).
#include "codegen/cuda_host/segment_builder.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "codegen/cuda_host/match_gemms.h"
#include "codegen/cuda_host/static_layout.h"
#include "codegen/cuda_host/workspace_packing.h"
#include "codegen/ops/op_properties.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

// TCCD_SEGMENT_IO_IN_PLACE=0 (daemon environment, keyed in pipeline.cc): a segment output is
// never the buffer of a dying workspace value (io_host below), as before.
bool IoInPlace() {
  static const bool on = [] {
    const char* v = std::getenv("TCCD_SEGMENT_IO_IN_PLACE");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}

using schedule::ExternOp;
using schedule::KernelLaunch;
using schedule::LibraryCall;
using schedule::ReadsOf;
using schedule::Step;

constexpr int64_t kWorkspaceAlign = 256;

// A library call the segment runs as a gemm: its spec and operands (value ids A, B, D[, bias]).
struct GemmMatch {
  GemmSpec spec;
  std::vector<int> operands;
};

enum class StepClass { kOther, kKernel, kGemm, kView };

// The values read at or after step `from` (by later steps, or returned): value v is when
// last_read[v] >= from (last_read[v]: the last step reading v, the step count for a schedule
// output, -1 for none). One comparison per question; the suffix sets of value ids this replaces
// (one std::set per step) cost steps x values to build, a third of the pass on ResNet-50.
struct LaterReads {
  const std::vector<int>& last_read;
  int from;
  bool contains(int v) const { return last_read[v] >= from; }
};

class SegmentWriter {
 public:
  SegmentWriter(const std::vector<Step>& steps, const std::vector<std::optional<Meta>>& metas,
                const absl::flat_hash_map<std::string, int>& kernel_index,
                const std::string& artifact, int64_t gemm_workspace_bytes, HostProgram& program)
      : steps_(steps),
        metas_(metas),
        kernel_index_(kernel_index),
        artifact_(artifact),
        gemm_workspace_bytes_(gemm_workspace_bytes),
        program_(program) {}

  // Appends to `out` what replaces steps [begin, end) (all segmentable), given the value ids
  // read at or after `end` (later steps, schedule outputs).
  absl::Status Write(int begin, int end, const std::vector<StepClass>& classes,
                     const std::map<int, GemmMatch>& gemms, const LaterReads& read_later,
                     std::vector<Step>& out) {
    // Alias roots: value -> (root value, byte delta). Roots are compute outputs or values
    // defined before the segment.
    std::map<int, std::pair<int, int64_t>> alias;
    auto root = [&](int v) {
      auto it = alias.find(v);
      return it == alias.end() ? std::make_pair(v, int64_t{0}) : it->second;
    };
    std::set<int> defined_inside;
    for (int i = begin; i < end; ++i) {
      const Step& step = steps_[i];
      if (classes[i] == StepClass::kView) {
        const int in = ReadsOf(step).front();
        const auto [r, delta] = root(in);
        for (int v : step.outputs) {
          if (v < 0) continue;
          alias[v] = {r, delta + (metas_[v]->offset - metas_[in]->offset) * metas_[v]->elem_bytes};
          defined_inside.insert(v);
        }
      } else {
        for (int v : step.outputs) defined_inside.insert(v);
      }
    }
    // Which inside values are needed after the segment, and which views to re-emit. A kernel
    // output written into a graph input's buffer (MutationsIntoProducers) is a segment output
    // bound to that buffer, never workspace, read later or not. So is one written into a dying
    // input's buffer (DyingInputsIntoOutputs) when that input comes from before the segment;
    // one computed inside lives in the workspace, whose packing never overlaps a step's reads
    // and writes: that write is dropped, the output allocated as any other.
    std::set<int> needed;
    for (int v : defined_inside)
      if (read_later.contains(v)) needed.insert(v);
    std::map<int, int> into;  // kernel output -> the graph input it is written into
    for (int i = begin; i < end; ++i) {
      if (classes[i] != StepClass::kKernel) continue;
      const std::vector<int>& w = steps_[i].as<KernelLaunch>().write_into;
      for (size_t o = 0; o < w.size(); ++o) {
        if (w[o] == schedule::kUnused || defined_inside.contains(w[o])) continue;
        into[steps_[i].outputs[o]] = w[o];
        needed.insert(steps_[i].outputs[o]);
      }
    }
    // A view read later whose root is computed here becomes an Alias of that root (one call);
    // a view of a value from before the segment is re-emitted with the views it depends on.
    std::vector<int> aliases;  // view values, in definition order
    for (int i = begin; i < end; ++i) {
      if (classes[i] != StepClass::kView) continue;
      for (int v : steps_[i].outputs) {
        if (v < 0 || !needed.count(v)) continue;
        const int r = root(v).first;
        if (defined_inside.count(r) && !alias.count(r)) aliases.push_back(v);
      }
    }
    for (int v : aliases) {
      needed.erase(v);
      needed.insert(root(v).first);
    }
    std::vector<bool> reemit(end - begin, false);
    for (int i = end - 1; i >= begin; --i) {
      if (classes[i] != StepClass::kView) continue;
      const Step& step = steps_[i];
      bool any = false;
      for (int v : step.outputs) any = any || (v >= 0 && needed.count(v));
      if (!any) continue;
      reemit[i - begin] = true;
      needed.insert(ReadsOf(step).front());
    }
    // Matmul results are written where the plan put them. (Folding a following relu into
    // cuBLASLt's RELU_BIAS epilogue was measured slower on the H100 for f32: 98 vs 62 us per
    // 256x1024x4096 linear+relu call, against 62 for the unfused pair, so it is not done.)
    std::map<int, GemmMatch> local_gemms;
    for (int i = begin; i < end; ++i)
      if (classes[i] == StepClass::kGemm) local_gemms[i] = gemms.at(i);
    auto writes = [&](int i) {
      if (classes[i] == StepClass::kGemm) return std::vector<int>{local_gemms.at(i).operands[2]};
      return steps_[i].outputs;
    };

    // Liveness of inside roots, in segment positions.
    std::map<int, std::pair<int, int>> live;  // root -> (def, last use)
    std::vector<int> io_inputs;
    std::set<int> io_input_set;
    for (int i = begin; i < end; ++i) {
      const Step& step = steps_[i];
      if (classes[i] == StepClass::kView) continue;
      for (int v : ReadsOf(step)) {
        const int r = root(v).first;
        if (defined_inside.count(r))
          live[r].second = i;
        else if (io_input_set.insert(r).second)
          io_inputs.push_back(r);
      }
      for (int v : writes(i)) live[v] = {i, i};
    }
    std::vector<int> io_outputs;
    std::map<int, int> io_index;
    for (size_t k = 0; k < io_inputs.size(); ++k) io_index[io_inputs[k]] = static_cast<int>(k);
    for (const auto& [r, span] : live) {
      if (needed.count(r)) {
        io_index[r] = static_cast<int>(io_inputs.size() + io_outputs.size());
        io_outputs.push_back(r);
      }
    }
    // In place: a plain pointwise kernel (no index ops, no reduction: each element is read only
    // by the thread that writes the same element) writes an output into the bytes of an
    // operand that dies there and has the output's layout. A GELU over a matmul's result then
    // needs no second buffer (ConvNeXt's and ViT's MLPs: [tokens, 4 x width] bf16, 147 MiB at
    // the zoo's batch), as Inductor reuses a dying input's buffer. host[v]: the value whose
    // bytes v takes (the first of a chain). The same where the output is a segment output and
    // the dying operand a workspace value: the operand is computed in the output's buffer
    // instead (io_host[operand] = output), so the two never coexist; BERT's tied-embedding
    // gradient sum over the embedding gradient (dying_inputs_into_outputs.h does it across
    // segments). Not where the output is written into a graph input (earlier readers of the
    // input would see the operand's bytes).
    std::map<int, int> host;
    std::map<int, int> io_host;
    for (int i = begin; i < end; ++i) {
      if (classes[i] != StepClass::kKernel) continue;
      const KernelLaunch& call = steps_[i].as<KernelLaunch>();
      bool plain = true;
      for (const schedule::KernelInfo& k : call.kernels)
        plain = plain && k.kind == "cuda_pointwise";
      if (!plain) continue;
      const size_t rank = call.shape.size();
      auto strides_of = [&](size_t operand) {
        return std::vector<int64_t>(call.expected_strides.begin() + operand * rank,
                                    call.expected_strides.begin() + (operand + 1) * rank);
      };
      if (call.expected_strides.size() != (call.inputs.size() + steps_[i].outputs.size()) * rank)
        continue;
      std::set<int> taken;
      for (size_t o = 0; o < steps_[i].outputs.size(); ++o) {
        const int v = steps_[i].outputs[o];
        if (v < 0 || !live.count(v) || into.count(v)) continue;
        const bool io_output = needed.count(v) > 0;
        if (io_output && !IoInPlace()) continue;
        for (size_t k = 0; k < call.inputs.size(); ++k) {
          const auto [r, delta] = root(call.inputs[k]);
          if (delta != 0 || needed.count(r) || !defined_inside.count(r) || !live.count(r) ||
              live.at(r).second != i || taken.count(r))
            continue;
          int reads = 0;
          for (int u : call.inputs) reads += root(u).first == r ? 1 : 0;
          const Meta& in = *metas_[call.inputs[k]];
          const Meta& out = *metas_[v];
          if (reads != 1 || in.elem_bytes != out.elem_bytes ||
              in.extent_bytes() != out.extent_bytes() ||
              strides_of(k) != strides_of(call.inputs.size() + o))
            continue;
          if (io_output) {
            if (host.count(r) || io_host.count(r)) continue;
            io_host[r] = v;
            taken.insert(r);
            break;
          }
          host[v] = host.count(r) ? host.at(r) : r;
          taken.insert(r);
          break;
        }
      }
    }
    // Workspace: values that die inside share bytes where their lifetimes allow
    // (workspace_packing.h); a value written in place shares its host's buffer.
    std::map<int, size_t> buffer_of;  // workspace value -> its buffer
    std::vector<WorkspaceBuffer> buffers;
    for (const auto& [r, span] : live) {
      if (needed.count(r) || io_host.count(r)) continue;
      const int64_t size = (std::max<int64_t>(metas_[r]->extent_bytes(), 1) + kWorkspaceAlign - 1) /
                           kWorkspaceAlign * kWorkspaceAlign;
      auto h = host.find(r);
      if (h != host.end() && buffer_of.count(h->second)) {
        WorkspaceBuffer& b = buffers[buffer_of.at(h->second)];
        b.bytes = std::max(b.bytes, size);
        b.first = std::min(b.first, span.first);
        b.last = std::max(b.last, span.second);
        buffer_of[r] = buffer_of.at(h->second);
        continue;
      }
      buffer_of[r] = buffers.size();
      buffers.push_back({.bytes = size, .first = span.first, .last = span.second});
    }
    const WorkspaceLayout layout = PackWorkspace(buffers);
    std::map<int, int64_t> ws_offset;
    for (const auto& [r, b] : buffer_of) ws_offset[r] = layout.offsets[b];
    int64_t ws_bytes = layout.bytes;
    SegmentSpec segment;
    segment.name = absl::StrCat("tccd_seg", program_.segments.size());
    segment.num_io = static_cast<int>(io_inputs.size() + io_outputs.size());
    bool has_gemm = false;
    auto operand = [&](int v) {
      const auto [r, delta] = root(v);
      auto hosted = io_host.find(r);
      if (hosted != io_host.end()) return SegmentOperandSpec{io_index.at(hosted->second), delta};
      auto it = io_index.find(r);
      if (it != io_index.end()) return SegmentOperandSpec{it->second, delta};
      return SegmentOperandSpec{-1, ws_offset.at(r) + delta};
    };
    schedule::Segment seg;
    for (int i = begin; i < end; ++i) {
      const Step& step = steps_[i];
      if (classes[i] == StepClass::kView) continue;
      SegmentStepSpec s;
      if (classes[i] == StepClass::kKernel) {
        const KernelLaunch& call = step.as<KernelLaunch>();
        s.kind = SegmentStepSpec::Kind::kKernel;
        s.index = kernel_index_.at(call.entry.symbol);
        for (int v : call.inputs) s.operands.push_back(operand(v));
        for (int v : step.outputs) s.operands.push_back(operand(v));
        s.strides = call.expected_strides;
        seg.kernels.insert(seg.kernels.end(), call.kernels.begin(), call.kernels.end());
      } else {
        const GemmMatch& match = local_gemms.at(i);
        s.kind = SegmentStepSpec::Kind::kGemm;
        s.index = static_cast<int>(program_.gemms.size());
        program_.gemms.push_back(match.spec);
        program_.gemms.back().name = absl::StrCat(segment.name, "_", match.spec.name);
        for (int v : match.operands) s.operands.push_back(operand(v));
        seg.kernels.push_back({.name = program_.gemms.back().name,
                               .kind = "cublaslt_gemm",
                               .ops = {step.as<LibraryCall>().op.target}});
        has_gemm = true;
      }
      segment.steps.push_back(std::move(s));
    }
    if (has_gemm) {
      segment.gemm_workspace_offset = ws_bytes;
      segment.gemm_workspace_bytes = gemm_workspace_bytes_;
      ws_bytes += gemm_workspace_bytes_;
    }
    segment.workspace_bytes = ws_bytes;
    seg.entry = {artifact_, segment.name, kCudaSegmentAbi};
    seg.inputs = io_inputs;
    seg.workspace_bytes = ws_bytes;
    if (!into.empty()) {
      for (int r : io_outputs) {
        auto it = into.find(r);
        seg.write_into.push_back(it == into.end() ? schedule::kUnused : it->second);
      }
    }
    program_.segments.push_back(std::move(segment));
    out.push_back(Step{std::move(seg), io_outputs});
    for (int v : aliases) out.push_back(Step{schedule::Alias{root(v).first}, {v}});
    for (int i = begin; i < end; ++i)
      if (reemit[i - begin]) out.push_back(steps_[i]);
    return absl::OkStatus();
  }

 private:
  const std::vector<Step>& steps_;
  const std::vector<std::optional<Meta>>& metas_;
  const absl::flat_hash_map<std::string, int>& kernel_index_;
  const std::string& artifact_;
  const int64_t gemm_workspace_bytes_;  // cuBLASLt scratch of a segment with matmuls
  HostProgram& program_;
};

// Bytes of a value as a segment's workspace or the client's allocator holds it.
int64_t HeldBytes(const std::optional<Meta>& meta) {
  if (!meta) return 0;
  return (std::max<int64_t>(meta->extent_bytes(), 1) + kWorkspaceAlign - 1) / kWorkspaceAlign *
         kWorkspaceAlign;
}

// The schedule's memory before segmentation, each value held from its step to its last reader
// (views hold their base's bytes). The caller's inputs are not counted, except the released ones
// (SegmentBuilder's `released_inputs`): those are held from before the first step (span start
// -1) to their last reader, as the runtime frees them.
class StepwiseMemory {
 public:
  StepwiseMemory(const std::vector<Step>& steps, const std::vector<std::optional<Meta>>& metas,
                 const std::vector<StepClass>& classes, const std::map<int, GemmMatch>& gemms,
                 const std::set<int>& returned, int num_inputs, const std::set<int>& released) {
    const int n = static_cast<int>(steps.size());
    for (int v : released) span_[v] = {-1, -1};
    for (int i = 0; i < n; ++i) {
      const Step& step = steps[i];
      const bool view =
          classes[i] == StepClass::kView ||
          (step.is<ExternOp>() && IsViewOp(step.as<ExternOp>().target) && !ReadsOf(step).empty());
      if (view) {
        const int r = Root(ReadsOf(step).front());
        for (int v : step.outputs)
          if (v >= 0) root_of_[v] = r;
        continue;
      }
      for (int v : ReadsOf(step)) {
        auto it = span_.find(Root(v));
        if (it != span_.end()) it->second.second = i;
      }
      const std::vector<int> writes =
          classes[i] == StepClass::kGemm ? std::vector<int>{gemms.at(i).operands[2]} : step.outputs;
      for (int v : writes)
        if (v >= num_inputs) span_[v] = {i, i};
    }
    for (int v : returned)
      if (auto it = span_.find(Root(v)); it != span_.end()) it->second.second = n;
    // The peak: the most bytes live at one step (a value from its step to its last reader).
    std::vector<int64_t> change(n + 2, 0);
    for (const auto& [r, life] : span_) {
      change[std::max(life.first, 0)] += HeldBytes(metas[r]);
      change[std::max(life.second, 0) + 1] -= HeldBytes(metas[r]);
    }
    int64_t live = 0;
    for (int i = 0; i < n; ++i) peak_ = std::max(peak_, live += change[i]);
  }

  int Root(int v) const {
    auto it = root_of_.find(v);
    return it == root_of_.end() ? v : it->second;
  }
  int64_t peak() const { return peak_; }
  // For every end in [begin, steps]: the bytes of the values defined before step `begin` and read
  // at or after `end` (or returned). One pass for all ends: the segment cut asks it for every end
  // of a growing run.
  std::vector<int64_t> LiveThrough(int begin, int num_steps,
                                   const std::vector<std::optional<Meta>>& metas) const {
    std::vector<int64_t> bytes(num_steps + 2, 0);
    for (const auto& [r, life] : span_)
      if (life.first < begin && life.second >= 0) bytes[life.second] += HeldBytes(metas[r]);
    for (int e = num_steps; e >= 0; --e) bytes[e] += bytes[e + 1];
    return bytes;
  }

 private:
  std::map<int, int> root_of_;               // view value -> the value whose bytes it uses
  std::map<int, std::pair<int, int>> span_;  // allocated value -> (its step, its last reader)
  int64_t peak_ = 0;
};

// The most a run [begin, end) of segmentable steps would hold as one segment, besides the values
// from before it that live on after it: its outputs (allocated before the call), its workspace,
// and the values from before it that die inside (released after the call; a caller's input only
// when released).
int64_t SegmentBytes(const std::vector<Step>& steps, const std::vector<std::optional<Meta>>& metas,
                     const std::vector<StepClass>& classes, const std::map<int, GemmMatch>& gemms,
                     const StepwiseMemory& memory, int num_inputs, const std::set<int>& released,
                     int begin, int end, const LaterReads& kept) {
  std::map<int, std::pair<int, int>> span;  // value defined inside -> (its step, last reader)
  std::set<int> before;                     // values from before the run read inside
  for (int i = begin; i < end; ++i) {
    const Step& step = steps[i];
    if (classes[i] == StepClass::kView) continue;
    for (int v : ReadsOf(step)) {
      const int r = memory.Root(v);
      if (auto it = span.find(r); it != span.end())
        it->second.second = i;
      else if (r >= num_inputs || released.contains(r))  // other inputs: the caller holds them
        before.insert(r);
    }
    const std::vector<int> writes =
        classes[i] == StepClass::kGemm ? std::vector<int>{gemms.at(i).operands[2]} : step.outputs;
    for (int v : writes)
      if (v >= 0) span[v] = {i, i};
  }
  // kept: roots with a view or themselves read at or after `end`.
  // As SegmentWriter writes plain pointwise kernels in place (roughly: an output of a dying
  // operand's size shares its buffer; the writer also checks offsets and strides).
  std::map<int, int> host;
  for (int i = begin; i < end; ++i) {
    if (classes[i] != StepClass::kKernel) continue;
    const KernelLaunch& call = steps[i].as<KernelLaunch>();
    bool plain = true;
    for (const schedule::KernelInfo& k : call.kernels) plain = plain && k.kind == "cuda_pointwise";
    if (!plain) continue;
    std::set<int> taken;
    for (int v : steps[i].outputs) {
      if (v < 0 || kept.contains(v)) continue;
      for (int u : call.inputs) {
        const int r = memory.Root(u);
        auto it = span.find(r);
        if (it == span.end() || it->second.second != i || kept.contains(r) || taken.contains(r) ||
            HeldBytes(metas[r]) != HeldBytes(metas[v]))
          continue;
        host[v] = host.contains(r) ? host.at(r) : r;
        taken.insert(r);
        break;
      }
    }
  }
  int64_t bytes = 0;
  std::map<int, size_t> buffer_of;
  std::vector<WorkspaceBuffer> buffers;
  for (const auto& [r, life] : span) {
    if (kept.contains(r)) {
      bytes += HeldBytes(metas[r]);
      continue;
    }
    if (auto h = host.find(r); h != host.end() && buffer_of.contains(h->second)) {
      WorkspaceBuffer& b = buffers[buffer_of.at(h->second)];
      b.first = std::min(b.first, life.first);
      b.last = std::max(b.last, life.second);
      continue;
    }
    buffer_of[r] = buffers.size();
    buffers.push_back({.bytes = HeldBytes(metas[r]), .first = life.first, .last = life.second});
  }
  bytes += PackWorkspace(buffers).bytes;
  for (int r : before)
    if (!kept.contains(r)) bytes += HeldBytes(metas[r]);
  return bytes;
}

// Where to cut the run [begin, end) so that no segment raises the schedule's peak memory above
// its stepwise peak by more than the slack (segment_builder.h): greedily, each segment as long as
// it stays within. Returns the pieces' [begin, end) bounds, in order.
std::vector<std::pair<int, int>> CutForMemory(
    const std::vector<Step>& steps, const std::vector<std::optional<Meta>>& metas,
    const std::vector<StepClass>& classes, const std::map<int, GemmMatch>& gemms,
    const StepwiseMemory& memory, int num_inputs, const std::set<int>& released,
    const std::vector<int>& root_last_read, int begin, int end) {
  const int64_t limit = memory.peak() + kSegmentMemorySlack + memory.peak() / 32;
  std::vector<std::pair<int, int>> pieces;
  const int num_steps = static_cast<int>(steps.size());
  int b = begin;
  std::vector<int64_t> live_through = memory.LiveThrough(b, num_steps, metas);
  for (int e = begin + 2; e <= end; ++e) {
    if (classes[e - 1] == StepClass::kView) continue;  // a view adds no bytes of its own
    const int64_t held =
        live_through[e] + SegmentBytes(steps, metas, classes, gemms, memory, num_inputs, released,
                                       b, e, LaterReads{root_last_read, e});
    if (held <= limit) continue;
    // Step e - 1 starts the next segment, with the views taken right before it (its operands).
    int cut = e - 1;
    while (cut > b + 1 && classes[cut - 1] == StepClass::kView) --cut;
    pieces.push_back({b, cut});
    b = cut;
    live_through = memory.LiveThrough(b, num_steps, metas);
  }
  pieces.push_back({b, end});
  return pieces;
}

}  // namespace

absl::StatusOr<bool> SegmentBuilder::Run(schedule::Schedule& schedule) {
  // Release steps would end every run: this pass drops them (ReleaseAfterLastUse runs after).
  std::vector<Step> steps;
  for (Step& step : schedule.steps)
    if (!step.is<schedule::Release>()) steps.push_back(std::move(step));
  const bool had_releases = steps.size() != schedule.steps.size();
  std::vector<std::optional<Meta>> metas;
  for (const ir::TensorType& t : schedule.values) metas.push_back(StaticMeta(t));
  absl::flat_hash_map<std::string, int> kernel_index;
  for (size_t i = 0; i < kernel_symbols_.size(); ++i)
    kernel_index[kernel_symbols_[i]] = static_cast<int>(i);

  const int n = static_cast<int>(steps.size());
  std::vector<StepClass> classes(n, StepClass::kOther);
  std::map<int, GemmMatch> gemms;
  for (int i = 0; i < n; ++i) {
    const Step& step = steps[i];
    if (step.is<KernelLaunch>()) {
      const KernelLaunch& k = step.as<KernelLaunch>();
      bool ok = k.entry.abi == "tccd-cuda-1" && kernel_index.contains(k.entry.symbol);
      for (int v : k.inputs) ok = ok && metas[v].has_value();
      for (int v : step.outputs) ok = ok && v >= 0 && metas[v].has_value();
      if (ok) classes[i] = StepClass::kKernel;
    } else if (step.is<LibraryCall>() && step.as<LibraryCall>().function == kCublasLtGemm) {
      const LibraryCall& call = step.as<LibraryCall>();
      ASSIGN_OR_RETURN(GemmSpec spec, GemmSpecFromParams(call.name, call.params));
      classes[i] = StepClass::kGemm;
      gemms[i] = GemmMatch{std::move(spec), call.operands};
    } else if (step.is<ExternOp>()) {
      if (IsViewOp(step.as<ExternOp>().target)) {
        // A view reads its base alone; a view op given more tensors (a malformed request: the
        // request fuzzer's aten::t with three) stays an extern step.
        std::vector<int> reads = ReadsOf(step);
        bool ok = reads.size() == 1 && metas[reads.front()].has_value();
        for (int v : step.outputs)
          ok = ok &&
               (v < 0 || (metas[v].has_value() && metas[v]->dtype == metas[reads.front()]->dtype));
        if (ok) classes[i] = StepClass::kView;
      }
    }
  }
  // The last step reading each value (n: returned), and the same per root of views (a root is
  // read later when it or a view of it is).
  std::vector<int> last_read(schedule.values.size(), -1);
  for (int i = 0; i < n; ++i)
    for (int v : ReadsOf(steps[i])) last_read[v] = i;
  for (const ir::Arg& a : schedule.outputs)
    schedule::ForEachValue(a, [&](int id) { last_read[id] = n; });

  std::set<int> returned;
  for (const ir::Arg& a : schedule.outputs)
    schedule::ForEachValue(a, [&](int id) { returned.insert(id); });
  // Inputs the caller released to the plan (a backward's saved activations): the runtime frees
  // them at their last reader, so a segment that holds them to its end costs memory.
  std::set<int> released;
  for (int v : released_inputs_)
    if (v >= 0 && v < schedule.num_inputs) released.insert(v);
  const StepwiseMemory memory(steps, metas, classes, gemms, returned, schedule.num_inputs,
                              released);
  std::vector<int> root_last_read(schedule.values.size(), -1);
  for (size_t v = 0; v < last_read.size(); ++v) {
    int& last = root_last_read[memory.Root(static_cast<int>(v))];
    last = std::max(last, last_read[v]);
  }

  std::vector<Step> out;
  SegmentWriter writer(steps, metas, kernel_index, artifact_, gemm_workspace_bytes_, program_);
  const size_t segments_before = program_.segments.size();
  for (int i = 0; i < n;) {
    if (classes[i] == StepClass::kOther) {
      out.push_back(steps[i++]);
      continue;
    }
    int run_end = i;
    while (run_end < n && classes[run_end] != StepClass::kOther) ++run_end;
    for (const auto& [begin, end] :
         CutForMemory(steps, metas, classes, gemms, memory, schedule.num_inputs, released,
                      root_last_read, i, run_end)) {
      bool compute = false;
      for (int k = begin; k < end; ++k) compute = compute || classes[k] != StepClass::kView;
      // A lone kernel is already one call: a segment would only add a workspace.
      const bool lone_kernel = end == begin + 1 && classes[begin] == StepClass::kKernel;
      if (!compute || lone_kernel) {
        for (int k = begin; k < end; ++k) out.push_back(steps[k]);
        continue;
      }
      RETURN_IF_ERROR(writer.Write(begin, end, classes, gemms, LaterReads{last_read, end}, out));
    }
    i = run_end;
  }
  const bool segmented = program_.segments.size() != segments_before;
  schedule.steps = segmented ? std::move(out) : std::move(steps);
  return segmented || had_releases;
}

}  // namespace tccd::codegen
