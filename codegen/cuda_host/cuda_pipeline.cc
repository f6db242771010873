// CudaPipelineBackend (see cuda_pipeline.h).
#include "codegen/cuda_host/cuda_pipeline.h"

#include "absl/strings/str_cat.h"
#include "codegen/cuda/cuda_kernel_objects.h"
#include "codegen/cuda_host/cuda_host.h"
#include "codegen/cuda_host/entry_points.h"
#include "codegen/cuda_host/tile_kernels.h"
#include "codegen/cuda_host/match_gemms.h"
#include "codegen/passes/batch_norm_decomposition.h"
#include "codegen/passes/batch_norm_inference.h"
#include "codegen/passes/channels_last_layout.h"
#include "codegen/passes/column_prologue_recompute.h"
#include "codegen/passes/conv_backward_bias_grad.h"
#include "codegen/passes/conv_bias_peel.h"
#include "codegen/passes/cudnn_batch_norm.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/layer_norm_backward_split.h"
#include "codegen/passes/layer_norm_param_grad_split.h"
#include "codegen/passes/nll_loss_backward_to_pointwise.h"
#include "codegen/passes/nll_loss_forward_to_rows.h"
#include "codegen/passes/pad_matmul_operands.h"
#include "codegen/passes/padded_output_views.h"
#include "codegen/passes/reduction_dims_to_rows.h"
#include "codegen/passes/reduction_fusion.h"
#include "codegen/passes/split_reductions.h"
#include "codegen/cuda_host/segment_builder.h"
#include "codegen/schedule/order_steps_for_memory.h"
#include "codegen/schedule/sink_views_to_first_reader.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

class CudaPipelineBackend : public Backend {
 public:
  CudaPipelineBackend(const CudaTarget& target, BackendOptions options, HostProgram program)
      : target_(target), options_(std::move(options)), given_program_(std::move(program)) {}

  const NativeTarget& native() const override { return native_; }

  void AddGraphPasses(PassRunner& passes) override {
    // Big 16-bit matmuls with odd leading dimensions get zero-padded operands (aligned kernels).
    if (options_.fusion) passes.Add(std::make_unique<PadMatmulOperands>());
    // A padded product's columns returned where the client lets the compiler choose the output's
    // strides: the strided view, not a contiguous copy (GPT-2's logits).
    if (options_.fusion)
      passes.Add(std::make_unique<PaddedOutputViews>(options_.free_layout_outputs));
    // A layer norm backward becomes a row node (grad_input) and a column node (parameter
    // gradients), each a reduction kernel below. The CPU keeps ATen's single kernel.
    passes.Add(std::make_unique<LayerNormBackwardSplit>());
    // The column half of a narrow norm (ConvNeXt's LayerNorm2d: 64 channels over 800k pixels) as
    // two-stage column sums over [A, B, N] views, enough blocks to fill the GPU, reading the
    // 16-bit gradient the f32 one was cast from (layer-norm-grad-narrow-reads: off, as before).
    if (options_.fusion)
      passes.Add(std::make_unique<LayerNormParamGradSplit>(LayerNormParamGradSplit::Options{
          .narrow_gradient = !passes.disabled("layer-norm-grad-narrow-reads")}));
    // Cross-entropy's backward: the one-hot nll gradient becomes the log_softmax backward's
    // prologue.
    if (options_.fusion) passes.Add(std::make_unique<NllLossBackwardToPointwise>());
    // Cross-entropy's forward: the target's log-probability picked inside the row kernel that
    // computes it, so the log-probabilities are never written.
    if (options_.fusion) passes.Add(std::make_unique<NllLossForwardToRows>());
    // Convolutions' activations channels-last (no cuDNN transposes around each), chosen while
    // the norms are still ATen nodes: the norm rewrites below then see their inputs' layouts.
    if (options_.fusion)
      passes.Add(std::make_unique<ChannelsLastLayout>(
          options_.free_layout_outputs, !passes.disabled("channels-last-permutes")));
    // Convolution biases as Inductor's GPU lowering has them (after the layout pass, whose
    // strides the new values take): the forward's bias add and the backward's bias gradient
    // become graph ops (a pointwise add, a sum) that fuse with their neighbours, where ATen
    // would run a separate add and a bf16 reduction kernel per convolution.
    if (options_.fusion) {
      passes.Add(std::make_unique<ConvBiasPeel>());
      passes.Add(std::make_unique<ConvBackwardBiasGrad>());
    }
    passes.Add(std::make_unique<CudnnBatchNorm>());
    if (options_.fusion) {
      // Eval-mode norms: pointwise ops over the input, fused with their neighbours.
      passes.Add(std::make_unique<BatchNormInference>());
      // Training batch norms cuDNN does not take: statistics as row reductions, the rest fused.
      passes.Add(std::make_unique<BatchNormDecomposition>());
      // The views and pointwise ops it moved into the norms' permuted space are dead now.
      passes.Add(std::make_unique<DeadCodeElimination>());
    }
    // Reductions over middle or scattered dims become row reductions of a permuted view.
    if (options_.fusion) passes.Add(std::make_unique<ReductionDimsToRows>());
    // Row reductions with a few very long rows (the batch norms of 64-channel maps, full sums)
    // become two stages that fill the GPU; the chains they recomputed may be dead.
    if (options_.fusion) {
      passes.Add(std::make_unique<SplitReductions>());
      passes.Add(std::make_unique<DeadCodeElimination>());
    }
    // A norm's weight-gradient column sum recomputes the prologue it shares with the norm's row
    // kernel (Llama's RMSNorm backward), so that the row kernel takes the originals and neither
    // writes the shared values; the originals it no longer reads may be dead.
    if (options_.fusion) {
      passes.Add(std::make_unique<ColumnPrologueRecompute>());
      passes.Add(std::make_unique<DeadCodeElimination>());
    }
  }

