/* Helpers shared by the built-in schedules (default.c, manual.c): steps applied from
 * formatted text, so every built-in schedule is a replayable step list. */
#ifndef WEFT_SCHEDULE_UTIL_H
#define WEFT_SCHEDULE_UTIL_H
#include "schedule/state.h"

/* Formats one step and applies it. */
weft_status weft_sched_stepf(weft_schedule *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Register blocking from the caps. A register tile of a reduction with reuse keeps
 * rows x WEFT_SCHED_TILE_VECS accumulator vectors, WEFT_SCHED_TILE_VECS operand vectors and one
 * broadcast in the vector register file: weft_sched_tile_rows is the most rows that fit (6 with
 * AVX2's 16 registers, 8 with AVX-512's 32, capped there: more rows gained nothing measured). */
#define WEFT_SCHED_TILE_VECS 2
int64_t weft_sched_tile_rows(const weft_target_caps *caps);
/* Tile for an axis of `extent` with at most `cap` (cap >= 1): extent when it fits, else the
 * largest divisor in (cap/2, cap], else cap itself (an imperfect split: lowering runs the full
 * tiles without guards and the last one guarded). For a vector axis (lanes > 1) divisors are
 * multiples of lanes, so the remainder is one masked vector. */
int64_t weft_sched_fit_tile(int64_t extent, int64_t cap, int64_t lanes);
/* The rows of a register tile (cap: what the register file holds): a divisor of extent above
 * three quarters of cap, else cap itself when extent is at least four tiles (full tiles and one
 * partial tile, which lowering partitions off), else weft_sched_fit_tile's choice. With AVX2's
 * 16 registers cap is 6: M = 32 or 1024 took 4-row tiles (8 accumulators) before, 6-row ones
 * with a remainder now, 5-17% faster on Zen 4 at --cpu haswell (paired timings). */
int64_t weft_sched_fit_rows(int64_t extent, int64_t cap);
/* Tiles the spatial-only stage t: axis d by tiles[d] (1: untiled, an outer loop; >= extent:
 * whole, an inner loop), all outer loops first; the outer loops but the innermost are fused
 * into one parallel loop; the last axis's inner loop is vectorized. Writes the innermost outer
 * loop (where a producer's tile is computed; "" when none) and the parallel loop. */
weft_status weft_sched_tile(weft_schedule *s, int t, const int64_t *tiles, char *attach, char *par);
/* weft_sched_tile with axis `first`'s outer loop moved in front of the other outer loops (-1:
 * axis order), e.g. a matmul's column blocks outermost so one block of B serves every row tile;
 * !parallel: the fused loop is made but stays serial (still written to *par). */
weft_status weft_sched_tile_first(weft_schedule *s, int t, const int64_t *tiles, int first, bool parallel, char *attach,
                                  char *par);
/* Fuses stage t's loops `loops` (outermost first, adjacent) into one, named in *par
 * (WEFT_SCHED_NAME bytes; the first loop when the fused name would be too long, or "" for
 * n = 0), and makes it parallel when `parallel`. */
weft_status weft_sched_fuse_parallel(weft_schedule *s, int t, char (*loops)[WEFT_SCHED_NAME + 8], int n,
                                     bool parallel, char *par);

/* Orders a reduction stage as reduce loops then spatial loops, unrolls unroll_axis and
 * vectorizes vec_axis when its tile is at most max_vec (axes < 0 are skipped). */
weft_status weft_sched_register_tile(weft_schedule *s, int r, int unroll_axis, int vec_axis, int64_t max_vec,
                                     const int64_t *tiles);

/* The register tile of a reduction with reuse: the vector axis *v is an output axis along which
 * some operand is contiguous (matmul's j in B[k, j], a conv's x), preferring unit stride; *u is
 * the largest other axis before it (so *v stays innermost in the accumulator), or -1. */
void weft_sched_choose_tile_axes(const weft_tensor *op, int *u, int *v);

/* An elementwise stage t (its inlined producers expanded) that no read walks contiguously along
 * its last axis, which moves them, and some read walks contiguously along another axis d whose
 * extent is a multiple of `lanes` (<= 16; the last extent at least `lanes`, the last partial
 * tile partitioned off by lowering), else of lanes / 2 or lanes / 4 (at least 4): a transpose
 * (attention's K^T, NCHW <-> NHWC). Returns the last such d, or -1, and the tile width in
 * *width. Vectorized along the last axis each vector of
 * such a stage is a gather; along d, with the last axis in a loop of *width around it, the
 * loads are contiguous and the LLVM target transposes the vectors in registers for the stores
 * (targets/llvm/vector.c, transposed stores). */
int weft_sched_transposed_axis(const weft_schedule *s, int t, int64_t lanes, int64_t *width);
/* Whether every read of stage x in stage y's body (inlined stages expanded) indexes x's leading
 * axes, all but y's last, by y's own axis variables: one row of y needs the same row of x, so x
 * can be computed at y's row loop. A reader that transposes x's rows (softmax(-1) then
 * transpose(-1, -2)) needs all of x per row. Vacuously true when y does not read x itself. */
bool weft_sched_reads_rows_aligned(const weft_schedule *s, int y, int x);

/* An input of kernel f that op reads along its vector axis `vec` but not along some other
 * spatial axis of extent > 1 (B in a matmul): its data is reused across that axis, so packing
 * it per panel (cache_read + compute_at) makes the register tile's reads contiguous. */
const weft_tensor *weft_sched_reused_input(const weft_te_func *f, const weft_tensor *op, int vec);

/* ---- default_dense.c ---- */
/* An elementwise stage worth computing once per row instead of inlining into each reader: it
 * calls a costly function (exp, log, erf, tanh, sigmoid, pow), at least two stages read it and
 * one of them reduces its rows (softmax's exp: read by the row sum and by the output). */
bool weft_sched_keep_row_stage(const weft_schedule *s, int p);
/* Computes such a stage x at y's row loop row_loop, its last axis vectorized in lanes chunks. */
weft_status weft_sched_row_stage_at(weft_schedule *s, int x, int y, const char *row_loop, int64_t lanes);

/* Column blocks first for a matmul-like stage r (one reduction axis, register tile u x v, an
 * input reused across rows, more than one tile along both): returns v, whose outer loop then
 * runs outside the row tiles so one K x tile block of the reused operand (B) stays in cache
 * for every row tile (B is read once, A once per column block: mr/nr of the other order's
 * traffic); -1 (axis order) when it does not apply or the column blocks (times the batch axes
 * before u) are fewer than two per thread. */
int weft_sched_dense_first_axis(const weft_schedule *s, int r, int u, int v, const int64_t *out_shape,
                                const int64_t *tiles, const weft_target_caps *caps);

/* The vector tile of a reduction with one reduction axis and no second output axis to tile (a
 * matrix-vector product, M = 1): as many accumulator vectors as the register file holds (all of
 * a row of B up to (regs - 4) vectors, so B streams row after row), split evenly into at least
 * one block per thread when each still gets 8 vectors; 4 vectors for other reductions. */
int64_t weft_sched_row_vector_tile(const weft_tensor *op, int v, int64_t lanes, const weft_target_caps *caps);

/* A register tile wider than 64 lanes (weft_sched_row_vector_tile): the accumulator stage
 * `local`'s axis v and the output `out`'s last inner loop are split into native vectors (the
 * accumulator's unrolled), so each is one register-wide operation. */
weft_status weft_sched_wide_vectors(weft_schedule *s, const char *out, const char *local, int v, int64_t lanes);

/* The operand of the matmul-like reduction stage r that its register tile reuses across rows
 * (read along the tile's vector axis, not along its row axis) when it is an injective stage
 * read only by r (attention's K^T: a transpose of the activation, which inlined becomes a
 * strided gather in the inner loop): its index, to be packed per column block; -1 otherwise. */
int weft_sched_pack_operand(const weft_schedule *s, int r);
/* Packs such a stage: computed at `loop` of `out` (the column-block loop: one contiguous panel
 * per block, reused by every row tile) with its last axis vectorized, or inlined when `packed`
 * is false (the row tiles run outside the column blocks: no reuse to pay for the copy). */
/* A reduction whose reduction axis is the unit-stride walk of its reads and none of its
 * spatial axes is (a matrix-vector product A x, row sums), long enough for vectors: its loads
 * vectorize only along the reduction, i.e. through rfactor. */
bool weft_sched_wants_rfactor(const weft_tensor *op, int64_t lanes);
/* Such an output: split k into vector partial sums (k.1; four vectors summed to one by a second rfactor on long rows), rfactor k.1, the
 * rows fused and parallel, OUT.rf at the row loop with k.1 vectorized innermost. */
weft_status weft_sched_rfactor_rows(weft_schedule *s, const char *out, int64_t lanes, const weft_target_caps *caps);
/* Root reduction x (weft_sched_wants_rfactor) computed at output y's row loop ROW_LOOP in vector
 * partials: k split by a vector (four on long rows) and rfactored, X.rf at x's row (or, with
 * RF_AT_ROWS, at ROW_LOOP: x reads stages computed there, which X.rf then reads too) with k.1
 * vectorized innermost, x's final reduction across the lanes in registers. Softmax, layer norm
 * and TopK rows at a reader's row loop ran as scalar loops before. */
weft_status weft_sched_rfactor_at(weft_schedule *s, int x, int y, const char *row_loop, int64_t lanes, bool rf_at_rows);
weft_status weft_sched_pack_at(weft_schedule *s, const char *stage, const char *out, const char *loop, bool packed,
                               int64_t lanes);

/* weft_sched_fit_tile for a register tile's vector axis, never the whole axis when that is
 * not a whole number of vectors (N = 20 with 16 lanes: 16, not 20): a tile's accumulator is
 * allocated at the tile's width, so with a multiple of the vector width its rows do not
 * overlap vectors and stay in registers, and the last tile is one masked vector. */
int64_t weft_sched_fit_vector_tile(int64_t extent, int64_t cap, int64_t lanes);

/* Stage c reads stage p's result through any chain of stages. */
bool weft_sched_reads_through(const weft_schedule *s, int c, int p);
/* Squeeze-excite's channel gate (schedule/default_gate.c): true when the kernel has that
 * pattern (then *rc is the outcome of scheduling it), false otherwise (s untouched). */
bool weft_schedule_default_gate(weft_schedule *s, const weft_target_caps *caps, weft_status *rc);

/* Few rows, K blocked (a product of a few rows by a wide weight, M <= SMALL_M_ROW_TILES full
 * register tiles of rows: a decoder's Linear at a small batch, a few tokens' projections). With
 * the column blocks outermost (weft_sched_dense_first_axis) each row tile would stream the
 * K x tile panel of the weight again, from L2 or memory; instead the accumulator covers every
 * row of one column block and the reduction is blocked: for each kc block of K, every row tile
 * runs over the same kc x tile slice of the weight, which stays in L1 (kc: half of L1), and so
 * does the kc slice of the rows. Returns kc, or 0 when the rule does not apply (one row tile,
 * more rows than that, column blocks not outermost, K under two blocks). */
#define SMALL_M_ROW_TILES 4
int64_t weft_sched_rows_kblock(const weft_schedule *s, int r, int u, int v, const int64_t *out_shape, const int64_t *tiles,
                               int first, const weft_target_caps *caps);
/* The register tile of a product of a few rows (more than half a full tile, at most
 * SMALL_M_ROW_TILES full tiles) by a weight over four times L2 (streamed from memory or the
 * shared L3 on every run: a decoder's Linear to a vocabulary): half the rows and twice the
 * vectors of a full tile (AVX-512: 4 x 4 vectors instead of 8 x 2), when that fits the
 * registers. Each tile then streams two column blocks of a weight laid out [N/nb, K, nb] at
 * once; measured on the 16 x 8000 x 1280 Linear (41 MB), interleaved runs in one process:
 * 5.0-5.1 ms against 6.3-6.9 ms for 8 x 2 under load (M = 8: 4.0 vs 5.4; M = 32: 7.4 vs 8.8,
 * CPU time), while with the weight in L2 both ran alike. false: the full tile's rule. */
bool weft_sched_streamed_tile(const weft_schedule *s, int r, int u, int v, const weft_target_caps *caps, int64_t *rows,
                              int64_t *vecs);
/* The most rows of a register tile whose rows each stream a slice of their own of a weight
 * larger than L2 (the weight's index uses the row axis u and the vector axis v: a
 * matrix-vector product's weight laid out [N/c, K, c], the tile's rows being its column
 * blocks, as the recurrent step at batch 1 reads it), given the tile's row of row_lanes
 * elements: STREAM_BYTES per step of the reduction over all rows; 0 when the rows share the
 * weight (the full tile's rule applies). Measured on Zen 4, one core, a 3 MB weight from L3 in
 * blocks of 32 floats: 8 rows of 2 x 16 lanes (1 KB per step) 75 GB/s, 4 rows (512 B) 84, 2
 * rows 86; blocks of 16 with 8-lane vectors: 4, 6 and 8 rows (256-512 B) 74-77. */
#define STREAM_BYTES 512
int64_t weft_sched_row_streams(const weft_schedule *s, int r, int u, int v, int64_t row_lanes, const weft_target_caps *caps);
/* The reduction stage `local` (computed at the column-block loop) as k.0, u.0, k.1, u.1
 * (unrolled, mr rows), the other axes, v (vectorized; native vectors, unrolled, when wider,
 * and the output's vector loop then split the same way). When the weight is larger than L2
 * (read from L3 or memory on every run), `pragma local k.0 prefetch W`: the row tiles after the
 * first, which reuse the kc slice from L1, prefetch the next slice (lower/prefetch.c), so the
 * memory reads overlap the arithmetic instead of stalling the first row tile of every slice.
 * Measured on a 16 x 8000 x 1280 Linear (41 MB) on Zen 4 (a C mock-up of the same loops):
 * 5.0-5.4 ms without, 3.8-3.9 ms with at one thread; 3.85 and 2.27 ms at two. */
weft_status weft_sched_apply_rows_kblock(weft_schedule *s, const char *out, const char *local, int u, int v, int64_t mr,
                                         int64_t kc, int64_t lanes, const int64_t *tiles, const weft_target_caps *caps);

/* The packed matmul's blocking (schedule/manual.c) for C[M, N] = A[M, K] B[K, N]: an mr x nr
 * register tile (rows of A broadcast, nr columns of B in vectors) from the register file, and
 * the panel width nc (a multiple of nr) whose K x nc block of B, packed once per panel, fills
 * at most half of L2. */
void weft_sched_matmul_blocks(const weft_target_caps *caps, int64_t M, int64_t N, int64_t K, int64_t lanes, int64_t *mr,
                              int64_t *nr, int64_t *nc);

#endif
