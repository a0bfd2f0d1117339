/*
 * Replaces CMSIS-NN's Source/ConvolutionFunctions/arm_depthwise_conv_s8.c (its C path)
 * for RV32IMC (CV32E40P). Defines arm_depthwise_conv_s8: any kernel, padding, stride,
 * dilation, depth multiplier and batch count. arm_depthwise_conv_s8_opt's C path and the
 * wrapper (depth multiplier > 1, dilation, batches) come here.
 *
 * Why faster:
 * - Depth multiplier a multiple of 4 (DS-CNN's first layer: 1 input channel, 64
 *   outputs, a 10x4 kernel): the output channels of one input channel are a small
 *   matrix product. The taps of 4 output pixels go into an interleaved panel (padding
 *   as -input_offset, like the im2col of arm_convolve_s8), the block's weights are
 *   transposed into rows, and the convolutions' panel kernel accumulates 4 pixels x 4
 *   output channels (8 byte loads per 16 MACs) with its output stage. The input offset
 *   is offset x the filter sum per output channel. The C path instead walks every tap
 *   for each pixel, 4 channels at a time, with the offset added per tap.
 * - Depth multiplier 1: 4 channels per step over the taps inside the input, pointers
 *   stepped instead of indices recomputed per tap.
 * - Other multipliers: one output channel at a time, as the C path.
 *
 * Bit-exact with the C path: it skips taps outside the input, here they contribute
 * zero; same int32 sums, arm_nn_requantize's rounding.
 */
#define CV_WANT_GEMM 1
#include "corev_nn.h"

/* Panels on the stack for kernels of up to CV_DW_KMAX taps (larger ones take the
   direct loop). */
#define CV_DW_KMAX 128
/* Output channels per filter-sum block. */
#define CV_DW_NBLK 64

typedef struct
{
    int32_t W, H, C, M, OC, KW, KH, OW, OH;
    int32_t sx, sy, px, py, dx, dy;
    int32_t off;
    cv_out_params o;
} cv_dw_geom;

/* Valid tap range along one axis: [*k0, *k1) with 0 <= base + k * dil < size. */
static void cv_tap_range(int32_t base, int32_t dil, int32_t kernel, int32_t size, int32_t *k0, int32_t *k1)
{
    int32_t lo = 0, hi = kernel;
    if (dil == 1)
    {
        lo = base < 0 ? -base : 0;
        hi = size - base < kernel ? size - base : kernel;
    }
    else
    {
        if (base < 0)
        {
            lo = (-base + dil - 1) / dil;
        }
        if (base + (hi - 1) * dil >= size)
        {
            hi = size - base <= 0 ? 0 : (size - base + dil - 1) / dil;
        }
    }
    *k0 = lo;
    *k1 = hi > lo ? hi : lo;
}

/* Row r of the panel: the K taps of output pixel (ox, oy) of input channel i, padding
   as -input_offset. Tap k of row r is panel[16 * (k / 4) + 4 * r + k % 4]. */
static void cv_dw_im2col_row(const cv_dw_geom *g, const int8_t *input, int32_t i, int32_t ox, int32_t oy,
                             int8_t *panel, int32_t r)
{
    const int8_t pad_value = (int8_t)-g->off;
    const int32_t base_x = ox * g->sx - g->px;
    const int32_t base_y = oy * g->sy - g->py;
    int32_t kx0, kx1;
    cv_tap_range(base_x, g->dx, g->KW, g->W, &kx0, &kx1);
    int8_t *d = panel + 4 * r;
    int32_t j = 0;
    for (int32_t ky = 0; ky < g->KH; ky++)
    {
        const int32_t iy = base_y + ky * g->dy;
        const int32_t row_in = iy >= 0 && iy < g->H;
        const int32_t k0 = row_in ? kx0 : g->KW;
        const int32_t k1 = row_in ? kx1 : g->KW;
        const int8_t *src = input + (iy * g->W + base_x + k0 * g->dx) * g->C + i;
        for (int32_t kx = 0; kx < g->KW; kx++)
        {
            int8_t v = pad_value;
            if (kx >= k0 && kx < k1)
            {
                v = *src;
                src += g->dx * g->C;
            }
            d[j] = v;
            if (++j == 4)
            {
                j = 0;
                d += 16;
            }
        }
    }
}

