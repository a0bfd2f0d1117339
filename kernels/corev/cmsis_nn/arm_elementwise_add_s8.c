/*
 * Replaces CMSIS-NN's Source/BasicMathFunctions/arm_elementwise_add_s8.c (its C path)
 * for RV32IMC (CV32E40P). Defines arm_elementwise_add_s8 (the residual additions of
 * ResNet-8).
 *
 * Why faster: each element takes three requantizations (both inputs, then the sum).
 * arm_nn_requantize's C form builds a 64-bit sum and shift and a masked rounding per
 * call; here the multipliers' parameters are prepared once per call and each
 * requantization is the mulhsu form of corev_nn.h (4 instructions to the rounded
 * product, then the rounding shift), two elements per iteration. From 512 elements on,
 * the inputs' requantizations come from tables of their 256 values (cv_add_lut). On
 * CORE-V, for output shifts from -14 on (those of ResNet-8's additions), the tables are
 * of the output's scale and an element is two table loads, an add and a test
 * (cv_xadd_near: about 17 cycles where the exact output stage took 24).
 *
 * Bit-exact with the C path: the same integer steps, arm_nn_requantize's rounding (and
 * arm_nn_requantize itself for a negative multiplier); cv_xadd_near_make says why
 * cv_xadd_near gives the same bytes.
 */
#include "corev_nn.h"

/* CORE-V: blocks from this size on go through the tables (2 x 256 requantizations). */
#define CV_XADD_LUT_MIN 512
/* RV32IMC: the same, in C (the tables cost about 16 K cycles, an element then about 25
   to 40 where the three requantizations took 65; measured even at about 400). */
#define CV_ADD_LUT_MIN 512

/* An input's requantized value t(x): the C path's first steps, for one input */
CV_INLINE int32_t cv_add_t(int32_t x, int32_t off, int32_t left_shift, const cv_rq q)
{
    return cv_rq_apply((int32_t)((uint32_t)(x + off) << left_shift), q);
}

/* One element: the C path's steps. */
CV_INLINE int8_t cv_add_one(int32_t x1,
                            int32_t x2,
                            int32_t off1,
                            int32_t off2,
                            int32_t left_shift,
                            const cv_rq q1,
                            const cv_rq q2,
                            const cv_rq qo,
                            int32_t out_off,
                            int32_t act_min,
                            int32_t act_max)
{
    const int32_t a = cv_add_t(x1, off1, left_shift, q1);
    const int32_t b = cv_add_t(x2, off2, left_shift, q2);
    return cv_rq_out((int32_t)((uint32_t)a + (uint32_t)b), qo, out_off, act_min, act_max);
}

#if COREV_XCV
/* floor(t 2^A out_mult / 2^(32 + B)): one mulh (t 2^A an int32) */
CV_INLINE int32_t cv_xadd_scale(int32_t t, int32_t A, int32_t B, int32_t out_mult)
{
    return (int32_t)(((int64_t)(int32_t)((uint32_t)t << A) * out_mult) >> 32) >> B;
}

/* max(|a|, |b|) as unsigned */
CV_INLINE uint32_t cv_abs_max(int32_t a, int32_t b)
{
    const uint32_t ua = a < 0 ? 0u - (uint32_t)a : (uint32_t)a, ub = b < 0 ? 0u - (uint32_t)b : (uint32_t)b;
    return ua > ub ? ua : ub;
}

/* 1 where an input's table, t(x) = cv_rq_apply((x + off) << left_shift, q) for x from
   -128 to 127, is non-decreasing: no shifted value wraps (|x + off| <= 128 + |off| <
   2^(31 - left_shift - q.ls)), and the requantization of a multiplier >= 0 is monotone
   (a rounded product, then a rounded shift). Then max |t| is at an end of the table. */
CV_INLINE int32_t cv_add_table_monotone(int32_t off, int32_t left_shift, const cv_rq q)
{
    const uint32_t span = 128u + (off < 0 ? 0u - (uint32_t)off : (uint32_t)off);
    const int32_t total = left_shift + q.ls;
    return left_shift >= 0 && total <= 23 && span < (1u << (31 - total));
}

