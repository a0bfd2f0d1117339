/*
 * Replaces CMSIS-NN's Source/ConvolutionFunctions/arm_convolve_s8.c (its C path) for
 * RV32IMC (CV32E40P). Defines arm_convolve_s8: any kernel size, padding, stride,
 * dilation, groups, batches and the upscaling that the transposed convolution asks for,
 * as the C path does them. Reached through arm_convolve_wrapper_s8 for everything but 1x1
 * kernels, and from arm_convolve_1_x_n_s8's and arm_transpose_conv_wrapper_s8's C paths.
 *
 * Why faster: the C path builds an int16 im2col of 2 output pixels (each input value
 * widened and offset), then multiplies it with arm_nn_mat_mult_kernel_s8_s16, one 16-bit
 * load per input value and MAC. Here the im2col stays int8, in an interleaved panel of 4
 * output pixels (corev_nn.h; word copies when the channels allow, else a gather through a
 * table of tap offsets), and each group of 4 output channels is multiplied against the
 * whole panel: 8 byte loads per 16 MACs, 2.6 instructions per MAC in the loop. The input offset is added once per output
 * channel as offset x filter sum, computed once per call. The panel takes the scratch
 * buffer CMSIS-NN's C path sizes (arm_convolve_s8_get_buffer_size): 4 columns of int8
 * fit where it keeps 2 of int16.
 *
 * Bit-exact with the C path: the same int32 sums (padding written as -input_offset, as
 * there), arm_nn_requantize's rounding.
 */
#define CV_WANT_GEMM 1
#include "corev_nn.h"

#if COREV_XCV
/* CORE-V: the panel times 4 channels with cv.sdotsp.b in hardware loops, the output
   stage fused where it can be (corev_xcv.h). */
#define CV_CONV_FILTER_INIT cv_xfilter_init
#else
#define CV_CONV_FILTER_INIT cv_filter_init
#endif

/* Output channels per filter-sum block (the sums live on the stack). */
#define CV_CONV_NBLK 64

/*
 * Taps that are no whole words (few or odd channels: the RGB input of a first layer has
 * 9-byte kernel rows) start inside a panel group of 4 and would go byte by byte with
 * the panel's stride, in branchy loops: 400 cycles per pixel on MobileNet's first layer
 * (27 taps), a third of that layer. For the pixels whose window lies inside the input,
 * a table of each tap's offset from the window's first byte (CV_CONV_TAPS_MAX taps at
 * most) gives a straight loop instead: cv_panel_gather.
 */
#define CV_CONV_TAPS_MAX 256
/* Output channels per block of RGB 3x3 layers with the extensions: their weight rows, 28
   bytes each, fit in the tap table's bytes. */
#define CV_CONV_RGB_NBLK 16
/* Full panels of such layers built and multiplied at a time (their 28-byte rows; the
   call per panel, its arguments and the kernel's saves cost about as much as one of the
   panel's tiles): in what the output stage words of the other 48 channels would take. */
#define CV_CONV_RGB_BATCH 13
_Static_assert(CV_CONV_RGB_NBLK * 28 <= CV_CONV_TAPS_MAX * 2, "RGB weight rows in the tap table's bytes");

/* The geometry of one call, for cv_conv_panel. */
typedef struct
{
    int32_t input_x, input_y, input_ch, src_x;
    int32_t kernel_x, kernel_y, kernel_ch, row_len, K;
    int32_t dilation_x, dilation_y, x_rshift, y_rshift, row_runs;
    int32_t stride_x, stride_y, pad_x, pad_y, output_x;
    int32_t row_words; /* kernel rows of whole aligned words: their word count, else 0 */
    int8_t pad_value;
} cv_conv_geom;

/* Row dst of the panel (panel + 4 r) from base[off[k]], k < K; the tail of the last
   group is left as it is (zero). */
static __attribute__((noinline, optimize("O2"))) void cv_panel_gather(int8_t *dst,
                                                                      const int8_t *base,
                                                                      const int16_t *off,
                                                                      int32_t K)
{
    for (int32_t g = K >> 2; g > 0; g--)
    {
        const int8_t b0 = base[off[0]], b1 = base[off[1]], b2 = base[off[2]], b3 = base[off[3]];
        dst[0] = b0;
        dst[1] = b1;
        dst[2] = b2;
        dst[3] = b3;
        off += 4;
        dst += 16;
    }
    for (int32_t j = 0; j < (K & 3); j++)
    {
        dst[j] = base[off[j]];
    }
}