/* Bytes of a padded single-channel input (cv_dw_pad_single). */
#define CV_DW_PAD 768

/* A single-channel input without horizontal dilation, small enough: copied into padded
   with its padding (-input_offset) around it, the rows -py .. and columns -px .. the taps
   reach, so that each kernel row of a pixel is one run of bytes. Returns the bytes a row,
   or 0 (nothing copied) for other inputs. */
CV_INLINE int32_t cv_dw_pad_single(const cv_dw_geom *g, const int8_t *input, int8_t *padded)
{
    const int32_t PH = (g->OH - 1) * g->sy + (g->KH - 1) * g->dy + 1;
    const int32_t PW = (g->OW - 1) * g->sx + (g->KW - 1) * g->dx + 1;
    const int8_t pad_value = (int8_t)-g->off;
    if (g->C != 1 || g->dx != 1 || PH * PW > CV_DW_PAD)
    {
        return 0;
    }
    /* the padding everywhere, a word at a time (padded is aligned, CV_DW_PAD a multiple
       of 4), then the input rows over it, a word at a time at any alignment (byte by
       byte, with the padding around each row, the small DS-CNN's first layer took 3 K
       cycles more) */
    const uint32_t pad4 = 0x01010101u * (uint8_t)pad_value;
    uint32_t *pw = (uint32_t *)(void *)padded;
    for (int32_t i = 0; i < (PH * PW + 3) >> 2; i++)
    {
        pw[i] = pad4;
    }
    const int32_t left = g->px < PW ? g->px : PW;
    const int32_t inside = g->W < PW - left ? g->W : PW - left;
    const int32_t iy0 = g->py < 0 ? -g->py : 0;
    const int32_t iy1 = g->H < PH - g->py ? g->H : PH - g->py;
    for (int32_t iy = iy0; iy < iy1; iy++)
    {
        int8_t *d = padded + (iy + g->py) * PW + left;
        const int8_t *src = input + iy * g->W;
        int32_t k = 0;
        for (; k + 4 <= inside; k += 4)
        {
            cv_sw_any(d + k, cv_lw_any(src + k));
        }
        for (; k < inside; k++)
        {
            d[k] = src[k];
        }
    }
    return PW;
}

#if !COREV_XCV
/*
 * Depth multiplier a multiple of 4, kernel of at most CV_DW_KMAX taps: the block's
 * weights transposed into rows of K (channel n's taps at wt[n K]), whose sums are the
 * filter sums, then the convolutions' panel kernel (cv_panel_gemm_q: the 4 x 4 assembly
 * kernel with its output stage). Before, a 4 x 4 tile in C with the weights read across
 * the channels took about 4.3 cycles a MAC on DS-CNN's first layer. A single-channel
 * input small enough is first copied with its padding around it, so that each kernel
 * row of a pixel is one run of bytes.
 */
#define CV_DW_WT 2560  /* bytes of transposed weights */

