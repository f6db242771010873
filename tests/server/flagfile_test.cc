// ExpandFlagfiles: --flagfile lines spliced into argv, in place, comments skipped, nested files,
// errors naming the file.
#include "server/flagfile.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace tccd::server {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                           "/tccd_flagfile_test_" + name;
  std::ofstream(path) << text;
  return path;
}

TEST_CASE("flagfile lines replace the --flagfile argument, in order", "[flagfile]") {
  const std::string inner = WriteTemp("inner", "--max-cache-mb=5\n");
  const std::string outer =
      WriteTemp("outer",
                "# tccd config\n  --listen=unix:/tmp/a.sock  \n\n--listen=127.0.0.1:0\n"
                "--flagfile=" +
                    inner + "\n");
  auto args = ExpandFlagfiles(
      {"tccd", "--log-level=debug", "--flagfile", outer, "--max-cache-mb=9", "--", "--flagfile=x"});
  REQUIRE(args.ok());
  CHECK(*args == std::vector<std::string>{"tccd", "--log-level=debug", "--listen=unix:/tmp/a.sock",
                                          "--listen=127.0.0.1:0", "--max-cache-mb=5",
                                          "--max-cache-mb=9", "--", "--flagfile=x"});
  std::remove(inner.c_str());
  std::remove(outer.c_str());
}

TEST_CASE("flagfile errors name the file", "[flagfile]") {
  auto missing = ExpandFlagfiles({"tccd", "--flagfile=/nonexistent/tccd.flags"});
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains("/nonexistent/tccd.flags"));
  CHECK(ExpandFlagfiles({"tccd", "--flagfile"}).status().code() ==
        absl::StatusCode::kInvalidArgument);
  const std::string loop = WriteTemp("loop", "");
  std::ofstream(loop) << "--flagfile=" << loop << "\n";
  CHECK(ExpandFlagfiles({"tccd", "--flagfile=" + loop}).status().code() ==
        absl::StatusCode::kInvalidArgument);
  std::remove(loop.c_str());
}

}  // namespace
}  // namespace tccd::server
