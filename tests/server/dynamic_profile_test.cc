// Automatic-dynamic profiles: the join (torch's PGO semantics, commutative, associative,
// idempotent, canonical), the checks on what clients send, and DynamicProfileStore on a real
// Store (merged puts, per-job isolation, profiles surviving a reopen).
#include "server/dynamic_profile.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "cache/store.h"
#include "server/dynamic_profile_store.h"
#include "tests/cache/test_util.h"

namespace tccd::server {
namespace {

using cache::testing::OpenOrDie;
using cache::testing::TempDir;
using v1::ProfileAtom;
using v1::ProfileDims;

ProfileAtom Static(int64_t v) {
  ProfileAtom a;
  a.set_kind(ProfileAtom::STATIC);
  a.set_value(v);
  return a;
}
ProfileAtom Dynamic() {
  ProfileAtom a;
  a.set_kind(ProfileAtom::DYNAMIC);
  return a;
}

ProfileDims Dims(const std::vector<ProfileAtom>& atoms) {
  ProfileDims d;
  d.set_kind(ProfileDims::DIMS);
  for (const ProfileAtom& a : atoms) *d.add_dims() = a;
  return d;
}

// A profile of one frame with one tensor input `source` of the given sizes (contiguous
// strides left unset, as torch leaves them for inputs it never compared).
v1::DynamicProfile Tensor(const std::string& source, const std::vector<ProfileAtom>& size,
                          const std::string& file_hash = "abcd1234") {
  v1::DynamicProfile p;
  p.set_job_id("job");
  v1::ProfileFrame* f = p.add_frames();
  f->set_filename("/src/model.py");
  f->set_first_line(10);
  f->set_name("forward");
  f->set_file_hash(file_hash);
  v1::ProfileEntry* e = f->add_entries();
  e->set_source(source);
  e->mutable_scalar()->set_kind(ProfileAtom::DYNAMIC);  // torch: a tensor is no scalar
  *e->mutable_size() = Dims(size);
  return p;
}

v1::DynamicProfile Merged(const v1::DynamicProfile& a, const v1::DynamicProfile& b) {
  v1::DynamicProfile out = a;
  MergeDynamicProfile(b, &out);
  return out;
}

TEST_CASE("profiles: two static sizes join to dynamic, equal ones stay", "[dynamic_profile]") {
  v1::DynamicProfile m =
      Merged(Tensor("L['x']", {Static(8), Static(32)}), Tensor("L['x']", {Static(8), Static(64)}));
  REQUIRE(m.frames_size() == 1);
  REQUIRE(m.frames(0).entries_size() == 1);
  const ProfileDims& size = m.frames(0).entries(0).size();
  REQUIRE(size.kind() == ProfileDims::DIMS);
  CHECK(size.dims(0).kind() == ProfileAtom::STATIC);
  CHECK(size.dims(0).value() == 8);
  CHECK(size.dims(1).kind() == ProfileAtom::DYNAMIC);

  // A dim dynamic on one rank is dynamic for the job, whatever the other saw.
  m = Merged(Tensor("L['x']", {Static(8), Dynamic()}), Tensor("L['x']", {Static(8), Static(5)}));
  CHECK(m.frames(0).entries(0).size().dims(1).kind() == ProfileAtom::DYNAMIC);

  // A rank change makes the whole size dynamic (torch's _merge_atom_tup).
  m = Merged(Tensor("L['x']", {Static(8)}), Tensor("L['x']", {Static(8), Static(2)}));
  CHECK(m.frames(0).entries(0).size().kind() == ProfileDims::DYNAMIC);
}

TEST_CASE("profiles: frames by file hash, line and name; other inputs kept apart",
          "[dynamic_profile]") {
  v1::DynamicProfile a = Tensor("L['x']", {Static(4)});
  v1::DynamicProfile b = Tensor("L['y']", {Static(4)});
  b.mutable_frames(0)->set_filename("/copy/of/model.py");  // a restarted job's copy
  v1::DynamicProfile m = Merged(a, b);
  REQUIRE(m.frames_size() == 1);
  CHECK(m.frames(0).entries_size() == 2);
  CHECK(m.frames(0).filename() == "/copy/of/model.py");  // the smaller path, in any order
  CHECK(Merged(b, a).SerializeAsString() == m.SerializeAsString());

  v1::DynamicProfile other_file = Tensor("L['x']", {Static(5)}, "ffff0000");
  CHECK(Merged(a, other_file).frames_size() == 2);
}

// Random profiles over a small alphabet, so that frames, sources and dims collide often.
v1::DynamicProfile RandomProfile(std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  auto atom = [&]() {
    ProfileAtom a;
    switch (pick(4)) {
      case 0:
        break;  // unset
      case 1:
        a = Static(pick(3));
        break;
      case 2:
        a = Dynamic();
        break;
      default:
        a.set_kind(ProfileAtom::INFER_STRIDE);
        a.set_value(pick(2));
    }
    return a;
  };
  auto dims = [&]() {
    ProfileDims d;
    switch (pick(3)) {
      case 0:
        break;
      case 1:
        d.set_kind(ProfileDims::DYNAMIC);
        break;
      default:
        d.set_kind(ProfileDims::DIMS);
        for (int i = 0, n = 1 + pick(2); i < n; ++i) *d.add_dims() = atom();
    }
    return d;
  };
  v1::DynamicProfile p;
  for (int f = 0, nf = pick(3); f < nf; ++f) {
    v1::ProfileFrame* frame = p.add_frames();
    frame->set_filename(pick(2) ? "/a.py" : "/b.py");
    frame->set_file_hash(pick(2) ? "h1" : "");
    frame->set_first_line(pick(2));
    frame->set_name("f");
    for (int e = 0, ne = pick(3); e < ne; ++e) {
      v1::ProfileEntry* entry = frame->add_entries();
      entry->set_source(pick(2) ? "L['x']" : "L['n']");
      *entry->mutable_scalar() = atom();
      *entry->mutable_size() = dims();
      *entry->mutable_stride() = dims();
    }
  }
  return p;
}

TEST_CASE("profiles: the join is commutative, associative and idempotent", "[dynamic_profile]") {
  std::mt19937 rng(9);
  for (int i = 0; i < 2000; ++i) {
    const v1::DynamicProfile a = RandomProfile(rng), b = RandomProfile(rng), c = RandomProfile(rng);
    REQUIRE(ValidateDynamicProfile(a).ok());
    const v1::DynamicProfile ab = Merged(a, b);
    CHECK(ab.SerializeAsString() == Merged(b, a).SerializeAsString());
    CHECK(Merged(ab, c).SerializeAsString() == Merged(a, Merged(b, c)).SerializeAsString());
    CHECK(Merged(ab, ab).SerializeAsString() == ab.SerializeAsString());
    CHECK(Merged(ab, a).SerializeAsString() == ab.SerializeAsString());
  }
}

TEST_CASE("profiles: malformed ones are INVALID_ARGUMENT", "[dynamic_profile]") {
  v1::DynamicProfile p = Tensor("L['x']", {Static(1)});
  CHECK(ValidateDynamicProfile(p).ok());
  v1::DynamicProfile bad = p;
  bad.mutable_frames(0)->mutable_entries(0)->mutable_size()->mutable_dims(0)->set_kind(
      static_cast<ProfileAtom::Kind>(77));
  CHECK(absl::IsInvalidArgument(ValidateDynamicProfile(bad)));
  bad = p;
  bad.mutable_frames(0)->mutable_entries(0)->mutable_size()->set_kind(ProfileDims::DYNAMIC);
  CHECK(absl::IsInvalidArgument(ValidateDynamicProfile(bad)));  // DYNAMIC with dims
  bad = p;
  bad.mutable_frames(0)->mutable_entries(0)->clear_source();
  CHECK(absl::IsInvalidArgument(ValidateDynamicProfile(bad)));
  bad = p;
  for (int i = 0; i < kMaxProfileDims; ++i)
    *bad.mutable_frames(0)->mutable_entries(0)->mutable_size()->add_dims() = Static(1);
  CHECK(absl::IsInvalidArgument(ValidateDynamicProfile(bad)));
  bad = p;
  bad.mutable_frames(0)->set_filename(std::string(kMaxProfileStringBytes + 1, 'x'));
  CHECK(absl::IsInvalidArgument(ValidateDynamicProfile(bad)));
  bad = p;
  bad.mutable_frames(0)->mutable_entries(0)->mutable_scalar()->set_kind(ProfileAtom::INFER_STRIDE);
  bad.mutable_frames(0)->mutable_entries(0)->mutable_scalar()->set_value(-1);
  CHECK(absl::IsInvalidArgument(ValidateDynamicProfile(bad)));
}

TEST_CASE("profile store: puts of two ranks merge, jobs are apart, a reopen keeps them",
          "[dynamic_profile]") {
  TempDir dir;
  {
    std::unique_ptr<cache::Store> store = OpenOrDie(dir.path());
    DynamicProfileStore profiles(store.get());
    CHECK(absl::IsNotFound(profiles.Get("job").status()));

    absl::StatusOr<v1::DynamicProfile> after =
        profiles.Put(Tensor("L['x']", {Static(8), Static(32)}), 1000);  // rank 0
    TCCD_REQUIRE_OK(after);
    CHECK(after->puts() == 1);
    after = profiles.Put(Tensor("L['x']", {Dynamic(), Static(32)}), 2000);  // rank 1
    TCCD_REQUIRE_OK(after);
    CHECK(after->puts() == 2);
    CHECK(after->updated_unix_ms() == 2000);
    CHECK(after->frames(0).entries(0).size().dims(0).kind() == ProfileAtom::DYNAMIC);
    CHECK(after->frames(0).entries(0).size().dims(1).kind() == ProfileAtom::STATIC);

    v1::DynamicProfile other = Tensor("L['x']", {Static(1)});
    other.set_job_id("job-2");
    TCCD_REQUIRE_OK(profiles.Put(other, 3000));
    absl::StatusOr<v1::DynamicProfile> two = profiles.Get("job-2");
    TCCD_REQUIRE_OK(two);
    CHECK(two->frames(0).entries(0).size().dims(0).kind() == ProfileAtom::STATIC);

    v1::DynamicProfile no_job = Tensor("L['x']", {Static(1)});
    no_job.clear_job_id();
    CHECK(absl::IsInvalidArgument(profiles.Put(no_job, 0).status()));
    // Profiles are not manifests: the compile index does not see them.
    CHECK(store->GetUsage().manifests == 0);
    TCCD_REQUIRE_OK(store->Close());
  }
  std::unique_ptr<cache::Store> store = OpenOrDie(dir.path());
  DynamicProfileStore profiles(store.get());
  absl::StatusOr<v1::DynamicProfile> kept = profiles.Get("job");
  TCCD_REQUIRE_OK(kept);
  CHECK(kept->puts() == 2);
  CHECK(kept->job_id() == "job");
  CHECK(kept->frames(0).entries(0).size().dims(0).kind() == ProfileAtom::DYNAMIC);
}

}  // namespace
}  // namespace tccd::server