static void cv_dw_mult4(const cv_dw_geom *g,
                        const int8_t *input,
                        const int8_t *kernel,
                        const int32_t *bias,
                        const int32_t *mult,
                        const int32_t *shift,
                        int8_t *output)
{
    const int32_t K = g->KW * g->KH;
    const int32_t pixels = g->OW * g->OH;
    int8_t panel[4 * CV_DW_KMAX] __attribute__((aligned(4)));
    /* + 4: the kernel reads each weight row in whole groups of 4, past the last row's
       end (those bytes meet the panel's zero tail) */
    int8_t wt[CV_DW_WT + 4] __attribute__((aligned(4)));
    int32_t init[CV_DW_NBLK];
    int32_t rq_words[CV_RQ4_WORDS * CV_DW_NBLK];
    const int32_t nblk = (CV_DW_WT / K < CV_DW_NBLK ? CV_DW_WT / K : CV_DW_NBLK) & ~3;
    cv_panel_zero_tail(panel, K);

    int8_t padded[CV_DW_PAD] __attribute__((aligned(4)));
    const int32_t PW = cv_dw_pad_single(g, input, padded); /* 0: not copied */
    const int32_t use_pad = PW != 0;

    for (int32_t i = 0; i < g->C; i++)
    {
        for (int32_t mb = 0; mb < g->M; mb += nblk)
        {
            const int32_t count = g->M - mb < nblk ? g->M - mb : nblk; /* a multiple of 4 */
            const int32_t oc = i * g->M + mb;
            for (int32_t m = 0; m < count; m++)
            {
                int8_t *row = wt + m * K;
                const int8_t *w = kernel + oc + m;
                int32_t s = 0;
                for (int32_t k = 0; k < K; k++, w += g->OC)
                {
                    row[k] = *w;
                    s += *w;
                }
                init[m] = (int32_t)((uint32_t)(bias ? bias[oc + m] : 0) + (uint32_t)s * (uint32_t)g->off);
            }
            const int32_t *rq =
                cv_rq4_prep(rq_words, mult + oc, shift + oc, count, g->o.out_off, g->o.act_min) ? rq_words : NULL;
            int32_t ox = 0, oy = 0;
            for (int32_t p = 0; p < pixels; p += 4)
            {
                const int32_t rows = pixels - p < 4 ? pixels - p : 4;
                for (int32_t r = 0; r < rows; r++)
                {
                    if (use_pad)
                    {
                        for (int32_t ky = 0; ky < g->KH; ky++)
                        {
                            cv_panel_put(panel, r, ky * g->KW, padded + (oy * g->sy + ky * g->dy) * PW + ox * g->sx,
                                         g->KW);
                        }
                    }
                    else
                    {
                        cv_dw_im2col_row(g, input, i, ox, oy, panel, r);
                    }
                    if (++ox == g->OW)
                    {
                        ox = 0;
                        oy++;
                    }
                }
                cv_panel_gemm_q(panel, rows, K, wt, count, init, mult + oc, shift + oc, rq, output + p * g->OC + oc,
                                &g->o);
            }
        }
    }
}
#endif

#if COREV_XCV
/*
 * CORE-V version of cv_dw_mult4: the block's weights transposed (4 x 4 byte transposes,
 * cv_xtranspose4) into rows of K padded with zeros to a multiple of 4, whose sums are
 * the filter sums; then the panel kernel of the convolutions (cv_xpanel_gemm). A
 * single-channel input (DS-CNN's first layer) small enough is first copied with its
 * padding around it, so that each kernel row of a pixel is one run of bytes (whole
 * words when the kernel width is a multiple of 4).
 */
/* Row r of a panel: the taps of output pixel (ox, oy) of input channel i, then the next
   pixel; from the padded copy where there is one (PW != 0). */
static inline __attribute__((always_inline)) void cv_xdw_panel_row(const cv_dw_geom *g,
                                                                   const int8_t *input,
                                                                   int32_t i,
                                                                   const int8_t *padded,
                                                                   int32_t PW,
                                                                   int32_t *ox,
                                                                   int32_t *oy,
                                                                   int8_t *panel,
                                                                   int32_t r)
{
    if (PW == 0)
    {
        cv_dw_im2col_row(g, input, i, *ox, *oy, panel, r);
    }
    else if ((g->KW & 3) == 0)
    {
        /* kernel rows of whole groups: words, the window's rows a row step apart (not an
           address computed per kernel row) */
        const int32_t row_step = g->dy * PW;
        cv_word *d = (cv_word *)(void *)(panel + 4 * r);
        const int8_t *src = padded + *oy * g->sy * PW + *ox * g->sx;
        if (g->KW == 4)
        {
            /* a word a kernel row (DS-CNN's 10 x 4), in a hardware loop: the loops below
               took about 180 cycles a pixel there */
            cv_xgather_words(d, src, row_step, g->KH, 16);
        }
        else
        {
            for (int32_t ky = 0; ky < g->KH; ky++, src += row_step)
            {
                for (int32_t kx = 0; kx < g->KW; kx += 4, d += 4)
                {
                    *d = cv_lw_any(src + kx);
                }
            }
        }
    }
    else
    {
        for (int32_t ky = 0; ky < g->KH; ky++)
        {
            cv_panel_put(panel, r, ky * g->KW, padded + (*oy * g->sy + ky * g->dy) * PW + *ox * g->sx, g->KW);
        }
    }
    if (++*ox == g->OW)
    {
        *ox = 0;
        ++*oy;
    }
}

