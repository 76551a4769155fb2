#!/usr/bin/python3
"""One-op PyTorch modules exported to ONNX (opset 13) and checked with `weft run`: which ops and
forms of ops unseen models bring does weft refuse or get wrong? Run by hand (Debian's
python3-torch and python3-onnx); never by the tests.

    /usr/bin/python3 scripts/survey_ops.py OUT_DIR [NAME ...]            export
    /usr/bin/python3 scripts/survey_ops.py --check WEFT OUT_DIR [NAME ...] run and compare

Per case NAME: NAME.onnx, NAME.in0.bin (the input) and NAME.out0.bin (PyTorch's output; int64
for argmax); --check prints per case "ok" / "WRONG" with max |weft - torch| / max(1, max |torch|)
(ok below 1e-4), or the line weft refused it with.
"""
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
class M(nn.Module):
    def __init__(s, f, mods=None):
        super().__init__(); s.f=f; s.m=nn.ModuleList(mods or [])
    def forward(s, x): return s.f(s, x)
img=lambda: torch.randn(1,8,16,16)
seq=lambda: torch.randn(2,8,50)
cases = {
 "conv1d": (M(lambda s,x: s.m[0](x), [nn.Conv1d(8,16,3,padding=1)]), seq),
 "conv1d_stride_dil": (M(lambda s,x: s.m[0](x), [nn.Conv1d(8,16,5,stride=2,dilation=2,padding=4)]), seq),
 "conv1d_dw": (M(lambda s,x: s.m[0](x), [nn.Conv1d(8,8,3,padding=1,groups=8)]), seq),
 "maxpool1d": (M(lambda s,x: F.max_pool1d(x,2)), seq),
 "avgpool1d": (M(lambda s,x: F.avg_pool1d(x,3,stride=1,padding=1)), seq),
 "batchnorm1d": (M(lambda s,x: s.m[0](x), [nn.BatchNorm1d(8).eval()]), seq),
 "convtranspose1d": (M(lambda s,x: s.m[0](x), [nn.ConvTranspose1d(8,4,4,stride=2,padding=1)]), seq),
 "prelu": (M(lambda s,x: s.m[0](x), [nn.PReLU(8)]), img),
 "elu": (M(lambda s,x: F.elu(x)), img),
 "selu": (M(lambda s,x: F.selu(x)), img),
 "celu": (M(lambda s,x: F.celu(x)), img),
 "mish": (M(lambda s,x: F.mish(x)), img),
 "softsign": (M(lambda s,x: F.softsign(x)), img),
 "hardtanh": (M(lambda s,x: F.hardtanh(x)), img),
 "leaky": (M(lambda s,x: F.leaky_relu(x,0.2)), img),
 "instancenorm": (M(lambda s,x: s.m[0](x), [nn.InstanceNorm2d(8, affine=True)]), img),
 "groupnorm": (M(lambda s,x: s.m[0](x), [nn.GroupNorm(4,8)]), img),
 "layernorm_chw": (M(lambda s,x: s.m[0](x), [nn.LayerNorm([8,16,16])]), img),
 "pixelshuffle": (M(lambda s,x: F.pixel_shuffle(x,2)), img),
 "pixelunshuffle": (M(lambda s,x: F.pixel_unshuffle(x,2)), img),
 "argmax": (M(lambda s,x: x.argmax(1)), img),
 "max_dim": (M(lambda s,x: x.max(1)[0]), img),
 "topk": (M(lambda s,x: x.flatten(1).topk(5)[0]), img),
 "tile": (M(lambda s,x: x.repeat(1,2,1,1)), img),
 "sum3": (M(lambda s,x: torch.stack([x,x*2,x*3]).sum(0)), img),
 "einsum": (M(lambda s,x: torch.einsum('bchw,bdhw->bcd', x, x)), img),
 "bmm": (M(lambda s,x: torch.bmm(x.flatten(2), x.flatten(2).transpose(1,2))), img),
 "floor_ceil": (M(lambda s,x: torch.floor(x)+torch.ceil(x)+torch.round(x)), img),
 "sign_abs": (M(lambda s,x: torch.sign(x)*x.abs()), img),
 "clamp_min": (M(lambda s,x: x.clamp(min=0.1)), img),
 "sin_cos": (M(lambda s,x: torch.sin(x)+torch.cos(x)), img),
 "log_softmax": (M(lambda s,x: F.log_softmax(x,1)), img),
 "softmax_dim1": (M(lambda s,x: F.softmax(x,1)), img),
 "l2norm": (M(lambda s,x: F.normalize(x,dim=1)), img),
 "cumsum": (M(lambda s,x: x.cumsum(1)), img),
 "reduce_prod": (M(lambda s,x: x.prod(1)), img),
 "reduce_l2": (M(lambda s,x: x.norm(dim=1)), img),
 "logsumexp": (M(lambda s,x: torch.logsumexp(x,1)), img),
 "var": (M(lambda s,x: x.var(1)), img),
 "adaptive_avg": (M(lambda s,x: F.adaptive_avg_pool2d(x,(4,4))), img),
 "adaptive_max": (M(lambda s,x: F.adaptive_max_pool2d(x,(1,1))), img),
 "upsample_nearest": (M(lambda s,x: F.interpolate(x,scale_factor=2)), img),
 "gru_bf": (M(lambda s,x: s.m[0](x.flatten(2).transpose(1,2))[0], [nn.GRU(8,16,batch_first=True)]), img),
 "lstm_bf": (M(lambda s,x: s.m[0](x.flatten(2).transpose(1,2))[0], [nn.LSTM(8,16,batch_first=True, num_layers=2)]), img),
 "conv3d": (M(lambda s,x: s.m[0](x.unsqueeze(2)), [nn.Conv3d(8,4,(1,3,3),padding=(0,1,1))]), img),
 "where_mask": (M(lambda s,x: torch.where(x>0, x, torch.zeros_like(x))), img),
 "expand_as": (M(lambda s,x: x.mean((2,3),keepdim=True).expand_as(x)*x), img),
 "std": (M(lambda s,x: x.std(1)), img),
 "min_max_clip": (M(lambda s,x: torch.minimum(torch.maximum(x, -x*0.5), x*0.5+1)), img),
 "gelu_tanh": (M(lambda s,x: F.gelu(x, approximate='tanh')), img),
 "silu": (M(lambda s,x: F.silu(x)), img),
 "hardswish": (M(lambda s,x: F.hardswish(x)), img),
 "chunk": (M(lambda s,x: sum(x.chunk(4,1))), img),
 "flip": (M(lambda s,x: x.flip(3)), img),
 "roll": (M(lambda s,x: x.roll(3, 3)), img),
 "matmul_bcast": (M(lambda s,x: x @ s.m[0].weight, [nn.Linear(16, 16, bias=False)]), img),
 "sqrt_rsqrt": (M(lambda s,x: torch.rsqrt(x.abs()+1)), img),
 "reciprocal_div": (M(lambda s,x: 1.0/(x.abs()+1)), img),
 "bool_logic": (M(lambda s,x: ((x>0)&(x<1)|(x<-1)).float()*x), img),
 "pow_sq": (M(lambda s,x: x.pow(2)+x**3), img),
 # second batch: more forms exporters produce, and opsets 14-17
 "gather_elements": (M(lambda s,x: torch.gather(x, 1, x.abs().argsort(1)[:, :4])), img),
 "index_select": (M(lambda s,x: x.index_select(1, torch.tensor([0, 3, 5]))), img),
 "embedding": (M(lambda s,x: s.m[0]((x[:, 0, 0, :].abs()*3).long()), [nn.Embedding(50, 12)]), img),
 "masked_fill": (M(lambda s,x: x.masked_fill(x > 0.5, -1e4)), img),
 "triu": (M(lambda s,x: torch.triu(x)), img, 14),
 "tril_mask": (M(lambda s,x: x.masked_fill(torch.ones(16, 16).tril() == 0, float('-inf')).softmax(-1)), img, 14),
 "sort": (M(lambda s,x: x.sort(-1)[0]), img),
 "topk_axis1": (M(lambda s,x: x.topk(3, dim=1)[0]), img),
 "topk_idx": (M(lambda s,x: x.flatten(1).topk(5)[1].float()), img),
 "one_hot": (M(lambda s,x: F.one_hot((x[:, 0].abs()*2).long().clamp(max=7), 8).float()), img),
 "glu": (M(lambda s,x: F.glu(x, 1)), img),
 "hardshrink": (M(lambda s,x: F.hardshrink(x, 0.5)), img),
 "softshrink": (M(lambda s,x: F.softshrink(x, 0.5)), img),
 "tanhshrink": (M(lambda s,x: F.tanhshrink(x)), img),
 "logsigmoid": (M(lambda s,x: F.logsigmoid(x)), img),
 "lrn": (M(lambda s,x: F.local_response_norm(x, 5)), img),
 "unfold": (M(lambda s,x: F.unfold(x, 3, padding=1)), img),
 "avgpool_ceil": (M(lambda s,x: F.avg_pool2d(x, 3, stride=2, ceil_mode=True)), img),
 "avgpool_noinc": (M(lambda s,x: F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False)), img),
 "maxpool_dil": (M(lambda s,x: F.max_pool2d(x, 3, stride=1, dilation=2)), img),
 "maxpool_idx": (M(lambda s,x: F.max_pool2d(x, 2, return_indices=True)[1].float()), img),
 "bicubic": (M(lambda s,x: F.interpolate(x, scale_factor=2, mode='bicubic', align_corners=False)), img),
 "bilinear_ac": (M(lambda s,x: F.interpolate(x, size=(24, 20), mode='bilinear', align_corners=True)), img),
 "grid_sample": (M(lambda s,x: F.grid_sample(x, torch.tanh(x[:, :2].permute(0, 2, 3, 1)), align_corners=False)), img, 16),
 "pad_replicate": (M(lambda s,x: F.pad(x, (1, 2, 1, 2), mode='replicate')), img),
 "remainder": (M(lambda s,x: torch.remainder(x, 0.7) + torch.fmod(x, 0.7)), img),
 "floor_divide": (M(lambda s,x: torch.div(x, 0.3, rounding_mode='floor')), img),
 "amax_amin": (M(lambda s,x: x.amax((2, 3)) - x.amin((2, 3))), img),
 "any_all": (M(lambda s,x: (x > 0).any(1).float() + (x > -2).all(1).float()), img),
 "isnan_isinf": (M(lambda s,x: torch.isnan(torch.log(x)).float() + torch.isinf(x * 1e30 * 1e30).float()), img),
 "mish_softplus_big": (M(lambda s,x: F.mish(x * 40) + F.softplus(x * 60)), img),
 "trig": (M(lambda s,x: torch.atan(x) + torch.tan(x * 0.3) + torch.asin(x.clamp(-1, 1)) + torch.acos(x.clamp(-1, 1))), img),
 "log_variants": (M(lambda s,x: torch.log1p(x.abs()) + torch.log2(x.abs() + 1)), img),
 "xor": (M(lambda s,x: torch.logical_xor(x > 0, x < 0.5).float()), img),
 "mha": (M(lambda s,x: s.m[0](x.flatten(2).transpose(1, 2), x.flatten(2).transpose(1, 2), x.flatten(2).transpose(1, 2))[0],
           [nn.MultiheadAttention(8, 2, batch_first=True)]), img),
 "layernorm17": (M(lambda s,x: s.m[0](x.permute(0, 2, 3, 1)), [nn.LayerNorm(8)]), img, 17),
 "reduce_opset17": (M(lambda s,x: x.mean(1) + x.sum(2, keepdim=True).squeeze(2) + x.amax(3)), img, 17),
 "split_opset17": (M(lambda s,x: sum(x.split([2, 6], 1)[i].sum(1) for i in range(2))), img, 17),
 "hardswish17": (M(lambda s,x: F.hardswish(x) + F.hardsigmoid(x)), img, 17),
 "batchnorm17": (M(lambda s,x: s.m[0](x), [nn.BatchNorm2d(8).eval()]), img, 17),
 "group_norm17": (M(lambda s,x: s.m[0](x), [nn.GroupNorm(2, 8)]), img, 17),
 "repeat_interleave": (M(lambda s,x: x.repeat_interleave(2, dim=1)), img),
 "unflatten_permute": (M(lambda s,x: x.flatten(2).reshape(1, 8, 4, 64).permute(0, 3, 1, 2).contiguous()), img),
 "clamp_tensor": (M(lambda s,x: torch.clamp(x, min=x.mean(), max=x.max())), img),
 "std_mean": (M(lambda s,x: torch.std_mean(x, 1)[0] + torch.var_mean(x, (2, 3), unbiased=False)[1].unsqueeze(-1).unsqueeze(-1)), img),
 "conv3d_k3": (M(lambda s,x: s.m[0](x.unsqueeze(2).repeat(1, 1, 4, 1, 1)), [nn.Conv3d(8, 4, 3, padding=1)]), img),
 "maxpool3d": (M(lambda s,x: F.max_pool3d(x.unsqueeze(2).repeat(1, 1, 4, 1, 1), 2)), img),
 "avgpool3d_global": (M(lambda s,x: F.adaptive_avg_pool3d(x.unsqueeze(2).repeat(1, 1, 4, 1, 1), 1)), img),
 "convtranspose_grouped": (M(lambda s,x: s.m[0](x), [nn.ConvTranspose2d(8, 8, 3, stride=2, padding=1, output_padding=1, groups=4)]), img),
 "conv_grouped": (M(lambda s,x: s.m[0](x), [nn.Conv2d(8, 16, 3, padding=1, groups=2)]), img),
 "conv_asym_pad": (M(lambda s,x: s.m[0](F.pad(x, (0, 1, 0, 1))), [nn.Conv2d(8, 8, 3, stride=2)]), img),
 "conv_nobias_rect": (M(lambda s,x: s.m[0](x), [nn.Conv2d(8, 8, (1, 7), padding=(0, 3), bias=False)]), img),
 "conv_rect_stride": (M(lambda s,x: s.m[0](x), [nn.Conv2d(8, 12, (3, 5), stride=(2, 1), padding=(1, 2))]), img),
 "cumsum_rev": (M(lambda s,x: x.flip(1).cumsum(1).flip(1)), img),
 "expand_mul_int": (M(lambda s,x: x * torch.arange(16).float()), img),
 "layernorm_noaffine": (M(lambda s,x: F.layer_norm(x, (16,))), img),
 "instancenorm_noaffine": (M(lambda s,x: F.instance_norm(x)), img),
 "mean_var_norm": (M(lambda s,x: (x - x.mean((0, 2, 3), keepdim=True)) / (x.var((0, 2, 3), keepdim=True, unbiased=False) + 1e-5).sqrt()), img),
 "pow_frac": (M(lambda s,x: x.abs().pow(0.5) + x.abs().pow(1.7)), img),
 "sqrt_ints": (M(lambda s,x: x / torch.tensor(x.shape[-1]).float().sqrt()), img),
 "narrow_step": (M(lambda s,x: x[:, ::2, 1::3, 2:15:2]), img),
 "stack_unbind": (M(lambda s,x: torch.stack(x.unbind(1)[::-1], 1)), img),
 "cat_neg": (M(lambda s,x: torch.cat([x, -x], -1)), img),
 "softplus_beta": (M(lambda s,x: F.softplus(x * 20, beta=2)), img),
 "relu6": (M(lambda s,x: F.relu6(x * 4)), img),
 "rrelu_eval": (M(lambda s,x: F.rrelu(x, training=False)), img),
 # third batch: advanced indexing, scatters, distances and norms, cells, more resampling
 "adv_index": (M(lambda s,x: x[:, torch.tensor([0, 2, 5]), torch.tensor([1, 3, 7])]), img),
 "adv_index_runtime": (M(lambda s,x: x[0, (x[0, 0, 0, :4].abs() * 3).long() % 8]), img),
 "scatter_src": (M(lambda s,x: torch.zeros(1, 8, 16, 16).scatter(3, (x.abs() * 5).long() % 16, x)), img),
 # opset 16: at 13 PyTorch exports scatter_add as a ScatterElements without reduction (wrong with
 # repeats: ONNX Runtime and weft agree with each other, not with PyTorch); index_put(accumulate=True)
 # exports a ScatterND without reduction at any opset (the same), so it is not a case
 "scatter_add_const": (M(lambda s,x: torch.zeros(1, 8, 4, 16).scatter_add(2, torch.arange(16).remainder(4).expand(1, 8, 16, 16), x)), img, 16),
 "index_put": (M(lambda s,x: x.index_put((torch.tensor([0]), torch.tensor([1, 3])), torch.ones(2, 16, 16))), img),
 "normalize": (M(lambda s,x: F.normalize(x, dim=1)), img),
 "cosine_sim": (M(lambda s,x: F.cosine_similarity(x, x.flip(3), dim=1)), img),
 "pairwise_dist": (M(lambda s,x: F.pairwise_distance(x.flatten(2), x.flatten(2).flip(2))), img),
 "norm_p1": (M(lambda s,x: x.norm(p=1, dim=2)), img),
 "expm1_log1p": (M(lambda s,x: torch.log1p(x.abs()) + torch.expm1(x.clamp(max=2))), img),
 "atan2": (M(lambda s,x: torch.atan2(x, x.flip(3))), img),
 "lerp": (M(lambda s,x: torch.lerp(x, x.flip(2), 0.3)), img),
 "adaptive_avg_3x3": (M(lambda s,x: F.adaptive_avg_pool2d(x[..., :15, :15], 3)), img),
 "interp_area": (M(lambda s,x: F.interpolate(x, scale_factor=0.5, mode="area")), img),
 "upsample_1p5": (M(lambda s,x: F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=False)), img),
 "chunk_cat": (M(lambda s,x: torch.cat(x.chunk(4, 2)[::-1], 2)), img),
 "argsort": (M(lambda s,x: x.argsort(3).float()), img),
 "gru_cell": (M(lambda s,x: s.m[0](x[0, 0], x[0, 1, :, :8].contiguous()), [nn.GRUCell(16, 8)]), img),
 "lstm_cell": (M(lambda s,x: s.m[0](x[0, 0], (x[0, 1, :, :8].contiguous(), x[0, 2, :, :8].contiguous()))[1], [nn.LSTMCell(16, 8)]), img),
 "embedding_pad": (M(lambda s,x: s.m[0]((x[0, 0].abs() * 5).long() % 20), [nn.Embedding(20, 6, padding_idx=0)]), img),
 "cdist": (M(lambda s,x: torch.cdist(x[0].flatten(1), x[0].flatten(1).flip(1))), img),
 "masked_scatter_max": (M(lambda s,x: torch.maximum(x, x.mean((2, 3), keepdim=True))), img),
}


