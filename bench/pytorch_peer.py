#!/usr/bin/python3
"""PyTorch peer for `weft bench model`: times the PyTorch model an ONNX reference file came from.

  python3 bench/pytorch_peer.py MODEL.onnx --threads T --repeat N [--warmup W] [--device cpu|cuda]

The model is found by the .onnx file's basename (mlp, resnet9, resnet9_b32, transformer,
transformer_s64) and built by scripts/gen_reference.py, the code that exported the file; the
.onnx itself is not read. The input is MODEL.input.bin next to it. The recurrent models of
scripts/gen_rnn.py (gru_enc_bB, gru_dec_bB, lstm_cls, rnn_tanh; small or full size, told apart
by the sizes of their input files) are built by gen_rnn.py and read MODEL.in.INPUT.bin, and
every output is checked against MODEL.out.OUTPUT.bin (CPU only). Before timing, the output is
checked against MODEL.output.bin (max |diff| <= 1e-4 * max(1, max |ref|)). Runs under
torch.inference_mode() with torch.set_num_threads(T), warms up, times N runs with
time.perf_counter and prints one line on stdout. With --device cuda (CUDA eager, for
scripts/gpu-run.sh) the model and input live on the GPU, TF32 is off (weft computes in float32)
and each timed run ends with torch.cuda.synchronize():

  median_ms=<float>

With --serve (used by `weft bench model`, which times its own runs and the peers' by turns so
that load from other processes falls on all rows alike) it prints "ready" after the warm-up
instead, then answers each line "run N" on stdin with one untimed run and N timed ones:
"times_ms=T1,T2,...". End of input or "quit" ends it.

Nothing else goes to stdout; messages go to stderr. Exit status: 0 ok, 2 usage or missing/bad
files, 3 output mismatch, 4 PyTorch not importable (apt-get install python3-torch).
OpenBLAS matters: run it with OPENBLAS_CORETYPE unset (a forced Haswell core type halves
PyTorch's matmul speed on newer CPUs), as `weft bench model` does:
  env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/pytorch_peer.py ...
"""
import argparse
import os
import statistics
import sys

from peer_serve import serve, timed

EXIT_USAGE, EXIT_MISMATCH, EXIT_NO_TORCH = 2, 3, 4


def fail(code, msg):
    print("pytorch_peer: " + msg, file=sys.stderr)
    sys.exit(code)


def time_runs(run, args, warmup, sync=lambda: None):
    """Prints median_ms of args.repeat runs after warmup, or serves turns (--serve)."""
    for _ in range(warmup):
        run()
    sync()
    if args.serve:
        return serve(run, lambda msg: fail(EXIT_USAGE, msg), sync)
    print("median_ms=%.6f" % (statistics.median(timed(run, args.repeat, sync)) * 1e3))
    return 0