/* How the tables' t become cv_xadd_near's T (cv_xadd_near_make) */
typedef struct
{
    int32_t A, B, out_mult;
    uint32_t bias; /* T1's */
} cv_xadd_near_plan;

/*
 * cv_xadd_near's tables: T[x] = floor(t(x) M 2^16) for the 256 int8 x, t(x) the input's
 * requantized value (cv_add_t), M = out_mult 2^(out_shift - 31), so that
 * T1[a] + T2[b] + 1 is within 1 of (t1(a) + t2(b)) M 2^16. The exact output stage
 * (rounding doubling high multiply, then a rounding shift by S = -out_shift) rounds
 * (t1 + t2) M to the nearest integer with an error of at most 1.5 2^-S before the last
 * rounding: for S >= 14 at most 6 units of 2^-16. So where no half-integer lies within
 * 7 units of T1[a] + T2[b] + 1 (cv_xadd_near's test keeps 8) both give the same integer.
 * T is one mulh: floor(floor(t 2^A out_mult / 2^32) / 2^B) = floor(t out_mult /
 * 2^(15 + S)) with A = 17 - S or B = S - 17 (cv_xadd_scale); T1 also holds
 * cv_xadd_near's bias (out_offset in it). Fills p and returns 1 where that holds, from
 * the largest |t| of each input (max1, max2: the tables are monotone, so at their ends),
 * else returns 0: S < 14, |t1| + |t2| reaching 2^31 (the exact stage's sum wraps),
 * t 2^A not an int32, or |T| above 2^29 (the sum with the bias would wrap).
 */
static int32_t cv_xadd_near_make(uint32_t max1,
                                 uint32_t max2,
                                 int32_t out_mult,
                                 int32_t out_shift,
                                 int32_t out_offset,
                                 cv_xadd_near_plan *p)
{
    const int32_t S = -out_shift;
    if (S < 14 || S > 31 || out_mult < 0)
    {
        return 0;
    }
    const int32_t A = S < 17 ? 17 - S : 0, B = S > 17 ? S - 17 : 0;
    /* max |T| the same way (m << A checked first) */
    const uint32_t m = max1 > max2 ? max1 : max2;
    if (max1 >= (1u << 31) - max2 || m >= (1u << (31 - A)) || cv_xadd_scale((int32_t)m, A, B, out_mult) >= (1 << 29) - 1)
    {
        return 0;
    }
    p->A = A;
    p->B = B;
    p->out_mult = out_mult;
    /* 2^15 (a half), 8 (the test's margin), 1 (the floors) and the output offset; T1 + T2
       does not wrap (|T| < 2^29, |bias| < 2^24) */
    p->bias = 0x8009u + ((uint32_t)out_offset << 16);
    return 1;
}
#else
/* n elements through the tables l1, l2 (entry 0 at the pointer): out of line, so that
   the tables are pointers in registers, not offsets into a 2 KiB stack frame. */
static __attribute__((noinline)) void cv_add_lut(const int8_t *a,
                                                 const int8_t *b,
                                                 int8_t *out,
                                                 int32_t n,
                                                 const int32_t *l1,
                                                 const int32_t *l2,
                                                 const cv_rq qo,
                                                 int32_t out_off,
                                                 int32_t act_min,
                                                 int32_t act_max)
{
    for (; n > 0; n--)
    {
        const int32_t sum = (int32_t)((uint32_t)l1[*a++] + (uint32_t)l2[*b++]);
        *out++ = cv_rq_out(sum, qo, out_off, act_min, act_max);
    }
}
#endif

#if COREV_XCV
/*
 * CORE-V: each input's requantization depends on its int8 value only: tables of the 256
 * values per call, then cv_xadd_near (output-scale tables) or the output stage in a
 * hardware loop (cv_xadd_lut, corev_xcv.h), for n >= CV_XADD_LUT_MIN. Returns 0 (nothing
 * done) for parameters the kernels do not take. Out of line: the elements cv_xadd_near
 * leaves to C call arm_elementwise_add_s8 again, whose frame then does not hold these
 * 2 KiB of tables a second time.
 */
