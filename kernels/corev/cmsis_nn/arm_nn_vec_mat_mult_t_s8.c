/*
 * Replaces CMSIS-NN's Source/NNSupportFunctions/arm_nn_vec_mat_mult_t_s8.c (its C path)
 * for RV32IMC (CV32E40P). Defines arm_nn_vec_mat_mult_t_s8 (fully connected layers:
 * arm_fully_connected_s8, and arm_svdf_s8, arm_batch_matmul_s8), with the C path's
 * behaviour: kernel_sum unused, dst[n * address_offset].
 *
 * Why faster: the C path takes 3 weight rows per pass and adds the input offset (and
 * the weight offset) to every value inside the loop. Here 8 (then 4) weight rows share each
 * loaded input value, the input plus offset is made once per call (int16, on the stack),
 * the 12-row and 8-row loops are in assembly (cv_fc12_h, cv_fc8_h: 3 instructions per MAC
 * and a pointer step per 16 or 8), and a weight offset becomes one term per row:
 * rhs_offset x sum_k (lhs[k] + lhs_offset).
 *
 * Bit-exact with the C path: the same int32 sums, arm_nn_requantize's rounding.
 */
#include "corev_nn.h"

/* Input vectors up to this long get an offset-applied copy on the stack (CORE-V). */
#define CV_FC_KMAX 1024

/* One output: requantized with the per-tensor parameters (q prepared once). */
CV_INLINE int8_t cv_fc_out(int32_t acc, const cv_rq q, int32_t mult, int32_t shift, int32_t out_off, int32_t act_min,
                           int32_t act_max)
{
    if (mult >= 0)
    {
        return cv_rq_out(acc, q, out_off, act_min, act_max);
    }
    return cv_rq_out_neg(acc, mult, shift, out_off, act_min, act_max);
}

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

static __attribute__((naked, noinline, noclone)) CV_UNUSED void
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
                     "1:\n\t" CV_FC8_U(0, 0) CV_FC8_U(1, 2) CV_FC8_U(2, 4) CV_FC8_U(3, 6) CV_FC8_U(4, 8)
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

static __attribute__((naked, noinline, noclone)) CV_UNUSED void
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
        "1:\n\t" CV_FC12_U(0, 0) CV_FC12_U(1, 2) CV_FC12_U(2, 4) CV_FC12_U(3, 6) CV_FC12_U(4, 8) CV_FC12_U(5, 10)
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