#define CV_XDW_WT 2560  /* bytes of transposed weights */

static void cv_xdw_mult4(const cv_dw_geom *g,
                         const int8_t *input,
                         const int8_t *kernel,
                         const int32_t *bias,
                         const int32_t *mult,
                         const int32_t *shift,
                         int8_t *output)
{
    const int32_t K = g->KW * g->KH;
    const int32_t Kp = (K + 3) & ~3;
    const int32_t pixels = g->OW * g->OH;
    int8_t panel[5 * CV_DW_KMAX] __attribute__((aligned(4)));
    int8_t wt[CV_XDW_WT] __attribute__((aligned(4)));
    int32_t init[CV_DW_NBLK];
    uint32_t rq_words[CV_XRQ_WORDS * CV_DW_NBLK];
    const int32_t nblk = (CV_XDW_WT / Kp < CV_DW_NBLK ? CV_XDW_WT / Kp : CV_DW_NBLK) & ~3;
    cv_panel_zero_tail(panel, K);

    int8_t padded[CV_DW_PAD] __attribute__((aligned(4)));
    const int32_t PW = cv_dw_pad_single(g, input, padded); /* 0: not copied */

    for (int32_t i = 0; i < g->C; i++)
    {
        for (int32_t mb = 0; mb < g->M; mb += nblk)
        {
            const int32_t count = g->M - mb < nblk ? g->M - mb : nblk; /* a multiple of 4 */
            const int32_t oc = i * g->M + mb;
            for (int32_t m = 0; m < count; m += 4)
            {
                int8_t *row = wt + m * Kp;
                cv_xtranspose4(kernel + oc + m, g->OC, row, Kp, 0, K, 1, 0);
                for (int32_t j = 0; j < 4; j++, row += Kp)
                {
                    for (int32_t k = K; k < Kp; k++)
                    {
                        row[k] = 0;
                    }
                }
            }
            /* the rows' sums (their zero tails add nothing) */
            cv_xfilter_init(init, wt, count, Kp, bias ? bias + oc : NULL, g->off);
            const uint32_t *rq =
                cv_xrq_prep(rq_words, mult + oc, shift + oc, count, g->o.out_off, g->o.act_min, g->o.act_max)
                    ? rq_words
                    : NULL;
            int32_t ox = 0, oy = 0;
            int32_t p = 0;
            /* full panels several at a time in the panel buffer (the weight rows' zero tails
               make the panels' tails add nothing), one call of the fused kernel for them
               (cv_xpanels_gemmq): about 150 cycles less a panel */
            const int32_t per_call = CV_DW_KMAX / Kp;
            /* under a ReLU, panels of 5 rows (cv_xgemm_5x4q) where a kernel row is a word
               and 5 pixels never cross an output line: each panel in one call of
               cv_xgather5_words (5 rows one at a time took the small DS-CNN's first layer
               5 K cycles more); per_call of them fit the buffer */
            if (rq && (count & 3) == 0 && PW != 0 && g->KW == 4 && g->OW % 5 == 0 &&
                cv_rq_relu(g->o.out_off, g->o.act_min))
            {
                while (pixels - p >= 5)
                {
                    const int32_t np = (pixels - p) / 5 < per_call ? (pixels - p) / 5 : per_call;
                    for (int8_t *pn = panel; pn < panel + np * 5 * Kp; pn += 5 * Kp)
                    {
                        cv_xgather5_words((uint32_t *)(void *)pn, padded + oy * g->sy * PW + ox * g->sx, g->dy * PW,
                                          g->KH, g->sx);
                        ox += 5;
                        if (ox == g->OW)
                        {
                            ox = 0;
                            ++oy;
                        }
                    }
                    cv_xpanels5_gemmq(panel, np, 5 * Kp, Kp, wt, count, init, rq, output + p * g->OC + oc, &g->o);
                    p += 5 * np;
                }
            }
            if (rq && (count & 3) == 0 && per_call >= 2)
            {
                while (pixels - p >= 4)
                {
                    const int32_t np = (pixels - p) >> 2 < per_call ? (pixels - p) >> 2 : per_call;
                    for (int32_t r = 0; r < 4 * np; r++)
                    {
                        cv_xdw_panel_row(g, input, i, padded, PW, &ox, &oy, panel + (r >> 2) * 4 * Kp, r & 3);
                    }
                    cv_xpanels_gemmq(panel, np, 4 * Kp, Kp, wt, count, init, rq, output + p * g->OC + oc, &g->o);
                    p += 4 * np;
                }
            }
            for (; p + 4 <= pixels; p += 4)
            {
                for (int32_t r = 0; r < 4; r++)
                {
                    cv_xdw_panel_row(g, input, i, padded, PW, &ox, &oy, panel, r);
                }
                cv_xpanel_gemm(panel, 4, Kp, wt, count, init, mult + oc, shift + oc, rq, output + p * g->OC + oc,
                               &g->o);
            }
            /* the last 1 to 3 pixels one at a time: the pixel's taps (panel row 0) as a
               run of words, its dot products with the weight rows (cv_xrow_dots), its
               outputs (cv_xrq_row). Through the panel kernel (4 rows computed) and
               cv_xstore (C's output stage) the small DS-CNN's last pixel took 10 K cycles,
               now 3 K. */
            for (; p < pixels; p++)
            {
                uint32_t taps[CV_DW_KMAX / 4];
                int32_t acc[CV_DW_NBLK];
                cv_xdw_panel_row(g, input, i, padded, PW, &ox, &oy, panel, 0);
                for (int32_t k = 0; k < Kp >> 2; k++)
                {
                    taps[k] = ((const uint32_t *)(const void *)panel)[4 * k];
                }
                cv_xrow_dots((const int8_t *)taps, Kp, wt, count, init, acc);
                cv_xrq_row(acc, count, rq, mult + oc, shift + oc, output + p * g->OC + oc, &g->o);
            }
        }
    }
}
#endif

