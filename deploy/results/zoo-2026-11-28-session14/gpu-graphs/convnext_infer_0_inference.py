class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[96, 3, 4, 4]", arg1_1: "f32[96]", arg2_1: "f32[8, 3, 224, 224]", arg3_1: "f32[96]", arg4_1: "f32[96]", arg5_1: "f32[96, 1, 7, 7]", arg6_1: "f32[96]", arg7_1: "f32[96]", arg8_1: "f32[96]", arg9_1: "f32[384, 96]", arg10_1: "f32[384]", arg11_1: "f32[96, 384]", arg12_1: "f32[96]", arg13_1: "f32[96]", arg14_1: "f32[96, 1, 7, 7]", arg15_1: "f32[96]", arg16_1: "f32[96]", arg17_1: "f32[96]", arg18_1: "f32[384, 96]", arg19_1: "f32[384]", arg20_1: "f32[96, 384]", arg21_1: "f32[96]", arg22_1: "f32[96]", arg23_1: "f32[96, 1, 7, 7]", arg24_1: "f32[96]", arg25_1: "f32[96]", arg26_1: "f32[96]", arg27_1: "f32[384, 96]", arg28_1: "f32[384]", arg29_1: "f32[96, 384]", arg30_1: "f32[96]", arg31_1: "f32[96]", arg32_1: "f32[96]", arg33_1: "f32[96]", arg34_1: "f32[192, 96, 2, 2]", arg35_1: "f32[192]", arg36_1: "f32[192, 1, 7, 7]", arg37_1: "f32[192]", arg38_1: "f32[192]", arg39_1: "f32[192]", arg40_1: "f32[768, 192]", arg41_1: "f32[768]", arg42_1: "f32[192, 768]", arg43_1: "f32[192]", arg44_1: "f32[192]", arg45_1: "f32[192, 1, 7, 7]", arg46_1: "f32[192]", arg47_1: "f32[192]", arg48_1: "f32[192]", arg49_1: "f32[768, 192]", arg50_1: "f32[768]", arg51_1: "f32[192, 768]", arg52_1: "f32[192]", arg53_1: "f32[192]", arg54_1: "f32[192, 1, 7, 7]", arg55_1: "f32[192]", arg56_1: "f32[192]", arg57_1: "f32[192]", arg58_1: "f32[768, 192]", arg59_1: "f32[768]", arg60_1: "f32[192, 768]", arg61_1: "f32[192]", arg62_1: "f32[192]", arg63_1: "f32[192]", arg64_1: "f32[192]", arg65_1: "f32[384, 192, 2, 2]", arg66_1: "f32[384]", arg67_1: "f32[384, 1, 7, 7]", arg68_1: "f32[384]", arg69_1: "f32[384]", arg70_1: "f32[384]", arg71_1: "f32[1536, 384]", arg72_1: "f32[1536]", arg73_1: "f32[384, 1536]", arg74_1: "f32[384]", arg75_1: "f32[384]", arg76_1: "f32[384, 1, 7, 7]", arg77_1: "f32[384]", arg78_1: "f32[384]", arg79_1: "f32[384]", arg80_1: "f32[1536, 384]", arg81_1: "f32[1536]", arg82_1: "f32[384, 1536]", arg83_1: "f32[384]", arg84_1: "f32[384]", arg85_1: "f32[384, 1, 7, 7]", arg86_1: "f32[384]", arg87_1: "f32[384]", arg88_1: "f32[384]", arg89_1: "f32[1536, 384]", arg90_1: "f32[1536]", arg91_1: "f32[384, 1536]", arg92_1: "f32[384]", arg93_1: "f32[384]", arg94_1: "f32[384, 1, 7, 7]", arg95_1: "f32[384]", arg96_1: "f32[384]", arg97_1: "f32[384]", arg98_1: "f32[1536, 384]", arg99_1: "f32[1536]", arg100_1: "f32[384, 1536]", arg101_1: "f32[384]", arg102_1: "f32[384]", arg103_1: "f32[384, 1, 7, 7]", arg104_1: "f32[384]", arg105_1: "f32[384]", arg106_1: "f32[384]", arg107_1: "f32[1536, 384]", arg108_1: "f32[1536]", arg109_1: "f32[384, 1536]", arg110_1: "f32[384]", arg111_1: "f32[384]", arg112_1: "f32[384, 1, 7, 7]", arg113_1: "f32[384]", arg114_1: "f32[384]", arg115_1: "f32[384]", arg116_1: "f32[1536, 384]", arg117_1: "f32[1536]", arg118_1: "f32[384, 1536]", arg119_1: "f32[384]", arg120_1: "f32[384]", arg121_1: "f32[384, 1, 7, 7]", arg122_1: "f32[384]", arg123_1: "f32[384]", arg124_1: "f32[384]", arg125_1: "f32[1536, 384]", arg126_1: "f32[1536]", arg127_1: "f32[384, 1536]", arg128_1: "f32[384]", arg129_1: "f32[384]", arg130_1: "f32[384, 1, 7, 7]", arg131_1: "f32[384]", arg132_1: "f32[384]", arg133_1: "f32[384]", arg134_1: "f32[1536, 384]", arg135_1: "f32[1536]", arg136_1: "f32[384, 1536]", arg137_1: "f32[384]", arg138_1: "f32[384]", arg139_1: "f32[384, 1, 7, 7]", arg140_1: "f32[384]", arg141_1: "f32[384]", arg142_1: "f32[384]", arg143_1: "f32[1536, 384]", arg144_1: "f32[1536]", arg145_1: "f32[384, 1536]", arg146_1: "f32[384]", arg147_1: "f32[384]", arg148_1: "f32[384]", arg149_1: "f32[384]", arg150_1: "f32[768, 384, 2, 2]", arg151_1: "f32[768]", arg152_1: "f32[768, 1, 7, 7]", arg153_1: "f32[768]", arg154_1: "f32[768]", arg155_1: "f32[768]", arg156_1: "f32[3072, 768]", arg157_1: "f32[3072]", arg158_1: "f32[768, 3072]", arg159_1: "f32[768]", arg160_1: "f32[768]", arg161_1: "f32[768, 1, 7, 7]", arg162_1: "f32[768]", arg163_1: "f32[768]", arg164_1: "f32[768]", arg165_1: "f32[3072, 768]", arg166_1: "f32[3072]", arg167_1: "f32[768, 3072]", arg168_1: "f32[768]", arg169_1: "f32[768]", arg170_1: "f32[768, 1, 7, 7]", arg171_1: "f32[768]", arg172_1: "f32[768]", arg173_1: "f32[768]", arg174_1: "f32[3072, 768]", arg175_1: "f32[3072]", arg176_1: "f32[768, 3072]", arg177_1: "f32[768]", arg178_1: "f32[768]", arg179_1: "f32[768]", arg180_1: "f32[768]", arg181_1: "f32[1000, 768]", arg182_1: "f32[1000]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:610 in forward_features, code: x = self.stem(x)
        _to_copy: "bf16[96]" = torch.ops.aten._to_copy.default(arg1_1, dtype = torch.bfloat16);  arg1_1 = None
        _to_copy_1: "bf16[96, 3, 4, 4]" = torch.ops.aten._to_copy.default(arg0_1, dtype = torch.bfloat16);  arg0_1 = None
        _to_copy_2: "bf16[8, 3, 224, 224]" = torch.ops.aten._to_copy.default(arg2_1, dtype = torch.bfloat16);  arg2_1 = None
        convolution: "bf16[8, 96, 56, 56]" = torch.ops.aten.convolution.default(_to_copy_2, _to_copy_1, _to_copy, [4, 4], [0, 0], [1, 1], False, [0, 0], 1);  _to_copy_2 = _to_copy_1 = _to_copy = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:128 in forward, code: x = x.permute(0, 2, 3, 1)
        permute: "bf16[8, 56, 56, 96]" = torch.ops.aten.permute.default(convolution, [0, 2, 3, 1]);  convolution = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:132 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_3: "f32[8, 56, 56, 96]" = torch.ops.aten._to_copy.default(permute, dtype = torch.float32);  permute = None
        native_layer_norm = torch.ops.aten.native_layer_norm.default(_to_copy_3, [96], arg3_1, arg4_1, 1e-06);  _to_copy_3 = arg3_1 = arg4_1 = None
        getitem: "f32[8, 56, 56, 96]" = native_layer_norm[0];  native_layer_norm = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:133 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_1: "f32[8, 96, 56, 56]" = torch.ops.aten.permute.default(getitem, [0, 3, 1, 2]);  getitem = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_4: "bf16[96]" = torch.ops.aten._to_copy.default(arg6_1, dtype = torch.bfloat16);  arg6_1 = None
        _to_copy_5: "bf16[96, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg5_1, dtype = torch.bfloat16);  arg5_1 = None
        _to_copy_6: "bf16[8, 96, 56, 56]" = torch.ops.aten._to_copy.default(permute_1, dtype = torch.bfloat16)
        convolution_1: "bf16[8, 96, 56, 56]" = torch.ops.aten.convolution.default(_to_copy_6, _to_copy_5, _to_copy_4, [1, 1], [3, 3], [1, 1], False, [0, 0], 96);  _to_copy_6 = _to_copy_5 = _to_copy_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_2: "bf16[8, 56, 56, 96]" = torch.ops.aten.permute.default(convolution_1, [0, 2, 3, 1]);  convolution_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_7: "f32[8, 56, 56, 96]" = torch.ops.aten._to_copy.default(permute_2, dtype = torch.float32);  permute_2 = None
        native_layer_norm_1 = torch.ops.aten.native_layer_norm.default(_to_copy_7, [96], arg7_1, arg8_1, 1e-06);  _to_copy_7 = arg7_1 = arg8_1 = None
        getitem_3: "f32[8, 56, 56, 96]" = native_layer_norm_1[0];  native_layer_norm_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_8: "bf16[384]" = torch.ops.aten._to_copy.default(arg10_1, dtype = torch.bfloat16);  arg10_1 = None
        _to_copy_9: "bf16[384, 96]" = torch.ops.aten._to_copy.default(arg9_1, dtype = torch.bfloat16);  arg9_1 = None
        _to_copy_10: "bf16[8, 56, 56, 96]" = torch.ops.aten._to_copy.default(getitem_3, dtype = torch.bfloat16);  getitem_3 = None
        view: "bf16[25088, 96]" = torch.ops.aten.view.default(_to_copy_10, [25088, 96]);  _to_copy_10 = None
        t: "bf16[96, 384]" = torch.ops.aten.t.default(_to_copy_9);  _to_copy_9 = None
        addmm: "bf16[25088, 384]" = torch.ops.aten.addmm.default(_to_copy_8, view, t);  _to_copy_8 = view = t = None
        view_1: "bf16[8, 56, 56, 384]" = torch.ops.aten.view.default(addmm, [8, 56, 56, 384]);  addmm = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu: "bf16[8, 56, 56, 384]" = torch.ops.aten.gelu.default(view_1);  view_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone: "bf16[8, 56, 56, 384]" = torch.ops.aten.clone.default(gelu);  gelu = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_11: "bf16[96]" = torch.ops.aten._to_copy.default(arg12_1, dtype = torch.bfloat16);  arg12_1 = None
        _to_copy_12: "bf16[96, 384]" = torch.ops.aten._to_copy.default(arg11_1, dtype = torch.bfloat16);  arg11_1 = None
        view_2: "bf16[25088, 384]" = torch.ops.aten.view.default(clone, [25088, 384]);  clone = None
        t_1: "bf16[384, 96]" = torch.ops.aten.t.default(_to_copy_12);  _to_copy_12 = None
        addmm_1: "bf16[25088, 96]" = torch.ops.aten.addmm.default(_to_copy_11, view_2, t_1);  _to_copy_11 = view_2 = t_1 = None
        view_3: "bf16[8, 56, 56, 96]" = torch.ops.aten.view.default(addmm_1, [8, 56, 56, 96]);  addmm_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_1: "bf16[8, 56, 56, 96]" = torch.ops.aten.clone.default(view_3);  view_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_3: "bf16[8, 96, 56, 56]" = torch.ops.aten.permute.default(clone_1, [0, 3, 1, 2]);  clone_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_4: "f32[1, 96, 1, 1]" = torch.ops.aten.view.default(arg13_1, [1, -1, 1, 1]);  arg13_1 = None
        mul: "f32[8, 96, 56, 56]" = torch.ops.aten.mul.Tensor(permute_3, view_4);  permute_3 = view_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add: "f32[8, 96, 56, 56]" = torch.ops.aten.add.Tensor(mul, permute_1);  mul = permute_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_13: "bf16[96]" = torch.ops.aten._to_copy.default(arg15_1, dtype = torch.bfloat16);  arg15_1 = None
        _to_copy_14: "bf16[96, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg14_1, dtype = torch.bfloat16);  arg14_1 = None
        _to_copy_15: "bf16[8, 96, 56, 56]" = torch.ops.aten._to_copy.default(add, dtype = torch.bfloat16)
        convolution_2: "bf16[8, 96, 56, 56]" = torch.ops.aten.convolution.default(_to_copy_15, _to_copy_14, _to_copy_13, [1, 1], [3, 3], [1, 1], False, [0, 0], 96);  _to_copy_15 = _to_copy_14 = _to_copy_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_4: "bf16[8, 56, 56, 96]" = torch.ops.aten.permute.default(convolution_2, [0, 2, 3, 1]);  convolution_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_16: "f32[8, 56, 56, 96]" = torch.ops.aten._to_copy.default(permute_4, dtype = torch.float32);  permute_4 = None
        native_layer_norm_2 = torch.ops.aten.native_layer_norm.default(_to_copy_16, [96], arg16_1, arg17_1, 1e-06);  _to_copy_16 = arg16_1 = arg17_1 = None
        getitem_6: "f32[8, 56, 56, 96]" = native_layer_norm_2[0];  native_layer_norm_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_17: "bf16[384]" = torch.ops.aten._to_copy.default(arg19_1, dtype = torch.bfloat16);  arg19_1 = None
        _to_copy_18: "bf16[384, 96]" = torch.ops.aten._to_copy.default(arg18_1, dtype = torch.bfloat16);  arg18_1 = None
        _to_copy_19: "bf16[8, 56, 56, 96]" = torch.ops.aten._to_copy.default(getitem_6, dtype = torch.bfloat16);  getitem_6 = None
        view_5: "bf16[25088, 96]" = torch.ops.aten.view.default(_to_copy_19, [25088, 96]);  _to_copy_19 = None
        t_2: "bf16[96, 384]" = torch.ops.aten.t.default(_to_copy_18);  _to_copy_18 = None
        addmm_2: "bf16[25088, 384]" = torch.ops.aten.addmm.default(_to_copy_17, view_5, t_2);  _to_copy_17 = view_5 = t_2 = None
        view_6: "bf16[8, 56, 56, 384]" = torch.ops.aten.view.default(addmm_2, [8, 56, 56, 384]);  addmm_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_1: "bf16[8, 56, 56, 384]" = torch.ops.aten.gelu.default(view_6);  view_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_2: "bf16[8, 56, 56, 384]" = torch.ops.aten.clone.default(gelu_1);  gelu_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_20: "bf16[96]" = torch.ops.aten._to_copy.default(arg21_1, dtype = torch.bfloat16);  arg21_1 = None
        _to_copy_21: "bf16[96, 384]" = torch.ops.aten._to_copy.default(arg20_1, dtype = torch.bfloat16);  arg20_1 = None
        view_7: "bf16[25088, 384]" = torch.ops.aten.view.default(clone_2, [25088, 384]);  clone_2 = None
        t_3: "bf16[384, 96]" = torch.ops.aten.t.default(_to_copy_21);  _to_copy_21 = None
        addmm_3: "bf16[25088, 96]" = torch.ops.aten.addmm.default(_to_copy_20, view_7, t_3);  _to_copy_20 = view_7 = t_3 = None
        view_8: "bf16[8, 56, 56, 96]" = torch.ops.aten.view.default(addmm_3, [8, 56, 56, 96]);  addmm_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_3: "bf16[8, 56, 56, 96]" = torch.ops.aten.clone.default(view_8);  view_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_5: "bf16[8, 96, 56, 56]" = torch.ops.aten.permute.default(clone_3, [0, 3, 1, 2]);  clone_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_9: "f32[1, 96, 1, 1]" = torch.ops.aten.view.default(arg22_1, [1, -1, 1, 1]);  arg22_1 = None
        mul_1: "f32[8, 96, 56, 56]" = torch.ops.aten.mul.Tensor(permute_5, view_9);  permute_5 = view_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_1: "f32[8, 96, 56, 56]" = torch.ops.aten.add.Tensor(mul_1, add);  mul_1 = add = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_22: "bf16[96]" = torch.ops.aten._to_copy.default(arg24_1, dtype = torch.bfloat16);  arg24_1 = None
        _to_copy_23: "bf16[96, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg23_1, dtype = torch.bfloat16);  arg23_1 = None
        _to_copy_24: "bf16[8, 96, 56, 56]" = torch.ops.aten._to_copy.default(add_1, dtype = torch.bfloat16)
        convolution_3: "bf16[8, 96, 56, 56]" = torch.ops.aten.convolution.default(_to_copy_24, _to_copy_23, _to_copy_22, [1, 1], [3, 3], [1, 1], False, [0, 0], 96);  _to_copy_24 = _to_copy_23 = _to_copy_22 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_6: "bf16[8, 56, 56, 96]" = torch.ops.aten.permute.default(convolution_3, [0, 2, 3, 1]);  convolution_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_25: "f32[8, 56, 56, 96]" = torch.ops.aten._to_copy.default(permute_6, dtype = torch.float32);  permute_6 = None
        native_layer_norm_3 = torch.ops.aten.native_layer_norm.default(_to_copy_25, [96], arg25_1, arg26_1, 1e-06);  _to_copy_25 = arg25_1 = arg26_1 = None
        getitem_9: "f32[8, 56, 56, 96]" = native_layer_norm_3[0];  native_layer_norm_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_26: "bf16[384]" = torch.ops.aten._to_copy.default(arg28_1, dtype = torch.bfloat16);  arg28_1 = None
        _to_copy_27: "bf16[384, 96]" = torch.ops.aten._to_copy.default(arg27_1, dtype = torch.bfloat16);  arg27_1 = None
        _to_copy_28: "bf16[8, 56, 56, 96]" = torch.ops.aten._to_copy.default(getitem_9, dtype = torch.bfloat16);  getitem_9 = None
        view_10: "bf16[25088, 96]" = torch.ops.aten.view.default(_to_copy_28, [25088, 96]);  _to_copy_28 = None
        t_4: "bf16[96, 384]" = torch.ops.aten.t.default(_to_copy_27);  _to_copy_27 = None
        addmm_4: "bf16[25088, 384]" = torch.ops.aten.addmm.default(_to_copy_26, view_10, t_4);  _to_copy_26 = view_10 = t_4 = None
        view_11: "bf16[8, 56, 56, 384]" = torch.ops.aten.view.default(addmm_4, [8, 56, 56, 384]);  addmm_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_2: "bf16[8, 56, 56, 384]" = torch.ops.aten.gelu.default(view_11);  view_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_4: "bf16[8, 56, 56, 384]" = torch.ops.aten.clone.default(gelu_2);  gelu_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_29: "bf16[96]" = torch.ops.aten._to_copy.default(arg30_1, dtype = torch.bfloat16);  arg30_1 = None
        _to_copy_30: "bf16[96, 384]" = torch.ops.aten._to_copy.default(arg29_1, dtype = torch.bfloat16);  arg29_1 = None
        view_12: "bf16[25088, 384]" = torch.ops.aten.view.default(clone_4, [25088, 384]);  clone_4 = None
        t_5: "bf16[384, 96]" = torch.ops.aten.t.default(_to_copy_30);  _to_copy_30 = None
        addmm_5: "bf16[25088, 96]" = torch.ops.aten.addmm.default(_to_copy_29, view_12, t_5);  _to_copy_29 = view_12 = t_5 = None
        view_13: "bf16[8, 56, 56, 96]" = torch.ops.aten.view.default(addmm_5, [8, 56, 56, 96]);  addmm_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_5: "bf16[8, 56, 56, 96]" = torch.ops.aten.clone.default(view_13);  view_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_7: "bf16[8, 96, 56, 56]" = torch.ops.aten.permute.default(clone_5, [0, 3, 1, 2]);  clone_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_14: "f32[1, 96, 1, 1]" = torch.ops.aten.view.default(arg31_1, [1, -1, 1, 1]);  arg31_1 = None
        mul_2: "f32[8, 96, 56, 56]" = torch.ops.aten.mul.Tensor(permute_7, view_14);  permute_7 = view_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_2: "f32[8, 96, 56, 56]" = torch.ops.aten.add.Tensor(mul_2, add_1);  mul_2 = add_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:128 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_8: "f32[8, 56, 56, 96]" = torch.ops.aten.permute.default(add_2, [0, 2, 3, 1]);  add_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:132 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        native_layer_norm_4 = torch.ops.aten.native_layer_norm.default(permute_8, [96], arg32_1, arg33_1, 1e-06);  permute_8 = arg32_1 = arg33_1 = None
        getitem_12: "f32[8, 56, 56, 96]" = native_layer_norm_4[0];  native_layer_norm_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:133 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_9: "f32[8, 96, 56, 56]" = torch.ops.aten.permute.default(getitem_12, [0, 3, 1, 2]);  getitem_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:303 in forward, code: x = self.downsample(x)
        _to_copy_31: "bf16[192]" = torch.ops.aten._to_copy.default(arg35_1, dtype = torch.bfloat16);  arg35_1 = None
        _to_copy_32: "bf16[192, 96, 2, 2]" = torch.ops.aten._to_copy.default(arg34_1, dtype = torch.bfloat16);  arg34_1 = None
        _to_copy_33: "bf16[8, 96, 56, 56]" = torch.ops.aten._to_copy.default(permute_9, dtype = torch.bfloat16);  permute_9 = None
        convolution_4: "bf16[8, 192, 28, 28]" = torch.ops.aten.convolution.default(_to_copy_33, _to_copy_32, _to_copy_31, [2, 2], [0, 0], [1, 1], False, [0, 0], 1);  _to_copy_33 = _to_copy_32 = _to_copy_31 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_34: "bf16[192]" = torch.ops.aten._to_copy.default(arg37_1, dtype = torch.bfloat16);  arg37_1 = None
        _to_copy_35: "bf16[192, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg36_1, dtype = torch.bfloat16);  arg36_1 = None
        convolution_5: "bf16[8, 192, 28, 28]" = torch.ops.aten.convolution.default(convolution_4, _to_copy_35, _to_copy_34, [1, 1], [3, 3], [1, 1], False, [0, 0], 192);  _to_copy_35 = _to_copy_34 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_10: "bf16[8, 28, 28, 192]" = torch.ops.aten.permute.default(convolution_5, [0, 2, 3, 1]);  convolution_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_36: "f32[8, 28, 28, 192]" = torch.ops.aten._to_copy.default(permute_10, dtype = torch.float32);  permute_10 = None
        native_layer_norm_5 = torch.ops.aten.native_layer_norm.default(_to_copy_36, [192], arg38_1, arg39_1, 1e-06);  _to_copy_36 = arg38_1 = arg39_1 = None
        getitem_15: "f32[8, 28, 28, 192]" = native_layer_norm_5[0];  native_layer_norm_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_37: "bf16[768]" = torch.ops.aten._to_copy.default(arg41_1, dtype = torch.bfloat16);  arg41_1 = None
        _to_copy_38: "bf16[768, 192]" = torch.ops.aten._to_copy.default(arg40_1, dtype = torch.bfloat16);  arg40_1 = None
        _to_copy_39: "bf16[8, 28, 28, 192]" = torch.ops.aten._to_copy.default(getitem_15, dtype = torch.bfloat16);  getitem_15 = None
        view_15: "bf16[6272, 192]" = torch.ops.aten.view.default(_to_copy_39, [6272, 192]);  _to_copy_39 = None
        t_6: "bf16[192, 768]" = torch.ops.aten.t.default(_to_copy_38);  _to_copy_38 = None
        addmm_6: "bf16[6272, 768]" = torch.ops.aten.addmm.default(_to_copy_37, view_15, t_6);  _to_copy_37 = view_15 = t_6 = None
        view_16: "bf16[8, 28, 28, 768]" = torch.ops.aten.view.default(addmm_6, [8, 28, 28, 768]);  addmm_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_3: "bf16[8, 28, 28, 768]" = torch.ops.aten.gelu.default(view_16);  view_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_6: "bf16[8, 28, 28, 768]" = torch.ops.aten.clone.default(gelu_3);  gelu_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_40: "bf16[192]" = torch.ops.aten._to_copy.default(arg43_1, dtype = torch.bfloat16);  arg43_1 = None
        _to_copy_41: "bf16[192, 768]" = torch.ops.aten._to_copy.default(arg42_1, dtype = torch.bfloat16);  arg42_1 = None
        view_17: "bf16[6272, 768]" = torch.ops.aten.view.default(clone_6, [6272, 768]);  clone_6 = None
        t_7: "bf16[768, 192]" = torch.ops.aten.t.default(_to_copy_41);  _to_copy_41 = None
        addmm_7: "bf16[6272, 192]" = torch.ops.aten.addmm.default(_to_copy_40, view_17, t_7);  _to_copy_40 = view_17 = t_7 = None
        view_18: "bf16[8, 28, 28, 192]" = torch.ops.aten.view.default(addmm_7, [8, 28, 28, 192]);  addmm_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_7: "bf16[8, 28, 28, 192]" = torch.ops.aten.clone.default(view_18);  view_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_11: "bf16[8, 192, 28, 28]" = torch.ops.aten.permute.default(clone_7, [0, 3, 1, 2]);  clone_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_19: "f32[1, 192, 1, 1]" = torch.ops.aten.view.default(arg44_1, [1, -1, 1, 1]);  arg44_1 = None
        mul_3: "f32[8, 192, 28, 28]" = torch.ops.aten.mul.Tensor(permute_11, view_19);  permute_11 = view_19 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_3: "f32[8, 192, 28, 28]" = torch.ops.aten.add.Tensor(mul_3, convolution_4);  mul_3 = convolution_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_42: "bf16[192]" = torch.ops.aten._to_copy.default(arg46_1, dtype = torch.bfloat16);  arg46_1 = None
        _to_copy_43: "bf16[192, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg45_1, dtype = torch.bfloat16);  arg45_1 = None
        _to_copy_44: "bf16[8, 192, 28, 28]" = torch.ops.aten._to_copy.default(add_3, dtype = torch.bfloat16)
        convolution_6: "bf16[8, 192, 28, 28]" = torch.ops.aten.convolution.default(_to_copy_44, _to_copy_43, _to_copy_42, [1, 1], [3, 3], [1, 1], False, [0, 0], 192);  _to_copy_44 = _to_copy_43 = _to_copy_42 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_12: "bf16[8, 28, 28, 192]" = torch.ops.aten.permute.default(convolution_6, [0, 2, 3, 1]);  convolution_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_45: "f32[8, 28, 28, 192]" = torch.ops.aten._to_copy.default(permute_12, dtype = torch.float32);  permute_12 = None
        native_layer_norm_6 = torch.ops.aten.native_layer_norm.default(_to_copy_45, [192], arg47_1, arg48_1, 1e-06);  _to_copy_45 = arg47_1 = arg48_1 = None
        getitem_18: "f32[8, 28, 28, 192]" = native_layer_norm_6[0];  native_layer_norm_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_46: "bf16[768]" = torch.ops.aten._to_copy.default(arg50_1, dtype = torch.bfloat16);  arg50_1 = None
        _to_copy_47: "bf16[768, 192]" = torch.ops.aten._to_copy.default(arg49_1, dtype = torch.bfloat16);  arg49_1 = None
        _to_copy_48: "bf16[8, 28, 28, 192]" = torch.ops.aten._to_copy.default(getitem_18, dtype = torch.bfloat16);  getitem_18 = None
        view_20: "bf16[6272, 192]" = torch.ops.aten.view.default(_to_copy_48, [6272, 192]);  _to_copy_48 = None
        t_8: "bf16[192, 768]" = torch.ops.aten.t.default(_to_copy_47);  _to_copy_47 = None
        addmm_8: "bf16[6272, 768]" = torch.ops.aten.addmm.default(_to_copy_46, view_20, t_8);  _to_copy_46 = view_20 = t_8 = None
        view_21: "bf16[8, 28, 28, 768]" = torch.ops.aten.view.default(addmm_8, [8, 28, 28, 768]);  addmm_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_4: "bf16[8, 28, 28, 768]" = torch.ops.aten.gelu.default(view_21);  view_21 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_8: "bf16[8, 28, 28, 768]" = torch.ops.aten.clone.default(gelu_4);  gelu_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_49: "bf16[192]" = torch.ops.aten._to_copy.default(arg52_1, dtype = torch.bfloat16);  arg52_1 = None
        _to_copy_50: "bf16[192, 768]" = torch.ops.aten._to_copy.default(arg51_1, dtype = torch.bfloat16);  arg51_1 = None
        view_22: "bf16[6272, 768]" = torch.ops.aten.view.default(clone_8, [6272, 768]);  clone_8 = None
        t_9: "bf16[768, 192]" = torch.ops.aten.t.default(_to_copy_50);  _to_copy_50 = None
        addmm_9: "bf16[6272, 192]" = torch.ops.aten.addmm.default(_to_copy_49, view_22, t_9);  _to_copy_49 = view_22 = t_9 = None
        view_23: "bf16[8, 28, 28, 192]" = torch.ops.aten.view.default(addmm_9, [8, 28, 28, 192]);  addmm_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_9: "bf16[8, 28, 28, 192]" = torch.ops.aten.clone.default(view_23);  view_23 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_13: "bf16[8, 192, 28, 28]" = torch.ops.aten.permute.default(clone_9, [0, 3, 1, 2]);  clone_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_24: "f32[1, 192, 1, 1]" = torch.ops.aten.view.default(arg53_1, [1, -1, 1, 1]);  arg53_1 = None
        mul_4: "f32[8, 192, 28, 28]" = torch.ops.aten.mul.Tensor(permute_13, view_24);  permute_13 = view_24 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_4: "f32[8, 192, 28, 28]" = torch.ops.aten.add.Tensor(mul_4, add_3);  mul_4 = add_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_51: "bf16[192]" = torch.ops.aten._to_copy.default(arg55_1, dtype = torch.bfloat16);  arg55_1 = None
        _to_copy_52: "bf16[192, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg54_1, dtype = torch.bfloat16);  arg54_1 = None
        _to_copy_53: "bf16[8, 192, 28, 28]" = torch.ops.aten._to_copy.default(add_4, dtype = torch.bfloat16)
        convolution_7: "bf16[8, 192, 28, 28]" = torch.ops.aten.convolution.default(_to_copy_53, _to_copy_52, _to_copy_51, [1, 1], [3, 3], [1, 1], False, [0, 0], 192);  _to_copy_53 = _to_copy_52 = _to_copy_51 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_14: "bf16[8, 28, 28, 192]" = torch.ops.aten.permute.default(convolution_7, [0, 2, 3, 1]);  convolution_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_54: "f32[8, 28, 28, 192]" = torch.ops.aten._to_copy.default(permute_14, dtype = torch.float32);  permute_14 = None
        native_layer_norm_7 = torch.ops.aten.native_layer_norm.default(_to_copy_54, [192], arg56_1, arg57_1, 1e-06);  _to_copy_54 = arg56_1 = arg57_1 = None
        getitem_21: "f32[8, 28, 28, 192]" = native_layer_norm_7[0];  native_layer_norm_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_55: "bf16[768]" = torch.ops.aten._to_copy.default(arg59_1, dtype = torch.bfloat16);  arg59_1 = None
        _to_copy_56: "bf16[768, 192]" = torch.ops.aten._to_copy.default(arg58_1, dtype = torch.bfloat16);  arg58_1 = None
        _to_copy_57: "bf16[8, 28, 28, 192]" = torch.ops.aten._to_copy.default(getitem_21, dtype = torch.bfloat16);  getitem_21 = None
        view_25: "bf16[6272, 192]" = torch.ops.aten.view.default(_to_copy_57, [6272, 192]);  _to_copy_57 = None
        t_10: "bf16[192, 768]" = torch.ops.aten.t.default(_to_copy_56);  _to_copy_56 = None
        addmm_10: "bf16[6272, 768]" = torch.ops.aten.addmm.default(_to_copy_55, view_25, t_10);  _to_copy_55 = view_25 = t_10 = None
        view_26: "bf16[8, 28, 28, 768]" = torch.ops.aten.view.default(addmm_10, [8, 28, 28, 768]);  addmm_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_5: "bf16[8, 28, 28, 768]" = torch.ops.aten.gelu.default(view_26);  view_26 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_10: "bf16[8, 28, 28, 768]" = torch.ops.aten.clone.default(gelu_5);  gelu_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_58: "bf16[192]" = torch.ops.aten._to_copy.default(arg61_1, dtype = torch.bfloat16);  arg61_1 = None
        _to_copy_59: "bf16[192, 768]" = torch.ops.aten._to_copy.default(arg60_1, dtype = torch.bfloat16);  arg60_1 = None
        view_27: "bf16[6272, 768]" = torch.ops.aten.view.default(clone_10, [6272, 768]);  clone_10 = None
        t_11: "bf16[768, 192]" = torch.ops.aten.t.default(_to_copy_59);  _to_copy_59 = None
        addmm_11: "bf16[6272, 192]" = torch.ops.aten.addmm.default(_to_copy_58, view_27, t_11);  _to_copy_58 = view_27 = t_11 = None
        view_28: "bf16[8, 28, 28, 192]" = torch.ops.aten.view.default(addmm_11, [8, 28, 28, 192]);  addmm_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_11: "bf16[8, 28, 28, 192]" = torch.ops.aten.clone.default(view_28);  view_28 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_15: "bf16[8, 192, 28, 28]" = torch.ops.aten.permute.default(clone_11, [0, 3, 1, 2]);  clone_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_29: "f32[1, 192, 1, 1]" = torch.ops.aten.view.default(arg62_1, [1, -1, 1, 1]);  arg62_1 = None
        mul_5: "f32[8, 192, 28, 28]" = torch.ops.aten.mul.Tensor(permute_15, view_29);  permute_15 = view_29 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_5: "f32[8, 192, 28, 28]" = torch.ops.aten.add.Tensor(mul_5, add_4);  mul_5 = add_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:128 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_16: "f32[8, 28, 28, 192]" = torch.ops.aten.permute.default(add_5, [0, 2, 3, 1]);  add_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:132 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        native_layer_norm_8 = torch.ops.aten.native_layer_norm.default(permute_16, [192], arg63_1, arg64_1, 1e-06);  permute_16 = arg63_1 = arg64_1 = None
        getitem_24: "f32[8, 28, 28, 192]" = native_layer_norm_8[0];  native_layer_norm_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:133 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_17: "f32[8, 192, 28, 28]" = torch.ops.aten.permute.default(getitem_24, [0, 3, 1, 2]);  getitem_24 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:303 in forward, code: x = self.downsample(x)
        _to_copy_60: "bf16[384]" = torch.ops.aten._to_copy.default(arg66_1, dtype = torch.bfloat16);  arg66_1 = None
        _to_copy_61: "bf16[384, 192, 2, 2]" = torch.ops.aten._to_copy.default(arg65_1, dtype = torch.bfloat16);  arg65_1 = None
        _to_copy_62: "bf16[8, 192, 28, 28]" = torch.ops.aten._to_copy.default(permute_17, dtype = torch.bfloat16);  permute_17 = None
        convolution_8: "bf16[8, 384, 14, 14]" = torch.ops.aten.convolution.default(_to_copy_62, _to_copy_61, _to_copy_60, [2, 2], [0, 0], [1, 1], False, [0, 0], 1);  _to_copy_62 = _to_copy_61 = _to_copy_60 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_63: "bf16[384]" = torch.ops.aten._to_copy.default(arg68_1, dtype = torch.bfloat16);  arg68_1 = None
        _to_copy_64: "bf16[384, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg67_1, dtype = torch.bfloat16);  arg67_1 = None
        convolution_9: "bf16[8, 384, 14, 14]" = torch.ops.aten.convolution.default(convolution_8, _to_copy_64, _to_copy_63, [1, 1], [3, 3], [1, 1], False, [0, 0], 384);  _to_copy_64 = _to_copy_63 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_18: "bf16[8, 14, 14, 384]" = torch.ops.aten.permute.default(convolution_9, [0, 2, 3, 1]);  convolution_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_65: "f32[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(permute_18, dtype = torch.float32);  permute_18 = None
        native_layer_norm_9 = torch.ops.aten.native_layer_norm.default(_to_copy_65, [384], arg69_1, arg70_1, 1e-06);  _to_copy_65 = arg69_1 = arg70_1 = None
        getitem_27: "f32[8, 14, 14, 384]" = native_layer_norm_9[0];  native_layer_norm_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_66: "bf16[1536]" = torch.ops.aten._to_copy.default(arg72_1, dtype = torch.bfloat16);  arg72_1 = None
        _to_copy_67: "bf16[1536, 384]" = torch.ops.aten._to_copy.default(arg71_1, dtype = torch.bfloat16);  arg71_1 = None
        _to_copy_68: "bf16[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(getitem_27, dtype = torch.bfloat16);  getitem_27 = None
        view_30: "bf16[1568, 384]" = torch.ops.aten.view.default(_to_copy_68, [1568, 384]);  _to_copy_68 = None
        t_12: "bf16[384, 1536]" = torch.ops.aten.t.default(_to_copy_67);  _to_copy_67 = None
        addmm_12: "bf16[1568, 1536]" = torch.ops.aten.addmm.default(_to_copy_66, view_30, t_12);  _to_copy_66 = view_30 = t_12 = None
        view_31: "bf16[8, 14, 14, 1536]" = torch.ops.aten.view.default(addmm_12, [8, 14, 14, 1536]);  addmm_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_6: "bf16[8, 14, 14, 1536]" = torch.ops.aten.gelu.default(view_31);  view_31 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_12: "bf16[8, 14, 14, 1536]" = torch.ops.aten.clone.default(gelu_6);  gelu_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_69: "bf16[384]" = torch.ops.aten._to_copy.default(arg74_1, dtype = torch.bfloat16);  arg74_1 = None
        _to_copy_70: "bf16[384, 1536]" = torch.ops.aten._to_copy.default(arg73_1, dtype = torch.bfloat16);  arg73_1 = None
        view_32: "bf16[1568, 1536]" = torch.ops.aten.view.default(clone_12, [1568, 1536]);  clone_12 = None
        t_13: "bf16[1536, 384]" = torch.ops.aten.t.default(_to_copy_70);  _to_copy_70 = None
        addmm_13: "bf16[1568, 384]" = torch.ops.aten.addmm.default(_to_copy_69, view_32, t_13);  _to_copy_69 = view_32 = t_13 = None
        view_33: "bf16[8, 14, 14, 384]" = torch.ops.aten.view.default(addmm_13, [8, 14, 14, 384]);  addmm_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_13: "bf16[8, 14, 14, 384]" = torch.ops.aten.clone.default(view_33);  view_33 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_19: "bf16[8, 384, 14, 14]" = torch.ops.aten.permute.default(clone_13, [0, 3, 1, 2]);  clone_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_34: "f32[1, 384, 1, 1]" = torch.ops.aten.view.default(arg75_1, [1, -1, 1, 1]);  arg75_1 = None
        mul_6: "f32[8, 384, 14, 14]" = torch.ops.aten.mul.Tensor(permute_19, view_34);  permute_19 = view_34 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_6: "f32[8, 384, 14, 14]" = torch.ops.aten.add.Tensor(mul_6, convolution_8);  mul_6 = convolution_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_71: "bf16[384]" = torch.ops.aten._to_copy.default(arg77_1, dtype = torch.bfloat16);  arg77_1 = None
        _to_copy_72: "bf16[384, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg76_1, dtype = torch.bfloat16);  arg76_1 = None
        _to_copy_73: "bf16[8, 384, 14, 14]" = torch.ops.aten._to_copy.default(add_6, dtype = torch.bfloat16)
        convolution_10: "bf16[8, 384, 14, 14]" = torch.ops.aten.convolution.default(_to_copy_73, _to_copy_72, _to_copy_71, [1, 1], [3, 3], [1, 1], False, [0, 0], 384);  _to_copy_73 = _to_copy_72 = _to_copy_71 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_20: "bf16[8, 14, 14, 384]" = torch.ops.aten.permute.default(convolution_10, [0, 2, 3, 1]);  convolution_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_74: "f32[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(permute_20, dtype = torch.float32);  permute_20 = None
        native_layer_norm_10 = torch.ops.aten.native_layer_norm.default(_to_copy_74, [384], arg78_1, arg79_1, 1e-06);  _to_copy_74 = arg78_1 = arg79_1 = None
        getitem_30: "f32[8, 14, 14, 384]" = native_layer_norm_10[0];  native_layer_norm_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_75: "bf16[1536]" = torch.ops.aten._to_copy.default(arg81_1, dtype = torch.bfloat16);  arg81_1 = None
        _to_copy_76: "bf16[1536, 384]" = torch.ops.aten._to_copy.default(arg80_1, dtype = torch.bfloat16);  arg80_1 = None
        _to_copy_77: "bf16[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(getitem_30, dtype = torch.bfloat16);  getitem_30 = None
        view_35: "bf16[1568, 384]" = torch.ops.aten.view.default(_to_copy_77, [1568, 384]);  _to_copy_77 = None
        t_14: "bf16[384, 1536]" = torch.ops.aten.t.default(_to_copy_76);  _to_copy_76 = None
        addmm_14: "bf16[1568, 1536]" = torch.ops.aten.addmm.default(_to_copy_75, view_35, t_14);  _to_copy_75 = view_35 = t_14 = None
        view_36: "bf16[8, 14, 14, 1536]" = torch.ops.aten.view.default(addmm_14, [8, 14, 14, 1536]);  addmm_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_7: "bf16[8, 14, 14, 1536]" = torch.ops.aten.gelu.default(view_36);  view_36 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_14: "bf16[8, 14, 14, 1536]" = torch.ops.aten.clone.default(gelu_7);  gelu_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_78: "bf16[384]" = torch.ops.aten._to_copy.default(arg83_1, dtype = torch.bfloat16);  arg83_1 = None
        _to_copy_79: "bf16[384, 1536]" = torch.ops.aten._to_copy.default(arg82_1, dtype = torch.bfloat16);  arg82_1 = None
        view_37: "bf16[1568, 1536]" = torch.ops.aten.view.default(clone_14, [1568, 1536]);  clone_14 = None
        t_15: "bf16[1536, 384]" = torch.ops.aten.t.default(_to_copy_79);  _to_copy_79 = None
        addmm_15: "bf16[1568, 384]" = torch.ops.aten.addmm.default(_to_copy_78, view_37, t_15);  _to_copy_78 = view_37 = t_15 = None
        view_38: "bf16[8, 14, 14, 384]" = torch.ops.aten.view.default(addmm_15, [8, 14, 14, 384]);  addmm_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_15: "bf16[8, 14, 14, 384]" = torch.ops.aten.clone.default(view_38);  view_38 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_21: "bf16[8, 384, 14, 14]" = torch.ops.aten.permute.default(clone_15, [0, 3, 1, 2]);  clone_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_39: "f32[1, 384, 1, 1]" = torch.ops.aten.view.default(arg84_1, [1, -1, 1, 1]);  arg84_1 = None
        mul_7: "f32[8, 384, 14, 14]" = torch.ops.aten.mul.Tensor(permute_21, view_39);  permute_21 = view_39 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_7: "f32[8, 384, 14, 14]" = torch.ops.aten.add.Tensor(mul_7, add_6);  mul_7 = add_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_80: "bf16[384]" = torch.ops.aten._to_copy.default(arg86_1, dtype = torch.bfloat16);  arg86_1 = None
        _to_copy_81: "bf16[384, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg85_1, dtype = torch.bfloat16);  arg85_1 = None
        _to_copy_82: "bf16[8, 384, 14, 14]" = torch.ops.aten._to_copy.default(add_7, dtype = torch.bfloat16)
        convolution_11: "bf16[8, 384, 14, 14]" = torch.ops.aten.convolution.default(_to_copy_82, _to_copy_81, _to_copy_80, [1, 1], [3, 3], [1, 1], False, [0, 0], 384);  _to_copy_82 = _to_copy_81 = _to_copy_80 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_22: "bf16[8, 14, 14, 384]" = torch.ops.aten.permute.default(convolution_11, [0, 2, 3, 1]);  convolution_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_83: "f32[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(permute_22, dtype = torch.float32);  permute_22 = None
        native_layer_norm_11 = torch.ops.aten.native_layer_norm.default(_to_copy_83, [384], arg87_1, arg88_1, 1e-06);  _to_copy_83 = arg87_1 = arg88_1 = None
        getitem_33: "f32[8, 14, 14, 384]" = native_layer_norm_11[0];  native_layer_norm_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_84: "bf16[1536]" = torch.ops.aten._to_copy.default(arg90_1, dtype = torch.bfloat16);  arg90_1 = None
        _to_copy_85: "bf16[1536, 384]" = torch.ops.aten._to_copy.default(arg89_1, dtype = torch.bfloat16);  arg89_1 = None
        _to_copy_86: "bf16[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(getitem_33, dtype = torch.bfloat16);  getitem_33 = None
        view_40: "bf16[1568, 384]" = torch.ops.aten.view.default(_to_copy_86, [1568, 384]);  _to_copy_86 = None
        t_16: "bf16[384, 1536]" = torch.ops.aten.t.default(_to_copy_85);  _to_copy_85 = None
        addmm_16: "bf16[1568, 1536]" = torch.ops.aten.addmm.default(_to_copy_84, view_40, t_16);  _to_copy_84 = view_40 = t_16 = None
        view_41: "bf16[8, 14, 14, 1536]" = torch.ops.aten.view.default(addmm_16, [8, 14, 14, 1536]);  addmm_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_8: "bf16[8, 14, 14, 1536]" = torch.ops.aten.gelu.default(view_41);  view_41 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_16: "bf16[8, 14, 14, 1536]" = torch.ops.aten.clone.default(gelu_8);  gelu_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_87: "bf16[384]" = torch.ops.aten._to_copy.default(arg92_1, dtype = torch.bfloat16);  arg92_1 = None
        _to_copy_88: "bf16[384, 1536]" = torch.ops.aten._to_copy.default(arg91_1, dtype = torch.bfloat16);  arg91_1 = None
        view_42: "bf16[1568, 1536]" = torch.ops.aten.view.default(clone_16, [1568, 1536]);  clone_16 = None
        t_17: "bf16[1536, 384]" = torch.ops.aten.t.default(_to_copy_88);  _to_copy_88 = None
        addmm_17: "bf16[1568, 384]" = torch.ops.aten.addmm.default(_to_copy_87, view_42, t_17);  _to_copy_87 = view_42 = t_17 = None
        view_43: "bf16[8, 14, 14, 384]" = torch.ops.aten.view.default(addmm_17, [8, 14, 14, 384]);  addmm_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_17: "bf16[8, 14, 14, 384]" = torch.ops.aten.clone.default(view_43);  view_43 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_23: "bf16[8, 384, 14, 14]" = torch.ops.aten.permute.default(clone_17, [0, 3, 1, 2]);  clone_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_44: "f32[1, 384, 1, 1]" = torch.ops.aten.view.default(arg93_1, [1, -1, 1, 1]);  arg93_1 = None
        mul_8: "f32[8, 384, 14, 14]" = torch.ops.aten.mul.Tensor(permute_23, view_44);  permute_23 = view_44 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_8: "f32[8, 384, 14, 14]" = torch.ops.aten.add.Tensor(mul_8, add_7);  mul_8 = add_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_89: "bf16[384]" = torch.ops.aten._to_copy.default(arg95_1, dtype = torch.bfloat16);  arg95_1 = None
        _to_copy_90: "bf16[384, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg94_1, dtype = torch.bfloat16);  arg94_1 = None
        _to_copy_91: "bf16[8, 384, 14, 14]" = torch.ops.aten._to_copy.default(add_8, dtype = torch.bfloat16)
        convolution_12: "bf16[8, 384, 14, 14]" = torch.ops.aten.convolution.default(_to_copy_91, _to_copy_90, _to_copy_89, [1, 1], [3, 3], [1, 1], False, [0, 0], 384);  _to_copy_91 = _to_copy_90 = _to_copy_89 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_24: "bf16[8, 14, 14, 384]" = torch.ops.aten.permute.default(convolution_12, [0, 2, 3, 1]);  convolution_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_92: "f32[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(permute_24, dtype = torch.float32);  permute_24 = None
        native_layer_norm_12 = torch.ops.aten.native_layer_norm.default(_to_copy_92, [384], arg96_1, arg97_1, 1e-06);  _to_copy_92 = arg96_1 = arg97_1 = None
        getitem_36: "f32[8, 14, 14, 384]" = native_layer_norm_12[0];  native_layer_norm_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_93: "bf16[1536]" = torch.ops.aten._to_copy.default(arg99_1, dtype = torch.bfloat16);  arg99_1 = None
        _to_copy_94: "bf16[1536, 384]" = torch.ops.aten._to_copy.default(arg98_1, dtype = torch.bfloat16);  arg98_1 = None
        _to_copy_95: "bf16[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(getitem_36, dtype = torch.bfloat16);  getitem_36 = None
        view_45: "bf16[1568, 384]" = torch.ops.aten.view.default(_to_copy_95, [1568, 384]);  _to_copy_95 = None
        t_18: "bf16[384, 1536]" = torch.ops.aten.t.default(_to_copy_94);  _to_copy_94 = None
        addmm_18: "bf16[1568, 1536]" = torch.ops.aten.addmm.default(_to_copy_93, view_45, t_18);  _to_copy_93 = view_45 = t_18 = None
        view_46: "bf16[8, 14, 14, 1536]" = torch.ops.aten.view.default(addmm_18, [8, 14, 14, 1536]);  addmm_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_9: "bf16[8, 14, 14, 1536]" = torch.ops.aten.gelu.default(view_46);  view_46 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_18: "bf16[8, 14, 14, 1536]" = torch.ops.aten.clone.default(gelu_9);  gelu_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_96: "bf16[384]" = torch.ops.aten._to_copy.default(arg101_1, dtype = torch.bfloat16);  arg101_1 = None
        _to_copy_97: "bf16[384, 1536]" = torch.ops.aten._to_copy.default(arg100_1, dtype = torch.bfloat16);  arg100_1 = None
        view_47: "bf16[1568, 1536]" = torch.ops.aten.view.default(clone_18, [1568, 1536]);  clone_18 = None
        t_19: "bf16[1536, 384]" = torch.ops.aten.t.default(_to_copy_97);  _to_copy_97 = None
        addmm_19: "bf16[1568, 384]" = torch.ops.aten.addmm.default(_to_copy_96, view_47, t_19);  _to_copy_96 = view_47 = t_19 = None
        view_48: "bf16[8, 14, 14, 384]" = torch.ops.aten.view.default(addmm_19, [8, 14, 14, 384]);  addmm_19 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_19: "bf16[8, 14, 14, 384]" = torch.ops.aten.clone.default(view_48);  view_48 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_25: "bf16[8, 384, 14, 14]" = torch.ops.aten.permute.default(clone_19, [0, 3, 1, 2]);  clone_19 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_49: "f32[1, 384, 1, 1]" = torch.ops.aten.view.default(arg102_1, [1, -1, 1, 1]);  arg102_1 = None
        mul_9: "f32[8, 384, 14, 14]" = torch.ops.aten.mul.Tensor(permute_25, view_49);  permute_25 = view_49 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_9: "f32[8, 384, 14, 14]" = torch.ops.aten.add.Tensor(mul_9, add_8);  mul_9 = add_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_98: "bf16[384]" = torch.ops.aten._to_copy.default(arg104_1, dtype = torch.bfloat16);  arg104_1 = None
        _to_copy_99: "bf16[384, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg103_1, dtype = torch.bfloat16);  arg103_1 = None
        _to_copy_100: "bf16[8, 384, 14, 14]" = torch.ops.aten._to_copy.default(add_9, dtype = torch.bfloat16)
        convolution_13: "bf16[8, 384, 14, 14]" = torch.ops.aten.convolution.default(_to_copy_100, _to_copy_99, _to_copy_98, [1, 1], [3, 3], [1, 1], False, [0, 0], 384);  _to_copy_100 = _to_copy_99 = _to_copy_98 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_26: "bf16[8, 14, 14, 384]" = torch.ops.aten.permute.default(convolution_13, [0, 2, 3, 1]);  convolution_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_101: "f32[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(permute_26, dtype = torch.float32);  permute_26 = None
        native_layer_norm_13 = torch.ops.aten.native_layer_norm.default(_to_copy_101, [384], arg105_1, arg106_1, 1e-06);  _to_copy_101 = arg105_1 = arg106_1 = None
        getitem_39: "f32[8, 14, 14, 384]" = native_layer_norm_13[0];  native_layer_norm_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_102: "bf16[1536]" = torch.ops.aten._to_copy.default(arg108_1, dtype = torch.bfloat16);  arg108_1 = None
        _to_copy_103: "bf16[1536, 384]" = torch.ops.aten._to_copy.default(arg107_1, dtype = torch.bfloat16);  arg107_1 = None
        _to_copy_104: "bf16[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(getitem_39, dtype = torch.bfloat16);  getitem_39 = None
        view_50: "bf16[1568, 384]" = torch.ops.aten.view.default(_to_copy_104, [1568, 384]);  _to_copy_104 = None
        t_20: "bf16[384, 1536]" = torch.ops.aten.t.default(_to_copy_103);  _to_copy_103 = None
        addmm_20: "bf16[1568, 1536]" = torch.ops.aten.addmm.default(_to_copy_102, view_50, t_20);  _to_copy_102 = view_50 = t_20 = None
        view_51: "bf16[8, 14, 14, 1536]" = torch.ops.aten.view.default(addmm_20, [8, 14, 14, 1536]);  addmm_20 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_10: "bf16[8, 14, 14, 1536]" = torch.ops.aten.gelu.default(view_51);  view_51 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_20: "bf16[8, 14, 14, 1536]" = torch.ops.aten.clone.default(gelu_10);  gelu_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_105: "bf16[384]" = torch.ops.aten._to_copy.default(arg110_1, dtype = torch.bfloat16);  arg110_1 = None
        _to_copy_106: "bf16[384, 1536]" = torch.ops.aten._to_copy.default(arg109_1, dtype = torch.bfloat16);  arg109_1 = None
        view_52: "bf16[1568, 1536]" = torch.ops.aten.view.default(clone_20, [1568, 1536]);  clone_20 = None
        t_21: "bf16[1536, 384]" = torch.ops.aten.t.default(_to_copy_106);  _to_copy_106 = None
        addmm_21: "bf16[1568, 384]" = torch.ops.aten.addmm.default(_to_copy_105, view_52, t_21);  _to_copy_105 = view_52 = t_21 = None
        view_53: "bf16[8, 14, 14, 384]" = torch.ops.aten.view.default(addmm_21, [8, 14, 14, 384]);  addmm_21 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_21: "bf16[8, 14, 14, 384]" = torch.ops.aten.clone.default(view_53);  view_53 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_27: "bf16[8, 384, 14, 14]" = torch.ops.aten.permute.default(clone_21, [0, 3, 1, 2]);  clone_21 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_54: "f32[1, 384, 1, 1]" = torch.ops.aten.view.default(arg111_1, [1, -1, 1, 1]);  arg111_1 = None
        mul_10: "f32[8, 384, 14, 14]" = torch.ops.aten.mul.Tensor(permute_27, view_54);  permute_27 = view_54 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_10: "f32[8, 384, 14, 14]" = torch.ops.aten.add.Tensor(mul_10, add_9);  mul_10 = add_9 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_107: "bf16[384]" = torch.ops.aten._to_copy.default(arg113_1, dtype = torch.bfloat16);  arg113_1 = None
        _to_copy_108: "bf16[384, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg112_1, dtype = torch.bfloat16);  arg112_1 = None
        _to_copy_109: "bf16[8, 384, 14, 14]" = torch.ops.aten._to_copy.default(add_10, dtype = torch.bfloat16)
        convolution_14: "bf16[8, 384, 14, 14]" = torch.ops.aten.convolution.default(_to_copy_109, _to_copy_108, _to_copy_107, [1, 1], [3, 3], [1, 1], False, [0, 0], 384);  _to_copy_109 = _to_copy_108 = _to_copy_107 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_28: "bf16[8, 14, 14, 384]" = torch.ops.aten.permute.default(convolution_14, [0, 2, 3, 1]);  convolution_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_110: "f32[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(permute_28, dtype = torch.float32);  permute_28 = None
        native_layer_norm_14 = torch.ops.aten.native_layer_norm.default(_to_copy_110, [384], arg114_1, arg115_1, 1e-06);  _to_copy_110 = arg114_1 = arg115_1 = None
        getitem_42: "f32[8, 14, 14, 384]" = native_layer_norm_14[0];  native_layer_norm_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_111: "bf16[1536]" = torch.ops.aten._to_copy.default(arg117_1, dtype = torch.bfloat16);  arg117_1 = None
        _to_copy_112: "bf16[1536, 384]" = torch.ops.aten._to_copy.default(arg116_1, dtype = torch.bfloat16);  arg116_1 = None
        _to_copy_113: "bf16[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(getitem_42, dtype = torch.bfloat16);  getitem_42 = None
        view_55: "bf16[1568, 384]" = torch.ops.aten.view.default(_to_copy_113, [1568, 384]);  _to_copy_113 = None
        t_22: "bf16[384, 1536]" = torch.ops.aten.t.default(_to_copy_112);  _to_copy_112 = None
        addmm_22: "bf16[1568, 1536]" = torch.ops.aten.addmm.default(_to_copy_111, view_55, t_22);  _to_copy_111 = view_55 = t_22 = None
        view_56: "bf16[8, 14, 14, 1536]" = torch.ops.aten.view.default(addmm_22, [8, 14, 14, 1536]);  addmm_22 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_11: "bf16[8, 14, 14, 1536]" = torch.ops.aten.gelu.default(view_56);  view_56 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_22: "bf16[8, 14, 14, 1536]" = torch.ops.aten.clone.default(gelu_11);  gelu_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_114: "bf16[384]" = torch.ops.aten._to_copy.default(arg119_1, dtype = torch.bfloat16);  arg119_1 = None
        _to_copy_115: "bf16[384, 1536]" = torch.ops.aten._to_copy.default(arg118_1, dtype = torch.bfloat16);  arg118_1 = None
        view_57: "bf16[1568, 1536]" = torch.ops.aten.view.default(clone_22, [1568, 1536]);  clone_22 = None
        t_23: "bf16[1536, 384]" = torch.ops.aten.t.default(_to_copy_115);  _to_copy_115 = None
        addmm_23: "bf16[1568, 384]" = torch.ops.aten.addmm.default(_to_copy_114, view_57, t_23);  _to_copy_114 = view_57 = t_23 = None
        view_58: "bf16[8, 14, 14, 384]" = torch.ops.aten.view.default(addmm_23, [8, 14, 14, 384]);  addmm_23 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_23: "bf16[8, 14, 14, 384]" = torch.ops.aten.clone.default(view_58);  view_58 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_29: "bf16[8, 384, 14, 14]" = torch.ops.aten.permute.default(clone_23, [0, 3, 1, 2]);  clone_23 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_59: "f32[1, 384, 1, 1]" = torch.ops.aten.view.default(arg120_1, [1, -1, 1, 1]);  arg120_1 = None
        mul_11: "f32[8, 384, 14, 14]" = torch.ops.aten.mul.Tensor(permute_29, view_59);  permute_29 = view_59 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_11: "f32[8, 384, 14, 14]" = torch.ops.aten.add.Tensor(mul_11, add_10);  mul_11 = add_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_116: "bf16[384]" = torch.ops.aten._to_copy.default(arg122_1, dtype = torch.bfloat16);  arg122_1 = None
        _to_copy_117: "bf16[384, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg121_1, dtype = torch.bfloat16);  arg121_1 = None
        _to_copy_118: "bf16[8, 384, 14, 14]" = torch.ops.aten._to_copy.default(add_11, dtype = torch.bfloat16)
        convolution_15: "bf16[8, 384, 14, 14]" = torch.ops.aten.convolution.default(_to_copy_118, _to_copy_117, _to_copy_116, [1, 1], [3, 3], [1, 1], False, [0, 0], 384);  _to_copy_118 = _to_copy_117 = _to_copy_116 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_30: "bf16[8, 14, 14, 384]" = torch.ops.aten.permute.default(convolution_15, [0, 2, 3, 1]);  convolution_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_119: "f32[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(permute_30, dtype = torch.float32);  permute_30 = None
        native_layer_norm_15 = torch.ops.aten.native_layer_norm.default(_to_copy_119, [384], arg123_1, arg124_1, 1e-06);  _to_copy_119 = arg123_1 = arg124_1 = None
        getitem_45: "f32[8, 14, 14, 384]" = native_layer_norm_15[0];  native_layer_norm_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_120: "bf16[1536]" = torch.ops.aten._to_copy.default(arg126_1, dtype = torch.bfloat16);  arg126_1 = None
        _to_copy_121: "bf16[1536, 384]" = torch.ops.aten._to_copy.default(arg125_1, dtype = torch.bfloat16);  arg125_1 = None
        _to_copy_122: "bf16[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(getitem_45, dtype = torch.bfloat16);  getitem_45 = None
        view_60: "bf16[1568, 384]" = torch.ops.aten.view.default(_to_copy_122, [1568, 384]);  _to_copy_122 = None
        t_24: "bf16[384, 1536]" = torch.ops.aten.t.default(_to_copy_121);  _to_copy_121 = None
        addmm_24: "bf16[1568, 1536]" = torch.ops.aten.addmm.default(_to_copy_120, view_60, t_24);  _to_copy_120 = view_60 = t_24 = None
        view_61: "bf16[8, 14, 14, 1536]" = torch.ops.aten.view.default(addmm_24, [8, 14, 14, 1536]);  addmm_24 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_12: "bf16[8, 14, 14, 1536]" = torch.ops.aten.gelu.default(view_61);  view_61 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_24: "bf16[8, 14, 14, 1536]" = torch.ops.aten.clone.default(gelu_12);  gelu_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_123: "bf16[384]" = torch.ops.aten._to_copy.default(arg128_1, dtype = torch.bfloat16);  arg128_1 = None
        _to_copy_124: "bf16[384, 1536]" = torch.ops.aten._to_copy.default(arg127_1, dtype = torch.bfloat16);  arg127_1 = None
        view_62: "bf16[1568, 1536]" = torch.ops.aten.view.default(clone_24, [1568, 1536]);  clone_24 = None
        t_25: "bf16[1536, 384]" = torch.ops.aten.t.default(_to_copy_124);  _to_copy_124 = None
        addmm_25: "bf16[1568, 384]" = torch.ops.aten.addmm.default(_to_copy_123, view_62, t_25);  _to_copy_123 = view_62 = t_25 = None
        view_63: "bf16[8, 14, 14, 384]" = torch.ops.aten.view.default(addmm_25, [8, 14, 14, 384]);  addmm_25 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_25: "bf16[8, 14, 14, 384]" = torch.ops.aten.clone.default(view_63);  view_63 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_31: "bf16[8, 384, 14, 14]" = torch.ops.aten.permute.default(clone_25, [0, 3, 1, 2]);  clone_25 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_64: "f32[1, 384, 1, 1]" = torch.ops.aten.view.default(arg129_1, [1, -1, 1, 1]);  arg129_1 = None
        mul_12: "f32[8, 384, 14, 14]" = torch.ops.aten.mul.Tensor(permute_31, view_64);  permute_31 = view_64 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_12: "f32[8, 384, 14, 14]" = torch.ops.aten.add.Tensor(mul_12, add_11);  mul_12 = add_11 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_125: "bf16[384]" = torch.ops.aten._to_copy.default(arg131_1, dtype = torch.bfloat16);  arg131_1 = None
        _to_copy_126: "bf16[384, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg130_1, dtype = torch.bfloat16);  arg130_1 = None
        _to_copy_127: "bf16[8, 384, 14, 14]" = torch.ops.aten._to_copy.default(add_12, dtype = torch.bfloat16)
        convolution_16: "bf16[8, 384, 14, 14]" = torch.ops.aten.convolution.default(_to_copy_127, _to_copy_126, _to_copy_125, [1, 1], [3, 3], [1, 1], False, [0, 0], 384);  _to_copy_127 = _to_copy_126 = _to_copy_125 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_32: "bf16[8, 14, 14, 384]" = torch.ops.aten.permute.default(convolution_16, [0, 2, 3, 1]);  convolution_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_128: "f32[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(permute_32, dtype = torch.float32);  permute_32 = None
        native_layer_norm_16 = torch.ops.aten.native_layer_norm.default(_to_copy_128, [384], arg132_1, arg133_1, 1e-06);  _to_copy_128 = arg132_1 = arg133_1 = None
        getitem_48: "f32[8, 14, 14, 384]" = native_layer_norm_16[0];  native_layer_norm_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_129: "bf16[1536]" = torch.ops.aten._to_copy.default(arg135_1, dtype = torch.bfloat16);  arg135_1 = None
        _to_copy_130: "bf16[1536, 384]" = torch.ops.aten._to_copy.default(arg134_1, dtype = torch.bfloat16);  arg134_1 = None
        _to_copy_131: "bf16[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(getitem_48, dtype = torch.bfloat16);  getitem_48 = None
        view_65: "bf16[1568, 384]" = torch.ops.aten.view.default(_to_copy_131, [1568, 384]);  _to_copy_131 = None
        t_26: "bf16[384, 1536]" = torch.ops.aten.t.default(_to_copy_130);  _to_copy_130 = None
        addmm_26: "bf16[1568, 1536]" = torch.ops.aten.addmm.default(_to_copy_129, view_65, t_26);  _to_copy_129 = view_65 = t_26 = None
        view_66: "bf16[8, 14, 14, 1536]" = torch.ops.aten.view.default(addmm_26, [8, 14, 14, 1536]);  addmm_26 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_13: "bf16[8, 14, 14, 1536]" = torch.ops.aten.gelu.default(view_66);  view_66 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_26: "bf16[8, 14, 14, 1536]" = torch.ops.aten.clone.default(gelu_13);  gelu_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_132: "bf16[384]" = torch.ops.aten._to_copy.default(arg137_1, dtype = torch.bfloat16);  arg137_1 = None
        _to_copy_133: "bf16[384, 1536]" = torch.ops.aten._to_copy.default(arg136_1, dtype = torch.bfloat16);  arg136_1 = None
        view_67: "bf16[1568, 1536]" = torch.ops.aten.view.default(clone_26, [1568, 1536]);  clone_26 = None
        t_27: "bf16[1536, 384]" = torch.ops.aten.t.default(_to_copy_133);  _to_copy_133 = None
        addmm_27: "bf16[1568, 384]" = torch.ops.aten.addmm.default(_to_copy_132, view_67, t_27);  _to_copy_132 = view_67 = t_27 = None
        view_68: "bf16[8, 14, 14, 384]" = torch.ops.aten.view.default(addmm_27, [8, 14, 14, 384]);  addmm_27 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_27: "bf16[8, 14, 14, 384]" = torch.ops.aten.clone.default(view_68);  view_68 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_33: "bf16[8, 384, 14, 14]" = torch.ops.aten.permute.default(clone_27, [0, 3, 1, 2]);  clone_27 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_69: "f32[1, 384, 1, 1]" = torch.ops.aten.view.default(arg138_1, [1, -1, 1, 1]);  arg138_1 = None
        mul_13: "f32[8, 384, 14, 14]" = torch.ops.aten.mul.Tensor(permute_33, view_69);  permute_33 = view_69 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_13: "f32[8, 384, 14, 14]" = torch.ops.aten.add.Tensor(mul_13, add_12);  mul_13 = add_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_134: "bf16[384]" = torch.ops.aten._to_copy.default(arg140_1, dtype = torch.bfloat16);  arg140_1 = None
        _to_copy_135: "bf16[384, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg139_1, dtype = torch.bfloat16);  arg139_1 = None
        _to_copy_136: "bf16[8, 384, 14, 14]" = torch.ops.aten._to_copy.default(add_13, dtype = torch.bfloat16)
        convolution_17: "bf16[8, 384, 14, 14]" = torch.ops.aten.convolution.default(_to_copy_136, _to_copy_135, _to_copy_134, [1, 1], [3, 3], [1, 1], False, [0, 0], 384);  _to_copy_136 = _to_copy_135 = _to_copy_134 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_34: "bf16[8, 14, 14, 384]" = torch.ops.aten.permute.default(convolution_17, [0, 2, 3, 1]);  convolution_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_137: "f32[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(permute_34, dtype = torch.float32);  permute_34 = None
        native_layer_norm_17 = torch.ops.aten.native_layer_norm.default(_to_copy_137, [384], arg141_1, arg142_1, 1e-06);  _to_copy_137 = arg141_1 = arg142_1 = None
        getitem_51: "f32[8, 14, 14, 384]" = native_layer_norm_17[0];  native_layer_norm_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_138: "bf16[1536]" = torch.ops.aten._to_copy.default(arg144_1, dtype = torch.bfloat16);  arg144_1 = None
        _to_copy_139: "bf16[1536, 384]" = torch.ops.aten._to_copy.default(arg143_1, dtype = torch.bfloat16);  arg143_1 = None
        _to_copy_140: "bf16[8, 14, 14, 384]" = torch.ops.aten._to_copy.default(getitem_51, dtype = torch.bfloat16);  getitem_51 = None
        view_70: "bf16[1568, 384]" = torch.ops.aten.view.default(_to_copy_140, [1568, 384]);  _to_copy_140 = None
        t_28: "bf16[384, 1536]" = torch.ops.aten.t.default(_to_copy_139);  _to_copy_139 = None
        addmm_28: "bf16[1568, 1536]" = torch.ops.aten.addmm.default(_to_copy_138, view_70, t_28);  _to_copy_138 = view_70 = t_28 = None
        view_71: "bf16[8, 14, 14, 1536]" = torch.ops.aten.view.default(addmm_28, [8, 14, 14, 1536]);  addmm_28 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_14: "bf16[8, 14, 14, 1536]" = torch.ops.aten.gelu.default(view_71);  view_71 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_28: "bf16[8, 14, 14, 1536]" = torch.ops.aten.clone.default(gelu_14);  gelu_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_141: "bf16[384]" = torch.ops.aten._to_copy.default(arg146_1, dtype = torch.bfloat16);  arg146_1 = None
        _to_copy_142: "bf16[384, 1536]" = torch.ops.aten._to_copy.default(arg145_1, dtype = torch.bfloat16);  arg145_1 = None
        view_72: "bf16[1568, 1536]" = torch.ops.aten.view.default(clone_28, [1568, 1536]);  clone_28 = None
        t_29: "bf16[1536, 384]" = torch.ops.aten.t.default(_to_copy_142);  _to_copy_142 = None
        addmm_29: "bf16[1568, 384]" = torch.ops.aten.addmm.default(_to_copy_141, view_72, t_29);  _to_copy_141 = view_72 = t_29 = None
        view_73: "bf16[8, 14, 14, 384]" = torch.ops.aten.view.default(addmm_29, [8, 14, 14, 384]);  addmm_29 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_29: "bf16[8, 14, 14, 384]" = torch.ops.aten.clone.default(view_73);  view_73 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_35: "bf16[8, 384, 14, 14]" = torch.ops.aten.permute.default(clone_29, [0, 3, 1, 2]);  clone_29 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_74: "f32[1, 384, 1, 1]" = torch.ops.aten.view.default(arg147_1, [1, -1, 1, 1]);  arg147_1 = None
        mul_14: "f32[8, 384, 14, 14]" = torch.ops.aten.mul.Tensor(permute_35, view_74);  permute_35 = view_74 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_14: "f32[8, 384, 14, 14]" = torch.ops.aten.add.Tensor(mul_14, add_13);  mul_14 = add_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:128 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_36: "f32[8, 14, 14, 384]" = torch.ops.aten.permute.default(add_14, [0, 2, 3, 1]);  add_14 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:132 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        native_layer_norm_18 = torch.ops.aten.native_layer_norm.default(permute_36, [384], arg148_1, arg149_1, 1e-06);  permute_36 = arg148_1 = arg149_1 = None
        getitem_54: "f32[8, 14, 14, 384]" = native_layer_norm_18[0];  native_layer_norm_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:133 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_37: "f32[8, 384, 14, 14]" = torch.ops.aten.permute.default(getitem_54, [0, 3, 1, 2]);  getitem_54 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:303 in forward, code: x = self.downsample(x)
        _to_copy_143: "bf16[768]" = torch.ops.aten._to_copy.default(arg151_1, dtype = torch.bfloat16);  arg151_1 = None
        _to_copy_144: "bf16[768, 384, 2, 2]" = torch.ops.aten._to_copy.default(arg150_1, dtype = torch.bfloat16);  arg150_1 = None
        _to_copy_145: "bf16[8, 384, 14, 14]" = torch.ops.aten._to_copy.default(permute_37, dtype = torch.bfloat16);  permute_37 = None
        convolution_18: "bf16[8, 768, 7, 7]" = torch.ops.aten.convolution.default(_to_copy_145, _to_copy_144, _to_copy_143, [2, 2], [0, 0], [1, 1], False, [0, 0], 1);  _to_copy_145 = _to_copy_144 = _to_copy_143 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_146: "bf16[768]" = torch.ops.aten._to_copy.default(arg153_1, dtype = torch.bfloat16);  arg153_1 = None
        _to_copy_147: "bf16[768, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg152_1, dtype = torch.bfloat16);  arg152_1 = None
        convolution_19: "bf16[8, 768, 7, 7]" = torch.ops.aten.convolution.default(convolution_18, _to_copy_147, _to_copy_146, [1, 1], [3, 3], [1, 1], False, [0, 0], 768);  _to_copy_147 = _to_copy_146 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_38: "bf16[8, 7, 7, 768]" = torch.ops.aten.permute.default(convolution_19, [0, 2, 3, 1]);  convolution_19 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_148: "f32[8, 7, 7, 768]" = torch.ops.aten._to_copy.default(permute_38, dtype = torch.float32);  permute_38 = None
        native_layer_norm_19 = torch.ops.aten.native_layer_norm.default(_to_copy_148, [768], arg154_1, arg155_1, 1e-06);  _to_copy_148 = arg154_1 = arg155_1 = None
        getitem_57: "f32[8, 7, 7, 768]" = native_layer_norm_19[0];  native_layer_norm_19 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_149: "bf16[3072]" = torch.ops.aten._to_copy.default(arg157_1, dtype = torch.bfloat16);  arg157_1 = None
        _to_copy_150: "bf16[3072, 768]" = torch.ops.aten._to_copy.default(arg156_1, dtype = torch.bfloat16);  arg156_1 = None
        _to_copy_151: "bf16[8, 7, 7, 768]" = torch.ops.aten._to_copy.default(getitem_57, dtype = torch.bfloat16);  getitem_57 = None
        view_75: "bf16[392, 768]" = torch.ops.aten.view.default(_to_copy_151, [392, 768]);  _to_copy_151 = None
        t_30: "bf16[768, 3072]" = torch.ops.aten.t.default(_to_copy_150);  _to_copy_150 = None
        addmm_30: "bf16[392, 3072]" = torch.ops.aten.addmm.default(_to_copy_149, view_75, t_30);  _to_copy_149 = view_75 = t_30 = None
        view_76: "bf16[8, 7, 7, 3072]" = torch.ops.aten.view.default(addmm_30, [8, 7, 7, 3072]);  addmm_30 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_15: "bf16[8, 7, 7, 3072]" = torch.ops.aten.gelu.default(view_76);  view_76 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_30: "bf16[8, 7, 7, 3072]" = torch.ops.aten.clone.default(gelu_15);  gelu_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_152: "bf16[768]" = torch.ops.aten._to_copy.default(arg159_1, dtype = torch.bfloat16);  arg159_1 = None
        _to_copy_153: "bf16[768, 3072]" = torch.ops.aten._to_copy.default(arg158_1, dtype = torch.bfloat16);  arg158_1 = None
        view_77: "bf16[392, 3072]" = torch.ops.aten.view.default(clone_30, [392, 3072]);  clone_30 = None
        t_31: "bf16[3072, 768]" = torch.ops.aten.t.default(_to_copy_153);  _to_copy_153 = None
        addmm_31: "bf16[392, 768]" = torch.ops.aten.addmm.default(_to_copy_152, view_77, t_31);  _to_copy_152 = view_77 = t_31 = None
        view_78: "bf16[8, 7, 7, 768]" = torch.ops.aten.view.default(addmm_31, [8, 7, 7, 768]);  addmm_31 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_31: "bf16[8, 7, 7, 768]" = torch.ops.aten.clone.default(view_78);  view_78 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_39: "bf16[8, 768, 7, 7]" = torch.ops.aten.permute.default(clone_31, [0, 3, 1, 2]);  clone_31 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_79: "f32[1, 768, 1, 1]" = torch.ops.aten.view.default(arg160_1, [1, -1, 1, 1]);  arg160_1 = None
        mul_15: "f32[8, 768, 7, 7]" = torch.ops.aten.mul.Tensor(permute_39, view_79);  permute_39 = view_79 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_15: "f32[8, 768, 7, 7]" = torch.ops.aten.add.Tensor(mul_15, convolution_18);  mul_15 = convolution_18 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_154: "bf16[768]" = torch.ops.aten._to_copy.default(arg162_1, dtype = torch.bfloat16);  arg162_1 = None
        _to_copy_155: "bf16[768, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg161_1, dtype = torch.bfloat16);  arg161_1 = None
        _to_copy_156: "bf16[8, 768, 7, 7]" = torch.ops.aten._to_copy.default(add_15, dtype = torch.bfloat16)
        convolution_20: "bf16[8, 768, 7, 7]" = torch.ops.aten.convolution.default(_to_copy_156, _to_copy_155, _to_copy_154, [1, 1], [3, 3], [1, 1], False, [0, 0], 768);  _to_copy_156 = _to_copy_155 = _to_copy_154 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_40: "bf16[8, 7, 7, 768]" = torch.ops.aten.permute.default(convolution_20, [0, 2, 3, 1]);  convolution_20 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_157: "f32[8, 7, 7, 768]" = torch.ops.aten._to_copy.default(permute_40, dtype = torch.float32);  permute_40 = None
        native_layer_norm_20 = torch.ops.aten.native_layer_norm.default(_to_copy_157, [768], arg163_1, arg164_1, 1e-06);  _to_copy_157 = arg163_1 = arg164_1 = None
        getitem_60: "f32[8, 7, 7, 768]" = native_layer_norm_20[0];  native_layer_norm_20 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_158: "bf16[3072]" = torch.ops.aten._to_copy.default(arg166_1, dtype = torch.bfloat16);  arg166_1 = None
        _to_copy_159: "bf16[3072, 768]" = torch.ops.aten._to_copy.default(arg165_1, dtype = torch.bfloat16);  arg165_1 = None
        _to_copy_160: "bf16[8, 7, 7, 768]" = torch.ops.aten._to_copy.default(getitem_60, dtype = torch.bfloat16);  getitem_60 = None
        view_80: "bf16[392, 768]" = torch.ops.aten.view.default(_to_copy_160, [392, 768]);  _to_copy_160 = None
        t_32: "bf16[768, 3072]" = torch.ops.aten.t.default(_to_copy_159);  _to_copy_159 = None
        addmm_32: "bf16[392, 3072]" = torch.ops.aten.addmm.default(_to_copy_158, view_80, t_32);  _to_copy_158 = view_80 = t_32 = None
        view_81: "bf16[8, 7, 7, 3072]" = torch.ops.aten.view.default(addmm_32, [8, 7, 7, 3072]);  addmm_32 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_16: "bf16[8, 7, 7, 3072]" = torch.ops.aten.gelu.default(view_81);  view_81 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_32: "bf16[8, 7, 7, 3072]" = torch.ops.aten.clone.default(gelu_16);  gelu_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_161: "bf16[768]" = torch.ops.aten._to_copy.default(arg168_1, dtype = torch.bfloat16);  arg168_1 = None
        _to_copy_162: "bf16[768, 3072]" = torch.ops.aten._to_copy.default(arg167_1, dtype = torch.bfloat16);  arg167_1 = None
        view_82: "bf16[392, 3072]" = torch.ops.aten.view.default(clone_32, [392, 3072]);  clone_32 = None
        t_33: "bf16[3072, 768]" = torch.ops.aten.t.default(_to_copy_162);  _to_copy_162 = None
        addmm_33: "bf16[392, 768]" = torch.ops.aten.addmm.default(_to_copy_161, view_82, t_33);  _to_copy_161 = view_82 = t_33 = None
        view_83: "bf16[8, 7, 7, 768]" = torch.ops.aten.view.default(addmm_33, [8, 7, 7, 768]);  addmm_33 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_33: "bf16[8, 7, 7, 768]" = torch.ops.aten.clone.default(view_83);  view_83 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_41: "bf16[8, 768, 7, 7]" = torch.ops.aten.permute.default(clone_33, [0, 3, 1, 2]);  clone_33 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_84: "f32[1, 768, 1, 1]" = torch.ops.aten.view.default(arg169_1, [1, -1, 1, 1]);  arg169_1 = None
        mul_16: "f32[8, 768, 7, 7]" = torch.ops.aten.mul.Tensor(permute_41, view_84);  permute_41 = view_84 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_16: "f32[8, 768, 7, 7]" = torch.ops.aten.add.Tensor(mul_16, add_15);  mul_16 = add_15 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:201 in forward, code: x = self.conv_dw(x)
        _to_copy_163: "bf16[768]" = torch.ops.aten._to_copy.default(arg171_1, dtype = torch.bfloat16);  arg171_1 = None
        _to_copy_164: "bf16[768, 1, 7, 7]" = torch.ops.aten._to_copy.default(arg170_1, dtype = torch.bfloat16);  arg170_1 = None
        _to_copy_165: "bf16[8, 768, 7, 7]" = torch.ops.aten._to_copy.default(add_16, dtype = torch.bfloat16)
        convolution_21: "bf16[8, 768, 7, 7]" = torch.ops.aten.convolution.default(_to_copy_165, _to_copy_164, _to_copy_163, [1, 1], [3, 3], [1, 1], False, [0, 0], 768);  _to_copy_165 = _to_copy_164 = _to_copy_163 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:206 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_42: "bf16[8, 7, 7, 768]" = torch.ops.aten.permute.default(convolution_21, [0, 2, 3, 1]);  convolution_21 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:89 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        _to_copy_166: "f32[8, 7, 7, 768]" = torch.ops.aten._to_copy.default(permute_42, dtype = torch.float32);  permute_42 = None
        native_layer_norm_21 = torch.ops.aten.native_layer_norm.default(_to_copy_166, [768], arg172_1, arg173_1, 1e-06);  _to_copy_166 = arg172_1 = arg173_1 = None
        getitem_63: "f32[8, 7, 7, 768]" = native_layer_norm_21[0];  native_layer_norm_21 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:48 in forward, code: x = self.fc1(x)
        _to_copy_167: "bf16[3072]" = torch.ops.aten._to_copy.default(arg175_1, dtype = torch.bfloat16);  arg175_1 = None
        _to_copy_168: "bf16[3072, 768]" = torch.ops.aten._to_copy.default(arg174_1, dtype = torch.bfloat16);  arg174_1 = None
        _to_copy_169: "bf16[8, 7, 7, 768]" = torch.ops.aten._to_copy.default(getitem_63, dtype = torch.bfloat16);  getitem_63 = None
        view_85: "bf16[392, 768]" = torch.ops.aten.view.default(_to_copy_169, [392, 768]);  _to_copy_169 = None
        t_34: "bf16[768, 3072]" = torch.ops.aten.t.default(_to_copy_168);  _to_copy_168 = None
        addmm_34: "bf16[392, 3072]" = torch.ops.aten.addmm.default(_to_copy_167, view_85, t_34);  _to_copy_167 = view_85 = t_34 = None
        view_86: "bf16[8, 7, 7, 3072]" = torch.ops.aten.view.default(addmm_34, [8, 7, 7, 3072]);  addmm_34 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/activations.py:145 in forward, code: return F.gelu(input)
        gelu_17: "bf16[8, 7, 7, 3072]" = torch.ops.aten.gelu.default(view_86);  view_86 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:50 in forward, code: x = self.drop1(x)
        clone_34: "bf16[8, 7, 7, 3072]" = torch.ops.aten.clone.default(gelu_17);  gelu_17 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:52 in forward, code: x = self.fc2(x)
        _to_copy_170: "bf16[768]" = torch.ops.aten._to_copy.default(arg177_1, dtype = torch.bfloat16);  arg177_1 = None
        _to_copy_171: "bf16[768, 3072]" = torch.ops.aten._to_copy.default(arg176_1, dtype = torch.bfloat16);  arg176_1 = None
        view_87: "bf16[392, 3072]" = torch.ops.aten.view.default(clone_34, [392, 3072]);  clone_34 = None
        t_35: "bf16[3072, 768]" = torch.ops.aten.t.default(_to_copy_171);  _to_copy_171 = None
        addmm_35: "bf16[392, 768]" = torch.ops.aten.addmm.default(_to_copy_170, view_87, t_35);  _to_copy_170 = view_87 = t_35 = None
        view_88: "bf16[8, 7, 7, 768]" = torch.ops.aten.view.default(addmm_35, [8, 7, 7, 768]);  addmm_35 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/mlp.py:53 in forward, code: x = self.drop2(x)
        clone_35: "bf16[8, 7, 7, 768]" = torch.ops.aten.clone.default(view_88);  view_88 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:209 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_43: "bf16[8, 768, 7, 7]" = torch.ops.aten.permute.default(clone_35, [0, 3, 1, 2]);  clone_35 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:211 in forward, code: x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        view_89: "f32[1, 768, 1, 1]" = torch.ops.aten.view.default(arg178_1, [1, -1, 1, 1]);  arg178_1 = None
        mul_17: "f32[8, 768, 7, 7]" = torch.ops.aten.mul.Tensor(permute_43, view_89);  permute_43 = view_89 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/models/convnext.py:213 in forward, code: x = self.drop_path(x) + self.shortcut(shortcut)
        add_17: "f32[8, 768, 7, 7]" = torch.ops.aten.add.Tensor(mul_17, add_16);  mul_17 = add_16 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/adaptive_avgmax_pool.py:172 in forward, code: x = self.pool(x)
        mean: "f32[8, 768, 1, 1]" = torch.ops.aten.mean.dim(add_17, [-1, -2], True);  add_17 = None
        as_strided: "f32[8, 768, 1, 1]" = torch.ops.aten.as_strided.default(mean, [8, 768, 1, 1], [768, 1, 768, 768]);  mean = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:128 in forward, code: x = x.permute(0, 2, 3, 1)
        permute_44: "f32[8, 1, 1, 768]" = torch.ops.aten.permute.default(as_strided, [0, 2, 3, 1]);  as_strided = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:132 in forward, code: x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        native_layer_norm_22 = torch.ops.aten.native_layer_norm.default(permute_44, [768], arg179_1, arg180_1, 1e-06);  permute_44 = arg179_1 = arg180_1 = None
        getitem_66: "f32[8, 1, 1, 768]" = native_layer_norm_22[0];  native_layer_norm_22 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/norm.py:133 in forward, code: x = x.permute(0, 3, 1, 2)
        permute_45: "f32[8, 768, 1, 1]" = torch.ops.aten.permute.default(getitem_66, [0, 3, 1, 2]);  getitem_66 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/classifier.py:237 in forward, code: x = self.flatten(x)
        view_90: "f32[8, 768]" = torch.ops.aten.view.default(permute_45, [8, 768]);  permute_45 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/classifier.py:239 in forward, code: x = self.drop(x)
        clone_36: "f32[8, 768]" = torch.ops.aten.clone.default(view_90);  view_90 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/timm/layers/classifier.py:242 in forward, code: x = self.fc(x)
        _to_copy_172: "bf16[1000]" = torch.ops.aten._to_copy.default(arg182_1, dtype = torch.bfloat16);  arg182_1 = None
        _to_copy_173: "bf16[1000, 768]" = torch.ops.aten._to_copy.default(arg181_1, dtype = torch.bfloat16);  arg181_1 = None
        _to_copy_174: "bf16[8, 768]" = torch.ops.aten._to_copy.default(clone_36, dtype = torch.bfloat16);  clone_36 = None
        t_36: "bf16[768, 1000]" = torch.ops.aten.t.default(_to_copy_173);  _to_copy_173 = None
        addmm_36: "bf16[8, 1000]" = torch.ops.aten.addmm.default(_to_copy_172, _to_copy_174, t_36);  _to_copy_172 = _to_copy_174 = t_36 = None
        return (addmm_36,)
