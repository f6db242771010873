"""The AOTAutograd field sets tccd's AOT recipe was reviewed against, per tested torch minor.

Data only; aot_guard.py compares the live torch with it. Each entry is what
tests/tools/aot_field_sets.py prints for that torch's sources (2.11.0: the sources of its wheel;
2.15.0: the CI venv's), after a person read the recipe code (aot_recipe.py, aot_runtime.py)
against that version's schemas.py and runtime_wrappers.py. Adding a minor means doing that
review again, not just pasting the tool's output: see aot_guard.py.
"""

# torch minor -> {"schemas.<class>" / "runtime_wrappers.<class>": sorted field (or enum member)
# names; "runtime_wrappers": the sorted names of every class that module defines}.
REVIEWED = {
    "2.11": {
        "runtime_wrappers": (
            "AOTDedupeWrapper", "AOTDispatchAutograd", "AOTDispatchSubclassWrapper",
            "AOTSyntheticBaseWrapper", "AliasOfInputHandler", "AliasOfIntermediateHandler",
            "AutogradLazyBackwardCompileInfo", "CachedAutogradLazyBackwardCompileInfo",
            "DebugAssertWrapper", "EffectTokensWrapper", "FakifiedOutWrapper",
            "FunctionalizedRngRuntimeWrapper", "IsInputHandler", "NoopAliasHandler",
            "RuntimeWrapper", "SerializableCompiledFunction", "_AnalyzeCustomOpInputOutputMode",
            "_FirstInvocationContext",
        ),
        "runtime_wrappers.AOTDedupeWrapper": (
            "add_dupe_map", "keep_arg_mask", "needs_post_compile", "old_input_metadata",
        ),
        "runtime_wrappers.AOTDispatchSubclassWrapper": (
            "fw_only", "maybe_subclass_meta", "num_fw_outs_saved_for_bw", "trace_joint",
        ),
        "runtime_wrappers.AOTSyntheticBaseWrapper": (
            "aliased_arg_idx_with_metadata_mutations", "needs_post_compile", "trace_joint",
        ),
        "runtime_wrappers.AutogradLazyBackwardCompileInfo": (
            "bw_module", "placeholder_list", "saved_compile_context", "saved_context",
        ),
        "runtime_wrappers.CachedAutogradLazyBackwardCompileInfo": ("bw_module_fn",),
        "runtime_wrappers.DebugAssertWrapper": ("flat_requires_grad",),
        "runtime_wrappers.EffectTokensWrapper": (),
        "runtime_wrappers.FakifiedOutWrapper": (
            "fwd_output_strides", "needs_post_compile", "out_metas",
        ),
        "runtime_wrappers.FunctionalizedRngRuntimeWrapper": ("return_new_outs",),
        "runtime_wrappers.RuntimeWrapper": (
            "disable_amp", "indices_of_inps_to_detach", "trace_joint",
        ),
        "runtime_wrappers.SerializableCompiledFunction": ("compiled_fn", "serialize_fn"),
        "schemas.InputAliasInfo": (
            "is_leaf", "keep_input_mutations", "mutates_data", "mutates_metadata",
            "mutates_storage_metadata", "mutation_inductor_storage_resize",
            "mutations_hidden_from_autograd", "mutations_under_no_grad_or_inference_mode",
            "requires_grad",
        ),
        "schemas.MemoryFormatMeta": ("memory_format", "size", "stride"),
        "schemas.MutationType": ("MUTATED_IN_GRAPH", "MUTATED_OUT_GRAPH", "NOT_MUTATED"),
        "schemas.OutputAliasInfo": (
            "base_idx", "dynamic_dims", "output_type", "raw_type", "requires_grad",
            "view_meta_sequence",
        ),
        "schemas.OutputType": (
            "alias_of_input", "alias_of_intermediate", "alias_of_intermediate_base_is_user_output",
            "alias_of_intermediate_save_as_output", "custom_function_view", "is_input",
            "non_alias", "unsafe_view_alias",
        ),
        "schemas.PlainTensorMeta": ("memory_format", "unwrapped_idx"),
        "schemas.ViewAndMutationMeta": (
            "bw_donated_idxs", "deterministic", "grad_enabled_mutation",
            "graphsafe_rng_state_index",
            "indices_of_inputs_that_requires_grad_with_mutations_in_bw", "input_info", "is_train",
            "keep_input_mutations", "mutated_inp_stream_indices", "num_backward_tokens",
            "num_graphsafe_rng_states", "num_intermediate_bases",
            "num_opaque_objects_saved_for_bw", "num_symints_saved_for_bw",
            "num_tensors_saved_with_no_vc_check", "output_info", "static_input_indices",
            "subclass_fw_graph_out_meta", "subclass_inp_meta", "subclass_tangent_meta", "tokens",
            "traced_tangent_metas", "traced_tangents", "traced_tangents_descs",
        ),
    },
    "2.15": {
        "runtime_wrappers": (
            "AOTDedupeWrapper", "AOTDispatchAutograd", "AOTDispatchAutogradCompileSpec",
            "AOTDispatchSubclassWrapper", "AOTSyntheticBaseWrapper", "AliasOfInputHandler",
            "AliasOfIntermediateHandler", "AutogradLazyBackwardCompileInfo",
            "CachedAutogradLazyBackwardCompileInfo", "DebugAssertWrapper", "EffectTokensWrapper",
            "FakifiedOutWrapper", "FunctionalizedRngRuntimeWrapper", "IsInputHandler",
            "NoopAliasHandler", "RuntimeWrapper", "SerializableCompiledFunction",
            "_AOTDispatchAutogradFunctionFactory", "_AnalyzeCustomOpInputOutputMode",
            "_AutogradBackwardCompiler", "_AutogradForwardEpilogue", "_AutogradRngStateTracker",
            "_AutogradSavedState", "_FirstInvocationContext", "_RuntimeCompiledFnInvoker",
            "_RuntimeForwardEpilogue",
        ),
        "runtime_wrappers.AOTDedupeWrapper": (
            "add_dupe_map", "keep_arg_mask", "needs_post_compile", "old_input_metadata",
        ),
        "runtime_wrappers.AOTDispatchAutogradCompileSpec": (
            "aot_config", "backward_state_indices", "bw_compiler", "compiled_bw_func",
            "compiled_fw_func", "disable_amp", "fw_metadata", "indices_of_inps_to_detach",
            "lazy_backward_info", "maybe_subclass_meta", "num_symints_saved_for_bw",
            "try_save_cache_entry",
        ),
        "runtime_wrappers.AOTDispatchSubclassWrapper": (
            "fw_only", "maybe_subclass_meta", "num_fw_outs_saved_for_bw", "trace_joint",
        ),
        "runtime_wrappers.AOTSyntheticBaseWrapper": (
            "aliased_arg_idx_with_metadata_mutations", "base_groups", "needs_post_compile",
            "other_arg_indices", "trace_joint",
        ),
        "runtime_wrappers.AutogradLazyBackwardCompileInfo": (
            "bw_module", "placeholder_list", "saved_compile_context", "saved_context",
        ),
        "runtime_wrappers.CachedAutogradLazyBackwardCompileInfo": ("bw_module_fn",),
        "runtime_wrappers.DebugAssertWrapper": ("flat_requires_grad",),
        "runtime_wrappers.EffectTokensWrapper": (),
        "runtime_wrappers.FakifiedOutWrapper": (
            "fwd_output_strides", "needs_post_compile", "out_metas",
        ),
        "runtime_wrappers.FunctionalizedRngRuntimeWrapper": ("return_new_outs",),
        "runtime_wrappers.RuntimeWrapper": (
            "disable_amp", "indices_of_inps_to_detach", "trace_joint",
        ),
        "runtime_wrappers.SerializableCompiledFunction": ("compiled_fn", "serialize_fn"),
        "runtime_wrappers._AOTDispatchAutogradFunctionFactory": ("spec",),
        "runtime_wrappers._AutogradBackwardCompiler": (
            "aot_config", "bw_compiler", "compiled_bw", "disable_amp", "fw_metadata",
            "lazy_backward_info", "try_save_cache_entry",
        ),
        "runtime_wrappers._AutogradForwardEpilogue": ("metadata",),
        "runtime_wrappers._AutogradRngStateTracker": (
            "backward_state_position", "bwd_rng_states", "curr_fwd_iter", "device",
            "fwd_rng_states", "graphsafe_idx", "num_rng", "pending_forwards",
            "saved_backward_tensor_states",
        ),
        "runtime_wrappers._AutogradSavedState": ("metadata",),
        "runtime_wrappers._RuntimeCompiledFnInvoker": (
            "compiled_fn", "disable_amp", "first_invocation_ctx", "indices_of_inps_to_detach",
            "trace_joint",
        ),
        "runtime_wrappers._RuntimeForwardEpilogue": (
            "epilogue_args_idx", "keep_input_mutations", "output_handlers", "runtime_metadata",
            "trace_joint",
        ),
        "schemas.InputAliasInfo": (
            "is_leaf", "keep_input_mutations", "mutates_data", "mutates_metadata",
            "mutates_storage_metadata", "mutation_inductor_storage_resize",
            "mutation_is_shallow_copy_data", "mutations_hidden_from_autograd",
            "mutations_under_no_grad_or_inference_mode", "requires_grad",
        ),
        "schemas.MemoryFormatMeta": ("memory_format", "size", "stride"),
        "schemas.MutationType": ("MUTATED_IN_GRAPH", "MUTATED_OUT_GRAPH", "NOT_MUTATED"),
        "schemas.OutputAliasInfo": (
            "base_idx", "dynamic_dims", "output_type", "raw_type", "requires_grad",
            "requires_grad_for_backward", "view_meta_sequence",
        ),
        "schemas.OutputType": (
            "alias_of_input", "alias_of_intermediate", "alias_of_intermediate_base_is_user_output",
            "alias_of_intermediate_save_as_output", "custom_function_view", "is_input",
            "non_alias", "unsafe_view_alias",
        ),
        "schemas.PlainTensorMeta": (
            "memory_format", "size_symbol_placeholders", "stride_symbol_placeholders",
            "unwrapped_idx",
        ),
        "schemas.ViewAndMutationMeta": (
            "act_input_paths", "bw_donated_idxs", "compile_id_str", "deterministic",
            "grad_enabled_mutation", "graphsafe_rng_device", "graphsafe_rng_state_index",
            "indices_of_inputs_that_requires_grad_with_mutations_in_bw", "input_info",
            "keep_input_mutations", "mutated_inp_stream_indices", "num_backward_tokens",
            "num_graphsafe_rng_states", "num_intermediate_bases",
            "num_opaque_objects_saved_for_bw", "num_symints_saved_for_bw",
            "num_tensors_saved_with_no_vc_check", "output_info", "saved_tensor_is_graph_input",
            "static_input_indices", "subclass_fw_graph_out_meta", "subclass_inp_meta",
            "subclass_tangent_meta", "tangent_source_stack_traces", "tokens",
            "traced_tangent_metas", "traced_tangents", "traced_tangents_descs",
        ),
    },
}
