#!/usr/bin/python3
"""Writes the model zoo: general models beyond the reference set of tests/data/models (run by
hand or by bench/zoo.sh; no test runs it, and weft's build and tests never need it).

  python3 scripts/gen_zoo.py [--out DIR] [--small | --big | --all] [NAME ...]

  --small  the small models (default when no NAME is given); they are committed in
           tests/data/zoo (the default DIR) and checked by tests/model/test_zoo.c
  --big    the large ones (ResNet-18, MobileNetV2, EfficientNet-B0, ShuffleNetV2 at 224x224, a
           BERT-base FFN, a ViT-B/16 encoder block); bench/zoo.sh writes them into bench/zoo (git-ignored)
  --all    both

For each model NAME it writes into DIR, with the conventions of scripts/gen_reference.py (whose
helpers it reuses):
  NAME.onnx        torch.onnx.export, opset 13, static shapes, input "input", output "output",
                   BatchNormalization kept (TrainingMode.PRESERVE on a model in eval mode)
  NAME.input.bin   numpy.random.default_rng(0).standard_normal(shape, float32)
  NAME.output.bin  PyTorch's output for that input, eval mode, torch.no_grad()
  NAME.json        shapes, ONNX op types and counts, parameter count, max/mean |output|,
                   byte size and sha256 of the three files above
(.bin files: raw little-endian float32, C order.)

Weights: torch.manual_seed(0) before building each model (PyTorch's and torchvision's default
initialisers); every BatchNorm's affine parameters and running statistics are then randomised
from a torch.Generator seeded 1000 (gen_reference.randomize_batchnorm), so folding BN matters.
Like gen_reference.py it re-executes itself with OPENBLAS_CORETYPE=Haswell (unless
--any-blas-core) and computes with one thread, so a rerun on Debian 12's python3-torch 1.13.1 /
python3-torchvision 0.14.1 / python3-onnx 1.12 writes the same files.

Needs: python3-torch, python3-torchvision, python3-onnx (Debian 12: apt-get install
python3-torch python3-torchvision python3-onnx), run with /usr/bin/python3.
"""
import argparse
import json
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_reference as ref  # noqa: E402  (exits with a clear message when torch is missing)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

try:
    import torchvision
    from torchvision.models import efficientnet, mobilenetv2
except ImportError as _e:
    sys.exit("gen_zoo: needs torchvision (%s); on Debian 12: apt-get install python3-torchvision" % _e)

OPSET = ref.OPSET

# ---------------------------------------------------------------------------------------------
# Model builders


class Attention(nn.Module):
    """Multi-head self-attention as ViT writes it: one qkv Linear, softmax(q k^T / sqrt(d)) v,
    an output projection."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = (q @ k.transpose(-2, -1)) * self.scale
        a = a.softmax(dim=-1)
        return self.proj((a @ v).transpose(1, 2).reshape(b, n, c))


class ViTBlock(nn.Module):
    """A pre-norm ViT encoder block: x + Attn(LN(x)), then x + MLP(LN(x)), MLP = Linear ->
    GELU (exact, Erf) -> Linear; a final LayerNorm."""

    def __init__(self, dim, heads, mlp):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, mlp)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(mlp, dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.fc2(self.act(self.fc1(self.norm2(x))))
        return self.norm(x)


class BertFFN(nn.Module):
    """BERT's feed-forward sub-layer (post-norm): LayerNorm(x + Linear(GELU(Linear(x))))."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)
        self.norm = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, x):
        return self.norm(x + self.fc2(self.act(self.fc1(x))))


def mlp(*sizes, act=nn.ReLU):
    """Linear layers of the given sizes with act between them (none after the last)."""
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(act())
    return nn.Sequential(*layers)


def _mbv2_tiny():
    # torchvision's MobileNetV2 (stem, InvertedResidual blocks with ReLU6, 1x1 conv to 1280,
    # global average pool, classifier) with three short stages
    return mobilenetv2.MobileNetV2(num_classes=10, inverted_residual_setting=[[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 2, 2]])


def _effnet_tiny():
    # torchvision's EfficientNet (MBConv blocks: SiLU, squeeze-excite, stochastic depth that is
    # the identity in eval mode) with three short stages, one of them 5x5 depthwise
    c = efficientnet.MBConvConfig
    setting = [c(1, 3, 1, 16, 8, 1), c(6, 3, 2, 8, 16, 2), c(6, 5, 2, 16, 24, 2)]
    return efficientnet.EfficientNet(setting, dropout=0.2, num_classes=10, last_channel=128)


