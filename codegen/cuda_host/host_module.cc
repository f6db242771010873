// EmitHostModule: constants, state and entry points of one kernels_cuda.so (see host_module.h).
//
// Every struct here mirrors one of runtime/tccd_cuda_runtime.h field by field; CheckLayout
// compares LLVM's layout with the C compiler's (offsetof/sizeof) before anything is emitted.
#include "codegen/cuda_host/host_module.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "codegen/cuda_host/runtime/tccd_cuda_runtime.h"
#include "codegen/cuda_host/runtime/tccd_cuda_tune.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

static_assert(TCCD_RT_MAX_PARAM_BYTES == kCudaMaxParamBytes,
              "the runtime's parameter buffer must hold the largest parameter block");
static_assert(TCCD_RT_TUNE_SWAP == kGemmTuneSwap && TCCD_RT_TUNE_CANDIDATES(0x1ff) == 0xff,
              "GemmSpec::tune is tccd_rt_gemm.tune");
static_assert(TCCD_RT_TUNE_WORKSPACE_MIB(37 << kGemmTuneWorkspaceShift) == 37 &&
                  (kLegacyGemmWorkspaceBytes >> 20) == 8,
              "GemmSpec::tune's workspace bits are TCCD_RT_TUNE_WORKSPACE_MIB");

// The runtime's structs as LLVM types (opaque pointers: every pointer field is `ptr`).
struct RuntimeTypes {
  llvm::StructType* gemm;
  llvm::StructType* gemm_state;
  llvm::StructType* operand;
  llvm::StructType* step;
  llvm::StructType* segment;
  llvm::StructType* kernel;
  llvm::StructType* function;
  llvm::StructType* context;
  llvm::StructType* module;
};

RuntimeTypes MakeRuntimeTypes(llvm::LLVMContext& c) {
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  llvm::Type* i32 = llvm::Type::getInt32Ty(c);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  RuntimeTypes t;
  // name, contig_entry, strided_entry, shape, numel, rank, num_operands, block_size,
  // elements_per_thread, contig_param_bytes, strided_param_bytes, kind, num_reduced_dims, grid,
  // row_operands
  t.kernel = llvm::StructType::create(
      c, {ptr, ptr, ptr, ptr, i64, i32, i32, i32, i32, i32, i32, i32, i32, i64, i64},
      "tccd_rt_kernel");
  // contig, strided, contig_blocks_per_sm, strided_blocks_per_sm
  t.function = llvm::StructType::create(c, {ptr, ptr, i32, i32}, "tccd_rt_function");
  // ctx, module, num_sms, reserved
  t.context = llvm::StructType::create(c, {ptr, ptr, i32, i32}, "tccd_rt_context");
  // image, image_size, kernels, contexts, functions, num_kernels, num_gemms, gemms, gemm_states
  t.module =
      llvm::StructType::create(c, {ptr, i64, ptr, ptr, ptr, i32, i32, ptr, ptr}, "tccd_rt_module");
  llvm::Type* f32 = llvm::Type::getFloatTy(c);
  // name, m, n, k, lda, ldb, ldd, batch, stride_a, stride_b, stride_d, trans_a, trans_b, dtype,
  // compute, epilogue, alpha, tune
  t.gemm = llvm::StructType::create(
      c, {ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i32, i32, i32, i32, i32, f32, i32},
      "tccd_rt_gemm");
  // desc, layout_a, layout_b, layout_d, algo[8], workspace_size, swapped, device
  t.gemm_state = llvm::StructType::create(
      c, {ptr, ptr, ptr, ptr, llvm::ArrayType::get(i64, 8), i64, i32, i32}, "tccd_rt_gemm_state");
  // byte_offset, index, reserved
  t.operand = llvm::StructType::create(c, {i64, i32, i32}, "tccd_rt_operand");
  // strides, kind, index, first_operand, num_operands
  t.step = llvm::StructType::create(c, {ptr, i32, i32, i32, i32}, "tccd_rt_step");
  // name, steps, operands, num_steps, num_io, workspace_bytes, gemm_workspace_offset,
  // gemm_workspace_bytes
  t.segment =
      llvm::StructType::create(c, {ptr, ptr, ptr, i32, i32, i64, i64, i64}, "tccd_rt_segment");
  return t;
}

