#!/usr/bin/python3
"""Writes the ONNX op test models of tests/data/onnx_ops: one tiny model per op variant
(Resize, Upsample, Pad, ConvTranspose, HardSigmoid, HardSwish, MaxPool with ceil_mode,
Range, Dropout with its mask; 1-D Conv / ConvTranspose / MaxPool / AveragePool / global pools,
DepthToSpace, SpaceToDepth, InstanceNormalization and GroupNorm's export of it; Einsum;
3-D Conv / ConvTranspose / MaxPool / AveragePool and LRN;
Resize in modes nearest, linear and cubic; GridSample at opset 16; MaxUnpool), each with a fixed input and
PyTorch's output for it, checked by tests/model/test_onnx_ops.c. Run by hand; the tests and
the build never need Python.

    /usr/bin/python3 scripts/gen_onnx_ops.py [--out DIR] [NAME ...]

Per case NAME: NAME.onnx; NAME.input.bin (numpy.random.default_rng(0).standard_normal, float32)
and NAME.output.bin (PyTorch's output, eval mode, one thread), raw little-endian float32 in C
order (the token_attention_ids input is int64 token ids). Most models are torch.onnx.export (opset 13 unless the case says otherwise: 10 writes
Resize-10 and the attribute form of Pad, 14 writes HardSwish). Cases marked "hand" are
written with onnx.helper to reach attribute values PyTorch never exports; their reference
output still comes from the PyTorch op with the same meaning. Needs python3-torch and
python3-onnx (Debian 12).
"""
import argparse
import io
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "tests", "data", "onnx_ops")


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def convt(*args, **kw):
    def build():
        torch.manual_seed(0)
        return nn.ConvTranspose2d(*args, **kw)

    return build


def seeded(build):
    """build() with seeded random weights, and random affine parameters and BatchNorm running
    statistics (their defaults, ones and zeros, would hide a misplaced scale or shift)."""
    def wrapped():
        torch.manual_seed(0)
        m = build()
        with torch.no_grad():
            for mod in m.modules():
                if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm3d, nn.InstanceNorm1d, nn.InstanceNorm2d, nn.GroupNorm)):
                    if mod.weight is not None:
                        mod.weight.uniform_(0.5, 1.5)
                        mod.bias.uniform_(-0.5, 0.5)
                    if getattr(mod, "running_mean", None) is not None:
                        mod.running_mean.uniform_(-0.3, 0.3)
                        mod.running_var.uniform_(0.5, 1.5)
        return m

    return wrapped


def decoder():
    """A tiny decoder: Conv -> ReLU -> ConvTranspose(stride 2) -> HardSwish -> bilinear x2 ->
    reflect Pad -> Conv; exercises fusion around the new ops."""
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1), nn.Hardswish(),
        Fn(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)),
        Fn(lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect")), nn.Conv2d(4, 2, 3))


class TokenAttention(nn.Module):
    """Token ids (int64 input) -> embedding + positions -> one attention head with a padding
    mask derived from the ids (id 0 = padding: Equal, Where) -> LayerNorm."""

    def __init__(self, vocab=50, d=16, seq=8):
        super().__init__()
        torch.manual_seed(0)
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, seq, d))
        self.qkv = nn.Linear(d, 3 * d)
        self.ln = nn.LayerNorm(d)

    def forward(self, ids):
        x = self.tok(ids) + self.pos
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = (q @ k.transpose(-1, -2)) / 4.0
        att = att.masked_fill((ids == 0)[:, None, :], -1e4)
        return self.ln(x + att.softmax(-1) @ v)


# name -> (builder, input shape, opset); an input of dtype int64 is token ids in [0, 50) with
# the last two set to 0 (padding)
INT_INPUTS = {"token_attention_ids"}

class Ein(nn.Module):
    """torch.einsum(eq, x, other(x)) or, with a weight shape, einsum(eq, x, W) for a fixed W."""

    def __init__(self, eq, other=None, wshape=None):
        super().__init__()
        self.eq, self.other = eq, other
        g = torch.Generator().manual_seed(5)
        self.w = nn.Parameter(torch.randn(*wshape, generator=g)) if wshape else None

    def forward(self, x):
        if self.w is not None:
            return torch.einsum(self.eq, x, self.w)
        return torch.einsum(self.eq, x, self.other(x)) if self.other else torch.einsum(self.eq, x)