# name -> (description, builder, input shape, committed small model?)
MODELS = {
    # small: committed in tests/data/zoo
    "vit_block": (
        "ViT-style pre-norm encoder block, 197 tokens, dim 128, 4 heads, MLP 512 (GELU), final LayerNorm",
        lambda: ViTBlock(128, 4, 512),
        (1, 197, 128),
        True,
    ),
    "gelu_ffn": (
        "BERT-style FFN, dim 192 -> 768 (GELU) -> 192, residual, LayerNorm, 128 tokens",
        lambda: BertFFN(192, 768),
        (1, 128, 192),
        True,
    ),
    "mlp_odd": ("Linear(500,333) -> ReLU -> Linear(333,10), batch 37", lambda: mlp(500, 333, 10), (37, 500), True),
    "mlp_1_197_1001": (
        "Linear(197,1001) -> Sigmoid -> Linear(1001,1), batch 1",
        lambda: mlp(197, 1001, 1, act=nn.Sigmoid),
        (1, 197),
        True,
    ),
    "mlp_197_1001_1": (
        "Linear(1,1001) -> Tanh -> Linear(1001,1), batch 197 (extent-1 reductions)",
        lambda: mlp(1, 1001, 1, act=nn.Tanh),
        (197, 1),
        True,
    ),
    "mbv2_tiny": (
        "torchvision MobileNetV2 (ReLU6 as Clip, depthwise 3x3) with stages [1,16,1,1],[6,24,2,2],[6,32,2,2], 10 classes",
        _mbv2_tiny,
        (1, 3, 80, 80),
        True,
    ),
    "effnet_tiny": (
        "torchvision EfficientNet (MBConv: SiLU, squeeze-excite, depthwise 3x3 and 5x5) with 3 stages, 10 classes, odd 65x65 input",
        _effnet_tiny,
        (1, 3, 65, 65),
        True,
    ),
    # big: generated at bench time into bench/zoo, never committed
    "resnet18": ("torchvision resnet18, 1000 classes", lambda: torchvision.models.resnet18(), (1, 3, 224, 224), False),
    "mobilenet_v2": ("torchvision mobilenet_v2, 1000 classes", lambda: torchvision.models.mobilenet_v2(), (1, 3, 224, 224), False),
    "efficientnet_b0": (
        "torchvision efficientnet_b0, 1000 classes",
        lambda: torchvision.models.efficientnet_b0(),
        (1, 3, 224, 224),
        False,
    ),
    "shufflenet_v2": (
        "torchvision shufflenet_v2_x1_0 (channel shuffle: Reshape, Transpose, Reshape), 1000 classes",
        lambda: torchvision.models.shufflenet_v2_x1_0(),
        (1, 3, 224, 224),
        False,
    ),
    "bert_ffn": ("BERT-base FFN 768 -> 3072 (GELU) -> 768, residual, LayerNorm, 128 tokens", lambda: BertFFN(768, 3072), (1, 128, 768), False),
    "vit_b_block": (
        "ViT-B/16 encoder block: 197 tokens, dim 768, 12 heads, MLP 3072 (GELU), final LayerNorm",
        lambda: ViTBlock(768, 12, 3072),
        (1, 197, 768),
        False,
    ),
}

SMALL = [n for n, m in MODELS.items() if m[3]]
BIG = [n for n, m in MODELS.items() if not m[3]]


def build_model(name):
    """The PyTorch model NAME in eval mode, float32, weights from seed 0, random BN statistics."""
    torch.manual_seed(0)
    model = ref.randomize_batchnorm(MODELS[name][1]())
    model.eval()
    return model


# ---------------------------------------------------------------------------------------------
# Generation


