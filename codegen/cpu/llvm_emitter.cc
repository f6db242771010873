// PointwiseKernel -> LLVM IR: entry checks, the contiguous fast path, the strided loop nest and
// the per-point body (one LLVM value per kernel instruction).
//
// Value representation: f32 float, f64 double, integers iN (u8 is i8 with unsigned semantics),
// bool i1 in registers and i8 (0/1) in memory, f16/bf16 as raw i16 bit patterns. Conversions
// between f16/bf16 and f32 are plain integer/float arithmetic (the algorithms c10 uses), so
// they vectorise and never call compiler-rt helpers.
#include "codegen/cpu/llvm_emitter.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/cpu/libm_symbols.h"
#include "codegen/cpu/vector_math.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace tccd::codegen {
namespace {

using ir::DType;

// u8 and bool compare, extend and convert as unsigned.
bool IsUnsigned(DType d) { return d == DType::kU8 || d == DType::kBool; }
uint64_t Bytes(DType d) { return static_cast<uint64_t>(ir::DTypeBytes(d)); }

// Builds a kernel's function. One instance per kernel; not reusable.
class KernelEmitter {
 public:
  KernelEmitter(const PointwiseKernel& kernel, llvm::Module& module)
      : k_(kernel), m_(module), ctx_(module.getContext()), b_(ctx_) {}

  absl::Status Emit();

 private:
  using AddressFn = std::function<llvm::Value*(int operand)>;

  llvm::Type* MemType(DType d);
  llvm::Type* RegType(DType d);

  void SetUpAliasScopes();
  void Annotate(llvm::Instruction* access, int operand);
  llvm::MDNode* VectorizeLoopMetadata();

  // A bottom-tested counted loop `for (iv = 0; iv < trip; ++iv)`, trip > 0. `carried` values
  // get a phi each; `step(carried_phis)` returns their next values. `body` emits into the loop
  // and may create blocks. Returns with the builder after the loop.
  void EmitLoop(
      llvm::Value* trip, const std::vector<llvm::Value*>& carried_init,
      const std::function<std::vector<llvm::Value*>(const std::vector<llvm::Value*>&)>& step,
      const std::function<void(llvm::Value* iv, const std::vector<llvm::Value*>&)>& body,
      llvm::MDNode* loop_md);

  void EmitNest(size_t level, const std::vector<llvm::Value*>& offsets);
  // Emits the body for one point; `address(op)` is the operand's element pointer. Records the
  // first failure in error_.
  void EmitPoint(const AddressFn& address);

  // Philox4x32-10's first word for (seed, offset, flat) as a uniform f32 in [0, 1) (kRandom).
  llvm::Value* PhiloxUniform(llvm::Value* seed, llvm::Value* offset, llvm::Value* flat);
  llvm::Value* Cast(llvm::Value* v, DType from, DType to);
  llvm::Value* F32FromHalf(llvm::Value* bits, DType from);
  llvm::Value* HalfFromF32(llvm::Value* f, DType to);
  llvm::Value* Binary(PwOp op, DType d, llvm::Value* a, llvm::Value* b);
  llvm::Value* Pow(DType d, llvm::Value* a, llvm::Value* b);
  llvm::Value* Unary(PwOp op, DType d, llvm::Value* x);
  llvm::Value* Compare(PwOp op, DType d, llvm::Value* a, llvm::Value* b);
  llvm::Value* CallLibm(const char* f32_name, DType d, llvm::Value* x);

  llvm::Constant* FloatConst(DType d, double v) { return llvm::ConstantFP::get(RegType(d), v); }
  llvm::Value* I32(uint32_t v) { return b_.getInt32(v); }

