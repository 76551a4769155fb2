/* Vendor-library peers for the matmul benchmark: row-major float32 C[M,N] = A[M,K] * B[K,N]
 * computed by OpenBLAS (cblas_sgemm) or oneDNN (a matmul primitive with pre-packed weights).
 *
 * Everything that is not the multiplication itself (engine, primitive, weight packing, thread
 * count) happens in bench_peer_create, so bench_peer_run is the call to time. A peer whose
 * library was not found at build time returns WEFT_ERR_UNAVAILABLE with a message.
 */
#ifndef WEFT_BENCH_PEERS_H
#define WEFT_BENCH_PEERS_H
#include "weft/weft.h"

typedef struct bench_peer bench_peer;

/* name: "openblas" or "onednn"; threads <= 0 means the cores available to this process.
 * B (K*N floats) is borrowed by "openblas" (must outlive the peer) and packed into a copy by
 * "onednn". Caller owns *out: bench_peer_destroy. The thread count is process-wide state of
 * each library, re-applied by bench_peer_run when another peer changed it. */
weft_status bench_peer_create(const char *name, int M, int N, int K, int threads, const float *B,
                              bench_peer **out);
/* The timed call: C (M*N floats) = A (M*K floats) * B. Synchronous. */
weft_status bench_peer_run(bench_peer *p, const float *A, float *C);
/* Bounds how long the libraries' idle threads spin after a call (libgomp's, under oneDNN:
 * GOMP_SPINCOUNT; OpenBLAS's: OPENBLAS_THREAD_TIMEOUT), so a peer's threads do not take a core
 * from the row timed after it (unbounded, a two-thread row ran at one thread's speed, which
 * row depended on the run), and holds the peers to weft's ISA level: vector_bits 256 (weft's
 * caps under --cpu haswell, znver3, ...) sets ONEDNN_MAX_CPU_ISA=AVX2 and
 * OPENBLAS_CORETYPE=Haswell, 128 SSE41 and Nehalem. The libraries read these at load time:
 * where one is unset, it is set and the process re-executes itself (/proc/self/exe with its own
 * command line; values already set are kept); returns (doing nothing) when all are set or no
 * peer is built, and prints a note when it cannot restart. */
void bench_peers_settle(int vector_bits);
/* Accepts NULL. */
void bench_peer_destroy(bench_peer *p);
/* One line naming the library version and the kernel it selected for this CPU; borrowed,
 * valid until the next call on this thread. Never NULL ("unavailable: ..." when not built). */
const char *bench_peer_info(const char *name);

#endif
