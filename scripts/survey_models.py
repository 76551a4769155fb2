#!/usr/bin/python3
"""Exports common torchvision backbones, small transformer layers and small audio (1-D conv),
super-resolution (PReLU, pixel shuffle) and GroupNorm blocks to ONNX (opset 13, random
weights, small inputs) for the op survey: `weft show MODEL.onnx` on each says which ops weft
refuses. Run by hand (needs Debian's python3-torch, python3-torchvision); never by the tests.

    /usr/bin/python3 scripts/survey_models.py OUT_DIR [NAME ...]
    for f in OUT_DIR/*.onnx; do build/rel/weft show "$f" >/dev/null; done

Per model it also writes the input it exported with and PyTorch's outputs for it (raw
little-endian, C order): NAME.in0.bin, NAME.in1.bin ... and NAME.out0.bin ...; the ONNX inputs
and outputs are named in0, in1, ... and out0, out1, ..., so
    build/rel/weft run OUT_DIR/NAME.onnx --input in0=OUT_DIR/NAME.in0.bin --output DIR/
writes DIR/out0.bin ... to compare with them; `survey_models.py --check build/rel/weft OUT_DIR
[NAME ...]` does that for every model and prints the largest relative difference;
`survey_models.py --time-pytorch NAME [THREADS]` prints PyTorch's median time for one model.
"""
import math
import os
import sys

import torch
import torchvision
from torch import nn

torch.manual_seed(0)
tvm = torchvision.models


class BertLayer(nn.Module):
    """A BERT-style encoder layer written out: token embedding + positions, Q/K/V projections,
    heads by reshape/transpose, additive mask from an attention mask, erf GELU, LayerNorm."""

    def __init__(self, vocab=100, d=64, heads=4, ff=128, seq=16):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, seq, d))
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.f1, self.f2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, ids, mask):
        x = self.tok(ids) + self.pos
        b, s, d = x.shape

        def heads(t):
            return t.view(b, s, self.h, self.dh).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        att = q @ k.transpose(-1, -2) / math.sqrt(self.dh)
        att = att.masked_fill(mask[:, None, None, :] == 0, -1e4)
        ctx = att.softmax(-1) @ v
        x = self.ln1(x + self.o(ctx.transpose(1, 2).reshape(b, s, d)))
        return self.ln2(x + self.f2(nn.functional.gelu(self.f1(x))))


def fpn():
    from torchvision.models.detection.backbone_utils import resnet_fpn_backbone

    body = resnet_fpn_backbone(backbone_name="resnet18", weights=None, trainable_layers=5)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.b = body

        def forward(self, x):
            return tuple(self.b(x).values())

    return M()


def decoder():
    """A segmentation-style decoder head: two stride-2 ConvTranspose, bilinear x2, reflect Pad."""
    return nn.Sequential(
        nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1), nn.ReLU(),
        nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.ReLU(),
        nn.Upsample(scale_factor=2, mode="bilinear"), nn.ReflectionPad2d(1), nn.Conv2d(16, 3, 3))