/* The same for 3x3 kernels over 3 channels, undilated (first layers over RGB images):
   the window's three runs of 9 bytes, row_step apart, as the panel row's 7 words, from
   word loads at any alignment (the CV32E40P splits a misaligned lw in two bus
   transfers), the words that join two runs put together (tap 27, the last group's
   fourth byte, is zero). Byte by byte it took 60 cycles a pixel. dst is aligned. */
static inline __attribute__((always_inline)) void cv_panel_gather_3x3x3(int8_t *dst,
                                                                            const int8_t *base,
                                                                            int32_t row_step)
{
    const int8_t *p1 = base + row_step, *p2 = p1 + row_step;
    uint32_t *d = (uint32_t *)(void *)dst;
    d[0] = cv_lw_any(base);
    d[4] = cv_lw_any(base + 4);
    d[8] = (cv_lw_any(p1 - 1) & ~0xffu) | (uint8_t)base[8];
    d[12] = cv_lw_any(p1 + 3);
    d[16] = (cv_lw_any(p2 - 2) & ~0xffffu) | (uint8_t)p1[7] | ((uint32_t)(uint8_t)p1[8] << 8);
    d[20] = cv_lw_any(p2 + 2);
    d[24] = cv_lw_any(p2 + 5) >> 8;
}

/* Row dst of the panel (panel + 4 r, aligned) from `rows` kernel rows of row_words
   aligned words each, row_step bytes apart from src on: a word load and store per 4
   taps. Through cv_panel_put, with its checks and calls per kernel row, a pixel of a
   32 x 32 x 16 input took 523 cycles (36 words), 29 % of the layer on CORE-V. */
static __attribute__((noinline, optimize("O2"))) void cv_panel_rows(int8_t *dst,
                                                                    const int8_t *src,
                                                                    int32_t row_words,
                                                                    int32_t rows,
                                                                    int32_t row_step)
{
#if COREV_XCV
    if ((row_words & 1) == 0 && row_words && rows > 0)
    {
        cv_xpanel_rows(dst, src, row_words >> 1, rows, row_step - 4 * row_words);
        return;
    }
#endif
    cv_word *d = (cv_word *)dst;
    for (; rows > 0; rows--, src += row_step)
    {
        const cv_word *s = (const cv_word *)src;
        int32_t g = row_words;
        for (; g >= 4; g -= 4)
        {
            const uint32_t w0 = s[0], w1 = s[1], w2 = s[2], w3 = s[3];
            d[0] = w0;
            d[4] = w1;
            d[8] = w2;
            d[12] = w3;
            s += 4;
            d += 16;
        }
        for (; g > 0; g--)
        {
            d[0] = *s++;
            d += 4;
        }
    }
}

/* The same for a window that reaches into the padding (kernel rows of whole words, so
   every tap is input_ch / 4 words): padding words or the tap's words, a word at a time
   (byte by byte through cv_panel_put and cv_panel_fill it took about 800 instructions
   for a 3 x 3 x 16 window: a border pixel cost three interior ones). */
static __attribute__((noinline)) void
cv_panel_rows_border(int8_t *dst, const cv_conv_geom *t, const int8_t *in_g, int32_t base_x, int32_t base_y)
{
    cv_word *d = (cv_word *)dst;
    const uint32_t pad = 0x01010101u * (uint8_t)t->pad_value;
    const int32_t tap_words = t->input_ch >> 2;
    for (int32_t ky = 0; ky < t->kernel_y; ky++)
    {
        const int32_t iy = base_y + ky * t->dilation_y;
        if (iy < 0 || iy >= t->input_y)
        {
            for (int32_t w = 0; w < t->row_words; w++, d += 4)
            {
                *d = pad;
            }
            continue;
        }
        const int8_t *row = in_g + iy * t->input_x * t->input_ch;
        for (int32_t kx = 0; kx < t->kernel_x; kx++)
        {
            const int32_t ix = base_x + kx;
            if (ix < 0 || ix >= t->input_x)
            {
                for (int32_t w = 0; w < tap_words; w++, d += 4)
                {
                    *d = pad;
                }
            }
            else
            {
                const cv_word *s = (const cv_word *)(row + ix * t->input_ch);
                for (int32_t w = 0; w < tap_words; w++, d += 4)
                {
                    *d = s[w];
                }
            }
        }
    }
}