def run_recurrent(gen_rnn, name, stem, args, np, torch):
    """A model of scripts/gen_rnn.py: inputs NAME.in.INPUT.bin, references NAME.out.OUTPUT.bin; the
    size (small or full) is the one whose inputs have the files' sizes."""
    if args.device != "cpu":
        fail(EXIT_USAGE, "%s: recurrent models run on the CPU only" % name)
    for size in sorted(gen_rnn.SIZES):
        if name not in gen_rnn.names(size):
            continue
        model, ins, in_names, out_names, _ = gen_rnn.build(name, size)
        files = ["%s.in.%s.bin" % (stem, n) for n in in_names]
        if all(os.path.isfile(f) and os.path.getsize(f) == x.nbytes for f, x in zip(files, ins)):
            break
    else:
        fail(EXIT_USAGE, "%s: no NAME.in.INPUT.bin files next to it of a size scripts/gen_rnn.py writes" % name)
    xs = [torch.from_numpy(np.fromfile(f, dtype=x.dtype).reshape(x.shape)) for f, x in zip(files, ins)]
    model.eval()
    with torch.inference_mode():
        ys = model(*xs)
        for n, y in zip(out_names, ys):
            f = "%s.out.%s.bin" % (stem, n)
            if not os.path.isfile(f):
                fail(EXIT_USAGE, "missing %s" % f)
            want = np.fromfile(f, dtype="<f4")
            got = y.reshape(-1).numpy()
            if want.size != got.size:
                fail(EXIT_USAGE, "%s holds %d floats, expected %d" % (f, want.size, got.size))
            diff = float(np.abs(got - want).max())
            tol = 1e-4 * max(1.0, float(np.abs(want).max()))
            if not diff <= tol:
                fail(EXIT_MISMATCH, "%s: output %s differs from %s: max |diff| %.3g > %.3g" % (name, n, f, diff, tol))
        warmup = args.warmup if args.warmup >= 0 else max(3, args.repeat // 10)
        return time_runs(lambda: model(*xs), args, warmup)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Times the PyTorch model behind a reference ONNX file.")
    ap.add_argument("onnx", metavar="MODEL.onnx")
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    ap.add_argument("--repeat", type=int, default=50, help="timed runs (default 50)")
    ap.add_argument("--warmup", type=int, default=-1, help="untimed runs first (default: max(3, repeat/10))")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="where PyTorch runs (default cpu)")
    ap.add_argument("--serve", action="store_true", help="after the warm-up, time turns asked for on stdin")
    args = ap.parse_args(argv)
    if args.threads < 1 or args.repeat < 1:
        fail(EXIT_USAGE, "--threads and --repeat must be >= 1")

    try:
        import numpy as np
        import torch
    except ImportError as e:
        fail(EXIT_NO_TORCH, "PyTorch is not available (%s); on Debian: apt-get install python3-torch" % e)

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(os.path.dirname(here), "scripts"))
    import gen_reference as ref

    path = args.onnx
    base = os.path.basename(path)
    name = base[: -len(".onnx")] if base.endswith(".onnx") else base
    stem = os.path.join(os.path.dirname(path), name)
    import gen_rnn
    if any(name in gen_rnn.names(size) for size in gen_rnn.SIZES):
        torch.set_num_threads(args.threads)
        return run_recurrent(gen_rnn, name, stem, args, np, torch)
    if name not in ref.MODELS:
        fail(EXIT_USAGE, "no PyTorch model for %r (known: %s, and scripts/gen_rnn.py's)" % (base, ", ".join(ref.MODELS)))

    def load(suffix, count):
        f = stem + suffix
        if not os.path.isfile(f):
            fail(EXIT_USAGE, "missing %s" % f)
        a = np.fromfile(f, dtype="<f4")
        if a.size != count:
            fail(EXIT_USAGE, "%s holds %d floats, expected %d" % (f, a.size, count))
        return a.astype(np.float32)

    torch.set_num_threads(args.threads)
    model = ref.build_model(name)
    shape = ref.input_shape(name)
    x = torch.from_numpy(load(".input.bin", int(np.prod(shape))).reshape(shape))
    sync = lambda: None
    if args.device == "cuda":
        if not torch.cuda.is_available():
            fail(EXIT_NO_TORCH, "--device cuda: torch.cuda.is_available() is False")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        model, x, sync = model.to("cuda"), x.to("cuda"), torch.cuda.synchronize

    with torch.inference_mode():
        y = model(x)
        want = load(".output.bin", y.numel())
        got = y.reshape(-1).cpu().numpy()
        diff = float(np.abs(got - want).max())
        tol = 1e-4 * max(1.0, float(np.abs(want).max()))
        if not diff <= tol:
            fail(EXIT_MISMATCH, "%s: output differs from %s.output.bin: max |diff| %.3g > %.3g" % (name, stem, diff, tol))

        warmup = args.warmup if args.warmup >= 0 else max(3, args.repeat // 10)
        return time_runs(lambda: model(x), args, warmup, sync)


if __name__ == "__main__":
    sys.exit(main())