absl::Status CheckStruct(const llvm::DataLayout& layout, llvm::StructType* type, size_t size,
                         std::initializer_list<size_t> offsets) {
  const llvm::StructLayout* l = layout.getStructLayout(type);
  bool same = l->getSizeInBytes() == size && offsets.size() == type->getNumElements();
  unsigned i = 0;
  for (size_t offset : offsets) same = same && l->getElementOffset(i++) == offset;
  if (!same) {
    return absl::InternalError(absl::StrCat("LLVM's layout of ", type->getName().str(),
                                            " differs from tccd_cuda_runtime.h's"));
  }
  return absl::OkStatus();
}

#define TCCD_FIELD(type, field) offsetof(struct type, field)

absl::Status CheckLayout(const llvm::DataLayout& layout, const RuntimeTypes& t) {
  RETURN_IF_ERROR(
      CheckStruct(layout, t.kernel, sizeof(tccd_rt_kernel),
                  {TCCD_FIELD(tccd_rt_kernel, name), TCCD_FIELD(tccd_rt_kernel, contig_entry),
                   TCCD_FIELD(tccd_rt_kernel, strided_entry), TCCD_FIELD(tccd_rt_kernel, shape),
                   TCCD_FIELD(tccd_rt_kernel, numel), TCCD_FIELD(tccd_rt_kernel, rank),
                   TCCD_FIELD(tccd_rt_kernel, num_operands), TCCD_FIELD(tccd_rt_kernel, block_size),
                   TCCD_FIELD(tccd_rt_kernel, elements_per_thread),
                   TCCD_FIELD(tccd_rt_kernel, contig_param_bytes),
                   TCCD_FIELD(tccd_rt_kernel, strided_param_bytes),
                   TCCD_FIELD(tccd_rt_kernel, kind), TCCD_FIELD(tccd_rt_kernel, num_reduced_dims),
                   TCCD_FIELD(tccd_rt_kernel, grid), TCCD_FIELD(tccd_rt_kernel, row_operands)}));
  RETURN_IF_ERROR(
      CheckStruct(layout, t.function, sizeof(tccd_rt_function),
                  {TCCD_FIELD(tccd_rt_function, contig), TCCD_FIELD(tccd_rt_function, strided),
                   TCCD_FIELD(tccd_rt_function, contig_blocks_per_sm),
                   TCCD_FIELD(tccd_rt_function, strided_blocks_per_sm)}));
  RETURN_IF_ERROR(
      CheckStruct(layout, t.context, sizeof(tccd_rt_context),
                  {TCCD_FIELD(tccd_rt_context, ctx), TCCD_FIELD(tccd_rt_context, module),
                   TCCD_FIELD(tccd_rt_context, num_sms), TCCD_FIELD(tccd_rt_context, reserved)}));
  RETURN_IF_ERROR(
      CheckStruct(layout, t.module, sizeof(tccd_rt_module),
                  {TCCD_FIELD(tccd_rt_module, image), TCCD_FIELD(tccd_rt_module, image_size),
                   TCCD_FIELD(tccd_rt_module, kernels), TCCD_FIELD(tccd_rt_module, contexts),
                   TCCD_FIELD(tccd_rt_module, functions), TCCD_FIELD(tccd_rt_module, num_kernels),
                   TCCD_FIELD(tccd_rt_module, num_gemms), TCCD_FIELD(tccd_rt_module, gemms),
                   TCCD_FIELD(tccd_rt_module, gemm_states)}));
  RETURN_IF_ERROR(CheckStruct(
      layout, t.gemm, sizeof(tccd_rt_gemm),
      {TCCD_FIELD(tccd_rt_gemm, name), TCCD_FIELD(tccd_rt_gemm, m), TCCD_FIELD(tccd_rt_gemm, n),
       TCCD_FIELD(tccd_rt_gemm, k), TCCD_FIELD(tccd_rt_gemm, lda), TCCD_FIELD(tccd_rt_gemm, ldb),
       TCCD_FIELD(tccd_rt_gemm, ldd), TCCD_FIELD(tccd_rt_gemm, batch),
       TCCD_FIELD(tccd_rt_gemm, stride_a), TCCD_FIELD(tccd_rt_gemm, stride_b),
       TCCD_FIELD(tccd_rt_gemm, stride_d), TCCD_FIELD(tccd_rt_gemm, trans_a),
       TCCD_FIELD(tccd_rt_gemm, trans_b), TCCD_FIELD(tccd_rt_gemm, dtype),
       TCCD_FIELD(tccd_rt_gemm, compute), TCCD_FIELD(tccd_rt_gemm, epilogue),
       TCCD_FIELD(tccd_rt_gemm, alpha), TCCD_FIELD(tccd_rt_gemm, tune)}));
  RETURN_IF_ERROR(CheckStruct(
      layout, t.gemm_state, sizeof(tccd_rt_gemm_state),
      {TCCD_FIELD(tccd_rt_gemm_state, desc), TCCD_FIELD(tccd_rt_gemm_state, layout_a),
       TCCD_FIELD(tccd_rt_gemm_state, layout_b), TCCD_FIELD(tccd_rt_gemm_state, layout_d),
       TCCD_FIELD(tccd_rt_gemm_state, algo), TCCD_FIELD(tccd_rt_gemm_state, workspace_size),
       TCCD_FIELD(tccd_rt_gemm_state, swapped), TCCD_FIELD(tccd_rt_gemm_state, device)}));
  RETURN_IF_ERROR(
      CheckStruct(layout, t.operand, sizeof(tccd_rt_operand),
                  {TCCD_FIELD(tccd_rt_operand, byte_offset), TCCD_FIELD(tccd_rt_operand, index),
                   TCCD_FIELD(tccd_rt_operand, reserved)}));
  RETURN_IF_ERROR(
      CheckStruct(layout, t.step, sizeof(tccd_rt_step),
                  {TCCD_FIELD(tccd_rt_step, strides), TCCD_FIELD(tccd_rt_step, kind),
                   TCCD_FIELD(tccd_rt_step, index), TCCD_FIELD(tccd_rt_step, first_operand),
                   TCCD_FIELD(tccd_rt_step, num_operands)}));
  RETURN_IF_ERROR(CheckStruct(
      layout, t.segment, sizeof(tccd_rt_segment),
      {TCCD_FIELD(tccd_rt_segment, name), TCCD_FIELD(tccd_rt_segment, steps),
       TCCD_FIELD(tccd_rt_segment, operands), TCCD_FIELD(tccd_rt_segment, num_steps),
       TCCD_FIELD(tccd_rt_segment, num_io), TCCD_FIELD(tccd_rt_segment, workspace_bytes),
       TCCD_FIELD(tccd_rt_segment, gemm_workspace_offset),
       TCCD_FIELD(tccd_rt_segment, gemm_workspace_bytes)}));
  return absl::OkStatus();
}

