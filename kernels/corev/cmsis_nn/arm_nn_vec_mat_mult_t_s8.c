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
#define CV_WANT_FC 1
#define CV_WANT_RQ_LINES 1
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
            const uint32_t v = cv_lw_any(lhs + 4 * g);
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
                    xbuf[g] = cv_xadd_b(cv_lw_any(lhs + 4 * g), off4);
                }
                xv = xbuf;
            }
        }
    }
    if (xv)
    {
        static const int32_t no_bias[8];
        int32_t r8[8];
        /* in cv_xrq_make's mode (the quantizers' shifts): the rows' outputs in cv_xrq_lines */
        cv_xrq_lines_args qa;
        const int32_t rq_lines =
            cv_xrq_make(&qa.q, extra, dst_multiplier, dst_shift, dst_offset, activation_min, activation_max);
        qa.askip = 0;
        qa.dline = 0;
        for (int32_t n = 0; n < rhs_rows; n += 8, rhs += 8 * K)
        {
            const int32_t nr = rhs_rows - n < 8 ? rhs_rows - n : 8;
            /* the accumulators start at the bias */
            const int32_t *b = bias ? bias + n : no_bias;
            if (nr == 8)
            {
                (usp ? cv_xfc8u : cv_xfc8)(xv, rhs, K, groups, r8, b);
            }
            else
            {
                /* the last rows: 4, then one at a time (the kernel computes it 4 times) */
                int32_t j = 0;
                if (nr >= 4)
                {
                    (usp ? cv_xfc4u : cv_xfc4s)(xv, rhs, K, groups, r8, b);
                    j = 4;
                }
                /* (into their own words: r8[4..7] hold rows 4 to 6 once computed) */
                int32_t one[4];
                for (; j < nr; j++)
                {
                    (usp ? cv_xfc4u : cv_xfc4s)(xv, rhs + j * K, 0, groups, one, no_bias);
                    r8[j] = (int32_t)((uint32_t)one[0] + (uint32_t)b[j]);
                }
            }
            for (int32_t j = 0; tail0 < K && j < nr; j++)
            {
                const int8_t *w = rhs + j * K;
                uint32_t a = (uint32_t)r8[j];
                for (int32_t k = tail0; k < K; k++)
                {
                    a += (uint32_t)((lhs[k] + lhs_offset) * w[k]);
                }
                r8[j] = (int32_t)a;
            }
            /* + extra, requantized, the rows' outputs in one loop (per row with the
               tail loop, the bias and the output stage in C: 68 cycles an output) */
            if (rq_lines)
            {
                qa.nlines = 1;
                cv_xrq_lines(r8, nr, dst, address_offset, &qa);
            }
            else
            {
                cv_xq_run(r8, 1, extra, nr, dst, address_offset, dst_multiplier, dst_shift, dst_offset, activation_min,
                          activation_max);
            }
            dst += nr * address_offset;
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
    /* 12 and 8 rows per pass (the input plus offset as int16 on the stack, cv_fc12_h and
       cv_fc8_h), then 4 (or any number, for K < 8 or K > CV_FC_KMAX), then one at a time. */
    if (K >= 8 && K <= CV_FC_KMAX && rhs_rows >= 8)
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
        /* (cv_fc12_h takes at least one group of 16: K >= 16) */
        for (; K >= 16 && n + 12 <= rhs_rows; n += 12, rhs += 12 * K)
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
    for (; n + 4 <= rhs_rows; n += 4)
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
