/*
 * Float32 to int8 quantization without an FPU, for the quantize kernels of this
 * directory (op_quantize.cpp: quantized_decomposed::, op_cortex_m_quantize.cpp:
 * cortex_m::) and their test (tests/fixtures/xcv_kernels). C and C++; all static.
 *
 * Both libraries compute, per element,
 *     q = clamp(zero_point + nearbyint(float(inv_scale * x)), qmin, qmax)
 * with inv_scale = 1.0f / float(scale): a float product (rounded to nearest even),
 * then rounded to an integer (ties to even). Without an FPU that is two soft-float
 * calls (__mulsf3, nearbyintf) and 340 instructions an element. Here:
 *
 * - Fast path, one mulhu: the significands' 48-bit product, its top 32 bits
 *   P in [2^30, 2^32) (less than 1 below the exact value in its last place).
 *   F = P >> n (n = c - exponent of x, 0 to 31) is |x * inv_scale| in units of 2^-16,
 *   rounded down: the exact product lies in [F, F + 1), and its float rounding moves it
 *   by at most 1 unit while F < 2^25 (below 2^9, the float's last place is at most 2
 *   units). When no half-integer is in [F - 1, F + 2], both roundings of the library
 *   give r = (F + 2^15) >> 16. (Rounding to nearest even is symmetric, so the sign is
 *   applied after.) Larger F saturate: r >= 512, one off at most, clamps to the range's
 *   end like the library's for zero points within +-256.
 * - Near a half-integer (about 1 element in 8,000), zeros, |x * inv_scale| < 2^-16 or
 *   >= 2^16: cv_quant_rare, out of line. The exact product: cv_quant_exact, rounded to
 *   float, then to an integer, ties to even.
 * - Subnormal, infinite or NaN x, |x * inv_scale| >= 2^28 and anything else the
 *   arithmetic does not cover: the caller's generic function, the library's own
 *   float expression (each library has its own for huge values: int64 or int32).
 *
 * A 16 x 16-bit mul in place of the mulhu (4 cycles less on the CV32E40P) is 2^-13 off:
 * 1 element in 16 then needed the exact product, which cost more than the mulhu saves.
 * The CORE-V loop below keeps it and takes the mulhu, not the exact product, for the
 * elements it cannot say (about 1 in 32 where n >= 7).
 *
 * The parameters (cv_quant_make) are checked once per call: inv_scale normal, positive,
 * at least 2^-113 and below 2^110, |zero_point| <= 256. Otherwise every element takes the
 * generic function.
 */
#ifndef COREV_QUANT_H
#define COREV_QUANT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#define CV_QUANT_HOT __attribute__((optimize("O2"), unused))
#else
#define CV_QUANT_HOT __attribute__((unused))
#endif

typedef struct
{
    uint32_t ms;    /* its 24-bit significand */
    int32_t es;     /* its biased exponent */
    uint32_t sign;  /* its sign bit */
    int32_t c;      /* n = c - (biased exponent of x) */
    int32_t ok;     /* 0: inv_scale not normal, or zero_point too large */
} cv_quant;

static inline uint32_t cv_quant_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline cv_quant cv_quant_make(float inv_scale, int32_t zero_point)
{
    cv_quant p;
    const uint32_t us = cv_quant_bits(inv_scale);
    p.es = (int32_t)((us >> 23) & 0xff);
    p.ms = (us & 0x7fffff) | 0x800000;
    p.sign = us & 0x80000000u;
    /* |x * inv_scale| = mx * ms * 2^(ex + es - 300) ~ P * 2^(ex + es - 284):
       F = P * 2^(ex + es - 268) */
    p.c = 268 - p.es;
    /* es >= 14: n = c - 255 < 0 for infinite and NaN x; es <= 236: n = c >= 32 for zeros
       and subnormals (they would take a hidden bit); |zero_point| <= 256: a saturated
       |x * inv_scale| >= 2^9 clamps to the same end of any int8 or uint8 range */
    p.ok = p.es >= 14 && p.es <= 236 && zero_point >= -256 && zero_point <= 256;
    return p;
}

