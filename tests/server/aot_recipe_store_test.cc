// AotRecipeStore on a real Store: a recipe naming stored plans round trips, the first one under a
// key stays, malformed ones and ones naming plans the store lacks are refused.
#include "server/aot_recipe_store.h"

#include <catch2/catch.hpp>
#include <string>

#include "cache/store.h"
#include "tests/cache/test_util.h"

namespace tccd::server {
namespace {

using cache::testing::OpenOrDie;
using cache::testing::TempDir;

const std::string kRecipeKey = std::string(64, 'a');
const std::string kPlanKey = std::string(64, 'b');

v1::AotRecipe Recipe(const std::string& json) {
  v1::AotRecipe recipe;
  recipe.set_key(kRecipeKey);
  recipe.set_recipe(json);
  recipe.add_plan_keys(kPlanKey);
  return recipe;
}

TEST_CASE("AOT recipes: round trip, first one stays, bad ones refused", "[aot_recipe_store]") {
  TempDir dir;
  std::unique_ptr<cache::Store> store = OpenOrDie(dir.path());
  AotRecipeStore recipes(store.get());

  // The plan it names is not stored yet.
  CHECK(absl::IsFailedPrecondition(recipes.Put(Recipe("{\"a\": 1}"))));
  CHECK(absl::IsNotFound(recipes.Get(kRecipeKey).status()));

  v1::Manifest plan;
  plan.set_key(kPlanKey);
  TCCD_REQUIRE_OK(store->PutManifest(kPlanKey, plan));
  TCCD_REQUIRE_OK(recipes.Put(Recipe("{\"a\": 1}")));
  TCCD_REQUIRE_OK(recipes.Put(Recipe("{\"a\": 2}")));  // ignored: the first stays
  absl::StatusOr<v1::AotRecipe> got = recipes.Get(kRecipeKey);
  TCCD_REQUIRE_OK(got);
  CHECK(got->recipe() == "{\"a\": 1}");
  REQUIRE(got->plan_keys_size() == 1);
  CHECK(got->plan_keys(0) == kPlanKey);
  // Kept apart from compile keys: the recipe key itself names no manifest.
  CHECK(absl::IsNotFound(store->GetManifest(kRecipeKey).status()));

  v1::AotRecipe bad = Recipe("{}");
  bad.set_key("not hex");
  CHECK(absl::IsInvalidArgument(recipes.Put(bad)));
  bad = Recipe("");
  CHECK(absl::IsInvalidArgument(recipes.Put(bad)));
  bad = Recipe(std::string(kMaxAotRecipeBytes + 1, ' '));
  CHECK(absl::IsInvalidArgument(recipes.Put(bad)));
  bad = Recipe("{}");
  bad.clear_plan_keys();
  CHECK(absl::IsInvalidArgument(recipes.Put(bad)));
  CHECK(absl::IsInvalidArgument(recipes.Get("nope").status()));
}

}  // namespace
}  // namespace tccd::server
