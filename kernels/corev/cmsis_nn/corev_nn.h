/*
 * Shared helpers of the CMSIS-NN replacements in this directory (RV32IMC, CV32E40P).
 *
 * Everything here is static: each replacement file includes what it uses. Nothing is a
 * CMSIS-NN function; the names start with cv_.
 *
 * Bit-exactness. CMSIS-NN's C paths add the input offset to every input value before
 * multiplying: sum_k (x_k + off) * w_k. The kernels here compute sum_k x_k * w_k and add
 * off * sum_k w_k once per output channel (the "filter sum"), which is the same integer
 * (int32 arithmetic wraps alike in both forms). Padding is written as the int8 value
 * CMSIS-NN writes (-input_offset), so padded taps contribute the same as there.
 * Requantization follows arm_nn_requantize (two roundings: the doubling high multiply,
 * then a rounding right shift with ties away from zero) bit for bit for every int32.
 *
 * The LHS "panel": up to 4 rows (output pixels) of K int8 values, interleaved in groups
 * of 4 along K: byte j of group g of row r is at panel[16 * g + 4 * r + j]. One pointer
 * reaches the 4 rows with constant offsets (lb with immediates), and each row's 4 bytes
 * of a group form one aligned word, the operand of a later cv.sdotsp.b (CORE-V SIMD).
 * A panel of K values takes 4 * ceil(K / 4) * 4 bytes: the size of the int16 im2col
 * buffer of two columns that CMSIS-NN's C path asks for.
 */
#ifndef COREV_NN_H
#define COREV_NN_H

#include <stdint.h>
#include <string.h>

#include "arm_nnfunctions.h"
#include "arm_nnsupportfunctions.h"

#define CV_INLINE static inline __attribute__((always_inline))

/* isa=..._xcv defines COREV_XCV=1: the CORE-V extension kernels (corev_xcv.h). */
#ifndef COREV_XCV
#define COREV_XCV 0
#endif

/* A word of int8 data, read or written where the address is known to be aligned: one lw
   or sw (may_alias: it is accessed as int8 elsewhere). */
typedef uint32_t __attribute__((may_alias, aligned(4))) cv_word;
#define CV_UNUSED __attribute__((unused))

/* A word of int8 data from any address: one lw, which the CV32E40P splits in two bus
   transfers when it is misaligned (the asm keeps the compiler from assuming alignment). */
CV_INLINE uint32_t cv_lw_any(const void *p)
{
    uint32_t v;
    __asm__("lw %0, 0(%1)" : "=r"(v) : "r"(p), "m"(*(const char(*)[4])p));
    return v;
}

/* A word to any address (the CV32E40P splits a misaligned sw). */
CV_INLINE void cv_sw_any(void *p, uint32_t v)
{
    __asm__ volatile("sw %1, 0(%2)" : "=m"(*(char(*)[4])p) : "r"(v), "r"(p));
}

/* ---------------------------------------------------------------------------------
 * Requantization, arm_nn_requantize(acc, mult, shift) for every int32 acc:
 *   x = acc << max(shift, 0)                          (int32, wrapping)
 *   t = (x * mult + 2^30) >> 31                       (64-bit product)
 *   r = t / 2^max(-shift, 0), ties away from zero
 * For mult >= 0, t = high word of x * 2mult (signed x unsigned, mulhsu) plus bit 31 of
 * the low word: 4 instructions instead of a 64-bit add and shift. Negative multipliers
 * (not produced by the quantizers, but allowed) take arm_nn_requantize itself.
 * ------------------------------------------------------------------------------- */
typedef struct
{
    uint32_t m2;  /* 2 * mult, as unsigned */
    int32_t ls;   /* left shift of the accumulator (shift > 0) */
    int32_t rs;   /* rounding right shift (shift <= 0) */
    int32_t mask; /* (1 << rs) - 1 */
    int32_t half; /* mask >> 1: the tie threshold of non-negative results */
} cv_rq;

/* For mult >= 0 only. */
CV_INLINE cv_rq cv_rq_make(int32_t mult, int32_t shift)
{
    cv_rq q;
    q.m2 = 2u * (uint32_t)mult;
    q.ls = shift > 0 ? shift : 0;
    q.rs = shift > 0 ? 0 : -shift;
    q.mask = (int32_t)((1u << q.rs) - 1u);
    q.half = q.mask >> 1;
    return q;
}

CV_INLINE int32_t cv_rq_apply(int32_t acc, const cv_rq q)
{
    const int32_t x = (int32_t)((uint32_t)acc << q.ls);
    const int64_t p = (int64_t)x * (int64_t)q.m2;
    const int32_t t = (int32_t)((uint32_t)((uint64_t)p >> 32) + ((uint32_t)p >> 31));
    const int32_t r = t >> q.rs;
    const int32_t rem = t & q.mask;
    const int32_t thr = q.half + (int32_t)((uint32_t)r >> 31);
    return r + (rem > thr);
}

CV_INLINE int8_t cv_clamp8(int32_t v, int32_t act_min, int32_t act_max)
{
    v = v < act_min ? act_min : v;
    v = v > act_max ? act_max : v;
    return (int8_t)v;
}

/* Requantize (mult >= 0), add the output offset, clamp, as int8. */
CV_INLINE int8_t cv_rq_out(int32_t acc, const cv_rq q, int32_t out_off, int32_t act_min, int32_t act_max)
{
    return cv_clamp8(cv_rq_apply(acc, q) + out_off, act_min, act_max);
}

/* The same for any multiplier: negative ones (rare) out of line. */
static __attribute__((noinline)) CV_UNUSED int8_t
cv_rq_out_neg(int32_t acc, int32_t mult, int32_t shift, int32_t out_off, int32_t act_min, int32_t act_max)
{
    return cv_clamp8(arm_nn_requantize(acc, mult, shift) + out_off, act_min, act_max);
}

CV_INLINE int8_t
cv_rq_out_any(int32_t acc, int32_t mult, int32_t shift, int32_t out_off, int32_t act_min, int32_t act_max)
{
    if (mult >= 0)
    {
        return cv_rq_out(acc, cv_rq_make(mult, shift), out_off, act_min, act_max);
    }
    return cv_rq_out_neg(acc, mult, shift, out_off, act_min, act_max);
}

/* ---------------------------------------------------------------------------------
 * Panels
 * ------------------------------------------------------------------------------- */

/* n bytes of src into row r of the panel, at K positions k0..k0+n-1. */
static CV_UNUSED void cv_panel_put(int8_t *panel, int32_t r, int32_t k0, const int8_t *src, int32_t n)
{
    int8_t *dst = panel + 16 * (k0 >> 2) + 4 * r;
    int32_t j = k0 & 3;
    if (j == 0 && ((n | (int32_t)(uintptr_t)src | (int32_t)(uintptr_t)dst) & 3) == 0)
    {
        const cv_word *s = (const cv_word *)src;
        cv_word *d = (cv_word *)dst;
        int32_t g = n >> 2;
        for (; g >= 2; g -= 2)
        {
            const uint32_t w0 = s[0], w1 = s[1];
            d[0] = w0;
            d[4] = w1;
            s += 2;
            d += 8;
        }
        if (g)
        {
            d[0] = s[0];
        }
        return;
    }
    /* Bytes: up to the next group, whole groups, the rest. */
    if (j)
    {
        for (; j < 4 && n > 0; j++, n--)
        {
            dst[j] = *src++;
        }
        if (j < 4)
        {
            return;
        }
        dst += 16;
    }
    for (; n >= 4; n -= 4)
    {
        const int8_t b0 = src[0], b1 = src[1], b2 = src[2], b3 = src[3];
        dst[0] = b0;
        dst[1] = b1;
        dst[2] = b2;
        dst[3] = b3;
        src += 4;
        dst += 16;
    }
    for (j = 0; j < n; j++)
    {
        dst[j] = src[j];
    }
}