#undef TCCD_FIELD

// A private constant global: no symbol in the object, mergeable where LLVM sees fit.
llvm::GlobalVariable* AddConstant(llvm::Module& m, llvm::Constant* init, const std::string& name,
                                  unsigned align = 1) {
  auto* g = new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                     llvm::GlobalValue::PrivateLinkage, init, name);
  g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  g->setAlignment(llvm::Align(align));
  return g;
}

llvm::Constant* AddString(llvm::Module& m, const std::string& text, const std::string& name) {
  return AddConstant(m, llvm::ConstantDataArray::getString(m.getContext(), text), name);
}

// A runtime function: defined in tccd_cuda_runtime.o, hidden, so the stubs call it directly and
// the .so does not export it.
llvm::Function* DeclareRuntime(llvm::Module& m, llvm::Type* result,
                               llvm::ArrayRef<llvm::Type*> params, const char* name) {
  auto* f = llvm::Function::Create(llvm::FunctionType::get(result, params, /*isVarArg=*/false),
                                   llvm::GlobalValue::ExternalLinkage, name, m);
  f->setVisibility(llvm::GlobalValue::HiddenVisibility);
  f->setDoesNotThrow();
  return f;
}

// An exported entry point whose body is `return callee(prefix..., its own arguments...)`.
void DefineForwarder(llvm::Module& m, const std::string& name, llvm::Function* callee,
                     llvm::ArrayRef<llvm::Value*> prefix, llvm::ArrayRef<llvm::Type*> params) {
  llvm::Type* result = callee->getReturnType();
  auto* f = llvm::Function::Create(llvm::FunctionType::get(result, params, /*isVarArg=*/false),
                                   llvm::GlobalValue::ExternalLinkage, name, m);
  f->setVisibility(llvm::GlobalValue::DefaultVisibility);
  f->setDoesNotThrow();  // no unwind tables: nothing here throws
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(m.getContext(), "entry", f));
  std::vector<llvm::Value*> args(prefix.begin(), prefix.end());
  for (llvm::Argument& arg : f->args()) args.push_back(&arg);
  llvm::CallInst* call = b.CreateCall(callee, args);
  call->setTailCall();
  b.CreateRet(call);
}

}  // namespace

