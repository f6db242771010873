// GemmTuneStore on a real Store: the first writer of a matmul's choice wins, identities are
// apart, a job's dynamic profile and a tune table never meet in the shared column family, a
// reopen keeps the tables, and malformed tables are INVALID_ARGUMENT naming the field.
#include "server/gemm_tune_store.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cache/store.h"
#include "server/dynamic_profile_store.h"
#include "tests/cache/test_util.h"

namespace tccd::server {
namespace {

using cache::testing::OpenOrDie;
using cache::testing::TempDir;

std::vector<uint64_t> Gemm(uint64_t m) {
  return {m, 384, 96, m, 384, 96, 1, 0, 0, 0, 1, 68 | (uint64_t{8} << 32), 0x3F800000};
}

v1::GemmTuneTable Put(const std::string& gpu, const std::vector<std::pair<uint64_t, uint64_t>>&
                                                  gemms_and_algos) {
  v1::GemmTuneTable t;
  t.set_gpu_name(gpu);
  t.set_sm(90);
  t.set_cublaslt_version(130100);
  for (auto [m, algo] : gemms_and_algos) {
    v1::GemmTuneEntry* e = t.add_entries();
    for (uint64_t w : Gemm(m)) e->add_gemm(w);
    for (int i = 0; i < kGemmTuneAlgoWords; ++i) e->add_algo(i == 0 ? algo : 7);
    e->set_chosen_us(40.0f);
  }
  return t;
}

v1::GemmTuneRequest Request(const std::string& gpu) {
  v1::GemmTuneRequest r;
  r.set_gpu_name(gpu);
  r.set_sm(90);
  r.set_cublaslt_version(130100);
  return r;
}

uint64_t AlgoOf(const v1::GemmTuneTable& t, uint64_t m) {
  for (const v1::GemmTuneEntry& e : t.entries())
    if (e.gemm(0) == m) return e.algo(0);
  return 0;
}

TEST_CASE("gemm tunes: the first writer wins, identities are apart, a reopen keeps them",
          "[gemm_tunes]") {
  TempDir dir;
  {
    std::unique_ptr<cache::Store> store = OpenOrDie(dir.path());
    GemmTuneStore tunes(store.get());
    CHECK(absl::IsNotFound(tunes.Get(Request("H200")).status()));
    absl::StatusOr<v1::GemmTuneTable> first = tunes.Put(Put("H200", {{200704, 0xa1}}), 1);
    REQUIRE(first.ok());
    CHECK(AlgoOf(*first, 200704) == 0xa1);
    // Another process's choice for the same matmul is refused; its new matmul is added, and
    // the entries come back sorted by gemm words.
    absl::StatusOr<v1::GemmTuneTable> second =
        tunes.Put(Put("H200", {{200704, 0xb2}, {12544, 0xb3}}), 2);
    REQUIRE(second.ok());
    CHECK(second->entries_size() == 2);
    CHECK(second->entries(0).gemm(0) == 12544);
    CHECK((AlgoOf(*second, 200704) == 0xa1 && AlgoOf(*second, 12544) == 0xb3));
    CHECK((second->puts() == 2 && second->updated_unix_ms() == 2));
    // Another GPU model: a table of its own.
    REQUIRE(tunes.Put(Put("H100", {{200704, 0xc4}}), 3).ok());
    CHECK(AlgoOf(*tunes.Get(Request("H200")), 200704) == 0xa1);
    // A job named like nothing in particular keeps its profile apart from the tables.
    DynamicProfileStore profiles(store.get());
    CHECK(absl::IsNotFound(profiles.Get("gemm-tunes").status()));
  }
  std::unique_ptr<cache::Store> store = OpenOrDie(dir.path());
  GemmTuneStore tunes(store.get());
  absl::StatusOr<v1::GemmTuneTable> reopened = tunes.Get(Request("H100"));
  REQUIRE(reopened.ok());
  CHECK(AlgoOf(*reopened, 200704) == 0xc4);
}

TEST_CASE("gemm tunes: malformed tables are INVALID_ARGUMENT naming the field", "[gemm_tunes]") {
  TempDir dir;
  std::unique_ptr<cache::Store> store = OpenOrDie(dir.path());
  GemmTuneStore tunes(store.get());
  auto refused = [&](v1::GemmTuneTable t, const std::string& what) {
    absl::Status s = tunes.Put(t, 1).status();
    INFO(s.ToString());
    CHECK(absl::IsInvalidArgument(s));
    CHECK(std::string(s.message()).find(what) != std::string::npos);
  };
  v1::GemmTuneTable t = Put("H200", {{64, 0xa1}});
  t.mutable_entries(0)->mutable_gemm()->RemoveLast();
  refused(t, "12 gemm words");
  t = Put("H200", {{64, 0xa1}});
  t.mutable_entries(0)->add_algo(1);
  refused(t, "9 algo words");
  t = Put("H200", {{0, 0xa1}});
  refused(t, "size word 0");
  t = Put("", {{64, 0xa1}});
  refused(t, "gpu_name");
  t = Put("H200", {{64, 0xa1}});
  t.set_cublaslt_version(0);
  refused(t, "cublaslt_version");
  CHECK(absl::IsNotFound(tunes.Get(Request("H200")).status()));  // nothing stored
}

}  // namespace
}  // namespace tccd::server