/* n copies of value into row r of the panel, at K positions k0..k0+n-1. */
static CV_UNUSED void cv_panel_fill(int8_t *panel, int32_t r, int32_t k0, int8_t value, int32_t n)
{
    int8_t *dst = panel + 16 * (k0 >> 2) + 4 * r;
    int32_t j = k0 & 3;
    if (j == 0 && ((n | (int32_t)(uintptr_t)dst) & 3) == 0)
    {
        const uint32_t w = 0x01010101u * (uint8_t)value;
        cv_word *d = (cv_word *)dst;
        for (int32_t g = n >> 2; g > 0; g--)
        {
            *d = w;
            d += 4;
        }
        return;
    }
    while (n-- > 0)
    {
        dst[j] = value;
        if (++j == 4)
        {
            j = 0;
            dst += 16;
        }
    }
}

/* ---------------------------------------------------------------------------------
 * init[n] = bias[n] + off * sum_k w[n * K + k] for n < count (weights row-major, K per
 * row): the accumulator start of output channel n.
 * ------------------------------------------------------------------------------- */
static CV_UNUSED void cv_filter_init(int32_t *init,
                              const int8_t *w,
                              int32_t count,
                              int32_t K,
                              const int32_t *bias,
                              int32_t off)
{
    /* Rows of whole words: 4 bytes at a time in two 16-bit lanes, as unsigned bytes
       (b + 128: the word xor 0x80808080), then sum - 128 K. A lane gains at most 510 a
       word: flushed every 128 words. */
    const int32_t words = ((K | (int32_t)(uintptr_t)w) & 3) == 0 ? K >> 2 : 0;
    for (int32_t n = 0; n < count; n++)
    {
        int32_t s0 = 0, s1 = 0;
        int32_t k = 0;
        if (words)
        {
            const cv_word *p = (const cv_word *)w;
            for (int32_t left = words; left > 0;)
            {
                const int32_t m = left < 128 ? left : 128;
                uint32_t lanes = 0;
                for (int32_t i = 0; i < m; i++)
                {
                    const uint32_t u = p[i] ^ 0x80808080u;
                    lanes += (u & 0x00ff00ffu) + ((u >> 8) & 0x00ff00ffu);
                }
                s0 += (int32_t)((lanes & 0xffffu) + (lanes >> 16));
                p += m;
                left -= m;
            }
            s0 -= 128 * K;
            k = K;
        }
        for (; k + 2 <= K; k += 2)
        {
            s0 += w[k];
            s1 += w[k + 1];
        }
        if (k < K)
        {
            s0 += w[k];
        }
        w += K;
        init[n] = (int32_t)((uint32_t)(bias ? bias[n] : 0) + (uint32_t)(s0 + s1) * (uint32_t)off);
    }
}

/* ---------------------------------------------------------------------------------
 * The matrix kernel: one panel (`rows` <= 4 rows of K) times `count` weight rows (K
 * contiguous int8 each, K apart), into dst[r * dst_stride + n]: requantized with the
 * per-channel mult/shift, plus out_off, clamped.
 *
 * 4 rows x 4 channels per step: each K position loads 4 panel bytes and 4 weight bytes
 * for 16 multiply-accumulates, 2.6 instructions per MAC with the loop control. 16
 * accumulators, 4 inputs, a weight, a product, 5 pointers and a count take the 28 registers GCC
 * allocates; it gets there with pre-RA scheduling off (that pass hoists the loads of the
 * unrolled loop ahead of the multiplies) and the priority colouring of its register
 * allocator (the default one spills accumulators here). Remaining channels: 4 x 2, 4 x 1.
 * Rows beyond `rows` are computed from whatever the panel holds and not stored.
 * ------------------------------------------------------------------------------- */
typedef struct
{
    int32_t dst_stride;
    int32_t out_off;
    int32_t act_min;
    int32_t act_max;
} cv_out_params;

/* arm_nn_mat_mult_nt_t_s8 (arm_nn_mat_mult_nt_t_s8.c) over LHS rows at lhs + (m / per_line)
   * line_step + (m % per_line) * step: one call for all output pixels of a strided 1x1
   convolution (arm_convolve_1x1_s8.c). */
arm_cmsis_nn_status cv_mat_mult_lines(const int8_t *lhs,
                                      int32_t lhs_rows,
                                      int32_t per_line,
                                      int32_t step,
                                      int32_t line_step,
                                      const int8_t *rhs,
                                      const int32_t *bias,
                                      int8_t *dst,
                                      const int32_t *dst_multipliers,
                                      const int32_t *dst_shifts,
                                      int32_t rhs_rows,
                                      int32_t rhs_cols,
                                      int32_t lhs_offset,
                                      int32_t dst_offset,
                                      int32_t activation_min,
                                      int32_t activation_max);

/*
 * The outputs of a tile: acc[4 * j + r] is row r (< rows) of channel j (< nch), stored at
 * dst[r * dst_stride + j]. One call per tile; each channel's parameters are prepared
 * once for its rows.
 */
static __attribute__((noinline)) CV_UNUSED void cv_store_tile(const int32_t *acc,
                                                              int32_t nch,
                                                              int32_t rows,
                                                              int8_t *dst,
                                                              const int32_t *mult,
                                                              const int32_t *shift,
                                                              const cv_out_params *o)
{
    /* Copies: the int8 stores below may alias *o as far as the compiler knows. */
    const int32_t stride = o->dst_stride;
    const int32_t out_off = o->out_off;
    const int32_t act_min = o->act_min;
    const int32_t act_max = o->act_max;
    for (int32_t j = 0; j < nch; j++, acc += 4, dst++)
    {
        const int32_t m = mult[j];
        int8_t *d = dst;
        if (m < 0)
        {
            for (int32_t r = 0; r < rows; r++, d += stride)
            {
                *d = cv_rq_out_any(acc[r], m, shift[j], out_off, act_min, act_max);
            }
            continue;
        }
        const cv_rq q = cv_rq_make(m, shift[j]);
        if (rows == 4)
        {
            d[0] = cv_rq_out(acc[0], q, out_off, act_min, act_max);
            d[stride] = cv_rq_out(acc[1], q, out_off, act_min, act_max);
            d[2 * stride] = cv_rq_out(acc[2], q, out_off, act_min, act_max);
            d[3 * stride] = cv_rq_out(acc[3], q, out_off, act_min, act_max);
            continue;
        }
        for (int32_t r = 0; r < rows; r++, d += stride)
        {
            *d = cv_rq_out(acc[r], q, out_off, act_min, act_max);
        }
    }
}

/* Functions several of these files use, defined in each that asks for them (CV_WANT_GEMM:
   the matrix kernels, CV_WANT_FC: the fully connected ones, CV_WANT_ROWS: cv_row_dots,
   defined before including this header) but kept once in the image: weak definitions,
   of which the linker keeps one. */
#define CV_SHARED __attribute__((weak))

/* Register-tiled loops: see above. */
#define CV_TILED __attribute__((optimize("no-schedule-insns", "ira-algorithm=priority")))
/* Loops with fewer accumulators: only the pre-RA scheduling off. */
#define CV_NO_SCHED __attribute__((optimize("no-schedule-insns")))