TORCH_CASES = {
    "resize_nearest_x2": (lambda: Fn(lambda x: F.interpolate(x, scale_factor=2, mode="nearest")), (1, 2, 4, 5), 13),
    "resize_nearest_x3_opset10": (lambda: Fn(lambda x: F.interpolate(x, scale_factor=3, mode="nearest")),
                                  (1, 2, 3, 4), 10),
    "resize_nearest_sizes": (lambda: Fn(lambda x: F.interpolate(x, size=(7, 11), mode="nearest")), (1, 3, 5, 4), 13),
    "resize_nearest_down": (lambda: Fn(lambda x: F.interpolate(x, size=(3, 2), mode="nearest")), (2, 2, 7, 5), 13),
    "resize_bilinear_x2": (lambda: Fn(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear")), (1, 3, 4, 5), 13),
    "resize_bilinear_sizes": (lambda: Fn(lambda x: F.interpolate(x, size=(9, 4), mode="bilinear")), (1, 2, 5, 7), 13),
    "resize_bilinear_align_corners": (
        lambda: Fn(lambda x: F.interpolate(x, size=(9, 11), mode="bilinear", align_corners=True)), (1, 2, 4, 6), 13),
    "resize_bilinear_ac_down": (
        lambda: Fn(lambda x: F.interpolate(x, size=(3, 1), mode="bilinear", align_corners=True)), (1, 2, 7, 6), 13),
    "resize_bicubic_x2": (lambda: Fn(lambda x: F.interpolate(x, scale_factor=2, mode="bicubic")), (1, 2, 4, 5), 13),
    "resize_bicubic_align_corners": (
        lambda: Fn(lambda x: F.interpolate(x, size=(7, 9), mode="bicubic", align_corners=True)), (1, 2, 4, 6), 13),
    "resize_bicubic_down": (lambda: Fn(lambda x: F.interpolate(x, size=(3, 4), mode="bicubic")), (1, 2, 7, 9), 13),
    "resize_trilinear_x2": (lambda: Fn(lambda x: F.interpolate(x, scale_factor=2, mode="trilinear")), (1, 2, 3, 4, 5), 13),
    "resize_trilinear_ac_sizes": (
        lambda: Fn(lambda x: F.interpolate(x, size=(4, 7, 2), mode="trilinear", align_corners=True)), (1, 2, 3, 5, 6), 13),
    "pad_constant": (lambda: Fn(lambda x: F.pad(x, (1, 2, 0, 3), value=0.5)), (1, 2, 3, 4), 13),
    "pad_constant_opset10": (lambda: Fn(lambda x: F.pad(x, (2, 0, 1, 1), value=-1.5)), (1, 2, 3, 4), 10),
    "pad_crop": (lambda: Fn(lambda x: F.pad(x, (-1, 2, 1, -2))), (1, 2, 5, 4), 13),
    "pad_reflect": (lambda: Fn(lambda x: F.pad(x, (2, 1, 3, 2), mode="reflect")), (1, 2, 4, 5), 13),
    "pad_edge": (lambda: Fn(lambda x: F.pad(x, (1, 3, 2, 0), mode="replicate")), (1, 2, 3, 4), 13),
    "convt_s2_p1_op1": (convt(4, 6, 3, stride=2, padding=1, output_padding=1), (1, 4, 5, 4), 13),
    "convt_group_dilation": (convt(4, 6, 3, stride=2, padding=2, dilation=2, groups=2, bias=False), (2, 4, 4, 5), 13),
    "convt_s1_rect": (convt(3, 5, (2, 3), stride=1, padding=0), (1, 3, 4, 4), 13),
    "convt_s3_asym": (convt(2, 3, (4, 2), stride=(3, 2), padding=(1, 0), output_padding=(2, 1)), (1, 2, 3, 3), 13),
    "convt_depthwise": (convt(4, 4, 3, stride=2, padding=1, groups=4), (1, 4, 4, 4), 13),
    # one input pixel (a generator's latent projection): a MatMul, the pads cropped
    "convt_single_pixel": (convt(8, 6, 4, stride=1, padding=0), (2, 8, 1, 1), 13),
    "convt_single_pixel_crop": (convt(5, 3, (4, 3), stride=2, padding=(1, 0)), (1, 5, 1, 1), 13),
    "convt3d_single_pixel": (seeded(lambda: nn.ConvTranspose3d(6, 4, (2, 3, 4), bias=False)), (2, 6, 1, 1, 1), 13),
    "maxpool_ceil": (lambda: nn.MaxPool2d(3, 2, ceil_mode=True), (1, 2, 8, 9), 13),
    "maxpool_ceil_pad": (lambda: nn.MaxPool2d(3, 2, padding=1, ceil_mode=True), (1, 2, 6, 7), 13),
    "maxpool_ceil_2x2": (lambda: nn.MaxPool2d(2, 2, ceil_mode=True), (1, 3, 5, 7), 13),
    # a last window that would start past the input is dropped (rows: 3 -> 2)
    "maxpool_ceil_drop": (lambda: nn.MaxPool2d(2, 3, ceil_mode=True), (1, 2, 6, 7), 13),
    "hardsigmoid": (lambda: nn.Hardsigmoid(), (2, 3, 4, 5), 13),
    "hardswish_opset14": (lambda: nn.Hardswish(), (2, 3, 4, 5), 14),
    "decoder_tiny": (decoder, (1, 3, 6, 6), 13),
    "token_attention_ids": (TokenAttention, (2, 8), 13),
    # Einsum (frontend/onnx_einsum.c): batch, contracted, free and summed labels, "...", a weight
    "einsum_attention": (lambda: Ein("bhid,bhjd->bhij", lambda x: x * 0.5 + 1), (2, 3, 5, 4), 13),
    "einsum_weight": (lambda: Ein("bld,dh->blh", wshape=(6, 7)), (2, 5, 6), 13),
    "einsum_ellipsis": (lambda: Ein("...ij,...kj->...ki", lambda x: x.flip(-1)), (2, 3, 4, 5), 13),
    "einsum_summed": (lambda: Ein("bij,bjk->kb", wshape=(2, 4, 3)), (2, 3, 4), 13),
    "einsum_single": (lambda: Ein("ijk->ki"), (3, 4, 5), 13),
    # 1-D ops: lifted to the 2-D op on [N, C, 1, W] at import
    "conv1d_pad": (seeded(lambda: nn.Conv1d(3, 4, 3, padding=1)), (2, 3, 10), 13),
    "conv1d_s2_d2": (seeded(lambda: nn.Conv1d(3, 5, 3, stride=2, dilation=2, padding=1)), (1, 3, 13), 13),
    "conv1d_depthwise": (seeded(lambda: nn.Conv1d(4, 4, 5, padding=2, groups=4)), (2, 4, 9), 13),
    "conv1d_bn_relu": (seeded(lambda: nn.Sequential(nn.Conv1d(3, 6, 3), nn.BatchNorm1d(6), nn.ReLU())),
                       (2, 3, 11), 13),
    "convt1d_s2": (seeded(lambda: nn.ConvTranspose1d(3, 2, 4, stride=2, padding=1)), (1, 3, 5), 13),
    "maxpool1d": (lambda: nn.MaxPool1d(3, 2), (1, 2, 11), 13),
    "maxpool1d_ceil": (lambda: nn.MaxPool1d(3, 2, ceil_mode=True), (1, 2, 10), 13),
    "avgpool1d_pad": (lambda: nn.AvgPool1d(3, 2, padding=1, count_include_pad=False), (1, 2, 10), 13),
    "avgpool1d_pad_incl": (lambda: nn.AvgPool1d(3, 2, padding=1, count_include_pad=True), (1, 2, 10), 13),
    "global_pool1d": (lambda: Fn(lambda x: F.adaptive_avg_pool1d(x, 1) + F.adaptive_max_pool1d(x, 1)), (2, 3, 7), 13),
    # DepthToSpace mode CRD; pixel_unshuffle exports Reshape + Transpose + Reshape itself
    "pixel_shuffle": (lambda: nn.PixelShuffle(2), (1, 8, 3, 4), 13),
    "pixel_unshuffle": (lambda: nn.PixelUnshuffle(2), (1, 2, 6, 4), 13),
    # InstanceNormalization
    "instancenorm2d": (seeded(lambda: nn.InstanceNorm2d(4, affine=True)), (2, 4, 5, 6), 13),
    "instancenorm1d": (seeded(lambda: nn.InstanceNorm1d(4)), (2, 4, 9), 13),
    "groupnorm": (seeded(lambda: nn.GroupNorm(4, 8)), (2, 8, 3, 5), 13),
    # TopK (ops/nn_topk.c): an axis that is not the last, indices (as floats), a full sort (K from
    # Shape, folded at import), the smallest with both outputs used
    "topk_dim1": (lambda: Fn(lambda x: x.topk(3, dim=1)[0]), (4, 16, 6), 13),
    "topk_flatten_indices": (lambda: Fn(lambda x: x.flatten(1).topk(5)[1].float()), (2, 8, 16), 13),
    "sort_last": (lambda: Fn(lambda x: x.sort(-1)[0]), (6, 40), 13),
    "topk_smallest_sum": (lambda: Fn(lambda x: x.topk(2, dim=-1, largest=False)[0] +
                                     x.topk(2, dim=-1, largest=False)[1].float()), (8, 50), 13),
    # 3-D convs and pools, LRN (frontend/onnx_conv3d.c)
    "conv3d_pad": (seeded(lambda: nn.Conv3d(3, 4, 3, padding=1)), (2, 3, 4, 5, 6), 13),
    "conv3d_s_d_g": (seeded(lambda: nn.Conv3d(4, 6, 3, stride=(1, 2, 2), dilation=(2, 1, 1), groups=2, bias=False)),
                     (1, 4, 7, 7, 8), 13),
    "conv3d_temporal": (seeded(lambda: nn.Conv3d(4, 5, (3, 1, 1), stride=(2, 1, 1), padding=(1, 0, 0))),
                        (1, 4, 6, 5, 5), 13),
    "conv3d_spatial": (seeded(lambda: nn.Conv3d(3, 4, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))),
                       (2, 3, 3, 7, 6), 13),
    "conv3d_bn_relu": (seeded(lambda: nn.Sequential(nn.Conv3d(3, 8, 3, padding=1, bias=False), nn.BatchNorm3d(8),
                                                    nn.ReLU())), (1, 3, 4, 6, 6), 13),
    "maxpool3d": (lambda: nn.MaxPool3d(2), (1, 3, 4, 6, 8), 13),
    "maxpool3d_s2_p1": (lambda: nn.MaxPool3d(3, 2, padding=1), (2, 2, 5, 7, 6), 13),
    "maxpool3d_ceil": (lambda: nn.MaxPool3d((2, 3, 3), (2, 2, 2), ceil_mode=True), (1, 2, 5, 8, 7), 13),
    "avgpool3d_incl": (lambda: nn.AvgPool3d(3, (1, 2, 2), padding=1, count_include_pad=True), (1, 3, 4, 6, 7), 13),
    "avgpool3d_excl": (lambda: nn.AvgPool3d(3, 2, padding=1, count_include_pad=False), (2, 2, 5, 6, 7), 13),
    "local_response_norm": (lambda: Fn(lambda x: torch_lrn(x, 5, alpha=0.5, beta=0.75, k=1.5)), (2, 7, 4, 5), 13),
    # weights computed at run time (from the input): the Transpose + Reshape path, not a new constant
    "conv3d_runtime_w": (lambda: Fn(lambda x: F.conv3d(x, x * 0.5, padding=(1, 2, 2))), (1, 2, 3, 5, 5), 13),
    # 3-D ConvTranspose: the sub-pixel rewrite onto the 3-D Conv rewrite (frontend/onnx_decompose.c)
    "convt3d_k2_s2": (seeded(lambda: nn.ConvTranspose3d(4, 3, 2, stride=2)), (1, 4, 3, 4, 5), 13),
    "convt3d_s_p_op_g": (seeded(lambda: nn.ConvTranspose3d(4, 6, (3, 4, 3), stride=(1, 2, 3), padding=(1, 1, 0),
                                                           output_padding=(0, 1, 2), groups=2)), (2, 4, 3, 3, 4), 13),
    # elementwise and index ops (ops/nn_elementwise.c, ops/nn_index.c): inverse trig as Cephes
    # polynomials, overflow-safe Softplus/Mish, Mod fmod=1, Xor, Trilu (opset 14), OneHot,
    # GatherElements with constant indices, Clip with run-time bounds
    "trig_inverse": (lambda: Fn(lambda x: torch.atan(x * 3) + torch.asin(x.clamp(-0.99, 0.99))
                                + torch.acos(x.clamp(-0.99, 0.99)) + torch.tan(x * 0.4)), (2, 3, 4, 5), 13),
    "mish_softsign_big": (lambda: Fn(lambda x: F.mish(x * 40) + F.softsign(x) + F.softplus(x * 60)), (2, 3, 4, 5), 13),
    "fmod_xor": (lambda: Fn(lambda x: torch.fmod(x, 0.7) + torch.logical_xor(x > 0, x < 0.5).float()), (2, 3, 4, 5), 13),
    "triu_tril": (lambda: Fn(lambda x: torch.triu(x, 1) + 2 * torch.tril(x, -1)), (2, 3, 5, 4), 14),
    "one_hot": (lambda: Fn(lambda x: F.one_hot((x.abs() * 2).long().clamp(max=5), 6).float() * 0.5), (2, 7), 13),
    "gather_elements": (lambda: Fn(lambda x: torch.gather(x, 2, torch.tensor([[[3, 0], [1, 1], [2, 3]]]).expand(2, 3, 2))),
                        (2, 3, 4), 13),
    # AveragePool with ceil_mode=1 (ResNet-D style shortcuts): the last window past the end,
    # its divisor counting the padding (count_include_pad=1) or only the input (0)
    "avgpool_ceil_incl": (lambda: nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=True), (1, 2, 8, 9), 13),
    "avgpool_ceil_excl": (lambda: nn.AvgPool2d(2, 2, ceil_mode=True, count_include_pad=False), (1, 3, 5, 7), 13),
    # PyTorch's own export: its squeeze(1) is an If on the rank, inlined at load time
    "local_response_norm_export": (lambda: Fn(lambda x: F.local_response_norm(x, 5, alpha=0.3, k=1.2)), (2, 7, 4, 5), 13),
    "clamp_tensor_bounds": (lambda: Fn(lambda x: torch.clamp(x, min=x.mean(), max=x.max() * 0.5)), (2, 3, 4, 5), 13),
    # GridSample (ops/nn_grid_sample.c): the grid is computed from the input (a run-time value),
    # tanh * 1.2 puts some points outside [-1, 1]; reflection gets raw values * 1.5 (several flips)
    "grid_sample_bilinear_zeros": (lambda: Fn(lambda x: F.grid_sample(x, grid_tanh(x), "bilinear", "zeros", False)),
                                   (1, 3, 5, 6), 16),
    "grid_sample_bilinear_border_ac": (
        lambda: Fn(lambda x: F.grid_sample(x, grid_tanh(x), "bilinear", "border", True)), (2, 3, 5, 6), 16),
    "grid_sample_nearest_zeros": (lambda: Fn(lambda x: F.grid_sample(x, grid_tanh(x), "nearest", "zeros", False)),
                                  (1, 3, 5, 6), 16),
    "grid_sample_nearest_reflection_ac": (
        lambda: Fn(lambda x: F.grid_sample(x, grid_wide(x), "nearest", "reflection", True)), (1, 3, 5, 6), 16),
    "grid_sample_reflection": (lambda: Fn(lambda x: F.grid_sample(x, grid_wide(x), "bilinear", "reflection", False)),
                               (1, 3, 5, 6), 16),
    "grid_sample_reflection_ac": (
        lambda: Fn(lambda x: F.grid_sample(x, grid_wide(x), "bilinear", "reflection", True)), (1, 3, 5, 6), 16),
    "grid_sample_bicubic_zeros": (lambda: Fn(lambda x: F.grid_sample(x, grid_tanh(x), "bicubic", "zeros", False)),
                                  (1, 3, 5, 6), 16),
    "grid_sample_bicubic_border_ac": (
        lambda: Fn(lambda x: F.grid_sample(x, grid_tanh(x), "bicubic", "border", True)), (2, 3, 5, 6), 16),
    "grid_sample_bicubic_reflection": (
        lambda: Fn(lambda x: F.grid_sample(x, grid_wide(x), "bicubic", "reflection", False)), (1, 3, 5, 6), 16),
    # MaxPool's Indices output (flattened over N, C, H, W; PyTorch's export subtracts each
    # plane's offset), with padding and stride, and with ceil_mode; returned as floats
    "maxpool_indices": (lambda: Fn(lambda x: torch.cat([r.float().flatten() for r in
                                                        F.max_pool2d(x, 3, 2, 1, return_indices=True)])),
                        (2, 3, 7, 8), 13),
    "maxpool_indices_ceil": (lambda: Fn(lambda x: F.max_pool2d(x, 2, 2, ceil_mode=True, return_indices=True)[1].float()),
                             (1, 2, 5, 7), 13),
    # torch.isinf / isnan export a Cast to float64 first (frontend/onnx.c drops it: exact for them)
    "isinf_isnan_cast": (lambda: Fn(lambda x: torch.isinf(x.exp() * 3e38).float() + 2 * torch.isnan(torch.log(x)).float()),
                         (2, 3, 4, 5), 13),
    # scatters (ops/nn_scatter.c): scatter_add with constant, repeated indices (ScatterElements
    # reduction add: opset 16), scatter of a permutation computed at run time (reduction none),
    # index_put at positions that are not a box (ScatterND with a plan)
    "scatter_add_repeats": (lambda: Fn(lambda x: torch.zeros(2, 3, 4).scatter_add(
        2, torch.tensor([3, 0, 3, 1, 0, 3]).expand(2, 3, 6), x)), (2, 3, 6), 16),
    "scatter_runtime_perm": (lambda: Fn(lambda x: torch.zeros_like(x).scatter(
        1, x.argsort(1), x * 2)), (2, 5, 3), 13),
    "index_put_points": (lambda: Fn(lambda x: x.index_put((torch.tensor([0, 1, 1]), torch.tensor([2, 0, 3])),
                                                          torch.tensor([[1.0] * 5, [2.0] * 5, [-3.0] * 5]))),
                         (2, 4, 5), 13),
    # output size other than the input's: the grid from rows 1..3 only ([1, 3, 6, 2])
    "grid_sample_bilinear_rows": (
        lambda: Fn(lambda x: F.grid_sample(x, torch.tanh(x[:, 1:3, 1:4].permute(0, 2, 3, 1)) * 1.2, "bilinear",
                                           "zeros", False)), (1, 4, 5, 6), 16),
}


