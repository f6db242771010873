// AotRecipeStore; see aot_recipe_store.h.
#include "server/aot_recipe_store.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "tccd_version.h"

namespace tccd::server {
namespace {

constexpr char kRecipeArtifactName[] = "aot_recipe.pb";

bool IsHexKey(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

std::string RecipeStoreKey(const std::string& recipe_key) {
  // v1: the first recipe layout (a manifest with one AOT_RECIPE artifact).
  return cache::Sha256Hex(absl::StrCat("tccd-aot-recipe/1\n", recipe_key));
}

absl::Status AotRecipeStore::Put(const v1::AotRecipe& recipe) {
  if (!IsHexKey(recipe.key()))
    return absl::InvalidArgumentError("AotRecipe.key must be 64 lowercase hex characters");
  if (recipe.recipe().empty() || recipe.recipe().size() > kMaxAotRecipeBytes)
    return absl::InvalidArgumentError(
        absl::StrCat("AotRecipe.recipe must be 1 to ", kMaxAotRecipeBytes, " bytes"));
  if (recipe.plan_keys_size() < 1 || recipe.plan_keys_size() > kMaxAotRecipePlans)
    return absl::InvalidArgumentError(
        absl::StrCat("AotRecipe.plan_keys must name 1 to ", kMaxAotRecipePlans, " plans"));
  for (const std::string& plan : recipe.plan_keys()) {
    if (!IsHexKey(plan))
      return absl::InvalidArgumentError("AotRecipe.plan_keys must be 64 lowercase hex characters");
    absl::StatusOr<v1::Manifest> manifest = store_->GetManifest(plan);
    if (absl::IsNotFound(manifest.status()))
      return absl::FailedPreconditionError(
          absl::StrCat("AotRecipe names plan ", plan, ", which the daemon does not hold"));
    RETURN_IF_ERROR(manifest.status());
  }
  const std::string store_key = RecipeStoreKey(recipe.key());
  absl::StatusOr<v1::Manifest> existing = store_->GetManifest(store_key);
  if (existing.ok()) return absl::OkStatus();  // the first recipe stays
  if (!absl::IsNotFound(existing.status())) return existing.status();

  const std::string bytes = recipe.SerializeAsString();
  ASSIGN_OR_RETURN(std::string digest, store_->PutBlob(bytes));
  v1::Manifest manifest;
  manifest.set_key(store_key);
  v1::Artifact* artifact = manifest.add_artifacts();
  artifact->set_name(kRecipeArtifactName);
  artifact->set_digest(digest);
  artifact->set_size(static_cast<int64_t>(bytes.size()));
  artifact->set_kind(v1::AOT_RECIPE);
  manifest.set_tccd_version(TCCD_VERSION);
  manifest.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
  return store_->PutManifest(store_key, manifest);
}

absl::StatusOr<v1::AotRecipe> AotRecipeStore::Get(const std::string& key) {
  if (!IsHexKey(key))
    return absl::InvalidArgumentError("AotRecipeRequest.key must be 64 lowercase hex characters");
  absl::StatusOr<v1::Manifest> manifest = store_->GetManifest(RecipeStoreKey(key));
  if (absl::IsNotFound(manifest.status()))
    return absl::NotFoundError(absl::StrCat("no AOT recipe under key ", key));
  RETURN_IF_ERROR(manifest.status());
  if (manifest->artifacts_size() != 1 || manifest->artifacts(0).kind() != v1::AOT_RECIPE)
    return absl::InternalError(
        absl::StrCat("the manifest of AOT recipe ", key, " is not a recipe's"));
  ASSIGN_OR_RETURN(std::string bytes, store_->GetBlob(manifest->artifacts(0).digest()));
  v1::AotRecipe recipe;
  if (!recipe.ParseFromString(bytes) || recipe.key() != key)
    return absl::InternalError(absl::StrCat("the stored AOT recipe ", key, " does not parse"));
  return recipe;
}

}  // namespace tccd::server