/*
 * nearbyint(float(inv_scale * x)) for x of bits ux with |result| < 2^28, exactly: the
 * 48-bit product of the significands rounded to 24 bits (to nearest even), then to an
 * integer (ties to even). 0: it cannot say (subnormal, infinite or NaN x, larger
 * results); the caller then takes the library's expression.
 */
static __attribute__((unused)) int32_t cv_quant_exact(const cv_quant *p, uint32_t ux, int32_t *q)
{
    const uint32_t ex = (ux >> 23) & 0xff;
    if (ex - 1u >= 254u)
    {
        if ((ux << 1) == 0)
        {
            *q = 0;
            return 1;
        }
        return 0;
    }
    /* the 48-bit product H * 2^32 + L (mulhu and mul: no 64-bit shifts) */
    const uint32_t mx = (ux & 0x7fffff) | 0x800000;
    const uint32_t H = (uint32_t)(((uint64_t)mx * p->ms) >> 32); /* 2^14 .. 2^16 - 1 */
    const uint32_t L = mx * p->ms;
    const int32_t drop = 23 + (int32_t)(H >> 15); /* bits below the float's last one */
    uint32_t m = (H << (32 - drop)) | (L >> drop);
    const uint32_t rest = L & ((1u << drop) - 1);
    const uint32_t half = 1u << (drop - 1);
    if (rest > half || (rest == half && (m & 1)))
    {
        ++m; /* may reach 2^24: still exact */
    }
    const int32_t e = (int32_t)ex + p->es - 300 + drop; /* value = m * 2^e */
    int32_t r;
    if (e >= 0)
    {
        if (e > 4)
        {
            return 0; /* >= 2^28 */
        }
        r = (int32_t)(m << e);
    }
    else if (e < -25)
    {
        r = 0; /* < 2^-1 */
    }
    else
    {
        const int32_t sh = -e;
        r = (int32_t)(m >> sh);
        const uint32_t rem = m & ((1u << sh) - 1);
        const uint32_t h = 1u << (sh - 1);
        if (rem > h || (rem == h && (r & 1)))
        {
            ++r;
        }
    }
    *q = ((ux ^ p->sign) & 0x80000000u) ? -r : r;
    return 1;
}

/*
 * The library's expression for the elements the arithmetic here leaves:
 * zero_point + nearbyint(inv_scale * x), before the clamp.
 */
typedef int32_t (*cv_quant_generic)(float inv_scale, int32_t zero_point, float x);

/*
 * zero_point + nearbyint(inv_scale * x) before the clamp, for any x, as the operators'
 * reference computes it (quantized_decomposed's, which cortex_m's calls:
 * clamp(round(x * inv_scale) + zero_point, quant_min, quant_max) in float, then the cast):
 * a product beyond int32's range saturates at the range's end of its sign (+-2^30, which
 * any int8 or uint8 range clamps, for |zero_point| <= 2^20). ExecuTorch's kernels cast the
 * float to int64 (or int32) first, which C leaves undefined there: RV32F's conversion
 * gave -1 for 3.4e38 * 20, x86's gives INT64_MIN, the range's other end. NaN: 0 (before
 * the clamp), what the reference's cast gives on x86.
 */
static inline int32_t cv_quant_saturated(float inv_scale, int32_t zero_point, float x)
{
    const float r = nearbyintf(inv_scale * x);
    if (r != r)
    {
        return 0;
    }
    if (r >= 1073741824.0f)
    {
        return 1 << 30;
    }
    if (r <= -1073741824.0f)
    {
        return -(1 << 30);
    }
    return zero_point + (int32_t)r;
}

/* An element off the fast path: zero, near a half-integer, or what cv_quant_exact cannot
   say (the library's expression). Out of line: it keeps the loop's registers free. */
static __attribute__((noinline, unused)) int32_t cv_quant_rare(const cv_quant *p,
                                                               uint32_t ux,
                                                               float x,
                                                               float inv_scale,
                                                               int32_t zero_point,
                                                               cv_quant_generic generic)
{
    int32_t r;
    if ((ux << 1) == 0)
    {
        return zero_point;
    }
    if (cv_quant_exact(p, ux, &r))
    {
        return zero_point + r;
    }
    return generic(inv_scale, zero_point, x);
}