absl::Status EmitHostModule(const CudaModule& cuda, const HostProgram& program, llvm::Module& m) {
  const std::vector<CudaKernel>& kernels = cuda.kernels;
  RET_CHECK(!kernels.empty() || !program.empty());
  llvm::LLVMContext& c = m.getContext();
  const RuntimeTypes t = MakeRuntimeTypes(c);
  RETURN_IF_ERROR(CheckLayout(m.getDataLayout(), t));
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  llvm::Type* i32 = llvm::Type::getInt32Ty(c);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  auto i32c = [&](int64_t v) { return llvm::ConstantInt::get(i32, v); };
  auto i64c = [&](int64_t v) { return llvm::ConstantInt::get(i64, v); };

  llvm::Constant* null = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(c));
  // The cubin, 64-byte aligned like a section of its own (the driver reads its ELF headers).
  llvm::Constant* image = null;
  if (!kernels.empty()) {
    image = AddConstant(m, llvm::ConstantDataArray::getString(c, cuda.cubin, /*AddNull=*/false),
                        "tccd_cubin", 64);
  }

  std::vector<llvm::Constant*> descriptors;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const CudaKernelLaunchInfo& info = kernels[k].launch;
    const std::vector<int64_t>& shape = kernels[k].ir.shape;
    const std::string prefix = absl::StrCat("tccd_k", k, "_");
    llvm::Constant* shape_ptr = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(c));
    if (!shape.empty()) {
      std::vector<uint64_t> dims(shape.begin(), shape.end());
      shape_ptr = AddConstant(m, llvm::ConstantDataArray::get(c, dims), prefix + "shape", 8);
    }
    descriptors.push_back(llvm::ConstantStruct::get(
        t.kernel, {AddString(m, info.name, prefix + "name"),
                   AddString(m, info.contig_entry, prefix + "contig"),
                   AddString(m, info.strided_entry, prefix + "strided"), shape_ptr,
                   i64c(info.numel), i32c(info.rank), i32c(info.num_operands),
                   i32c(info.block_size), i32c(info.elements_per_thread),
                   i32c(info.contig_param_bytes), i32c(info.strided_param_bytes),
                   i32c(static_cast<int>(info.kind)), i32c(info.num_reduced_dims), i64c(info.grid),
                   i64c(static_cast<int64_t>(info.row_operands))}));
  }
  const auto num_kernels = static_cast<uint64_t>(kernels.size());
  llvm::Constant* table = null;
  if (num_kernels > 0) {
    table = AddConstant(
        m, llvm::ConstantArray::get(llvm::ArrayType::get(t.kernel, num_kernels), descriptors),
        "tccd_kernels", 8);
  }
  auto f32c = [&](float v) { return llvm::ConstantFP::get(llvm::Type::getFloatTy(c), v); };
  std::vector<llvm::Constant*> gemms;
  for (size_t g = 0; g < program.gemms.size(); ++g) {
    const GemmSpec& s = program.gemms[g];
    gemms.push_back(llvm::ConstantStruct::get(
        t.gemm, {AddString(m, s.name, absl::StrCat("tccd_gemm", g, "_name")),
                 i64c(s.sized ? TCCD_RT_GEMM_SIZED : s.m), i64c(s.n), i64c(s.k), i64c(s.lda),
                 i64c(s.ldb), i64c(s.ldd), i64c(s.batch), i64c(s.stride_a), i64c(s.stride_b),
                 i64c(s.stride_d), i32c(s.trans_a), i32c(s.trans_b), i32c(s.dtype), i32c(s.compute),
                 i32c(s.epilogue), f32c(s.alpha), i32c(s.tune)}));
  }
  const auto num_gemms = static_cast<uint64_t>(gemms.size());
  llvm::Constant* gemm_table = null;
  if (num_gemms > 0) {
    gemm_table =
        AddConstant(m, llvm::ConstantArray::get(llvm::ArrayType::get(t.gemm, num_gemms), gemms),
                    "tccd_gemms", 8);
  }

  // Mutable state the runtime fills in, zero at load time (.bss): internal, so no export.
  auto add_state = [&](llvm::Type* element, uint64_t count, const char* name) {
    llvm::Type* type = llvm::ArrayType::get(element, count);
    auto* g =
        new llvm::GlobalVariable(m, type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
                                 llvm::Constant::getNullValue(type), name);
    g->setAlignment(llvm::Align(8));
    return g;
  };
  llvm::GlobalVariable* contexts = add_state(t.context, TCCD_RT_MAX_CONTEXTS, "tccd_contexts");
  llvm::Constant* functions =
      num_kernels > 0 ? static_cast<llvm::Constant*>(add_state(
                            t.function, TCCD_RT_MAX_CONTEXTS * num_kernels, "tccd_functions"))
                      : null;
  llvm::Constant* gemm_states =
      num_gemms > 0 ? static_cast<llvm::Constant*>(add_state(
                          t.gemm_state, TCCD_RT_MAX_CONTEXTS * num_gemms, "tccd_gemm_states"))
                    : null;

  llvm::GlobalVariable* module_descriptor = AddConstant(
      m,
      llvm::ConstantStruct::get(
          t.module, {image, i64c(num_kernels > 0 ? static_cast<int64_t>(cuda.cubin.size()) : 0),
                     table, contexts, functions, i32c(static_cast<int64_t>(num_kernels)),
                     i32c(static_cast<int64_t>(num_gemms)), gemm_table, gemm_states}),
      "tccd_module", 8);

  // The entry points.
  llvm::Function* launch = DeclareRuntime(m, i32, {ptr, i32, ptr, ptr, ptr}, "tccd_rt_launch");
  llvm::Function* init = DeclareRuntime(m, i32, {ptr}, "tccd_rt_init");
  llvm::Function* last_error = DeclareRuntime(m, ptr, {}, "tccd_rt_last_error");
  llvm::Function* launch_sized = nullptr;
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (kernels[k].launch.numel < 0) {
      // Run-time sizes (ABI "tccd-cuda-sym-1"):
      // int <name>(void* const* data, const int64_t* strides, const int64_t* shape, void* stream)
      if (launch_sized == nullptr)
        launch_sized =
            DeclareRuntime(m, i32, {ptr, i32, ptr, ptr, ptr, ptr}, "tccd_rt_launch_sized");
      DefineForwarder(m, kernels[k].launch.name, launch_sized,
                      {module_descriptor, i32c(static_cast<int64_t>(k))}, {ptr, ptr, ptr, ptr});
      continue;
    }
    // int <name>(void* const* data, const int64_t* strides, void* stream)
    DefineForwarder(m, kernels[k].launch.name, launch,
                    {module_descriptor, i32c(static_cast<int64_t>(k))}, {ptr, ptr, ptr});
  }
  llvm::Function* run_segment =
      DeclareRuntime(m, i32, {ptr, ptr, ptr, ptr, ptr}, "tccd_rt_run_segment");
  for (size_t s = 0; s < program.segments.size(); ++s) {
    const SegmentSpec& segment = program.segments[s];
    const std::string prefix = absl::StrCat("tccd_seg", s, "_");
    std::vector<llvm::Constant*> operands, steps;
    for (size_t i = 0; i < segment.steps.size(); ++i) {
      const SegmentStepSpec& step = segment.steps[i];
      llvm::Constant* strides = null;
      if (!step.strides.empty()) {
        std::vector<uint64_t> values(step.strides.begin(), step.strides.end());
        strides = AddConstant(m, llvm::ConstantDataArray::get(c, values),
                              absl::StrCat(prefix, "strides", i), 8);
      }
      steps.push_back(llvm::ConstantStruct::get(
          t.step, {strides, i32c(static_cast<int>(step.kind)), i32c(step.index),
                   i32c(static_cast<int64_t>(operands.size())),
                   i32c(static_cast<int64_t>(step.operands.size()))}));
      for (const SegmentOperandSpec& o : step.operands)
        operands.push_back(
            llvm::ConstantStruct::get(t.operand, {i64c(o.byte_offset), i32c(o.io_index), i32c(0)}));
    }
    RET_CHECK(!steps.empty() && !operands.empty());
    llvm::Constant* step_table =
        AddConstant(m, llvm::ConstantArray::get(llvm::ArrayType::get(t.step, steps.size()), steps),
                    prefix + "steps", 8);
    llvm::Constant* operand_table = AddConstant(
        m, llvm::ConstantArray::get(llvm::ArrayType::get(t.operand, operands.size()), operands),
        prefix + "operands", 8);
    llvm::Constant* descriptor = AddConstant(
        m,
        llvm::ConstantStruct::get(
            t.segment, {AddString(m, segment.name, prefix + "name"), step_table, operand_table,
                        i32c(static_cast<int64_t>(steps.size())), i32c(segment.num_io),
                        i64c(segment.workspace_bytes), i64c(segment.gemm_workspace_offset),
                        i64c(segment.gemm_workspace_bytes)}),
        prefix + "descriptor", 8);
    // int <name>(void* const* io, void* workspace, void* stream)
    DefineForwarder(m, segment.name, run_segment, {module_descriptor, descriptor}, {ptr, ptr, ptr});
  }
  // int <name>(void* const* data, const int64_t* dims, void* workspace, uint64_t bytes,
  //            void* stream): a gemm with run-time sizes (kCudaSizedGemmAbi).
  llvm::Function* gemm_sized = nullptr;
  for (size_t g = 0; g < program.gemms.size(); ++g) {
    if (!program.gemms[g].sized) continue;
    if (gemm_sized == nullptr)
      gemm_sized =
          DeclareRuntime(m, i32, {ptr, i32, ptr, ptr, ptr, i64, ptr}, "tccd_rt_gemm_sized");
    DefineForwarder(m, program.gemms[g].name, gemm_sized,
                    {module_descriptor, i32c(static_cast<int64_t>(g))}, {ptr, ptr, ptr, i64, ptr});
  }
  // int tccd_cuda_gemm_stats(uint64_t* out, int n): the sized gemm cache's counters (the plan
  // profile prints them), only where a gemm is sized.
  if (gemm_sized != nullptr) {
    DefineForwarder(m, kCudaGemmStatsEntry,
                    DeclareRuntime(m, i32, {ptr, i32}, "tccd_rt_gemm_sized_stats"), {}, {ptr, i32});
  }
  // int tccd_cuda_set_tune_table(void* table): the client's table of autotuning's choices
  // (runtime/tccd_cuda_tune.h), only where a gemm is tuned; called again after loading, it
  // re-reads the table for this module's loaded gemms.
  if (HasTunedGemm(program)) {
    DefineForwarder(m, kCudaSetTuneTableEntry,
                    DeclareRuntime(m, i32, {ptr, ptr}, "tccd_rt_set_tune_table"),
                    {module_descriptor}, {ptr});
  }
  DefineForwarder(m, "tccd_cuda_init", init, {module_descriptor}, {});
  DefineForwarder(m, "tccd_cuda_last_error", last_error, {}, {});
  return absl::OkStatus();
}

}  // namespace tccd::codegen