  const PointwiseKernel& k_;
  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  std::vector<llvm::Value*> bases_;     // per operand: element base pointer
  std::vector<llvm::Value*> strides_;   // [operand * rank + d], i64, loaded at entry
  std::vector<size_t> nest_dims_;       // dims of size > 1 or run-time size, outermost first
  std::vector<llvm::Value*> dims_;      // per dim: its size (i64), a constant unless kRuntimeDim
  std::vector<llvm::Value*> coords_;    // index kernels: per dim, the point's coordinate (i64)
  std::vector<llvm::MDNode*> scope_;    // per operand: !alias.scope
  std::vector<llvm::MDNode*> noalias_;  // per operand: !noalias (every other operand)
  absl::Status error_;                  // the first failure of EmitPoint
};

llvm::Type* KernelEmitter::MemType(DType d) {
  switch (d) {
    case DType::kF32:
      return b_.getFloatTy();
    case DType::kF64:
      return b_.getDoubleTy();
    case DType::kF16:
    case DType::kBF16:
    case DType::kI16:
      return b_.getInt16Ty();
    case DType::kI8:
    case DType::kU8:
    case DType::kBool:
      return b_.getInt8Ty();
    case DType::kI32:
      return b_.getInt32Ty();
    case DType::kI64:
      return b_.getInt64Ty();
  }
  return b_.getInt8Ty();
}

llvm::Type* KernelEmitter::RegType(DType d) {
  return d == DType::kBool ? b_.getInt1Ty() : MemType(d);
}

void KernelEmitter::SetUpAliasScopes() {
  llvm::MDBuilder mdb(ctx_);
  llvm::MDNode* domain = mdb.createAnonymousAliasScopeDomain(k_.name);
  std::vector<llvm::MDNode*> scopes;
  for (int op = 0; op < k_.num_operands(); ++op) {
    scopes.push_back(mdb.createAnonymousAliasScope(domain, "operand" + std::to_string(op)));
  }
  for (int op = 0; op < k_.num_operands(); ++op) {
    scope_.push_back(llvm::MDNode::get(ctx_, {scopes[op]}));
    llvm::SmallVector<llvm::Metadata*, 8> others;
    for (int other = 0; other < k_.num_operands(); ++other) {
      if (other != op) others.push_back(scopes[other]);
    }
    noalias_.push_back(llvm::MDNode::get(ctx_, others));
  }
}

void KernelEmitter::Annotate(llvm::Instruction* access, int operand) {
  access->setMetadata(llvm::LLVMContext::MD_alias_scope, scope_[operand]);
  access->setMetadata(llvm::LLVMContext::MD_noalias, noalias_[operand]);
}

llvm::MDNode* KernelEmitter::VectorizeLoopMetadata() {
  llvm::Metadata* enable[] = {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                              llvm::ConstantAsMetadata::get(b_.getTrue())};
  llvm::Metadata* ops[] = {
      nullptr, llvm::MDNode::get(ctx_, enable),
      llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.mustprogress")})};
  llvm::MDNode* md = llvm::MDNode::getDistinct(ctx_, ops);
  md->replaceOperandWith(0, md);  // a loop ID refers to itself
  return md;
}

void KernelEmitter::EmitLoop(
    llvm::Value* trip, const std::vector<llvm::Value*>& carried_init,
    const std::function<std::vector<llvm::Value*>(const std::vector<llvm::Value*>&)>& step,
    const std::function<void(llvm::Value* iv, const std::vector<llvm::Value*>&)>& body,
    llvm::MDNode* loop_md) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, "loop", fn_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "loop.exit", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  iv->addIncoming(b_.getInt64(0), pre);
  std::vector<llvm::Value*> phis;
  for (llvm::Value* init : carried_init) {
    llvm::PHINode* phi = b_.CreatePHI(init->getType(), 2, "off");
    phi->addIncoming(init, pre);
    phis.push_back(phi);
  }
  body(iv, phis);
  // The body may have created blocks; the latch is wherever it left the builder.
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  llvm::Value* next = b_.CreateAdd(iv, b_.getInt64(1), "i.next", /*HasNUW=*/true, /*HasNSW=*/true);
  iv->addIncoming(next, latch);
  std::vector<llvm::Value*> nexts = step(phis);
  for (size_t j = 0; j < phis.size(); ++j) {
    llvm::cast<llvm::PHINode>(phis[j])->addIncoming(nexts[j], latch);
  }
  llvm::Value* more = b_.CreateICmpULT(next, trip);
  llvm::BranchInst* br = b_.CreateCondBr(more, header, exit);
  if (loop_md) br->setMetadata(llvm::LLVMContext::MD_loop, loop_md);
  b_.SetInsertPoint(exit);
}

// The general path: one loop per dim of size > 1; offsets[op] is the operand's element offset
// at the start of this level.
void KernelEmitter::EmitNest(size_t level, const std::vector<llvm::Value*>& offsets) {
  const size_t rank = k_.shape.size();
  const size_t dim = nest_dims_[level];
  const bool innermost = level + 1 == nest_dims_.size();
  auto step = [&](const std::vector<llvm::Value*>& cur) {
    std::vector<llvm::Value*> next;
    for (int op = 0; op < k_.num_operands(); ++op) {
      next.push_back(b_.CreateAdd(cur[op], strides_[op * rank + dim]));
    }
    return next;
  };
  auto body = [&](llvm::Value* iv, const std::vector<llvm::Value*>& cur) {
    if (!coords_.empty()) coords_[dim] = iv;
    if (!innermost) {
      EmitNest(level + 1, cur);
      return;
    }
    EmitPoint([&](int op) {
      return b_.CreateInBoundsGEP(MemType(k_.operand_dtype(op)), bases_[op], cur[op]);
    });
  };
  EmitLoop(dims_[dim], offsets, step, body, innermost ? VectorizeLoopMetadata() : nullptr);
}

absl::Status KernelEmitter::Emit() {
  if (m_.getFunction(k_.name) != nullptr) {
    return absl::InvalidArgumentError("kernel name '" + k_.name + "' is used twice in one module");
  }
  if (IsLibmSymbol(k_.name)) {
    return absl::InvalidArgumentError("kernel name '" + k_.name +
                                      "' collides with a libm function");
  }
  // Scatter kernels need a zero-filled output and atomics; CPU graphs keep the ATen op.
  if (HasScatter(k_))
    return absl::UnimplementedError("kernel '" + k_.name + "' scatters: no CPU lowering");
  llvm::Type* ptr = b_.getPtrTy();
  // Run-time sizes (ABI "tccd-cpu-sym-1") come in a third array, one entry per dim.
  const bool runtime_shape = HasRuntimeShape(k_);
  std::vector<llvm::Type*> params = {ptr, ptr};
  if (runtime_shape) params.push_back(ptr);
  auto* fn_type = llvm::FunctionType::get(b_.getVoidTy(), params, /*isVarArg=*/false);
  fn_ = llvm::Function::Create(fn_type, llvm::GlobalValue::ExternalLinkage, k_.name, m_);
  fn_->setVisibility(llvm::GlobalValue::DefaultVisibility);
  fn_->setDoesNotThrow();
  fn_->setUWTableKind(llvm::UWTableKind::Async);  // unwind info for profilers and debuggers
  fn_->getArg(0)->setName("data");
  fn_->getArg(1)->setName("strides");
  if (runtime_shape) fn_->getArg(2)->setName("shape");
  for (llvm::Argument& arg : fn_->args()) {
    arg.addAttr(llvm::Attribute::NoCapture);
    arg.addAttr(llvm::Attribute::ReadOnly);
    arg.addAttr(llvm::Attribute::NoUndef);
  }
  SetUpAliasScopes();

  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
  const size_t rank = k_.shape.size();
  int64_t static_numel = 1;
  for (int64_t s : k_.shape) static_numel *= s == kRuntimeDim ? 1 : s;
  if (static_numel == 0) {  // nothing to do; the pointers may be dangling
    b_.CreateRetVoid();
    return absl::OkStatus();
  }
  // Every dim's size as a value; run-time sizes are loaded once, and an empty iteration space
  // returns before any pointer is touched (the loops below are bottom-tested: trip >= 1).
  llvm::Value* any_empty = b_.getFalse();
  for (size_t d = 0; d < rank; ++d) {
    if (k_.shape[d] != kRuntimeDim) {
      dims_.push_back(b_.getInt64(k_.shape[d]));
      continue;
    }
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), fn_->getArg(2), d);
    dims_.push_back(b_.CreateLoad(b_.getInt64Ty(), slot, "size" + std::to_string(d)));
    any_empty = b_.CreateOr(any_empty, b_.CreateICmpSLE(dims_.back(), b_.getInt64(0)));
  }
  if (runtime_shape) {
    llvm::BasicBlock* empty = llvm::BasicBlock::Create(ctx_, "empty", fn_);
    llvm::BasicBlock* work = llvm::BasicBlock::Create(ctx_, "work", fn_);
    b_.CreateCondBr(any_empty, empty, work);
    b_.SetInsertPoint(empty);
    b_.CreateRetVoid();
    b_.SetInsertPoint(work);
  }
  llvm::Value* numel = b_.getInt64(1);
  for (llvm::Value* size : dims_)
    numel = b_.CreateMul(numel, size, "", /*HasNUW=*/true, /*HasNSW=*/true);
  for (int op = 0; op < k_.num_operands(); ++op) {
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr, fn_->getArg(0), op);
    bases_.push_back(b_.CreateLoad(ptr, slot, "base" + std::to_string(op)));
  }
  for (size_t d = 0; d < rank; ++d) {
    if (k_.shape[d] > 1 || k_.shape[d] == kRuntimeDim) nest_dims_.push_back(d);
  }
  if (HasIndexOps(k_)) {
    // Index-aware kernels (kIndex/kGather) always run the nest, which knows the coordinates;
    // gathers address their operand with its stride row (kernel/pointwise_kernel.h).
    coords_.assign(rank, b_.getInt64(0));
    for (int op = 0; op < k_.num_operands(); ++op) {
      for (size_t d = 0; d < rank; ++d) {
        llvm::Value* slot =
            b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), fn_->getArg(1), op * rank + d);
        strides_.push_back(b_.CreateLoad(b_.getInt64Ty(), slot));
      }
    }
    if (nest_dims_.empty()) {
      EmitPoint([&](int op) { return bases_[op]; });
    } else {
      EmitNest(0, std::vector<llvm::Value*>(k_.num_operands(), b_.getInt64(0)));
    }
    b_.CreateRetVoid();
    return error_;
  }
  if (nest_dims_.empty()) {  // rank 0 or all dims of size 1: a single point
    EmitPoint([&](int op) { return bases_[op]; });
    b_.CreateRetVoid();
    return error_;
  }

  // Load the strides and test them against the contiguous ones (size-1 dims never move; a
  // run-time size may turn out to be 1, then its stride does not matter either).
  std::vector<llvm::Value*> contiguous(rank);
  llvm::Value* run = b_.getInt64(1);
  for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
    contiguous[d] = run;
    run = b_.CreateMul(run, dims_[d], "", /*HasNUW=*/true, /*HasNSW=*/true);
  }
  llvm::Value* is_contiguous = b_.getTrue();
  for (int op = 0; op < k_.num_operands(); ++op) {
    for (size_t d = 0; d < rank; ++d) {
      llvm::Value* slot =
          b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), fn_->getArg(1), op * rank + d);
      strides_.push_back(b_.CreateLoad(b_.getInt64Ty(), slot,
                                       "stride" + std::to_string(op) + "_" + std::to_string(d)));
      if (k_.shape[d] == 1) continue;
      llvm::Value* moves_as_contiguous = b_.CreateICmpEQ(strides_.back(), contiguous[d]);
      if (k_.shape[d] == kRuntimeDim)
        moves_as_contiguous =
            b_.CreateOr(moves_as_contiguous, b_.CreateICmpEQ(dims_[d], b_.getInt64(1)));
      is_contiguous = b_.CreateAnd(is_contiguous, moves_as_contiguous);
    }
  }
  llvm::BasicBlock* fast = llvm::BasicBlock::Create(ctx_, "contiguous", fn_);
  llvm::BasicBlock* general = llvm::BasicBlock::Create(ctx_, "strided", fn_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "done", fn_);
  b_.CreateCondBr(is_contiguous, fast, general);

  // Fast path: one flat loop, the same index for every operand.
  b_.SetInsertPoint(fast);
  EmitLoop(
      numel, {}, [](const std::vector<llvm::Value*>&) { return std::vector<llvm::Value*>{}; },
      [&](llvm::Value* i, const std::vector<llvm::Value*>&) {
        EmitPoint([&](int op) {
          return b_.CreateInBoundsGEP(MemType(k_.operand_dtype(op)), bases_[op], i);
        });
      },
      VectorizeLoopMetadata());
  b_.CreateBr(done);

  // General path: the strided nest.
  b_.SetInsertPoint(general);
  EmitNest(0, std::vector<llvm::Value*>(k_.num_operands(), b_.getInt64(0)));
  b_.CreateBr(done);

  b_.SetInsertPoint(done);
  b_.CreateRetVoid();
  return error_;
}

