/*
 * Replaces CMSIS-NN's Source/PoolingFunctions/arm_avgpool_s8.c (its C path) for the
 * CV32E40P. Defines arm_avgpool_s8 (quantized_avg_pool2d; DS-CNN's global average pool:
 * 125 pixels of 64 channels into one), with the C path's behaviour: per output pixel
 * and channel the sum of the taps inside the input, divided by their count with
 * rounding half away from zero ((sum +- count / 2) / count, C division), clamped; a
 * window with no tap inside the input is an argument error.
 *
 * Why faster: the C path walks the window once per channel, testing every tap against
 * the input's bounds and reading one byte per row of pixels. Here the window's bounds
 * are found once per output pixel, and 4 channels are summed at a time along the
 * window's rows, which are one line of pixels when the window spans the input's width
 * (global pooling). With the CORE-V extensions one word per pixel in a hardware loop,
 * cv.sdotsp.b against (1 0 0 0), (0 1 0 0), ... taking each byte apart and adding it
 * in one instruction (corev_xcv.h, cv_xsum4): 5 cycles per 4 values.
 *
 * Bit-exact with the C path: the same int32 sums and the same division.
 */
#include "corev_nn.h"

/* The division by count (rounded half away from zero, as the C path) by a multiply:
   m = ceil(2^24 / count) gives floor(n / count) = (n m) >> 24 exactly for n count < 2^24,
   true for every n = |sum| + count / 2 <= 128.5 count when count <= 361 (then also
   n m < 2^32). 0: divide (larger windows). A division took up to 35 cycles on the
   CV32E40P, per channel. */
CV_INLINE uint32_t cv_avg_recip(int32_t count)
{
    return count <= 361 ? ((1u << 24) + (uint32_t)count - 1) / (uint32_t)count : 0;
}

/* The rounded average, clamped (the C path's last step). Out of line: inlined at its 5
   calls it took 300 bytes of text. */
static __attribute__((noinline)) int8_t cv_avg_out(int32_t sum, int32_t count, uint32_t recip, int32_t act_min,
                                                   int32_t act_max)
{
    const int32_t half = count / 2;
    if (recip)
    {
        const uint32_t n = sum > 0 ? (uint32_t)(sum + half) : (uint32_t)(half - sum);
        const int32_t q = (int32_t)((n * recip) >> 24);
        return cv_clamp8(sum > 0 ? q : -q, act_min, act_max);
    }
    sum = sum > 0 ? (sum + half) / count : (sum - half) / count;
    return cv_clamp8(sum, act_min, act_max);
}

arm_cmsis_nn_status arm_avgpool_s8(const cmsis_nn_context *ctx,
                                   const cmsis_nn_pool_params *pool_params,
                                   const cmsis_nn_dims *input_dims,
                                   const int8_t *src,
                                   const cmsis_nn_dims *filter_dims,
                                   const cmsis_nn_dims *output_dims,
                                   int8_t *dst)
{
    (void)ctx;
    const int32_t W = input_dims->w, H = input_dims->h, C = input_dims->c;
    const int32_t OW = output_dims->w, OH = output_dims->h;
    const int32_t sx = pool_params->stride.w, sy = pool_params->stride.h;
    const int32_t kw = filter_dims->w, kh = filter_dims->h;
    const int32_t px = pool_params->padding.w, py = pool_params->padding.h;
    const int32_t act_min = pool_params->activation.min, act_max = pool_params->activation.max;
    if (input_dims->n < 1)
    {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    for (int32_t b = 0; b < input_dims->n; b++)
    {
        for (int32_t oy = 0; oy < OH; oy++)
        {
            const int32_t y0 = oy * sy - py;
            const int32_t ky0 = y0 < 0 ? 0 : y0, ky1 = y0 + kh < H ? y0 + kh : H;
            for (int32_t ox = 0; ox < OW; ox++)
            {
                const int32_t x0 = ox * sx - px;
                const int32_t kx0 = x0 < 0 ? 0 : x0, kx1 = x0 + kw < W ? x0 + kw : W;
                const int32_t rows = ky1 - ky0, cols = kx1 - kx0;
                if (rows <= 0 || cols <= 0)
                {
                    return ARM_CMSIS_NN_ARG_ERROR;
                }
                const int32_t count = rows * cols;
                const uint32_t recip = cv_avg_recip(count);
                const int8_t *win = src + (ky0 * W + kx0) * C;
                int8_t *out = dst + (oy * OW + ox) * C;
                int32_t c = 0;
                /* the window's rows are one line of pixels if it spans the input's width */
                const int32_t lines = cols == W ? 1 : rows, per_line = cols == W ? count : cols;
                for (; c + 4 <= C; c += 4)
                {
                    const int8_t *row = win + c;
#if COREV_XCV
                    int32_t s[4] = {0, 0, 0, 0};
                    for (int32_t r = 0; r < lines; r++, row += W * C)
                    {
                        cv_xsum4(row, C, per_line, s);
                    }
                    const int32_t s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
#else
                    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                    for (int32_t r = 0; r < lines; r++, row += W * C)
                    {
                        const int8_t *p = row;
                        for (int32_t k = per_line; k > 0; k--, p += C)
                        {
                            s0 += p[0];
                            s1 += p[1];
                            s2 += p[2];
                            s3 += p[3];
                        }
                    }
#endif
                    out[c] = cv_avg_out(s0, count, recip, act_min, act_max);
                    out[c + 1] = cv_avg_out(s1, count, recip, act_min, act_max);
                    out[c + 2] = cv_avg_out(s2, count, recip, act_min, act_max);
                    out[c + 3] = cv_avg_out(s3, count, recip, act_min, act_max);
                }
                for (; c < C; c++)
                {
                    int32_t s = 0;
                    const int8_t *row = win + c;
                    for (int32_t r = 0; r < rows; r++, row += W * C)
                    {
                        const int8_t *p = row;
                        for (int32_t k = cols; k > 0; k--, p += C)
                        {
                            s += *p;
                        }
                    }
                    out[c] = cv_avg_out(s, count, recip, act_min, act_max);
                }
            }
        }
        src += W * H * C;
        dst += OW * OH * C;
    }
    return ARM_CMSIS_NN_SUCCESS;
}
