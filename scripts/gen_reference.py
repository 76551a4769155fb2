#!/usr/bin/python3
"""Regenerates the reference models of tests/data/models (run by hand; no test or CI runs it).

For each model NAME it writes into the output folder:
  NAME.onnx        the model, exported by torch.onnx.export (opset 13, static shapes,
                   BatchNormalization kept: TrainingMode.PRESERVE on a model in eval mode)
  NAME.input.bin   the input, numpy.random.default_rng(0).standard_normal(shape, float32)
  NAME.output.bin  PyTorch's output for that input, computed under torch.no_grad()
  NAME.json        shapes, ONNX op types and counts, max/mean |output|, sha256 of each file
(.bin files: raw little-endian float32, C order.)

Weights: torch.manual_seed(0) before building each model (PyTorch's default initialisers);
BatchNorm affine parameters and running statistics are then randomised from a separate
torch.Generator seeded 1000, so that folding BatchNorm into Conv is really exercised.
With the PyTorch of Debian 12 (python3-torch 1.13.1, torch.__version__ "1.13.0a0"), its
OpenBLAS run with OPENBLAS_CORETYPE=Haswell (the script re-executes itself with that set unless
--any-blas-core is given) and onnx 1.12, this reproduces the committed files byte for byte, on
x86-64 with AVX2. Other OpenBLAS kernels change outputs in the last bits (~1e-7 relative);
other torch versions may draw different weights.

Needs: python3-torch, python3-onnx, python3-numpy (Debian 12: apt-get install python3-torch
python3-onnx).

  python3 scripts/gen_reference.py [--out DIR] [NAME ...]     (default: every model, DIR =
                                                               tests/data/models)

bench/pytorch_peer.py imports build_model / input_shape from here, so the models it times are
the ones this script exported.
"""
import argparse
import hashlib
import json
import os
import sys
import warnings

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError as _e:  # e.g. a python3 other than Debian's /usr/bin/python3
    sys.exit("gen_reference: needs numpy and torch (%s); on Debian 12: apt-get install python3-torch "
             "python3-onnx, and run it with /usr/bin/python3" % _e)

OPSET = 13
BN_SEED = 1000
BLAS_CORETYPE = "Haswell"  # OpenBLAS kernels the committed outputs were computed with

# ---------------------------------------------------------------------------------------------
# Model builders


