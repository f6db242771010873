// CompileCpuKernels fails one request with a Status, never the process.
#include <catch2/catch.hpp>
#include <string>

#include "codegen/cpu/cpu_backend.h"
#include "test_util.h"

namespace tccd::codegen::testing {
namespace {

PointwiseKernel Identity(const std::string& name) {
  KernelBuilder k(name, {8});
  k.Output(k.Input(DType::kF32));
  return k.kernel();
}

absl::Status Compile(const std::vector<PointwiseKernel>& kernels, CpuTarget target = {}) {
  return CompileCpuKernels(kernels, target).status();
}

TEST_CASE("an invalid kernel is INVALID_ARGUMENT with the verifier's message",
          "[cpu_backend][errors]") {
  PointwiseKernel bad = Identity("bad");
  bad.body[1].args = {5};  // refers to a later instruction
  const absl::Status status = Compile({Identity("good"), bad});
  REQUIRE(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(status.message().find("bad") != absl::string_view::npos);
  CHECK(status.message().find("%5") != absl::string_view::npos);
}

TEST_CASE("kernel names must be unique and must not shadow libm", "[cpu_backend][errors]") {
  CHECK(Compile({Identity("twice"), Identity("twice")}).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(Compile({Identity("expf")}).code() == absl::StatusCode::kInvalidArgument);
  CHECK(Compile({Identity("not a symbol")}).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("no kernels, an unknown CPU or a foreign triple is INVALID_ARGUMENT",
          "[cpu_backend][errors]") {
  CHECK(Compile({}).code() == absl::StatusCode::kInvalidArgument);
  CpuTarget unknown_cpu;
  unknown_cpu.cpu = "pentium-9000";
  const absl::Status cpu_status = Compile({Identity("k")}, unknown_cpu);
  CHECK(cpu_status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(cpu_status.message().find("pentium-9000") != absl::string_view::npos);
  CpuTarget arm;
  arm.triple = "aarch64-unknown-linux-gnu";
  arm.cpu = "generic";
  CHECK(Compile({Identity("k")}, arm).code() == absl::StatusCode::kInvalidArgument);
  CpuTarget nonsense;
  nonsense.triple = "not-a-triple";
  CHECK(Compile({Identity("k")}, nonsense).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("the backend keeps working after failed requests", "[cpu_backend][errors]") {
  PointwiseKernel bad = Identity("bad");
  bad.body.pop_back();  // output never stored
  REQUIRE_FALSE(Compile({bad}).ok());
  const CpuModule module = CompileForHost({Identity("after_failure")});
  LoadedModule so(module.shared_object);
  std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8}, out(8);
  RunContiguous(so.Get("after_failure"), {8}, {in.data(), out.data()});
  REQUIRE(out == in);
}

}  // namespace
}  // namespace tccd::codegen::testing