#if defined(COREV_XCV) && COREV_XCV
/*
 * CORE-V: cv_quantize's fast path in assembly, four elements an iteration of a counted
 * loop (hardware loops take no branch, and the path leaves the loop): per element 16
 * instructions and 16 cycles, and the loop's branches (1.5 cycles an element; 2 with
 * two elements an iteration). Elements x[0 .. m - 1] (m >= 1)
 * until one leaves the path (outside the span, or near a half-integer); x[m] is read
 * (the next element is loaded before the clamps and the store, so no load's result is
 * used at once), so the caller keeps the last element. Returns how many were done.
 *
 * The product of the significands' top 16 bits (cv.mulhhuN, 1 cycle, where the mulhu of
 * the C loop takes 5) is P less at most 2^17 + 1; shifted by n >= 7 (in the same
 * instruction by 7, then by n - 7) it is F less at most E = 2^10 + 3. The window around
 * the half-integers is widened to match: W = CV_XQUANT_W units each side, where it was 4,
 * about 1 element in 32. An element in it, or with n in [3, 7) (|x * inv_scale| >= 2^8),
 * takes the mulhu out of line (the C loop's F and window), then goes on in the loop,
 * unless that window holds it too (the exact path, out of the loop). On MobileNet's
 * input (27,648 elements) this took 3.5 cycles an element less.
 *
 * F with its sign: F xor the sign mask is F or -F - 1; s = that + 2^15 + W + zero_point
 * 2^16. s's low 16 bits below 2 W is the window test for either sign, and otherwise q =
 * s >> 16 (arithmetic): the sign, the rounding's 2^15 and the zero point in 3
 * instructions. (With W in place of the C loop's 4 the same q: no carry out of the low
 * 16 bits outside the window.)
 *
 * Registers: x a0 (the next element's), out a1 (its start a3), x + 4 (m + 1) a2, c - 7
 * t0, 25 t1, ms << 8 t2, 2^31 a4, 2^15 + W + zero_point 2^16 a6, 2 W << 16 a7, qmin t3,
 * qmax t4; ux t5, its sign a5, n - 7 and q t6, the product then s s0. The CORE-V
 * instructions as .insn (corev_xcv.h has their encodings): cv.extractu t6, t5, 7, 23
 * (the exponent), cv.mulhhuN s0, s0, t2, 7 (custom-2, funct3 101, bits 31:30 01, the
 * shift in bits 29:25), cv.lw t5, (a0), 4, cv.max and cv.min (or cv.clipr),
 * cv.sb t6, (a1), 1.
 */
#define CV_XQUANT_W 1032 /* E and the C loop's margin of 4, rounded up to 8 */
typedef struct
{
    uint32_t c7;   /* 0: cv_quant's c - 7 */
    uint32_t ms8;  /* 4: its significand << 8 */
    uint32_t bias; /* 8: 2^15 + W + zero_point 2^16 */
    int32_t qmin;  /* 12 */
    int32_t qmax;  /* 16 */
} cv_xquant_args;

#define CV_XQUANT_STR2(x) #x
#define CV_XQUANT_STR(x) CV_XQUANT_STR2(x)
#define CV_XQUANT_LOAD ".insn i 0x0b, 2, t5, a0, 4\n\t"
/* the clamps: cv.max with qmin, cv.min with qmax; or for int8's whole range one
   cv.clipr (to [-qmax - 1, qmax]), a cycle less an element */
#define CV_XQUANT_MAXMIN ".insn r 0x2b, 3, 0x2d, t6, t6, t3\n\t.insn r 0x2b, 3, 0x2b, t6, t6, t4\n\t"
#define CV_XQUANT_CLIPR ".insn r 0x2b, 3, 0x3a, t6, t6, t4\n\t"
/* one element; L: its labels' first digit (L5: n out of the cheap path's range, L6: in
   the wide window, L4: back from the mulhu) */