  // Reductions and norms absorb their pointwise prologue and epilogue groups (row reductions).
  absl::Status RegroupPartition(const ir::Graph& graph, const FusionOptions& fusion,
                                Partition& partition) override {
    ASSIGN_OR_RETURN(bool regrouped, FuseRowReductions(graph, fusion, partition));
    (void)regrouped;  // the partition dump shows the result either way
    return absl::OkStatus();
  }

  // Each kernel keeps only the entry point its declared layout takes (entry_points.h): half the
  // NVRTC work. TCCD_DISABLE_PASSES=entry-points keeps both, as before (pipeline.cc).
  // Then the copies whose inputs and outputs are contiguous along different dims, left on the
  // strided entry, become tiled kernels where the cost rule of tile_kernels.h says it pays.
  absl::Status SpecializeKernels(const schedule::Schedule& schedule,
                                 std::vector<PointwiseKernel>& kernels) override {
    RETURN_IF_ERROR(ChooseCudaEntries(schedule, target_.cc_major, kernels,
                                      options_.fixed_layout_entries, options_.index_fixed_entries));
    if (!options_.tile_kernels) return absl::OkStatus();
    ASSIGN_OR_RETURN(int tiled, ChooseTileKernels(schedule, kernels));
    (void)tiled;  // the kernels' IR dump shows them
    return absl::OkStatus();
  }

  // Kernels -> one cubin (NVRTC); Finish embeds it in the host library.
  absl::Status CompileKernels(const std::vector<PointwiseKernel>& kernels,
                              CompileOutput& out) override {
    for (const PointwiseKernel& k : kernels) kernel_symbols_.push_back(k.name);
    if (kernels.empty() || !options_.machine_code) return absl::OkStatus();
    if (options_.cuda_one_program) {
      ASSIGN_OR_RETURN(module_, CompileCudaKernels(kernels, target_));
    } else {
      // One relocatable cubin per distinct kernel, keyed by its content (reused ones are only
      // linked), then nvJitLink makes the graph's one cubin.
      ASSIGN_OR_RETURN(std::string nvrtc, CudaCompilerVersion());
      ASSIGN_OR_RETURN(
          CudaKernelObjectsResult objects,
          CompileCudaKernelObjects(kernels, target_,
                                   {.fingerprint = absl::StrCat(options_.fingerprint, "/", nvrtc),
                                    .cache = options_.kernel_cache,
                                    .threads = options_.threads,
                                    .progress = options_.progress,
                                    .test_reject_ops = options_.test_reject_kernel_ops}));
      module_ = std::move(objects.module);
      out.new_kernel_objects = std::move(objects.new_objects);
      out.kernels_compiled = objects.kernels_compiled;
      out.kernels_reused = objects.kernels_reused;
    }
    options_.dump("kernels.cu", module_.cuda_source);
    options_.dump("kernels.ptx", module_.ptx);
    return absl::OkStatus();
  }