static __attribute__((noinline)) int32_t cv_xadd_tables(const int8_t *input_1_vect,
                                                        const int8_t *input_2_vect,
                                                        int32_t input_1_offset,
                                                        int32_t input_1_mult,
                                                        int32_t input_1_shift,
                                                        int32_t input_2_offset,
                                                        int32_t input_2_mult,
                                                        int32_t input_2_shift,
                                                        int32_t left_shift,
                                                        int8_t *output,
                                                        int32_t out_offset,
                                                        int32_t out_mult,
                                                        int32_t out_shift,
                                                        int32_t out_activation_min,
                                                        int32_t out_activation_max,
                                                        int32_t n)
{
    const cv_xq qo_x = cv_xq_make(out_mult, out_shift);
    if (qo_x.mode != 1 || input_1_mult < 0 || input_2_mult < 0)
    {
        return 0;
    }
    int32_t t1[256], t2[256];
    const cv_rq q1 = cv_rq_make(input_1_mult, input_1_shift);
    const cv_rq q2 = cv_rq_make(input_2_mult, input_2_shift);
    /* the output-scale tables where they are exact, else the inputs' (cv_xadd_lut's),
       built in one pass */
    cv_xadd_near_plan plan;
    const int32_t near = cv_add_table_monotone(input_1_offset, left_shift, q1) &&
        cv_add_table_monotone(input_2_offset, left_shift, q2) &&
        cv_xadd_near_make(cv_abs_max(cv_add_t(-128, input_1_offset, left_shift, q1),
                                     cv_add_t(127, input_1_offset, left_shift, q1)),
                          cv_abs_max(cv_add_t(-128, input_2_offset, left_shift, q2),
                                     cv_add_t(127, input_2_offset, left_shift, q2)),
                          out_mult, out_shift, out_offset, &plan);
    for (int32_t x = -128; x < 128; x++)
    {
        int32_t a = cv_add_t(x, input_1_offset, left_shift, q1);
        int32_t b = cv_add_t(x, input_2_offset, left_shift, q2);
        if (near)
        {
            a = (int32_t)((uint32_t)cv_xadd_scale(a, plan.A, plan.B, plan.out_mult) + plan.bias);
            b = cv_xadd_scale(b, plan.A, plan.B, plan.out_mult);
        }
        t1[x + 128] = a;
        t2[x + 128] = b;
    }
    if (near)
    {
        /* the output-scale tables: through cv_xadd_near, and the elements it stops at
           (16 sums in 65,536 at most) exactly */
        cv_xadd_near_args c;
        c.T1 = t1 + 128;
        c.T2 = t2 + 128;
        c.act_min = out_activation_min;
        c.act_max = out_activation_max;
        for (int32_t i = 0; i < n; i++)
        {
            i += cv_xadd_near(input_1_vect + i, input_2_vect + i, output + i, n - i, &c);
            if (i < n)
            {
                /* one element: arm_elementwise_add_s8's C path (a call, not its code again) */
                arm_elementwise_add_s8(input_1_vect + i, input_2_vect + i, input_1_offset, input_1_mult,
                                       input_1_shift, input_2_offset, input_2_mult, input_2_shift, left_shift,
                                       output + i, out_offset, out_mult, out_shift, out_activation_min,
                                       out_activation_max, 1);
            }
        }
        return 1;
    }
    cv_xadd_args a;
    a.t1 = t1 + 128;
    a.t2 = t2 + 128;
    a.m2 = qo_x.m2;
    a.ps = (uint32_t)(qo_x.pre << 8 | qo_x.sh);
    a.out_off = out_offset;
    a.act_min = out_activation_min;
    a.act_max = out_activation_max;
    cv_xadd_lut(input_1_vect, input_2_vect, output, n, &a);
    return 1;
}
#endif