#if defined(CV_WANT_GEMM)
CV_SHARED CV_TILED void cv_panel_gemm(const int8_t *panel,
                                                int32_t rows,
                                                int32_t K,
                                                const int8_t *w,
                                                int32_t count,
                                                const int32_t *init,
                                                const int32_t *mult,
                                                const int32_t *shift,
                                                int8_t *dst,
                                                const cv_out_params *o)
{
    const int32_t groups = K >> 2;
    const int32_t tail = K & 3;
    int32_t n = 0;
    for (; n + 4 <= count; n += 4)
    {
        const int8_t *xp = panel;
        const int8_t *q0 = w;
        const int8_t *q1 = q0 + K;
        const int8_t *q2 = q1 + K;
        const int8_t *q3 = q2 + K;
        int32_t a00 = init[0], a10 = a00, a20 = a00, a30 = a00;
        int32_t a01 = init[1], a11 = a01, a21 = a01, a31 = a01;
        int32_t a02 = init[2], a12 = a02, a22 = a02, a32 = a02;
        int32_t a03 = init[3], a13 = a03, a23 = a03, a33 = a03;

#define CV_STEP4x4(j)                                                                                                  \
    do                                                                                                                 \
    {                                                                                                                  \
        const int32_t x0 = xp[(j)], x1 = xp[4 + (j)], x2 = xp[8 + (j)], x3 = xp[12 + (j)];                             \
        int32_t v = q0[(j)];                                                                                           \
        a00 += x0 * v;                                                                                                 \
        a10 += x1 * v;                                                                                                 \
        a20 += x2 * v;                                                                                                 \
        a30 += x3 * v;                                                                                                 \
        v = q1[(j)];                                                                                                   \
        a01 += x0 * v;                                                                                                 \
        a11 += x1 * v;                                                                                                 \
        a21 += x2 * v;                                                                                                 \
        a31 += x3 * v;                                                                                                 \
        v = q2[(j)];                                                                                                   \
        a02 += x0 * v;                                                                                                 \
        a12 += x1 * v;                                                                                                 \
        a22 += x2 * v;                                                                                                 \
        a32 += x3 * v;                                                                                                 \
        v = q3[(j)];                                                                                                   \
        a03 += x0 * v;                                                                                                 \
        a13 += x1 * v;                                                                                                 \
        a23 += x2 * v;                                                                                                 \
        a33 += x3 * v;                                                                                                 \
    } while (0)

        for (int32_t g = groups; g > 0; g--)
        {
            CV_STEP4x4(0);
            CV_STEP4x4(1);
            CV_STEP4x4(2);
            CV_STEP4x4(3);
            xp += 16;
            q0 += 4;
            q1 += 4;
            q2 += 4;
            q3 += 4;
        }
        for (int32_t j = 0; j < tail; j++)
        {
            CV_STEP4x4(j);
        }
#undef CV_STEP4x4

        {
            const int32_t acc[16] = {a00, a10, a20, a30, a01, a11, a21, a31, a02, a12, a22, a32, a03, a13, a23, a33};
            cv_store_tile(acc, 4, rows, dst, mult, shift, o);
        }
        w += 4 * K;
        init += 4;
        mult += 4;
        shift += 4;
        dst += 4;
    }
    if (count - n >= 2)
    {
        const int8_t *xp = panel;
        const int8_t *q0 = w;
        const int8_t *q1 = q0 + K;
        int32_t a00 = init[0], a10 = a00, a20 = a00, a30 = a00;
        int32_t a01 = init[1], a11 = a01, a21 = a01, a31 = a01;
#define CV_STEP4x2(j)                                                                                                  \
    do                                                                                                                 \
    {                                                                                                                  \
        const int32_t x0 = xp[(j)], x1 = xp[4 + (j)], x2 = xp[8 + (j)], x3 = xp[12 + (j)];                             \
        int32_t v = q0[(j)];                                                                                           \
        a00 += x0 * v;                                                                                                 \
        a10 += x1 * v;                                                                                                 \
        a20 += x2 * v;                                                                                                 \
        a30 += x3 * v;                                                                                                 \
        v = q1[(j)];                                                                                                   \
        a01 += x0 * v;                                                                                                 \
        a11 += x1 * v;                                                                                                 \
        a21 += x2 * v;                                                                                                 \
        a31 += x3 * v;                                                                                                 \
    } while (0)
        for (int32_t g = groups; g > 0; g--)
        {
            CV_STEP4x2(0);
            CV_STEP4x2(1);
            CV_STEP4x2(2);
            CV_STEP4x2(3);
            xp += 16;
            q0 += 4;
            q1 += 4;
        }
        for (int32_t j = 0; j < tail; j++)
        {
            CV_STEP4x2(j);
        }
#undef CV_STEP4x2
        const int32_t acc[8] = {a00, a10, a20, a30, a01, a11, a21, a31};
        cv_store_tile(acc, 2, rows, dst, mult, shift, o);
        w += 2 * K;
        init += 2;
        mult += 2;
        shift += 2;
        dst += 2;
        n += 2;
    }
    if (count - n == 1)
    {
        const int8_t *xp = panel;
        const int8_t *q0 = w;
        int32_t a0 = init[0], a1 = a0, a2 = a0, a3 = a0;
#define CV_STEP4x1(j)                                                                                                  \
    do                                                                                                                 \
    {                                                                                                                  \
        const int32_t v = q0[(j)];                                                                                     \
        a0 += xp[(j)] * v;                                                                                             \
        a1 += xp[4 + (j)] * v;                                                                                         \
        a2 += xp[8 + (j)] * v;                                                                                         \
        a3 += xp[12 + (j)] * v;                                                                                        \
    } while (0)
        for (int32_t g = groups; g > 0; g--)
        {
            CV_STEP4x1(0);
            CV_STEP4x1(1);
            CV_STEP4x1(2);
            CV_STEP4x1(3);
            xp += 16;
            q0 += 4;
        }
        for (int32_t j = 0; j < tail; j++)
        {
            CV_STEP4x1(j);
        }
#undef CV_STEP4x1
        const int32_t acc[4] = {a0, a1, a2, a3};
        cv_store_tile(acc, 1, rows, dst, mult, shift, o);
    }
}

#endif
/* ---------------------------------------------------------------------------------
 * RV32IMC: the 4 x 4 kernel with the output stage, in assembly (cv_gemm4x4q). GCC's
 * version above spills an accumulator every 4 positions and hands the 16 sums to
 * cv_store_tile through memory, which prepares each channel's parameters again per
 * tile: 3.3 instructions per MAC on DS-CNN's 1x1 convolutions, output stage included.
 * Here per position 8 byte loads, 16 multiplies and 16 adds, every load two
 * instructions before its use, two groups of 4 positions per loop iteration (2.57
 * instructions per MAC with the pointer steps), and
 * the 16 outputs requantized from registers with each channel's prepared words
 * (cv_rq4_prep, the output offset folded in): for a sum >= 1 cv_rq_fast's path, 11
 * instructions with the store and no mulhsu (CV_G4_RQ), 5 for a sum <= 0 under a ReLU,
 * the exact stage for the rest. For full panels (4 rows) of channels
 * in the requantization mode multiplier >= 0, shift in [-31, -1], act_min <= out_off;
 * the panel's bytes from K to the end of its last group of 4 must be zero
 * (cv_panel_zero_tail): whole groups are read, and the weight bytes read past each
 * row's end then add nothing.
 * ------------------------------------------------------------------------------- */
typedef struct
{
    const int8_t *panel; /* 0 */
    const int8_t *w;     /* 4: first weight row of the tile (advanced by 4 K a tile) */
    int32_t K;           /* 8: bytes per weight row */
    int32_t groups;      /* 12: groups of 4 along K, >= 1 */
    int32_t tiles;       /* 16: tiles of 4 channels, >= 1 (counted down) */
    const int32_t *init; /* 20: per channel (advanced) */
    const int32_t *rq;   /* 24: per channel CV_RQ4_WORDS words (cv_rq4_prep; advanced) */
    int8_t *dst;         /* 28: row 0, channel 0 of the tile (advanced) */
    int32_t dstride;     /* 32: bytes from one output row to the next */
    int32_t relu;        /* 36: act_min == out_off (cv_rq_relu; the output offset is in rq's h) */
    int32_t act_min;     /* 40 */
    int32_t act_max;     /* 44 */
} cv_g4_args;

/* The rounding right shift by e = -shift (1 <= e <= 31) as ((t - (t < 0)) >> pre + h)
   >> sh with pre = e >= 2, sh = e - pre, h = 2^(sh - 1) (no sum reaches 2^31), and the
   output offset folded into h: ((v + h + (off << sh)) >> sh) = ((v + h) >> sh) + off
   exactly where the sum cannot wrap: |v| <= 2^30 for pre = 1, so |off| 2^sh + 2^(sh-1)
   <= 2^30; for e = 1 only off = 0. Returns 0 (no folded h) otherwise. The bound in 32
   bits: |off| 2^sh + 2^(sh-1) > 2^30 if and only if |off| > (2^30 - 2^(sh-1)) >> sh
   (|off| an integer); the 64-bit shift it replaces was a call of __ashldi3 per channel. */