  // Matmuls become cuBLASLt calls; runs of native work become one call each. Inside each run
  // the steps are ordered so big intermediates die early (after MatchGemms: matmuls move too;
  // before the segments pack their workspaces by lifetime). Views then sink to their first
  // reader, to join its run (only worth it when segments are formed:
  // TCCD_DISABLE_PASSES=segments skips both; matmuls no segment takes stay ATen ops).
  absl::Status RunSchedulePasses(PassRunner& passes, schedule::Schedule& schedule) override {
    segments_ = std::make_unique<SegmentBuilder>(kernel_symbols_, native_.artifact,
                                                 options_.released_inputs,
                                                 options_.gemm_workspace_bytes);
    MatchGemms gemms;
    schedule::OrderStepsForMemory memory_order;
    schedule::SinkViewsToFirstReader sink_views;
    RETURN_IF_ERROR(passes.Run(gemms, schedule));
    RETURN_IF_ERROR(passes.Run(memory_order, schedule));
    if (!passes.disabled(segments_->name())) RETURN_IF_ERROR(passes.Run(sink_views, schedule));
    return passes.Run(*segments_, schedule);
  }

  // The host library launches the kernels on the caller's stream, one exported entry point per
  // kernel and per segment; the cubin and PTX ship beside it for inspection.
  absl::Status Finish(const std::vector<PointwiseKernel>& kernels, CompileOutput& out) override {
    if (!options_.machine_code) return absl::OkStatus();
    HostProgram program = segments_ != nullptr ? segments_->program() : given_program_;
    // Sized gemms are never timed (their objects are made on the step's path), so their
    // module keeps tune 0 and its bytes; static ones may use what their segment reserves.
    for (GemmSpec& gemm : program.gemms)
      gemm.tune = gemm.sized ? 0 : GemmTuneWord(options_.gemm_autotune, options_.gemm_workspace_bytes);
    if (!kernels.empty() || !program.empty()) {
      ASSIGN_OR_RETURN(std::string host, BuildCudaHostLibrary(module_, program));
      out.artifacts.push_back({native_.artifact, v1::CUDA_HOST_OBJECT, std::move(host)});
    }
    if (!kernels.empty()) {
      out.artifacts.push_back({"kernels.cubin", v1::CUBIN, std::move(module_.cubin)});
      out.artifacts.push_back({"kernels.ptx", v1::TEXT, std::move(module_.ptx)});
    }
    return absl::OkStatus();
  }

  int NumLibraryCalls() const override {
    return segments_ != nullptr ? static_cast<int>(segments_->program().gemms.size()) : 0;
  }

 private:
  const NativeTarget native_{
      .artifact = kCudaHostLibraryName, .abi = "tccd-cuda-1", .kernel_kind = "cuda_pointwise"};
  CudaTarget target_;
  BackendOptions options_;
  CudaModule module_;
  std::vector<std::string> kernel_symbols_;  // kernel i's symbol, as the segments name it
  std::unique_ptr<SegmentBuilder> segments_;
  HostProgram given_program_;  // used when no schedule passes ran (symbolic plans)
};

}  // namespace

std::unique_ptr<Backend> MakeCudaBackend(const CudaTarget& target, BackendOptions options,
                                         HostProgram program) {
  return std::make_unique<CudaPipelineBackend>(target, std::move(options), std::move(program));
}

}  // namespace tccd::codegen
