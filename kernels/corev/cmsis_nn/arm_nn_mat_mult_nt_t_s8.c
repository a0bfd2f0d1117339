/*
 * Replaces CMSIS-NN's Source/NNSupportFunctions/arm_nn_mat_mult_nt_t_s8.c (its C path)
 * for RV32IMC (CV32E40P). Defines arm_nn_mat_mult_nt_t_s8, with the C path's behaviour:
 * output row m, column n at dst[m * rhs_rows + n]; row_address_offset unused.
 *
 * Callers (C paths): the 1x1 convolutions, arm_convolve_1x1_s8_fast (stride 1, all rows
 * at once) and arm_convolve_1x1_s8 (strided: ours, arm_convolve_1x1_s8.c, calls
 * cv_mat_mult_lines once for all output pixels, where CMSIS-NN's called this once per
 * output line and so prepared the filter sums and output stage again for each line).
 *
 * Why faster: the C path computes 2 rows x 2 columns at a time (4 byte loads per 4 MACs)
 * with a loop per pair of columns over the filter sums. Here 4 LHS rows are copied into
 * an interleaved panel on the stack (a word copy per 4 bytes when aligned) and
 * multiplied 4 rows x 4 weight rows at a time (corev_nn.h): 8 byte loads per 16 MACs,
 * 2.6 instructions per MAC in the loop. The input offset is folded into per-channel
 * filter sums, computed once per call.
 *
 * Bit-exact with the C path: the same int32 sums, arm_nn_requantize's rounding.
 */
#define CV_WANT_GEMM 1
#define CV_WANT_FC 1
#define CV_WANT_ROWS 1
#include "corev_nn.h"

#if COREV_XCV
/* CORE-V: the panel times 4 channels with cv.sdotsp.b in hardware loops, the output
   stage fused where it can be (corev_xcv.h). */
#define CV_MM_FILTER_INIT cv_xfilter_init
#else
#define CV_MM_FILTER_INIT cv_filter_init
#endif

/* Panels on the stack for K up to CV_MM_KMAX; longer rows take the direct loop. */
#define CV_MM_KMAX 256
/* Output channels per filter-sum block (the sums live on the stack). */
#define CV_MM_NBLK 64
/* The panel buffer's bytes: 4 rows of up to CV_MM_KMAX (with the extensions 5, the
   panels of cv_xgemm_5x4q) */
#if COREV_XCV
#define CV_MM_PANEL (5 * CV_MM_KMAX)
#else
#define CV_MM_PANEL (4 * CV_MM_KMAX)
#endif

/* Rows longer than a stack panel (K > CV_MM_KMAX): one output at a time, read in place. */
static void cv_mm_direct(const int8_t *lhs,
                         const int8_t *rhs,
                         int8_t *dst,
                         const int32_t *init,
                         const int32_t *mult,
                         const int32_t *shift,
                         int32_t lhs_rows,
                         int32_t count,
                         int32_t K,
                         int32_t lhs_stride,
                         const cv_out_params *o)
{
    for (int32_t m = 0; m < lhs_rows; m++, lhs += lhs_stride, dst += o->dst_stride)
    {
        const int8_t *w = rhs;
        for (int32_t n = 0; n < count; n++, w += K)
        {
            int32_t a = init[n];
            for (int32_t k = 0; k < K; k++)
            {
                a += lhs[k] * w[k];
            }
            dst[n] = cv_rq_out_any(a, mult[n], shift[n], o->out_off, o->act_min, o->act_max);
        }
    }
}

#if COREV_XCV
/*
 * CORE-V, K = 8 or 16 under a ReLU, rows one after the other (MobileNet's 1x1 layers
 * over 8 and 16 channels): two output channels a pass over all rows, their weights,
 * initial values and output-stage words in registers, each row's 2 or 4 words loaded
 * once a pass and the two outputs stored in the same loop (cv_xgemm_4x4q's output stage:
 * 7 instructions a sum >= 0, a sum < 0 stores act_min; the exact stage out of line).
 * Per row and pass 22 instructions for K = 8, 28 for 16, two rows an iteration (one
 * taken branch for both: 28 K cycles less on MobileNet than a row an iteration); through
 * the panels and the 4 x 4 kernel a tile of 16 outputs also paid about 60 cycles of
 * set-up (its pointers, 16 initial values, the output stage's words loaded again) and the
 * rows were copied into panels first.
 */