/*
 * cv_conv_panel for kernel rows of whole words (t->row_words): its interior case first,
 * with the geometry in registers (through cv_conv_panel's general loop the bookkeeping
 * of a pixel took about as long as copying its 36 words).
 */
static __attribute__((noinline)) void
cv_conv_panel_words(int8_t *panel, int32_t rows, const cv_conv_geom *t, const int8_t *in_g, int32_t *ox, int32_t *oy)
{
    const int32_t input_x = t->input_x, input_ch = t->input_ch;
    /* windows from base_x in [0, lim_x) and base_y in [0, lim_y) lie inside the input */
    int32_t lim_x = input_x - (t->kernel_x - 1), lim_y = t->input_y - (t->kernel_y - 1) * t->dilation_y;
    lim_x = lim_x > 0 ? lim_x : 0;
    lim_y = lim_y > 0 ? lim_y : 0;
    const int32_t row_step = t->dilation_y * input_x * input_ch;
    const int32_t pix_step = t->stride_x * input_ch;
    int32_t px = *ox, py = *oy;
    int32_t base_x = px * t->stride_x - t->pad_x, base_y = py * t->stride_y - t->pad_y;
    const int8_t *src = in_g + (base_y * input_x + base_x) * input_ch;
    for (int32_t r = 0; r < rows; r++)
    {
        if ((uint32_t)base_x < (uint32_t)lim_x && (uint32_t)base_y < (uint32_t)lim_y)
        {
            cv_panel_rows(panel + 4 * r, src, t->row_words, t->kernel_y, row_step);
        }
        else
        {
            cv_panel_rows_border(panel + 4 * r, t, in_g, base_x, base_y);
        }
        src += pix_step;
        base_x += t->stride_x;
        if (++px == t->output_x)
        {
            px = 0;
            py++;
            base_x = -t->pad_x;
            base_y = py * t->stride_y - t->pad_y;
            src = in_g + (base_y * input_x + base_x) * input_ch;
        }
    }
    *ox = px;
    *oy = py;
}

/*
 * Rows 0..rows-1 of the panel: the output pixels from (*ox, *oy) on, which it advances
 * (kernel rows of whole words: cv_conv_panel_words). tap_off: cv_panel_gather's
 * offsets, or NULL. Out of line: inlined, its loops shared
 * the registers of the channel-block loops and kept their variables on the stack.
 */
static __attribute__((noinline)) void cv_conv_panel(int8_t *panel,
                                                    int32_t rows,
                                                    const cv_conv_geom *t,
                                                    const int8_t *in_g,
                                                    int32_t *ox,
                                                    int32_t *oy,
                                                    const int16_t *tap_off)
{
    const int32_t input_x = t->input_x, input_y = t->input_y, input_ch = t->input_ch;
    const int32_t kernel_x = t->kernel_x, kernel_y = t->kernel_y, kernel_ch = t->kernel_ch;
    const int32_t row_len = t->row_len, src_x = t->src_x;
    const int32_t dilation_x = t->dilation_x, dilation_y = t->dilation_y;
    const int32_t x_rshift = t->x_rshift, y_rshift = t->y_rshift, row_runs = t->row_runs;
    const int8_t pad_value = t->pad_value;
    /* the last tap's distance from the window's first one, in x and y */
    const int32_t span_x = (kernel_x - 1) * dilation_x, span_y = (kernel_y - 1) * dilation_y;
    int32_t px = *ox, py = *oy;
    for (int32_t r = 0; r < rows; r++)
    {
        const int32_t base_x = px * t->stride_x - t->pad_x;
        const int32_t base_y = py * t->stride_y - t->pad_y;
        if (tap_off && base_x >= 0 && base_x + span_x < input_x && base_y >= 0 && base_y + span_y < input_y)
        {
            cv_panel_gather(panel + 4 * r, in_g + (base_y * input_x + base_x) * input_ch, tap_off, t->K);
        }
        else
        {
            int32_t k0 = 0;
            for (int32_t ky = 0; ky < kernel_y; ky++, k0 += row_len)
            {
                const int32_t iy = base_y + ky * dilation_y;
                if (iy < 0 || iy >= input_y || (y_rshift && (iy & 1)))
                {
                    cv_panel_fill(panel, r, k0, pad_value, row_len);
                    continue;
                }
                const int8_t *in_row = in_g + (iy >> y_rshift) * src_x * input_ch;
                if (row_runs && base_x >= 0 && base_x + kernel_x <= input_x)
                {
                    cv_panel_put(panel, r, k0, in_row + base_x * input_ch, row_len);
                    continue;
                }
                for (int32_t kx = 0; kx < kernel_x; kx++)
                {
                    const int32_t ix = base_x + kx * dilation_x;
                    if (ix < 0 || ix >= input_x || (x_rshift && (ix & 1)))
                    {
                        cv_panel_fill(panel, r, k0 + kx * kernel_ch, pad_value, kernel_ch);
                    }
                    else
                    {
                        cv_panel_put(panel,
                                     r,
                                     k0 + kx * kernel_ch,
                                     in_row + (ix >> x_rshift) * input_ch,
                                     kernel_ch);
                    }
                }
            }
        }
        if (++px == t->output_x)
        {
            px = 0;
            py++;
        }
    }
    *ox = px;
    *oy = py;
}

