// The libm allow-list (see libm_symbols.h).
#include "codegen/cpu/libm_symbols.h"

#include <string>
#include <string_view>
#include <unordered_set>

namespace tccd::codegen {

bool IsLibmSymbol(std::string_view name) {
  static const auto* names = [] {
    // Double-precision names; the float variant appends "f".
    const char* base[] = {
        "exp",    "exp2",    "exp10", "expm1",  "log",   "log2",      "log10", "log1p", "pow",
        "sqrt",   "cbrt",    "sin",   "cos",    "tan",   "sincos",    "asin",  "acos",  "atan",
        "atan2",  "sinh",    "cosh",  "tanh",   "asinh", "acosh",     "atanh", "erf",   "erfc",
        "tgamma", "lgamma",  "floor", "ceil",   "round", "roundeven", "trunc", "rint",  "nearbyint",
        "fmod",   "fmin",    "fmax",  "fma",    "fabs",  "ldexp",     "frexp", "hypot", "copysign",
        "lround", "llround", "lrint", "llrint",
    };
    auto* set = new std::unordered_set<std::string>();
    for (const char* b : base) {
      set->insert(b);
      set->insert(std::string(b) + "f");
    }
    return set;
  }();
  return names->count(std::string(name)) > 0;
}

}  // namespace tccd::codegen
