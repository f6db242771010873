// cuda_row_gpu_gen CASES OUT_DIR: the row-reduction GPU check's compile half (here, no GPU).
// CASES holds graphs in IR text, each after a line "=== <name>" (cuda_row_gpu_check.py
// --emit-cases writes it); each must partition, on the CUDA target, into exactly one
// row-reduction kernel (beside arange steps: the class index of the loss rows, input index -1
// in the manifest), which is named <name>. Writes OUT_DIR/kernels_cuda.so (all kernels,
// sm_90) and OUT_DIR/manifest.txt, one line per case:
//   <name> shape=<d,..> inputs=<graph input index,..>
//   outputs=<node>#<output>:<dtype>:<sizes>:<strides>;... expected=<strides of every operand in the
//   iteration space, operand-major>
// cuda_row_gpu_check.py --run OUT_DIR then checks and times them with PyTorch on a GPU.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda_host/cuda_host.h"
#include "codegen/ir/parser.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/padded_row_stores.h"
#include "codegen/passes/reduction_fusion.h"

using namespace tccd::codegen;  // NOLINT: a test tool

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CASES OUT_DIR\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  std::vector<std::pair<std::string, std::string>> cases;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("=== ", 0) == 0) {
      cases.push_back({line.substr(4), ""});
    } else if (!cases.empty()) {
      cases.back().second += line + "\n";
    }
  }
  std::vector<PointwiseKernel> kernels;
  std::string manifest;
  for (const auto& [name, text] : cases) {
    auto graph = tccd::ir::ParseGraph(text);
    if (!graph.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), graph.status().ToString().c_str());
      return 1;
    }
    auto p = PartitionForFusion(*graph, {});
    if (p.ok()) {
      auto changed = FuseRowReductions(*graph, {}, *p);
      // And, as the CUDA pipeline does, a zero pad of a row kernel's output becomes its padded
      // store (padded_row_stores.h).
      if (changed.ok()) changed = AbsorbZeroTailPads(*graph, *p);
      if (!changed.ok()) p = changed.status();
    }
    // One row-reduction kernel; besides it only arange steps (the class index of the loss
    // rewrites, which the kernel computes in place and never reads).
    int fused = -1, others = 0;
    if (p.ok()) {
      for (const ScheduleEntry& e : p->schedule) {
        if (e.fused) {
          fused = fused == -1 ? e.index : -2;
        } else if (graph->nodes[e.index].target != "aten::arange.default") {
          ++others;
        }
      }
    }
    if (!p.ok() || fused < 0 || others > 0 || p->groups[fused].num_reduced_dims == 0) {
      std::fprintf(stderr, "%s: not one row-reduction kernel:\n%s\n", name.c_str(),
                   p.ok() ? PrintPartition(*graph, *p).c_str() : p.status().ToString().c_str());
      return 1;
    }
    const FusionGroup& group = p->groups[fused];
    auto kernel = BuildPointwiseKernel(*graph, group, name);
    if (!kernel.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), kernel.status().ToString().c_str());
      return 1;
    }
    kernels.push_back(*kernel);
    std::vector<int64_t> expected;
    std::vector<std::string> inputs, outputs;
    for (const tccd::ir::ValueRef& r : group.inputs) {
      if (!r.is_input() && graph->nodes[r.node].target == "aten::arange.default") {
        inputs.push_back("-1");  // the class index: cuda_row_gpu_check.py passes an arange
        for (int64_t s : GroupOperandStrides(*graph, group, r, false)) expected.push_back(s);
        continue;
      }
      if (!r.is_input()) {
        std::fprintf(stderr, "%s: a kernel input is not a graph input\n", name.c_str());
        return 1;
      }
      inputs.push_back(absl::StrCat(r.output));
      for (int64_t s : GroupOperandStrides(*graph, group, r, false)) expected.push_back(s);
    }
    for (const tccd::ir::ValueRef& r : group.outputs) {
      const tccd::ir::TensorType& t = graph->type_of(r);
      outputs.push_back(absl::StrCat(r.node, "#", r.output, ":", tccd::ir::DTypeName(t.dtype), ":",
                                     absl::StrJoin(t.sizes, ","), ":",
                                     absl::StrJoin(t.strides, ",")));
      for (int64_t s : GroupOperandStrides(*graph, group, r, true)) expected.push_back(s);
    }
    absl::StrAppend(&manifest, name, " shape=", absl::StrJoin(group.shape, ","),
                    " inputs=", absl::StrJoin(inputs, ","),
                    " outputs=", absl::StrJoin(outputs, ";"),
                    " expected=", absl::StrJoin(expected, ","), "\n");
  }
  auto module = CompileCudaKernels(kernels, CudaTarget{.cc_major = 9, .cc_minor = 0});
  if (!module.ok()) {
    std::fprintf(stderr, "CompileCudaKernels: %s\n", module.status().ToString().c_str());
    return 1;
  }
  auto so = BuildCudaHostLibrary(*module);
  if (!so.ok()) {
    std::fprintf(stderr, "BuildCudaHostLibrary: %s\n", so.status().ToString().c_str());
    return 1;
  }
  const std::string dir = argv[2];
  std::ofstream(dir + "/kernels_cuda.so", std::ios::binary) << *so;
  std::ofstream(dir + "/kernels.cu") << module->cuda_source;
  std::ofstream(dir + "/manifest.txt") << manifest;
  std::printf("%zu kernels -> %s/kernels_cuda.so\n", kernels.size(), dir.c_str());
  return 0;
}