def generate(name, out_dir):
    import onnx

    desc, _, shape, small = MODELS[name]
    model = build_model(name)
    x_np = ref.make_input(shape)
    x = torch.from_numpy(x_np)
    with torch.no_grad():
        y = model(x).numpy()

    onnx_path = os.path.join(out_dir, name + ".onnx")
    in_path = os.path.join(out_dir, name + ".input.bin")
    out_path = os.path.join(out_dir, name + ".output.bin")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="It is recommended that constant folding be turned off")
        torch.onnx.export(
            model,
            (x,),
            onnx_path,
            opset_version=OPSET,
            input_names=["input"],
            output_names=["output"],
            training=torch.onnx.TrainingMode.PRESERVE,
            do_constant_folding=True,
        )
    ref._write_f32(in_path, x_np)
    ref._write_f32(out_path, y)

    proto = onnx.load(onnx_path)
    onnx.checker.check_model(proto, full_check=True)
    counts = {}
    for node in proto.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    ops = sorted(counts)

    def tensor_desc(tname, shp, path):
        return {"name": tname, "shape": list(shp), "dtype": "float32", "byte_order": "little", "layout": "C-contiguous", "file": os.path.basename(path)}

    inp = tensor_desc("input", shape, in_path)
    inp["generator"] = "numpy.random.default_rng(0).standard_normal(shape, float32)"
    outp = tensor_desc("output", y.shape, out_path)
    outp.update({"max_abs": float(np.abs(y).max()), "mean_abs": float(np.abs(y).mean()), "computed_under": "torch.no_grad(), eval mode"})
    manifest = {
        "model": name,
        "built_from": "%s (scripts/gen_zoo.py; torch.manual_seed(0), BN statistics from seed %d, eval, float32)" % (desc, ref.BN_SEED),
        "set": "small" if small else "big",
        "onnx": os.path.basename(onnx_path),
        "opset": OPSET,
        "inputs": [inp],
        "outputs": [outp],
        "params": sum(p.numel() for p in model.parameters()),
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "checker": "ok (onnx.checker.check_model full_check=True)",
        "onnx_ops": ops,
        "onnx_op_counts": {op: counts[op] for op in ops},
        "onnx_ir_version": proto.ir_version,
        "onnx_opset_imports": {(o.domain or "ai.onnx"): o.version for o in proto.opset_import},
        "onnx_initializers": len(proto.graph.initializer),
        "onnx_package": onnx.__version__,
        "files": {os.path.basename(p): {"bytes": os.path.getsize(p), "sha256": ref._sha256(p)} for p in (onnx_path, in_path, out_path)},
    }
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return manifest


def main(argv=None):
    repo = os.path.dirname(HERE)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help="models to write (known: %s)" % ", ".join(MODELS))
    ap.add_argument("--out", default=None,
                    help="output folder (default tests/data/zoo for the small models, bench/zoo (git-ignored) "
                         "when any large one is asked for)")
    sel = ap.add_mutually_exclusive_group()
    sel.add_argument("--small", action="store_true", help="the small, committed models: " + ", ".join(SMALL))
    sel.add_argument("--big", action="store_true", help="the large, bench-time models: " + ", ".join(BIG))
    sel.add_argument("--all", action="store_true", help="all of them")
    ap.add_argument("--list", action="store_true", help="print the model names of the selection and exit")
    ap.add_argument("--any-blas-core", action="store_true", help="do not re-run under OPENBLAS_CORETYPE=%s" % ref.BLAS_CORETYPE)
    args = ap.parse_args(argv)
    names = list(args.names)
    if args.small or (not names and not args.big and not args.all):
        names += SMALL
    if args.big:
        names += BIG
    if args.all:
        names += SMALL + BIG
    for n in names:
        if n not in MODELS:
            ap.error("unknown model %r (known: %s)" % (n, ", ".join(MODELS)))
    if args.out is None:  # large models never land in the committed folder by default
        big = any(n in BIG for n in names)
        args.out = os.path.join(repo, "bench", "zoo") if big else os.path.join(repo, "tests", "data", "zoo")
    names = list(dict.fromkeys(names))
    if args.list:
        print("\n".join(names))
        return 0
    if not args.any_blas_core and os.environ.get("OPENBLAS_CORETYPE") != ref.BLAS_CORETYPE:
        env = dict(os.environ, OPENBLAS_CORETYPE=ref.BLAS_CORETYPE)
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:], env)
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for n in names:
        m = generate(n, args.out)
        o = m["outputs"][0]
        print(
            "%-16s %s -> %s  ops=%s  max_abs=%.6g  onnx=%d bytes"
            % (n, m["inputs"][0]["shape"], o["shape"], ",".join(m["onnx_ops"]), o["max_abs"], m["files"][n + ".onnx"]["bytes"])
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
