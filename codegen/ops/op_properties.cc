// The op-properties table (see op_properties.h).
#include "codegen/ops/op_properties.h"

#include <string>

#include "absl/container/flat_hash_map.h"

namespace tccd::codegen {
namespace {

using C = OpCategory;

const absl::flat_hash_map<std::string, OpProperties>& Table() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string, OpProperties>;
    auto add = [&](C category, std::initializer_list<const char*> targets, bool pure = true) {
      for (const char* target : targets) (*t)[target] = {.category = category, .pure = pure};
    };
    // After the views are added: their kinds (every other view stays kOther).
    auto view_kind = [&](ViewKind kind, std::initializer_list<const char*> targets) {
      for (const char* target : targets) (*t)[target].view = kind;
    };
    add(C::kView, {"aten::view.default",
                   "aten::_unsafe_view.default",
                   "aten::t.default",
                   "aten::transpose.int",
                   "aten::permute.default",
                   "aten::expand.default",
                   "aten::unsqueeze.default",
                   "aten::squeeze.dim",
                   "aten::squeeze.dims",
                   "aten::squeeze.default",
                   "aten::slice.Tensor",
                   "aten::select.int",
                   "aten::split.Tensor",
                   "aten::split_with_sizes.default",
                   "aten::unbind.int",
                   "aten::alias.default",
                   "aten::as_strided.default",
                   "aten::detach.default",
                   "aten::narrow.default",
                   "aten::diagonal.default",
                   "aten::view_as_real.default",
                   "aten::view_as_complex.default"});
    add(C::kReshape, {"aten::reshape.default"});
    for (auto& [target, properties] : *t) properties.view = ViewKind::kOther;
    view_kind(ViewKind::kIdentity, {"aten::alias.default", "aten::detach.default"});
    view_kind(ViewKind::kReshape,
              {"aten::view.default", "aten::_unsafe_view.default", "aten::reshape.default"});
    view_kind(ViewKind::kPermute,
              {"aten::permute.default", "aten::transpose.int", "aten::t.default"});
    view_kind(ViewKind::kExpand, {"aten::expand.default"});
    add(C::kPointwise, {"aten::add.Tensor",
                        "aten::add.Scalar",
                        "aten::sub.Tensor",
                        "aten::sub.Scalar",
                        "aten::rsub.Scalar",
                        "aten::mul.Tensor",
                        "aten::mul.Scalar",
                        "aten::div.Tensor",
                        "aten::div.Scalar",
                        "aten::div.Tensor_mode",
                        "aten::neg.default",
                        "aten::abs.default",
                        "aten::exp.default",
                        "aten::log.default",
                        "aten::log1p.default",
                        "aten::expm1.default",
                        "aten::sqrt.default",
                        "aten::rsqrt.default",
                        "aten::tanh.default",
                        "aten::sigmoid.default",
                        "aten::erf.default",
                        "aten::sin.default",
                        "aten::cos.default",
                        "aten::reciprocal.default",
                        "aten::floor.default",
                        "aten::ceil.default",
                        "aten::round.default",
                        "aten::relu.default",
                        "aten::silu.default",
                        "aten::gelu.default",
                        "aten::pow.Tensor_Scalar",
                        "aten::pow.Tensor_Tensor",
                        "aten::maximum.default",
                        "aten::minimum.default",
                        "aten::clamp.default",
                        "aten::clamp.Tensor",
                        "aten::clamp_min.default",
                        "aten::clamp_max.default",
                        "aten::where.self",
                        "aten::eq.Tensor",
                        "aten::eq.Scalar",
                        "aten::ne.Tensor",
                        "aten::ne.Scalar",
                        "aten::lt.Tensor",
                        "aten::lt.Scalar",
                        "aten::le.Tensor",
                        "aten::le.Scalar",
                        "aten::gt.Tensor",
                        "aten::gt.Scalar",
                        "aten::ge.Tensor",
                        "aten::ge.Scalar",
                        "aten::logical_not.default",
                        "aten::logical_and.default",
                        "aten::logical_or.default",
                        "aten::bitwise_and.Tensor",
                        "aten::bitwise_or.Tensor",
                        "aten::bitwise_xor.Tensor",
                        "aten::bitwise_not.default",
                        "aten::isnan.default",
                        "aten::isinf.default",
                        "aten::clone.default",
                        "aten::_to_copy.default",
                        "aten::copy.default",
                        "prims::convert_element_type.default",
                        "aten::threshold_backward.default",
                        "aten::sigmoid_backward.default",
                        "aten::tanh_backward.default",
                        "aten::gelu_backward.default",
                        "aten::silu_backward.default",
                        "aten::native_dropout_backward.default",
                        "aten::fill.Scalar",
                        "aten::zeros_like.default",
                        "aten::ones_like.default",
                        "aten::full_like.default",
                        "aten::full.default",
                        "aten::zeros.default",
                        "aten::ones.default",
                        "aten::scalar_tensor.default",
                        "aten::masked_fill.Scalar",
                        "tccd::philox_uniform.default",
                        "aten::sign.default",
                        "aten::logical_xor.default",
                        "aten::leaky_relu.default",
                        "aten::leaky_relu_backward.default",
                        "aten::hardtanh.default",
                        "aten::hardtanh_backward.default",
                        "aten::hardsigmoid.default",
                        "aten::hardswish.default",
                        "aten::addcmul.default",
                        "aten::addcdiv.default",
                        "aten::lerp.Scalar"});
    add(C::kReduction,
        {"aten::sum.dim_IntList", "aten::sum.default", "aten::mean.dim", "aten::mean.default",
         "aten::amax.default", "aten::amin.default", "aten::logsumexp.default",
         "aten::var.correction", "aten::var_mean.correction", "aten::_softmax.default",
         "aten::_safe_softmax.default", "aten::_log_softmax.default",
         "aten::_softmax_backward_data.default", "aten::_log_softmax_backward_data.default",
         "aten::native_layer_norm.default", "aten::_fused_rms_norm.default",
         "aten::native_layer_norm_backward.default", "aten::nll_loss_forward.default"});
    add(C::kGemm, {"aten::mm.default", "aten::bmm.default", "aten::addmm.default"});
    add(C::kNorm, {"aten::_native_batch_norm_legit_functional.default",
                   "aten::_native_batch_norm_legit_no_training.default",
                   "aten::native_batch_norm_backward.default", "aten::cudnn_batch_norm.default",
                   "aten::cudnn_batch_norm_backward.default"});
    add(C::kIndex,
        {"aten::embedding.default", "aten::index_select.default", "aten::cat.default",
         "aten::stack.default", "aten::constant_pad_nd.default", "aten::slice_scatter.default",
         "aten::select_scatter.default", "aten::slice_backward.default",
         "aten::select_backward.default", "aten::nll_loss_backward.default", "aten::gather.default",
         "aten::index.Tensor", "tccd::max_pool2d_values.default",
         "tccd::max_pool2d_offsets.default", "tccd::max_pool2d_gather_backward.default",
         "tccd::depthwise_conv2d.default", "tccd::depthwise_conv2d_weight_partials.default"});
    add(C::kScatter, {"tccd::embedding_scatter_add.default"});
    add(C::kOther, {"aten::embedding_dense_backward.default", "aten::convolution.default",
                    "aten::convolution_backward.default", "aten::max_pool2d_with_indices.default",
                    "aten::max_pool2d_with_indices_backward.default", "aten::avg_pool2d.default",
                    "aten::avg_pool2d_backward.default", "aten::_adaptive_avg_pool2d.default",
                    "aten::_adaptive_avg_pool2d_backward.default", "aten::empty.memory_format",
                    "aten::arange.start", "aten::arange.default", "aten::scatter_add.default",
                    "aten::new_zeros.default", "aten::new_ones.default", "aten::new_full.default",
                    "aten::cumsum.default",
                    "aten::_scaled_dot_product_flash_attention.default",
                    "aten::_scaled_dot_product_efficient_attention.default"});
    // Random ops advance the generator: dropping a dead one would change later draws.
    add(C::kOther,
        {"aten::native_dropout.default", "aten::rand_like.default", "aten::randn_like.default",
         "aten::bernoulli.p", "aten::bernoulli.default", "aten::randint.low"},
        /*pure=*/false);
    // In-place and functional-copy-into ops write their first argument.
    add(C::kOther, {"aten::copy_.default"}, /*pure=*/false);
    // Updates its running statistics in place (batch_norm_stats_in_place.h).
    add(C::kNorm, {"aten::_native_batch_norm_legit.default"}, /*pure=*/false);
    return t;
  }();
  return *table;
}

}  // namespace

OpProperties PropertiesOf(absl::string_view target) {
  auto it = Table().find(target);
  return it == Table().end() ? OpProperties{} : it->second;
}

const char* OpCategoryName(OpCategory category) {
  switch (category) {
    case C::kUnknown:
      return "unknown";
    case C::kView:
      return "view";
    case C::kReshape:
      return "reshape";
    case C::kPointwise:
      return "pointwise";
    case C::kReduction:
      return "reduction";
    case C::kIndex:
      return "index";
    case C::kGemm:
      return "gemm";
    case C::kNorm:
      return "norm";
    case C::kScatter:
      return "scatter";
    case C::kOther:
      return "other";
  }
  return "?";
}

}  // namespace tccd::codegen