typedef struct
{
    const int8_t *in;   /* 0: row 0 */
    const int8_t *end;  /* 4: past the last row */
    int8_t *out;        /* 8: row 0, the first of the two channels */
    int32_t ostep;      /* 12: bytes from a row's outputs to the next's */
    uint32_t w[8];      /* 16: the two channels' weight words (4 each, K = 8 uses 2) */
    int32_t init[2];    /* 48 */
    uint32_t rq[2][3];  /* 56: mh, f, xlim of each (cv_xrq_prep's) */
    int32_t act_min;    /* 80: (its byte is what a sum < 0 stores) */
    int32_t act_max;    /* 84 */
    uint32_t m2[2];     /* 88: the exact stage's words */
    uint32_t offsh[2];  /* 96 */
    uint32_t sh[2];     /* 104 */
} cv_xpair_args;
_Static_assert(offsetof(cv_xpair_args, sh) == 104, "cv_xpair's offsets");

/* Registers: in a0 (the args at 52(sp)), end a4, outputs a1 and a3 (a1 + 1), ostep a2,
   weights s0-s3 and s4-s7, initial values s8 s9, mh f xlim s10 s11 a5 and a6 a7 ra,
   act_min's byte t6, the row's words t0-t3 (then the output stage's temporaries t0 t1),
   the sums t4 t5. */
#define XCV_PAIR_OUT(X, MH, F, XLIM, PTR, L)                                                                           \
    "bgeu " #X ", " #XLIM ", " #L "0f\n\tmul t0, " #X ", " #MH "\n\tadd t1, t0, " #X "\n\t" XCV_ADDN22(t0, t0, F)      \
        XCV_ADDN22(t1, t1, F) "bne t0, t1, " #L "3f\n\t" XCV_SB_PR(t0, PTR, a2) #L "4:\n\t"
/* its out-of-line part: a sum < 0 stores act_min, the exact stage (channel C) */
#define XCV_PAIR_FIX(X, PTR, L, C)                                                                                     \
    #L "0:\n\tbgez " #X ", " #L "3f\n\t" XCV_SB_PR(t6, PTR, a2) "j " #L "4b\n"                                         \
    #L "3:\n\tlw t0, 52(sp)\n\t" XCV_RQ_EXACT(X, t1, t2, #C "*4+88(t0)", #C "*4+96(t0)", #C "*4+104(t0)")             \
    "lw t1, 80(t0)\n\t" XCV_MAX(X, X, t1) "lw t1, 84(t0)\n\t" XCV_MIN(X, X, t1) XCV_SB_PR(X, PTR, a2) "j " #L "4b\n"
#define XCV_PAIR_KERNEL(NAME, LOADS, DOTS)                                                                             \
    CV_XCV_NAKED void NAME(const cv_xpair_args *args)                                                                  \
    {                                                                                                                  \
        (void)args;                                                                                                    \
        __asm__ volatile(".option push\n\t"                                                                            \
                         ".option norvc\n\t" XCV_PROLOGUE "sw a0, 52(sp)\n\t"                                           \
                         "lw a4, 4(a0)\n\tlw a1, 8(a0)\n\tlw a2, 12(a0)\n\taddi a3, a1, 1\n\t"                         \
                         "lw s0, 16(a0)\n\tlw s1, 20(a0)\n\tlw s2, 24(a0)\n\tlw s3, 28(a0)\n\t"                         \
                         "lw s4, 32(a0)\n\tlw s5, 36(a0)\n\tlw s6, 40(a0)\n\tlw s7, 44(a0)\n\t"                         \
                         "lw s8, 48(a0)\n\tlw s9, 52(a0)\n\tlw s10, 56(a0)\n\tlw s11, 60(a0)\n\tlw a5, 64(a0)\n\t"       \
                         "lw a6, 68(a0)\n\tlw a7, 72(a0)\n\tlw ra, 76(a0)\n\tlw t6, 80(a0)\n\tlw a0, 0(a0)\n"           \
                         "1:\n\t" LOADS "mv t4, s8\n\tmv t5, s9\n\t" DOTS                                               \
                         XCV_PAIR_OUT(t4, s10, s11, a5, a1, 1) XCV_PAIR_OUT(t5, a6, a7, ra, a3, 2)                       \
                         "beq a0, a4, 9f\n\t" LOADS "mv t4, s8\n\tmv t5, s9\n\t" DOTS                                  \
                         XCV_PAIR_OUT(t4, s10, s11, a5, a1, 5) XCV_PAIR_OUT(t5, a6, a7, ra, a3, 6)                       \
                         "bne a0, a4, 1b\n"                                                                            \
                         "9:\n\t" XCV_EPILOGUE XCV_PAIR_FIX(t4, a1, 1, 0) XCV_PAIR_FIX(t5, a3, 2, 1)                   \
                         XCV_PAIR_FIX(t4, a1, 5, 0) XCV_PAIR_FIX(t5, a3, 6, 1) ".option pop\n\t");                    \
    }
