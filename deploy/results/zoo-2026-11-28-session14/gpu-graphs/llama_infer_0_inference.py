class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "i64[2, 512]", arg1_1: "f32[32000, 1024]", arg2_1: "f32[32]", arg3_1: "f32[1024]", arg4_1: "f32[1024, 1024]", arg5_1: "f32[1024, 1024]", arg6_1: "f32[1024, 1024]", arg7_1: "f32[1024, 1024]", arg8_1: "f32[1024]", arg9_1: "f32[2816, 1024]", arg10_1: "f32[2816, 1024]", arg11_1: "f32[1024, 2816]", arg12_1: "f32[1024]", arg13_1: "f32[1024, 1024]", arg14_1: "f32[1024, 1024]", arg15_1: "f32[1024, 1024]", arg16_1: "f32[1024, 1024]", arg17_1: "f32[1024]", arg18_1: "f32[2816, 1024]", arg19_1: "f32[2816, 1024]", arg20_1: "f32[1024, 2816]", arg21_1: "f32[1024]", arg22_1: "f32[1024, 1024]", arg23_1: "f32[1024, 1024]", arg24_1: "f32[1024, 1024]", arg25_1: "f32[1024, 1024]", arg26_1: "f32[1024]", arg27_1: "f32[2816, 1024]", arg28_1: "f32[2816, 1024]", arg29_1: "f32[1024, 2816]", arg30_1: "f32[1024]", arg31_1: "f32[1024, 1024]", arg32_1: "f32[1024, 1024]", arg33_1: "f32[1024, 1024]", arg34_1: "f32[1024, 1024]", arg35_1: "f32[1024]", arg36_1: "f32[2816, 1024]", arg37_1: "f32[2816, 1024]", arg38_1: "f32[1024, 2816]", arg39_1: "f32[1024]", arg40_1: "f32[32000, 1024]", arg41_1: "i64[2, 512]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:381 in forward, code: inputs_embeds: torch.Tensor = self.embed_tokens(input_ids)
        embedding: "f32[2, 512, 1024]" = torch.ops.aten.embedding.default(arg1_1, arg0_1);  arg1_1 = arg0_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:388 in forward, code: position_ids = torch.arange(inputs_embeds.shape[1], device=inputs_embeds.device) + past_seen_tokens
        arange: "i64[512]" = torch.ops.aten.arange.default(512, device = device(type='cuda', index=0), pin_memory = False)
        add: "i64[512]" = torch.ops.aten.add.Tensor(arange, 0);  arange = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:389 in forward, code: position_ids = position_ids.unsqueeze(0)
        unsqueeze: "i64[1, 512]" = torch.ops.aten.unsqueeze.default(add, 0);  add = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:859 in _preprocess_mask_arguments, code: position_ids = position_ids.expand(batch_size, -1)
        expand: "i64[2, 512]" = torch.ops.aten.expand.default(unsqueeze, [2, -1])

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:750 in find_packed_sequence_indices, code: first_dummy_value = position_ids[:, :1] - 1  # We just need the diff on this first value to be 1
        slice_1: "i64[2, 1]" = torch.ops.aten.slice.Tensor(expand, 1, 0, 1)
        sub: "i64[2, 1]" = torch.ops.aten.sub.Tensor(slice_1, 1);  slice_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:751 in find_packed_sequence_indices, code: position_diff = torch.diff(position_ids, prepend=first_dummy_value, dim=-1)
        cat: "i64[2, 513]" = torch.ops.aten.cat.default([sub, expand], -1);  sub = expand = None
        slice_2: "i64[2, 512]" = torch.ops.aten.slice.Tensor(cat, -1, 0, 512)
        slice_3: "i64[2, 512]" = torch.ops.aten.slice.Tensor(cat, -1, 1, 513);  cat = None
        sub_1: "i64[2, 512]" = torch.ops.aten.sub.Tensor(slice_3, slice_2);  slice_3 = slice_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:752 in find_packed_sequence_indices, code: packed_sequence_mask = (position_diff != 1).cumsum(-1)
        ne: "b8[2, 512]" = torch.ops.aten.ne.Scalar(sub_1, 1);  sub_1 = None
        cumsum: "i64[2, 512]" = torch.ops.aten.cumsum.default(ne, -1);  ne = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:508 in sdpa_mask, code: batch_arange = torch.arange(batch_size, device=device)
        arange_1: "i64[2]" = torch.ops.aten.arange.default(2, device = device(type='cuda', index=0), pin_memory = False)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:510 in sdpa_mask, code: q_arange = torch.arange(q_length, device=device) + q_offset
        arange_3: "i64[512]" = torch.ops.aten.arange.default(512, device = device(type='cuda', index=0), pin_memory = False)
        add_1: "i64[512]" = torch.ops.aten.add.Tensor(arange_3, 0);  arange_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:511 in sdpa_mask, code: kv_arange = torch.arange(kv_length, device=device) + kv_offset
        arange_4: "i64[512]" = torch.ops.aten.arange.default(512, device = device(type='cuda', index=0), pin_memory = False)
        add_2: "i64[512]" = torch.ops.aten.add.Tensor(arange_4, 0);  arange_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:365 in _non_vmap_expansion_sdpa, code: batch_indices = batch_indices[:, None, None, None]
        unsqueeze_1: "i64[2, 1]" = torch.ops.aten.unsqueeze.default(arange_1, 1);  arange_1 = None
        unsqueeze_2: "i64[2, 1, 1]" = torch.ops.aten.unsqueeze.default(unsqueeze_1, 2);  unsqueeze_1 = None
        unsqueeze_3: "i64[2, 1, 1, 1]" = torch.ops.aten.unsqueeze.default(unsqueeze_2, 3);  unsqueeze_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:367 in _non_vmap_expansion_sdpa, code: q_indices = q_indices[None, None, :, None]
        unsqueeze_4: "i64[1, 512]" = torch.ops.aten.unsqueeze.default(add_1, 0);  add_1 = None
        unsqueeze_5: "i64[1, 1, 512]" = torch.ops.aten.unsqueeze.default(unsqueeze_4, 1);  unsqueeze_4 = None
        unsqueeze_6: "i64[1, 1, 512, 1]" = torch.ops.aten.unsqueeze.default(unsqueeze_5, 3);  unsqueeze_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:368 in _non_vmap_expansion_sdpa, code: kv_indices = kv_indices[None, None, None, :]
        unsqueeze_7: "i64[1, 512]" = torch.ops.aten.unsqueeze.default(add_2, 0);  add_2 = None
        unsqueeze_8: "i64[1, 1, 512]" = torch.ops.aten.unsqueeze.default(unsqueeze_7, 1);  unsqueeze_7 = None
        unsqueeze_9: "i64[1, 1, 1, 512]" = torch.ops.aten.unsqueeze.default(unsqueeze_8, 2);  unsqueeze_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:55 in and_mask, code: result = q_idx.new_ones((), dtype=torch.bool)
        new_ones: "b8[]" = torch.ops.aten.new_ones.default(unsqueeze_6, [], dtype = torch.bool, pin_memory = False)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:81 in causal_mask_function, code: return kv_idx <= q_idx
        le: "b8[1, 1, 512, 512]" = torch.ops.aten.le.Tensor(unsqueeze_9, unsqueeze_6)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:57 in and_mask, code: result = result & mask(batch_idx, head_idx, q_idx, kv_idx).to(result.device)
        bitwise_and: "b8[1, 1, 512, 512]" = torch.ops.aten.bitwise_and.Tensor(new_ones, le);  new_ones = le = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:189 in inner_mask, code: return packed_sequence_mask[batch_idx, q_idx] == packed_sequence_mask[batch_idx, kv_idx]
        index: "i64[2, 1, 512, 1]" = torch.ops.aten.index.Tensor(cumsum, [unsqueeze_3, unsqueeze_6]);  unsqueeze_6 = None
        index_1: "i64[2, 1, 1, 512]" = torch.ops.aten.index.Tensor(cumsum, [unsqueeze_3, unsqueeze_9]);  cumsum = unsqueeze_3 = unsqueeze_9 = None
        eq: "b8[2, 1, 512, 512]" = torch.ops.aten.eq.Tensor(index, index_1);  index = index_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:57 in and_mask, code: result = result & mask(batch_idx, head_idx, q_idx, kv_idx).to(result.device)
        bitwise_and_1: "b8[2, 1, 512, 512]" = torch.ops.aten.bitwise_and.Tensor(bitwise_and, eq);  bitwise_and = eq = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:519 in sdpa_mask, code: attention_mask = attention_mask.expand(batch_size, -1, q_length, kv_length)
        expand_1: "b8[2, 1, 512, 512]" = torch.ops.aten.expand.default(bitwise_and_1, [2, -1, 512, 512]);  bitwise_and_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:115 in forward, code: self.inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1).to(dtype=torch.float, device=x.device)
        unsqueeze_10: "f32[1, 32]" = torch.ops.aten.unsqueeze.default(arg2_1, 0);  arg2_1 = None
        unsqueeze_11: "f32[1, 32, 1]" = torch.ops.aten.unsqueeze.default(unsqueeze_10, 2);  unsqueeze_10 = None
        expand_2: "f32[1, 32, 1]" = torch.ops.aten.expand.default(unsqueeze_11, [1, -1, 1]);  unsqueeze_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:117 in forward, code: position_ids_expanded = position_ids[:, None, :].float()
        unsqueeze_12: "i64[1, 1, 512]" = torch.ops.aten.unsqueeze.default(unsqueeze, 1);  unsqueeze = None
        _to_copy: "f32[1, 1, 512]" = torch.ops.aten._to_copy.default(unsqueeze_12, dtype = torch.float32);  unsqueeze_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:122 in forward, code: freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        expand_3: "f32[1, 32, 1]" = torch.ops.aten.expand.default(expand_2, [1, 32, 1]);  expand_2 = None
        view: "f32[1, 32, 1]" = torch.ops.aten.view.default(expand_3, [1, 32, 1]);  expand_3 = None
        expand_4: "f32[1, 1, 512]" = torch.ops.aten.expand.default(_to_copy, [1, 1, 512]);  _to_copy = None
        view_1: "f32[1, 1, 512]" = torch.ops.aten.view.default(expand_4, [1, 1, 512]);  expand_4 = None
        bmm: "f32[1, 32, 512]" = torch.ops.aten.bmm.default(view, view_1);  view = view_1 = None
        view_2: "f32[1, 32, 512]" = torch.ops.aten.view.default(bmm, [1, 32, 512]);  bmm = None
        transpose: "f32[1, 512, 32]" = torch.ops.aten.transpose.int(view_2, 1, 2);  view_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:123 in forward, code: emb = torch.cat((freqs, freqs), dim=-1)
        cat_1: "f32[1, 512, 64]" = torch.ops.aten.cat.default([transpose, transpose], -1);  transpose = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:124 in forward, code: cos = emb.cos() * self.attention_scaling
        cos: "f32[1, 512, 64]" = torch.ops.aten.cos.default(cat_1)
        mul: "f32[1, 512, 64]" = torch.ops.aten.mul.Tensor(cos, 1.0);  cos = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:125 in forward, code: sin = emb.sin() * self.attention_scaling
        sin: "f32[1, 512, 64]" = torch.ops.aten.sin.default(cat_1);  cat_1 = None
        mul_1: "f32[1, 512, 64]" = torch.ops.aten.mul.Tensor(sin, 1.0);  sin = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:65 in forward, code: variance = hidden_states.pow(2).mean(-1, keepdim=True)
        pow_1: "f32[2, 512, 1024]" = torch.ops.aten.pow.Tensor_Scalar(embedding, 2)
        mean: "f32[2, 512, 1]" = torch.ops.aten.mean.dim(pow_1, [-1], True);  pow_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_3: "f32[2, 512, 1]" = torch.ops.aten.add.Tensor(mean, 1e-06);  mean = None
        rsqrt: "f32[2, 512, 1]" = torch.ops.aten.rsqrt.default(add_3);  add_3 = None
        mul_2: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(embedding, rsqrt);  rsqrt = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:67 in forward, code: return self.weight * hidden_states.to(input_dtype)
        mul_3: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(arg3_1, mul_2);  arg3_1 = mul_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:254 in forward, code: query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_1: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg4_1, dtype = torch.bfloat16);  arg4_1 = None
        _to_copy_2: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_3, dtype = torch.bfloat16)
        t: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_1);  _to_copy_1 = None
        view_3: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_2, [1024, 1024]);  _to_copy_2 = None
        mm: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_3, t);  view_3 = t = None
        _unsafe_view: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm, [2, 512, 1024]);  mm = None
        view_4: "bf16[2, 512, 16, 64]" = torch.ops.aten.view.default(_unsafe_view, [2, 512, -1, 64]);  _unsafe_view = None
        transpose_1: "bf16[2, 16, 512, 64]" = torch.ops.aten.transpose.int(view_4, 1, 2);  view_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:255 in forward, code: key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_3: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg5_1, dtype = torch.bfloat16);  arg5_1 = None
        _to_copy_4: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_3, dtype = torch.bfloat16)
        t_1: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_3);  _to_copy_3 = None
        view_5: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_4, [1024, 1024]);  _to_copy_4 = None
        mm_1: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_5, t_1);  view_5 = t_1 = None
        _unsafe_view_1: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_1, [2, 512, 1024]);  mm_1 = None
        view_6: "bf16[2, 512, 16, 64]" = torch.ops.aten.view.default(_unsafe_view_1, [2, 512, -1, 64]);  _unsafe_view_1 = None
        transpose_2: "bf16[2, 16, 512, 64]" = torch.ops.aten.transpose.int(view_6, 1, 2);  view_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:256 in forward, code: value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_5: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg6_1, dtype = torch.bfloat16);  arg6_1 = None
        _to_copy_6: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_3, dtype = torch.bfloat16);  mul_3 = None
        t_2: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_5);  _to_copy_5 = None
        view_7: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_6, [1024, 1024]);  _to_copy_6 = None
        mm_2: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_7, t_2);  view_7 = t_2 = None
        _unsafe_view_2: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_2, [2, 512, 1024]);  mm_2 = None
        view_8: "bf16[2, 512, 16, 64]" = torch.ops.aten.view.default(_unsafe_view_2, [2, 512, -1, 64]);  _unsafe_view_2 = None
        transpose_3: "bf16[2, 16, 512, 64]" = torch.ops.aten.transpose.int(view_8, 1, 2);  view_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:156 in apply_rotary_pos_emb, code: cos = cos.unsqueeze(unsqueeze_dim)
        unsqueeze_13: "f32[1, 1, 512, 64]" = torch.ops.aten.unsqueeze.default(mul, 1)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:157 in apply_rotary_pos_emb, code: sin = sin.unsqueeze(unsqueeze_dim)
        unsqueeze_14: "f32[1, 1, 512, 64]" = torch.ops.aten.unsqueeze.default(mul_1, 1)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:158 in apply_rotary_pos_emb, code: q_embed = (q * cos) + (rotate_half(q) * sin)
        mul_4: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(transpose_1, unsqueeze_13)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:132 in rotate_half, code: x1 = x[..., : x.shape[-1] // 2]
        slice_4: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_1, 3, 0, 32)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:133 in rotate_half, code: x2 = x[..., x.shape[-1] // 2 :]
        slice_5: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_1, 3, 32, 9223372036854775807);  transpose_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:134 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg: "bf16[2, 16, 512, 32]" = torch.ops.aten.neg.default(slice_5);  slice_5 = None
        cat_2: "bf16[2, 16, 512, 64]" = torch.ops.aten.cat.default([neg, slice_4], -1);  neg = slice_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:158 in apply_rotary_pos_emb, code: q_embed = (q * cos) + (rotate_half(q) * sin)
        mul_5: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(cat_2, unsqueeze_14);  cat_2 = None
        add_4: "f32[2, 16, 512, 64]" = torch.ops.aten.add.Tensor(mul_4, mul_5);  mul_4 = mul_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:159 in apply_rotary_pos_emb, code: k_embed = (k * cos) + (rotate_half(k) * sin)
        mul_6: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(transpose_2, unsqueeze_13);  unsqueeze_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:132 in rotate_half, code: x1 = x[..., : x.shape[-1] // 2]
        slice_6: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_2, 3, 0, 32)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:133 in rotate_half, code: x2 = x[..., x.shape[-1] // 2 :]
        slice_7: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_2, 3, 32, 9223372036854775807);  transpose_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:134 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_1: "bf16[2, 16, 512, 32]" = torch.ops.aten.neg.default(slice_7);  slice_7 = None
        cat_3: "bf16[2, 16, 512, 64]" = torch.ops.aten.cat.default([neg_1, slice_6], -1);  neg_1 = slice_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:159 in apply_rotary_pos_emb, code: k_embed = (k * cos) + (rotate_half(k) * sin)
        mul_7: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(cat_3, unsqueeze_14);  cat_3 = unsqueeze_14 = None
        add_5: "f32[2, 16, 512, 64]" = torch.ops.aten.add.Tensor(mul_6, mul_7);  mul_6 = mul_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _to_copy_7: "bf16[2, 16, 512, 64]" = torch.ops.aten._to_copy.default(add_5, dtype = torch.bfloat16);  add_5 = None
        _to_copy_8: "bf16[2, 16, 512, 64]" = torch.ops.aten._to_copy.default(add_4, dtype = torch.bfloat16);  add_4 = None
        scalar_tensor: "bf16[]" = torch.ops.aten.scalar_tensor.default(-65504.0, dtype = torch.bfloat16, device = device(type='cuda', index=0))
        scalar_tensor_1: "bf16[]" = torch.ops.aten.scalar_tensor.default(0.0, dtype = torch.bfloat16, layout = torch.strided, device = device(type='cuda', index=0))
        where: "bf16[2, 1, 512, 512]" = torch.ops.aten.where.self(expand_1, scalar_tensor_1, scalar_tensor);  scalar_tensor_1 = scalar_tensor = None
        _scaled_dot_product_cudnn_attention = torch.ops.aten._scaled_dot_product_cudnn_attention.default(_to_copy_8, _to_copy_7, transpose_3, where, False, scale = 0.125);  _to_copy_8 = _to_copy_7 = transpose_3 = where = None
        getitem: "bf16[2, 16, 512, 64]" = _scaled_dot_product_cudnn_attention[0];  _scaled_dot_product_cudnn_attention = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_4: "bf16[2, 512, 16, 64]" = torch.ops.aten.transpose.int(getitem, 1, 2);  getitem = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:279 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_9: "bf16[2, 512, 1024]" = torch.ops.aten.view.default(transpose_4, [2, 512, -1]);  transpose_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:280 in forward, code: attn_output = self.o_proj(attn_output)
        _to_copy_9: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg7_1, dtype = torch.bfloat16);  arg7_1 = None
        t_3: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_9);  _to_copy_9 = None
        view_10: "bf16[1024, 1024]" = torch.ops.aten.view.default(view_9, [1024, 1024]);  view_9 = None
        mm_3: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_10, t_3);  view_10 = t_3 = None
        _unsafe_view_3: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_3, [2, 512, 1024]);  mm_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:317 in forward, code: hidden_states = residual + hidden_states
        add_6: "f32[2, 512, 1024]" = torch.ops.aten.add.Tensor(embedding, _unsafe_view_3);  embedding = _unsafe_view_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:65 in forward, code: variance = hidden_states.pow(2).mean(-1, keepdim=True)
        pow_2: "f32[2, 512, 1024]" = torch.ops.aten.pow.Tensor_Scalar(add_6, 2)
        mean_1: "f32[2, 512, 1]" = torch.ops.aten.mean.dim(pow_2, [-1], True);  pow_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_7: "f32[2, 512, 1]" = torch.ops.aten.add.Tensor(mean_1, 1e-06);  mean_1 = None
        rsqrt_1: "f32[2, 512, 1]" = torch.ops.aten.rsqrt.default(add_7);  add_7 = None
        mul_8: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(add_6, rsqrt_1);  rsqrt_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:67 in forward, code: return self.weight * hidden_states.to(input_dtype)
        mul_9: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(arg8_1, mul_8);  arg8_1 = mul_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:175 in forward, code: down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        _to_copy_10: "bf16[2816, 1024]" = torch.ops.aten._to_copy.default(arg9_1, dtype = torch.bfloat16);  arg9_1 = None
        _to_copy_11: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_9, dtype = torch.bfloat16)
        t_4: "bf16[1024, 2816]" = torch.ops.aten.t.default(_to_copy_10);  _to_copy_10 = None
        view_11: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_11, [1024, 1024]);  _to_copy_11 = None
        mm_4: "bf16[1024, 2816]" = torch.ops.aten.mm.default(view_11, t_4);  view_11 = t_4 = None
        _unsafe_view_4: "bf16[2, 512, 2816]" = torch.ops.aten._unsafe_view.default(mm_4, [2, 512, 2816]);  mm_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/activations.py:103 in forward, code: return nn.functional.silu(input)
        silu: "bf16[2, 512, 2816]" = torch.ops.aten.silu.default(_unsafe_view_4);  _unsafe_view_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:175 in forward, code: down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        _to_copy_12: "bf16[2816, 1024]" = torch.ops.aten._to_copy.default(arg10_1, dtype = torch.bfloat16);  arg10_1 = None
        _to_copy_13: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_9, dtype = torch.bfloat16);  mul_9 = None
        t_5: "bf16[1024, 2816]" = torch.ops.aten.t.default(_to_copy_12);  _to_copy_12 = None
        view_12: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_13, [1024, 1024]);  _to_copy_13 = None
        mm_5: "bf16[1024, 2816]" = torch.ops.aten.mm.default(view_12, t_5);  view_12 = t_5 = None
        _unsafe_view_5: "bf16[2, 512, 2816]" = torch.ops.aten._unsafe_view.default(mm_5, [2, 512, 2816]);  mm_5 = None
        mul_10: "bf16[2, 512, 2816]" = torch.ops.aten.mul.Tensor(silu, _unsafe_view_5);  silu = _unsafe_view_5 = None
        _to_copy_14: "bf16[1024, 2816]" = torch.ops.aten._to_copy.default(arg11_1, dtype = torch.bfloat16);  arg11_1 = None
        t_6: "bf16[2816, 1024]" = torch.ops.aten.t.default(_to_copy_14);  _to_copy_14 = None
        view_13: "bf16[1024, 2816]" = torch.ops.aten.view.default(mul_10, [1024, 2816]);  mul_10 = None
        mm_6: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_13, t_6);  view_13 = t_6 = None
        _unsafe_view_6: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_6, [2, 512, 1024]);  mm_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:323 in forward, code: hidden_states = residual + hidden_states
        add_8: "f32[2, 512, 1024]" = torch.ops.aten.add.Tensor(add_6, _unsafe_view_6);  add_6 = _unsafe_view_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:65 in forward, code: variance = hidden_states.pow(2).mean(-1, keepdim=True)
        pow_3: "f32[2, 512, 1024]" = torch.ops.aten.pow.Tensor_Scalar(add_8, 2)
        mean_2: "f32[2, 512, 1]" = torch.ops.aten.mean.dim(pow_3, [-1], True);  pow_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_9: "f32[2, 512, 1]" = torch.ops.aten.add.Tensor(mean_2, 1e-06);  mean_2 = None
        rsqrt_2: "f32[2, 512, 1]" = torch.ops.aten.rsqrt.default(add_9);  add_9 = None
        mul_11: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(add_8, rsqrt_2);  rsqrt_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:67 in forward, code: return self.weight * hidden_states.to(input_dtype)
        mul_12: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(arg12_1, mul_11);  arg12_1 = mul_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:254 in forward, code: query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_15: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg13_1, dtype = torch.bfloat16);  arg13_1 = None
        _to_copy_16: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_12, dtype = torch.bfloat16)
        t_7: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_15);  _to_copy_15 = None
        view_14: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_16, [1024, 1024]);  _to_copy_16 = None
        mm_7: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_14, t_7);  view_14 = t_7 = None
        _unsafe_view_7: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_7, [2, 512, 1024]);  mm_7 = None
        view_15: "bf16[2, 512, 16, 64]" = torch.ops.aten.view.default(_unsafe_view_7, [2, 512, -1, 64]);  _unsafe_view_7 = None
        transpose_5: "bf16[2, 16, 512, 64]" = torch.ops.aten.transpose.int(view_15, 1, 2);  view_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:255 in forward, code: key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_17: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg14_1, dtype = torch.bfloat16);  arg14_1 = None
        _to_copy_18: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_12, dtype = torch.bfloat16)
        t_8: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_17);  _to_copy_17 = None
        view_16: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_18, [1024, 1024]);  _to_copy_18 = None
        mm_8: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_16, t_8);  view_16 = t_8 = None
        _unsafe_view_8: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_8, [2, 512, 1024]);  mm_8 = None
        view_17: "bf16[2, 512, 16, 64]" = torch.ops.aten.view.default(_unsafe_view_8, [2, 512, -1, 64]);  _unsafe_view_8 = None
        transpose_6: "bf16[2, 16, 512, 64]" = torch.ops.aten.transpose.int(view_17, 1, 2);  view_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:256 in forward, code: value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_19: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg15_1, dtype = torch.bfloat16);  arg15_1 = None
        _to_copy_20: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_12, dtype = torch.bfloat16);  mul_12 = None
        t_9: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_19);  _to_copy_19 = None
        view_18: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_20, [1024, 1024]);  _to_copy_20 = None
        mm_9: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_18, t_9);  view_18 = t_9 = None
        _unsafe_view_9: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_9, [2, 512, 1024]);  mm_9 = None
        view_19: "bf16[2, 512, 16, 64]" = torch.ops.aten.view.default(_unsafe_view_9, [2, 512, -1, 64]);  _unsafe_view_9 = None
        transpose_7: "bf16[2, 16, 512, 64]" = torch.ops.aten.transpose.int(view_19, 1, 2);  view_19 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:156 in apply_rotary_pos_emb, code: cos = cos.unsqueeze(unsqueeze_dim)
        unsqueeze_15: "f32[1, 1, 512, 64]" = torch.ops.aten.unsqueeze.default(mul, 1)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:157 in apply_rotary_pos_emb, code: sin = sin.unsqueeze(unsqueeze_dim)
        unsqueeze_16: "f32[1, 1, 512, 64]" = torch.ops.aten.unsqueeze.default(mul_1, 1)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:158 in apply_rotary_pos_emb, code: q_embed = (q * cos) + (rotate_half(q) * sin)
        mul_13: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(transpose_5, unsqueeze_15)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:132 in rotate_half, code: x1 = x[..., : x.shape[-1] // 2]
        slice_8: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_5, 3, 0, 32)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:133 in rotate_half, code: x2 = x[..., x.shape[-1] // 2 :]
        slice_9: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_5, 3, 32, 9223372036854775807);  transpose_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:134 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_2: "bf16[2, 16, 512, 32]" = torch.ops.aten.neg.default(slice_9);  slice_9 = None
        cat_4: "bf16[2, 16, 512, 64]" = torch.ops.aten.cat.default([neg_2, slice_8], -1);  neg_2 = slice_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:158 in apply_rotary_pos_emb, code: q_embed = (q * cos) + (rotate_half(q) * sin)
        mul_14: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(cat_4, unsqueeze_16);  cat_4 = None
        add_10: "f32[2, 16, 512, 64]" = torch.ops.aten.add.Tensor(mul_13, mul_14);  mul_13 = mul_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:159 in apply_rotary_pos_emb, code: k_embed = (k * cos) + (rotate_half(k) * sin)
        mul_15: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(transpose_6, unsqueeze_15);  unsqueeze_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:132 in rotate_half, code: x1 = x[..., : x.shape[-1] // 2]
        slice_10: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_6, 3, 0, 32)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:133 in rotate_half, code: x2 = x[..., x.shape[-1] // 2 :]
        slice_11: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_6, 3, 32, 9223372036854775807);  transpose_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:134 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_3: "bf16[2, 16, 512, 32]" = torch.ops.aten.neg.default(slice_11);  slice_11 = None
        cat_5: "bf16[2, 16, 512, 64]" = torch.ops.aten.cat.default([neg_3, slice_10], -1);  neg_3 = slice_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:159 in apply_rotary_pos_emb, code: k_embed = (k * cos) + (rotate_half(k) * sin)
        mul_16: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(cat_5, unsqueeze_16);  cat_5 = unsqueeze_16 = None
        add_11: "f32[2, 16, 512, 64]" = torch.ops.aten.add.Tensor(mul_15, mul_16);  mul_15 = mul_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _to_copy_21: "bf16[2, 16, 512, 64]" = torch.ops.aten._to_copy.default(add_11, dtype = torch.bfloat16);  add_11 = None
        _to_copy_22: "bf16[2, 16, 512, 64]" = torch.ops.aten._to_copy.default(add_10, dtype = torch.bfloat16);  add_10 = None
        scalar_tensor_2: "bf16[]" = torch.ops.aten.scalar_tensor.default(-65504.0, dtype = torch.bfloat16, device = device(type='cuda', index=0))
        scalar_tensor_3: "bf16[]" = torch.ops.aten.scalar_tensor.default(0.0, dtype = torch.bfloat16, layout = torch.strided, device = device(type='cuda', index=0))
        where_1: "bf16[2, 1, 512, 512]" = torch.ops.aten.where.self(expand_1, scalar_tensor_3, scalar_tensor_2);  scalar_tensor_3 = scalar_tensor_2 = None
        _scaled_dot_product_cudnn_attention_1 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(_to_copy_22, _to_copy_21, transpose_7, where_1, False, scale = 0.125);  _to_copy_22 = _to_copy_21 = transpose_7 = where_1 = None
        getitem_9: "bf16[2, 16, 512, 64]" = _scaled_dot_product_cudnn_attention_1[0];  _scaled_dot_product_cudnn_attention_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_8: "bf16[2, 512, 16, 64]" = torch.ops.aten.transpose.int(getitem_9, 1, 2);  getitem_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:279 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_20: "bf16[2, 512, 1024]" = torch.ops.aten.view.default(transpose_8, [2, 512, -1]);  transpose_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:280 in forward, code: attn_output = self.o_proj(attn_output)
        _to_copy_23: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg16_1, dtype = torch.bfloat16);  arg16_1 = None
        t_10: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_23);  _to_copy_23 = None
        view_21: "bf16[1024, 1024]" = torch.ops.aten.view.default(view_20, [1024, 1024]);  view_20 = None
        mm_10: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_21, t_10);  view_21 = t_10 = None
        _unsafe_view_10: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_10, [2, 512, 1024]);  mm_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:317 in forward, code: hidden_states = residual + hidden_states
        add_12: "f32[2, 512, 1024]" = torch.ops.aten.add.Tensor(add_8, _unsafe_view_10);  add_8 = _unsafe_view_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:65 in forward, code: variance = hidden_states.pow(2).mean(-1, keepdim=True)
        pow_4: "f32[2, 512, 1024]" = torch.ops.aten.pow.Tensor_Scalar(add_12, 2)
        mean_3: "f32[2, 512, 1]" = torch.ops.aten.mean.dim(pow_4, [-1], True);  pow_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_13: "f32[2, 512, 1]" = torch.ops.aten.add.Tensor(mean_3, 1e-06);  mean_3 = None
        rsqrt_3: "f32[2, 512, 1]" = torch.ops.aten.rsqrt.default(add_13);  add_13 = None
        mul_17: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(add_12, rsqrt_3);  rsqrt_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:67 in forward, code: return self.weight * hidden_states.to(input_dtype)
        mul_18: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(arg17_1, mul_17);  arg17_1 = mul_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:175 in forward, code: down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        _to_copy_24: "bf16[2816, 1024]" = torch.ops.aten._to_copy.default(arg18_1, dtype = torch.bfloat16);  arg18_1 = None
        _to_copy_25: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_18, dtype = torch.bfloat16)
        t_11: "bf16[1024, 2816]" = torch.ops.aten.t.default(_to_copy_24);  _to_copy_24 = None
        view_22: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_25, [1024, 1024]);  _to_copy_25 = None
        mm_11: "bf16[1024, 2816]" = torch.ops.aten.mm.default(view_22, t_11);  view_22 = t_11 = None
        _unsafe_view_11: "bf16[2, 512, 2816]" = torch.ops.aten._unsafe_view.default(mm_11, [2, 512, 2816]);  mm_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/activations.py:103 in forward, code: return nn.functional.silu(input)
        silu_1: "bf16[2, 512, 2816]" = torch.ops.aten.silu.default(_unsafe_view_11);  _unsafe_view_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:175 in forward, code: down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        _to_copy_26: "bf16[2816, 1024]" = torch.ops.aten._to_copy.default(arg19_1, dtype = torch.bfloat16);  arg19_1 = None
        _to_copy_27: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_18, dtype = torch.bfloat16);  mul_18 = None
        t_12: "bf16[1024, 2816]" = torch.ops.aten.t.default(_to_copy_26);  _to_copy_26 = None
        view_23: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_27, [1024, 1024]);  _to_copy_27 = None
        mm_12: "bf16[1024, 2816]" = torch.ops.aten.mm.default(view_23, t_12);  view_23 = t_12 = None
        _unsafe_view_12: "bf16[2, 512, 2816]" = torch.ops.aten._unsafe_view.default(mm_12, [2, 512, 2816]);  mm_12 = None
        mul_19: "bf16[2, 512, 2816]" = torch.ops.aten.mul.Tensor(silu_1, _unsafe_view_12);  silu_1 = _unsafe_view_12 = None
        _to_copy_28: "bf16[1024, 2816]" = torch.ops.aten._to_copy.default(arg20_1, dtype = torch.bfloat16);  arg20_1 = None
        t_13: "bf16[2816, 1024]" = torch.ops.aten.t.default(_to_copy_28);  _to_copy_28 = None
        view_24: "bf16[1024, 2816]" = torch.ops.aten.view.default(mul_19, [1024, 2816]);  mul_19 = None
        mm_13: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_24, t_13);  view_24 = t_13 = None
        _unsafe_view_13: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_13, [2, 512, 1024]);  mm_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:323 in forward, code: hidden_states = residual + hidden_states
        add_14: "f32[2, 512, 1024]" = torch.ops.aten.add.Tensor(add_12, _unsafe_view_13);  add_12 = _unsafe_view_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:65 in forward, code: variance = hidden_states.pow(2).mean(-1, keepdim=True)
        pow_5: "f32[2, 512, 1024]" = torch.ops.aten.pow.Tensor_Scalar(add_14, 2)
        mean_4: "f32[2, 512, 1]" = torch.ops.aten.mean.dim(pow_5, [-1], True);  pow_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_15: "f32[2, 512, 1]" = torch.ops.aten.add.Tensor(mean_4, 1e-06);  mean_4 = None
        rsqrt_4: "f32[2, 512, 1]" = torch.ops.aten.rsqrt.default(add_15);  add_15 = None
        mul_20: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(add_14, rsqrt_4);  rsqrt_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:67 in forward, code: return self.weight * hidden_states.to(input_dtype)
        mul_21: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(arg21_1, mul_20);  arg21_1 = mul_20 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:254 in forward, code: query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_29: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg22_1, dtype = torch.bfloat16);  arg22_1 = None
        _to_copy_30: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_21, dtype = torch.bfloat16)
        t_14: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_29);  _to_copy_29 = None
        view_25: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_30, [1024, 1024]);  _to_copy_30 = None
        mm_14: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_25, t_14);  view_25 = t_14 = None
        _unsafe_view_14: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_14, [2, 512, 1024]);  mm_14 = None
        view_26: "bf16[2, 512, 16, 64]" = torch.ops.aten.view.default(_unsafe_view_14, [2, 512, -1, 64]);  _unsafe_view_14 = None
        transpose_9: "bf16[2, 16, 512, 64]" = torch.ops.aten.transpose.int(view_26, 1, 2);  view_26 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:255 in forward, code: key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_31: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg23_1, dtype = torch.bfloat16);  arg23_1 = None
        _to_copy_32: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_21, dtype = torch.bfloat16)
        t_15: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_31);  _to_copy_31 = None
        view_27: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_32, [1024, 1024]);  _to_copy_32 = None
        mm_15: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_27, t_15);  view_27 = t_15 = None
        _unsafe_view_15: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_15, [2, 512, 1024]);  mm_15 = None
        view_28: "bf16[2, 512, 16, 64]" = torch.ops.aten.view.default(_unsafe_view_15, [2, 512, -1, 64]);  _unsafe_view_15 = None
        transpose_10: "bf16[2, 16, 512, 64]" = torch.ops.aten.transpose.int(view_28, 1, 2);  view_28 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:256 in forward, code: value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_33: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg24_1, dtype = torch.bfloat16);  arg24_1 = None
        _to_copy_34: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_21, dtype = torch.bfloat16);  mul_21 = None
        t_16: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_33);  _to_copy_33 = None
        view_29: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_34, [1024, 1024]);  _to_copy_34 = None
        mm_16: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_29, t_16);  view_29 = t_16 = None
        _unsafe_view_16: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_16, [2, 512, 1024]);  mm_16 = None
        view_30: "bf16[2, 512, 16, 64]" = torch.ops.aten.view.default(_unsafe_view_16, [2, 512, -1, 64]);  _unsafe_view_16 = None
        transpose_11: "bf16[2, 16, 512, 64]" = torch.ops.aten.transpose.int(view_30, 1, 2);  view_30 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:156 in apply_rotary_pos_emb, code: cos = cos.unsqueeze(unsqueeze_dim)
        unsqueeze_17: "f32[1, 1, 512, 64]" = torch.ops.aten.unsqueeze.default(mul, 1)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:157 in apply_rotary_pos_emb, code: sin = sin.unsqueeze(unsqueeze_dim)
        unsqueeze_18: "f32[1, 1, 512, 64]" = torch.ops.aten.unsqueeze.default(mul_1, 1)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:158 in apply_rotary_pos_emb, code: q_embed = (q * cos) + (rotate_half(q) * sin)
        mul_22: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(transpose_9, unsqueeze_17)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:132 in rotate_half, code: x1 = x[..., : x.shape[-1] // 2]
        slice_12: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_9, 3, 0, 32)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:133 in rotate_half, code: x2 = x[..., x.shape[-1] // 2 :]
        slice_13: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_9, 3, 32, 9223372036854775807);  transpose_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:134 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_4: "bf16[2, 16, 512, 32]" = torch.ops.aten.neg.default(slice_13);  slice_13 = None
        cat_6: "bf16[2, 16, 512, 64]" = torch.ops.aten.cat.default([neg_4, slice_12], -1);  neg_4 = slice_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:158 in apply_rotary_pos_emb, code: q_embed = (q * cos) + (rotate_half(q) * sin)
        mul_23: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(cat_6, unsqueeze_18);  cat_6 = None
        add_16: "f32[2, 16, 512, 64]" = torch.ops.aten.add.Tensor(mul_22, mul_23);  mul_22 = mul_23 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:159 in apply_rotary_pos_emb, code: k_embed = (k * cos) + (rotate_half(k) * sin)
        mul_24: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(transpose_10, unsqueeze_17);  unsqueeze_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:132 in rotate_half, code: x1 = x[..., : x.shape[-1] // 2]
        slice_14: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_10, 3, 0, 32)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:133 in rotate_half, code: x2 = x[..., x.shape[-1] // 2 :]
        slice_15: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_10, 3, 32, 9223372036854775807);  transpose_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:134 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_5: "bf16[2, 16, 512, 32]" = torch.ops.aten.neg.default(slice_15);  slice_15 = None
        cat_7: "bf16[2, 16, 512, 64]" = torch.ops.aten.cat.default([neg_5, slice_14], -1);  neg_5 = slice_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:159 in apply_rotary_pos_emb, code: k_embed = (k * cos) + (rotate_half(k) * sin)
        mul_25: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(cat_7, unsqueeze_18);  cat_7 = unsqueeze_18 = None
        add_17: "f32[2, 16, 512, 64]" = torch.ops.aten.add.Tensor(mul_24, mul_25);  mul_24 = mul_25 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _to_copy_35: "bf16[2, 16, 512, 64]" = torch.ops.aten._to_copy.default(add_17, dtype = torch.bfloat16);  add_17 = None
        _to_copy_36: "bf16[2, 16, 512, 64]" = torch.ops.aten._to_copy.default(add_16, dtype = torch.bfloat16);  add_16 = None
        scalar_tensor_4: "bf16[]" = torch.ops.aten.scalar_tensor.default(-65504.0, dtype = torch.bfloat16, device = device(type='cuda', index=0))
        scalar_tensor_5: "bf16[]" = torch.ops.aten.scalar_tensor.default(0.0, dtype = torch.bfloat16, layout = torch.strided, device = device(type='cuda', index=0))
        where_2: "bf16[2, 1, 512, 512]" = torch.ops.aten.where.self(expand_1, scalar_tensor_5, scalar_tensor_4);  scalar_tensor_5 = scalar_tensor_4 = None
        _scaled_dot_product_cudnn_attention_2 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(_to_copy_36, _to_copy_35, transpose_11, where_2, False, scale = 0.125);  _to_copy_36 = _to_copy_35 = transpose_11 = where_2 = None
        getitem_18: "bf16[2, 16, 512, 64]" = _scaled_dot_product_cudnn_attention_2[0];  _scaled_dot_product_cudnn_attention_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_12: "bf16[2, 512, 16, 64]" = torch.ops.aten.transpose.int(getitem_18, 1, 2);  getitem_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:279 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_31: "bf16[2, 512, 1024]" = torch.ops.aten.view.default(transpose_12, [2, 512, -1]);  transpose_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:280 in forward, code: attn_output = self.o_proj(attn_output)
        _to_copy_37: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg25_1, dtype = torch.bfloat16);  arg25_1 = None
        t_17: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_37);  _to_copy_37 = None
        view_32: "bf16[1024, 1024]" = torch.ops.aten.view.default(view_31, [1024, 1024]);  view_31 = None
        mm_17: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_32, t_17);  view_32 = t_17 = None
        _unsafe_view_17: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_17, [2, 512, 1024]);  mm_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:317 in forward, code: hidden_states = residual + hidden_states
        add_18: "f32[2, 512, 1024]" = torch.ops.aten.add.Tensor(add_14, _unsafe_view_17);  add_14 = _unsafe_view_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:65 in forward, code: variance = hidden_states.pow(2).mean(-1, keepdim=True)
        pow_6: "f32[2, 512, 1024]" = torch.ops.aten.pow.Tensor_Scalar(add_18, 2)
        mean_5: "f32[2, 512, 1]" = torch.ops.aten.mean.dim(pow_6, [-1], True);  pow_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_19: "f32[2, 512, 1]" = torch.ops.aten.add.Tensor(mean_5, 1e-06);  mean_5 = None
        rsqrt_5: "f32[2, 512, 1]" = torch.ops.aten.rsqrt.default(add_19);  add_19 = None
        mul_26: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(add_18, rsqrt_5);  rsqrt_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:67 in forward, code: return self.weight * hidden_states.to(input_dtype)
        mul_27: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(arg26_1, mul_26);  arg26_1 = mul_26 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:175 in forward, code: down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        _to_copy_38: "bf16[2816, 1024]" = torch.ops.aten._to_copy.default(arg27_1, dtype = torch.bfloat16);  arg27_1 = None
        _to_copy_39: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_27, dtype = torch.bfloat16)
        t_18: "bf16[1024, 2816]" = torch.ops.aten.t.default(_to_copy_38);  _to_copy_38 = None
        view_33: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_39, [1024, 1024]);  _to_copy_39 = None
        mm_18: "bf16[1024, 2816]" = torch.ops.aten.mm.default(view_33, t_18);  view_33 = t_18 = None
        _unsafe_view_18: "bf16[2, 512, 2816]" = torch.ops.aten._unsafe_view.default(mm_18, [2, 512, 2816]);  mm_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/activations.py:103 in forward, code: return nn.functional.silu(input)
        silu_2: "bf16[2, 512, 2816]" = torch.ops.aten.silu.default(_unsafe_view_18);  _unsafe_view_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:175 in forward, code: down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        _to_copy_40: "bf16[2816, 1024]" = torch.ops.aten._to_copy.default(arg28_1, dtype = torch.bfloat16);  arg28_1 = None
        _to_copy_41: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_27, dtype = torch.bfloat16);  mul_27 = None
        t_19: "bf16[1024, 2816]" = torch.ops.aten.t.default(_to_copy_40);  _to_copy_40 = None
        view_34: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_41, [1024, 1024]);  _to_copy_41 = None
        mm_19: "bf16[1024, 2816]" = torch.ops.aten.mm.default(view_34, t_19);  view_34 = t_19 = None
        _unsafe_view_19: "bf16[2, 512, 2816]" = torch.ops.aten._unsafe_view.default(mm_19, [2, 512, 2816]);  mm_19 = None
        mul_28: "bf16[2, 512, 2816]" = torch.ops.aten.mul.Tensor(silu_2, _unsafe_view_19);  silu_2 = _unsafe_view_19 = None
        _to_copy_42: "bf16[1024, 2816]" = torch.ops.aten._to_copy.default(arg29_1, dtype = torch.bfloat16);  arg29_1 = None
        t_20: "bf16[2816, 1024]" = torch.ops.aten.t.default(_to_copy_42);  _to_copy_42 = None
        view_35: "bf16[1024, 2816]" = torch.ops.aten.view.default(mul_28, [1024, 2816]);  mul_28 = None
        mm_20: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_35, t_20);  view_35 = t_20 = None
        _unsafe_view_20: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_20, [2, 512, 1024]);  mm_20 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:323 in forward, code: hidden_states = residual + hidden_states
        add_20: "f32[2, 512, 1024]" = torch.ops.aten.add.Tensor(add_18, _unsafe_view_20);  add_18 = _unsafe_view_20 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:65 in forward, code: variance = hidden_states.pow(2).mean(-1, keepdim=True)
        pow_7: "f32[2, 512, 1024]" = torch.ops.aten.pow.Tensor_Scalar(add_20, 2)
        mean_6: "f32[2, 512, 1]" = torch.ops.aten.mean.dim(pow_7, [-1], True);  pow_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_21: "f32[2, 512, 1]" = torch.ops.aten.add.Tensor(mean_6, 1e-06);  mean_6 = None
        rsqrt_6: "f32[2, 512, 1]" = torch.ops.aten.rsqrt.default(add_21);  add_21 = None
        mul_29: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(add_20, rsqrt_6);  rsqrt_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:67 in forward, code: return self.weight * hidden_states.to(input_dtype)
        mul_30: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(arg30_1, mul_29);  arg30_1 = mul_29 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:254 in forward, code: query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_43: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg31_1, dtype = torch.bfloat16);  arg31_1 = None
        _to_copy_44: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_30, dtype = torch.bfloat16)
        t_21: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_43);  _to_copy_43 = None
        view_36: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_44, [1024, 1024]);  _to_copy_44 = None
        mm_21: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_36, t_21);  view_36 = t_21 = None
        _unsafe_view_21: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_21, [2, 512, 1024]);  mm_21 = None
        view_37: "bf16[2, 512, 16, 64]" = torch.ops.aten.view.default(_unsafe_view_21, [2, 512, -1, 64]);  _unsafe_view_21 = None
        transpose_13: "bf16[2, 16, 512, 64]" = torch.ops.aten.transpose.int(view_37, 1, 2);  view_37 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:255 in forward, code: key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_45: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg32_1, dtype = torch.bfloat16);  arg32_1 = None
        _to_copy_46: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_30, dtype = torch.bfloat16)
        t_22: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_45);  _to_copy_45 = None
        view_38: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_46, [1024, 1024]);  _to_copy_46 = None
        mm_22: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_38, t_22);  view_38 = t_22 = None
        _unsafe_view_22: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_22, [2, 512, 1024]);  mm_22 = None
        view_39: "bf16[2, 512, 16, 64]" = torch.ops.aten.view.default(_unsafe_view_22, [2, 512, -1, 64]);  _unsafe_view_22 = None
        transpose_14: "bf16[2, 16, 512, 64]" = torch.ops.aten.transpose.int(view_39, 1, 2);  view_39 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:256 in forward, code: value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        _to_copy_47: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg33_1, dtype = torch.bfloat16);  arg33_1 = None
        _to_copy_48: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_30, dtype = torch.bfloat16);  mul_30 = None
        t_23: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_47);  _to_copy_47 = None
        view_40: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_48, [1024, 1024]);  _to_copy_48 = None
        mm_23: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_40, t_23);  view_40 = t_23 = None
        _unsafe_view_23: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_23, [2, 512, 1024]);  mm_23 = None
        view_41: "bf16[2, 512, 16, 64]" = torch.ops.aten.view.default(_unsafe_view_23, [2, 512, -1, 64]);  _unsafe_view_23 = None
        transpose_15: "bf16[2, 16, 512, 64]" = torch.ops.aten.transpose.int(view_41, 1, 2);  view_41 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:156 in apply_rotary_pos_emb, code: cos = cos.unsqueeze(unsqueeze_dim)
        unsqueeze_19: "f32[1, 1, 512, 64]" = torch.ops.aten.unsqueeze.default(mul, 1);  mul = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:157 in apply_rotary_pos_emb, code: sin = sin.unsqueeze(unsqueeze_dim)
        unsqueeze_20: "f32[1, 1, 512, 64]" = torch.ops.aten.unsqueeze.default(mul_1, 1);  mul_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:158 in apply_rotary_pos_emb, code: q_embed = (q * cos) + (rotate_half(q) * sin)
        mul_31: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(transpose_13, unsqueeze_19)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:132 in rotate_half, code: x1 = x[..., : x.shape[-1] // 2]
        slice_16: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_13, 3, 0, 32)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:133 in rotate_half, code: x2 = x[..., x.shape[-1] // 2 :]
        slice_17: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_13, 3, 32, 9223372036854775807);  transpose_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:134 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_6: "bf16[2, 16, 512, 32]" = torch.ops.aten.neg.default(slice_17);  slice_17 = None
        cat_8: "bf16[2, 16, 512, 64]" = torch.ops.aten.cat.default([neg_6, slice_16], -1);  neg_6 = slice_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:158 in apply_rotary_pos_emb, code: q_embed = (q * cos) + (rotate_half(q) * sin)
        mul_32: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(cat_8, unsqueeze_20);  cat_8 = None
        add_22: "f32[2, 16, 512, 64]" = torch.ops.aten.add.Tensor(mul_31, mul_32);  mul_31 = mul_32 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:159 in apply_rotary_pos_emb, code: k_embed = (k * cos) + (rotate_half(k) * sin)
        mul_33: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(transpose_14, unsqueeze_19);  unsqueeze_19 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:132 in rotate_half, code: x1 = x[..., : x.shape[-1] // 2]
        slice_18: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_14, 3, 0, 32)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:133 in rotate_half, code: x2 = x[..., x.shape[-1] // 2 :]
        slice_19: "bf16[2, 16, 512, 32]" = torch.ops.aten.slice.Tensor(transpose_14, 3, 32, 9223372036854775807);  transpose_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:134 in rotate_half, code: return torch.cat((-x2, x1), dim=-1)
        neg_7: "bf16[2, 16, 512, 32]" = torch.ops.aten.neg.default(slice_19);  slice_19 = None
        cat_9: "bf16[2, 16, 512, 64]" = torch.ops.aten.cat.default([neg_7, slice_18], -1);  neg_7 = slice_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:159 in apply_rotary_pos_emb, code: k_embed = (k * cos) + (rotate_half(k) * sin)
        mul_34: "f32[2, 16, 512, 64]" = torch.ops.aten.mul.Tensor(cat_9, unsqueeze_20);  cat_9 = unsqueeze_20 = None
        add_23: "f32[2, 16, 512, 64]" = torch.ops.aten.add.Tensor(mul_33, mul_34);  mul_33 = mul_34 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        _to_copy_49: "bf16[2, 16, 512, 64]" = torch.ops.aten._to_copy.default(add_23, dtype = torch.bfloat16);  add_23 = None
        _to_copy_50: "bf16[2, 16, 512, 64]" = torch.ops.aten._to_copy.default(add_22, dtype = torch.bfloat16);  add_22 = None
        scalar_tensor_6: "bf16[]" = torch.ops.aten.scalar_tensor.default(-65504.0, dtype = torch.bfloat16, device = device(type='cuda', index=0))
        scalar_tensor_7: "bf16[]" = torch.ops.aten.scalar_tensor.default(0.0, dtype = torch.bfloat16, layout = torch.strided, device = device(type='cuda', index=0))
        where_3: "bf16[2, 1, 512, 512]" = torch.ops.aten.where.self(expand_1, scalar_tensor_7, scalar_tensor_6);  expand_1 = scalar_tensor_7 = scalar_tensor_6 = None
        _scaled_dot_product_cudnn_attention_3 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(_to_copy_50, _to_copy_49, transpose_15, where_3, False, scale = 0.125);  _to_copy_50 = _to_copy_49 = transpose_15 = where_3 = None
        getitem_27: "bf16[2, 16, 512, 64]" = _scaled_dot_product_cudnn_attention_3[0];  _scaled_dot_product_cudnn_attention_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_16: "bf16[2, 512, 16, 64]" = torch.ops.aten.transpose.int(getitem_27, 1, 2);  getitem_27 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:279 in forward, code: attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        view_42: "bf16[2, 512, 1024]" = torch.ops.aten.view.default(transpose_16, [2, 512, -1]);  transpose_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:280 in forward, code: attn_output = self.o_proj(attn_output)
        _to_copy_51: "bf16[1024, 1024]" = torch.ops.aten._to_copy.default(arg34_1, dtype = torch.bfloat16);  arg34_1 = None
        t_24: "bf16[1024, 1024]" = torch.ops.aten.t.default(_to_copy_51);  _to_copy_51 = None
        view_43: "bf16[1024, 1024]" = torch.ops.aten.view.default(view_42, [1024, 1024]);  view_42 = None
        mm_24: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_43, t_24);  view_43 = t_24 = None
        _unsafe_view_24: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_24, [2, 512, 1024]);  mm_24 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:317 in forward, code: hidden_states = residual + hidden_states
        add_24: "f32[2, 512, 1024]" = torch.ops.aten.add.Tensor(add_20, _unsafe_view_24);  add_20 = _unsafe_view_24 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:65 in forward, code: variance = hidden_states.pow(2).mean(-1, keepdim=True)
        pow_8: "f32[2, 512, 1024]" = torch.ops.aten.pow.Tensor_Scalar(add_24, 2)
        mean_7: "f32[2, 512, 1]" = torch.ops.aten.mean.dim(pow_8, [-1], True);  pow_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_25: "f32[2, 512, 1]" = torch.ops.aten.add.Tensor(mean_7, 1e-06);  mean_7 = None
        rsqrt_7: "f32[2, 512, 1]" = torch.ops.aten.rsqrt.default(add_25);  add_25 = None
        mul_35: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(add_24, rsqrt_7);  rsqrt_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:67 in forward, code: return self.weight * hidden_states.to(input_dtype)
        mul_36: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(arg35_1, mul_35);  arg35_1 = mul_35 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:175 in forward, code: down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        _to_copy_52: "bf16[2816, 1024]" = torch.ops.aten._to_copy.default(arg36_1, dtype = torch.bfloat16);  arg36_1 = None
        _to_copy_53: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_36, dtype = torch.bfloat16)
        t_25: "bf16[1024, 2816]" = torch.ops.aten.t.default(_to_copy_52);  _to_copy_52 = None
        view_44: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_53, [1024, 1024]);  _to_copy_53 = None
        mm_25: "bf16[1024, 2816]" = torch.ops.aten.mm.default(view_44, t_25);  view_44 = t_25 = None
        _unsafe_view_25: "bf16[2, 512, 2816]" = torch.ops.aten._unsafe_view.default(mm_25, [2, 512, 2816]);  mm_25 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/activations.py:103 in forward, code: return nn.functional.silu(input)
        silu_3: "bf16[2, 512, 2816]" = torch.ops.aten.silu.default(_unsafe_view_25);  _unsafe_view_25 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:175 in forward, code: down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        _to_copy_54: "bf16[2816, 1024]" = torch.ops.aten._to_copy.default(arg37_1, dtype = torch.bfloat16);  arg37_1 = None
        _to_copy_55: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(mul_36, dtype = torch.bfloat16);  mul_36 = None
        t_26: "bf16[1024, 2816]" = torch.ops.aten.t.default(_to_copy_54);  _to_copy_54 = None
        view_45: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_55, [1024, 1024]);  _to_copy_55 = None
        mm_26: "bf16[1024, 2816]" = torch.ops.aten.mm.default(view_45, t_26);  view_45 = t_26 = None
        _unsafe_view_26: "bf16[2, 512, 2816]" = torch.ops.aten._unsafe_view.default(mm_26, [2, 512, 2816]);  mm_26 = None
        mul_37: "bf16[2, 512, 2816]" = torch.ops.aten.mul.Tensor(silu_3, _unsafe_view_26);  silu_3 = _unsafe_view_26 = None
        _to_copy_56: "bf16[1024, 2816]" = torch.ops.aten._to_copy.default(arg38_1, dtype = torch.bfloat16);  arg38_1 = None
        t_27: "bf16[2816, 1024]" = torch.ops.aten.t.default(_to_copy_56);  _to_copy_56 = None
        view_46: "bf16[1024, 2816]" = torch.ops.aten.view.default(mul_37, [1024, 2816]);  mul_37 = None
        mm_27: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_46, t_27);  view_46 = t_27 = None
        _unsafe_view_27: "bf16[2, 512, 1024]" = torch.ops.aten._unsafe_view.default(mm_27, [2, 512, 1024]);  mm_27 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:323 in forward, code: hidden_states = residual + hidden_states
        add_26: "f32[2, 512, 1024]" = torch.ops.aten.add.Tensor(add_24, _unsafe_view_27);  add_24 = _unsafe_view_27 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:65 in forward, code: variance = hidden_states.pow(2).mean(-1, keepdim=True)
        pow_9: "f32[2, 512, 1024]" = torch.ops.aten.pow.Tensor_Scalar(add_26, 2)
        mean_8: "f32[2, 512, 1]" = torch.ops.aten.mean.dim(pow_9, [-1], True);  pow_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:66 in forward, code: hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        add_27: "f32[2, 512, 1]" = torch.ops.aten.add.Tensor(mean_8, 1e-06);  mean_8 = None
        rsqrt_8: "f32[2, 512, 1]" = torch.ops.aten.rsqrt.default(add_27);  add_27 = None
        mul_38: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(add_26, rsqrt_8);  add_26 = rsqrt_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:67 in forward, code: return self.weight * hidden_states.to(input_dtype)
        mul_39: "f32[2, 512, 1024]" = torch.ops.aten.mul.Tensor(arg39_1, mul_38);  arg39_1 = mul_38 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:480 in forward, code: logits = self.lm_head(hidden_states[:, slice_indices, :])
        alias: "f32[2, 512, 1024]" = torch.ops.aten.alias.default(mul_39);  mul_39 = None
        _to_copy_57: "bf16[32000, 1024]" = torch.ops.aten._to_copy.default(arg40_1, dtype = torch.bfloat16);  arg40_1 = None
        _to_copy_58: "bf16[2, 512, 1024]" = torch.ops.aten._to_copy.default(alias, dtype = torch.bfloat16);  alias = None
        t_28: "bf16[1024, 32000]" = torch.ops.aten.t.default(_to_copy_57);  _to_copy_57 = None
        view_47: "bf16[1024, 1024]" = torch.ops.aten.view.default(_to_copy_58, [1024, 1024]);  _to_copy_58 = None
        mm_28: "bf16[1024, 32000]" = torch.ops.aten.mm.default(view_47, t_28);  view_47 = t_28 = None
        _unsafe_view_28: "bf16[2, 512, 32000]" = torch.ops.aten._unsafe_view.default(mm_28, [2, 512, 32000]);  mm_28 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:59 in ForCausalLMLoss, code: logits = logits.float()
        _to_copy_59: "f32[2, 512, 32000]" = torch.ops.aten._to_copy.default(_unsafe_view_28, dtype = torch.float32)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/functional.py:5430 in pad, code: return torch._C._nn.pad(input, pad, mode, value)
        constant_pad_nd: "i64[2, 513]" = torch.ops.aten.constant_pad_nd.default(arg41_1, [0, 1], -100.0);  arg41_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:64 in ForCausalLMLoss, code: shift_labels = labels[..., 1:].contiguous()
        slice_20: "i64[2, 512]" = torch.ops.aten.slice.Tensor(constant_pad_nd, 1, 1, 9223372036854775807);  constant_pad_nd = None
        clone: "i64[2, 512]" = torch.ops.aten.clone.default(slice_20, memory_format = torch.contiguous_format);  slice_20 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:67 in ForCausalLMLoss, code: logits = logits.view(-1, vocab_size)
        view_48: "f32[1024, 32000]" = torch.ops.aten.view.default(_to_copy_59, [-1, 32000]);  _to_copy_59 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:68 in ForCausalLMLoss, code: shift_labels = shift_labels.view(-1)
        view_49: "i64[1024]" = torch.ops.aten.view.default(clone, [-1]);  clone = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:40 in fixed_cross_entropy, code: loss = nn.functional.cross_entropy(source, target, ignore_index=ignore_index, reduction=reduction)
        logsumexp: "f32[1024, 1]" = torch.ops.aten.logsumexp.default(view_48, [1], True)
        sub_2: "f32[1024, 32000]" = torch.ops.aten.sub.Tensor(view_48, logsumexp);  view_48 = logsumexp = None
        nll_loss_forward = torch.ops.aten.nll_loss_forward.default(sub_2, view_49, None, 1, -100);  sub_2 = view_49 = None
        getitem_36: "f32[]" = nll_loss_forward[0];  nll_loss_forward = None
        return (getitem_36, _unsafe_view_28)