#define CV_XQUANT_ELEMENT(CLAMP, L)                                                                                    \
    ".insn i 0x5b, 0, t6, t5, 0x4f7\n\tsub t6, t0, t6\n\tbgeu t6, t1, " #L "5f\n\t"                                    \
    "slli s0, t5, 8\n\tor s0, s0, a4\n\t.insn r 0x5b, 5, 0x27, s0, s0, t2\n\tsrl s0, s0, t6\n\t"                     \
    "srai a5, t5, 31\n\txor s0, s0, a5\n\tadd s0, s0, a6\n\tslli t6, s0, 16\n\tbltu t6, a7, " #L "6f\n" #L "4:\n\t"   \
    CV_XQUANT_LOAD "srai t6, s0, 16\n\t" CLAMP ".insn s 0x2b, 0, t6, 1(a1)\n\t"
/* its out-of-line part: n - 3 in [0, 29) (else the exact path), the mulhu, the C loop's
   window (else the exact path), back */
#define CV_XQUANT_MULHU(L)                                                                                             \
    #L "5:\n\taddi t6, t6, 4\n\tsltiu s0, t6, 29\n\tbeqz s0, 8b\n\taddi t6, t6, 3\n\tj " #L "7f\n"                    \
    #L "6:\n\t.insn i 0x5b, 0, t6, t5, 0x4f7\n\tsub t6, t0, t6\n\taddi t6, t6, 7\n"                                  \
    #L "7:\n\tslli s0, t5, 8\n\tor s0, s0, a4\n\tmulhu s0, s0, t2\n\tsrl s0, s0, t6\n\t"                              \
    "srai a5, t5, 31\n\txor s0, s0, a5\n\tadd s0, s0, a6\n\taddi s0, s0, " CV_XQUANT_STR(-(CV_XQUANT_W - 4)) "\n\t"   \
    "slli t6, s0, 16\n\tlui a5, 0x80\n\tbltu t6, a5, 8b\n\tj " #L "4b\n"
#define CV_XQUANT_FAST(NAME, CLAMP)                                                                                    \
    static __attribute__((naked, noinline, unused)) int32_t NAME(const uint32_t *x, uint8_t *out, int32_t m,         \
                                                                 const cv_xquant_args *a)                             \
    {                                                                                                                  \
        (void)x;                                                                                                       \
        (void)out;                                                                                                     \
        (void)m;                                                                                                       \
        (void)a;                                                                                                       \
        __asm__ volatile(CV_XQUANT_BODY(CLAMP));                                                                       \
    }
#define CV_XQUANT_BODY(CLAMP)                                                                                          \
    "addi sp, sp, -16\n\t"                                                                                             \
    "sw s0, 0(sp)\n\t"                                                                                                 \
    "lw t0, 0(a3)\n\t"                                                                                                 \
    "lw t2, 4(a3)\n\t"                                                                                                 \
    "lw a6, 8(a3)\n\t"                                                                                                 \
    "lw t3, 12(a3)\n\t"                                                                                                \
    "lw t4, 16(a3)\n\t"                                                                                                \
    "mv a3, a1\n\t"                                                                                                    \
    "addi a2, a2, 1\n\t"                                                                                               \
    "slli a2, a2, 2\n\t"                                                                                               \
    "add a2, a2, a0\n\t"                                                                                               \
    "li t1, 25\n\t"                                                                                                    \
    "lui a4, 0x80000\n\t"                                                                                              \
    "li a7, " CV_XQUANT_STR(2 * CV_XQUANT_W) "\n\t"                                                                    \
    "slli a7, a7, 16\n\t" CV_XQUANT_LOAD "1:\n\t" CV_XQUANT_ELEMENT(CLAMP, 2) "beq a0, a2, 8f\n\t"                      \
    CV_XQUANT_ELEMENT(CLAMP, 3) "beq a0, a2, 8f\n\t" CV_XQUANT_ELEMENT(CLAMP, 4) "beq a0, a2, 8f\n\t"               \
    CV_XQUANT_ELEMENT(CLAMP, 5) "bne a0, a2, 1b\n"                                                                     \
    "8:\n\t"                                                                                                           \
    "sub a0, a1, a3\n\t"                                                                                               \
    "lw s0, 0(sp)\n\t"                                                                                                 \
    "addi sp, sp, 16\n\t"                                                                                              \
    "ret\n" CV_XQUANT_MULHU(2) CV_XQUANT_MULHU(3) CV_XQUANT_MULHU(4) CV_XQUANT_MULHU(5)
