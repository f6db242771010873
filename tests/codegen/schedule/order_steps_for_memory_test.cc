// OrderStepsForMemory: text in, text out.
#include <catch2/catch.hpp>

#include "codegen/schedule/order_steps_for_memory.h"
#include "codegen/schedule/parser.h"
#include "codegen/schedule/printer.h"
#include "codegen/schedule/verifier.h"

namespace tccd::schedule {
namespace {

// Runs the pass on `in`; returns the printed result and whether it changed anything.
std::pair<std::string, bool> Run(const std::string& in) {
  absl::StatusOr<Schedule> s = ParseSchedule(in);
  REQUIRE(s.ok());
  absl::StatusOr<bool> changed = OrderStepsForMemory().Run(*s);
  REQUIRE(changed.ok());
  REQUIRE(VerifySchedule(*s).ok());
  return {PrintSchedule(*s), *changed};
}

// %0 an input; %3..%5 big (8 KiB) intermediates; %6, %7 small results.
constexpr char kValues[] = R"(schedule(inputs=3) {
  %0: bf16[64,64]{64,1}@cuda
  %1: bf16[64,64]{64,1}@cuda
  %2: bf16[64,64]{64,1}@cuda
  %3: bf16[64,64]{64,1}@cuda
  %4: bf16[64,64]{64,1}@cuda
  %5: bf16[64,64]{64,1}@cuda
  %6: f32[64]{1}@cuda
  %7: f32[64]{1}@cuda
)";

// A kernel step reading `ins` (text) and writing `out`; launch details do not matter here.
std::string Kernel(const std::string& out, const std::string& ins, const std::string& symbol) {
  return "  " + out + " = kernel(" + ins + ") artifact=\"k.so\" symbol=\"" + symbol +
         "\" abi=\"tccd-cuda-1\" shape=[64,64] strides=[] kernels=[]\n";
}

TEST_CASE("a reduction of a big value runs before the chain that would keep it live",
          "[schedule][memory-order]") {
  // %3 is read by the chain %4 -> %5 -> %6 and, last, by the reduction %7: in this order it is
  // live with both %4 and %5 (3 x 8 KiB). Run early, the reduction lets %3 die at %4.
  auto [out, changed] =
      Run(std::string(kValues) + Kernel("%3", "%0", "a") + Kernel("%4", "%3", "b") +
          Kernel("%5", "%4", "c") + Kernel("%6", "%5", "d") + Kernel("%7", "%3", "e") +
          "  return (%6, %7)\n}\n");
  CHECK(changed);
  CHECK(out == std::string(kValues) + Kernel("%3", "%0", "a") + Kernel("%7", "%3", "e") +
                   Kernel("%4", "%3", "b") + Kernel("%5", "%4", "c") + Kernel("%6", "%5", "d") +
                   "  return (%6, %7)\n}\n");
}

TEST_CASE("BERT's loss backward: the bias gradient before the padded matmul",
          "[schedule][memory-order]") {
  // %2 the logits gradient, %3 its zero-padded copy, %4 the padded weight; the gemm's result %5
  // and the bias gradient %6 are the run's results. Graph order keeps %2 live across the weight
  // pad and the gemm (3 buffers); after the reduction, the pad is its last reader (2 at most).
  const std::string values = R"(schedule(inputs=2) {
  %0: bf16[64,64]{64,1}@cuda
  %1: bf16[64,64]{64,1}@cuda
  %2: bf16[64,64]{64,1}@cuda
  %3: bf16[64,64]{64,1}@cuda
  %4: bf16[64,64]{64,1}@cuda
  %5: bf16[64,64]{64,1}@cuda
  %6: f32[64]{1}@cuda
)";
  const std::string gemm =
      "  %5 = library cublaslt_gemm(%3, %4, %5) name=\"mm\" params={m=64} of aten::mm.default(%3, "
      "%4)\n";
  auto [out, changed] = Run(values + Kernel("%2", "%0", "grad") + Kernel("%3", "%2", "pad") +
                            Kernel("%4", "%1", "pad_w") + gemm + Kernel("%6", "%2", "bias_grad") +
                            "  release(%0, %1)\n  return (%5, %6)\n}\n");
  CHECK(changed);
  // Release steps are dropped (ReleaseAfterLastUse rebuilds them).
  CHECK(out == values + Kernel("%2", "%0", "grad") + Kernel("%6", "%2", "bias_grad") +
                   Kernel("%3", "%2", "pad") + Kernel("%4", "%1", "pad_w") + gemm +
                   "  return (%5, %6)\n}\n");
}

TEST_CASE("nothing moves across an extern op", "[schedule][memory-order]") {
  // The same chain as the first case, with an extern op (which may have side effects) between
  // the chain and the reduction: each run alone has nothing to gain.
  const std::string in = std::string(kValues) + Kernel("%3", "%0", "a") + Kernel("%4", "%3", "b") +
                         Kernel("%5", "%4", "c") +
                         "  %6 = extern aten::sum.dim_IntList(%5, [1])\n" +
                         Kernel("%7", "%3", "e") + "  return (%6, %7)\n}\n";
  auto [out, changed] = Run(in);
  CHECK_FALSE(changed);
  CHECK(out == in);
}

TEST_CASE("an order with no lower peak is kept, release steps included",
          "[schedule][memory-order]") {
  // A chain: each step frees what the previous one wrote; nothing to gain.
  const std::string in = std::string(kValues) + Kernel("%3", "%0", "a") + "  release(%0)\n" +
                         Kernel("%4", "%3", "b") + "  release(%3)\n" + Kernel("%6", "%4", "c") +
                         Kernel("%7", "%1, %2", "d") + "  release(%4)\n  return (%6, %7)\n}\n";
  auto [out, changed] = Run(in);
  CHECK_FALSE(changed);
  CHECK(out == in);
}

TEST_CASE("a view's readers keep its base live, and the view stays before them",
          "[schedule][memory-order]") {
  // %4 views %3 and is read after the reduction: %3 cannot die before that reader.
  const std::string values = R"(schedule(inputs=3) {
  %0: bf16[64,64]{64,1}@cuda
  %1: bf16[64,64]{64,1}@cuda
  %2: bf16[64,64]{64,1}@cuda
  %3: bf16[64,64]{64,1}@cuda
  %4: bf16[64,64]{1,64}@cuda
  %5: bf16[64,64]{64,1}@cuda
  %6: f32[64]{1}@cuda
  %7: f32[64]{1}@cuda
)";
  const std::string in = values + Kernel("%3", "%0", "a") + "  %4 = extern aten::t.default(%3)\n" +
                         Kernel("%5", "%1", "b") + Kernel("%6", "%5", "c") +
                         Kernel("%7", "%4", "d") + "  return (%6, %7)\n}\n";
  auto [out, changed] = Run(in);
  // Moving %7 first lowers the peak (%3 dies before %5 is written); the view stays before it.
  CHECK(changed);
  CHECK(out == values + Kernel("%3", "%0", "a") + "  %4 = extern aten::t.default(%3)\n" +
                   Kernel("%7", "%4", "d") + Kernel("%5", "%1", "b") + Kernel("%6", "%5", "c") +
                   "  return (%6, %7)\n}\n");
}

}  // namespace
}  // namespace tccd::schedule
