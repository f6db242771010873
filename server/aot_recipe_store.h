// AotRecipeStore: clients' AOT recipes (tccd.v1.AotRecipe) in the daemon's store, so that a
// process with an empty local cache (another machine of the cluster) skips AOTAutograd's trace
// as a process with a warm local cache does (issue 11 item 3; client/tccd/aot_cache.py).
//
// A recipe is kept as a manifest under RecipeStoreKey(recipe key) whose one artifact
// (AOT_RECIPE) is the serialized AotRecipe. The daemon cannot check a recipe's meaning (only the
// client's AOTAutograd can); it checks sizes, the key's form, and that every plan key names a
// manifest it holds. The first recipe stored under a key stays (later puts are ignored), so a
// recipe cannot be replaced once clients use it.
//
// Thread-safety: as cache::Store (all methods may be called concurrently).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cache/store.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::server {

// Largest recipe JSON accepted, in bytes.
inline constexpr size_t kMaxAotRecipeBytes = 1 << 20;
// Most plan keys one recipe names (a training recipe has two).
inline constexpr int kMaxAotRecipePlans = 8;

// The store key of the recipe keyed `recipe_key` (domain-separated from compile keys).
std::string RecipeStoreKey(const std::string& recipe_key);

class AotRecipeStore {
 public:
  explicit AotRecipeStore(cache::Store* store) : store_(store) {}

  // INVALID_ARGUMENT for a malformed recipe, FAILED_PRECONDITION naming a plan key the store
  // does not hold; OK (storing nothing) when a recipe is already stored under the key.
  absl::Status Put(const v1::AotRecipe& recipe);
  // NOT_FOUND when none is stored under `key`; INVALID_ARGUMENT for a malformed key.
  absl::StatusOr<v1::AotRecipe> Get(const std::string& key);

 private:
  cache::Store* const store_;
};

}  // namespace tccd::server