CV_XQUANT_FAST(cv_xquant_fast, CV_XQUANT_MAXMIN)
CV_XQUANT_FAST(cv_xquant_fast_int8, CV_XQUANT_CLIPR)
#undef CV_XQUANT_FAST
#undef CV_XQUANT_BODY
#undef CV_XQUANT_ELEMENT
#undef CV_XQUANT_MULHU
#undef CV_XQUANT_MAXMIN
#undef CV_XQUANT_CLIPR
#undef CV_XQUANT_LOAD
#undef CV_XQUANT_STR
#undef CV_XQUANT_STR2
#endif

/*
 * n elements into bytes (int8 or uint8: the same byte for the same q in range).
 */
static CV_QUANT_HOT void cv_quantize(const float *in,
                                     uint8_t *out,
                                     int32_t n,
                                     float inv_scale,
                                     int32_t zero_point,
                                     int32_t qmin,
                                     int32_t qmax,
                                     cv_quant_generic generic)
{
    const cv_quant p = cv_quant_make(inv_scale, zero_point);
    const uint32_t *x = (const uint32_t *)(const void *)in;
    const uint32_t span_q = (uint32_t)(qmax - qmin); /* qmin <= qmax */
    /* an out-of-range parameter or a negative scale (no quantizer makes one): every
       element takes the generic expression */
    const uint32_t span = p.ok && !p.sign ? 32u : 0u;
    const uint32_t ms8 = p.ms << 8, c = (uint32_t)p.c;
#if defined(COREV_XCV) && COREV_XCV
    if (span)
    {
        const cv_xquant_args xa = {c - 7u, p.ms << 8, 0x8000u + CV_XQUANT_W + ((uint32_t)zero_point << 16), qmin,
                                   qmax};
        const int32_t int8_range = qmin == -qmax - 1 && qmax >= 0;
        for (int32_t i = 0; i < n; i++)
        {
            if (n - i >= 2)
            {
                i += int8_range ? cv_xquant_fast_int8(x + i, out + i, n - i - 1, &xa)
                                : cv_xquant_fast(x + i, out + i, n - i - 1, &xa);
            }
            /* the element that left the path, or the last: exactly, as below */
            const int32_t q = cv_quant_rare(&p, x[i], in[i], inv_scale, zero_point, generic);
            out[i] = (uint8_t)(q < qmin ? qmin : q > qmax ? qmax : q);
        }
        return;
    }
#endif
    for (int32_t i = 0; i < n; i++)
    {
        const uint32_t ux = x[i];
        /* zeros and subnormals too: c >= 32 (cv_quant_make) */
        const uint32_t nsh = c - ((ux << 1) >> 24);
        int32_t q;
        if (__builtin_expect(nsh < span, 1))
        {
            const uint32_t P = (uint32_t)(((uint64_t)((ux << 8) | 0x80000000u) * ms8) >> 32);
            const uint32_t u = (P >> nsh) + 0x8000u;
            const int32_t neg = (int32_t)ux >> 31;
            q = zero_point + ((int32_t)((u >> 16) ^ (uint32_t)neg) - neg);
            /* a half-integer within [F - 1, F + 2]: u's low half in [-2, 1] (with margin) */
            if (__builtin_expect(((u + 4u) << 16) < (8u << 16), 0))
            {
                q = cv_quant_rare(&p, ux, in[i], inv_scale, zero_point, generic);
            }
        }
        else if (span == 0)
        {
            q = generic(inv_scale, zero_point, in[i]);
        }
        else
        {
            q = cv_quant_rare(&p, ux, in[i], inv_scale, zero_point, generic);
        }
        /* one untaken branch when q is inside [qmin, qmax] (the clamps as branches
           would be taken for most elements) */
        if (__builtin_expect((uint32_t)(q - qmin) > span_q, 0))
        {
            q = q < qmin ? qmin : qmax;
        }
        out[i] = (uint8_t)q;
    }
}