XCV_PAIR_KERNEL(cv_xpair8, XCV_LW_PI(t0, a0, 4) XCV_LW_PI(t1, a0, 4),
                XCV_SDOTSP(t4, t0, s0) XCV_SDOTSP(t5, t0, s4) XCV_SDOTSP(t4, t1, s1) XCV_SDOTSP(t5, t1, s5))
XCV_PAIR_KERNEL(cv_xpair16, XCV_LW_PI(t0, a0, 4) XCV_LW_PI(t1, a0, 4) XCV_LW_PI(t2, a0, 4) XCV_LW_PI(t3, a0, 4),
                XCV_SDOTSP(t4, t0, s0) XCV_SDOTSP(t5, t0, s4) XCV_SDOTSP(t4, t1, s1) XCV_SDOTSP(t5, t1, s5)
                    XCV_SDOTSP(t4, t2, s2) XCV_SDOTSP(t5, t2, s6) XCV_SDOTSP(t4, t3, s3) XCV_SDOTSP(t5, t3, s7))
#undef XCV_PAIR_KERNEL
#undef XCV_PAIR_OUT
#undef XCV_PAIR_FIX

/* The rows times count (even) channels of K = 8 or 16 (rows: rows * K bytes from in,
   aligned to 4), two channels a pass; rq: cv_xrq_prep's words, under a ReLU. */
static void cv_xmm_pairs(const int8_t *in,
                         int32_t rows,
                         int32_t K,
                         const int8_t *w,
                         int32_t count,
                         const int32_t *init,
                         const uint32_t *rq,
                         int8_t *dst,
                         const cv_out_params *o)
{
    cv_xpair_args a;
    a.in = in;
    a.end = in + rows * K;
    a.ostep = o->dst_stride;
    a.act_min = o->act_min;
    a.act_max = o->act_max;
    for (int32_t n = 0; n < count; n += 2, w += 2 * K, rq += 2 * CV_XRQ_WORDS)
    {
        for (int32_t c = 0; c < 2; c++)
        {
            const uint32_t *q = rq + c * CV_XRQ_WORDS;
            for (int32_t g = 0; g < 4; g++)
            {
                a.w[4 * c + g] = 4 * g < K ? cv_lw_any(w + c * K + 4 * g) : 0;
            }
            a.init[c] = init[n + c];
            a.rq[c][0] = q[0];
            a.rq[c][1] = q[1];
            a.rq[c][2] = q[2];
            a.m2[c] = q[5];
            a.offsh[c] = q[6];
            a.sh[c] = q[7];
        }
        a.out = dst + n;
        (K == 8 ? cv_xpair8 : cv_xpair16)(&a);
    }
}
#endif

/* The LHS rows of a call: row m at line (m / per_line) * line_step + (m % per_line) * step
   bytes from lhs (the rows of a 1x1 convolution's output pixels, strided). */
typedef struct
{
    const int8_t *row, *line;
    int32_t col, per_line, step, line_step;
} cv_rows;