/* Where each of the 27 taps of a 3x3x3 window goes in a panel row (k -> 16 (k >> 2) +
   (k & 3)). */
static const uint8_t cv_rgb3x3_pos[27] = {0,  1,  2,  3,  16, 17, 18, 19, 32, 33, 34, 35, 48, 49,
                                          50, 51, 64, 65, 66, 67, 80, 81, 82, 83, 96, 97, 98};

/* cv_panel_gather_3x3x3 for a window that crosses the input's edge (window corner at
   base_x, base_y): taps outside the input are the padding value. Through cv_conv_panel,
   with a call per kernel row or pixel of it, such a pixel took about 900 cycles: 16 %
   of the pixels of a 24 x 24 input with padding 1, a quarter of its first layer. */
static __attribute__((noinline, optimize("O2"))) void cv_panel_gather_3x3x3_edge(int8_t *dst,
                                                                                const int8_t *in_g,
                                                                                int32_t base_x,
                                                                                int32_t base_y,
                                                                                int32_t input_x,
                                                                                int32_t input_y,
                                                                                int8_t pad)
{
    const uint8_t *pos = cv_rgb3x3_pos;
    for (int32_t ky = 0; ky < 3; ky++)
    {
        const int32_t iy = base_y + ky;
        for (int32_t kx = 0; kx < 3; kx++, pos += 3)
        {
            const int32_t ix = base_x + kx;
            if ((uint32_t)iy < (uint32_t)input_y && (uint32_t)ix < (uint32_t)input_x)
            {
                const int8_t *src = in_g + 3 * (iy * input_x + ix);
                dst[pos[0]] = src[0];
                dst[pos[1]] = src[1];
                dst[pos[2]] = src[2];
            }
            else
            {
                dst[pos[0]] = pad;
                dst[pos[1]] = pad;
                dst[pos[2]] = pad;
            }
        }
    }
}

/*
 * cv_conv_panel for 3x3 kernels over RGB pixels, undilated: a pixel whose window lies
 * inside the input (nearly all of them) straight through cv_panel_gather_3x3x3, the
 * others through cv_panel_gather_3x3x3_edge. Through cv_conv_panel, with its geometry
 * and checks per pixel (and its register saves per call), a pixel of MobileNet's first
 * layer took 174 cycles for the 60 of its gather.
 */
