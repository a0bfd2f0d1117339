/*
 * Replaces CMSIS-NN's Source/ConvolutionFunctions/arm_convolve_1x1_s8.c (a 1x1
 * convolution without padding, any stride; the stride-1 case is
 * arm_convolve_1x1_s8_fast) for RV32IMC (CV32E40P), with its behaviour.
 *
 * Why faster: CMSIS-NN calls arm_nn_mat_mult_nt_t_s8 once per output line, which
 * prepares the filter sums and the output stage of every output channel each time: for
 * ResNet's 24x24x16 -> 12x12x32 projection that was most of the layer's cycles. Here one
 * call (cv_mat_mult_lines) takes every output pixel of a batch, the input pixels
 * stride x apart within a line and stride y lines apart.
 */
#include "corev_nn.h"

arm_cmsis_nn_status arm_convolve_1x1_s8(const cmsis_nn_context *ctx,
                                        const cmsis_nn_conv_params *conv_params,
                                        const cmsis_nn_per_channel_quant_params *quant_params,
                                        const cmsis_nn_dims *input_dims,
                                        const int8_t *input_data,
                                        const cmsis_nn_dims *filter_dims,
                                        const int8_t *filter_data,
                                        const cmsis_nn_dims *bias_dims,
                                        const int32_t *bias_data,
                                        const cmsis_nn_dims *output_dims,
                                        int8_t *output_data)
{
    (void)ctx;
    (void)filter_dims;
    (void)bias_dims;
    if (conv_params->padding.w != 0 || conv_params->padding.h != 0)
    {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    const int32_t C = input_dims->c;
    const int32_t out_pixels = output_dims->w * output_dims->h;
    for (int32_t n = 0; n < input_dims->n; n++)
    {
        const arm_cmsis_nn_status status =
            cv_mat_mult_lines(input_data + n * input_dims->h * input_dims->w * C,
                              out_pixels,
                              output_dims->w,
                              conv_params->stride.w * C,
                              conv_params->stride.h * input_dims->w * C,
                              filter_data,
                              bias_data,
                              output_data + n * out_pixels * output_dims->c,
                              quant_params->multiplier,
                              quant_params->shift,
                              output_dims->c,
                              C,
                              conv_params->input_offset,
                              conv_params->output_offset,
                              conv_params->activation.min,
                              conv_params->activation.max);
        if (status != ARM_CMSIS_NN_SUCCESS)
        {
            return status;
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
}