arm_cmsis_nn_status arm_elementwise_add_s8(const int8_t *input_1_vect,
                                           const int8_t *input_2_vect,
                                           const int32_t input_1_offset,
                                           const int32_t input_1_mult,
                                           const int32_t input_1_shift,
                                           const int32_t input_2_offset,
                                           const int32_t input_2_mult,
                                           const int32_t input_2_shift,
                                           const int32_t left_shift,
                                           int8_t *output,
                                           const int32_t out_offset,
                                           const int32_t out_mult,
                                           const int32_t out_shift,
                                           const int32_t out_activation_min,
                                           const int32_t out_activation_max,
                                           const int32_t block_size)
{
    int32_t n = block_size;
#if COREV_XCV
    /* (n tested here: one element, as cv_xadd_near leaves them, does not enter its frame) */
    if (n >= CV_XADD_LUT_MIN &&
        cv_xadd_tables(input_1_vect, input_2_vect, input_1_offset, input_1_mult, input_1_shift, input_2_offset,
                       input_2_mult, input_2_shift, left_shift, output, out_offset, out_mult, out_shift,
                       out_activation_min, out_activation_max, n))
    {
        return ARM_CMSIS_NN_SUCCESS;
    }
#endif
    if (input_1_mult >= 0 && input_2_mult >= 0 && out_mult >= 0)
    {
        const cv_rq q1 = cv_rq_make(input_1_mult, input_1_shift);
        const cv_rq q2 = cv_rq_make(input_2_mult, input_2_shift);
        const cv_rq qo = cv_rq_make(out_mult, out_shift);
#if !COREV_XCV
        if (n >= CV_ADD_LUT_MIN)
        {
            /* each input's requantization depends on its int8 value only: 2 x 256 of them
               once, then one requantization an element instead of three (67 cycles an
               element on ResNet-8's additions) */
            int32_t t1[256], t2[256];
            for (int32_t x = -128; x < 128; x++)
            {
                t1[x + 128] = cv_add_t(x, input_1_offset, left_shift, q1);
                t2[x + 128] = cv_add_t(x, input_2_offset, left_shift, q2);
            }
            cv_add_lut(input_1_vect, input_2_vect, output, n, t1 + 128, t2 + 128, qo, out_offset, out_activation_min,
                       out_activation_max);
            return ARM_CMSIS_NN_SUCCESS;
        }
#endif
        for (; n >= 2; n -= 2)
        {
            output[0] = cv_add_one(input_1_vect[0], input_2_vect[0], input_1_offset, input_2_offset, left_shift, q1,
                                   q2, qo, out_offset, out_activation_min, out_activation_max);
            output[1] = cv_add_one(input_1_vect[1], input_2_vect[1], input_1_offset, input_2_offset, left_shift, q1,
                                   q2, qo, out_offset, out_activation_min, out_activation_max);
            input_1_vect += 2;
            input_2_vect += 2;
            output += 2;
        }
        if (n)
        {
            *output = cv_add_one(*input_1_vect, *input_2_vect, input_1_offset, input_2_offset, left_shift, q1, q2, qo,
                                 out_offset, out_activation_min, out_activation_max);
        }
        return ARM_CMSIS_NN_SUCCESS;
    }
    for (; n > 0; n--)
    {
        const int32_t a = arm_nn_requantize(
            (int32_t)((uint32_t)(*input_1_vect++ + input_1_offset) << left_shift), input_1_mult, input_1_shift);
        const int32_t b = arm_nn_requantize(
            (int32_t)((uint32_t)(*input_2_vect++ + input_2_offset) << left_shift), input_2_mult, input_2_shift);
        const int32_t sum = (int32_t)((uint32_t)a + (uint32_t)b);
        *output++ = cv_clamp8(
            arm_nn_requantize(sum, out_mult, out_shift) + out_offset, out_activation_min, out_activation_max);
    }
    return ARM_CMSIS_NN_SUCCESS;
}
