// StoreKernelCache on a real Store: kernel objects round trip under their keys, survive a
// reopen, and a corrupt object blob is a miss (never served) that the next Put repairs.
#include "server/store_kernel_cache.h"

#include <catch2/catch.hpp>
#include <string>

#include "cache/schema.h"
#include "cache/store.h"
#include "tests/cache/test_util.h"

namespace tccd::server {
namespace {

using cache::testing::OpenOrDie;
using cache::testing::RawPut;
using cache::testing::TempDir;

const std::string kKey1 = std::string(63, 'a') + "1";
const std::string kKey2 = std::string(63, 'b') + "2";

TEST_CASE("kernel objects round trip, persist, and a corrupt one is a miss until re-stored",
          "[store_kernel_cache]") {
  TempDir dir;
  const std::string object1 =
                        "\x7f"
                        "ELF object one",
                    object2 =
                        "\x7f"
                        "ELF object two";
  {
    std::unique_ptr<cache::Store> store = OpenOrDie(dir.path());
    StoreKernelCache kernels(store.get());
    TCCD_REQUIRE_OK(kernels.Put({{kKey1, object1}, {kKey2, object2}}));
    absl::StatusOr<absl::flat_hash_map<std::string, std::string>> found =
        kernels.Lookup({kKey1, kKey2, std::string(64, 'c'), "not a key"});
    TCCD_REQUIRE_OK(found);
    REQUIRE(found->size() == 2);
    CHECK(found->at(kKey1) == object1);
    CHECK(found->at(kKey2) == object2);
    TCCD_REQUIRE_OK(store->Close());
  }
  // Flip the bytes of object 1's blob behind the store's back.
  RawPut(dir.path(), cache::kBlobsColumnFamily, cache::Sha256Hex(object1),
         "\x7f"
         "ELF object 0ne");
  {
    std::unique_ptr<cache::Store> store = OpenOrDie(dir.path());
    StoreKernelCache kernels(store.get());
    absl::StatusOr<absl::flat_hash_map<std::string, std::string>> found =
        kernels.Lookup({kKey1, kKey2});
    TCCD_REQUIRE_OK(found);
    CHECK(found->size() == 1);
    CHECK(!found->contains(kKey1));
    CHECK(found->at(kKey2) == object2);
    // The compile that missed stores the object again: served from then on.
    TCCD_REQUIRE_OK(kernels.Put({{kKey1, object1}}));
    found = kernels.Lookup({kKey1});
    TCCD_REQUIRE_OK(found);
    REQUIRE(found->contains(kKey1));
    CHECK(found->at(kKey1) == object1);
  }
}

TEST_CASE("a graph manifest under a looked-up key is not taken for a kernel",
          "[store_kernel_cache]") {
  TempDir dir;
  std::unique_ptr<cache::Store> store = OpenOrDie(dir.path());
  absl::StatusOr<std::string> digest = store->PutBlob("graph .so");
  TCCD_REQUIRE_OK(digest);
  TCCD_REQUIRE_OK(store->PutManifest(kKey1, cache::testing::MakeManifest(kKey1, {*digest})));
  StoreKernelCache kernels(store.get());
  absl::StatusOr<absl::flat_hash_map<std::string, std::string>> found = kernels.Lookup({kKey1});
  TCCD_REQUIRE_OK(found);
  CHECK(found->empty());
}

}  // namespace
}  // namespace tccd::server