llvm::Value* KernelEmitter::PhiloxUniform(llvm::Value* seed, llvm::Value* offset,
                                          llvm::Value* flat) {
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  auto lo = [&](llvm::Value* x) { return b_.CreateTrunc(x, i32); };
  auto hi = [&](llvm::Value* x) { return b_.CreateTrunc(b_.CreateLShr(x, 32), i32); };
  llvm::Value* c[4] = {lo(flat), hi(flat), lo(offset), hi(offset)};
  llvm::Value* k[2] = {lo(seed), hi(seed)};
  auto mulhilo = [&](uint32_t m, llvm::Value* x, llvm::Value** h, llvm::Value** l) {
    llvm::Value* p = b_.CreateMul(b_.CreateZExt(x, i64), b_.getInt64(m));
    *h = hi(p);
    *l = lo(p);
  };
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k[0] = b_.CreateAdd(k[0], b_.getInt32(0x9E3779B9u));
      k[1] = b_.CreateAdd(k[1], b_.getInt32(0xBB67AE85u));
    }
    llvm::Value *hi0, *lo0, *hi1, *lo1;
    mulhilo(0xD2511F53u, c[0], &hi0, &lo0);
    mulhilo(0xCD9E8D57u, c[2], &hi1, &lo1);
    llvm::Value* n0 = b_.CreateXor(b_.CreateXor(hi1, c[1]), k[0]);
    llvm::Value* n2 = b_.CreateXor(b_.CreateXor(hi0, c[3]), k[1]);
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
  }
  llvm::Value* bits = b_.CreateUIToFP(b_.CreateLShr(c[0], 8), b_.getFloatTy());
  return b_.CreateFMul(bits, llvm::ConstantFP::get(b_.getFloatTy(), 0x1.0p-24));
}

