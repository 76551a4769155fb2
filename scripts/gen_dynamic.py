#!/usr/bin/python3
"""Writes the dynamic-batch MLP of tests/data/models (run by hand; no test or build runs it).

  mlp_dyn.onnx              the MLP of gen_reference.py (same weights: torch.manual_seed(0)),
                            exported by torch.onnx.export with opset 13 and dynamic_axes: input
                            'input' and output 'output' have axis 0 named 'batch' (dim_param)
  mlp_dyn.bB.input.bin      for B in 1 and 32: numpy.random.default_rng(B).standard_normal((B, 512))
  mlp_dyn.bB.output.bin     PyTorch's output for it under torch.no_grad()
  mlp_dyn.json              shapes and sha256 of every file
  tfs_dyn.onnx              a small transformer (gen_reference.Transformer with d_model 64,
                            4 heads, FFN 128, one layer; torch.manual_seed(0)) with two
                            symbolic dimensions: input and output [batch, seq, 64]
  tfs_dyn.bBsS.*.bin        inputs (default_rng(100 * B + S)) and PyTorch outputs at
                            (batch, seq) = (1, 8) and (2, 24); tfs_dyn.json as above
(.bin files: raw little-endian float32, C order.)

Runs under OPENBLAS_CORETYPE=Haswell like gen_reference.py (re-executes itself with it set).
Needs python3-torch, python3-onnx, python3-numpy (Debian 12).

  python3 scripts/gen_dynamic.py [--out DIR]        (default DIR = tests/data/models)
"""
import argparse
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_reference as ref  # noqa: E402  (the model builders and BLAS settings)

import numpy as np  # noqa: E402
import torch  # noqa: E402

BATCHES = (1, 32)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "models"))
    args = ap.parse_args(argv)
    if os.environ.get("OPENBLAS_CORETYPE") != ref.BLAS_CORETYPE:
        env = dict(os.environ, OPENBLAS_CORETYPE=ref.BLAS_CORETYPE)
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:], env)
    import onnx

    model = ref.build_model("mlp").eval()
    path = os.path.join(args.out, "mlp_dyn.onnx")
    example = torch.zeros(2, 512)
    torch.onnx.export(model, (example,), path, opset_version=13, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    dims = [d.dim_param or d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", 512], dims
    info = {"model": "mlp_dyn", "built_from": "the 'mlp' of scripts/gen_reference.py, exported with a dynamic batch",
            "onnx": "mlp_dyn.onnx", "opset": 13, "input": {"name": "input", "shape": ["batch", 512]},
            "output": {"name": "output", "shape": ["batch", 512]}, "torch": torch.__version__, "runs": [], "files": {}}
    with torch.no_grad():
        for b in BATCHES:
            x = np.random.default_rng(b).standard_normal((b, 512), np.float32)
            y = model(torch.from_numpy(x)).numpy().astype("<f4")
            stem = "mlp_dyn.b%d" % b
            x.astype("<f4").tofile(os.path.join(args.out, stem + ".input.bin"))
            y.tofile(os.path.join(args.out, stem + ".output.bin"))
            info["runs"].append({"batch": b, "input": stem + ".input.bin", "output": stem + ".output.bin",
                                 "generator": "numpy.random.default_rng(%d).standard_normal((%d, 512), float32)" % (b, b),
                                 "max_abs": float(np.abs(y).max())})
    for f in sorted(os.listdir(args.out)):
        if f.startswith("mlp_dyn.") and not f.endswith(".json"):
            p = os.path.join(args.out, f)
            info["files"][f] = {"bytes": os.path.getsize(p), "sha256": sha256(p)}
    with open(os.path.join(args.out, "mlp_dyn.json"), "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    print("wrote", ", ".join(sorted(info["files"])), "and mlp_dyn.json to", args.out)
    small_transformer(args.out)


def small_transformer(out):
    """tfs_dyn: symbolic batch and sequence; Shape/Gather/Concat/Reshape on both."""
    import onnx

    torch.manual_seed(0)
    model = ref.Transformer(d_model=64, nhead=4, dim_feedforward=128, n_layers=1).eval()
    path = os.path.join(out, "tfs_dyn.onnx")
    axes = {0: "batch", 1: "seq"}
    torch.onnx.export(model, (torch.zeros(2, 5, 64),), path, opset_version=13, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": axes, "output": axes})
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    dims = [d.dim_param or d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "seq", 64], dims
    info = {"model": "tfs_dyn", "built_from": "gen_reference.Transformer(d_model=64, nhead=4, dim_feedforward=128, "
            "n_layers=1), torch.manual_seed(0), eval", "onnx": "tfs_dyn.onnx", "opset": 13,
            "input": {"name": "input", "shape": ["batch", "seq", 64]},
            "output": {"name": "output", "shape": ["batch", "seq", 64]}, "torch": torch.__version__,
            "onnx_ops": sorted({n.op_type for n in m.graph.node}), "runs": [], "files": {}}
    with torch.no_grad():
        for b, s in ((1, 8), (2, 24)):
            x = np.random.default_rng(100 * b + s).standard_normal((b, s, 64), np.float32)
            y = model(torch.from_numpy(x)).numpy().astype("<f4")
            stem = "tfs_dyn.b%ds%d" % (b, s)
            x.astype("<f4").tofile(os.path.join(out, stem + ".input.bin"))
            y.tofile(os.path.join(out, stem + ".output.bin"))
            info["runs"].append({"batch": b, "seq": s, "input": stem + ".input.bin", "output": stem + ".output.bin",
                                 "generator": "numpy.random.default_rng(%d).standard_normal((%d, %d, 64), float32)"
                                 % (100 * b + s, b, s), "max_abs": float(np.abs(y).max())})
    for f in sorted(os.listdir(out)):
        if f.startswith("tfs_dyn.") and not f.endswith(".json"):
            p = os.path.join(out, f)
            info["files"][f] = {"bytes": os.path.getsize(p), "sha256": sha256(p)}
    with open(os.path.join(out, "tfs_dyn.json"), "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    print("wrote", ", ".join(sorted(info["files"])), "and tfs_dyn.json to", out)


if __name__ == "__main__":
    main()