class MLP(nn.Module):
    """Linear(512,512) -> ReLU -> Linear(512,512) -> ReLU."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(512, 512)
        self.fc2 = nn.Linear(512, 512)

    def forward(self, x):
        return torch.relu(self.fc2(torch.relu(self.fc1(x))))


def conv_bn(c_in, c_out, k, stride):
    """Conv2d(pad k//2, bias) -> BatchNorm2d -> ReLU."""
    return nn.Sequential(nn.Conv2d(c_in, c_out, k, stride, k // 2, bias=True), nn.BatchNorm2d(c_out), nn.ReLU())


class Residual(nn.Module):
    """Residual(f)(x) = f(x) + x."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x) + x


class ResNet9(nn.Module):
    """A small ResNet-9 for (N,3,32,32) inputs and 10 classes."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn(3, 16, 7, 4),
            conv_bn(16, 32, 3, 2),
            Residual(nn.Sequential(conv_bn(32, 32, 3, 1), conv_bn(32, 32, 3, 1))),
            conv_bn(32, 64, 3, 2),
            conv_bn(64, 128, 3, 2),
            Residual(nn.Sequential(conv_bn(128, 128, 3, 1), conv_bn(128, 128, 3, 1))),
        )
        self.flatten = nn.Flatten()
        self.fc1 = nn.Linear(128, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.flatten(self.features(x))
        return self.fc2(self.relu(self.fc1(x)))


class Transformer(nn.Module):
    """2 x TransformerEncoderLayer(256, 8 heads, ffn 1024, dropout 0, relu, batch_first) -> LayerNorm.

    Two independently initialised layers (not nn.TransformerEncoder, which deep-copies one)."""

    def __init__(self, d_model=256, nhead=8, dim_feedforward=1024, n_layers=2):
        super().__init__()
        self.layers = nn.ModuleList(
            [
                nn.TransformerEncoderLayer(
                    d_model, nhead, dim_feedforward, dropout=0.0, activation="relu", batch_first=True
                )
                for _ in range(n_layers)
            ]
        )
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


def randomize_batchnorm(model, seed=BN_SEED):
    """Random BN parameters and statistics, drawn in module order from one generator:
    weight = 1 + 0.2 N(0,1), bias = 0.1 N(0,1), running_mean = 0.1 N(0,1), running_var = 0.5 + U(0,1)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.BatchNorm2d):
                c = mod.num_features
                mod.weight.copy_(1 + 0.2 * torch.randn(c, generator=gen))
                mod.bias.copy_(0.1 * torch.randn(c, generator=gen))
                mod.running_mean.copy_(0.1 * torch.randn(c, generator=gen))
                mod.running_var.copy_(0.5 + torch.rand(c, generator=gen))
    return model


def _mlp():
    return MLP()


def _resnet9():
    return randomize_batchnorm(ResNet9())


def _transformer():
    return Transformer()


# name -> (architecture name, builder, input shape)
MODELS = {
    "mlp": ("mlp", _mlp, (32, 512)),
    "resnet9": ("resnet9", _resnet9, (1, 3, 32, 32)),
    "resnet9_b32": ("resnet9", _resnet9, (32, 3, 32, 32)),
    "transformer": ("transformer", _transformer, (1, 128, 256)),
    "transformer_s64": ("transformer", _transformer, (1, 64, 256)),
}


def build_model(name):
    """The PyTorch model NAME (a key of MODELS) in eval mode, float32, weights from seed 0."""
    if name not in MODELS:
        raise KeyError("unknown model %r (known: %s)" % (name, ", ".join(MODELS)))
    torch.manual_seed(0)
    model = MODELS[name][1]()
    model.eval()
    return model


def input_shape(name):
    return MODELS[name][2]


def make_input(shape):
    return np.random.default_rng(0).standard_normal(shape, dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# Generation


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _write_f32(path, array):
    np.ascontiguousarray(array, dtype="<f4").tofile(path)


def generate(name, out_dir):
    import onnx  # only needed here: bench/pytorch_peer.py imports this module without onnx

    arch = MODELS[name][0]
    shape = input_shape(name)
    model = build_model(name)
    x_np = make_input(shape)
    x = torch.from_numpy(x_np)

    with torch.no_grad():  # eval + no_grad: TransformerEncoderLayer takes its fused fast path
        y = model(x).numpy()
    with torch.enable_grad():  # parameters require grad: the decomposed (slow) path
        y_slow = model(x).detach().numpy()

    onnx_path = os.path.join(out_dir, name + ".onnx")
    in_path = os.path.join(out_dir, name + ".input.bin")
    out_path = os.path.join(out_dir, name + ".output.bin")
    with warnings.catch_warnings():
        # PRESERVE + constant folding warns about models in training mode; this one is in eval
        warnings.filterwarnings("ignore", message="It is recommended that constant folding be turned off")
        torch.onnx.export(
            model,
            (x,),
            onnx_path,
            opset_version=OPSET,
            input_names=["input"],
            output_names=["output"],
            training=torch.onnx.TrainingMode.PRESERVE,  # keeps BatchNormalization
            do_constant_folding=True,
        )
    _write_f32(in_path, x_np)
    _write_f32(out_path, y)

    proto = onnx.load(onnx_path)
    onnx.checker.check_model(proto, full_check=True)
    counts = {}
    for node in proto.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    ops = sorted(counts)

    def tensor_desc(tname, shp, path):
        return {
            "name": tname,
            "shape": list(shp),
            "dtype": "float32",
            "byte_order": "little",
            "layout": "C-contiguous",
            "file": os.path.basename(path),
        }

    inp = tensor_desc("input", shape, in_path)
    inp["generator"] = "numpy.random.default_rng(0).standard_normal(shape, float32)"
    outp = tensor_desc("output", y.shape, out_path)
    outp.update(
        {
            "max_abs": torch.from_numpy(y).abs().max().item(),
            "mean_abs": torch.from_numpy(y).abs().mean().item(),
            "computed_under": "torch.no_grad() (transformer layers: fused fast path)",
            "max_abs_diff_vs_decomposed_path": float(np.abs(y - y_slow).max()),
        }
    )
    manifest = {
        "model": name,
        "built_from": "PyTorch 1.13 model '%s' described in README.md (torch.manual_seed(0), eval, float32)" % arch,
        "onnx": os.path.basename(onnx_path),
        "opset": OPSET,
        "batchnorm": "kept as BatchNormalization (TrainingMode.PRESERVE); fold it yourself",
        "inputs": [inp],
        "outputs": [outp],
        "params": sum(p.numel() for p in model.parameters()),
        "torch": torch.__version__,
        "checker": "ok (onnx.checker.check_model full_check=True)",
        "onnx_ops": ops,
        "onnx_op_counts": {op: counts[op] for op in ops},
        "onnx_ir_version": proto.ir_version,
        "onnx_opset_imports": {(o.domain or "ai.onnx"): o.version for o in proto.opset_import},
        "onnx_initializers": len(proto.graph.initializer),
        "onnx_package": onnx.__version__,
        "files": {
            os.path.basename(p): {"bytes": os.path.getsize(p), "sha256": _sha256(p)}
            for p in (onnx_path, in_path, out_path)
        },
    }
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return manifest


def main(argv=None):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help="models to write (default: all of %s)" % ", ".join(MODELS))
    ap.add_argument("--out", default=os.path.join(repo, "tests", "data", "models"), help="output folder")
    ap.add_argument(
        "--any-blas-core",
        action="store_true",
        help="do not re-run under OPENBLAS_CORETYPE=%s (outputs then differ from the committed ones by ~1e-7)"
        % BLAS_CORETYPE,
    )
    args = ap.parse_args(argv)
    if not args.any_blas_core and os.environ.get("OPENBLAS_CORETYPE") != BLAS_CORETYPE:
        # OpenBLAS picks its kernels when it is loaded; the committed outputs came from the
        # Haswell kernels, so start again with that set (argv unchanged, so no loop).
        env = dict(os.environ, OPENBLAS_CORETYPE=BLAS_CORETYPE)
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:], env)
    names = args.names or list(MODELS)
    for n in names:
        if n not in MODELS:
            ap.error("unknown model %r (known: %s)" % (n, ", ".join(MODELS)))
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)  # one summation order, whatever the machine
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