static __attribute__((noinline, optimize("O2"))) void cv_conv_panel_rgb3x3(int8_t *panel,
                                                                          int32_t rows,
                                                                          const cv_conv_geom *t,
                                                                          const int8_t *in_g,
                                                                          int32_t *ox,
                                                                          int32_t *oy)
{
    const int32_t input_x = t->input_x, input_y = t->input_y, output_x = t->output_x;
    const int32_t stride_x = t->stride_x, row_step = input_x * 3, pixel_step = stride_x * 3;
    int32_t px = *ox, py = *oy;
    int32_t base_x = px * stride_x - t->pad_x, base_y = py * t->stride_y - t->pad_y;
    const int8_t *base = in_g + base_y * row_step + base_x * 3;
#if COREV_XCV
    /* the common panel first: 4 windows along one output row, all inside the input (base_x
       + 3 stride_x <= input_x - 3, as unsigned; the same for y), in one call (through the
       loop below, MobileNet's first layer took about 55 cycles a panel more) */
    if (rows == 4 && px + 4 <= output_x && (uint32_t)(base_x + 3 * stride_x) < (uint32_t)(input_x - 2) &&
        base_x >= 0 && (uint32_t)base_y < (uint32_t)(input_y - 2))
    {
        cv_xrgb3x3_run(panel, base, row_step, 4, pixel_step);
        px += 4;
        if (px == output_x)
        {
            px = 0;
            py++;
        }
        *ox = px;
        *oy = py;
        return;
    }
#endif
    for (int32_t r = 0; r < rows; r++)
    {
        /* 0 <= base_x <= input_x - 3, the same for y */
        if (__builtin_expect((uint32_t)base_x < (uint32_t)(input_x - 2) && (uint32_t)base_y < (uint32_t)(input_y - 2),
                             1))
        {
#if COREV_XCV
            /* the run of such windows along the output row, within the panel, in one call */
            int32_t k = 1;
            while (r + k < rows && px + k < output_x && base_x + k * stride_x <= input_x - 3)
            {
                k++;
            }
            cv_xrgb3x3_run(panel + 4 * r, base, row_step, k, pixel_step);
            r += k - 1;
            px += k - 1;
            base_x += (k - 1) * stride_x;
            base += (k - 1) * pixel_step;
#else
            cv_panel_gather_3x3x3(panel + 4 * r, base, row_step);
#endif
        }
        else
        {
            cv_panel_gather_3x3x3_edge(panel + 4 * r, in_g, base_x, base_y, input_x, input_y, t->pad_value);
        }
        base_x += stride_x;
        base += pixel_step;
        if (__builtin_expect(++px == output_x, 0))
        {
            px = 0;
            py++;
            base_x = -t->pad_x;
            base_y += t->stride_y;
            base = in_g + base_y * row_step + base_x * 3;
        }
    }
    *ox = px;
    *oy = py;
}