CV_INLINE int32_t cv_rq_h_with_offset(int32_t pre, int32_t sh, int32_t out_off, int32_t *h)
{
    const uint32_t off_abs = out_off < 0 ? 0u - (uint32_t)out_off : (uint32_t)out_off;
    if (pre ? off_abs > (((1u << 30) - (1u << (sh - 1))) >> sh) : out_off != 0)
    {
        return 0;
    }
    *h = (int32_t)((1u << (sh - 1)) + ((uint32_t)out_off << sh));
    return 1;
}

/*
 * The requantization of a sum x with one mul (1 cycle on the CV32E40P) instead of
 * mul + mulhsu (5), where it can say; the assembly output stages (cv_gemm4x4q here,
 * corev_xcv.h's kernels) test it per sum and take the exact stage otherwise.
 *
 * For x >= 1, a multiplier m >= 0 and a right shift e (1 <= e <= 21), arm_nn_requantize
 * before the offset is r = floor((x m + K) / 2^(31 + e)) with K = 2^30 + 2^(30 + e) (the
 * doubling high multiply's rounding, then the rounding shift's, as one floor). With
 * s = e + 9, m = mh 2^s + ml (ml < 2^s) and K = Kh 2^s + Kl:
 *   (x m + K) / 2^s = y + (x ml + Kl) / 2^s,   y = x mh + Kh,   0 <= (x ml + Kl) / 2^s < x + 1,
 * and 2^(31 + e - s) = 2^22, so r = floor(y / 2^22) whenever y and y + x lie in the same
 * multiple of 2^22: mul, add f, add x, two shifts and a compare. The output offset rides
 * along as out_off 2^22 in f = Kh + out_off 2^22. Sums from xlim on (where y + x could
 * pass 2^31 - 1) and sums whose y and y + x straddle a multiple of 2^22 (about 1 in
 * 2^22 / x: the output's rounding is close) take the exact stage. For outputs in int8's
 * range x stays below 2^(9 + e), and xlim is about 2^31 / mh >= 2^(9 + e): only
 * clamped sums pass it.
 *
 * A sum x <= 0 requantizes to at most out_off (t <= 0, rounded half away from zero):
 * r = floor((x m + K - 2^31) / 2^(31 + e)), the same form with fneg = f - 2^(31 - s),
 * and (x m + K - 2^31) / 2^s in [y + x, y + 1): the same test, from xneg on (where
 * y + x cannot pass -2^31), then the lower clamp (act_max >= out_off, else xneg = 1:
 * the exact stage for all).
 */
#define CV_RQ_Y_SHIFT "22"

/* {mh, f, xlim} of one channel into w[0..2]; xlim = 0 (the exact stage for every sum)
   where e > 21 or the offset is wider than 9 bits. */
CV_INLINE void cv_rq_fast(uint32_t *w, int32_t mult, int32_t e, int32_t out_off)
{
    const int32_t s = e + 9;
    if (s > 30 || out_off < -256 || out_off > 255)
    {
        w[0] = w[1] = w[2] = 0;
        return;
    }
    const uint32_t mh = (uint32_t)mult >> s;
    const uint32_t f = ((1u << 30) >> s) + (1u << 21) + (uint32_t)out_off * (1u << 22);
    w[0] = mh;
    w[1] = f;
    /* x (mh + 1) + f <= 2^31 - 1 for every x < xlim, as mh + 1 <= 2^(31 - s) (m < 2^31).
       A shift, not a division by mh + 1 (up to 35 cycles on the CV32E40P, per channel
       and call: MobileNet took 60 K cycles more with two); for a multiplier >= 2^30, as
       the quantizers make them, it at most halves xlim, which then still covers every
       output in int8's range. */
    w[2] = ((0x7fffffffu - f) >> (31 - s)) + 1;
}

/* {fneg, xneg} into w[3..4] from cv_rq_fast's w[0..2]; xneg = 1 (the exact stage for
   every sum <= 0) where cv_rq_fast's xlim is 0 or act_max < out_off. */
CV_INLINE void cv_rq_fast_neg(uint32_t *w, int32_t e, int32_t out_off, int32_t act_max)
{
    if (w[2] == 0 || act_max < out_off)
    {
        w[3] = 0;
        w[4] = 1;
        return;
    }
    const uint32_t fneg = w[1] - (1u << (22 - e)); /* 2^(31 - s) */
    w[3] = fneg;
    /* x (mh + 1) + fneg >= -2^31 for every x >= xneg (|fneg| < 2^30; as for xlim) */
    w[4] = 0u - ((0x80000000u + fneg) >> (22 - e));
}

/*
 * The output stage split by the sum's sign (cv_gemm4x4q's CV_G4_RQ with cv_rq_fast's
 * path for sums >= 1; CV_RQ_SPLIT in the 3x3 depthwise kernels), for multipliers >= 0,
 * right shifts and act_min <= out_off:
 * - acc >= 1: t >= 0, so t - (t < 0) = t, and the result is >= out_off >= act_min: no
 *   sign fix-up and no lower clamp;
 * - acc <= 0: the result is <= out_off; with act_min == out_off (a ReLU fused into
 *   the clamp, as the quantizers export it) that is act_min without the
 *   requantization, else the whole stage out of line.
 * Per channel {mh, f, xlim} (cv_rq_fast) and {2 mult, pre, h, sh} (h with the output
 * offset, cv_rq_h_with_offset). Returns 1 if the layer and every channel are in that
 * mode.
 */
#define CV_RQ4_WORDS 7
/* (cv_gemm4x4q steps rq by 112 bytes a tile of 4 channels) */
_Static_assert(CV_RQ4_WORDS * 4 * 4 == 112, "cv_gemm4x4q's rq step");
static CV_UNUSED int32_t cv_rq4_prep(int32_t *rq,
                                     const int32_t *mult,
                                     const int32_t *shift,
                                     int32_t count,
                                     int32_t out_off,
                                     int32_t act_min)
{
    if (act_min > out_off)
    {
        return 0;
    }
    for (int32_t n = 0; n < count; n++, rq += CV_RQ4_WORDS)
    {
        const int32_t e = -shift[n];
        if (mult[n] < 0 || e < 1 || e > 31)
        {
            return 0;
        }
        const int32_t pre = e >= 2, sh = e - pre;
        if (!cv_rq_h_with_offset(pre, sh, out_off, &rq[5]))
        {
            return 0;
        }
        cv_rq_fast((uint32_t *)rq, mult[n], e, out_off);
        rq[3] = (int32_t)(2u * (uint32_t)mult[n]);
        rq[4] = pre;
        rq[6] = sh;
    }
    return 1;
}

/* 1 if sums <= 0 give act_min without their requantization (see cv_rq4_prep). */
CV_INLINE int32_t cv_rq_relu(int32_t out_off, int32_t act_min)
{
    return act_min == out_off;
}

/* The split output stage of register X in assembly: M = 2 mult, P = pre, H = h (with
   the output offset), S = sh, T temporary, HI = act_max, STORE(R): the store of
   register R and the pointer step; L: a label number (L0..L4 are used). */
#define CV_RQ_SPLIT(X, M, P, H, S, T, HI, STORE, L)                                                         \
    "blez " #X ", " #L "0f\n\t"                                                                                      \
    "mul " #T ", " #X ", " #M "\n\tmulhsu " #X ", " #X ", " #M "\n\tsrli " #T ", " #T ", 31\n\tadd " #X ", " #X ", " #T "\n\t" \
    "sra " #X ", " #X ", " #P "\n\tadd " #X ", " #X ", " #H "\n\tsra " #X ", " #X ", " #S "\n\t"                       \
    "blt " #HI ", " #X ", " #L "1f\n" #L "2:\n\t" STORE(X) "\n" #L "4:\n\t"