/* Any depth multiplier: over the taps inside the input, 4 output channels of one input
   channel at a time where the multiplier allows (1 or a multiple of 4), else one. */
static void cv_dw_generic(const cv_dw_geom *g,
                          const int8_t *input,
                          const int8_t *kernel,
                          const int32_t *bias,
                          const int32_t *mult,
                          const int32_t *shift,
                          int8_t *output)
{
    const int32_t C = g->C, M = g->M, OC = g->OC;
    const int32_t off = g->off;
    const int32_t x_step = g->dx * C;
    for (int32_t oy = 0; oy < g->OH; oy++)
    {
        const int32_t base_y = oy * g->sy - g->py;
        int32_t ky0, ky1;
        cv_tap_range(base_y, g->dy, g->KH, g->H, &ky0, &ky1);
        for (int32_t ox = 0; ox < g->OW; ox++)
        {
            const int32_t base_x = ox * g->sx - g->px;
            int32_t kx0, kx1;
            cv_tap_range(base_x, g->dx, g->KW, g->W, &kx0, &kx1);
            const int32_t nx = kx1 - kx0;
            int32_t oc = 0;
            while (oc < OC)
            {
                const int32_t ic = M == 1 ? oc : oc / M;
                /* 4 channels share one pointer step if they are 4 input channels
                   (M == 1) or 4 outputs of one input channel. */
                const int32_t quad = oc + 4 <= OC && (M == 1 || (M & 3) == 0);
                const int32_t xs = M == 1 ? 1 : 0; /* input step between the 4 */
                int32_t a0 = bias ? bias[oc] : 0, a1 = 0, a2 = 0, a3 = 0;
                if (quad && bias)
                {
                    a1 = bias[oc + 1];
                    a2 = bias[oc + 2];
                    a3 = bias[oc + 3];
                }
                for (int32_t ky = ky0; ky < ky1; ky++)
                {
                    const int32_t iy = base_y + ky * g->dy;
                    const int8_t *x = input + (iy * g->W + base_x + kx0 * g->dx) * C + ic;
                    const int8_t *w = kernel + (ky * g->KW + kx0) * OC + oc;
                    if (quad)
                    {
                        for (int32_t t = nx; t > 0; t--)
                        {
                            const int32_t v0 = x[0] + off;
                            const int32_t v1 = x[xs] + off;
                            const int32_t v2 = x[2 * xs] + off;
                            const int32_t v3 = x[3 * xs] + off;
                            a0 += v0 * w[0];
                            a1 += v1 * w[1];
                            a2 += v2 * w[2];
                            a3 += v3 * w[3];
                            x += x_step;
                            w += OC;
                        }
                    }
                    else
                    {
                        for (int32_t t = nx; t > 0; t--)
                        {
                            a0 += (x[0] + off) * w[0];
                            x += x_step;
                            w += OC;
                        }
                    }
                }
                int8_t *out = output + (oy * g->OW + ox) * OC + oc;
                const int32_t out_off = g->o.out_off, act_min = g->o.act_min, act_max = g->o.act_max;
                out[0] = cv_rq_out_any(a0, mult[oc], shift[oc], out_off, act_min, act_max);
                if (quad)
                {
                    out[1] = cv_rq_out_any(a1, mult[oc + 1], shift[oc + 1], out_off, act_min, act_max);
                    out[2] = cv_rq_out_any(a2, mult[oc + 2], shift[oc + 2], out_off, act_min, act_max);
                    out[3] = cv_rq_out_any(a3, mult[oc + 3], shift[oc + 3], out_off, act_min, act_max);
                    oc += 4;
                }
                else
                {
                    oc++;
                }
            }
        }
    }
}

