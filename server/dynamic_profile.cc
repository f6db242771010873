// Checking and joining automatic-dynamic profiles; see dynamic_profile.h.
#include "server/dynamic_profile.h"

#include <map>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace tccd::server {
namespace {

using v1::ProfileAtom;
using v1::ProfileDims;

absl::Status CheckString(const std::string& s, absl::string_view what) {
  if (s.size() > kMaxProfileStringBytes)
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is ", s.size(), " bytes; at most ", kMaxProfileStringBytes));
  return absl::OkStatus();
}

absl::Status CheckAtom(const ProfileAtom& atom, absl::string_view what) {
  if (!ProfileAtom::Kind_IsValid(atom.kind()))
    return absl::InvalidArgumentError(absl::StrCat(what, " has unknown kind ", atom.kind()));
  if (atom.kind() == ProfileAtom::INFER_STRIDE &&
      (atom.value() < 0 || atom.value() >= kMaxProfileDims))
    return absl::InvalidArgumentError(
        absl::StrCat(what, " infers its stride from dim ", atom.value()));
  return absl::OkStatus();
}

absl::Status CheckDims(const ProfileDims& dims, absl::string_view what) {
  if (!ProfileDims::Kind_IsValid(dims.kind()))
    return absl::InvalidArgumentError(absl::StrCat(what, " has unknown kind ", dims.kind()));
  if (dims.kind() != ProfileDims::DIMS && dims.dims_size() != 0)
    return absl::InvalidArgumentError(absl::StrCat(what, " lists dims but is not DIMS"));
  if (dims.dims_size() > kMaxProfileDims)
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has ", dims.dims_size(), " dims; at most ", kMaxProfileDims));
  for (int i = 0; i < dims.dims_size(); ++i)
    if (absl::Status s = CheckAtom(dims.dims(i), absl::StrCat(what, "[", i, "]")); !s.ok())
      return s;
  return absl::OkStatus();
}

// Unset and dynamic carry no value; clearing it makes equal atoms equal bytes.
ProfileAtom Canonical(ProfileAtom atom) {
  if (atom.kind() == ProfileAtom::UNSET || atom.kind() == ProfileAtom::DYNAMIC) atom.clear_value();
  return atom;
}

ProfileAtom JoinAtom(const ProfileAtom& a, const ProfileAtom& b) {
  if (a.kind() == ProfileAtom::UNSET) return Canonical(b);
  if (b.kind() == ProfileAtom::UNSET) return Canonical(a);
  if (a.kind() == b.kind() && a.value() == b.value()) return Canonical(a);
  ProfileAtom dynamic;
  dynamic.set_kind(ProfileAtom::DYNAMIC);
  return dynamic;
}

ProfileDims CanonicalDims(const ProfileDims& d) {
  ProfileDims out;
  out.set_kind(d.kind());
  for (const ProfileAtom& atom : d.dims()) *out.add_dims() = Canonical(atom);
  return out;
}

ProfileDims JoinDims(const ProfileDims& a, const ProfileDims& b) {
  if (a.kind() == ProfileDims::UNSET) return CanonicalDims(b);
  if (b.kind() == ProfileDims::UNSET) return CanonicalDims(a);
  ProfileDims out;
  // A dimensionality change makes the whole tuple dynamic, as torch's _merge_atom_tup does.
  if (a.kind() == ProfileDims::DYNAMIC || b.kind() == ProfileDims::DYNAMIC ||
      a.dims_size() != b.dims_size()) {
    out.set_kind(ProfileDims::DYNAMIC);
    return out;
  }
  out.set_kind(ProfileDims::DIMS);
  for (int i = 0; i < a.dims_size(); ++i) *out.add_dims() = JoinAtom(a.dims(i), b.dims(i));
  return out;
}

v1::ProfileEntry JoinEntry(const v1::ProfileEntry& a, const v1::ProfileEntry& b) {
  v1::ProfileEntry out;
  out.set_source(a.source());
  *out.mutable_scalar() = JoinAtom(a.scalar(), b.scalar());
  *out.mutable_size() = JoinDims(a.size(), b.size());
  *out.mutable_stride() = JoinDims(a.stride(), b.stride());
  return out;
}

// torch's CodeId equality: the file's content hash when there is one, else its path.
using FrameKey = std::tuple<std::string, std::string, int32_t, std::string>;

FrameKey KeyOf(const v1::ProfileFrame& frame) {
  return {frame.file_hash(), frame.file_hash().empty() ? frame.filename() : std::string(),
          frame.first_line(), frame.name()};
}

struct JoinedFrame {
  v1::ProfileFrame header;  // no entries
  std::map<std::string, v1::ProfileEntry> entries;
};

void Add(const v1::ProfileFrame& frame, std::map<FrameKey, JoinedFrame>* frames) {
  auto [it, inserted] = frames->try_emplace(KeyOf(frame));
  JoinedFrame& joined = it->second;
  if (inserted) {
    joined.header = frame;
    joined.header.clear_entries();
  } else if (frame.filename() < joined.header.filename()) {
    joined.header.set_filename(frame.filename());  // any order of puts keeps the same one
  }
  for (const v1::ProfileEntry& entry : frame.entries()) {
    auto [e, fresh] = joined.entries.try_emplace(entry.source());
    v1::ProfileEntry unset;
    unset.set_source(entry.source());
    e->second = JoinEntry(fresh ? unset : e->second, entry);
  }
}

}  // namespace