/* Its fix-ups, out of line: X above act_max; X <= 0: under a ReLU (RELU = cv_rq_relu)
   LO = act_min, else X into T and the whole stage in CV_RQ_SPLIT_REST, called with RELU
   (0 there) as the link register. */
#define CV_RQ_SPLIT_FIX(X, T, RELU, LO, HI, STORE, L)                                                                \
    #L "0:\n\tbeqz " #RELU ", " #L "3f\n\t" STORE(LO) "\n\tj " #L "4b\n"                                           \
    #L "1:\n\tmv " #X ", " #HI "\n\tj " #L "2b\n"                                                                    \
    #L "3:\n\tmv " #T ", " #X "\n\tjal " #RELU ", 90f\n\tj " #L "4b\n"
/* The stage of a sum <= 0 in T, both clamps and the store (labels 90, 91, 92, 93; once
   per function, after the fix-ups); U is borrowed (saved at SAVE(sp)); returns to
   RELU with RELU = 0 again. */
#define CV_RQ_SPLIT_REST(M, P, H, S, T, U, SAVE, RELU, LO, HI, STORE)                                                \
    "90:\n\tsw " #U ", " #SAVE "(sp)\n\tmulhsu " #U ", " #T ", " #M "\n\tmul " #T ", " #T ", " #M "\n\t"             \
    "srli " #T ", " #T ", 31\n\tadd " #T ", " #T ", " #U "\n\tlw " #U ", " #SAVE "(sp)\n\t"                             \
    "beqz " #T ", 91f\n\taddi " #T ", " #T ", -1\n"                                                                     \
    "91:\n\tsra " #T ", " #T ", " #P "\n\tadd " #T ", " #T ", " #H "\n\tsra " #T ", " #T ", " #S "\n\t"                 \
    "bge " #HI ", " #T ", 92f\n\tmv " #T ", " #HI "\n"                                                                  \
    "92:\n\tbge " #T ", " #LO ", 93f\n\tmv " #T ", " #LO "\n"                                                         \
    "93:\n\t" STORE(T) "\n\tmv " #T ", " #RELU "\n\tli " #RELU ", 0\n\tjr " #T "\n"

/* The panel's bytes from K to the end of its last group, in all 4 rows. */
CV_INLINE void cv_panel_zero_tail(int8_t *panel, int32_t K)
{
    const int32_t t = K & 3;
    if (t)
    {
        int8_t *g = panel + 16 * (K >> 2);
        for (int32_t r = 0; r < 4; r++)
        {
            for (int32_t j = t; j < 4; j++)
            {
                g[4 * r + j] = 0;
            }
        }
    }
}

#if defined(CV_WANT_GEMM)
/* Position j of a group: channel c's weight (in a6) against the 4 rows (a2-a5). NEXT:
   the next channel's weight load (fills the load-use gap before the last add). */
#define CV_G4_CH(R0, R1, R2, R3, NEXT, LAST)                                                                           \
    "mul a7, a2, a6\n\tadd " #R0 ", " #R0 ", a7\n\tmul a7, a3, a6\n\tadd " #R1 ", " #R1 ", a7\n\t"                      \
    "mul a7, a4, a6\n\tadd " #R2 ", " #R2 ", a7\n\tmul a7, a5, a6\n\t" NEXT "\n\tadd " #R3 ", " #R3 ", a7\n\t"
