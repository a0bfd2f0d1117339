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
    for (int32_t n = 0; n < count; n++)
    {
        int32_t s0 = 0, s1 = 0;
        int32_t k = 0;
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

/* Register-tiled loops: see above. */
#define CV_TILED __attribute__((optimize("no-schedule-insns", "ira-algorithm=priority")))
/* Loops with fewer accumulators: only the pre-RA scheduling off. */
#define CV_NO_SCHED __attribute__((optimize("no-schedule-insns")))

static CV_TILED CV_UNUSED void cv_panel_gemm(const int8_t *panel,
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

#if COREV_XCV
#include "corev_xcv.h"
#endif

#endif