def export(out, names):
    os.makedirs(out, exist_ok=True)
    for n in names:
        m, inp = cases[n][:2]
        opset = cases[n][2] if len(cases[n]) > 2 else 13
        x = inp()
        try:
            p = os.path.join(out, n)
            torch.onnx.export(m.eval(), (x,), p + ".onnx", opset_version=opset, input_names=["in0"], output_names=["out0"])
            with torch.no_grad():
                y = m(x)
            x.numpy().tofile(p + ".in0.bin")
            (y if y.dtype == torch.int64 else y.float()).numpy().tofile(p + ".out0.bin")
            print(n, "ok", tuple(y.shape), y.dtype, flush=True)
        except Exception as e:  # noqa: BLE001  (the survey records export failures too)
            print(n, "EXPORT FAILED", str(e)[:100], flush=True)


def check(weft, out, names):
    for n in names:
        p = os.path.join(out, n)
        if not os.path.exists(p + ".onnx"):
            continue
        r = subprocess.run([weft, "run", p + ".onnx", "--input", "in0=" + p + ".in0.bin", "--output",
                            os.path.join(out, "out_" + n) + "/", "--threads", "1", "--repeat", "1"],
                           capture_output=True, text=True)
        if r.returncode:
            print("%-20s REFUSED: %s" % (n, (r.stderr.strip().splitlines() or ["?"])[-1][:150]))
            continue
        ref = np.fromfile(p + ".out0.bin", dtype=np.int64 if n == "argmax" else np.float32)
        got = np.fromfile(os.path.join(out, "out_" + n, "out0.bin"), dtype=ref.dtype)
        if got.size != ref.size:
            print("%-20s SIZE %d vs %d" % (n, got.size, ref.size))
            continue
        err = np.abs(got.astype(np.float64) - ref).max() / max(1, np.abs(ref).max())
        print("%-20s %s %.2e" % (n, "ok" if err < 1e-4 else "WRONG", err))


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--check":
        check(sys.argv[2], sys.argv[3], sys.argv[4:] or list(cases))
    elif len(sys.argv) > 1:
        export(sys.argv[1], sys.argv[2:] or list(cases))
    else:
        print(__doc__)
        sys.exit(2)