CV_INLINE const int8_t *cv_rows_next(cv_rows *c)
{
    const int8_t *row = c->row;
    c->row += c->step;
    if (++c->col == c->per_line)
    {
        c->col = 0;
        c->line += c->line_step;
        c->row = c->line;
    }
    return row;
}

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
                                      const int32_t rhs_rows,
                                      const int32_t rhs_cols,
                                      const int32_t lhs_offset,
                                      const int32_t dst_offset,
                                      const int32_t activation_min,
                                      const int32_t activation_max)
{
    const int32_t K = rhs_cols;
    const cv_out_params o = {rhs_rows, dst_offset, activation_min, activation_max};
    int32_t init[CV_MM_NBLK];

    for (int32_t nb = 0; nb < rhs_rows; nb += CV_MM_NBLK)
    {
        const int32_t count = rhs_rows - nb < CV_MM_NBLK ? rhs_rows - nb : CV_MM_NBLK;
        const int8_t *w = rhs + nb * K;
        CV_MM_FILTER_INIT(init, w, count, K, bias ? bias + nb : NULL, lhs_offset);
#if COREV_XCV
        uint32_t rq_words[CV_XRQ_WORDS * CV_MM_NBLK];
        const uint32_t *rq =
            cv_xrq_prep(rq_words, dst_multipliers + nb, dst_shifts + nb, count, dst_offset, activation_min,
                        activation_max)
                ? rq_words
                : NULL;
#else
        int32_t rq_words[CV_RQ4_WORDS * CV_MM_NBLK];
        const int32_t *rq =
            cv_rq4_prep(rq_words, dst_multipliers + nb, dst_shifts + nb, count, dst_offset, activation_min)
                ? rq_words
                : NULL;
#endif
        cv_rows rows_at = {lhs, lhs, 0, per_line, step, line_step};
#if COREV_XCV
        if (rq && (K == 8 || K == 16) && step == K && per_line == lhs_rows && ((uintptr_t)lhs & 3) == 0 &&
            (count & 1) == 0 && cv_rq_relu(dst_offset, activation_min))
        {
            cv_xmm_pairs(lhs, lhs_rows, K, w, count, init, rq, dst + nb, &o);
            continue;
        }
#endif

        if (K > CV_MM_KMAX)
        {
            int8_t *out = dst + nb;
            for (int32_t m = 0; m < lhs_rows; m++, out += rhs_rows)
            {
                cv_mm_direct(cv_rows_next(&rows_at), w, out, init, dst_multipliers + nb, dst_shifts + nb, 1, count,
                             K, 0, &o);
            }
            continue;
        }

        int8_t panel[CV_MM_PANEL] __attribute__((aligned(4)));
        cv_panel_zero_tail(panel, K);
        int8_t *out = dst + nb;
        for (int32_t m = 0; m < lhs_rows; m += 4)
        {
            const int32_t rows = lhs_rows - m < 4 ? lhs_rows - m : 4;
#if COREV_XCV
            const int32_t by_rows = rows < 4;
#else
            /* (the int16 copy of each row pays off from about 12 channels on) */
            const int32_t by_rows = rows < 4 && (rows == 1 || count >= 12);
#endif
            if (by_rows)
            {
                /* the last 1 to 3 rows one at a time (fully connected kernels), where the
                   panel kernels would compute 4 */
                int32_t acc[CV_MM_NBLK];
                for (int32_t r = 0; r < rows; r++, out += rhs_rows)
                {
                    const int8_t *row = cv_rows_next(&rows_at);
#if COREV_XCV
                    cv_xrow_dots(row, K, w, count, init, acc);
                    cv_xrq_row(acc, count, rq, dst_multipliers + nb, dst_shifts + nb, out, &o);
                    continue;
#else
                    cv_row_dots(row, K, w, count, init, acc);
#endif
                    for (int32_t n = 0; n < count; n++)
                    {
                        out[n] = cv_rq_out_any(acc[n], dst_multipliers[nb + n], dst_shifts[nb + n], dst_offset,
                                               activation_min, activation_max);
                    }
                }
                break;
            }
#if COREV_XCV
            /* under a ReLU, panels of 5 rows (cv_xgemm_5x4q's tiles of 20 outputs) while 5
               rows are left, several in the buffer a call */
            const int32_t fit5 = CV_MM_PANEL / (5 * K), left5 = (lhs_rows - m) / 5;
            const int32_t batch5 = fit5 < left5 ? fit5 : left5;
            if (rq && (count & 3) == 0 && (K & 3) == 0 && batch5 >= 1 && cv_rq_relu(dst_offset, activation_min))
            {
                for (int32_t i = 0; i < batch5; i++)
                {
                    const int8_t *r0 = cv_rows_next(&rows_at);
                    const int8_t *r1 = cv_rows_next(&rows_at);
                    const int8_t *r2 = cv_rows_next(&rows_at);
                    const int8_t *r3 = cv_rows_next(&rows_at);
                    const int8_t *r4 = cv_rows_next(&rows_at);
                    cv_xpanel_5rows(panel + i * 5 * K, r0, r1, r2, r3, r4, K >> 2);
                }
                cv_xpanels5_gemmq(panel, batch5, 5 * K, K, w, count, init, rq, out, &o);
                out += 5 * rhs_rows * batch5;
                m += 5 * batch5 - 4;
                continue;
            }
            /* several full panels into the panel buffer, then one call of the fused kernel
               for all of them (cv_xpanels_gemmq): where K is small, a panel's call cost
               about as much as its tiles */
            const int32_t batch = (CV_MM_KMAX / K < (lhs_rows - m) >> 2 ? CV_MM_KMAX / K : (lhs_rows - m) >> 2);
            if (rq && (count & 3) == 0 && (K & 3) == 0 && batch >= 2)
            {
                for (int32_t i = 0; i < batch; i++)
                {
                    const int8_t *r0 = cv_rows_next(&rows_at);
                    const int8_t *r1 = cv_rows_next(&rows_at);
                    const int8_t *r2 = cv_rows_next(&rows_at);
                    const int8_t *r3 = cv_rows_next(&rows_at);
                    cv_xpanel_4rows(panel + i * 4 * K, r0, r1, r2, r3, K >> 2);
                }
                cv_xpanels_gemmq(panel, batch, 4 * K, K, w, count, init, rq, out, &o);
                out += 4 * rhs_rows * batch;
                m += 4 * (batch - 1);
                continue;
            }
            /* whole words: the 4 rows (rows < 4 took by_rows above) in one call
               (cv_xpanel_rows a row took MobileNet's 1x1 layers 148 K cycles more in all,
               DS-CNN's 17 K; cv_panel_put about 8 cycles a word); other K byte by byte below */
            if ((K & 3) == 0)
            {
                const int8_t *r0 = cv_rows_next(&rows_at);
                const int8_t *r1 = cv_rows_next(&rows_at);
                const int8_t *r2 = cv_rows_next(&rows_at);
                const int8_t *r3 = cv_rows_next(&rows_at);
                cv_xpanel_4rows(panel, r0, r1, r2, r3, K >> 2);
            }
            else
#endif
            {
                for (int32_t r = 0; r < rows; r++)
                {
                    const int8_t *row = cv_rows_next(&rows_at);
                    cv_panel_put(panel, r, 0, row, K);
                }
            }
#if COREV_XCV
            cv_xpanel_gemm(panel, rows, K, w, count, init, dst_multipliers + nb, dst_shifts + nb, rq, out, &o);
#else
            cv_panel_gemm_q(panel, rows, K, w, count, init, dst_multipliers + nb, dst_shifts + nb, rq, out, &o);
#endif
            out += 4 * rhs_rows;
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_nn_mat_mult_nt_t_s8(const int8_t *lhs,
                                            const int8_t *rhs,
                                            const int32_t *bias,
                                            int8_t *dst,
                                            const int32_t *dst_multipliers,
                                            const int32_t *dst_shifts,
                                            const int32_t lhs_rows,
                                            const int32_t rhs_rows,
                                            const int32_t rhs_cols,
                                            const int32_t lhs_offset,
                                            const int32_t dst_offset,
                                            const int32_t activation_min,
                                            const int32_t activation_max,
                                            const int32_t row_address_offset,
                                            const int32_t lhs_cols_offset)
{
    (void)row_address_offset;
    return cv_mat_mult_lines(lhs, lhs_rows, lhs_rows, lhs_cols_offset, 0, rhs, bias, dst, dst_multipliers,
                             dst_shifts, rhs_rows, rhs_cols, lhs_offset, dst_offset, activation_min, activation_max);
}