/* ---------------------------------------------------------------------------------
 * int8 to float32: out = float(q - zero_point) * scale, rounded once (to nearest
 * even), as both libraries compute it (an exact int-to-float conversion, then
 * __mulsf3). For a normal scale and |q - zero_point| < 256: d = |q - zero_point| is
 * shifted to 8 bits (128..255), so its product with the 24-bit significand of the
 * scale has 31 or 32 bits: one 32-bit multiply, the rounding on its low 7 or 8 bits.
 * ------------------------------------------------------------------------------- */

/* floor(log2(i)) for 0 < i < 256 */
#define CV_L4(v) v, v, v, v
#define CV_L16(v) CV_L4(v), CV_L4(v), CV_L4(v), CV_L4(v)
static const uint8_t cv_log2_byte[256] = {0, 0, 1, 1, CV_L4(2), CV_L4(3), CV_L4(3), CV_L16(4),
                                          CV_L16(5), CV_L16(5), CV_L16(6), CV_L16(6), CV_L16(6), CV_L16(6),
                                          CV_L16(7), CV_L16(7), CV_L16(7), CV_L16(7), CV_L16(7), CV_L16(7),
                                          CV_L16(7), CV_L16(7)};
#undef CV_L4
#undef CV_L16

typedef struct
{
    uint32_t ms;   /* scale's 24-bit significand */
    uint32_t es;   /* its biased exponent */
    uint32_t sign; /* its sign bit */
    int32_t ok;    /* a normal scale */
} cv_dequant;

static inline cv_dequant cv_dequant_make(float scale)
{
    cv_dequant p;
    const uint32_t us = cv_quant_bits(scale);
    p.es = (us >> 23) & 0xff;
    p.ms = (us & 0x7fffff) | 0x800000;
    p.sign = us & 0x80000000u;
    p.ok = p.es - 1u < 254u;
    return p;
}

/* The bits of float(d) * scale for |d| < 256 and a normal scale. */
static inline uint32_t cv_dequant_one(const cv_dequant *p, int32_t d)
{
    uint32_t s = p->sign;
    uint32_t a = (uint32_t)d;
    if (d < 0)
    {
        s ^= 0x80000000u;
        a = 0u - a;
    }
    if (a == 0)
    {
        return p->sign; /* 0 * scale: a zero with the scale's sign */
    }
    const uint32_t l = cv_log2_byte[a];
    const uint32_t P = (a << (7 - l)) * p->ms; /* 2^30 .. 2^32 - 1 */
    const uint32_t drop = 7 + (P >> 31);
    uint32_t m = P >> drop; /* 2^23 .. 2^24 - 1 */
    const uint32_t rest = P & ((1u << drop) - 1);
    const uint32_t half = 1u << (drop - 1);
    if (rest > half || (rest == half && (m & 1)))
    {
        ++m; /* a carry to 2^24 moves into the exponent below */
    }
    const uint32_t e = p->es + l + drop - 7; /* the result's biased exponent, >= 1 */
    if (e >= 255)
    {
        return s | 0x7f800000u;
    }
    const uint32_t out = ((e - 1) << 23) + m;
    return s | (out >= 0x7f800000u ? 0x7f800000u : out);
}

/*
 * count consecutive magnitudes a = 1 .. count (< 256) of float(a) * scale, or'ed with
 * sign, to t[0], t[step], t[2 step], ... Per binade of a (2^l <= a < 2^(l+1)) the product
 * P = a * (ms << (7 - l)) in [2^30, 2^32) grows by one addition; P shifted to 32 bits
 * (x2 when below 2^31), its top 24 bits rounded to nearest even without a branch:
 * about 20 cycles a value where cv_dequant_one took 53. For es <= 246: no result
 * reaches infinity (e - 1 <= 253).
 */
