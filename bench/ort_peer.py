#!/usr/bin/env python3
"""ONNX Runtime peer for `weft bench model` and bench/zoo.sh: times an ONNX file with onnxruntime.

  bench/.venv/bin/python3 bench/ort_peer.py MODEL.onnx --threads T --repeat N [--input X.bin]
                                             [--warmup W]

(bash bench/setup_peers.sh creates bench/.venv with onnxruntime.) The session runs on the CPU
execution provider with intra_op_num_threads=T, inter_op_num_threads=1, sequential execution
and all graph optimizations. The first input is X.bin when given, else MODEL.input.bin next to
the model when present; any input NAME is MODEL.in.NAME.bin when present (the recurrent models'
convention, scripts/gen_rnn.py); else zeros. .bin files are raw little-endian C order in the
input's type (float32, float64, int64, int32, bool). When
MODEL.output.bin sits next to the model, the first output is compared with it and
"ort_peer: max |ort - ref| = E (max |ref| = M)" goes to stderr. Then, after W warm-up runs
(default max(3, N/10)), N timed runs; one line on stdout:

  median_ms=<float>

With --serve (used by `weft bench model`, which times its own runs and the peers' by turns so
that load from other processes falls on all rows alike) it prints "ready" after the warm-up
instead, then answers each line "run N" on stdin with one untimed run and N timed ones:
"times_ms=T1,T2,...". End of input or "quit" ends it.

With --profile K, ONNX Runtime's profiler records every run and the K nodes with the
largest median time per run go to stderr ("ort_peer: profile ... us  NODE  (OP)", then their
sum over all nodes), to set beside `weft run MODEL --profile` kernel by kernel. The profiler
adds its own overhead: take median_ms from a run without it.

Nothing else goes to stdout. Exit status: 0 ok, 2 usage or missing/bad files, 3 onnxruntime
(or numpy) not importable, with a one-line note on stderr. Run it with OPENBLAS_CORETYPE unset
like the other peers (onnxruntime does not use OpenBLAS, but keep the environments alike).
"""
import argparse
import os
import statistics
import sys

from peer_serve import serve, timed

EXIT_USAGE, EXIT_NO_ORT = 2, 3


def fail(code, msg):
    print("ort_peer: " + msg, file=sys.stderr)
    sys.exit(code)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Times an ONNX model with ONNX Runtime.")
    ap.add_argument("onnx", metavar="MODEL.onnx")
    ap.add_argument("--threads", type=int, default=1, help="intra_op_num_threads (default 1)")
    ap.add_argument("--repeat", type=int, default=50, help="timed runs (default 50)")
    ap.add_argument("--warmup", type=int, default=-1, help="untimed runs first (default: max(3, repeat/10))")
    ap.add_argument("--input", metavar="X.bin", help="input (default: MODEL.input.bin next to the model, else zeros)")
    ap.add_argument("--serve", action="store_true", help="after the warm-up, time turns asked for on stdin")
    ap.add_argument("--profile", type=int, default=0, metavar="K",
                    help="print the K slowest nodes (median us per run) to stderr")
    args = ap.parse_args(argv)
    if args.threads < 1 or args.repeat < 1:
        fail(EXIT_USAGE, "--threads and --repeat must be >= 1")
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError as e:
        fail(EXIT_NO_ORT, "onnxruntime is not available (%s); run: bash bench/setup_peers.sh" % e)
    if not os.path.isfile(args.onnx):
        fail(EXIT_USAGE, "missing %s" % args.onnx)

    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    if args.profile > 0:
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ort_peer_profile")
    try:
        sess = ort.InferenceSession(args.onnx, sess_options=so, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception types
        fail(EXIT_USAGE, "cannot load %s: %s" % (args.onnx, str(e).splitlines()[0] if str(e) else type(e).__name__))

    stem = args.onnx[: -len(".onnx")] if args.onnx.endswith(".onnx") else args.onnx
    types = {"tensor(float)": "<f4", "tensor(double)": "<f8", "tensor(int64)": "<i8", "tensor(int32)": "<i4",
             "tensor(bool)": "?"}
    feeds = {}
    for i, inp in enumerate(sess.get_inputs()):
        if any(not isinstance(d, int) for d in inp.shape):
            fail(EXIT_USAGE, "input %r has a dynamic shape %s; static shapes only" % (inp.name, inp.shape))
        if inp.type not in types:
            fail(EXIT_USAGE, "input %r has type %s; supported: %s" % (inp.name, inp.type, ", ".join(sorted(types))))
        dt = np.dtype(types[inp.type])
        shape = tuple(inp.shape)
        count = int(np.prod(shape)) if shape else 1
        path = args.input if (args.input and i == 0) else (stem + ".input.bin" if i == 0 else None)
        if not (path and (args.input or os.path.isfile(path))) and os.path.isfile("%s.in.%s.bin" % (stem, inp.name)):
            path = "%s.in.%s.bin" % (stem, inp.name)
        if path and (args.input or os.path.isfile(path)):
            if not os.path.isfile(path):
                fail(EXIT_USAGE, "missing %s" % path)
            a = np.fromfile(path, dtype=dt)
            if a.size != count:
                fail(EXIT_USAGE, "%s holds %d values, input %r %s needs %d" % (path, a.size, inp.name, list(shape), count))
            feeds[inp.name] = a.reshape(shape)
        else:
            feeds[inp.name] = np.zeros(shape, dtype=dt)

    out = sess.run(None, feeds)
    ref = stem + ".output.bin"
    if os.path.isfile(ref):
        want = np.fromfile(ref, dtype="<f4")
        got = np.asarray(out[0], dtype=np.float32).reshape(-1)
        if want.size != got.size:
            fail(EXIT_USAGE, "%s holds %d floats, output has %d" % (ref, want.size, got.size))
        print("ort_peer: max |ort - ref| = %.3g (max |ref| = %.3g)" % (float(np.abs(got - want).max()), float(np.abs(want).max())), file=sys.stderr)

    warmup = args.warmup if args.warmup >= 0 else max(3, args.repeat // 10)
    for _ in range(warmup):
        sess.run(None, feeds)

    run = lambda: sess.run(None, feeds)
    if args.serve:
        return serve(run, lambda msg: fail(EXIT_USAGE, msg))
    print("median_ms=%.3f" % (statistics.median(timed(run, args.repeat)) * 1e3))
    if args.profile > 0:
        print_profile(sess.end_profiling(), args.profile)
    return 0


def print_profile(path, k):
    """The k nodes with the largest median kernel time per run, from ONNX Runtime's trace."""
    import json

    try:
        with open(path) as f:
            events = json.load(f)
    finally:
        try:
            os.remove(path)
        except OSError:
            pass
    per_node = {}
    for e in events:
        name = e.get("name", "")
        if e.get("cat") == "Node" and name.endswith("_kernel_time"):
            key = (name[: -len("_kernel_time")], e.get("args", {}).get("op_name", "?"))
            per_node.setdefault(key, []).append(e.get("dur", 0))
    rows = sorted(((statistics.median(v), n, op) for (n, op), v in per_node.items()), reverse=True)
    for us, n, op in rows[:k]:
        print("ort_peer: profile %10.1f us  %s  (%s)" % (us, n, op), file=sys.stderr)
    print("ort_peer: profile %10.1f us  all %d nodes" % (sum(r[0] for r in rows), len(rows)), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
