/*
 * Replaces CMSIS-NN's Source/NNSupportFunctions/arm_nn_vec_mat_mult_t_s8.c (its C path)
 * for RV32IMC (CV32E40P). Defines arm_nn_vec_mat_mult_t_s8 (fully connected layers:
 * arm_fully_connected_s8, and arm_svdf_s8, arm_batch_matmul_s8), with the C path's
 * behaviour: kernel_sum unused, dst[n * address_offset].
 *
 * Why faster: the C path takes 3 weight rows per pass and adds the input offset (and
 * the weight offset) to every value inside the loop. Here 8 (then 4) weight rows share each
 * loaded input value, the input offset is added once per input value and pass, the
 * loop is unrolled 4 times along the row (constant offsets, fewer pointer steps), and a
 * weight offset becomes one term per row: rhs_offset x sum_k (lhs[k] + lhs_offset).
 *
 * Bit-exact with the C path: the same int32 sums, arm_nn_requantize's rounding.
 */
#include "corev_nn.h"

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
    /* CORE-V: 4 rows at a time against each input word with cv.sdotsp.b, the weight sums
       alongside for the input offset (corev_xcv.h, cv_xfc4); the last K % 4 values and
       the requantization in C. */
    const int32_t groups = K >> 2;
    const int32_t tail0 = K & ~3;
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
    /* 8 rows per pass, then 4, then one at a time. */
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