void KernelEmitter::EmitPoint(const AddressFn& address) {
  const int n_in = static_cast<int>(k_.input_dtypes.size());
  std::vector<llvm::Value*> v(k_.body.size(), nullptr);
  for (size_t i = 0; i < k_.body.size(); ++i) {
    const PwInstr& in = k_.body[i];
    const DType d = in.dtype;
    auto arg = [&](int j) { return v[in.args[j]]; };
    auto arg_dtype = [&](int j) { return k_.body[in.args[j]].dtype; };
    switch (PwOpKindOf(in.op)) {
      case PwOpKind::kLoad: {
        llvm::LoadInst* load =
            b_.CreateAlignedLoad(MemType(d), address(in.operand), llvm::Align(Bytes(d)));
        Annotate(load, in.operand);
        v[i] = d == DType::kBool ? b_.CreateICmpNE(load, b_.getInt8(0)) : load;
        break;
      }
      case PwOpKind::kIndex:
        v[i] = coords_.at(in.operand);
        break;
      case PwOpKind::kRandom: {
        llvm::Value* flat = b_.getInt64(0);
        llvm::Value* run = b_.getInt64(1);
        for (int64_t d = static_cast<int64_t>(k_.shape.size()) - 1; d >= 0; --d) {
          flat = b_.CreateAdd(flat, b_.CreateMul(coords_[d], run));
          run = b_.CreateMul(run, dims_[d]);
        }
        v[i] = PhiloxUniform(arg(0), arg(1), flat);
        break;
      }
      case PwOpKind::kGather: {
        // mask ? operand[sum coord_k * stride_k] : 0, branching so that a masked-off point
        // reads no memory.
        const size_t rank = k_.shape.size();
        llvm::Value* offset = b_.getInt64(0);
        for (size_t a = 1; a < in.args.size(); ++a)
          offset =
              b_.CreateAdd(offset, b_.CreateMul(arg(a), strides_[in.operand * rank + (a - 1)]));
        llvm::BasicBlock* from = b_.GetInsertBlock();
        llvm::BasicBlock* read = llvm::BasicBlock::Create(ctx_, "gather", fn_);
        llvm::BasicBlock* join = llvm::BasicBlock::Create(ctx_, "gathered", fn_);
        b_.CreateCondBr(arg(0), read, join);
        b_.SetInsertPoint(read);
        llvm::Value* loaded = b_.CreateAlignedLoad(
            MemType(d), b_.CreateInBoundsGEP(MemType(d), bases_[in.operand], offset),
            llvm::Align(Bytes(d)));
        if (d == DType::kBool) loaded = b_.CreateICmpNE(loaded, b_.getInt8(0));
        llvm::BasicBlock* read_end = b_.GetInsertBlock();
        b_.CreateBr(join);
        b_.SetInsertPoint(join);
        llvm::PHINode* phi = b_.CreatePHI(RegType(d), 2);
        phi->addIncoming(llvm::Constant::getNullValue(RegType(d)), from);
        phi->addIncoming(loaded, read_end);
        v[i] = phi;
        break;
      }
      case PwOpKind::kConstant:
        if (IsFloat(d)) {
          v[i] = FloatConst(d, in.fvalue);
        } else if (d == DType::kBool) {
          v[i] = b_.getInt1(in.ivalue != 0);
        } else {  // wraps to the dtype's width
          v[i] = llvm::ConstantInt::get(RegType(d), in.ivalue, /*IsSigned=*/true);
        }
        break;
      case PwOpKind::kCast:
        v[i] = Cast(arg(0), arg_dtype(0), d);
        break;
      case PwOpKind::kBinary:
        v[i] = Binary(in.op, d, arg(0), arg(1));
        break;
      case PwOpKind::kCompare:
        v[i] = Compare(in.op, arg_dtype(0), arg(0), arg(1));
        break;
      case PwOpKind::kLogical:
        v[i] = in.op == PwOp::kAnd  ? b_.CreateAnd(arg(0), arg(1))
               : in.op == PwOp::kOr ? b_.CreateOr(arg(0), arg(1))
                                    : b_.CreateNot(arg(0));
        break;
      case PwOpKind::kWhere:
        v[i] = b_.CreateSelect(arg(0), arg(1), arg(2));
        break;
      case PwOpKind::kStore: {
        llvm::Value* value = arg(0);
        if (d == DType::kBool) value = b_.CreateZExt(value, b_.getInt8Ty());
        const int op = n_in + in.operand;
        llvm::StoreInst* store = b_.CreateAlignedStore(value, address(op), llvm::Align(Bytes(d)));
        Annotate(store, op);
        break;
      }
      case PwOpKind::kUnary:
        v[i] = Unary(in.op, d, arg(0));
        break;
      // The CPU target never forms reduction or scatter kernels: "no lowering" below.
      case PwOpKind::kReduce:
      case PwOpKind::kScatter:
        break;
    }
    if (in.op != PwOp::kStore && v[i] == nullptr) {
      if (error_.ok()) {
        error_ = absl::InternalError(std::string("no lowering for ") + PwOpName(in.op) + " at %" +
                                     std::to_string(i));
      }
      // Keep the IR well formed until the caller sees the error.
      v[i] = llvm::UndefValue::get(RegType(d));
    }
  }
}