def grid_tanh(x):
    """A [N, H, W, 2] grid from the first two channels, some points outside [-1, 1]."""
    return torch.tanh(x[:, :2].permute(0, 2, 3, 1)) * 1.2


def grid_wide(x):
    """A [N, H, W, 2] grid reaching about 4 spans out (reflection folds it several times)."""
    return x[:, :2].permute(0, 2, 3, 1) * 1.5


def torch_lrn(x, size, alpha, beta, k):
    """F.local_response_norm of a 4-D x as PyTorch 1.13 computes it (Pad + avg_pool3d over the
    channels), with its squeeze(1) written as the reshape that follows it anyway: exported, the
    squeeze becomes an If on the padded shape, which weft does not load."""
    sizes = x.size()
    div = x.mul(x).unsqueeze(1).view(sizes[0], 1, sizes[1], sizes[2], -1)
    div = F.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
    div = F.avg_pool3d(div, (size, 1, 1), stride=1).reshape(sizes)
    return x / div.mul(alpha).add(k).pow(beta)


def hand_resize(name, shape, out_shape, mode, coord, nearest, ref_fn, scales=None):
    """A Resize model written directly: input x of `shape`, constant scales or sizes."""
    inits = [numpy_helper.from_array(np.zeros(0, np.float32), "roi")]
    if scales is not None:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
        ins = ["x", "roi", "scales"]
    else:
        inits.append(numpy_helper.from_array(np.zeros(0, np.float32), "scales"))
        inits.append(numpy_helper.from_array(np.array(out_shape, np.int64), "sizes"))
        ins = ["x", "roi", "scales", "sizes"]
    node = helper.make_node("Resize", ins, ["y"], name="resize", mode=mode, coordinate_transformation_mode=coord,
                            nearest_mode=nearest)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), ref_fn