/* Position: weights at offset jw of each row, the 4 rows' inputs at jp, 4 + jp, ... */
#define CV_G4_POS(jw, jp)                                                                                              \
    "lb a6, " #jw "(t0)\n\tlb a2, " #jp "(a0)\n\tlb a3, 4 + " #jp "(a0)\n\tlb a4, 8 + " #jp "(a0)\n\t"                \
    "lb a5, 12 + " #jp "(a0)\n\t" CV_G4_CH(s0, s1, s2, s3, "lb a6, " #jw "(t1)", )                                      \
        CV_G4_CH(s4, s5, s6, s7, "lb a6, " #jw "(t2)", ) CV_G4_CH(s8, s9, s10, s11, "lb a6, " #jw "(ra)", )            \
            CV_G4_CH(t3, t4, t5, t6, "", )
/* The output stage of accumulator X (cv_rq_fast's path): t0 = mh, t1 = f, t2 = xlim
   (a1: past the channel's words), a4 = relu, a5/a6 = activation min/max, a7 = output
   pointer, a3 = row step, a0 and ra temporaries; label numbers L0..L4. The result is
   >= out_off >= act_min: only the upper clamp (a branch out of line). */
#define CV_G4_STORE(R) "sb " #R ", 0(a7)\n\tadd a7, a7, a3"
#define CV_G4_RQ(X, L)                                                                                                 \
    "blez " #X ", " #L "0f\n\tbgeu " #X ", t2, " #L "3f\n\tmul a0, " #X ", t0\n\tadd a0, a0, t1\n\t"                   \
    "add ra, a0, " #X "\n\tsrai a0, a0, " CV_RQ_Y_SHIFT "\n\tsrai ra, ra, " CV_RQ_Y_SHIFT "\n\tbne a0, ra, " #L "3f\n\t" \
    "blt a6, a0, " #L "1f\n" #L "2:\n\t" CV_G4_STORE(a0) "\n" #L "4:\n\t"
/* Its fix-ups, out of line: above act_max; a sum <= 0 under a ReLU stores act_min; the
   rest (a sum <= 0 without a ReLU, what cv_rq_fast's path leaves) into a0 and the exact
   stage at label 90 (CV_G4_REST), called with ra as the link register. */
#define CV_G4_FIX(X, L)                                                                                                \
    #L "0:\n\tbeqz a4, " #L "3f\n\t" CV_G4_STORE(a5) "\n\tj " #L "4b\n"                                               \
    #L "1:\n\tmv a0, a6\n\tj " #L "2b\n"                                                                                \
    #L "3:\n\tmv a0, " #X "\n\tjal ra, 90f\n\tj " #L "4b\n"
/* The exact stage of the sum in a0 (the channel's {2 mult, pre, h, sh} at -16(a1) on),
   ((t - (t < 0)) >> pre + h) >> sh, both clamps and the store; t0 and t1 are saved at
   56(sp) and 60(sp) (labels 90, 92, 93). */
#define CV_G4_REST                                                                                                     \
    "90:\n\tsw t0, 56(sp)\n\tsw t1, 60(sp)\n\tlw t0, -16(a1)\n\tmulhsu t1, a0, t0\n\tmul a0, a0, t0\n\t"           \
    "srli a0, a0, 31\n\tadd a0, a0, t1\n\tsrai t1, a0, 31\n\tadd a0, a0, t1\n\tlw t1, -12(a1)\n\tsra a0, a0, t1\n\t" \
    "lw t1, -8(a1)\n\tadd a0, a0, t1\n\tlw t1, -4(a1)\n\tsra a0, a0, t1\n\t"                                           \
    "bge a6, a0, 92f\n\tmv a0, a6\n"                                                                                    \
    "92:\n\tbge a0, a5, 93f\n\tmv a0, a5\n"                                                                           \
    "93:\n\t" CV_G4_STORE(a0) "\n\tlw t0, 56(sp)\n\tlw t1, 60(sp)\n\tret\n"
/* A channel's 4 rows: its parameters from a1 (advanced), outputs from a2 (advanced). */
#define CV_G4_CHANNEL(R0, R1, R2, R3, L0, L1, L2, L3)                                                                  \
    "lw t0, 0(a1)\n\tlw t1, 4(a1)\n\tlw t2, 8(a1)\n\taddi a1, a1, 28\n\tmv a7, a2\n\taddi a2, a2, 1\n\t"             \
        CV_G4_RQ(R0, L0) CV_G4_RQ(R1, L1) CV_G4_RQ(R2, L2) CV_G4_RQ(R3, L3)

CV_SHARED __attribute__((naked, noinline, noclone)) void cv_gemm4x4q(cv_g4_args *a)
{
    (void)a;
    __asm__ volatile(
        "addi sp, sp, -64\n\t"
        "sw ra, 0(sp)\n\tsw s0, 4(sp)\n\tsw s1, 8(sp)\n\tsw s2, 12(sp)\n\tsw s3, 16(sp)\n\tsw s4, 20(sp)\n\t"
        "sw s5, 24(sp)\n\tsw s6, 28(sp)\n\tsw s7, 32(sp)\n\tsw s8, 36(sp)\n\tsw s9, 40(sp)\n\tsw s10, 44(sp)\n\t"
        "sw s11, 48(sp)\n\tsw a0, 52(sp)\n"
        /* a tile: weight rows, accumulators from init */
        ".balign 4\n5:\n\tlw a0, 52(sp)\n\tlw t0, 4(a0)\n\tlw a1, 8(a0)\n\tadd t1, t0, a1\n\tadd t2, t1, a1\n\tadd ra, t2, a1\n\t"
        "add a2, ra, a1\n\tsw a2, 4(a0)\n\tlw a2, 20(a0)\n\t"
        "lw s0, 0(a2)\n\tlw s4, 4(a2)\n\tlw s8, 8(a2)\n\tlw t3, 12(a2)\n\taddi a2, a2, 16\n\tsw a2, 20(a0)\n\t"
        "mv s1, s0\n\tmv s2, s0\n\tmv s3, s0\n\tmv s5, s4\n\tmv s6, s4\n\tmv s7, s4\n\t"
        "mv s9, s8\n\tmv s10, s8\n\tmv s11, s8\n\tmv t4, t3\n\tmv t5, t3\n\tmv t6, t3\n\t"
        "lw a1, 12(a0)\n\tlw a0, 0(a0)\n\t"
        /* an odd group first, then two groups (128 MACs) per iteration: fewer pointer steps */
        "andi a6, a1, 1\n\tbeqz a6, 2f\n\t" CV_G4_POS(0, 0) CV_G4_POS(1, 1) CV_G4_POS(2, 2) CV_G4_POS(3, 3)
        "addi a0, a0, 16\n\taddi t0, t0, 4\n\taddi t1, t1, 4\n\taddi t2, t2, 4\n\taddi ra, ra, 4\n"
        "2:\n\tsrli a1, a1, 1\n\tbeqz a1, 3f\n"
        ".balign 4\n1:\n\t" CV_G4_POS(0, 0) CV_G4_POS(1, 1) CV_G4_POS(2, 2) CV_G4_POS(3, 3) CV_G4_POS(4, 16)
            CV_G4_POS(5, 17) CV_G4_POS(6, 18) CV_G4_POS(7, 19)
        "addi a0, a0, 32\n\taddi t0, t0, 8\n\taddi t1, t1, 8\n\taddi t2, t2, 8\n\taddi ra, ra, 8\n\t"
        "addi a1, a1, -1\n\tbnez a1, 1b\n"
        "3:\n\t"
        /* the output stage */
        "lw a0, 52(sp)\n\tlw a1, 24(a0)\n\tlw a2, 28(a0)\n\tlw a3, 32(a0)\n\tlw a4, 36(a0)\n\tlw a5, 40(a0)\n\t"
        "lw a6, 44(a0)\n\taddi t0, a1, 112\n\tsw t0, 24(a0)\n\taddi t0, a2, 4\n\tsw t0, 28(a0)\n\t"
        CV_G4_CHANNEL(s0, s1, s2, s3, 10, 11, 12, 13) CV_G4_CHANNEL(s4, s5, s6, s7, 14, 15, 16, 17)
        CV_G4_CHANNEL(s8, s9, s10, s11, 18, 19, 20, 21) CV_G4_CHANNEL(t3, t4, t5, t6, 22, 23, 24, 25)
        "lw a0, 52(sp)\n\tlw a1, 16(a0)\n\taddi a1, a1, -1\n\tsw a1, 16(a0)\n\tbnez a1, 5b\n\t"
        "lw ra, 0(sp)\n\tlw s0, 4(sp)\n\tlw s1, 8(sp)\n\tlw s2, 12(sp)\n\tlw s3, 16(sp)\n\tlw s4, 20(sp)\n\t"
        "lw s5, 24(sp)\n\tlw s6, 28(sp)\n\tlw s7, 32(sp)\n\tlw s8, 36(sp)\n\tlw s9, 40(sp)\n\tlw s10, 44(sp)\n\t"
        "lw s11, 48(sp)\n\taddi sp, sp, 64\n\tret\n"
        CV_G4_FIX(s0, 10) CV_G4_FIX(s1, 11) CV_G4_FIX(s2, 12) CV_G4_FIX(s3, 13) CV_G4_FIX(s4, 14)
        CV_G4_FIX(s5, 15) CV_G4_FIX(s6, 16) CV_G4_FIX(s7, 17) CV_G4_FIX(s8, 18) CV_G4_FIX(s9, 19)
        CV_G4_FIX(s10, 20) CV_G4_FIX(s11, 21) CV_G4_FIX(t3, 22) CV_G4_FIX(t4, 23) CV_G4_FIX(t5, 24)
        CV_G4_FIX(t6, 25) CV_G4_REST);
}
#undef CV_G4_CH
#undef CV_G4_POS
#undef CV_G4_RQ
#undef CV_G4_FIX
#undef CV_G4_REST
#undef CV_G4_STORE
#undef CV_G4_CHANNEL

/*
 * cv_panel_gemm with cv_gemm4x4q for the full panels of channels in its mode: rq is
 * cv_rq4_prep's words for the count channels, or NULL; the panel's tail must be zero.
 */
static CV_UNUSED void cv_panel_gemm_q(const int8_t *panel,
                                      int32_t rows,
                                      int32_t K,
                                      const int8_t *w,
                                      int32_t count,
                                      const int32_t *init,
                                      const int32_t *mult,
                                      const int32_t *shift,
                                      const int32_t *rq,
                                      int8_t *dst,
                                      const cv_out_params *o)
{
    if (rq && rows == 4 && count >= 4)
    {
        cv_g4_args a;
        a.panel = panel;
        a.w = w;
        a.K = K;
        a.groups = (K + 3) >> 2;
        a.tiles = count >> 2;
        a.init = init;
        a.rq = rq;
        a.dst = dst;
        a.dstride = o->dst_stride;
        a.relu = cv_rq_relu(o->out_off, o->act_min);
        a.act_min = o->act_min;
        a.act_max = o->act_max;
        cv_gemm4x4q(&a);
        const int32_t n = count & ~3;
        if (n == count)
        {
            return;
        }
        w += n * K;
        count -= n;
        init += n;
        mult += n;
        shift += n;
        dst += n;
    }
    cv_panel_gemm(panel, rows, K, w, count, init, mult, shift, dst, o);
}

#endif
#if defined(CV_WANT_FC)
/*
 * RV32IMC: 8 weight rows (K apart) against the input plus offset as int16 (v), over
 * `groups` groups of 8 along K (>= 1): acc[j] += sum of v[k] w_j[k]. Per group 8
 * input halfwords, 64 byte loads, multiplies and adds, 9 pointer steps: 64 MACs in 213
 * cycles (0.30 MAC per cycle), every load two instructions before its use. In assembly
 * because GCC spills some of the 8 accumulators and 8 row pointers of this loop (4.1
 * instructions per MAC instead of 3.3).
 */
#define CV_FC8_U(u, h)                                                                                                 \
    "lh s5, " #h "(a0)\n\t"                                                                                            \
    "lb a2, " #u "(a1)\n\t"                                                                                            \
    "lb ra, " #u "(t0)\n\t"                                                                                            \
    "mul a2, a2, s5\n\tadd t3, t3, a2\n\t"                                                                             \
    "lb a2, " #u "(t1)\n\t"                                                                                            \
    "mul ra, ra, s5\n\tadd t4, t4, ra\n\t"                                                                             \
    "lb ra, " #u "(t2)\n\t"                                                                                            \
    "mul a2, a2, s5\n\tadd t5, t5, a2\n\t"                                                                             \
    "lb a2, " #u "(s1)\n\t"                                                                                            \
    "mul ra, ra, s5\n\tadd t6, t6, ra\n\t"                                                                             \
    "lb ra, " #u "(s2)\n\t"                                                                                            \
    "mul a2, a2, s5\n\tadd a5, a5, a2\n\t"                                                                             \
    "lb a2, " #u "(s3)\n\t"                                                                                            \
    "mul ra, ra, s5\n\tadd a6, a6, ra\n\t"                                                                             \
    "lb ra, " #u "(s4)\n\t"                                                                                            \
    "mul a2, a2, s5\n\tadd a7, a7, a2\n\t"                                                                             \
    "mul ra, ra, s5\n\tadd s0, s0, ra\n\t"

CV_SHARED __attribute__((naked, noinline, noclone)) void
cv_fc8_h(const int16_t *v, const int8_t *w, int32_t K, int32_t groups, int32_t *acc)
{
    (void)v;
    (void)w;
    (void)K;
    (void)groups;
    (void)acc;
    __asm__ volatile("addi sp, sp, -32\n\t"
                     "sw s0, 0(sp)\n\tsw s1, 4(sp)\n\tsw s2, 8(sp)\n\tsw s3, 12(sp)\n\t"
                     "sw s4, 16(sp)\n\tsw s5, 20(sp)\n\tsw ra, 24(sp)\n\t"
                     "add t0, a1, a2\n\tadd t1, t0, a2\n\tadd t2, t1, a2\n\tadd s1, t2, a2\n\t"
                     "add s2, s1, a2\n\tadd s3, s2, a2\n\tadd s4, s3, a2\n\t"
                     "lw t3, 0(a4)\n\tlw t4, 4(a4)\n\tlw t5, 8(a4)\n\tlw t6, 12(a4)\n\t"
                     "lw a5, 16(a4)\n\tlw a6, 20(a4)\n\tlw a7, 24(a4)\n\tlw s0, 28(a4)\n\t"
                     ".balign 4\n1:\n\t" CV_FC8_U(0, 0) CV_FC8_U(1, 2) CV_FC8_U(2, 4) CV_FC8_U(3, 6) CV_FC8_U(4, 8)
                         CV_FC8_U(5, 10) CV_FC8_U(6, 12) CV_FC8_U(7, 14)
                     "addi a0, a0, 16\n\t"
                     "addi a1, a1, 8\n\taddi t0, t0, 8\n\taddi t1, t1, 8\n\taddi t2, t2, 8\n\t"
                     "addi s1, s1, 8\n\taddi s2, s2, 8\n\taddi s3, s3, 8\n\taddi s4, s4, 8\n\t"
                     "addi a3, a3, -1\n\t"
                     "bnez a3, 1b\n\t"
                     "sw t3, 0(a4)\n\tsw t4, 4(a4)\n\tsw t5, 8(a4)\n\tsw t6, 12(a4)\n\t"
                     "sw a5, 16(a4)\n\tsw a6, 20(a4)\n\tsw a7, 24(a4)\n\tsw s0, 28(a4)\n\t"
                     "lw s0, 0(sp)\n\tlw s1, 4(sp)\n\tlw s2, 8(sp)\n\tlw s3, 12(sp)\n\t"
                     "lw s4, 16(sp)\n\tlw s5, 20(sp)\n\tlw ra, 24(sp)\n\t"
                     "addi sp, sp, 32\n\t"
                     "ret\n\t");
}
#undef CV_FC8_U

/* The output stage of cv_fc12_h (per-tensor parameters, arm_nn_requantize's rounding
   as ((t - (t < 0)) >> pre + h) >> sh, see corev_nn.h's cv_rq4_prep). */
typedef struct
{
    int32_t m2, pre, h, sh; /* 0, 4, 8, 12 */
    int32_t out_off;        /* 16 */
    int32_t act_min;        /* 20 */
    int32_t act_max;        /* 24 */
    int8_t *dst;            /* 28: advanced by 12 dstep */
    int32_t dstep;          /* 32 */
} cv_fc_q;

/*
 * The same for 12 rows over groups of 16 along K: per group 16 input halfwords, 192
 * byte loads, multiplies and adds and 14 pointer steps and loop instructions: 3.17
 * instructions per MAC. All 28 registers hold the 12 accumulators, the 12 row
 * pointers, the input pointer, the input value and two weights; the end of the input
 * and the accumulators' address wait on the stack. With q, the 12 sums (acc: their
 * start values) are requantized and stored there (14 instructions an output), else
 * stored back to acc.
 */
#define CV_FC12_U(u, h)                                                                                                \
    "lh t6, " #h "(a0)\n\tlb a6, " #u "(a1)\n\tlb a7, " #u "(a2)\n\t"                                                  \
    "mul a6, a6, t6\n\tadd t3, t3, a6\n\tlb a6, " #u "(a3)\n\t"                                                        \
    "mul a7, a7, t6\n\tadd t4, t4, a7\n\tlb a7, " #u "(a4)\n\t"                                                        \
    "mul a6, a6, t6\n\tadd t5, t5, a6\n\tlb a6, " #u "(a5)\n\t"                                                        \
    "mul a7, a7, t6\n\tadd s0, s0, a7\n\tlb a7, " #u "(t0)\n\t"                                                        \
    "mul a6, a6, t6\n\tadd s1, s1, a6\n\tlb a6, " #u "(t1)\n\t"                                                        \
    "mul a7, a7, t6\n\tadd s2, s2, a7\n\tlb a7, " #u "(t2)\n\t"                                                        \
    "mul a6, a6, t6\n\tadd s3, s3, a6\n\tlb a6, " #u "(ra)\n\t"                                                        \
    "mul a7, a7, t6\n\tadd s4, s4, a7\n\tlb a7, " #u "(s10)\n\t"                                                       \
    "mul a6, a6, t6\n\tadd s5, s5, a6\n\tlb a6, " #u "(s11)\n\t"                                                       \
    "mul a7, a7, t6\n\tadd s6, s6, a7\n\tlb a7, " #u "(s9)\n\t"                                                        \
    "mul a6, a6, t6\n\tadd s7, s7, a6\n\tmul a7, a7, t6\n\tadd s8, s8, a7\n\t"
/* accumulator X: t0 = 2 mult, t1 = pre, t2 = h, ra = sh, a1 = output offset, a2/a3 =
   activation min/max, a4 = output pointer, a5 = its step, a0 temporary */
#define CV_FC12_RQ(X, L)                                                                                               \
    "mul a0, " #X ", t0\n\tmulhsu " #X ", " #X ", t0\n\tsrli a0, a0, 31\n\tadd " #X ", " #X ", a0\n\t"                  \
    "srai a0, " #X ", 31\n\tadd " #X ", " #X ", a0\n\tsra " #X ", " #X ", t1\n\tadd " #X ", " #X ", t2\n\t"              \
    "sra " #X ", " #X ", ra\n\tadd " #X ", " #X ", a1\n\tblt " #X ", a2, " #L "0f\n\tblt a3, " #X ", " #L "1f\n"          \
    #L "2:\n\tsb " #X ", 0(a4)\n\tadd a4, a4, a5\n\t"
#define CV_FC12_FIX(X, L) #L "0:\n\tmv " #X ", a2\n\tj " #L "2b\n" #L "1:\n\tmv " #X ", a3\n\tj " #L "2b\n"

CV_SHARED __attribute__((naked, noinline, noclone)) void
cv_fc12_h(const int16_t *v, const int8_t *w, int32_t K, int32_t groups, int32_t *acc, cv_fc_q *q)
{
    (void)v;
    (void)w;
    (void)K;
    (void)groups;
    (void)acc;
    (void)q;
    __asm__ volatile(
        "addi sp, sp, -64\n\t"
        "sw s0, 0(sp)\n\tsw s1, 4(sp)\n\tsw s2, 8(sp)\n\tsw s3, 12(sp)\n\tsw s4, 16(sp)\n\tsw s5, 20(sp)\n\t"
        "sw s6, 24(sp)\n\tsw s7, 28(sp)\n\tsw s8, 32(sp)\n\tsw s9, 36(sp)\n\tsw s10, 40(sp)\n\tsw s11, 44(sp)\n\t"
        "sw ra, 48(sp)\n\tsw a4, 52(sp)\n\tsw a5, 60(sp)\n\t"
        "slli a3, a3, 5\n\tadd a3, a0, a3\n\tsw a3, 56(sp)\n\t"
        "mv t6, a2\n\tadd a2, a1, t6\n\tadd a3, a2, t6\n\tadd a4, a3, t6\n\tadd a5, a4, t6\n\tadd t0, a5, t6\n\t"
        "add t1, t0, t6\n\tadd t2, t1, t6\n\tadd ra, t2, t6\n\tadd s10, ra, t6\n\tadd s11, s10, t6\n\tadd s9, s11, t6\n\t"
        "lw a6, 52(sp)\n\t"
        "lw t3, 0(a6)\n\tlw t4, 4(a6)\n\tlw t5, 8(a6)\n\tlw s0, 12(a6)\n\tlw s1, 16(a6)\n\tlw s2, 20(a6)\n\t"
        "lw s3, 24(a6)\n\tlw s4, 28(a6)\n\tlw s5, 32(a6)\n\tlw s6, 36(a6)\n\tlw s7, 40(a6)\n\tlw s8, 44(a6)\n"
        ".balign 4\n1:\n\t" CV_FC12_U(0, 0) CV_FC12_U(1, 2) CV_FC12_U(2, 4) CV_FC12_U(3, 6) CV_FC12_U(4, 8) CV_FC12_U(5, 10)
            CV_FC12_U(6, 12) CV_FC12_U(7, 14) CV_FC12_U(8, 16) CV_FC12_U(9, 18) CV_FC12_U(10, 20) CV_FC12_U(11, 22)
                CV_FC12_U(12, 24) CV_FC12_U(13, 26) CV_FC12_U(14, 28) CV_FC12_U(15, 30)
        "addi a0, a0, 32\n\taddi a1, a1, 16\n\taddi a2, a2, 16\n\taddi a3, a3, 16\n\taddi a4, a4, 16\n\t"
        "addi a5, a5, 16\n\taddi t0, t0, 16\n\taddi t1, t1, 16\n\taddi t2, t2, 16\n\taddi ra, ra, 16\n\t"
        "addi s10, s10, 16\n\taddi s11, s11, 16\n\taddi s9, s9, 16\n\t"
        "lw a6, 56(sp)\n\tbne a0, a6, 1b\n\t"
        "lw a6, 60(sp)\n\tbnez a6, 3f\n\t"
        "lw a6, 52(sp)\n\t"
        "sw t3, 0(a6)\n\tsw t4, 4(a6)\n\tsw t5, 8(a6)\n\tsw s0, 12(a6)\n\tsw s1, 16(a6)\n\tsw s2, 20(a6)\n\t"
        "sw s3, 24(a6)\n\tsw s4, 28(a6)\n\tsw s5, 32(a6)\n\tsw s6, 36(a6)\n\tsw s7, 40(a6)\n\tsw s8, 44(a6)\n"
        "4:\n\t"
        "lw s0, 0(sp)\n\tlw s1, 4(sp)\n\tlw s2, 8(sp)\n\tlw s3, 12(sp)\n\tlw s4, 16(sp)\n\tlw s5, 20(sp)\n\t"
        "lw s6, 24(sp)\n\tlw s7, 28(sp)\n\tlw s8, 32(sp)\n\tlw s9, 36(sp)\n\tlw s10, 40(sp)\n\tlw s11, 44(sp)\n\t"
        "lw ra, 48(sp)\n\taddi sp, sp, 64\n\tret\n"
        /* the output stage */
        "3:\n\tlw t0, 0(a6)\n\tlw t1, 4(a6)\n\tlw t2, 8(a6)\n\tlw ra, 12(a6)\n\tlw a1, 16(a6)\n\tlw a2, 20(a6)\n\t"
        "lw a3, 24(a6)\n\tlw a4, 28(a6)\n\tlw a5, 32(a6)\n\t"
        CV_FC12_RQ(t3, 10) CV_FC12_RQ(t4, 11) CV_FC12_RQ(t5, 12) CV_FC12_RQ(s0, 13) CV_FC12_RQ(s1, 14)
        CV_FC12_RQ(s2, 15) CV_FC12_RQ(s3, 16) CV_FC12_RQ(s4, 17) CV_FC12_RQ(s5, 18) CV_FC12_RQ(s6, 19)
        CV_FC12_RQ(s7, 20) CV_FC12_RQ(s8, 21)
        "lw a6, 60(sp)\n\tsw a4, 28(a6)\n\tj 4b\n"
        CV_FC12_FIX(t3, 10) CV_FC12_FIX(t4, 11) CV_FC12_FIX(t5, 12) CV_FC12_FIX(s0, 13) CV_FC12_FIX(s1, 14)
        CV_FC12_FIX(s2, 15) CV_FC12_FIX(s3, 16) CV_FC12_FIX(s4, 17) CV_FC12_FIX(s5, 18) CV_FC12_FIX(s6, 19)
        CV_FC12_FIX(s7, 20) CV_FC12_FIX(s8, 21));
}
#undef CV_FC12_U
#undef CV_FC12_RQ
#undef CV_FC12_FIX
#endif

#if defined(CV_WANT_ROWS)
/*
 * Dot products of one row x (int8, K) with `count` weight rows (K apart): acc[n] =
 * init[n] + x . w_n. For the last 1 to 3 rows of a matrix product, where the 4-row
 * panel kernels would compute 4 (fully connected kernels: 12 and 8 rows at a time, x as
 * int16 on the stack; K <= CV_ROW_KMAX).
 */
#define CV_ROW_KMAX 256 /* arm_nn_mat_mult_nt_t_s8 calls it for K <= CV_MM_KMAX (256) */
CV_SHARED void cv_row_dots(const int8_t *x, int32_t K, const int8_t *w, int32_t count, const int32_t *init,
                                  int32_t *acc)
{
    int16_t xh[CV_ROW_KMAX];
    for (int32_t k = 0; k < K; k++)
    {
        xh[k] = x[k];
    }
    int32_t n = 0;
    if (K >= 16)
    {
        const int32_t k16 = K & ~15;
        for (; n + 12 <= count; n += 12, w += 12 * K)
        {
            for (int32_t j = 0; j < 12; j++)
            {
                acc[n + j] = init[n + j];
            }
            cv_fc12_h(xh, w, K, K >> 4, acc + n, NULL);
            for (int32_t j = 0; j < 12; j++)
            {
                for (int32_t k = k16; k < K; k++)
                {
                    acc[n + j] += xh[k] * w[j * K + k];
                }
            }
        }
        const int32_t k8 = K & ~7;
        for (; n + 8 <= count; n += 8, w += 8 * K)
        {
            for (int32_t j = 0; j < 8; j++)
            {
                acc[n + j] = init[n + j];
            }
            cv_fc8_h(xh, w, K, K >> 3, acc + n);
            for (int32_t j = 0; j < 8; j++)
            {
                for (int32_t k = k8; k < K; k++)
                {
                    acc[n + j] += xh[k] * w[j * K + k];
                }
            }
        }
    }
    for (; n < count; n++, w += K)
    {
        int32_t a = init[n];
        for (int32_t k = 0; k < K; k++)
        {
            a += xh[k] * w[k];
        }
        acc[n] = a;
    }
}

#endif
#if COREV_XCV
#include "corev_xcv.h"
#endif

#endif