llvm::Value* KernelEmitter::Cast(llvm::Value* v, DType from, DType to) {
  if (from == to) return v;
  if (IsHalf(from)) {
    v = F32FromHalf(v, from);
    return Cast(v, DType::kF32, to);
  }
  if (IsHalf(to)) return HalfFromF32(Cast(v, from, DType::kF32), to);
  llvm::Type* dst = RegType(to);
  const bool from_float = IsFloat(from), to_float = IsFloat(to);
  if (to == DType::kBool) {
    // bool(x) is x != 0; NaN is true.
    return from_float ? b_.CreateFCmpUNE(v, FloatConst(from, 0.0))
                      : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (from_float && to_float) return b_.CreateFPCast(v, dst);
  if (from_float) {
    // Truncate toward zero. Narrow targets go through i32 (cvttps2dq) and wrap modulo 2^n like
    // a C cast does on x86; out-of-range values are frozen so that poison cannot spread.
    llvm::Type* via = dst->getIntegerBitWidth() < 32 ? b_.getInt32Ty() : dst;
    llvm::Value* r = b_.CreateFreeze(b_.CreateFPToSI(v, via));
    return via == dst ? r : b_.CreateTrunc(r, dst);
  }
  if (to_float) return IsUnsigned(from) ? b_.CreateUIToFP(v, dst) : b_.CreateSIToFP(v, dst);
  // Integer to integer (bool counts as unsigned i1): extend by the source's signedness.
  return b_.CreateIntCast(v, dst, /*isSigned=*/!IsUnsigned(from));
}

// f16/bf16 bits (i16) -> float.
llvm::Value* KernelEmitter::F32FromHalf(llvm::Value* bits, DType from) {
  llvm::Type* f32 = b_.getFloatTy();
  llvm::Value* w = b_.CreateShl(b_.CreateZExt(bits, b_.getInt32Ty()), 16);
  if (from == DType::kBF16) return b_.CreateBitCast(w, f32);
  // c10's fp16_ieee_to_fp32_value: rebias normal numbers with a multiply by 2^-112 (which also
  // keeps inf/NaN), build subnormals with the magic-number subtraction.
  llvm::Value* sign = b_.CreateAnd(w, I32(0x80000000u));
  llvm::Value* two_w = b_.CreateAdd(w, w);
  llvm::Value* normalized =
      b_.CreateFMul(b_.CreateBitCast(b_.CreateAdd(b_.CreateLShr(two_w, 4), I32(0xE0u << 23)), f32),
                    llvm::ConstantFP::get(f32, 0x1.0p-112));
  llvm::Value* denormalized =
      b_.CreateFSub(b_.CreateBitCast(b_.CreateOr(b_.CreateLShr(two_w, 17), I32(126u << 23)), f32),
                    llvm::ConstantFP::get(f32, 0.5));
  llvm::Value* is_denormal = b_.CreateICmpULT(two_w, I32(1u << 27));
  llvm::Value* magnitude =
      b_.CreateSelect(is_denormal, b_.CreateBitCast(denormalized, b_.getInt32Ty()),
                      b_.CreateBitCast(normalized, b_.getInt32Ty()));
  return b_.CreateBitCast(b_.CreateOr(sign, magnitude), f32);
}

// float -> f16/bf16 bits (i16), rounding to nearest even.
llvm::Value* KernelEmitter::HalfFromF32(llvm::Value* f, DType to) {
  llvm::Type* f32 = b_.getFloatTy();
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Value* w = b_.CreateBitCast(f, i32);
  if (to == DType::kBF16) {
    // c10's round_to_nearest_even: add 0x7fff plus the lowest kept bit, keep the high half;
    // every NaN becomes the canonical quiet NaN 0x7fc0.
    llvm::Value* lsb = b_.CreateAnd(b_.CreateLShr(w, 16), I32(1));
    llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(w, b_.CreateAdd(lsb, I32(0x7fff))), 16);
    llvm::Value* is_nan = b_.CreateFCmpUNO(f, f);
    return b_.CreateTrunc(b_.CreateSelect(is_nan, I32(0x7fc0), rounded), b_.getInt16Ty());
  }
  // c10's fp16_ieee_from_fp32_value: scale so that the FPU's own round-to-nearest-even does the
  // mantissa rounding (overflow to inf and subnormal results included), then repack the bits.
  llvm::Value* abs = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, f);
  llvm::Value* base = b_.CreateFMul(b_.CreateFMul(abs, llvm::ConstantFP::get(f32, 0x1.0p+112)),
                                    llvm::ConstantFP::get(f32, 0x1.0p-110));
  llvm::Value* shl1_w = b_.CreateAdd(w, w);
  llvm::Value* sign = b_.CreateAnd(w, I32(0x80000000u));
  llvm::Value* bias = b_.CreateBinaryIntrinsic(
      llvm::Intrinsic::umax, b_.CreateAnd(shl1_w, I32(0xFF000000u)), I32(0x71000000u));
  base = b_.CreateFAdd(
      b_.CreateBitCast(b_.CreateAdd(b_.CreateLShr(bias, 1), I32(0x07800000u)), f32), base);
  llvm::Value* bits = b_.CreateBitCast(base, i32);
  llvm::Value* exp_bits = b_.CreateAnd(b_.CreateLShr(bits, 13), I32(0x00007C00u));
  llvm::Value* mantissa_bits = b_.CreateAnd(bits, I32(0x00000FFFu));
  llvm::Value* nonsign = b_.CreateAdd(exp_bits, mantissa_bits);
  llvm::Value* is_nan = b_.CreateICmpUGT(shl1_w, I32(0xFF000000u));
  llvm::Value* magnitude = b_.CreateSelect(is_nan, I32(0x7E00u), nonsign);
  return b_.CreateTrunc(b_.CreateOr(b_.CreateLShr(sign, 16), magnitude), b_.getInt16Ty());
}