arm_cmsis_nn_status arm_depthwise_conv_s8(const cmsis_nn_context *ctx,
                                          const cmsis_nn_dw_conv_params *dw_conv_params,
                                          const cmsis_nn_per_channel_quant_params *quant_params,
                                          const cmsis_nn_dims *input_dims,
                                          const int8_t *input,
                                          const cmsis_nn_dims *filter_dims,
                                          const int8_t *kernel,
                                          const cmsis_nn_dims *bias_dims,
                                          const int32_t *bias,
                                          const cmsis_nn_dims *output_dims,
                                          int8_t *output)
{
    (void)ctx;
    (void)bias_dims;
    cv_dw_geom g;
    g.W = input_dims->w;
    g.H = input_dims->h;
    g.C = input_dims->c;
    g.M = dw_conv_params->ch_mult;
    g.OC = output_dims->c;
    g.KW = filter_dims->w;
    g.KH = filter_dims->h;
    g.OW = output_dims->w;
    g.OH = output_dims->h;
    g.sx = dw_conv_params->stride.w;
    g.sy = dw_conv_params->stride.h;
    g.px = dw_conv_params->padding.w;
    g.py = dw_conv_params->padding.h;
    g.dx = dw_conv_params->dilation.w;
    g.dy = dw_conv_params->dilation.h;
    g.off = dw_conv_params->input_offset;
    g.o.dst_stride = g.OC;
    g.o.out_off = dw_conv_params->output_offset;
    g.o.act_min = dw_conv_params->activation.min;
    g.o.act_max = dw_conv_params->activation.max;

    const int32_t batches = input_dims->n;
    const int32_t use_panel = (g.M & 3) == 0 && g.M > 0 && g.KW * g.KH <= CV_DW_KMAX;
    for (int32_t b = 0; b < batches; b++)
    {
        if (use_panel)
        {
#if COREV_XCV
            cv_xdw_mult4(&g, input, kernel, bias, quant_params->multiplier, quant_params->shift, output);
#else
            cv_dw_mult4(&g, input, kernel, bias, quant_params->multiplier, quant_params->shift, output);
#endif
        }
        else
        {
            cv_dw_generic(&g, input, kernel, bias, quant_params->multiplier, quant_params->shift, output);
        }
        input += g.W * g.H * g.C;
        output += g.OW * g.OH * g.OC;
    }
    return ARM_CMSIS_NN_SUCCESS;
}
