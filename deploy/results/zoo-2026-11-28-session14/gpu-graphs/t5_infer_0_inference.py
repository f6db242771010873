class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "i64[2, 256]", arg1_1: "f32[32128, 512]", arg2_1: "f32[512]", arg3_1: "f32[512, 512]", arg4_1: "f32[512, 512]", arg5_1: "f32[512, 512]", arg6_1: "f32[32, 8]", arg7_1: "f32[512, 512]", arg8_1: "f32[512]", arg9_1: "f32[2048, 512]", arg10_1: "f32[512, 2048]", arg11_1: "f32[512]", arg12_1: "f32[512, 512]", arg13_1: "f32[512, 512]", arg14_1: "f32[512, 512]", arg15_1: "f32[512, 512]", arg16_1: "f32[512]", arg17_1: "f32[2048, 512]", arg18_1: "f32[512, 2048]", arg19_1: "f32[512]", arg20_1: "f32[512, 512]", arg21_1: "f32[512, 512]", arg22_1: "f32[512, 512]", arg23_1: "f32[512, 512]", arg24_1: "f32[512]", arg25_1: "f32[2048, 512]", arg26_1: "f32[512, 2048]", arg27_1: "f32[512]", arg28_1: "f32[512, 512]", arg29_1: "f32[512, 512]", arg30_1: "f32[512, 512]", arg31_1: "f32[512, 512]", arg32_1: "f32[512]", arg33_1: "f32[2048, 512]", arg34_1: "f32[512, 2048]", arg35_1: "f32[512]", arg36_1: "i64[2, 256]", arg37_1: "f32[512]", arg38_1: "f32[512, 512]", arg39_1: "f32[512, 512]", arg40_1: "f32[512, 512]", arg41_1: "f32[32, 8]", arg42_1: "f32[512, 512]", arg43_1: "f32[512]", arg44_1: "f32[512, 512]", arg45_1: "f32[512, 512]", arg46_1: "f32[512, 512]", arg47_1: "f32[512, 512]", arg48_1: "f32[512]", arg49_1: "f32[2048, 512]", arg50_1: "f32[512, 2048]", arg51_1: "f32[512]", arg52_1: "f32[512, 512]", arg53_1: "f32[512, 512]", arg54_1: "f32[512, 512]", arg55_1: "f32[512, 512]", arg56_1: "f32[512]", arg57_1: "f32[512, 512]", arg58_1: "f32[512, 512]", arg59_1: "f32[512, 512]", arg60_1: "f32[512, 512]", arg61_1: "f32[512]", arg62_1: "f32[2048, 512]", arg63_1: "f32[512, 2048]", arg64_1: "f32[512]", arg65_1: "f32[512, 512]", arg66_1: "f32[512, 512]", arg67_1: "f32[512, 512]", arg68_1: "f32[512, 512]", arg69_1: "f32[512]", arg70_1: "f32[512, 512]", arg71_1: "f32[512, 512]", arg72_1: "f32[512, 512]", arg73_1: "f32[512, 512]", arg74_1: "f32[512]", arg75_1: "f32[2048, 512]", arg76_1: "f32[512, 2048]", arg77_1: "f32[512]", arg78_1: "f32[512, 512]", arg79_1: "f32[512, 512]", arg80_1: "f32[512, 512]", arg81_1: "f32[512, 512]", arg82_1: "f32[512]", arg83_1: "f32[512, 512]", arg84_1: "f32[512, 512]", arg85_1: "f32[512, 512]", arg86_1: "f32[512, 512]", arg87_1: "f32[512]", arg88_1: "f32[2048, 512]", arg89_1: "f32[512, 2048]", arg90_1: "f32[512]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:678 in forward, code: inputs_embeds = self.embed_tokens(input_ids)
        embedding: "f32[2, 256, 512]" = torch.ops.aten.embedding.default(arg1_1, arg0_1);  arg0_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:510 in sdpa_mask, code: q_arange = torch.arange(q_length, device=device) + q_offset
        arange_2: "i64[256]" = torch.ops.aten.arange.default(256, device = device(type='cuda', index=0), pin_memory = False)
        add: "i64[256]" = torch.ops.aten.add.Tensor(arange_2, 0);  arange_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:367 in _non_vmap_expansion_sdpa, code: q_indices = q_indices[None, None, :, None]
        unsqueeze: "i64[1, 256]" = torch.ops.aten.unsqueeze.default(add, 0);  add = None
        unsqueeze_1: "i64[1, 1, 256]" = torch.ops.aten.unsqueeze.default(unsqueeze, 1);  unsqueeze = None
        unsqueeze_2: "i64[1, 1, 256, 1]" = torch.ops.aten.unsqueeze.default(unsqueeze_1, 3);  unsqueeze_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:90 in bidirectional_mask_function, code: return q_idx >= 0
        ge: "b8[1, 1, 256, 1]" = torch.ops.aten.ge.Scalar(unsqueeze_2, 0);  unsqueeze_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:519 in sdpa_mask, code: attention_mask = attention_mask.expand(batch_size, -1, q_length, kv_length)
        expand: "b8[2, 1, 256, 256]" = torch.ops.aten.expand.default(ge, [2, -1, 256, 256]);  ge = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:725 in forward, code: hidden_states = self.dropout(inputs_embeds)
        clone: "f32[2, 256, 512]" = torch.ops.aten.clone.default(embedding);  embedding = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_1: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(clone, 2)
        mean: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_1, [-1], True);  pow_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_2: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean, 1e-06);  mean = None
        rsqrt: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_2);  add_2 = None
        mul: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(clone, rsqrt);  rsqrt = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_1: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg2_1, mul);  arg2_1 = mul = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:304 in forward, code: query_states = self.q(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg3_1, dtype = torch.bfloat16);  arg3_1 = None
        _to_copy_1: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_1, dtype = torch.bfloat16)
        t: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy);  _to_copy = None
        view: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_1, [512, 512]);  _to_copy_1 = None
        mm: "bf16[512, 512]" = torch.ops.aten.mm.default(view, t);  view = t = None
        _unsafe_view: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm, [2, 256, 512]);  mm = None
        view_1: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view, [2, 256, -1, 64]);  _unsafe_view = None
        transpose: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_1, 1, 2);  view_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:325 in forward, code: key_states = self.k(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_2: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg4_1, dtype = torch.bfloat16);  arg4_1 = None
        _to_copy_3: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_1, dtype = torch.bfloat16)
        t_1: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_2);  _to_copy_2 = None
        view_2: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_3, [512, 512]);  _to_copy_3 = None
        mm_1: "bf16[512, 512]" = torch.ops.aten.mm.default(view_2, t_1);  view_2 = t_1 = None
        _unsafe_view_1: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_1, [2, 256, 512]);  mm_1 = None
        view_3: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_1, [2, 256, -1, 64]);  _unsafe_view_1 = None
        transpose_1: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_3, 1, 2);  view_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:326 in forward, code: value_states = self.v(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_4: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg5_1, dtype = torch.bfloat16);  arg5_1 = None
        _to_copy_5: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_1, dtype = torch.bfloat16);  mul_1 = None
        t_2: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_4);  _to_copy_4 = None
        view_4: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_5, [512, 512]);  _to_copy_5 = None
        mm_2: "bf16[512, 512]" = torch.ops.aten.mm.default(view_4, t_2);  view_4 = t_2 = None
        _unsafe_view_2: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_2, [2, 256, 512]);  mm_2 = None
        view_5: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_2, [2, 256, -1, 64]);  _unsafe_view_2 = None
        transpose_2: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_5, 1, 2);  view_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:268 in compute_bias, code: context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None] + past_seen_tokens
        arange_4: "i64[256]" = torch.ops.aten.arange.default(256, dtype = torch.int64, device = device(type='cuda', index=0), pin_memory = False)
        unsqueeze_3: "i64[256, 1]" = torch.ops.aten.unsqueeze.default(arange_4, 1);  arange_4 = None
        add_3: "i64[256, 1]" = torch.ops.aten.add.Tensor(unsqueeze_3, 0);  unsqueeze_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:269 in compute_bias, code: memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
        arange_5: "i64[256]" = torch.ops.aten.arange.default(256, dtype = torch.int64, device = device(type='cuda', index=0), pin_memory = False)
        unsqueeze_4: "i64[1, 256]" = torch.ops.aten.unsqueeze.default(arange_5, 0);  arange_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:270 in compute_bias, code: relative_position = memory_position - context_position  # shape (query_length, key_length)
        sub: "i64[256, 256]" = torch.ops.aten.sub.Tensor(unsqueeze_4, add_3);  unsqueeze_4 = add_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:241 in _relative_position_bucket, code: relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        gt: "b8[256, 256]" = torch.ops.aten.gt.Scalar(sub, 0)
        _to_copy_6: "i64[256, 256]" = torch.ops.aten._to_copy.default(gt, dtype = torch.int64);  gt = None
        mul_2: "i64[256, 256]" = torch.ops.aten.mul.Tensor(_to_copy_6, 16);  _to_copy_6 = None
        add_4: "i64[256, 256]" = torch.ops.aten.add.Tensor(mul_2, 0);  mul_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:242 in _relative_position_bucket, code: relative_position = torch.abs(relative_position)
        abs_1: "i64[256, 256]" = torch.ops.aten.abs.default(sub);  sub = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:249 in _relative_position_bucket, code: is_small = relative_position < max_exact
        lt: "b8[256, 256]" = torch.ops.aten.lt.Scalar(abs_1, 8)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:253 in _relative_position_bucket, code: torch.log(relative_position.float() / max_exact)
        _to_copy_7: "f32[256, 256]" = torch.ops.aten._to_copy.default(abs_1, dtype = torch.float32)
        div: "f32[256, 256]" = torch.ops.aten.div.Tensor(_to_copy_7, 8);  _to_copy_7 = None
        log: "f32[256, 256]" = torch.ops.aten.log.default(div);  div = None
        div_1: "f32[256, 256]" = torch.ops.aten.div.Tensor(log, 2.772588722239781);  log = None
        mul_3: "f32[256, 256]" = torch.ops.aten.mul.Tensor(div_1, 8);  div_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:256 in _relative_position_bucket, code: ).to(torch.long)
        _to_copy_8: "i64[256, 256]" = torch.ops.aten._to_copy.default(mul_3, dtype = torch.int64);  mul_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:252 in _relative_position_bucket, code: relative_position_if_large = max_exact + (
        add_5: "i64[256, 256]" = torch.ops.aten.add.Tensor(_to_copy_8, 8);  _to_copy_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:258 in _relative_position_bucket, code: relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
        full_like: "i64[256, 256]" = torch.ops.aten.full_like.default(add_5, 15, pin_memory = False)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:257 in _relative_position_bucket, code: relative_position_if_large = torch.min(
        minimum: "i64[256, 256]" = torch.ops.aten.minimum.default(add_5, full_like);  add_5 = full_like = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:261 in _relative_position_bucket, code: relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
        where: "i64[256, 256]" = torch.ops.aten.where.self(lt, abs_1, minimum);  lt = abs_1 = minimum = None
        add_6: "i64[256, 256]" = torch.ops.aten.add.Tensor(add_4, where);  add_4 = where = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:277 in compute_bias, code: values = self.relative_attention_bias(relative_position_bucket)  # shape (query_length, key_length, num_heads)
        embedding_1: "f32[256, 256, 8]" = torch.ops.aten.embedding.default(arg6_1, add_6);  arg6_1 = add_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:278 in compute_bias, code: values = values.permute([2, 0, 1]).unsqueeze(0)  # shape (1, num_heads, query_length, key_length)
        permute: "f32[8, 256, 256]" = torch.ops.aten.permute.default(embedding_1, [2, 0, 1]);  embedding_1 = None
        unsqueeze_5: "f32[1, 8, 256, 256]" = torch.ops.aten.unsqueeze.default(permute, 0);  permute = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:71 in create_position_bias_mask, code: position_bias_mask = torch.where(attention_mask, position_bias, min_dtype)
        scalar_tensor: "f32[]" = torch.ops.aten.scalar_tensor.default(-3.3895313892515355e+38, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))
        where_1: "f32[2, 8, 256, 256]" = torch.ops.aten.where.self(expand, unsqueeze_5, scalar_tensor);  scalar_tensor = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _to_copy_9: "bf16[2, 8, 256, 256]" = torch.ops.aten._to_copy.default(where_1, dtype = torch.bfloat16);  where_1 = None
        _to_copy_10: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose, dtype = torch.float32);  transpose = None
        _to_copy_11: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_1, dtype = torch.float32);  transpose_1 = None
        _to_copy_12: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_2, dtype = torch.float32);  transpose_2 = None
        mul_4: "f32[2, 8, 256, 64]" = torch.ops.aten.mul.Scalar(_to_copy_10, 1.0);  _to_copy_10 = None
        transpose_3: "f32[2, 8, 64, 256]" = torch.ops.aten.transpose.int(_to_copy_11, -2, -1);  _to_copy_11 = None
        mul_5: "f32[2, 8, 64, 256]" = torch.ops.aten.mul.Scalar(transpose_3, 1.0);  transpose_3 = None
        expand_1: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(mul_4, [2, 8, 256, 64]);  mul_4 = None
        clone_1: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_1, memory_format = torch.contiguous_format);  expand_1 = None
        _unsafe_view_3: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_1, [16, 256, 64]);  clone_1 = None
        expand_2: "f32[2, 8, 64, 256]" = torch.ops.aten.expand.default(mul_5, [2, 8, 64, 256]);  mul_5 = None
        clone_2: "f32[2, 8, 64, 256]" = torch.ops.aten.clone.default(expand_2, memory_format = torch.contiguous_format);  expand_2 = None
        _unsafe_view_4: "f32[16, 64, 256]" = torch.ops.aten._unsafe_view.default(clone_2, [16, 64, 256]);  clone_2 = None
        bmm: "f32[16, 256, 256]" = torch.ops.aten.bmm.default(_unsafe_view_3, _unsafe_view_4);  _unsafe_view_3 = _unsafe_view_4 = None
        view_6: "f32[2, 8, 256, 256]" = torch.ops.aten.view.default(bmm, [2, 8, 256, 256]);  bmm = None
        add_7: "f32[2, 8, 256, 256]" = torch.ops.aten.add.Tensor(view_6, _to_copy_9);  view_6 = _to_copy_9 = None
        _safe_softmax: "f32[2, 8, 256, 256]" = torch.ops.aten._safe_softmax.default(add_7, -1);  add_7 = None
        expand_3: "f32[2, 8, 256, 256]" = torch.ops.aten.expand.default(_safe_softmax, [2, 8, 256, 256]);  _safe_softmax = None
        view_7: "f32[16, 256, 256]" = torch.ops.aten.view.default(expand_3, [16, 256, 256]);  expand_3 = None
        expand_4: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(_to_copy_12, [2, 8, 256, 64]);  _to_copy_12 = None
        clone_3: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_4, memory_format = torch.contiguous_format);  expand_4 = None
        _unsafe_view_5: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_3, [16, 256, 64]);  clone_3 = None
        bmm_1: "f32[16, 256, 64]" = torch.ops.aten.bmm.default(view_7, _unsafe_view_5);  view_7 = _unsafe_view_5 = None
        view_8: "f32[2, 8, 256, 64]" = torch.ops.aten.view.default(bmm_1, [2, 8, 256, 64]);  bmm_1 = None
        _to_copy_14: "bf16[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(view_8, dtype = torch.bfloat16);  view_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_4: "bf16[2, 256, 8, 64]" = torch.ops.aten.transpose.int(_to_copy_14, 1, 2);  _to_copy_14 = None
        clone_4: "bf16[2, 256, 8, 64]" = torch.ops.aten.clone.default(transpose_4, memory_format = torch.contiguous_format);  transpose_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:366 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_9: "bf16[2, 256, 512]" = torch.ops.aten.view.default(clone_4, [2, 256, -1]);  clone_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:367 in forward, code: attn_output = self.o(attn_output)
        _to_copy_15: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg7_1, dtype = torch.bfloat16);  arg7_1 = None
        t_3: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_15);  _to_copy_15 = None
        view_10: "bf16[512, 512]" = torch.ops.aten.view.default(view_9, [512, 512]);  view_9 = None
        mm_3: "bf16[512, 512]" = torch.ops.aten.mm.default(view_10, t_3);  view_10 = t_3 = None
        _unsafe_view_6: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_3, [2, 256, 512]);  mm_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:400 in forward, code: attention_output = hidden_states + self.dropout(attention_output)
        clone_5: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_6);  _unsafe_view_6 = None
        add_8: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(clone, clone_5);  clone = clone_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_2: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_8, 2)
        mean_1: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_2, [-1], True);  pow_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_9: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_1, 1e-06);  mean_1 = None
        rsqrt_1: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_9);  add_9 = None
        mul_6: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_8, rsqrt_1);  rsqrt_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_7: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg8_1, mul_6);  arg8_1 = mul_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:84 in forward, code: hidden_states = self.wi(hidden_states)
        _to_copy_16: "bf16[2048, 512]" = torch.ops.aten._to_copy.default(arg9_1, dtype = torch.bfloat16);  arg9_1 = None
        _to_copy_17: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_7, dtype = torch.bfloat16);  mul_7 = None
        t_4: "bf16[512, 2048]" = torch.ops.aten.t.default(_to_copy_16);  _to_copy_16 = None
        view_11: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_17, [512, 512]);  _to_copy_17 = None
        mm_4: "bf16[512, 2048]" = torch.ops.aten.mm.default(view_11, t_4);  view_11 = t_4 = None
        _unsafe_view_7: "bf16[2, 256, 2048]" = torch.ops.aten._unsafe_view.default(mm_4, [2, 256, 2048]);  mm_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:85 in forward, code: hidden_states = self.act(hidden_states)
        relu: "bf16[2, 256, 2048]" = torch.ops.aten.relu.default(_unsafe_view_7);  _unsafe_view_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:86 in forward, code: hidden_states = self.dropout(hidden_states)
        clone_6: "bf16[2, 256, 2048]" = torch.ops.aten.clone.default(relu);  relu = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:92 in forward, code: hidden_states = hidden_states.to(self.wo.weight.dtype)
        _to_copy_18: "f32[2, 256, 2048]" = torch.ops.aten._to_copy.default(clone_6, dtype = torch.float32);  clone_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:93 in forward, code: hidden_states = self.wo(hidden_states)
        _to_copy_19: "bf16[512, 2048]" = torch.ops.aten._to_copy.default(arg10_1, dtype = torch.bfloat16);  arg10_1 = None
        _to_copy_20: "bf16[2, 256, 2048]" = torch.ops.aten._to_copy.default(_to_copy_18, dtype = torch.bfloat16);  _to_copy_18 = None
        t_5: "bf16[2048, 512]" = torch.ops.aten.t.default(_to_copy_19);  _to_copy_19 = None
        view_12: "bf16[512, 2048]" = torch.ops.aten.view.default(_to_copy_20, [512, 2048]);  _to_copy_20 = None
        mm_5: "bf16[512, 512]" = torch.ops.aten.mm.default(view_12, t_5);  view_12 = t_5 = None
        _unsafe_view_8: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_5, [2, 256, 512]);  mm_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:140 in forward, code: hidden_states = hidden_states + self.dropout(forwarded_states)
        clone_7: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_8);  _unsafe_view_8 = None
        add_10: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_8, clone_7);  add_8 = clone_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_3: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_10, 2)
        mean_2: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_3, [-1], True);  pow_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_11: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_2, 1e-06);  mean_2 = None
        rsqrt_2: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_11);  add_11 = None
        mul_8: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_10, rsqrt_2);  rsqrt_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_9: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg11_1, mul_8);  arg11_1 = mul_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:304 in forward, code: query_states = self.q(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_21: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg12_1, dtype = torch.bfloat16);  arg12_1 = None
        _to_copy_22: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_9, dtype = torch.bfloat16)
        t_6: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_21);  _to_copy_21 = None
        view_13: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_22, [512, 512]);  _to_copy_22 = None
        mm_6: "bf16[512, 512]" = torch.ops.aten.mm.default(view_13, t_6);  view_13 = t_6 = None
        _unsafe_view_9: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_6, [2, 256, 512]);  mm_6 = None
        view_14: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_9, [2, 256, -1, 64]);  _unsafe_view_9 = None
        transpose_5: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_14, 1, 2);  view_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:325 in forward, code: key_states = self.k(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_23: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg13_1, dtype = torch.bfloat16);  arg13_1 = None
        _to_copy_24: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_9, dtype = torch.bfloat16)
        t_7: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_23);  _to_copy_23 = None
        view_15: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_24, [512, 512]);  _to_copy_24 = None
        mm_7: "bf16[512, 512]" = torch.ops.aten.mm.default(view_15, t_7);  view_15 = t_7 = None
        _unsafe_view_10: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_7, [2, 256, 512]);  mm_7 = None
        view_16: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_10, [2, 256, -1, 64]);  _unsafe_view_10 = None
        transpose_6: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_16, 1, 2);  view_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:326 in forward, code: value_states = self.v(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_25: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg14_1, dtype = torch.bfloat16);  arg14_1 = None
        _to_copy_26: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_9, dtype = torch.bfloat16);  mul_9 = None
        t_8: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_25);  _to_copy_25 = None
        view_17: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_26, [512, 512]);  _to_copy_26 = None
        mm_8: "bf16[512, 512]" = torch.ops.aten.mm.default(view_17, t_8);  view_17 = t_8 = None
        _unsafe_view_11: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_8, [2, 256, 512]);  mm_8 = None
        view_18: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_11, [2, 256, -1, 64]);  _unsafe_view_11 = None
        transpose_7: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_18, 1, 2);  view_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:71 in create_position_bias_mask, code: position_bias_mask = torch.where(attention_mask, position_bias, min_dtype)
        scalar_tensor_1: "f32[]" = torch.ops.aten.scalar_tensor.default(-3.3895313892515355e+38, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))
        where_2: "f32[2, 8, 256, 256]" = torch.ops.aten.where.self(expand, unsqueeze_5, scalar_tensor_1);  scalar_tensor_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _to_copy_27: "bf16[2, 8, 256, 256]" = torch.ops.aten._to_copy.default(where_2, dtype = torch.bfloat16);  where_2 = None
        _to_copy_28: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_5, dtype = torch.float32);  transpose_5 = None
        _to_copy_29: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_6, dtype = torch.float32);  transpose_6 = None
        _to_copy_30: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_7, dtype = torch.float32);  transpose_7 = None
        mul_10: "f32[2, 8, 256, 64]" = torch.ops.aten.mul.Scalar(_to_copy_28, 1.0);  _to_copy_28 = None
        transpose_8: "f32[2, 8, 64, 256]" = torch.ops.aten.transpose.int(_to_copy_29, -2, -1);  _to_copy_29 = None
        mul_11: "f32[2, 8, 64, 256]" = torch.ops.aten.mul.Scalar(transpose_8, 1.0);  transpose_8 = None
        expand_5: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(mul_10, [2, 8, 256, 64]);  mul_10 = None
        clone_8: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_5, memory_format = torch.contiguous_format);  expand_5 = None
        _unsafe_view_12: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_8, [16, 256, 64]);  clone_8 = None
        expand_6: "f32[2, 8, 64, 256]" = torch.ops.aten.expand.default(mul_11, [2, 8, 64, 256]);  mul_11 = None
        clone_9: "f32[2, 8, 64, 256]" = torch.ops.aten.clone.default(expand_6, memory_format = torch.contiguous_format);  expand_6 = None
        _unsafe_view_13: "f32[16, 64, 256]" = torch.ops.aten._unsafe_view.default(clone_9, [16, 64, 256]);  clone_9 = None
        bmm_2: "f32[16, 256, 256]" = torch.ops.aten.bmm.default(_unsafe_view_12, _unsafe_view_13);  _unsafe_view_12 = _unsafe_view_13 = None
        view_19: "f32[2, 8, 256, 256]" = torch.ops.aten.view.default(bmm_2, [2, 8, 256, 256]);  bmm_2 = None
        add_12: "f32[2, 8, 256, 256]" = torch.ops.aten.add.Tensor(view_19, _to_copy_27);  view_19 = _to_copy_27 = None
        _safe_softmax_1: "f32[2, 8, 256, 256]" = torch.ops.aten._safe_softmax.default(add_12, -1);  add_12 = None
        expand_7: "f32[2, 8, 256, 256]" = torch.ops.aten.expand.default(_safe_softmax_1, [2, 8, 256, 256]);  _safe_softmax_1 = None
        view_20: "f32[16, 256, 256]" = torch.ops.aten.view.default(expand_7, [16, 256, 256]);  expand_7 = None
        expand_8: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(_to_copy_30, [2, 8, 256, 64]);  _to_copy_30 = None
        clone_10: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_8, memory_format = torch.contiguous_format);  expand_8 = None
        _unsafe_view_14: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_10, [16, 256, 64]);  clone_10 = None
        bmm_3: "f32[16, 256, 64]" = torch.ops.aten.bmm.default(view_20, _unsafe_view_14);  view_20 = _unsafe_view_14 = None
        view_21: "f32[2, 8, 256, 64]" = torch.ops.aten.view.default(bmm_3, [2, 8, 256, 64]);  bmm_3 = None
        _to_copy_32: "bf16[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(view_21, dtype = torch.bfloat16);  view_21 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_9: "bf16[2, 256, 8, 64]" = torch.ops.aten.transpose.int(_to_copy_32, 1, 2);  _to_copy_32 = None
        clone_11: "bf16[2, 256, 8, 64]" = torch.ops.aten.clone.default(transpose_9, memory_format = torch.contiguous_format);  transpose_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:366 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_22: "bf16[2, 256, 512]" = torch.ops.aten.view.default(clone_11, [2, 256, -1]);  clone_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:367 in forward, code: attn_output = self.o(attn_output)
        _to_copy_33: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg15_1, dtype = torch.bfloat16);  arg15_1 = None
        t_9: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_33);  _to_copy_33 = None
        view_23: "bf16[512, 512]" = torch.ops.aten.view.default(view_22, [512, 512]);  view_22 = None
        mm_9: "bf16[512, 512]" = torch.ops.aten.mm.default(view_23, t_9);  view_23 = t_9 = None
        _unsafe_view_15: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_9, [2, 256, 512]);  mm_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:400 in forward, code: attention_output = hidden_states + self.dropout(attention_output)
        clone_12: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_15);  _unsafe_view_15 = None
        add_13: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_10, clone_12);  add_10 = clone_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_4: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_13, 2)
        mean_3: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_4, [-1], True);  pow_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_14: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_3, 1e-06);  mean_3 = None
        rsqrt_3: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_14);  add_14 = None
        mul_12: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_13, rsqrt_3);  rsqrt_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_13: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg16_1, mul_12);  arg16_1 = mul_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:84 in forward, code: hidden_states = self.wi(hidden_states)
        _to_copy_34: "bf16[2048, 512]" = torch.ops.aten._to_copy.default(arg17_1, dtype = torch.bfloat16);  arg17_1 = None
        _to_copy_35: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_13, dtype = torch.bfloat16);  mul_13 = None
        t_10: "bf16[512, 2048]" = torch.ops.aten.t.default(_to_copy_34);  _to_copy_34 = None
        view_24: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_35, [512, 512]);  _to_copy_35 = None
        mm_10: "bf16[512, 2048]" = torch.ops.aten.mm.default(view_24, t_10);  view_24 = t_10 = None
        _unsafe_view_16: "bf16[2, 256, 2048]" = torch.ops.aten._unsafe_view.default(mm_10, [2, 256, 2048]);  mm_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:85 in forward, code: hidden_states = self.act(hidden_states)
        relu_1: "bf16[2, 256, 2048]" = torch.ops.aten.relu.default(_unsafe_view_16);  _unsafe_view_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:86 in forward, code: hidden_states = self.dropout(hidden_states)
        clone_13: "bf16[2, 256, 2048]" = torch.ops.aten.clone.default(relu_1);  relu_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:92 in forward, code: hidden_states = hidden_states.to(self.wo.weight.dtype)
        _to_copy_36: "f32[2, 256, 2048]" = torch.ops.aten._to_copy.default(clone_13, dtype = torch.float32);  clone_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:93 in forward, code: hidden_states = self.wo(hidden_states)
        _to_copy_37: "bf16[512, 2048]" = torch.ops.aten._to_copy.default(arg18_1, dtype = torch.bfloat16);  arg18_1 = None
        _to_copy_38: "bf16[2, 256, 2048]" = torch.ops.aten._to_copy.default(_to_copy_36, dtype = torch.bfloat16);  _to_copy_36 = None
        t_11: "bf16[2048, 512]" = torch.ops.aten.t.default(_to_copy_37);  _to_copy_37 = None
        view_25: "bf16[512, 2048]" = torch.ops.aten.view.default(_to_copy_38, [512, 2048]);  _to_copy_38 = None
        mm_11: "bf16[512, 512]" = torch.ops.aten.mm.default(view_25, t_11);  view_25 = t_11 = None
        _unsafe_view_17: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_11, [2, 256, 512]);  mm_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:140 in forward, code: hidden_states = hidden_states + self.dropout(forwarded_states)
        clone_14: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_17);  _unsafe_view_17 = None
        add_15: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_13, clone_14);  add_13 = clone_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_5: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_15, 2)
        mean_4: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_5, [-1], True);  pow_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_16: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_4, 1e-06);  mean_4 = None
        rsqrt_4: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_16);  add_16 = None
        mul_14: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_15, rsqrt_4);  rsqrt_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_15: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg19_1, mul_14);  arg19_1 = mul_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:304 in forward, code: query_states = self.q(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_39: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg20_1, dtype = torch.bfloat16);  arg20_1 = None
        _to_copy_40: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_15, dtype = torch.bfloat16)
        t_12: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_39);  _to_copy_39 = None
        view_26: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_40, [512, 512]);  _to_copy_40 = None
        mm_12: "bf16[512, 512]" = torch.ops.aten.mm.default(view_26, t_12);  view_26 = t_12 = None
        _unsafe_view_18: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_12, [2, 256, 512]);  mm_12 = None
        view_27: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_18, [2, 256, -1, 64]);  _unsafe_view_18 = None
        transpose_10: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_27, 1, 2);  view_27 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:325 in forward, code: key_states = self.k(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_41: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg21_1, dtype = torch.bfloat16);  arg21_1 = None
        _to_copy_42: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_15, dtype = torch.bfloat16)
        t_13: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_41);  _to_copy_41 = None
        view_28: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_42, [512, 512]);  _to_copy_42 = None
        mm_13: "bf16[512, 512]" = torch.ops.aten.mm.default(view_28, t_13);  view_28 = t_13 = None
        _unsafe_view_19: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_13, [2, 256, 512]);  mm_13 = None
        view_29: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_19, [2, 256, -1, 64]);  _unsafe_view_19 = None
        transpose_11: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_29, 1, 2);  view_29 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:326 in forward, code: value_states = self.v(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_43: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg22_1, dtype = torch.bfloat16);  arg22_1 = None
        _to_copy_44: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_15, dtype = torch.bfloat16);  mul_15 = None
        t_14: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_43);  _to_copy_43 = None
        view_30: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_44, [512, 512]);  _to_copy_44 = None
        mm_14: "bf16[512, 512]" = torch.ops.aten.mm.default(view_30, t_14);  view_30 = t_14 = None
        _unsafe_view_20: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_14, [2, 256, 512]);  mm_14 = None
        view_31: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_20, [2, 256, -1, 64]);  _unsafe_view_20 = None
        transpose_12: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_31, 1, 2);  view_31 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:71 in create_position_bias_mask, code: position_bias_mask = torch.where(attention_mask, position_bias, min_dtype)
        scalar_tensor_2: "f32[]" = torch.ops.aten.scalar_tensor.default(-3.3895313892515355e+38, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))
        where_3: "f32[2, 8, 256, 256]" = torch.ops.aten.where.self(expand, unsqueeze_5, scalar_tensor_2);  scalar_tensor_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _to_copy_45: "bf16[2, 8, 256, 256]" = torch.ops.aten._to_copy.default(where_3, dtype = torch.bfloat16);  where_3 = None
        _to_copy_46: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_10, dtype = torch.float32);  transpose_10 = None
        _to_copy_47: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_11, dtype = torch.float32);  transpose_11 = None
        _to_copy_48: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_12, dtype = torch.float32);  transpose_12 = None
        mul_16: "f32[2, 8, 256, 64]" = torch.ops.aten.mul.Scalar(_to_copy_46, 1.0);  _to_copy_46 = None
        transpose_13: "f32[2, 8, 64, 256]" = torch.ops.aten.transpose.int(_to_copy_47, -2, -1);  _to_copy_47 = None
        mul_17: "f32[2, 8, 64, 256]" = torch.ops.aten.mul.Scalar(transpose_13, 1.0);  transpose_13 = None
        expand_9: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(mul_16, [2, 8, 256, 64]);  mul_16 = None
        clone_15: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_9, memory_format = torch.contiguous_format);  expand_9 = None
        _unsafe_view_21: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_15, [16, 256, 64]);  clone_15 = None
        expand_10: "f32[2, 8, 64, 256]" = torch.ops.aten.expand.default(mul_17, [2, 8, 64, 256]);  mul_17 = None
        clone_16: "f32[2, 8, 64, 256]" = torch.ops.aten.clone.default(expand_10, memory_format = torch.contiguous_format);  expand_10 = None
        _unsafe_view_22: "f32[16, 64, 256]" = torch.ops.aten._unsafe_view.default(clone_16, [16, 64, 256]);  clone_16 = None
        bmm_4: "f32[16, 256, 256]" = torch.ops.aten.bmm.default(_unsafe_view_21, _unsafe_view_22);  _unsafe_view_21 = _unsafe_view_22 = None
        view_32: "f32[2, 8, 256, 256]" = torch.ops.aten.view.default(bmm_4, [2, 8, 256, 256]);  bmm_4 = None
        add_17: "f32[2, 8, 256, 256]" = torch.ops.aten.add.Tensor(view_32, _to_copy_45);  view_32 = _to_copy_45 = None
        _safe_softmax_2: "f32[2, 8, 256, 256]" = torch.ops.aten._safe_softmax.default(add_17, -1);  add_17 = None
        expand_11: "f32[2, 8, 256, 256]" = torch.ops.aten.expand.default(_safe_softmax_2, [2, 8, 256, 256]);  _safe_softmax_2 = None
        view_33: "f32[16, 256, 256]" = torch.ops.aten.view.default(expand_11, [16, 256, 256]);  expand_11 = None
        expand_12: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(_to_copy_48, [2, 8, 256, 64]);  _to_copy_48 = None
        clone_17: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_12, memory_format = torch.contiguous_format);  expand_12 = None
        _unsafe_view_23: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_17, [16, 256, 64]);  clone_17 = None
        bmm_5: "f32[16, 256, 64]" = torch.ops.aten.bmm.default(view_33, _unsafe_view_23);  view_33 = _unsafe_view_23 = None
        view_34: "f32[2, 8, 256, 64]" = torch.ops.aten.view.default(bmm_5, [2, 8, 256, 64]);  bmm_5 = None
        _to_copy_50: "bf16[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(view_34, dtype = torch.bfloat16);  view_34 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_14: "bf16[2, 256, 8, 64]" = torch.ops.aten.transpose.int(_to_copy_50, 1, 2);  _to_copy_50 = None
        clone_18: "bf16[2, 256, 8, 64]" = torch.ops.aten.clone.default(transpose_14, memory_format = torch.contiguous_format);  transpose_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:366 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_35: "bf16[2, 256, 512]" = torch.ops.aten.view.default(clone_18, [2, 256, -1]);  clone_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:367 in forward, code: attn_output = self.o(attn_output)
        _to_copy_51: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg23_1, dtype = torch.bfloat16);  arg23_1 = None
        t_15: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_51);  _to_copy_51 = None
        view_36: "bf16[512, 512]" = torch.ops.aten.view.default(view_35, [512, 512]);  view_35 = None
        mm_15: "bf16[512, 512]" = torch.ops.aten.mm.default(view_36, t_15);  view_36 = t_15 = None
        _unsafe_view_24: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_15, [2, 256, 512]);  mm_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:400 in forward, code: attention_output = hidden_states + self.dropout(attention_output)
        clone_19: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_24);  _unsafe_view_24 = None
        add_18: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_15, clone_19);  add_15 = clone_19 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_6: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_18, 2)
        mean_5: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_6, [-1], True);  pow_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_19: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_5, 1e-06);  mean_5 = None
        rsqrt_5: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_19);  add_19 = None
        mul_18: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_18, rsqrt_5);  rsqrt_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_19: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg24_1, mul_18);  arg24_1 = mul_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:84 in forward, code: hidden_states = self.wi(hidden_states)
        _to_copy_52: "bf16[2048, 512]" = torch.ops.aten._to_copy.default(arg25_1, dtype = torch.bfloat16);  arg25_1 = None
        _to_copy_53: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_19, dtype = torch.bfloat16);  mul_19 = None
        t_16: "bf16[512, 2048]" = torch.ops.aten.t.default(_to_copy_52);  _to_copy_52 = None
        view_37: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_53, [512, 512]);  _to_copy_53 = None
        mm_16: "bf16[512, 2048]" = torch.ops.aten.mm.default(view_37, t_16);  view_37 = t_16 = None
        _unsafe_view_25: "bf16[2, 256, 2048]" = torch.ops.aten._unsafe_view.default(mm_16, [2, 256, 2048]);  mm_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:85 in forward, code: hidden_states = self.act(hidden_states)
        relu_2: "bf16[2, 256, 2048]" = torch.ops.aten.relu.default(_unsafe_view_25);  _unsafe_view_25 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:86 in forward, code: hidden_states = self.dropout(hidden_states)
        clone_20: "bf16[2, 256, 2048]" = torch.ops.aten.clone.default(relu_2);  relu_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:92 in forward, code: hidden_states = hidden_states.to(self.wo.weight.dtype)
        _to_copy_54: "f32[2, 256, 2048]" = torch.ops.aten._to_copy.default(clone_20, dtype = torch.float32);  clone_20 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:93 in forward, code: hidden_states = self.wo(hidden_states)
        _to_copy_55: "bf16[512, 2048]" = torch.ops.aten._to_copy.default(arg26_1, dtype = torch.bfloat16);  arg26_1 = None
        _to_copy_56: "bf16[2, 256, 2048]" = torch.ops.aten._to_copy.default(_to_copy_54, dtype = torch.bfloat16);  _to_copy_54 = None
        t_17: "bf16[2048, 512]" = torch.ops.aten.t.default(_to_copy_55);  _to_copy_55 = None
        view_38: "bf16[512, 2048]" = torch.ops.aten.view.default(_to_copy_56, [512, 2048]);  _to_copy_56 = None
        mm_17: "bf16[512, 512]" = torch.ops.aten.mm.default(view_38, t_17);  view_38 = t_17 = None
        _unsafe_view_26: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_17, [2, 256, 512]);  mm_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:140 in forward, code: hidden_states = hidden_states + self.dropout(forwarded_states)
        clone_21: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_26);  _unsafe_view_26 = None
        add_20: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_18, clone_21);  add_18 = clone_21 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_7: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_20, 2)
        mean_6: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_7, [-1], True);  pow_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_21: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_6, 1e-06);  mean_6 = None
        rsqrt_6: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_21);  add_21 = None
        mul_20: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_20, rsqrt_6);  rsqrt_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_21: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg27_1, mul_20);  arg27_1 = mul_20 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:304 in forward, code: query_states = self.q(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_57: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg28_1, dtype = torch.bfloat16);  arg28_1 = None
        _to_copy_58: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_21, dtype = torch.bfloat16)
        t_18: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_57);  _to_copy_57 = None
        view_39: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_58, [512, 512]);  _to_copy_58 = None
        mm_18: "bf16[512, 512]" = torch.ops.aten.mm.default(view_39, t_18);  view_39 = t_18 = None
        _unsafe_view_27: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_18, [2, 256, 512]);  mm_18 = None
        view_40: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_27, [2, 256, -1, 64]);  _unsafe_view_27 = None
        transpose_15: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_40, 1, 2);  view_40 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:325 in forward, code: key_states = self.k(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_59: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg29_1, dtype = torch.bfloat16);  arg29_1 = None
        _to_copy_60: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_21, dtype = torch.bfloat16)
        t_19: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_59);  _to_copy_59 = None
        view_41: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_60, [512, 512]);  _to_copy_60 = None
        mm_19: "bf16[512, 512]" = torch.ops.aten.mm.default(view_41, t_19);  view_41 = t_19 = None
        _unsafe_view_28: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_19, [2, 256, 512]);  mm_19 = None
        view_42: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_28, [2, 256, -1, 64]);  _unsafe_view_28 = None
        transpose_16: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_42, 1, 2);  view_42 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:326 in forward, code: value_states = self.v(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_61: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg30_1, dtype = torch.bfloat16);  arg30_1 = None
        _to_copy_62: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_21, dtype = torch.bfloat16);  mul_21 = None
        t_20: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_61);  _to_copy_61 = None
        view_43: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_62, [512, 512]);  _to_copy_62 = None
        mm_20: "bf16[512, 512]" = torch.ops.aten.mm.default(view_43, t_20);  view_43 = t_20 = None
        _unsafe_view_29: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_20, [2, 256, 512]);  mm_20 = None
        view_44: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_29, [2, 256, -1, 64]);  _unsafe_view_29 = None
        transpose_17: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_44, 1, 2);  view_44 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:71 in create_position_bias_mask, code: position_bias_mask = torch.where(attention_mask, position_bias, min_dtype)
        scalar_tensor_3: "f32[]" = torch.ops.aten.scalar_tensor.default(-3.3895313892515355e+38, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))
        where_4: "f32[2, 8, 256, 256]" = torch.ops.aten.where.self(expand, unsqueeze_5, scalar_tensor_3);  expand = unsqueeze_5 = scalar_tensor_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _to_copy_63: "bf16[2, 8, 256, 256]" = torch.ops.aten._to_copy.default(where_4, dtype = torch.bfloat16);  where_4 = None
        _to_copy_64: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_15, dtype = torch.float32);  transpose_15 = None
        _to_copy_65: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_16, dtype = torch.float32);  transpose_16 = None
        _to_copy_66: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_17, dtype = torch.float32);  transpose_17 = None
        mul_22: "f32[2, 8, 256, 64]" = torch.ops.aten.mul.Scalar(_to_copy_64, 1.0);  _to_copy_64 = None
        transpose_18: "f32[2, 8, 64, 256]" = torch.ops.aten.transpose.int(_to_copy_65, -2, -1);  _to_copy_65 = None
        mul_23: "f32[2, 8, 64, 256]" = torch.ops.aten.mul.Scalar(transpose_18, 1.0);  transpose_18 = None
        expand_13: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(mul_22, [2, 8, 256, 64]);  mul_22 = None
        clone_22: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_13, memory_format = torch.contiguous_format);  expand_13 = None
        _unsafe_view_30: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_22, [16, 256, 64]);  clone_22 = None
        expand_14: "f32[2, 8, 64, 256]" = torch.ops.aten.expand.default(mul_23, [2, 8, 64, 256]);  mul_23 = None
        clone_23: "f32[2, 8, 64, 256]" = torch.ops.aten.clone.default(expand_14, memory_format = torch.contiguous_format);  expand_14 = None
        _unsafe_view_31: "f32[16, 64, 256]" = torch.ops.aten._unsafe_view.default(clone_23, [16, 64, 256]);  clone_23 = None
        bmm_6: "f32[16, 256, 256]" = torch.ops.aten.bmm.default(_unsafe_view_30, _unsafe_view_31);  _unsafe_view_30 = _unsafe_view_31 = None
        view_45: "f32[2, 8, 256, 256]" = torch.ops.aten.view.default(bmm_6, [2, 8, 256, 256]);  bmm_6 = None
        add_22: "f32[2, 8, 256, 256]" = torch.ops.aten.add.Tensor(view_45, _to_copy_63);  view_45 = _to_copy_63 = None
        _safe_softmax_3: "f32[2, 8, 256, 256]" = torch.ops.aten._safe_softmax.default(add_22, -1);  add_22 = None
        expand_15: "f32[2, 8, 256, 256]" = torch.ops.aten.expand.default(_safe_softmax_3, [2, 8, 256, 256]);  _safe_softmax_3 = None
        view_46: "f32[16, 256, 256]" = torch.ops.aten.view.default(expand_15, [16, 256, 256]);  expand_15 = None
        expand_16: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(_to_copy_66, [2, 8, 256, 64]);  _to_copy_66 = None
        clone_24: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_16, memory_format = torch.contiguous_format);  expand_16 = None
        _unsafe_view_32: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_24, [16, 256, 64]);  clone_24 = None
        bmm_7: "f32[16, 256, 64]" = torch.ops.aten.bmm.default(view_46, _unsafe_view_32);  view_46 = _unsafe_view_32 = None
        view_47: "f32[2, 8, 256, 64]" = torch.ops.aten.view.default(bmm_7, [2, 8, 256, 64]);  bmm_7 = None
        _to_copy_68: "bf16[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(view_47, dtype = torch.bfloat16);  view_47 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_19: "bf16[2, 256, 8, 64]" = torch.ops.aten.transpose.int(_to_copy_68, 1, 2);  _to_copy_68 = None
        clone_25: "bf16[2, 256, 8, 64]" = torch.ops.aten.clone.default(transpose_19, memory_format = torch.contiguous_format);  transpose_19 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:366 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_48: "bf16[2, 256, 512]" = torch.ops.aten.view.default(clone_25, [2, 256, -1]);  clone_25 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:367 in forward, code: attn_output = self.o(attn_output)
        _to_copy_69: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg31_1, dtype = torch.bfloat16);  arg31_1 = None
        t_21: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_69);  _to_copy_69 = None
        view_49: "bf16[512, 512]" = torch.ops.aten.view.default(view_48, [512, 512]);  view_48 = None
        mm_21: "bf16[512, 512]" = torch.ops.aten.mm.default(view_49, t_21);  view_49 = t_21 = None
        _unsafe_view_33: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_21, [2, 256, 512]);  mm_21 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:400 in forward, code: attention_output = hidden_states + self.dropout(attention_output)
        clone_26: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_33);  _unsafe_view_33 = None
        add_23: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_20, clone_26);  add_20 = clone_26 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_8: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_23, 2)
        mean_7: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_8, [-1], True);  pow_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_24: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_7, 1e-06);  mean_7 = None
        rsqrt_7: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_24);  add_24 = None
        mul_24: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_23, rsqrt_7);  rsqrt_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_25: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg32_1, mul_24);  arg32_1 = mul_24 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:84 in forward, code: hidden_states = self.wi(hidden_states)
        _to_copy_70: "bf16[2048, 512]" = torch.ops.aten._to_copy.default(arg33_1, dtype = torch.bfloat16);  arg33_1 = None
        _to_copy_71: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_25, dtype = torch.bfloat16);  mul_25 = None
        t_22: "bf16[512, 2048]" = torch.ops.aten.t.default(_to_copy_70);  _to_copy_70 = None
        view_50: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_71, [512, 512]);  _to_copy_71 = None
        mm_22: "bf16[512, 2048]" = torch.ops.aten.mm.default(view_50, t_22);  view_50 = t_22 = None
        _unsafe_view_34: "bf16[2, 256, 2048]" = torch.ops.aten._unsafe_view.default(mm_22, [2, 256, 2048]);  mm_22 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:85 in forward, code: hidden_states = self.act(hidden_states)
        relu_3: "bf16[2, 256, 2048]" = torch.ops.aten.relu.default(_unsafe_view_34);  _unsafe_view_34 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:86 in forward, code: hidden_states = self.dropout(hidden_states)
        clone_27: "bf16[2, 256, 2048]" = torch.ops.aten.clone.default(relu_3);  relu_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:92 in forward, code: hidden_states = hidden_states.to(self.wo.weight.dtype)
        _to_copy_72: "f32[2, 256, 2048]" = torch.ops.aten._to_copy.default(clone_27, dtype = torch.float32);  clone_27 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:93 in forward, code: hidden_states = self.wo(hidden_states)
        _to_copy_73: "bf16[512, 2048]" = torch.ops.aten._to_copy.default(arg34_1, dtype = torch.bfloat16);  arg34_1 = None
        _to_copy_74: "bf16[2, 256, 2048]" = torch.ops.aten._to_copy.default(_to_copy_72, dtype = torch.bfloat16);  _to_copy_72 = None
        t_23: "bf16[2048, 512]" = torch.ops.aten.t.default(_to_copy_73);  _to_copy_73 = None
        view_51: "bf16[512, 2048]" = torch.ops.aten.view.default(_to_copy_74, [512, 2048]);  _to_copy_74 = None
        mm_23: "bf16[512, 512]" = torch.ops.aten.mm.default(view_51, t_23);  view_51 = t_23 = None
        _unsafe_view_35: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_23, [2, 256, 512]);  mm_23 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:140 in forward, code: hidden_states = hidden_states + self.dropout(forwarded_states)
        clone_28: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_35);  _unsafe_view_35 = None
        add_25: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_23, clone_28);  add_23 = clone_28 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_9: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_25, 2)
        mean_8: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_9, [-1], True);  pow_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_26: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_8, 1e-06);  mean_8 = None
        rsqrt_8: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_26);  add_26 = None
        mul_26: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_25, rsqrt_8);  add_25 = rsqrt_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_27: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg35_1, mul_26);  arg35_1 = mul_26 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:745 in forward, code: hidden_states = self.dropout(hidden_states)
        clone_29: "f32[2, 256, 512]" = torch.ops.aten.clone.default(mul_27);  mul_27 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:628 in _shift_right, code: shifted_input_ids = input_ids.new_zeros(input_ids.shape)
        new_zeros: "i64[2, 256]" = torch.ops.aten.new_zeros.default(arg36_1, [2, 256], pin_memory = False)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:629 in _shift_right, code: shifted_input_ids[..., 1:] = input_ids[..., :-1].clone()
        slice_1: "i64[2, 255]" = torch.ops.aten.slice.Tensor(arg36_1, 1, 0, -1)
        clone_30: "i64[2, 255]" = torch.ops.aten.clone.default(slice_1);  slice_1 = None
        slice_2: "i64[2, 255]" = torch.ops.aten.slice.Tensor(new_zeros, 1, 1, 9223372036854775807)
        copy: "i64[2, 255]" = torch.ops.aten.copy.default(slice_2, clone_30);  slice_2 = clone_30 = None
        slice_scatter: "i64[2, 256]" = torch.ops.aten.slice_scatter.default(new_zeros, copy, 1, 1, 9223372036854775807);  new_zeros = copy = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:630 in _shift_right, code: shifted_input_ids[..., 0] = decoder_start_token_id
        _tensor_constant0: "i64[]" = self._tensor_constant0
        lift_fresh_copy: "i64[]" = torch.ops.aten.lift_fresh_copy.default(_tensor_constant0);  _tensor_constant0 = None
        select_1: "i64[2]" = torch.ops.aten.select.int(slice_scatter, 1, 0)
        fill: "i64[2]" = torch.ops.aten.fill.Tensor(select_1, lift_fresh_copy);  select_1 = lift_fresh_copy = None
        select_scatter: "i64[2, 256]" = torch.ops.aten.select_scatter.default(slice_scatter, fill, 1, 0);  slice_scatter = fill = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:635 in _shift_right, code: shifted_input_ids.masked_fill_(shifted_input_ids == -100, pad_token_id)
        eq: "b8[2, 256]" = torch.ops.aten.eq.Scalar(select_scatter, -100)
        masked_fill: "i64[2, 256]" = torch.ops.aten.masked_fill.Scalar(select_scatter, eq, 0);  select_scatter = eq = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:678 in forward, code: inputs_embeds = self.embed_tokens(input_ids)
        embedding_2: "f32[2, 256, 512]" = torch.ops.aten.embedding.default(arg1_1, masked_fill);  masked_fill = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:510 in sdpa_mask, code: q_arange = torch.arange(q_length, device=device) + q_offset
        arange_8: "i64[256]" = torch.ops.aten.arange.default(256, device = device(type='cuda', index=0), pin_memory = False)
        add_27: "i64[256]" = torch.ops.aten.add.Tensor(arange_8, 0);  arange_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:511 in sdpa_mask, code: kv_arange = torch.arange(kv_length, device=device) + kv_offset
        arange_9: "i64[256]" = torch.ops.aten.arange.default(256, device = device(type='cuda', index=0), pin_memory = False)
        add_28: "i64[256]" = torch.ops.aten.add.Tensor(arange_9, 0);  arange_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:367 in _non_vmap_expansion_sdpa, code: q_indices = q_indices[None, None, :, None]
        unsqueeze_6: "i64[1, 256]" = torch.ops.aten.unsqueeze.default(add_27, 0);  add_27 = None
        unsqueeze_7: "i64[1, 1, 256]" = torch.ops.aten.unsqueeze.default(unsqueeze_6, 1);  unsqueeze_6 = None
        unsqueeze_8: "i64[1, 1, 256, 1]" = torch.ops.aten.unsqueeze.default(unsqueeze_7, 3);  unsqueeze_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:368 in _non_vmap_expansion_sdpa, code: kv_indices = kv_indices[None, None, None, :]
        unsqueeze_9: "i64[1, 256]" = torch.ops.aten.unsqueeze.default(add_28, 0);  add_28 = None
        unsqueeze_10: "i64[1, 1, 256]" = torch.ops.aten.unsqueeze.default(unsqueeze_9, 1);  unsqueeze_9 = None
        unsqueeze_11: "i64[1, 1, 1, 256]" = torch.ops.aten.unsqueeze.default(unsqueeze_10, 2);  unsqueeze_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:81 in causal_mask_function, code: return kv_idx <= q_idx
        le: "b8[1, 1, 256, 256]" = torch.ops.aten.le.Tensor(unsqueeze_11, unsqueeze_8);  unsqueeze_11 = unsqueeze_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:519 in sdpa_mask, code: attention_mask = attention_mask.expand(batch_size, -1, q_length, kv_length)
        expand_17: "b8[2, 1, 256, 256]" = torch.ops.aten.expand.default(le, [2, -1, 256, 256]);  le = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:510 in sdpa_mask, code: q_arange = torch.arange(q_length, device=device) + q_offset
        arange_12: "i64[256]" = torch.ops.aten.arange.default(256, device = device(type='cuda', index=0), pin_memory = False)
        add_29: "i64[256]" = torch.ops.aten.add.Tensor(arange_12, 0);  arange_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:367 in _non_vmap_expansion_sdpa, code: q_indices = q_indices[None, None, :, None]
        unsqueeze_12: "i64[1, 256]" = torch.ops.aten.unsqueeze.default(add_29, 0);  add_29 = None
        unsqueeze_13: "i64[1, 1, 256]" = torch.ops.aten.unsqueeze.default(unsqueeze_12, 1);  unsqueeze_12 = None
        unsqueeze_14: "i64[1, 1, 256, 1]" = torch.ops.aten.unsqueeze.default(unsqueeze_13, 3);  unsqueeze_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:90 in bidirectional_mask_function, code: return q_idx >= 0
        ge_1: "b8[1, 1, 256, 1]" = torch.ops.aten.ge.Scalar(unsqueeze_14, 0);  unsqueeze_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:519 in sdpa_mask, code: attention_mask = attention_mask.expand(batch_size, -1, q_length, kv_length)
        expand_18: "b8[2, 1, 256, 256]" = torch.ops.aten.expand.default(ge_1, [2, -1, 256, 256]);  ge_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:725 in forward, code: hidden_states = self.dropout(inputs_embeds)
        clone_31: "f32[2, 256, 512]" = torch.ops.aten.clone.default(embedding_2);  embedding_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_10: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(clone_31, 2)
        mean_9: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_10, [-1], True);  pow_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_31: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_9, 1e-06);  mean_9 = None
        rsqrt_9: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_31);  add_31 = None
        mul_28: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(clone_31, rsqrt_9);  rsqrt_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_29: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg37_1, mul_28);  arg37_1 = mul_28 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:304 in forward, code: query_states = self.q(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_75: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg38_1, dtype = torch.bfloat16);  arg38_1 = None
        _to_copy_76: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_29, dtype = torch.bfloat16)
        t_24: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_75);  _to_copy_75 = None
        view_52: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_76, [512, 512]);  _to_copy_76 = None
        mm_24: "bf16[512, 512]" = torch.ops.aten.mm.default(view_52, t_24);  view_52 = t_24 = None
        _unsafe_view_36: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_24, [2, 256, 512]);  mm_24 = None
        view_53: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_36, [2, 256, -1, 64]);  _unsafe_view_36 = None
        transpose_20: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_53, 1, 2);  view_53 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:325 in forward, code: key_states = self.k(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_77: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg39_1, dtype = torch.bfloat16);  arg39_1 = None
        _to_copy_78: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_29, dtype = torch.bfloat16)
        t_25: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_77);  _to_copy_77 = None
        view_54: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_78, [512, 512]);  _to_copy_78 = None
        mm_25: "bf16[512, 512]" = torch.ops.aten.mm.default(view_54, t_25);  view_54 = t_25 = None
        _unsafe_view_37: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_25, [2, 256, 512]);  mm_25 = None
        view_55: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_37, [2, 256, -1, 64]);  _unsafe_view_37 = None
        transpose_21: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_55, 1, 2);  view_55 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:326 in forward, code: value_states = self.v(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_79: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg40_1, dtype = torch.bfloat16);  arg40_1 = None
        _to_copy_80: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_29, dtype = torch.bfloat16);  mul_29 = None
        t_26: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_79);  _to_copy_79 = None
        view_56: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_80, [512, 512]);  _to_copy_80 = None
        mm_26: "bf16[512, 512]" = torch.ops.aten.mm.default(view_56, t_26);  view_56 = t_26 = None
        _unsafe_view_38: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_26, [2, 256, 512]);  mm_26 = None
        view_57: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_38, [2, 256, -1, 64]);  _unsafe_view_38 = None
        transpose_22: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_57, 1, 2);  view_57 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:268 in compute_bias, code: context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None] + past_seen_tokens
        arange_14: "i64[256]" = torch.ops.aten.arange.default(256, dtype = torch.int64, device = device(type='cuda', index=0), pin_memory = False)
        unsqueeze_15: "i64[256, 1]" = torch.ops.aten.unsqueeze.default(arange_14, 1);  arange_14 = None
        add_32: "i64[256, 1]" = torch.ops.aten.add.Tensor(unsqueeze_15, 0);  unsqueeze_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:269 in compute_bias, code: memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
        arange_15: "i64[256]" = torch.ops.aten.arange.default(256, dtype = torch.int64, device = device(type='cuda', index=0), pin_memory = False)
        unsqueeze_16: "i64[1, 256]" = torch.ops.aten.unsqueeze.default(arange_15, 0);  arange_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:270 in compute_bias, code: relative_position = memory_position - context_position  # shape (query_length, key_length)
        sub_1: "i64[256, 256]" = torch.ops.aten.sub.Tensor(unsqueeze_16, add_32);  unsqueeze_16 = add_32 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:244 in _relative_position_bucket, code: relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
        zeros_like: "i64[256, 256]" = torch.ops.aten.zeros_like.default(sub_1, pin_memory = False)
        minimum_1: "i64[256, 256]" = torch.ops.aten.minimum.default(sub_1, zeros_like);  sub_1 = zeros_like = None
        neg: "i64[256, 256]" = torch.ops.aten.neg.default(minimum_1);  minimum_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:249 in _relative_position_bucket, code: is_small = relative_position < max_exact
        lt_1: "b8[256, 256]" = torch.ops.aten.lt.Scalar(neg, 16)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:253 in _relative_position_bucket, code: torch.log(relative_position.float() / max_exact)
        _to_copy_81: "f32[256, 256]" = torch.ops.aten._to_copy.default(neg, dtype = torch.float32)
        div_2: "f32[256, 256]" = torch.ops.aten.div.Tensor(_to_copy_81, 16);  _to_copy_81 = None
        log_1: "f32[256, 256]" = torch.ops.aten.log.default(div_2);  div_2 = None
        div_3: "f32[256, 256]" = torch.ops.aten.div.Tensor(log_1, 2.0794415416798357);  log_1 = None
        mul_30: "f32[256, 256]" = torch.ops.aten.mul.Tensor(div_3, 16);  div_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:256 in _relative_position_bucket, code: ).to(torch.long)
        _to_copy_82: "i64[256, 256]" = torch.ops.aten._to_copy.default(mul_30, dtype = torch.int64);  mul_30 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:252 in _relative_position_bucket, code: relative_position_if_large = max_exact + (
        add_33: "i64[256, 256]" = torch.ops.aten.add.Tensor(_to_copy_82, 16);  _to_copy_82 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:258 in _relative_position_bucket, code: relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
        full_like_1: "i64[256, 256]" = torch.ops.aten.full_like.default(add_33, 31, pin_memory = False)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:257 in _relative_position_bucket, code: relative_position_if_large = torch.min(
        minimum_2: "i64[256, 256]" = torch.ops.aten.minimum.default(add_33, full_like_1);  add_33 = full_like_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:261 in _relative_position_bucket, code: relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
        where_5: "i64[256, 256]" = torch.ops.aten.where.self(lt_1, neg, minimum_2);  lt_1 = neg = minimum_2 = None
        add_34: "i64[256, 256]" = torch.ops.aten.add.Tensor(where_5, 0);  where_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:277 in compute_bias, code: values = self.relative_attention_bias(relative_position_bucket)  # shape (query_length, key_length, num_heads)
        embedding_3: "f32[256, 256, 8]" = torch.ops.aten.embedding.default(arg41_1, add_34);  arg41_1 = add_34 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:278 in compute_bias, code: values = values.permute([2, 0, 1]).unsqueeze(0)  # shape (1, num_heads, query_length, key_length)
        permute_1: "f32[8, 256, 256]" = torch.ops.aten.permute.default(embedding_3, [2, 0, 1]);  embedding_3 = None
        unsqueeze_17: "f32[1, 8, 256, 256]" = torch.ops.aten.unsqueeze.default(permute_1, 0);  permute_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:71 in create_position_bias_mask, code: position_bias_mask = torch.where(attention_mask, position_bias, min_dtype)
        scalar_tensor_4: "f32[]" = torch.ops.aten.scalar_tensor.default(-3.3895313892515355e+38, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))
        where_6: "f32[2, 8, 256, 256]" = torch.ops.aten.where.self(expand_17, unsqueeze_17, scalar_tensor_4);  scalar_tensor_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _to_copy_83: "bf16[2, 8, 256, 256]" = torch.ops.aten._to_copy.default(where_6, dtype = torch.bfloat16);  where_6 = None
        _to_copy_84: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_20, dtype = torch.float32);  transpose_20 = None
        _to_copy_85: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_21, dtype = torch.float32);  transpose_21 = None
        _to_copy_86: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_22, dtype = torch.float32);  transpose_22 = None
        mul_31: "f32[2, 8, 256, 64]" = torch.ops.aten.mul.Scalar(_to_copy_84, 1.0);  _to_copy_84 = None
        transpose_23: "f32[2, 8, 64, 256]" = torch.ops.aten.transpose.int(_to_copy_85, -2, -1);  _to_copy_85 = None
        mul_32: "f32[2, 8, 64, 256]" = torch.ops.aten.mul.Scalar(transpose_23, 1.0);  transpose_23 = None
        expand_19: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(mul_31, [2, 8, 256, 64]);  mul_31 = None
        clone_32: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_19, memory_format = torch.contiguous_format);  expand_19 = None
        _unsafe_view_39: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_32, [16, 256, 64]);  clone_32 = None
        expand_20: "f32[2, 8, 64, 256]" = torch.ops.aten.expand.default(mul_32, [2, 8, 64, 256]);  mul_32 = None
        clone_33: "f32[2, 8, 64, 256]" = torch.ops.aten.clone.default(expand_20, memory_format = torch.contiguous_format);  expand_20 = None
        _unsafe_view_40: "f32[16, 64, 256]" = torch.ops.aten._unsafe_view.default(clone_33, [16, 64, 256]);  clone_33 = None
        bmm_8: "f32[16, 256, 256]" = torch.ops.aten.bmm.default(_unsafe_view_39, _unsafe_view_40);  _unsafe_view_39 = _unsafe_view_40 = None
        view_58: "f32[2, 8, 256, 256]" = torch.ops.aten.view.default(bmm_8, [2, 8, 256, 256]);  bmm_8 = None
        add_35: "f32[2, 8, 256, 256]" = torch.ops.aten.add.Tensor(view_58, _to_copy_83);  view_58 = _to_copy_83 = None
        _safe_softmax_4: "f32[2, 8, 256, 256]" = torch.ops.aten._safe_softmax.default(add_35, -1);  add_35 = None
        expand_21: "f32[2, 8, 256, 256]" = torch.ops.aten.expand.default(_safe_softmax_4, [2, 8, 256, 256]);  _safe_softmax_4 = None
        view_59: "f32[16, 256, 256]" = torch.ops.aten.view.default(expand_21, [16, 256, 256]);  expand_21 = None
        expand_22: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(_to_copy_86, [2, 8, 256, 64]);  _to_copy_86 = None
        clone_34: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_22, memory_format = torch.contiguous_format);  expand_22 = None
        _unsafe_view_41: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_34, [16, 256, 64]);  clone_34 = None
        bmm_9: "f32[16, 256, 64]" = torch.ops.aten.bmm.default(view_59, _unsafe_view_41);  view_59 = _unsafe_view_41 = None
        view_60: "f32[2, 8, 256, 64]" = torch.ops.aten.view.default(bmm_9, [2, 8, 256, 64]);  bmm_9 = None
        _to_copy_88: "bf16[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(view_60, dtype = torch.bfloat16);  view_60 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_24: "bf16[2, 256, 8, 64]" = torch.ops.aten.transpose.int(_to_copy_88, 1, 2);  _to_copy_88 = None
        clone_35: "bf16[2, 256, 8, 64]" = torch.ops.aten.clone.default(transpose_24, memory_format = torch.contiguous_format);  transpose_24 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:366 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_61: "bf16[2, 256, 512]" = torch.ops.aten.view.default(clone_35, [2, 256, -1]);  clone_35 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:367 in forward, code: attn_output = self.o(attn_output)
        _to_copy_89: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg42_1, dtype = torch.bfloat16);  arg42_1 = None
        t_27: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_89);  _to_copy_89 = None
        view_62: "bf16[512, 512]" = torch.ops.aten.view.default(view_61, [512, 512]);  view_61 = None
        mm_27: "bf16[512, 512]" = torch.ops.aten.mm.default(view_62, t_27);  view_62 = t_27 = None
        _unsafe_view_42: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_27, [2, 256, 512]);  mm_27 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:400 in forward, code: attention_output = hidden_states + self.dropout(attention_output)
        clone_36: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_42);  _unsafe_view_42 = None
        add_36: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(clone_31, clone_36);  clone_31 = clone_36 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_11: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_36, 2)
        mean_10: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_11, [-1], True);  pow_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_37: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_10, 1e-06);  mean_10 = None
        rsqrt_10: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_37);  add_37 = None
        mul_33: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_36, rsqrt_10);  rsqrt_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_34: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg43_1, mul_33);  arg43_1 = mul_33 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:304 in forward, code: query_states = self.q(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_90: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg44_1, dtype = torch.bfloat16);  arg44_1 = None
        _to_copy_91: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_34, dtype = torch.bfloat16);  mul_34 = None
        t_28: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_90);  _to_copy_90 = None
        view_63: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_91, [512, 512]);  _to_copy_91 = None
        mm_28: "bf16[512, 512]" = torch.ops.aten.mm.default(view_63, t_28);  view_63 = t_28 = None
        _unsafe_view_43: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_28, [2, 256, 512]);  mm_28 = None
        view_64: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_43, [2, 256, -1, 64]);  _unsafe_view_43 = None
        transpose_25: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_64, 1, 2);  view_64 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:325 in forward, code: key_states = self.k(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_92: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg45_1, dtype = torch.bfloat16);  arg45_1 = None
        _to_copy_93: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(clone_29, dtype = torch.bfloat16)
        t_29: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_92);  _to_copy_92 = None
        view_65: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_93, [512, 512]);  _to_copy_93 = None
        mm_29: "bf16[512, 512]" = torch.ops.aten.mm.default(view_65, t_29);  view_65 = t_29 = None
        _unsafe_view_44: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_29, [2, 256, 512]);  mm_29 = None
        view_66: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_44, [2, 256, -1, 64]);  _unsafe_view_44 = None
        transpose_26: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_66, 1, 2);  view_66 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:326 in forward, code: value_states = self.v(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_94: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg46_1, dtype = torch.bfloat16);  arg46_1 = None
        _to_copy_95: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(clone_29, dtype = torch.bfloat16)
        t_30: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_94);  _to_copy_94 = None
        view_67: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_95, [512, 512]);  _to_copy_95 = None
        mm_30: "bf16[512, 512]" = torch.ops.aten.mm.default(view_67, t_30);  view_67 = t_30 = None
        _unsafe_view_45: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_30, [2, 256, 512]);  mm_30 = None
        view_68: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_45, [2, 256, -1, 64]);  _unsafe_view_45 = None
        transpose_27: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_68, 1, 2);  view_68 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:338 in forward, code: position_bias = torch.zeros(
        zeros: "bf16[1, 8, 256, 256]" = torch.ops.aten.zeros.default([1, 8, 256, 256], dtype = torch.bfloat16, device = device(type='cuda', index=0), pin_memory = False)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:71 in create_position_bias_mask, code: position_bias_mask = torch.where(attention_mask, position_bias, min_dtype)
        scalar_tensor_5: "bf16[]" = torch.ops.aten.scalar_tensor.default(-3.3895313892515355e+38, dtype = torch.bfloat16, layout = torch.strided, device = device(type='cuda', index=0))
        where_7: "bf16[2, 8, 256, 256]" = torch.ops.aten.where.self(expand_18, zeros, scalar_tensor_5);  scalar_tensor_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _scaled_dot_product_cudnn_attention = torch.ops.aten._scaled_dot_product_cudnn_attention.default(transpose_25, transpose_26, transpose_27, where_7, False, scale = 1.0);  transpose_25 = transpose_26 = transpose_27 = where_7 = None
        getitem: "bf16[2, 8, 256, 64]" = _scaled_dot_product_cudnn_attention[0];  _scaled_dot_product_cudnn_attention = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_28: "bf16[2, 256, 8, 64]" = torch.ops.aten.transpose.int(getitem, 1, 2);  getitem = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:366 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_69: "bf16[2, 256, 512]" = torch.ops.aten.view.default(transpose_28, [2, 256, -1]);  transpose_28 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:367 in forward, code: attn_output = self.o(attn_output)
        _to_copy_96: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg47_1, dtype = torch.bfloat16);  arg47_1 = None
        t_31: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_96);  _to_copy_96 = None
        view_70: "bf16[512, 512]" = torch.ops.aten.view.default(view_69, [512, 512]);  view_69 = None
        mm_31: "bf16[512, 512]" = torch.ops.aten.mm.default(view_70, t_31);  view_70 = t_31 = None
        _unsafe_view_46: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_31, [2, 256, 512]);  mm_31 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:431 in forward, code: layer_output = hidden_states + self.dropout(attention_output)
        clone_37: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_46);  _unsafe_view_46 = None
        add_38: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_36, clone_37);  add_36 = clone_37 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_12: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_38, 2)
        mean_11: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_12, [-1], True);  pow_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_39: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_11, 1e-06);  mean_11 = None
        rsqrt_11: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_39);  add_39 = None
        mul_35: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_38, rsqrt_11);  rsqrt_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_36: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg48_1, mul_35);  arg48_1 = mul_35 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:84 in forward, code: hidden_states = self.wi(hidden_states)
        _to_copy_97: "bf16[2048, 512]" = torch.ops.aten._to_copy.default(arg49_1, dtype = torch.bfloat16);  arg49_1 = None
        _to_copy_98: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_36, dtype = torch.bfloat16);  mul_36 = None
        t_32: "bf16[512, 2048]" = torch.ops.aten.t.default(_to_copy_97);  _to_copy_97 = None
        view_71: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_98, [512, 512]);  _to_copy_98 = None
        mm_32: "bf16[512, 2048]" = torch.ops.aten.mm.default(view_71, t_32);  view_71 = t_32 = None
        _unsafe_view_47: "bf16[2, 256, 2048]" = torch.ops.aten._unsafe_view.default(mm_32, [2, 256, 2048]);  mm_32 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:85 in forward, code: hidden_states = self.act(hidden_states)
        relu_4: "bf16[2, 256, 2048]" = torch.ops.aten.relu.default(_unsafe_view_47);  _unsafe_view_47 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:86 in forward, code: hidden_states = self.dropout(hidden_states)
        clone_38: "bf16[2, 256, 2048]" = torch.ops.aten.clone.default(relu_4);  relu_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:92 in forward, code: hidden_states = hidden_states.to(self.wo.weight.dtype)
        _to_copy_99: "f32[2, 256, 2048]" = torch.ops.aten._to_copy.default(clone_38, dtype = torch.float32);  clone_38 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:93 in forward, code: hidden_states = self.wo(hidden_states)
        _to_copy_100: "bf16[512, 2048]" = torch.ops.aten._to_copy.default(arg50_1, dtype = torch.bfloat16);  arg50_1 = None
        _to_copy_101: "bf16[2, 256, 2048]" = torch.ops.aten._to_copy.default(_to_copy_99, dtype = torch.bfloat16);  _to_copy_99 = None
        t_33: "bf16[2048, 512]" = torch.ops.aten.t.default(_to_copy_100);  _to_copy_100 = None
        view_72: "bf16[512, 2048]" = torch.ops.aten.view.default(_to_copy_101, [512, 2048]);  _to_copy_101 = None
        mm_33: "bf16[512, 512]" = torch.ops.aten.mm.default(view_72, t_33);  view_72 = t_33 = None
        _unsafe_view_48: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_33, [2, 256, 512]);  mm_33 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:140 in forward, code: hidden_states = hidden_states + self.dropout(forwarded_states)
        clone_39: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_48);  _unsafe_view_48 = None
        add_40: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_38, clone_39);  add_38 = clone_39 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_13: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_40, 2)
        mean_12: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_13, [-1], True);  pow_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_41: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_12, 1e-06);  mean_12 = None
        rsqrt_12: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_41);  add_41 = None
        mul_37: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_40, rsqrt_12);  rsqrt_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_38: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg51_1, mul_37);  arg51_1 = mul_37 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:304 in forward, code: query_states = self.q(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_102: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg52_1, dtype = torch.bfloat16);  arg52_1 = None
        _to_copy_103: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_38, dtype = torch.bfloat16)
        t_34: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_102);  _to_copy_102 = None
        view_73: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_103, [512, 512]);  _to_copy_103 = None
        mm_34: "bf16[512, 512]" = torch.ops.aten.mm.default(view_73, t_34);  view_73 = t_34 = None
        _unsafe_view_49: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_34, [2, 256, 512]);  mm_34 = None
        view_74: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_49, [2, 256, -1, 64]);  _unsafe_view_49 = None
        transpose_29: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_74, 1, 2);  view_74 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:325 in forward, code: key_states = self.k(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_104: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg53_1, dtype = torch.bfloat16);  arg53_1 = None
        _to_copy_105: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_38, dtype = torch.bfloat16)
        t_35: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_104);  _to_copy_104 = None
        view_75: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_105, [512, 512]);  _to_copy_105 = None
        mm_35: "bf16[512, 512]" = torch.ops.aten.mm.default(view_75, t_35);  view_75 = t_35 = None
        _unsafe_view_50: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_35, [2, 256, 512]);  mm_35 = None
        view_76: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_50, [2, 256, -1, 64]);  _unsafe_view_50 = None
        transpose_30: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_76, 1, 2);  view_76 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:326 in forward, code: value_states = self.v(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_106: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg54_1, dtype = torch.bfloat16);  arg54_1 = None
        _to_copy_107: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_38, dtype = torch.bfloat16);  mul_38 = None
        t_36: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_106);  _to_copy_106 = None
        view_77: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_107, [512, 512]);  _to_copy_107 = None
        mm_36: "bf16[512, 512]" = torch.ops.aten.mm.default(view_77, t_36);  view_77 = t_36 = None
        _unsafe_view_51: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_36, [2, 256, 512]);  mm_36 = None
        view_78: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_51, [2, 256, -1, 64]);  _unsafe_view_51 = None
        transpose_31: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_78, 1, 2);  view_78 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:71 in create_position_bias_mask, code: position_bias_mask = torch.where(attention_mask, position_bias, min_dtype)
        scalar_tensor_6: "f32[]" = torch.ops.aten.scalar_tensor.default(-3.3895313892515355e+38, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))
        where_8: "f32[2, 8, 256, 256]" = torch.ops.aten.where.self(expand_17, unsqueeze_17, scalar_tensor_6);  scalar_tensor_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _to_copy_108: "bf16[2, 8, 256, 256]" = torch.ops.aten._to_copy.default(where_8, dtype = torch.bfloat16);  where_8 = None
        _to_copy_109: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_29, dtype = torch.float32);  transpose_29 = None
        _to_copy_110: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_30, dtype = torch.float32);  transpose_30 = None
        _to_copy_111: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_31, dtype = torch.float32);  transpose_31 = None
        mul_39: "f32[2, 8, 256, 64]" = torch.ops.aten.mul.Scalar(_to_copy_109, 1.0);  _to_copy_109 = None
        transpose_32: "f32[2, 8, 64, 256]" = torch.ops.aten.transpose.int(_to_copy_110, -2, -1);  _to_copy_110 = None
        mul_40: "f32[2, 8, 64, 256]" = torch.ops.aten.mul.Scalar(transpose_32, 1.0);  transpose_32 = None
        expand_23: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(mul_39, [2, 8, 256, 64]);  mul_39 = None
        clone_40: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_23, memory_format = torch.contiguous_format);  expand_23 = None
        _unsafe_view_52: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_40, [16, 256, 64]);  clone_40 = None
        expand_24: "f32[2, 8, 64, 256]" = torch.ops.aten.expand.default(mul_40, [2, 8, 64, 256]);  mul_40 = None
        clone_41: "f32[2, 8, 64, 256]" = torch.ops.aten.clone.default(expand_24, memory_format = torch.contiguous_format);  expand_24 = None
        _unsafe_view_53: "f32[16, 64, 256]" = torch.ops.aten._unsafe_view.default(clone_41, [16, 64, 256]);  clone_41 = None
        bmm_10: "f32[16, 256, 256]" = torch.ops.aten.bmm.default(_unsafe_view_52, _unsafe_view_53);  _unsafe_view_52 = _unsafe_view_53 = None
        view_79: "f32[2, 8, 256, 256]" = torch.ops.aten.view.default(bmm_10, [2, 8, 256, 256]);  bmm_10 = None
        add_42: "f32[2, 8, 256, 256]" = torch.ops.aten.add.Tensor(view_79, _to_copy_108);  view_79 = _to_copy_108 = None
        _safe_softmax_5: "f32[2, 8, 256, 256]" = torch.ops.aten._safe_softmax.default(add_42, -1);  add_42 = None
        expand_25: "f32[2, 8, 256, 256]" = torch.ops.aten.expand.default(_safe_softmax_5, [2, 8, 256, 256]);  _safe_softmax_5 = None
        view_80: "f32[16, 256, 256]" = torch.ops.aten.view.default(expand_25, [16, 256, 256]);  expand_25 = None
        expand_26: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(_to_copy_111, [2, 8, 256, 64]);  _to_copy_111 = None
        clone_42: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_26, memory_format = torch.contiguous_format);  expand_26 = None
        _unsafe_view_54: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_42, [16, 256, 64]);  clone_42 = None
        bmm_11: "f32[16, 256, 64]" = torch.ops.aten.bmm.default(view_80, _unsafe_view_54);  view_80 = _unsafe_view_54 = None
        view_81: "f32[2, 8, 256, 64]" = torch.ops.aten.view.default(bmm_11, [2, 8, 256, 64]);  bmm_11 = None
        _to_copy_113: "bf16[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(view_81, dtype = torch.bfloat16);  view_81 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_33: "bf16[2, 256, 8, 64]" = torch.ops.aten.transpose.int(_to_copy_113, 1, 2);  _to_copy_113 = None
        clone_43: "bf16[2, 256, 8, 64]" = torch.ops.aten.clone.default(transpose_33, memory_format = torch.contiguous_format);  transpose_33 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:366 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_82: "bf16[2, 256, 512]" = torch.ops.aten.view.default(clone_43, [2, 256, -1]);  clone_43 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:367 in forward, code: attn_output = self.o(attn_output)
        _to_copy_114: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg55_1, dtype = torch.bfloat16);  arg55_1 = None
        t_37: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_114);  _to_copy_114 = None
        view_83: "bf16[512, 512]" = torch.ops.aten.view.default(view_82, [512, 512]);  view_82 = None
        mm_37: "bf16[512, 512]" = torch.ops.aten.mm.default(view_83, t_37);  view_83 = t_37 = None
        _unsafe_view_55: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_37, [2, 256, 512]);  mm_37 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:400 in forward, code: attention_output = hidden_states + self.dropout(attention_output)
        clone_44: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_55);  _unsafe_view_55 = None
        add_43: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_40, clone_44);  add_40 = clone_44 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_14: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_43, 2)
        mean_13: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_14, [-1], True);  pow_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_44: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_13, 1e-06);  mean_13 = None
        rsqrt_13: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_44);  add_44 = None
        mul_41: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_43, rsqrt_13);  rsqrt_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_42: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg56_1, mul_41);  arg56_1 = mul_41 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:304 in forward, code: query_states = self.q(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_115: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg57_1, dtype = torch.bfloat16);  arg57_1 = None
        _to_copy_116: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_42, dtype = torch.bfloat16);  mul_42 = None
        t_38: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_115);  _to_copy_115 = None
        view_84: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_116, [512, 512]);  _to_copy_116 = None
        mm_38: "bf16[512, 512]" = torch.ops.aten.mm.default(view_84, t_38);  view_84 = t_38 = None
        _unsafe_view_56: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_38, [2, 256, 512]);  mm_38 = None
        view_85: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_56, [2, 256, -1, 64]);  _unsafe_view_56 = None
        transpose_34: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_85, 1, 2);  view_85 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:325 in forward, code: key_states = self.k(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_117: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg58_1, dtype = torch.bfloat16);  arg58_1 = None
        _to_copy_118: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(clone_29, dtype = torch.bfloat16)
        t_39: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_117);  _to_copy_117 = None
        view_86: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_118, [512, 512]);  _to_copy_118 = None
        mm_39: "bf16[512, 512]" = torch.ops.aten.mm.default(view_86, t_39);  view_86 = t_39 = None
        _unsafe_view_57: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_39, [2, 256, 512]);  mm_39 = None
        view_87: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_57, [2, 256, -1, 64]);  _unsafe_view_57 = None
        transpose_35: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_87, 1, 2);  view_87 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:326 in forward, code: value_states = self.v(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_119: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg59_1, dtype = torch.bfloat16);  arg59_1 = None
        _to_copy_120: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(clone_29, dtype = torch.bfloat16)
        t_40: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_119);  _to_copy_119 = None
        view_88: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_120, [512, 512]);  _to_copy_120 = None
        mm_40: "bf16[512, 512]" = torch.ops.aten.mm.default(view_88, t_40);  view_88 = t_40 = None
        _unsafe_view_58: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_40, [2, 256, 512]);  mm_40 = None
        view_89: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_58, [2, 256, -1, 64]);  _unsafe_view_58 = None
        transpose_36: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_89, 1, 2);  view_89 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:71 in create_position_bias_mask, code: position_bias_mask = torch.where(attention_mask, position_bias, min_dtype)
        scalar_tensor_7: "bf16[]" = torch.ops.aten.scalar_tensor.default(-3.3895313892515355e+38, dtype = torch.bfloat16, layout = torch.strided, device = device(type='cuda', index=0))
        where_9: "bf16[2, 8, 256, 256]" = torch.ops.aten.where.self(expand_18, zeros, scalar_tensor_7);  scalar_tensor_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _scaled_dot_product_cudnn_attention_1 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(transpose_34, transpose_35, transpose_36, where_9, False, scale = 1.0);  transpose_34 = transpose_35 = transpose_36 = where_9 = None
        getitem_9: "bf16[2, 8, 256, 64]" = _scaled_dot_product_cudnn_attention_1[0];  _scaled_dot_product_cudnn_attention_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_37: "bf16[2, 256, 8, 64]" = torch.ops.aten.transpose.int(getitem_9, 1, 2);  getitem_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:366 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_90: "bf16[2, 256, 512]" = torch.ops.aten.view.default(transpose_37, [2, 256, -1]);  transpose_37 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:367 in forward, code: attn_output = self.o(attn_output)
        _to_copy_121: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg60_1, dtype = torch.bfloat16);  arg60_1 = None
        t_41: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_121);  _to_copy_121 = None
        view_91: "bf16[512, 512]" = torch.ops.aten.view.default(view_90, [512, 512]);  view_90 = None
        mm_41: "bf16[512, 512]" = torch.ops.aten.mm.default(view_91, t_41);  view_91 = t_41 = None
        _unsafe_view_59: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_41, [2, 256, 512]);  mm_41 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:431 in forward, code: layer_output = hidden_states + self.dropout(attention_output)
        clone_45: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_59);  _unsafe_view_59 = None
        add_45: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_43, clone_45);  add_43 = clone_45 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_15: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_45, 2)
        mean_14: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_15, [-1], True);  pow_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_46: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_14, 1e-06);  mean_14 = None
        rsqrt_14: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_46);  add_46 = None
        mul_43: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_45, rsqrt_14);  rsqrt_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_44: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg61_1, mul_43);  arg61_1 = mul_43 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:84 in forward, code: hidden_states = self.wi(hidden_states)
        _to_copy_122: "bf16[2048, 512]" = torch.ops.aten._to_copy.default(arg62_1, dtype = torch.bfloat16);  arg62_1 = None
        _to_copy_123: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_44, dtype = torch.bfloat16);  mul_44 = None
        t_42: "bf16[512, 2048]" = torch.ops.aten.t.default(_to_copy_122);  _to_copy_122 = None
        view_92: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_123, [512, 512]);  _to_copy_123 = None
        mm_42: "bf16[512, 2048]" = torch.ops.aten.mm.default(view_92, t_42);  view_92 = t_42 = None
        _unsafe_view_60: "bf16[2, 256, 2048]" = torch.ops.aten._unsafe_view.default(mm_42, [2, 256, 2048]);  mm_42 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:85 in forward, code: hidden_states = self.act(hidden_states)
        relu_5: "bf16[2, 256, 2048]" = torch.ops.aten.relu.default(_unsafe_view_60);  _unsafe_view_60 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:86 in forward, code: hidden_states = self.dropout(hidden_states)
        clone_46: "bf16[2, 256, 2048]" = torch.ops.aten.clone.default(relu_5);  relu_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:92 in forward, code: hidden_states = hidden_states.to(self.wo.weight.dtype)
        _to_copy_124: "f32[2, 256, 2048]" = torch.ops.aten._to_copy.default(clone_46, dtype = torch.float32);  clone_46 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:93 in forward, code: hidden_states = self.wo(hidden_states)
        _to_copy_125: "bf16[512, 2048]" = torch.ops.aten._to_copy.default(arg63_1, dtype = torch.bfloat16);  arg63_1 = None
        _to_copy_126: "bf16[2, 256, 2048]" = torch.ops.aten._to_copy.default(_to_copy_124, dtype = torch.bfloat16);  _to_copy_124 = None
        t_43: "bf16[2048, 512]" = torch.ops.aten.t.default(_to_copy_125);  _to_copy_125 = None
        view_93: "bf16[512, 2048]" = torch.ops.aten.view.default(_to_copy_126, [512, 2048]);  _to_copy_126 = None
        mm_43: "bf16[512, 512]" = torch.ops.aten.mm.default(view_93, t_43);  view_93 = t_43 = None
        _unsafe_view_61: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_43, [2, 256, 512]);  mm_43 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:140 in forward, code: hidden_states = hidden_states + self.dropout(forwarded_states)
        clone_47: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_61);  _unsafe_view_61 = None
        add_47: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_45, clone_47);  add_45 = clone_47 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_16: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_47, 2)
        mean_15: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_16, [-1], True);  pow_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_48: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_15, 1e-06);  mean_15 = None
        rsqrt_15: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_48);  add_48 = None
        mul_45: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_47, rsqrt_15);  rsqrt_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_46: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg64_1, mul_45);  arg64_1 = mul_45 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:304 in forward, code: query_states = self.q(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_127: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg65_1, dtype = torch.bfloat16);  arg65_1 = None
        _to_copy_128: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_46, dtype = torch.bfloat16)
        t_44: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_127);  _to_copy_127 = None
        view_94: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_128, [512, 512]);  _to_copy_128 = None
        mm_44: "bf16[512, 512]" = torch.ops.aten.mm.default(view_94, t_44);  view_94 = t_44 = None
        _unsafe_view_62: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_44, [2, 256, 512]);  mm_44 = None
        view_95: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_62, [2, 256, -1, 64]);  _unsafe_view_62 = None
        transpose_38: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_95, 1, 2);  view_95 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:325 in forward, code: key_states = self.k(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_129: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg66_1, dtype = torch.bfloat16);  arg66_1 = None
        _to_copy_130: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_46, dtype = torch.bfloat16)
        t_45: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_129);  _to_copy_129 = None
        view_96: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_130, [512, 512]);  _to_copy_130 = None
        mm_45: "bf16[512, 512]" = torch.ops.aten.mm.default(view_96, t_45);  view_96 = t_45 = None
        _unsafe_view_63: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_45, [2, 256, 512]);  mm_45 = None
        view_97: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_63, [2, 256, -1, 64]);  _unsafe_view_63 = None
        transpose_39: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_97, 1, 2);  view_97 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:326 in forward, code: value_states = self.v(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_131: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg67_1, dtype = torch.bfloat16);  arg67_1 = None
        _to_copy_132: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_46, dtype = torch.bfloat16);  mul_46 = None
        t_46: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_131);  _to_copy_131 = None
        view_98: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_132, [512, 512]);  _to_copy_132 = None
        mm_46: "bf16[512, 512]" = torch.ops.aten.mm.default(view_98, t_46);  view_98 = t_46 = None
        _unsafe_view_64: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_46, [2, 256, 512]);  mm_46 = None
        view_99: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_64, [2, 256, -1, 64]);  _unsafe_view_64 = None
        transpose_40: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_99, 1, 2);  view_99 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:71 in create_position_bias_mask, code: position_bias_mask = torch.where(attention_mask, position_bias, min_dtype)
        scalar_tensor_8: "f32[]" = torch.ops.aten.scalar_tensor.default(-3.3895313892515355e+38, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))
        where_10: "f32[2, 8, 256, 256]" = torch.ops.aten.where.self(expand_17, unsqueeze_17, scalar_tensor_8);  scalar_tensor_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _to_copy_133: "bf16[2, 8, 256, 256]" = torch.ops.aten._to_copy.default(where_10, dtype = torch.bfloat16);  where_10 = None
        _to_copy_134: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_38, dtype = torch.float32);  transpose_38 = None
        _to_copy_135: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_39, dtype = torch.float32);  transpose_39 = None
        _to_copy_136: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_40, dtype = torch.float32);  transpose_40 = None
        mul_47: "f32[2, 8, 256, 64]" = torch.ops.aten.mul.Scalar(_to_copy_134, 1.0);  _to_copy_134 = None
        transpose_41: "f32[2, 8, 64, 256]" = torch.ops.aten.transpose.int(_to_copy_135, -2, -1);  _to_copy_135 = None
        mul_48: "f32[2, 8, 64, 256]" = torch.ops.aten.mul.Scalar(transpose_41, 1.0);  transpose_41 = None
        expand_27: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(mul_47, [2, 8, 256, 64]);  mul_47 = None
        clone_48: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_27, memory_format = torch.contiguous_format);  expand_27 = None
        _unsafe_view_65: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_48, [16, 256, 64]);  clone_48 = None
        expand_28: "f32[2, 8, 64, 256]" = torch.ops.aten.expand.default(mul_48, [2, 8, 64, 256]);  mul_48 = None
        clone_49: "f32[2, 8, 64, 256]" = torch.ops.aten.clone.default(expand_28, memory_format = torch.contiguous_format);  expand_28 = None
        _unsafe_view_66: "f32[16, 64, 256]" = torch.ops.aten._unsafe_view.default(clone_49, [16, 64, 256]);  clone_49 = None
        bmm_12: "f32[16, 256, 256]" = torch.ops.aten.bmm.default(_unsafe_view_65, _unsafe_view_66);  _unsafe_view_65 = _unsafe_view_66 = None
        view_100: "f32[2, 8, 256, 256]" = torch.ops.aten.view.default(bmm_12, [2, 8, 256, 256]);  bmm_12 = None
        add_49: "f32[2, 8, 256, 256]" = torch.ops.aten.add.Tensor(view_100, _to_copy_133);  view_100 = _to_copy_133 = None
        _safe_softmax_6: "f32[2, 8, 256, 256]" = torch.ops.aten._safe_softmax.default(add_49, -1);  add_49 = None
        expand_29: "f32[2, 8, 256, 256]" = torch.ops.aten.expand.default(_safe_softmax_6, [2, 8, 256, 256]);  _safe_softmax_6 = None
        view_101: "f32[16, 256, 256]" = torch.ops.aten.view.default(expand_29, [16, 256, 256]);  expand_29 = None
        expand_30: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(_to_copy_136, [2, 8, 256, 64]);  _to_copy_136 = None
        clone_50: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_30, memory_format = torch.contiguous_format);  expand_30 = None
        _unsafe_view_67: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_50, [16, 256, 64]);  clone_50 = None
        bmm_13: "f32[16, 256, 64]" = torch.ops.aten.bmm.default(view_101, _unsafe_view_67);  view_101 = _unsafe_view_67 = None
        view_102: "f32[2, 8, 256, 64]" = torch.ops.aten.view.default(bmm_13, [2, 8, 256, 64]);  bmm_13 = None
        _to_copy_138: "bf16[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(view_102, dtype = torch.bfloat16);  view_102 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_42: "bf16[2, 256, 8, 64]" = torch.ops.aten.transpose.int(_to_copy_138, 1, 2);  _to_copy_138 = None
        clone_51: "bf16[2, 256, 8, 64]" = torch.ops.aten.clone.default(transpose_42, memory_format = torch.contiguous_format);  transpose_42 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:366 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_103: "bf16[2, 256, 512]" = torch.ops.aten.view.default(clone_51, [2, 256, -1]);  clone_51 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:367 in forward, code: attn_output = self.o(attn_output)
        _to_copy_139: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg68_1, dtype = torch.bfloat16);  arg68_1 = None
        t_47: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_139);  _to_copy_139 = None
        view_104: "bf16[512, 512]" = torch.ops.aten.view.default(view_103, [512, 512]);  view_103 = None
        mm_47: "bf16[512, 512]" = torch.ops.aten.mm.default(view_104, t_47);  view_104 = t_47 = None
        _unsafe_view_68: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_47, [2, 256, 512]);  mm_47 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:400 in forward, code: attention_output = hidden_states + self.dropout(attention_output)
        clone_52: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_68);  _unsafe_view_68 = None
        add_50: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_47, clone_52);  add_47 = clone_52 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_17: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_50, 2)
        mean_16: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_17, [-1], True);  pow_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_51: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_16, 1e-06);  mean_16 = None
        rsqrt_16: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_51);  add_51 = None
        mul_49: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_50, rsqrt_16);  rsqrt_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_50: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg69_1, mul_49);  arg69_1 = mul_49 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:304 in forward, code: query_states = self.q(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_140: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg70_1, dtype = torch.bfloat16);  arg70_1 = None
        _to_copy_141: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_50, dtype = torch.bfloat16);  mul_50 = None
        t_48: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_140);  _to_copy_140 = None
        view_105: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_141, [512, 512]);  _to_copy_141 = None
        mm_48: "bf16[512, 512]" = torch.ops.aten.mm.default(view_105, t_48);  view_105 = t_48 = None
        _unsafe_view_69: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_48, [2, 256, 512]);  mm_48 = None
        view_106: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_69, [2, 256, -1, 64]);  _unsafe_view_69 = None
        transpose_43: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_106, 1, 2);  view_106 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:325 in forward, code: key_states = self.k(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_142: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg71_1, dtype = torch.bfloat16);  arg71_1 = None
        _to_copy_143: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(clone_29, dtype = torch.bfloat16)
        t_49: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_142);  _to_copy_142 = None
        view_107: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_143, [512, 512]);  _to_copy_143 = None
        mm_49: "bf16[512, 512]" = torch.ops.aten.mm.default(view_107, t_49);  view_107 = t_49 = None
        _unsafe_view_70: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_49, [2, 256, 512]);  mm_49 = None
        view_108: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_70, [2, 256, -1, 64]);  _unsafe_view_70 = None
        transpose_44: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_108, 1, 2);  view_108 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:326 in forward, code: value_states = self.v(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_144: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg72_1, dtype = torch.bfloat16);  arg72_1 = None
        _to_copy_145: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(clone_29, dtype = torch.bfloat16)
        t_50: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_144);  _to_copy_144 = None
        view_109: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_145, [512, 512]);  _to_copy_145 = None
        mm_50: "bf16[512, 512]" = torch.ops.aten.mm.default(view_109, t_50);  view_109 = t_50 = None
        _unsafe_view_71: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_50, [2, 256, 512]);  mm_50 = None
        view_110: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_71, [2, 256, -1, 64]);  _unsafe_view_71 = None
        transpose_45: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_110, 1, 2);  view_110 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:71 in create_position_bias_mask, code: position_bias_mask = torch.where(attention_mask, position_bias, min_dtype)
        scalar_tensor_9: "bf16[]" = torch.ops.aten.scalar_tensor.default(-3.3895313892515355e+38, dtype = torch.bfloat16, layout = torch.strided, device = device(type='cuda', index=0))
        where_11: "bf16[2, 8, 256, 256]" = torch.ops.aten.where.self(expand_18, zeros, scalar_tensor_9);  scalar_tensor_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _scaled_dot_product_cudnn_attention_2 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(transpose_43, transpose_44, transpose_45, where_11, False, scale = 1.0);  transpose_43 = transpose_44 = transpose_45 = where_11 = None
        getitem_18: "bf16[2, 8, 256, 64]" = _scaled_dot_product_cudnn_attention_2[0];  _scaled_dot_product_cudnn_attention_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_46: "bf16[2, 256, 8, 64]" = torch.ops.aten.transpose.int(getitem_18, 1, 2);  getitem_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:366 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_111: "bf16[2, 256, 512]" = torch.ops.aten.view.default(transpose_46, [2, 256, -1]);  transpose_46 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:367 in forward, code: attn_output = self.o(attn_output)
        _to_copy_146: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg73_1, dtype = torch.bfloat16);  arg73_1 = None
        t_51: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_146);  _to_copy_146 = None
        view_112: "bf16[512, 512]" = torch.ops.aten.view.default(view_111, [512, 512]);  view_111 = None
        mm_51: "bf16[512, 512]" = torch.ops.aten.mm.default(view_112, t_51);  view_112 = t_51 = None
        _unsafe_view_72: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_51, [2, 256, 512]);  mm_51 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:431 in forward, code: layer_output = hidden_states + self.dropout(attention_output)
        clone_53: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_72);  _unsafe_view_72 = None
        add_52: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_50, clone_53);  add_50 = clone_53 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_18: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_52, 2)
        mean_17: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_18, [-1], True);  pow_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_53: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_17, 1e-06);  mean_17 = None
        rsqrt_17: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_53);  add_53 = None
        mul_51: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_52, rsqrt_17);  rsqrt_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_52: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg74_1, mul_51);  arg74_1 = mul_51 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:84 in forward, code: hidden_states = self.wi(hidden_states)
        _to_copy_147: "bf16[2048, 512]" = torch.ops.aten._to_copy.default(arg75_1, dtype = torch.bfloat16);  arg75_1 = None
        _to_copy_148: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_52, dtype = torch.bfloat16);  mul_52 = None
        t_52: "bf16[512, 2048]" = torch.ops.aten.t.default(_to_copy_147);  _to_copy_147 = None
        view_113: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_148, [512, 512]);  _to_copy_148 = None
        mm_52: "bf16[512, 2048]" = torch.ops.aten.mm.default(view_113, t_52);  view_113 = t_52 = None
        _unsafe_view_73: "bf16[2, 256, 2048]" = torch.ops.aten._unsafe_view.default(mm_52, [2, 256, 2048]);  mm_52 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:85 in forward, code: hidden_states = self.act(hidden_states)
        relu_6: "bf16[2, 256, 2048]" = torch.ops.aten.relu.default(_unsafe_view_73);  _unsafe_view_73 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:86 in forward, code: hidden_states = self.dropout(hidden_states)
        clone_54: "bf16[2, 256, 2048]" = torch.ops.aten.clone.default(relu_6);  relu_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:92 in forward, code: hidden_states = hidden_states.to(self.wo.weight.dtype)
        _to_copy_149: "f32[2, 256, 2048]" = torch.ops.aten._to_copy.default(clone_54, dtype = torch.float32);  clone_54 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:93 in forward, code: hidden_states = self.wo(hidden_states)
        _to_copy_150: "bf16[512, 2048]" = torch.ops.aten._to_copy.default(arg76_1, dtype = torch.bfloat16);  arg76_1 = None
        _to_copy_151: "bf16[2, 256, 2048]" = torch.ops.aten._to_copy.default(_to_copy_149, dtype = torch.bfloat16);  _to_copy_149 = None
        t_53: "bf16[2048, 512]" = torch.ops.aten.t.default(_to_copy_150);  _to_copy_150 = None
        view_114: "bf16[512, 2048]" = torch.ops.aten.view.default(_to_copy_151, [512, 2048]);  _to_copy_151 = None
        mm_53: "bf16[512, 512]" = torch.ops.aten.mm.default(view_114, t_53);  view_114 = t_53 = None
        _unsafe_view_74: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_53, [2, 256, 512]);  mm_53 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:140 in forward, code: hidden_states = hidden_states + self.dropout(forwarded_states)
        clone_55: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_74);  _unsafe_view_74 = None
        add_54: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_52, clone_55);  add_52 = clone_55 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_19: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_54, 2)
        mean_18: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_19, [-1], True);  pow_19 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_55: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_18, 1e-06);  mean_18 = None
        rsqrt_18: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_55);  add_55 = None
        mul_53: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_54, rsqrt_18);  rsqrt_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_54: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg77_1, mul_53);  arg77_1 = mul_53 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:304 in forward, code: query_states = self.q(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_152: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg78_1, dtype = torch.bfloat16);  arg78_1 = None
        _to_copy_153: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_54, dtype = torch.bfloat16)
        t_54: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_152);  _to_copy_152 = None
        view_115: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_153, [512, 512]);  _to_copy_153 = None
        mm_54: "bf16[512, 512]" = torch.ops.aten.mm.default(view_115, t_54);  view_115 = t_54 = None
        _unsafe_view_75: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_54, [2, 256, 512]);  mm_54 = None
        view_116: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_75, [2, 256, -1, 64]);  _unsafe_view_75 = None
        transpose_47: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_116, 1, 2);  view_116 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:325 in forward, code: key_states = self.k(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_154: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg79_1, dtype = torch.bfloat16);  arg79_1 = None
        _to_copy_155: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_54, dtype = torch.bfloat16)
        t_55: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_154);  _to_copy_154 = None
        view_117: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_155, [512, 512]);  _to_copy_155 = None
        mm_55: "bf16[512, 512]" = torch.ops.aten.mm.default(view_117, t_55);  view_117 = t_55 = None
        _unsafe_view_76: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_55, [2, 256, 512]);  mm_55 = None
        view_118: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_76, [2, 256, -1, 64]);  _unsafe_view_76 = None
        transpose_48: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_118, 1, 2);  view_118 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:326 in forward, code: value_states = self.v(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_156: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg80_1, dtype = torch.bfloat16);  arg80_1 = None
        _to_copy_157: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_54, dtype = torch.bfloat16);  mul_54 = None
        t_56: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_156);  _to_copy_156 = None
        view_119: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_157, [512, 512]);  _to_copy_157 = None
        mm_56: "bf16[512, 512]" = torch.ops.aten.mm.default(view_119, t_56);  view_119 = t_56 = None
        _unsafe_view_77: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_56, [2, 256, 512]);  mm_56 = None
        view_120: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_77, [2, 256, -1, 64]);  _unsafe_view_77 = None
        transpose_49: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_120, 1, 2);  view_120 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:71 in create_position_bias_mask, code: position_bias_mask = torch.where(attention_mask, position_bias, min_dtype)
        scalar_tensor_10: "f32[]" = torch.ops.aten.scalar_tensor.default(-3.3895313892515355e+38, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))
        where_12: "f32[2, 8, 256, 256]" = torch.ops.aten.where.self(expand_17, unsqueeze_17, scalar_tensor_10);  expand_17 = unsqueeze_17 = scalar_tensor_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _to_copy_158: "bf16[2, 8, 256, 256]" = torch.ops.aten._to_copy.default(where_12, dtype = torch.bfloat16);  where_12 = None
        _to_copy_159: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_47, dtype = torch.float32);  transpose_47 = None
        _to_copy_160: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_48, dtype = torch.float32);  transpose_48 = None
        _to_copy_161: "f32[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(transpose_49, dtype = torch.float32);  transpose_49 = None
        mul_55: "f32[2, 8, 256, 64]" = torch.ops.aten.mul.Scalar(_to_copy_159, 1.0);  _to_copy_159 = None
        transpose_50: "f32[2, 8, 64, 256]" = torch.ops.aten.transpose.int(_to_copy_160, -2, -1);  _to_copy_160 = None
        mul_56: "f32[2, 8, 64, 256]" = torch.ops.aten.mul.Scalar(transpose_50, 1.0);  transpose_50 = None
        expand_31: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(mul_55, [2, 8, 256, 64]);  mul_55 = None
        clone_56: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_31, memory_format = torch.contiguous_format);  expand_31 = None
        _unsafe_view_78: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_56, [16, 256, 64]);  clone_56 = None
        expand_32: "f32[2, 8, 64, 256]" = torch.ops.aten.expand.default(mul_56, [2, 8, 64, 256]);  mul_56 = None
        clone_57: "f32[2, 8, 64, 256]" = torch.ops.aten.clone.default(expand_32, memory_format = torch.contiguous_format);  expand_32 = None
        _unsafe_view_79: "f32[16, 64, 256]" = torch.ops.aten._unsafe_view.default(clone_57, [16, 64, 256]);  clone_57 = None
        bmm_14: "f32[16, 256, 256]" = torch.ops.aten.bmm.default(_unsafe_view_78, _unsafe_view_79);  _unsafe_view_78 = _unsafe_view_79 = None
        view_121: "f32[2, 8, 256, 256]" = torch.ops.aten.view.default(bmm_14, [2, 8, 256, 256]);  bmm_14 = None
        add_56: "f32[2, 8, 256, 256]" = torch.ops.aten.add.Tensor(view_121, _to_copy_158);  view_121 = _to_copy_158 = None
        _safe_softmax_7: "f32[2, 8, 256, 256]" = torch.ops.aten._safe_softmax.default(add_56, -1);  add_56 = None
        expand_33: "f32[2, 8, 256, 256]" = torch.ops.aten.expand.default(_safe_softmax_7, [2, 8, 256, 256]);  _safe_softmax_7 = None
        view_122: "f32[16, 256, 256]" = torch.ops.aten.view.default(expand_33, [16, 256, 256]);  expand_33 = None
        expand_34: "f32[2, 8, 256, 64]" = torch.ops.aten.expand.default(_to_copy_161, [2, 8, 256, 64]);  _to_copy_161 = None
        clone_58: "f32[2, 8, 256, 64]" = torch.ops.aten.clone.default(expand_34, memory_format = torch.contiguous_format);  expand_34 = None
        _unsafe_view_80: "f32[16, 256, 64]" = torch.ops.aten._unsafe_view.default(clone_58, [16, 256, 64]);  clone_58 = None
        bmm_15: "f32[16, 256, 64]" = torch.ops.aten.bmm.default(view_122, _unsafe_view_80);  view_122 = _unsafe_view_80 = None
        view_123: "f32[2, 8, 256, 64]" = torch.ops.aten.view.default(bmm_15, [2, 8, 256, 64]);  bmm_15 = None
        _to_copy_163: "bf16[2, 8, 256, 64]" = torch.ops.aten._to_copy.default(view_123, dtype = torch.bfloat16);  view_123 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_51: "bf16[2, 256, 8, 64]" = torch.ops.aten.transpose.int(_to_copy_163, 1, 2);  _to_copy_163 = None
        clone_59: "bf16[2, 256, 8, 64]" = torch.ops.aten.clone.default(transpose_51, memory_format = torch.contiguous_format);  transpose_51 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:366 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_124: "bf16[2, 256, 512]" = torch.ops.aten.view.default(clone_59, [2, 256, -1]);  clone_59 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:367 in forward, code: attn_output = self.o(attn_output)
        _to_copy_164: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg81_1, dtype = torch.bfloat16);  arg81_1 = None
        t_57: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_164);  _to_copy_164 = None
        view_125: "bf16[512, 512]" = torch.ops.aten.view.default(view_124, [512, 512]);  view_124 = None
        mm_57: "bf16[512, 512]" = torch.ops.aten.mm.default(view_125, t_57);  view_125 = t_57 = None
        _unsafe_view_81: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_57, [2, 256, 512]);  mm_57 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:400 in forward, code: attention_output = hidden_states + self.dropout(attention_output)
        clone_60: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_81);  _unsafe_view_81 = None
        add_57: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_54, clone_60);  add_54 = clone_60 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_20: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_57, 2)
        mean_19: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_20, [-1], True);  pow_20 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_58: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_19, 1e-06);  mean_19 = None
        rsqrt_19: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_58);  add_58 = None
        mul_57: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_57, rsqrt_19);  rsqrt_19 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_58: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg82_1, mul_57);  arg82_1 = mul_57 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:304 in forward, code: query_states = self.q(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_165: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg83_1, dtype = torch.bfloat16);  arg83_1 = None
        _to_copy_166: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_58, dtype = torch.bfloat16);  mul_58 = None
        t_58: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_165);  _to_copy_165 = None
        view_126: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_166, [512, 512]);  _to_copy_166 = None
        mm_58: "bf16[512, 512]" = torch.ops.aten.mm.default(view_126, t_58);  view_126 = t_58 = None
        _unsafe_view_82: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_58, [2, 256, 512]);  mm_58 = None
        view_127: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_82, [2, 256, -1, 64]);  _unsafe_view_82 = None
        transpose_52: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_127, 1, 2);  view_127 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:325 in forward, code: key_states = self.k(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_167: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg84_1, dtype = torch.bfloat16);  arg84_1 = None
        _to_copy_168: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(clone_29, dtype = torch.bfloat16)
        t_59: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_167);  _to_copy_167 = None
        view_128: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_168, [512, 512]);  _to_copy_168 = None
        mm_59: "bf16[512, 512]" = torch.ops.aten.mm.default(view_128, t_59);  view_128 = t_59 = None
        _unsafe_view_83: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_59, [2, 256, 512]);  mm_59 = None
        view_129: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_83, [2, 256, -1, 64]);  _unsafe_view_83 = None
        transpose_53: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_129, 1, 2);  view_129 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:326 in forward, code: value_states = self.v(current_states).view(kv_shape).transpose(1, 2)
        _to_copy_169: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg85_1, dtype = torch.bfloat16);  arg85_1 = None
        _to_copy_170: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(clone_29, dtype = torch.bfloat16)
        t_60: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_169);  _to_copy_169 = None
        view_130: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_170, [512, 512]);  _to_copy_170 = None
        mm_60: "bf16[512, 512]" = torch.ops.aten.mm.default(view_130, t_60);  view_130 = t_60 = None
        _unsafe_view_84: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_60, [2, 256, 512]);  mm_60 = None
        view_131: "bf16[2, 256, 8, 64]" = torch.ops.aten.view.default(_unsafe_view_84, [2, 256, -1, 64]);  _unsafe_view_84 = None
        transpose_54: "bf16[2, 8, 256, 64]" = torch.ops.aten.transpose.int(view_131, 1, 2);  view_131 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:71 in create_position_bias_mask, code: position_bias_mask = torch.where(attention_mask, position_bias, min_dtype)
        scalar_tensor_11: "bf16[]" = torch.ops.aten.scalar_tensor.default(-3.3895313892515355e+38, dtype = torch.bfloat16, layout = torch.strided, device = device(type='cuda', index=0))
        where_13: "bf16[2, 8, 256, 256]" = torch.ops.aten.where.self(expand_18, zeros, scalar_tensor_11);  expand_18 = zeros = scalar_tensor_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _scaled_dot_product_cudnn_attention_3 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(transpose_52, transpose_53, transpose_54, where_13, False, scale = 1.0);  transpose_52 = transpose_53 = transpose_54 = where_13 = None
        getitem_27: "bf16[2, 8, 256, 64]" = _scaled_dot_product_cudnn_attention_3[0];  _scaled_dot_product_cudnn_attention_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_55: "bf16[2, 256, 8, 64]" = torch.ops.aten.transpose.int(getitem_27, 1, 2);  getitem_27 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:366 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_132: "bf16[2, 256, 512]" = torch.ops.aten.view.default(transpose_55, [2, 256, -1]);  transpose_55 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:367 in forward, code: attn_output = self.o(attn_output)
        _to_copy_171: "bf16[512, 512]" = torch.ops.aten._to_copy.default(arg86_1, dtype = torch.bfloat16);  arg86_1 = None
        t_61: "bf16[512, 512]" = torch.ops.aten.t.default(_to_copy_171);  _to_copy_171 = None
        view_133: "bf16[512, 512]" = torch.ops.aten.view.default(view_132, [512, 512]);  view_132 = None
        mm_61: "bf16[512, 512]" = torch.ops.aten.mm.default(view_133, t_61);  view_133 = t_61 = None
        _unsafe_view_85: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_61, [2, 256, 512]);  mm_61 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:431 in forward, code: layer_output = hidden_states + self.dropout(attention_output)
        clone_61: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_85);  _unsafe_view_85 = None
        add_59: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_57, clone_61);  add_57 = clone_61 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_21: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_59, 2)
        mean_20: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_21, [-1], True);  pow_21 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_60: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_20, 1e-06);  mean_20 = None
        rsqrt_20: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_60);  add_60 = None
        mul_59: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_59, rsqrt_20);  rsqrt_20 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_60: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg87_1, mul_59);  arg87_1 = mul_59 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:84 in forward, code: hidden_states = self.wi(hidden_states)
        _to_copy_172: "bf16[2048, 512]" = torch.ops.aten._to_copy.default(arg88_1, dtype = torch.bfloat16);  arg88_1 = None
        _to_copy_173: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_60, dtype = torch.bfloat16);  mul_60 = None
        t_62: "bf16[512, 2048]" = torch.ops.aten.t.default(_to_copy_172);  _to_copy_172 = None
        view_134: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_173, [512, 512]);  _to_copy_173 = None
        mm_62: "bf16[512, 2048]" = torch.ops.aten.mm.default(view_134, t_62);  view_134 = t_62 = None
        _unsafe_view_86: "bf16[2, 256, 2048]" = torch.ops.aten._unsafe_view.default(mm_62, [2, 256, 2048]);  mm_62 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:85 in forward, code: hidden_states = self.act(hidden_states)
        relu_7: "bf16[2, 256, 2048]" = torch.ops.aten.relu.default(_unsafe_view_86);  _unsafe_view_86 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:86 in forward, code: hidden_states = self.dropout(hidden_states)
        clone_62: "bf16[2, 256, 2048]" = torch.ops.aten.clone.default(relu_7);  relu_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:92 in forward, code: hidden_states = hidden_states.to(self.wo.weight.dtype)
        _to_copy_174: "f32[2, 256, 2048]" = torch.ops.aten._to_copy.default(clone_62, dtype = torch.float32);  clone_62 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:93 in forward, code: hidden_states = self.wo(hidden_states)
        _to_copy_175: "bf16[512, 2048]" = torch.ops.aten._to_copy.default(arg89_1, dtype = torch.bfloat16);  arg89_1 = None
        _to_copy_176: "bf16[2, 256, 2048]" = torch.ops.aten._to_copy.default(_to_copy_174, dtype = torch.bfloat16);  _to_copy_174 = None
        t_63: "bf16[2048, 512]" = torch.ops.aten.t.default(_to_copy_175);  _to_copy_175 = None
        view_135: "bf16[512, 2048]" = torch.ops.aten.view.default(_to_copy_176, [512, 2048]);  _to_copy_176 = None
        mm_63: "bf16[512, 512]" = torch.ops.aten.mm.default(view_135, t_63);  view_135 = t_63 = None
        _unsafe_view_87: "bf16[2, 256, 512]" = torch.ops.aten._unsafe_view.default(mm_63, [2, 256, 512]);  mm_63 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:140 in forward, code: hidden_states = hidden_states + self.dropout(forwarded_states)
        clone_63: "bf16[2, 256, 512]" = torch.ops.aten.clone.default(_unsafe_view_87);  _unsafe_view_87 = None
        add_61: "f32[2, 256, 512]" = torch.ops.aten.add.Tensor(add_59, clone_63);  add_59 = clone_63 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:65 in forward, code: variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        pow_22: "f32[2, 256, 512]" = torch.ops.aten.pow.Tensor_Scalar(add_61, 2)
        mean_21: "f32[2, 256, 1]" = torch.ops.aten.mean.dim(pow_22, [-1], True);  pow_22 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_62: "f32[2, 256, 1]" = torch.ops.aten.add.Tensor(mean_21, 1e-06);  mean_21 = None
        rsqrt_21: "f32[2, 256, 1]" = torch.ops.aten.rsqrt.default(add_62);  add_62 = None
        mul_61: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(add_61, rsqrt_21);  add_61 = rsqrt_21 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:72 in forward, code: return self.weight * hidden_states
        mul_62: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(arg90_1, mul_61);  arg90_1 = mul_61 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:745 in forward, code: hidden_states = self.dropout(hidden_states)
        clone_64: "f32[2, 256, 512]" = torch.ops.aten.clone.default(mul_62);  mul_62 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:1045 in forward, code: sequence_output = sequence_output * (self.model_dim**-0.5)
        mul_63: "f32[2, 256, 512]" = torch.ops.aten.mul.Tensor(clone_64, 0.04419417382415922);  clone_64 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:1047 in forward, code: lm_logits = self.lm_head(sequence_output)
        _to_copy_177: "bf16[32128, 512]" = torch.ops.aten._to_copy.default(arg1_1, dtype = torch.bfloat16);  arg1_1 = None
        _to_copy_178: "bf16[2, 256, 512]" = torch.ops.aten._to_copy.default(mul_63, dtype = torch.bfloat16);  mul_63 = None
        t_64: "bf16[512, 32128]" = torch.ops.aten.t.default(_to_copy_177);  _to_copy_177 = None
        view_136: "bf16[512, 512]" = torch.ops.aten.view.default(_to_copy_178, [512, 512]);  _to_copy_178 = None
        mm_64: "bf16[512, 32128]" = torch.ops.aten.mm.default(view_136, t_64);  view_136 = t_64 = None
        _unsafe_view_88: "bf16[2, 256, 32128]" = torch.ops.aten._unsafe_view.default(mm_64, [2, 256, 32128]);  mm_64 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/t5/modeling_t5.py:1054 in forward, code: loss = loss_fct(lm_logits.view(-1, lm_logits.size(-1)), labels.view(-1))
        view_137: "bf16[512, 32128]" = torch.ops.aten.view.default(_unsafe_view_88, [-1, 32128])
        view_138: "i64[512]" = torch.ops.aten.view.default(arg36_1, [-1]);  arg36_1 = None
        _to_copy_179: "f32[512, 32128]" = torch.ops.aten._to_copy.default(view_137, dtype = torch.float32);  view_137 = None
        logsumexp: "f32[512, 1]" = torch.ops.aten.logsumexp.default(_to_copy_179, [1], True)
        sub_2: "f32[512, 32128]" = torch.ops.aten.sub.Tensor(_to_copy_179, logsumexp);  _to_copy_179 = logsumexp = None
        _to_copy_180: "bf16[512, 32128]" = torch.ops.aten._to_copy.default(sub_2, dtype = torch.bfloat16);  sub_2 = None
        _to_copy_181: "f32[512, 32128]" = torch.ops.aten._to_copy.default(_to_copy_180, dtype = torch.float32);  _to_copy_180 = None
        nll_loss_forward = torch.ops.aten.nll_loss_forward.default(_to_copy_181, view_138, None, 1, -100);  _to_copy_181 = view_138 = None
        getitem_36: "f32[]" = nll_loss_forward[0];  nll_loss_forward = None
        return (getitem_36, _unsafe_view_88, clone_29)