llvm::Value* KernelEmitter::Binary(PwOp op, DType d, llvm::Value* a, llvm::Value* b) {
  const bool fp = IsFloat(d);
  switch (op) {
    case PwOp::kAdd:
      return fp ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);  // ints wrap
    case PwOp::kSub:
      return fp ? b_.CreateFSub(a, b) : b_.CreateSub(a, b);
    case PwOp::kMul:
      return fp ? b_.CreateFMul(a, b) : b_.CreateMul(a, b);
    case PwOp::kDiv:
      return b_.CreateFDiv(a, b);
    case PwOp::kPow:
      return Pow(d, a, b);
    case PwOp::kMaximum:
    case PwOp::kMinimum: {
      const bool max = op == PwOp::kMaximum;
      if (!fp) {
        const llvm::Intrinsic::ID id = IsUnsigned(d)
                                           ? (max ? llvm::Intrinsic::umax : llvm::Intrinsic::umin)
                                           : (max ? llvm::Intrinsic::smax : llvm::Intrinsic::smin);
        return b_.CreateBinaryIntrinsic(id, a, b);
      }
      // NaN-propagating: `a > b ? a : b` is one maxps (which returns b when either is NaN);
      // the outer select returns a when a is NaN. llvm.maximum would be shorter but may become
      // a libcall (fmaximumf) in LLVM 16's x86 backend.
      llvm::Value* pick = max ? b_.CreateFCmpOGT(a, b) : b_.CreateFCmpOLT(a, b);
      llvm::Value* r = b_.CreateSelect(pick, a, b);
      return b_.CreateSelect(b_.CreateFCmpUNO(a, a), a, r);
    }
    default:
      return nullptr;
  }
}