def lrn_ref(size, alpha, beta, bias):
    """ONNX LRN by its definition: x / (bias + alpha / size * sum of x^2 over channels
    [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]) ^ beta."""
    def ref(x):
        sq = x.double() ** 2
        lo, hi = (size - 1) // 2, size // 2
        s = torch.zeros_like(sq)
        for c in range(x.shape[1]):
            s[:, c] = sq[:, max(0, c - lo):min(x.shape[1], c + hi + 1)].sum(1)
        return (x.double() / (bias + alpha / size * s) ** beta).float()

    return ref


def hand_cases():
    # ONNX half_pixel (linear) equals PyTorch's align_corners=False when every output extent is > 1
    yield "resize_linear_half_pixel", (1, 2, 4, 6), *hand_resize(
        "resize_linear_half_pixel", (1, 2, 4, 6), (1, 2, 6, 9), "linear", "half_pixel", "floor",
        lambda x: F.interpolate(x, size=(6, 9), mode="bilinear", align_corners=False))
    # nearest with tf_half_pixel_for_nearest + floor is PyTorch's nearest-exact
    yield "resize_nearest_exact", (1, 2, 5, 4), *hand_resize(
        "resize_nearest_exact", (1, 2, 5, 4), (1, 2, 8, 7), "nearest", "tf_half_pixel_for_nearest", "floor",
        lambda x: F.interpolate(x, size=(8, 7), mode="nearest-exact"))
    # nearest, half_pixel, round_prefer_ceil with scale 2 picks the same pixels as nearest-exact
    yield "resize_nearest_half_pixel_ceil", (1, 1, 3, 4), *hand_resize(
        "resize_nearest_half_pixel_ceil", (1, 1, 3, 4), (1, 1, 6, 8), "nearest", "half_pixel", "round_prefer_ceil",
        lambda x: F.interpolate(x, scale_factor=2, mode="nearest-exact"), scales=[1, 1, 2, 2])
    # linear over one axis only (a 3-D tensor): PyTorch's linear 1-D interpolation
    model, _ = hand_resize("resize_linear_1d", (1, 3, 5), (1, 3, 8), "linear", "pytorch_half_pixel", "floor",
                           None)
    yield "resize_linear_1d", (1, 3, 5), model, lambda x: F.interpolate(x, size=8, mode="linear",
                                                                        align_corners=False)
    # Range with constant inputs (PyTorch folds its own aranges away)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 5))
    consts = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
              (("start", 0.25), ("limit", 2.6), ("delta", 0.5))]
    graph = helper.make_graph(
        [helper.make_node("Range", ["start", "limit", "delta"], ["r"], name="range"),
         helper.make_node("Add", ["x", "r"], ["y"], name="add")], "range_add", [x],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 5))], consts)
    yield "range_add", (2, 5), helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), \
        lambda t: t + torch.arange(0.25, 2.6, 0.5)
    # MaxPool's Indices into MaxUnpool (PyTorch 1.13 cannot export max_unpool2d): the default
    # output size (80 pooled elements: a loop kernel on CPUs), and output_shape restoring an odd
    # input size (5x7 pooled to 2x3: 18, the search over rows)
    for name, shape, given in (("maxunpool", (1, 4, 8, 10), False), ("maxunpool_output_shape", (1, 3, 5, 7), True)):
        x4 = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
        out_shape = shape if given else (shape[0], shape[1], shape[2] // 2 * 2, shape[3] // 2 * 2)
        inits = [numpy_helper.from_array(np.array(shape, np.int64), "oshape")] if given else []
        nodes = [helper.make_node("MaxPool", ["x"], ["p", "i"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
                 helper.make_node("MaxUnpool", ["p", "i"] + (["oshape"] if given else []), ["y"], name="unpool",
                                  kernel_shape=[2, 2], strides=[2, 2])]
        graph = helper.make_graph(nodes, name, [x4], [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
                                  inits)

        def unpool_ref(t, size=out_shape[2:]):
            p, i = F.max_pool2d(t, 2, return_indices=True)
            return F.max_unpool2d(p, i, 2, output_size=size)
        yield name, shape, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), unpool_ref
    # Dropout in training mode with ratio 0 and its mask asked for (Swin's functional dropout)
    consts = [numpy_helper.from_array(np.array(0.0, np.float32), "ratio"),
              numpy_helper.from_array(np.array(True), "training")]
    graph = helper.make_graph(
        [helper.make_node("Dropout", ["x", "ratio", "training"], ["d", "mask"], name="drop"),
         helper.make_node("Cast", ["mask"], ["m"], name="cast", to=TensorProto.FLOAT),
         helper.make_node("Mul", ["d", "m"], ["y"], name="mul")], "dropout_mask", [x],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 5))], consts)
    yield "dropout_mask", (2, 5), helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), \
        lambda t: t.clone()
    # DepthToSpace in mode DCR (PyTorch exports CRD) and SpaceToDepth (PyTorch writes Reshapes)
    for name, op, shape, ref in (
            ("depth_to_space_dcr", "DepthToSpace", (2, 12, 2, 3),
             lambda t: t.reshape(2, 2, 2, 3, 2, 3).permute(0, 3, 4, 1, 5, 2).reshape(2, 3, 4, 6)),
            ("space_to_depth", "SpaceToDepth", (1, 3, 4, 6),
             lambda t: t.reshape(1, 3, 2, 2, 3, 2).permute(0, 3, 5, 1, 2, 4).reshape(1, 12, 2, 3))):
        x4 = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
        out_shape = tuple(ref(torch.zeros(shape)).shape)
        graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], name="d2s", blocksize=2)], name, [x4],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)])
        yield name, shape, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), ref
    # LRN (PyTorch exports Pad + a 5-D AveragePool instead): the ONNX formula, an odd and an
    # even window (lopsided: floor((size - 1) / 2) channels before, ceil(...) after)
    for name, shape, size, alpha, beta, bias in (("lrn", (2, 6, 4, 5), 5, 0.4, 0.75, 1.0),
                                                 ("lrn_even_3d", (2, 7, 9), 4, 0.3, 0.6, 2.0)):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
        graph = helper.make_graph([helper.make_node("LRN", ["x"], ["y"], name="lrn", size=size, alpha=alpha,
                                                    beta=beta, bias=bias)], name, [x],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
        yield name, shape, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), \
            lrn_ref(size, alpha, beta, bias)
    # 3-D Conv with auto_pad SAME_UPPER, then MaxPool with SAME_LOWER (odd totals: the extra pad
    # goes after, then before); the reference pads explicitly (-inf for the pool)
    shape, g = (1, 2, 6, 7, 5), torch.Generator().manual_seed(3)
    w, b = torch.randn(3, 2, 3, 3, 3, generator=g) * 0.3, torch.randn(3, generator=g)

    def same(ins, k, s, upper):
        pads = []
        for i, kk, ss in zip(ins, k, s):
            tot = max(0, (-(-i // ss) - 1) * ss + kk - i)
            lo = tot // 2 if upper else tot - tot // 2
            pads = [lo, tot - lo] + pads  # F.pad order: last dim first
        return pads

    def conv_pool_same(t):
        y = F.conv3d(F.pad(t, same(shape[2:], (3, 3, 3), (2, 1, 2), True)), w, b, stride=(2, 1, 2))
        return F.max_pool3d(F.pad(y, same(y.shape[2:], (2, 2, 2), (1, 2, 2), False), value=-float("inf")), 2,
                            (1, 2, 2))

    out_shape = tuple(conv_pool_same(torch.zeros(shape)).shape)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", auto_pad="SAME_UPPER", strides=[2, 1, 2]),
         helper.make_node("MaxPool", ["c"], ["y"], name="pool", auto_pad="SAME_LOWER", kernel_shape=[2, 2, 2],
                          strides=[1, 2, 2])], "conv3d_same",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        [numpy_helper.from_array(w.numpy(), "w"), numpy_helper.from_array(b.numpy(), "b")])
    yield "conv3d_same", shape, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), conv_pool_same
    # If with a condition known at load time (shape arithmetic): the else branch, with an
    # initializer of its own and a read of an outer-scope value, is inlined; nested in it, an If
    # taking its then branch. if_runtime_cond's condition depends on the input: refused.
    x4 = helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 3, 4))
    y4 = helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 3, 4))

    def branch(name, nodes, out, inits=()):
        return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)],
                                 list(inits))
    inner = helper.make_node(
        "If", ["always"], ["inner_out"], name="inner_if",
        then_branch=branch("inner_then", [helper.make_node("Neg", ["scaled"], ["neg"], name="neg")], "neg"),
        else_branch=branch("inner_else", [helper.make_node("Abs", ["scaled"], ["abs"], name="abs")], "abs"))
    outer = helper.make_node(
        "If", ["is_rank4"], ["branch_out"], name="outer_if",
        then_branch=branch("then", [helper.make_node("Relu", ["x"], ["relu"], name="relu")], "relu"),
        else_branch=branch("else", [helper.make_node("Mul", ["x", "two"], ["scaled"], name="scale"),
                                    helper.make_node("Constant", [], ["always"], name="always_c",
                                                     value=numpy_helper.from_array(np.array(True))), inner],
                           "inner_out", [numpy_helper.from_array(np.array(2.0, np.float32), "two")]))
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Size", ["shape"], ["rank"], name="rank"),
             helper.make_node("Equal", ["rank", "four"], ["is_rank4"], name="eq"), outer,
             helper.make_node("Add", ["branch_out", "x"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "if_const", [x4], [y4], [numpy_helper.from_array(np.array(4, np.int64), "four")])
    yield "if_const_cond", (2, 3, 4), helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), \
        lambda t: -(t * 2) + t
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
             helper.make_node("Greater", ["s", "zero"], ["pos"], name="gt"),
             helper.make_node("If", ["pos"], ["y"], name="runtime_if",
                              then_branch=branch("t", [helper.make_node("Relu", ["x"], ["r"], name="r")], "r"),
                              else_branch=branch("e", [helper.make_node("Neg", ["x"], ["m"], name="m")], "m"))]
    graph = helper.make_graph(nodes, "if_runtime", [x4], [y4], [numpy_helper.from_array(np.array(0.0, np.float32),
                                                                                      "zero")])
    yield "if_runtime_cond", (2, 3, 4), helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), \
        lambda t: torch.relu(t) if t.sum() > 0 else -t
    # Pad-18-style axes input is not written: opset 13 is the export target