absl::Status ValidateDynamicProfile(const v1::DynamicProfile& profile) {
  if (profile.frames_size() > kMaxProfileFrames)
    return absl::InvalidArgumentError(absl::StrCat("DynamicProfile has ", profile.frames_size(),
                                                   " frames; at most ", kMaxProfileFrames));
  for (int f = 0; f < profile.frames_size(); ++f) {
    const v1::ProfileFrame& frame = profile.frames(f);
    const std::string where = absl::StrCat("DynamicProfile.frames[", f, "]");
    for (const auto& [s, what] :
         {std::pair{&frame.filename(), "filename"}, std::pair{&frame.name(), "name"},
          std::pair{&frame.file_hash(), "file_hash"}}) {
      if (absl::Status st = CheckString(*s, absl::StrCat(where, ".", what)); !st.ok()) return st;
    }
    if (frame.entries_size() > kMaxProfileEntriesPerFrame)
      return absl::InvalidArgumentError(absl::StrCat(
          where, " has ", frame.entries_size(), " entries; at most ", kMaxProfileEntriesPerFrame));
    for (int e = 0; e < frame.entries_size(); ++e) {
      const v1::ProfileEntry& entry = frame.entries(e);
      const std::string at = absl::StrCat(where, ".entries[", e, "]");
      if (entry.source().empty())
        return absl::InvalidArgumentError(absl::StrCat(at, " has no source"));
      if (absl::Status s = CheckString(entry.source(), at + ".source"); !s.ok()) return s;
      if (absl::Status s = CheckAtom(entry.scalar(), at + ".scalar"); !s.ok()) return s;
      if (absl::Status s = CheckDims(entry.size(), at + ".size"); !s.ok()) return s;
      if (absl::Status s = CheckDims(entry.stride(), at + ".stride"); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

void MergeDynamicProfile(const v1::DynamicProfile& from, v1::DynamicProfile* into) {
  std::map<FrameKey, JoinedFrame> frames;
  for (const v1::ProfileFrame& frame : into->frames()) Add(frame, &frames);
  for (const v1::ProfileFrame& frame : from.frames()) Add(frame, &frames);
  into->clear_frames();
  for (auto& [key, joined] : frames) {
    v1::ProfileFrame* out = into->add_frames();
    *out = std::move(joined.header);
    for (auto& [source, entry] : joined.entries) *out->add_entries() = std::move(entry);
  }
}

}  // namespace tccd::server