CV_NO_SCHED arm_cmsis_nn_status arm_nn_vec_mat_mult_t_s8(const int8_t *lhs,
                                                         const int8_t *rhs,
                                                         const int32_t *kernel_sum,
                                                         const int32_t *bias,
                                                         int8_t *dst,
                                                         const int32_t lhs_offset,
                                                         const int32_t dst_offset,
                                                         const int32_t dst_multiplier,
                                                         const int32_t dst_shift,
                                                         const int32_t rhs_cols,
                                                         const int32_t rhs_rows,
                                                         const int32_t activation_min,
                                                         const int32_t activation_max,
                                                         const int32_t address_offset,
                                                         const int32_t rhs_offset)
{
    (void)kernel_sum;
    const int32_t K = rhs_cols;
    /* With a weight offset: sum (x + lo) (w + ro) = sum (x + lo) w + ro sum (x + lo). */
    int32_t extra = 0;
    if (rhs_offset)
    {
        int32_t s = 0;
        for (int32_t k = 0; k < K; k++)
        {
            s += lhs[k] + lhs_offset;
        }
        extra = (int32_t)((uint32_t)s * (uint32_t)rhs_offset);
    }
    const cv_rq q = cv_rq_make(dst_multiplier, dst_shift);
#if COREV_XCV
    const int32_t groups = K >> 2;
    const int32_t tail0 = K & ~3;
    /* The input vector of the dot products: lhs itself when the input offset is 0 (the
       exports for Cortex-M55 fold it into the bias), else lhs + offset as bytes, when
       every value of this input fits int8 (cv.sdotsp.b) or uint8 (cv.sdotusp.b: after a
       ReLU the zero point is -128 and x + 128 lies in 0..255). Then no weight sums are
       needed: 32 MACs in 17 cycles. Otherwise the weight sums go alongside (cv_xfc4). */
    uint32_t xbuf[CV_FC_KMAX / 4];
    const uint32_t *xv = NULL;
    int32_t usp = 0;
    if (groups && lhs_offset == 0)
    {
        xv = (const uint32_t *)(const void *)lhs;
    }
    else if (groups && K <= CV_FC_KMAX)
    {
        uint32_t hi = 0x80808080u, lo = 0x7f7f7f7fu;
        for (int32_t g = 0; g < groups; g++)
        {
            const uint32_t v = cv_xload(lhs + 4 * g);
            hi = cv_xmax_b(hi, v);
            lo = cv_xmin_b(lo, v);
        }
        const int32_t vmax = cv_xmax(cv_xmax((int8_t)hi, (int8_t)(hi >> 8)), cv_xmax((int8_t)(hi >> 16), (int8_t)(hi >> 24)));
        const int32_t vmin = cv_xmin(cv_xmin((int8_t)lo, (int8_t)(lo >> 8)), cv_xmin((int8_t)(lo >> 16), (int8_t)(lo >> 24)));
        const int32_t smax = vmax + lhs_offset, smin = vmin + lhs_offset;
        if (smin >= -128 && smax <= 255)
        {
            usp = smin >= 0;
            if (usp || smax <= 127)
            {
                const uint32_t off4 = 0x01010101u * (uint8_t)lhs_offset;
                for (int32_t g = 0; g < groups; g++)
                {
                    xbuf[g] = cv_xadd_b(cv_xload(lhs + 4 * g), off4);
                }
                xv = xbuf;
            }
        }
    }
    if (xv)
    {
        int32_t r8[8];
        for (int32_t n = 0; n < rhs_rows; n += 8, rhs += 8 * K)
        {
            const int32_t nr = rhs_rows - n < 8 ? rhs_rows - n : 8;
            if (nr == 8)
            {
                (usp ? cv_xfc8u : cv_xfc8)(xv, rhs, K, groups, r8);
            }
            else
            {
                /* the last rows: 4, then one at a time (the kernel computes it 4 times) */
                int32_t j = 0;
                if (nr >= 4)
                {
                    (usp ? cv_xfc4u : cv_xfc4s)(xv, rhs, K, groups, r8);
                    j = 4;
                }
                for (; j < nr; j++)
                {
                    (usp ? cv_xfc4u : cv_xfc4s)(xv, rhs + j * K, 0, groups, r8 + 4);
                    r8[j] = r8[4];
                }
            }
            for (int32_t j = 0; j < nr; j++)
            {
                const int8_t *w = rhs + j * K;
                uint32_t a = (uint32_t)r8[j];
                for (int32_t k = tail0; k < K; k++)
                {
                    a += (uint32_t)((lhs[k] + lhs_offset) * w[k]);
                }
                a += (uint32_t)extra + (uint32_t)(bias ? bias[n + j] : 0);
                *dst = cv_fc_out((int32_t)a, q, dst_multiplier, dst_shift, dst_offset, activation_min, activation_max);
                dst += address_offset;
            }
        }
        return ARM_CMSIS_NN_SUCCESS;
    }
    /* CORE-V: 4 rows at a time against each input word with cv.sdotsp.b, the weight sums
       alongside for the input offset (corev_xcv.h, cv_xfc4); the last K % 4 values and
       the requantization in C. */
    int32_t r4[8];
    for (int32_t n = 0; n < rhs_rows; n += 4, rhs += 4 * K)
    {
        const int32_t nr = rhs_rows - n < 4 ? rhs_rows - n : 4;
        if (groups && nr == 4)
        {
            cv_xfc4(lhs, rhs, K, groups, r4);
        }
        for (int32_t j = 0; j < nr; j++)
        {
            const int8_t *w = rhs + j * K;
            int32_t r = j;
            if (groups && nr < 4)
            {
                /* the last rows one at a time (the kernel computes it 4 times) */
                cv_xfc4(lhs, w, 0, groups, r4);
                r = 0;
            }
            uint32_t a = groups ? (uint32_t)r4[r] + (uint32_t)r4[4 + r] * (uint32_t)lhs_offset : 0;
            for (int32_t k = tail0; k < K; k++)
            {
                a += (uint32_t)((lhs[k] + lhs_offset) * w[k]);
            }
            a += (uint32_t)extra + (uint32_t)(bias ? bias[n + j] : 0);
            *dst = cv_fc_out((int32_t)a, q, dst_multiplier, dst_shift, dst_offset, activation_min, activation_max);
            dst += address_offset;
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
#endif

    int32_t acc[8];
    int32_t n = 0;
    /* 8 rows per pass (the input plus offset as int16 on the stack, cv_fc8_h), then 4,
       then one at a time. */
    if (K >= 128 && K <= CV_FC_KMAX && rhs_rows >= 8)
    {
        int16_t xh[CV_FC_KMAX];
        int32_t k = 0;
        for (; k + 4 <= K; k += 4)
        {
            const int32_t x0 = lhs[k], x1 = lhs[k + 1], x2 = lhs[k + 2], x3 = lhs[k + 3];
            xh[k] = (int16_t)(x0 + lhs_offset);
            xh[k + 1] = (int16_t)(x1 + lhs_offset);
            xh[k + 2] = (int16_t)(x2 + lhs_offset);
            xh[k + 3] = (int16_t)(x3 + lhs_offset);
        }
        for (; k < K; k++)
        {
            xh[k] = (int16_t)(lhs[k] + lhs_offset);
        }
        /* 12 rows per pass over groups of 16, then 8 over groups of 8 */
        const int32_t k16 = K & ~15;
        /* the output stage in the kernel too, when no row has a tail */
        cv_fc_q fq;
        const int32_t e = -dst_shift;
        const int32_t fused = (K & 15) == 0 && dst_multiplier >= 0 && e >= 1 && e <= 31;
        if (fused)
        {
            fq.m2 = (int32_t)(2u * (uint32_t)dst_multiplier);
            fq.pre = e >= 2;
            fq.sh = e - fq.pre;
            fq.h = 1 << (fq.sh - 1);
            fq.out_off = dst_offset;
            fq.act_min = activation_min;
            fq.act_max = activation_max;
            fq.dstep = address_offset;
        }
        for (; n + 12 <= rhs_rows; n += 12, rhs += 12 * K)
        {
            int32_t acc12[12];
            for (int32_t j = 0; j < 12; j++)
            {
                acc12[j] = extra + (bias ? bias[n + j] : 0);
            }
            if (fused)
            {
                fq.dst = dst;
                cv_fc12_h(xh, rhs, K, K >> 4, acc12, &fq);
                dst = fq.dst;
                continue;
            }
            cv_fc12_h(xh, rhs, K, K >> 4, acc12, NULL);
            for (int32_t j = 0; j < 12; j++)
            {
                const int8_t *w = rhs + j * K;
                int32_t a = acc12[j];
                for (int32_t k = k16; k < K; k++)
                {
                    a += xh[k] * w[k];
                }
                *dst = cv_fc_out(a, q, dst_multiplier, dst_shift, dst_offset, activation_min, activation_max);
                dst += address_offset;
            }
        }
        const int32_t k8 = K & ~7;
        for (; n + 8 <= rhs_rows; n += 8, rhs += 8 * K)
        {
            for (int32_t j = 0; j < 8; j++)
            {
                acc[j] = extra + (bias ? bias[n + j] : 0);
            }
            cv_fc8_h(xh, rhs, K, K >> 3, acc);
            for (int32_t j = 0; j < 8; j++)
            {
                const int8_t *w = rhs + j * K;
                int32_t a = acc[j];
                for (int32_t k = k8; k < K; k++)
                {
                    a += xh[k] * w[k];
                }
                *dst = cv_fc_out(a, q, dst_multiplier, dst_shift, dst_offset, activation_min, activation_max);
                dst += address_offset;
            }
        }
    }
    for (; n + 8 <= rhs_rows; n += 8)
    {
        const int8_t *q0 = rhs;
        const int8_t *q1 = q0 + K, *q2 = q1 + K, *q3 = q2 + K;
        const int8_t *q4 = q3 + K, *q5 = q4 + K, *q6 = q5 + K, *q7 = q6 + K;
        int32_t a0 = extra, a1 = extra, a2 = extra, a3 = extra, a4 = extra, a5 = extra, a6 = extra, a7 = extra;
        if (bias)
        {
            a0 += bias[n];
            a1 += bias[n + 1];
            a2 += bias[n + 2];
            a3 += bias[n + 3];
            a4 += bias[n + 4];
            a5 += bias[n + 5];
            a6 += bias[n + 6];
            a7 += bias[n + 7];
        }
        const int8_t *x = lhs;
#define CV_FC_STEP8(j)                                                                                                 \
    do                                                                                                                 \
    {                                                                                                                  \
        const int32_t v = x[(j)] + lhs_offset;                                                                         \
        a0 += v * q0[(j)];                                                                                             \
        a1 += v * q1[(j)];                                                                                             \
        a2 += v * q2[(j)];                                                                                             \
        a3 += v * q3[(j)];                                                                                             \
        a4 += v * q4[(j)];                                                                                             \
        a5 += v * q5[(j)];                                                                                             \
        a6 += v * q6[(j)];                                                                                             \
        a7 += v * q7[(j)];                                                                                             \
    } while (0)
        for (int32_t g = K >> 2; g > 0; g--)
        {
            CV_FC_STEP8(0);
            CV_FC_STEP8(1);
            CV_FC_STEP8(2);
            CV_FC_STEP8(3);
            x += 4;
            q0 += 4;
            q1 += 4;
            q2 += 4;
            q3 += 4;
            q4 += 4;
            q5 += 4;
            q6 += 4;
            q7 += 4;
        }
        for (int32_t j = 0; j < (K & 3); j++)
        {
            CV_FC_STEP8(j);
        }
#undef CV_FC_STEP8
        acc[0] = a0;
        acc[1] = a1;
        acc[2] = a2;
        acc[3] = a3;
        acc[4] = a4;
        acc[5] = a5;
        acc[6] = a6;
        acc[7] = a7;
        for (int32_t r = 0; r < 8; r++)
        {
            *dst = cv_fc_out(acc[r], q, dst_multiplier, dst_shift, dst_offset, activation_min, activation_max);
            dst += address_offset;
        }
        rhs += 8 * K;
    }
    if (n + 4 <= rhs_rows)
    {
        const int8_t *q0 = rhs;
        const int8_t *q1 = q0 + K, *q2 = q1 + K, *q3 = q2 + K;
        int32_t a0 = extra, a1 = extra, a2 = extra, a3 = extra;
        if (bias)
        {
            a0 += bias[n];
            a1 += bias[n + 1];
            a2 += bias[n + 2];
            a3 += bias[n + 3];
        }
        const int8_t *x = lhs;
#define CV_FC_STEP4(j)                                                                                                 \
    do                                                                                                                 \
    {                                                                                                                  \
        const int32_t v = x[(j)] + lhs_offset;                                                                         \
        a0 += v * q0[(j)];                                                                                             \
        a1 += v * q1[(j)];                                                                                             \
        a2 += v * q2[(j)];                                                                                             \
        a3 += v * q3[(j)];                                                                                             \
    } while (0)
        for (int32_t g = K >> 2; g > 0; g--)
        {
            CV_FC_STEP4(0);
            CV_FC_STEP4(1);
            CV_FC_STEP4(2);
            CV_FC_STEP4(3);
            x += 4;
            q0 += 4;
            q1 += 4;
            q2 += 4;
            q3 += 4;
        }
        for (int32_t j = 0; j < (K & 3); j++)
        {
            CV_FC_STEP4(j);
        }
#undef CV_FC_STEP4
        acc[0] = a0;
        acc[1] = a1;
        acc[2] = a2;
        acc[3] = a3;
        for (int32_t r = 0; r < 4; r++)
        {
            *dst = cv_fc_out(acc[r], q, dst_multiplier, dst_shift, dst_offset, activation_min, activation_max);
            dst += address_offset;
        }
        rhs += 4 * K;
        n += 4;
    }
    for (; n < rhs_rows; n++)
    {
        int32_t a0 = extra + (bias ? bias[n] : 0);
        for (int32_t k = 0; k < K; k++)
        {
            a0 += (lhs[k] + lhs_offset) * rhs[k];
        }
        *dst = cv_fc_out(a0, q, dst_multiplier, dst_shift, dst_offset, activation_min, activation_max);
        dst += address_offset;
        rhs += K;
    }
    return ARM_CMSIS_NN_SUCCESS;
}