class Seg(nn.Module):
    """A torchvision segmentation model returning its "out" tensor."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


def audio_cnn():
    """An M5-style raw-audio classifier: 1-D convs with BatchNorm, ReLU and max pooling, a global
    average over time, a Linear; the 1-D ops of speech and sensor models."""
    def block(ci, co, k, s=1):
        return [nn.Conv1d(ci, co, k, stride=s, padding=k // 2), nn.BatchNorm1d(co), nn.ReLU(), nn.MaxPool1d(4)]
    return nn.Sequential(*block(1, 32, 79, 4), *block(32, 32, 3), *block(32, 64, 3), *block(64, 64, 3),
                         nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(64, 35))


def super_res():
    """An ESPCN-style x3 super-resolution net: convs with PReLU, then a pixel shuffle
    (DepthToSpace)."""
    return nn.Sequential(nn.Conv2d(1, 64, 5, padding=2), nn.PReLU(64), nn.Conv2d(64, 32, 3, padding=1),
                         nn.PReLU(32), nn.Conv2d(32, 9, 3, padding=1), nn.PixelShuffle(3))


class GNBlock(nn.Module):
    """A diffusion-UNet-style residual block: GroupNorm, SiLU, 3x3 convs, a 1x1 skip, then an
    ELU head; GroupNorm exports as Reshape + InstanceNormalization + Reshape + Mul + Add."""

    def __init__(self, ci=32, co=64):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(8, ci), nn.Conv2d(ci, co, 3, padding=1)
        self.n2, self.c2 = nn.GroupNorm(8, co), nn.Conv2d(co, co, 3, padding=1)
        self.skip = nn.Conv2d(ci, co, 1)

    def forward(self, x):
        h = self.c1(nn.functional.silu(self.n1(x)))
        h = self.c2(nn.functional.silu(self.n2(h)))
        return nn.functional.elu(h + self.skip(x))


class CausalLM(nn.Module):
    """A GPT-style decoder: token + position embeddings, two pre-norm blocks with causal
    self-attention (a triu mask, masked_fill, softmax) and a GELU MLP, tied output projection."""

    def __init__(self, vocab=200, d=64, heads=4, seq=24, layers=2):
        super().__init__()
        self.tok, self.pos, self.h = nn.Embedding(vocab, d), nn.Parameter(torch.randn(seq, d) * 0.02), heads
        self.ln = nn.ModuleList(nn.LayerNorm(d) for _ in range(2 * layers + 1))
        self.qkv = nn.ModuleList(nn.Linear(d, 3 * d) for _ in range(layers))
        self.proj = nn.ModuleList(nn.Linear(d, d) for _ in range(layers))
        self.mlp = nn.ModuleList(nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                                 for _ in range(layers))

    def forward(self, ids):
        b, t = ids.shape
        x = self.tok(ids) + self.pos[:t]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](self.ln[2 * i](x)).split(x.shape[-1], -1)
            q, k, v = (z.reshape(b, t, self.h, -1).transpose(1, 2) for z in (q, k, v))
            a = (q @ k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
            a = a.masked_fill(mask, float("-inf")).softmax(-1)
            x = x + self.proj[i]((a @ v).transpose(1, 2).reshape(b, t, -1))
            x = x + self.mlp[i](self.ln[2 * i + 1](x))
        return self.ln[-1](x) @ self.tok.weight.t()


def img(s=64):
    return (torch.randn(1, 3, s, s),)


MODELS = {
    "resnet18": (lambda: tvm.resnet18(), img),
    "mobilenet_v2": (lambda: tvm.mobilenet_v2(), img),
    "mobilenet_v3_small": (lambda: tvm.mobilenet_v3_small(), img),
    "efficientnet_b0": (lambda: tvm.efficientnet_b0(), img),
    "densenet121": (lambda: tvm.densenet121(), img),
    "squeezenet1_1": (lambda: tvm.squeezenet1_1(), img),
    "shufflenet_v2_x0_5": (lambda: tvm.shufflenet_v2_x0_5(), img),
    "regnet_y_400mf": (lambda: tvm.regnet_y_400mf(), img),
    "mnasnet0_5": (lambda: tvm.mnasnet0_5(), img),
    "googlenet": (lambda: tvm.googlenet(aux_logits=False, init_weights=True), img),
    "convnext_tiny": (lambda: tvm.convnext_tiny(), img),
    "swin_t": (lambda: tvm.swin_t(), lambda: img(224)),
    "resnet18_fpn": (fpn, img),
    "lraspp_mobilenet_v3": (lambda: Seg(tvm.segmentation.lraspp_mobilenet_v3_large(weights_backbone=None)), img),
    "deeplabv3_mobilenet_v3": (
        lambda: Seg(tvm.segmentation.deeplabv3_mobilenet_v3_large(weights_backbone=None, aux_loss=False)), img),
    "decoder": (decoder, lambda: (torch.randn(1, 64, 32, 32),)),
    "vit_tiny": (
        lambda: torchvision.models.vision_transformer.VisionTransformer(
            image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128, num_classes=10),
        lambda: img(32),
    ),
    "bert_layer": (
        lambda: BertLayer(),
        lambda: (torch.randint(0, 100, (1, 16)), torch.ones(1, 16, dtype=torch.int64)),
    ),
    # vgg's adaptive pooling to 7x7 exports only when 7 divides the feature size: 224x224
    "vgg11": (lambda: tvm.vgg11(), lambda: img(224)),
    "audio_cnn": (audio_cnn, lambda: (torch.randn(1, 1, 8000),)),
    "super_res": (super_res, lambda: (torch.randn(1, 1, 64, 64),)),
    "gn_block": (lambda: GNBlock(), lambda: (torch.randn(1, 32, 32, 32),)),
    # second batch (ninth round): grouped convs, fused MBConv, Inception, video, a causal LM
    "resnext50_32x4d": (lambda: tvm.resnext50_32x4d(), img),
    "mobilenet_v3_large": (lambda: tvm.mobilenet_v3_large(), img),
    "efficientnet_v2_s": (lambda: tvm.efficientnet_v2_s(), img),
    "regnet_x_400mf": (lambda: tvm.regnet_x_400mf(), img),
    "shufflenet_v2_x1_0": (lambda: tvm.shufflenet_v2_x1_0(), img),
    "inception_v3": (lambda: tvm.inception_v3(aux_logits=False, init_weights=True), lambda: img(96)),
    "alexnet": (lambda: tvm.alexnet(), lambda: img(224)),
    "fcn_resnet50": (lambda: Seg(tvm.segmentation.fcn_resnet50(weights_backbone=None, aux_loss=False)), img),
    "r3d_18": (lambda: tvm.video.r3d_18(), lambda: (torch.randn(1, 3, 8, 56, 56),)),
    "r2plus1d_18": (lambda: tvm.video.r2plus1d_18(), lambda: (torch.randn(1, 3, 8, 56, 56),)),
    "causal_lm": (lambda: CausalLM(), lambda: (torch.randint(0, 200, (1, 24)),), 14),
    "transformer_encoder": (
        lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, activation="gelu", batch_first=True), 2),
        lambda: (torch.randn(1, 16, 64),),
    ),
}


def check(weft, out, names):
    """Runs each exported model with `weft run` (1 thread) and compares every output with
    PyTorch's: max |weft - torch| <= 1e-4 * max(1, max |torch|). Prints one line per model."""
    import subprocess
    import tempfile

    import numpy as np

    for name in names:
        path = os.path.join(out, name + ".onnx")
        if not os.path.exists(path):
            print("%-22s not exported" % name)
            continue
        ins = sorted(f for f in os.listdir(out) if f.startswith(name + ".in") and f.endswith(".bin"))
        outs = sorted(f for f in os.listdir(out) if f.startswith(name + ".out") and f.endswith(".bin"))
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [weft, "run", path, "--threads", "1", "--output", tmp + "/"]
            for f in ins:
                cmd += ["--input", "%s=%s" % (f.split(".")[-2], os.path.join(out, f))]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print("%-22s FAILED: %s" % (name, r.stderr.strip().splitlines()[-1][:200]))
                continue
            worst, scale = 0.0, 0.0
            for f in outs:
                ref = np.fromfile(os.path.join(out, f), np.float32)
                got = np.fromfile(os.path.join(tmp, f.split(".")[-2] + ".bin"), np.float32)
                if got.size != ref.size:
                    worst = float("inf")
                    break
                mx = float(np.abs(ref).max())
                scale = max(scale, mx)
                worst = max(worst, float(np.abs(got - ref).max()) / mx if mx > 0 else float("inf"))
            print("%-22s %d output(s), max |torch| %.3g, max |weft - torch| / max |torch| = %.2g %s"
                  % (name, len(outs), scale, worst, "ok" if worst <= 1e-4 else "MISMATCH"), flush=True)