llvm::Value* KernelEmitter::Pow(DType d, llvm::Value* a, llvm::Value* b) {
  // The constant exponents ATen's pow kernels special-case, computed the same way (so results
  // match eager bit for bit) and without a libm call that would keep the loop scalar.
  if (auto* c = llvm::dyn_cast<llvm::ConstantFP>(b)) {
    const llvm::APFloat& e = c->getValueAPF();
    auto sqrt = [&] { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a); };
    if (e.isExactlyValue(2.0)) return b_.CreateFMul(a, a);
    if (e.isExactlyValue(3.0)) return b_.CreateFMul(b_.CreateFMul(a, a), a);
    if (e.isExactlyValue(-2.0)) return b_.CreateFDiv(FloatConst(d, 1.0), b_.CreateFMul(a, a));
    if (e.isExactlyValue(0.5)) return sqrt();
    if (e.isExactlyValue(-0.5)) return b_.CreateFDiv(FloatConst(d, 1.0), sqrt());
    if (e.isExactlyValue(-1.0)) return b_.CreateFDiv(FloatConst(d, 1.0), a);
  }
  if (llvm::Value* inline_value = EmitInlinePow(b_, a, b)) return inline_value;
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a, b);
}

llvm::Value* KernelEmitter::CallLibm(const char* f32_name, DType d, llvm::Value* x) {
  std::string name = f32_name;
  if (d == DType::kF64) name.pop_back();  // "expm1f" -> "expm1"
  llvm::Type* t = RegType(d);
  llvm::FunctionCallee callee =
      m_.getOrInsertFunction(name, llvm::FunctionType::get(t, {t}, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    // As with -fno-math-errno: pure functions, so they can be hoisted, CSE'd and vectorised
    // around.
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory();
    f->setWillReturn();
  }
  llvm::CallInst* call = b_.CreateCall(callee, {x});
  call->setDoesNotThrow();
  call->setDoesNotAccessMemory();
  return call;
}

llvm::Value* KernelEmitter::Unary(PwOp op, DType d, llvm::Value* x) {
  const bool fp = IsFloat(d);
  using llvm::Intrinsic::ID;
  auto intrinsic = [&](ID id) { return b_.CreateUnaryIntrinsic(id, x); };
  auto one = [&] { return FloatConst(d, 1.0); };
  // Inline IR from vector_math.h where it has a version for the type (so that the loop
  // vectorises), else `libm()`.
  auto math = [&](MathFn fn, const std::function<llvm::Value*()>& libm) {
    llvm::Value* inline_value = EmitInlineMath(b_, fn, x);
    return inline_value != nullptr ? inline_value : libm();
  };
  switch (op) {
    case PwOp::kNeg:
      return fp ? b_.CreateFNeg(x) : b_.CreateNeg(x);
    case PwOp::kAbs:
      if (fp) return intrinsic(llvm::Intrinsic::fabs);
      if (IsUnsigned(d)) return x;
      // abs(INT_MIN) wraps to INT_MIN, like torch.
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());
    case PwOp::kExp:
      return math(MathFn::kExp, [&] { return intrinsic(llvm::Intrinsic::exp); });
    case PwOp::kLog:
      return math(MathFn::kLog, [&] { return intrinsic(llvm::Intrinsic::log); });
    case PwOp::kLog1p:
      return math(MathFn::kLog1p, [&] { return CallLibm("log1pf", d, x); });
    case PwOp::kExpm1:
      return math(MathFn::kExpm1, [&] { return CallLibm("expm1f", d, x); });
    case PwOp::kTanh:
      return math(MathFn::kTanh, [&] { return CallLibm("tanhf", d, x); });
    case PwOp::kErf:
      return math(MathFn::kErf, [&] { return CallLibm("erff", d, x); });
    case PwOp::kSigmoid:
      return math(MathFn::kSigmoid, [&] {
        llvm::Value* e = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, b_.CreateFNeg(x));
        return b_.CreateFDiv(one(), b_.CreateFAdd(one(), e));
      });
    case PwOp::kSin:
      return math(MathFn::kSin, [&] { return intrinsic(llvm::Intrinsic::sin); });
    case PwOp::kCos:
      return math(MathFn::kCos, [&] { return intrinsic(llvm::Intrinsic::cos); });
    case PwOp::kSqrt:
      return intrinsic(llvm::Intrinsic::sqrt);
    case PwOp::kRsqrt:
      return b_.CreateFDiv(one(), intrinsic(llvm::Intrinsic::sqrt));
    case PwOp::kReciprocal:
      return b_.CreateFDiv(one(), x);
    // Rounding is the identity on integers.
    case PwOp::kFloor:
      return fp ? intrinsic(llvm::Intrinsic::floor) : x;
    case PwOp::kCeil:
      return fp ? intrinsic(llvm::Intrinsic::ceil) : x;
    case PwOp::kRound:
      return fp ? intrinsic(llvm::Intrinsic::roundeven) : x;
    default:
      return nullptr;
  }
}

