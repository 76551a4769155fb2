"""Timing shared by bench/ort_peer.py and bench/pytorch_peer.py: n timed runs, and the --serve
protocol of `weft bench model`'s turns (after the warm-up "ready"; then each line "run N" on
stdin gets one untimed run and N timed ones, answered "times_ms=T1,T2,..."; end of input or
"quit" ends it)."""
import sys
import time


def timed(run, n, sync=lambda: None):
    """n runs' times in seconds (sync() ends each run: CUDA's synchronize)."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        run()
        sync()
        times.append(time.perf_counter() - t0)
    return times


def serve(run, fail, sync=lambda: None):
    """The --serve loop; fail(msg) reports a malformed line and exits. Returns 0."""
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] != "run" or len(words) != 2 or not words[1].isdigit() or int(words[1]) < 1:
            fail("--serve: expected 'run N' or 'quit', got %r" % line.strip())
        run()  # untimed: the other side's threads may still hold the cores
        sync()
        print("times_ms=" + ",".join("%.6f" % (t * 1e3) for t in timed(run, int(words[1]), sync)), flush=True)
    return 0