arm_cmsis_nn_status arm_convolve_s8(const cmsis_nn_context *ctx,
                                    const cmsis_nn_conv_params *conv_params,
                                    const cmsis_nn_per_channel_quant_params *quant_params,
                                    const cmsis_nn_dims *input_dims,
                                    const int8_t *input_data,
                                    const cmsis_nn_dims *filter_dims,
                                    const int8_t *filter_data,
                                    const cmsis_nn_dims *bias_dims,
                                    const int32_t *bias_data,
                                    const cmsis_nn_dims *upscale_dims,
                                    const cmsis_nn_dims *output_dims,
                                    int8_t *output_data)
{
    (void)bias_dims;
    if (ctx->buf == NULL)
    {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    int8_t *panel = (int8_t *)ctx->buf;

    const int32_t batches = input_dims->n;
    const int32_t input_x = input_dims->w;
    const int32_t input_y = input_dims->h;
    const int32_t input_ch = input_dims->c;
    const int32_t kernel_x = filter_dims->w;
    const int32_t kernel_y = filter_dims->h;
    const int32_t kernel_ch = filter_dims->c;
    const int32_t output_x = output_dims->w;
    const int32_t output_y = output_dims->h;
    const int32_t output_ch = output_dims->c;
    const int32_t pad_x = conv_params->padding.w;
    const int32_t pad_y = conv_params->padding.h;
    const int32_t stride_x = conv_params->stride.w;
    const int32_t stride_y = conv_params->stride.h;
    const int32_t dilation_x = conv_params->dilation.w;
    const int32_t dilation_y = conv_params->dilation.h;
    const int32_t input_offset = conv_params->input_offset;
    const int8_t pad_value = (int8_t)-input_offset;

    const int32_t groups = input_ch / kernel_ch;
    if (input_ch % groups != 0 || output_ch % groups != 0)
    {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    const int32_t ch_per_group = output_ch / groups;
    const int32_t K = kernel_x * kernel_y * kernel_ch;
    const int32_t row_len = kernel_x * kernel_ch;
    const int32_t pixels = output_x * output_y;

    /* Upscaling by 2 (transposed convolution): odd positions of the upscaled input are
       zeros (padding), position p reads input p / 2. As in the C path, that case reads
       each group's taps from channel 0 on. */
    int32_t y_rshift = 0, x_rshift = 0;
    if (upscale_dims)
    {
        y_rshift = upscale_dims->h == 2 ? 1 : 0;
        x_rshift = upscale_dims->w == 2 ? 1 : 0;
    }
    const int32_t upscaling = y_rshift | x_rshift;
    const int32_t src_x = input_x >> x_rshift;
    const int32_t src_y = input_y >> y_rshift;
    /* A kernel row is one run of input when it covers whole pixels side by side. */
    const int32_t row_runs = dilation_x == 1 && kernel_ch == input_ch && !x_rshift;

    const cv_out_params o = {output_ch, conv_params->output_offset, conv_params->activation.min,
                             conv_params->activation.max};
    int32_t init[CV_CONV_NBLK];
#if COREV_XCV
    /* the channels' output stage words; an RGB 3x3 layer's blocks of CV_CONV_RGB_NBLK
       channels leave the rest for a batch of panels (cv_xpanels_gemmq) */
    union
    {
        uint32_t words[CV_XRQ_WORDS * CV_CONV_NBLK];
        struct
        {
            uint32_t words[CV_XRQ_WORDS * CV_CONV_RGB_NBLK];
            int8_t panels[CV_CONV_RGB_BATCH * 4 * 28];
        } rgb;
    } rq_mem;
    uint32_t *rq_words = rq_mem.words;
#else
    int32_t rq_words[CV_RQ4_WORDS * CV_CONV_NBLK];
#endif
    /* The kernels read whole groups of 4: the panel's bytes past K are zeros. */
    cv_panel_zero_tail(panel, K);

    cv_conv_geom t = {input_x,    input_y,    input_ch, src_x,    kernel_x, kernel_y, kernel_ch,
                      row_len,    K,          dilation_x, dilation_y, x_rshift, y_rshift, row_runs,
                      stride_x,   stride_y,   pad_x,    pad_y,    output_x, 0,        pad_value};
    /* kernel rows that are whole words, at aligned addresses, in an aligned panel */
    if (row_runs && !y_rshift && (input_ch & 3) == 0 && (((uintptr_t)input_data | (uintptr_t)panel) & 3) == 0)
    {
        t.row_words = row_len >> 2;
    }
    /* the taps' offsets (cv_conv_panel), or with the extensions the weight rows of an
       RGB 3x3 layer 28 bytes apart (that path reads no tap table) */
    union
    {
        int16_t taps[CV_CONV_TAPS_MAX];
        uint32_t rgb_w[CV_CONV_TAPS_MAX / 2];
    } tap_mem;
    int16_t *tap_table = tap_mem.taps;
    const int16_t *tap_off = NULL;
    /* 3x3 kernels over RGB pixels, undilated, on inputs of 3 x 3 pixels or more (its
       window test takes input_x - 2 as unsigned), into an aligned panel (word stores):
       cv_conv_panel_rgb3x3 */
    const int32_t rgb3x3 = kernel_x == 3 && kernel_y == 3 && kernel_ch == 3 && input_ch == 3 && dilation_x == 1 &&
        dilation_y == 1 && !upscaling && input_x >= 3 && input_y >= 3 && ((uintptr_t)panel & 3) == 0;
    /* taps of whole words go into the panel a word at a time already */
    if (((kernel_ch | input_ch) & 3) && K <= CV_CONV_TAPS_MAX && !upscaling &&
        ((kernel_y - 1) * dilation_y * input_x + (kernel_x - 1) * dilation_x + 1) * input_ch <= 32767)
    {
        int32_t k = 0;
        for (int32_t ky = 0; ky < kernel_y; ky++)
        {
            for (int32_t kx = 0; kx < kernel_x; kx++)
            {
                for (int32_t c = 0; c < kernel_ch; c++)
                {
                    tap_table[k++] = (int16_t)((ky * dilation_y * input_x + kx * dilation_x) * input_ch + c);
                }
            }
        }
        tap_off = tap_table;
    }

#if COREV_XCV
    /* RGB 3x3 layers: weight rows of 27 bytes put 3 of 4 rows' word loads at misaligned
       addresses, which the CV32E40P splits in two bus transfers (about 21 cycles a tile
       of 16 outputs); each block of CV_CONV_RGB_NBLK channels is copied 28 bytes a row
       (the 28th byte zero, as the panel's) into tap_mem and multiplied as K = 28. */
    const int32_t nblk = rgb3x3 ? CV_CONV_RGB_NBLK : CV_CONV_NBLK;
#else
    const int32_t nblk = CV_CONV_NBLK;
#endif
    for (int32_t b = 0; b < batches; b++)
    {
        for (int32_t g = 0; g < groups; g++)
        {
            const int8_t *in_g = input_data + (upscaling ? 0 : g * kernel_ch);
            const int32_t n0 = g * ch_per_group;
            for (int32_t nb = 0; nb < ch_per_group; nb += nblk)
            {
                const int32_t count = ch_per_group - nb < nblk ? ch_per_group - nb : nblk;
                const int8_t *w = filter_data + (n0 + nb) * K;
                CV_CONV_FILTER_INIT(init, w, count, K, bias_data ? bias_data + n0 + nb : NULL, input_offset);
#if COREV_XCV
                int32_t Kw = K;
                if (rgb3x3)
                {
                    for (int32_t n = 0; n < count; n++)
                    {
                        uint32_t *d = tap_mem.rgb_w + 7 * n;
                        const int8_t *src = w + 27 * n;
                        for (int32_t j = 0; j < 6; j++)
                        {
                            d[j] = cv_lw_any(src + 4 * j);
                        }
                        d[6] = (uint32_t)(uint8_t)src[24] | (uint32_t)(uint8_t)src[25] << 8 |
                            (uint32_t)(uint8_t)src[26] << 16;
                    }
                    w = (const int8_t *)tap_mem.rgb_w;
                    Kw = 28;
                }
#endif
#if COREV_XCV
                const uint32_t *rq =
                    cv_xrq_prep(rq_words, quant_params->multiplier + n0 + nb, quant_params->shift + n0 + nb, count,
                                o.out_off, o.act_min, o.act_max)
                    ? rq_words
                    : NULL;
#else
                const int32_t *rq =
                    cv_rq4_prep(rq_words, quant_params->multiplier + n0 + nb, quant_params->shift + n0 + nb, count,
                                o.out_off, o.act_min)
                    ? rq_words
                    : NULL;
#endif

                int32_t ox = 0, oy = 0;
                int32_t p0 = 0;
#if COREV_XCV
                if (rgb3x3 && rq && (count & 3) == 0)
                {
                    /* The weight rows' 28th byte is zero: the panels' need not be. */
                    while (p0 + 4 <= pixels)
                    {
                        const int32_t np = (pixels - p0) >> 2 < CV_CONV_RGB_BATCH ? (pixels - p0) >> 2 : CV_CONV_RGB_BATCH;
                        for (int32_t i = 0; i < np; i++)
                        {
                            cv_conv_panel_rgb3x3(rq_mem.rgb.panels + i * 4 * 28, 4, &t, in_g, &ox, &oy);
                        }
                        cv_xpanels_gemmq(rq_mem.rgb.panels, np, 4 * 28, 28, w, count, init, rq,
                                         output_data + p0 * output_ch + n0 + nb, &o);
                        p0 += 4 * np;
                    }
                }
#endif
                for (int32_t p = p0; p < pixels; p += 4)
                {
                    const int32_t rows = pixels - p < 4 ? pixels - p : 4;
                    if (t.row_words)
                    {
                        cv_conv_panel_words(panel, rows, &t, in_g, &ox, &oy);
                    }
                    else if (rgb3x3)
                    {
                        cv_conv_panel_rgb3x3(panel, rows, &t, in_g, &ox, &oy);
                    }
                    else
                    {
                        cv_conv_panel(panel, rows, &t, in_g, &ox, &oy, tap_off);
                    }
#if COREV_XCV
                    cv_xpanel_gemm(panel,
                                  rows,
                                  Kw,
                                  w,
                                  count,
                                  init,
                                  quant_params->multiplier + n0 + nb,
                                  quant_params->shift + n0 + nb,
                                   rq,
                                  output_data + p * output_ch + n0 + nb,
                                  &o);
#else
                    cv_panel_gemm_q(panel,
                                    rows,
                                    K,
                                    w,
                                    count,
                                    init,
                                    quant_params->multiplier + n0 + nb,
                                    quant_params->shift + n0 + nb,
                                    rq,
                                    output_data + p * output_ch + n0 + nb,
                                    &o);
#endif
                }
            }
        }
        input_data += src_x * src_y * input_ch;
        output_data += pixels * output_ch;
    }
    return ARM_CMSIS_NN_SUCCESS;
}