llvm::Value* KernelEmitter::Compare(PwOp op, DType d, llvm::Value* a, llvm::Value* b) {
  using P = llvm::CmpInst::Predicate;
  if (IsFloat(d)) {
    // Ordered predicates: false when either side is NaN; kNe is unordered (true on NaN).
    switch (op) {
      case PwOp::kEq:
        return b_.CreateFCmp(P::FCMP_OEQ, a, b);
      case PwOp::kNe:
        return b_.CreateFCmp(P::FCMP_UNE, a, b);
      case PwOp::kLt:
        return b_.CreateFCmp(P::FCMP_OLT, a, b);
      case PwOp::kLe:
        return b_.CreateFCmp(P::FCMP_OLE, a, b);
      case PwOp::kGt:
        return b_.CreateFCmp(P::FCMP_OGT, a, b);
      case PwOp::kGe:
        return b_.CreateFCmp(P::FCMP_OGE, a, b);
      default:
        return nullptr;
    }
  }
  const bool u = IsUnsigned(d);
  switch (op) {
    case PwOp::kEq:
      return b_.CreateICmp(P::ICMP_EQ, a, b);
    case PwOp::kNe:
      return b_.CreateICmp(P::ICMP_NE, a, b);
    case PwOp::kLt:
      return b_.CreateICmp(u ? P::ICMP_ULT : P::ICMP_SLT, a, b);
    case PwOp::kLe:
      return b_.CreateICmp(u ? P::ICMP_ULE : P::ICMP_SLE, a, b);
    case PwOp::kGt:
      return b_.CreateICmp(u ? P::ICMP_UGT : P::ICMP_SGT, a, b);
    case PwOp::kGe:
      return b_.CreateICmp(u ? P::ICMP_UGE : P::ICMP_SGE, a, b);
    default:
      return nullptr;
  }
}

}  // namespace

absl::Status EmitPointwiseKernel(const PointwiseKernel& kernel, llvm::Module& module) {
  if (std::string error = VerifyPointwiseKernel(kernel); !error.empty()) {
    return absl::InvalidArgumentError("invalid pointwise kernel '" + kernel.name + "': " + error);
  }
  KernelEmitter emitter(kernel, module);
  // On failure the module is left half-built; callers discard it.
  absl::Status status = emitter.Emit();
  if (!status.ok()) return status;
  llvm::Function* fn = module.getFunction(kernel.name);
  std::string message;
  llvm::raw_string_ostream os(message);
  if (llvm::verifyFunction(*fn, &os)) {
    os.flush();
    return absl::InternalError("LLVM verifier rejected kernel '" + kernel.name + "': " + message);
  }
  return absl::OkStatus();
}

void SetKernelVectorWidth(const CpuTarget& target, llvm::Module& module) {
  // The vectoriser picks its width from the subtarget's preferred vector width, which LLVM's
  // x86-64-v4 tuning sets to 256 (wide vectors lowered the clock of early AVX-512 parts); ATen's
  // own AVX-512 kernels and oneDNN's use 512. Measured (perf, 1-thread CPU transformer step of
  // deploy/cpu_training_bench.py): its two GELU and two GELU-backward kernels 1.39 -> 1.01 ms
  // per step, all its kernels 2.56 -> 2.18 ms (README, CPU training).
  if (!target.wide_vectors || target.cpu != "x86-64-v4") return;
  for (llvm::Function& f : module) {
    if (!f.isDeclaration()) f.addFnAttr("prefer-vector-width", "512");
  }
}

}  // namespace tccd::codegen