static CV_QUANT_HOT void cv_dequant_run(uint32_t *t, int32_t step, int32_t count, const cv_dequant *p, uint32_t sign)
{
    int32_t a = 1;
    for (uint32_t l = 0; l < 8 && a <= count; l++)
    {
        const uint32_t M = p->ms << (7 - l);
        const int32_t last = (int32_t)(2u << l) - 1 < count ? (int32_t)(2u << l) - 1 : count;
        /* biased exponent minus one, before the top bit of P: es + l - 1 */
        const uint32_t ebase = ((p->es + l - 1) << 23) | sign;
        uint32_t P = (uint32_t)a * M;
        for (; a <= last; a++, P += M, t += step)
        {
            const uint32_t top = P >> 31;
            const uint32_t Q = P << (top ^ 1);             /* 2^31 .. 2^32 - 1 */
            uint32_t m = Q >> 8;                           /* 2^23 .. 2^24 - 1 */
            m += ((Q & 0xffu) + (m & 1u) + 127u) >> 8;     /* to nearest, ties to even */
            *t = ebase + (top << 23) + m;                  /* a carry into 2^24: the next exponent */
        }
    }
}

/* table[i] = the bits of float(first + i) * scale for i < 256 (|first|, |first + 255| < 256). */
static CV_QUANT_HOT void cv_dequant_table(const cv_dequant *p, uint32_t *table, int32_t first)
{
    if (p->es > 246)
    {
        for (int32_t i = 0; i < 256; i++)
        {
            table[i] = cv_dequant_one(p, first + i);
        }
        return;
    }
    /* d = first + i: zero, positive d upwards, negative d downwards from -1 */
    const int32_t last = first + 255;
    if (first <= 0 && last >= 0)
    {
        table[-first] = p->sign; /* 0 * scale: a zero with the scale's sign */
    }
    if (last > 0)
    {
        const int32_t lo = first > 1 ? first : 1; /* the smallest positive d */
        if (lo == 1)
        {
            cv_dequant_run(table + (1 - first), 1, last, p, p->sign);
        }
        else
        {
            for (int32_t d = lo; d <= last; d++)
            {
                table[d - first] = cv_dequant_one(p, d);
            }
        }
    }
    if (first < 0)
    {
        const int32_t hi = last < -1 ? last : -1; /* the negative d nearest zero */
        if (hi == -1)
        {
            cv_dequant_run(table + (-1 - first), -1, -first, p, p->sign ^ 0x80000000u);
        }
        else
        {
            for (int32_t d = first; d <= hi; d++)
            {
                table[d - first] = cv_dequant_one(p, d);
            }
        }
    }
}

/* Elements from which the table pays: it costs about 256 x 20 cycles, a lookup 9, a
   value computed alone about 30. */
#define CV_DEQUANT_TABLE_MIN 256

/*
 * n int8 (cv_dequantize_s8) or uint8 (cv_dequantize_u8) values to float bits, for a
 * normal scale (cv_dequant_make(scale).ok) and |q - zero_point| < 256 for every q of
 * the type (the caller checks the zero point). From CV_DEQUANT_TABLE_MIN elements on,
 * the 256 possible results are computed once into table (256 words, cv_dequant_table)
 * and looked up.
 */
#define CV_DEQUANT_DEFINE(NAME, T, FIRST)                                                                              \
    static CV_QUANT_HOT void NAME(const T *in, uint32_t *out, int32_t n, float scale, int32_t zero_point,             \
                                  uint32_t *table)                                                                     \
    {                                                                                                                  \
        const cv_dequant p = cv_dequant_make(scale);                                                                   \
        if (n >= CV_DEQUANT_TABLE_MIN && table)                                                                        \
        {                                                                                                              \
            cv_dequant_table(&p, table, (FIRST) - zero_point);                                                         \
            const uint32_t *t = table - (FIRST);                                                                       \
            for (int32_t i = 0; i < n; i++)                                                                            \
            {                                                                                                          \
                out[i] = t[in[i]];                                                                                     \
            }                                                                                                          \
            return;                                                                                                    \
        }                                                                                                              \
        for (int32_t i = 0; i < n; i++)                                                                                \
        {                                                                                                              \
            out[i] = cv_dequant_one(&p, (int32_t)in[i] - zero_point);                                                  \
        }                                                                                                              \
    }
CV_DEQUANT_DEFINE(cv_dequantize_s8, int8_t, -128)
CV_DEQUANT_DEFINE(cv_dequantize_u8, uint8_t, 0)
#undef CV_DEQUANT_DEFINE

#endif