def make_input(name, shape):
    rng = np.random.default_rng(0)
    if name in INT_INPUTS:
        x = rng.integers(1, 50, shape, dtype=np.int64)
        x[..., -2:] = 0
        return x
    return rng.standard_normal(shape, dtype=np.float32)


def write_case(out, name, shape, model_bytes, ref_fn):
    x = make_input(name, shape)
    with torch.no_grad():
        y = ref_fn(torch.from_numpy(x)).numpy().astype(np.float32)
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model_bytes)
    x.tofile(os.path.join(out, name + ".input.bin"))
    np.ascontiguousarray(y).tofile(os.path.join(out, name + ".output.bin"))
    print("%-32s %s -> %s  max|y| %.3g" % (name, list(shape), list(y.shape), float(np.abs(y).max())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for name, (build, shape, opset) in TORCH_CASES.items():
        if args.names and name not in args.names:
            continue
        m = build().eval()
        buf = io.BytesIO()
        dummy = torch.from_numpy(make_input(name, shape))
        torch.onnx.export(m, (dummy,), buf, opset_version=opset, input_names=["input"],
                          output_names=["output"])
        write_case(args.out, name, shape, buf.getvalue(), m)
    for name, shape, model, ref_fn in hand_cases():
        if args.names and name not in args.names:
            continue
        onnx.checker.check_model(model)
        write_case(args.out, name, shape, model.SerializeToString(), ref_fn)
    if not args.names or "dyn_batch_conv" in args.names:
        dynamic_batch_case(args.out)


class DynBatch(nn.Module):
    """1-D conv, 3-D conv, 3-D and 1-D pools and TopK on a batch of unknown size: the frontend's
    lifts need the shapes only specialization gives (model/dynamic.c replays them)."""

    def __init__(self):
        super().__init__()
        self.c1, self.c3 = nn.Conv1d(2, 4, 3, padding=1), nn.Conv3d(4, 4, 3, padding=1)

    def forward(self, x):
        y = F.relu(self.c1(x))
        z = self.c3(y.reshape(y.shape[0], 4, 1, 4, 4).repeat(1, 1, 2, 1, 1))
        return torch.cat([F.max_pool3d(z, (1, 2, 2)).flatten(1), torch.topk(y.flatten(1), 3)[0],
                          F.max_pool1d(y, 2).flatten(1)], 1)


def dynamic_batch_case(out):
    """dyn_batch_conv: DynBatch exported with a symbolic batch N, input (3, 2, 16)."""
    torch.manual_seed(0)
    m = DynBatch().eval()
    x = make_input("dyn_batch_conv", (3, 2, 16))
    buf = io.BytesIO()
    torch.onnx.export(m, (torch.from_numpy(x),), buf, opset_version=13, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": {0: "N"}, "output": {0: "N"}})
    write_case(out, "dyn_batch_conv", (3, 2, 16), buf.getvalue(), m)


if __name__ == "__main__":
    sys.exit(main())