def time_pytorch(name, threads):
    """Median of 50 runs of model NAME in PyTorch (eval, inference_mode, after 5 warm-up runs)."""
    import time

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    m = MODELS[name][0]().eval()
    xs = MODELS[name][1]()
    with torch.inference_mode():
        for _ in range(5):
            m(*xs)
        ts = []
        for _ in range(50):
            t = time.perf_counter()
            m(*xs)
            ts.append(time.perf_counter() - t)
    ts.sort()
    print("%s pytorch %d thread(s): median %.3f ms" % (name, threads, ts[len(ts) // 2] * 1e3))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--time-pytorch":
        # survey_models.py --time-pytorch NAME [THREADS]
        time_pytorch(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--check":
        # survey_models.py --check WEFT OUT_DIR [NAME ...]
        check(sys.argv[2], sys.argv[3], sys.argv[4:] or list(MODELS))
        return
    out = sys.argv[1]
    names = sys.argv[2:] or list(MODELS)
    os.makedirs(out, exist_ok=True)
    for name in names:
        build, inputs = MODELS[name][:2]
        opset = MODELS[name][2] if len(MODELS[name]) > 2 else 13
        m = build().eval()
        with torch.no_grad():  # zero-initialised heads (ViT's) would make every output 0
            for p in m.parameters():
                if p.dim() >= 2 and not p.any():
                    p.normal_(0, 0.02)
        # not under torch.no_grad(): there nn.MultiheadAttention takes its fused fast path,
        # which does not export
        torch.manual_seed(1)
        xs = inputs()
        try:
            with torch.no_grad():
                ys = m(*xs)
            ys = ys if isinstance(ys, tuple) else (ys,)
            torch.onnx.export(m, xs, os.path.join(out, name + ".onnx"), opset_version=opset,
                              input_names=["in%d" % i for i in range(len(xs))],
                              output_names=["out%d" % i for i in range(len(ys))])
            for i, x in enumerate(xs):
                x.numpy().tofile(os.path.join(out, "%s.in%d.bin" % (name, i)))
            for i, y in enumerate(ys):
                y.numpy().tofile(os.path.join(out, "%s.out%d.bin" % (name, i)))
            print(name, flush=True)
        except Exception as e:  # noqa: BLE001  (the survey records export failures too)
            print(name, "export failed:", str(e).splitlines()[0], flush=True)


if __name__ == "__main__":
    main()
