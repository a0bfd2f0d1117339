/*
 * Replaces CMSIS-NN's Source/ConvolutionFunctions/arm_depthwise_conv_3x3_s8.c (its C
 * path) for RV32IMC (CV32E40P). Defines arm_depthwise_conv_3x3_s8: 3x3 depthwise
 * convolution, depth multiplier 1, horizontal padding at most 1, any stride, one batch
 * (as the original, which the wrapper calls for batch 1 only).
 *
 * Why faster: the C path walks every output pixel and, per 4 channels, loads words of
 * input and weights and takes each byte apart ((int8_t)(w >> 8) and the like), adding
 * the input offset to every input value; taps outside the input are branches.
 * Here the loop runs over groups of 4 channels outside the pixels:
 * - the group's 36 weights are copied once into a compact array, its requantization
 *   parameters prepared once, and the accumulators start from bias + offset x filter
 *   sum;
 * - 3 input rows of the group (4 channels a pixel, one word) sit in a ring on the stack,
 *   padded with -input_offset, so every window is inside it at constant offsets from 3
 *   row pointers: no border case, and each input row is copied once for the 3 output
 *   rows that read it;
 * - per channel, 4 output pixels of a row at once: the input values along a kernel row
 *   are loaded once for the 4 windows that share them (6 loads for 12 MACs with stride 1),
 *   the weights once for the 4.
 * Wider rows than the ring holds go through it in column chunks.
 *
 * Bit-exact with the C path: taps outside the input contribute nothing there (it skips
 * them) and here (-input_offset + input_offset); same int32 sums, arm_nn_requantize's
 * rounding.
 */
#define CV_WANT_RQ_LINES 1
#include "corev_nn.h"

/* One output pixel of channels c0 .. c0 + n - 1 (n <= 4), one at a time, over the taps
   inside the input: a last group of fewer than 4 channels, negative multipliers, an
   input offset outside int8's zero points. */
static void cv_dw3x3_single(const int8_t *input,
                            const int8_t *kernel,
                            const int32_t *bias,
                            int32_t c0,
                            int32_t n,
                            int32_t C,
                            int32_t W,
                            int32_t H,
                            int32_t in_w,
                            int32_t in_h,
                            int32_t off,
                            int32_t *acc)
{
    const int32_t ky0 = in_h < 0 ? -in_h : 0;
    const int32_t ky1 = H - in_h < 3 ? H - in_h : 3;
    const int32_t kx0 = in_w < 0 ? -in_w : 0;
    const int32_t kx1 = W - in_w < 3 ? W - in_w : 3;
    for (int32_t j = 0; j < n; j++)
    {
        const int32_t c = c0 + j;
        int32_t a = bias ? bias[c] : 0;
        for (int32_t ky = ky0; ky < ky1; ky++)
        {
            const int8_t *x = input + ((in_h + ky) * W + in_w) * C + c;
            const int8_t *w = kernel + ky * 3 * C + c;
            for (int32_t kx = kx0; kx < kx1; kx++)
            {
                a += (x[kx * C] + off) * w[kx * C];
            }
        }
        acc[j] = a;
    }
}

typedef struct
{
    int32_t W, H, C, OW, OH, sx, sy, px, py, off, out_off, act_min, act_max;
} cv_dw3_geom;

/* ---------------------------------------------------------------------------------
 * RV32IMC, per channel along lines (cv_dw3_lines): the map is walked along its longer
 * output axis (the "fast" one; DS-CNN's 25 x 5 maps down the columns), 3 outputs of one
 * channel at a time, with the channel's 9 weights and requantization parameters in
 * registers for the whole line (cv_dw3_s1 / cv_dw3_s2, assembly: GCC spills at this
 * register count). The 3 input lines sit in the ring of words (4 channels a pixel,
 * padded), so a line of one channel is every 4th byte. Per 3 outputs 15 (stride 2: 21)
 * byte loads, 27 multiply-adds and 3 output stages: about 44 cycles an output, where
 * the 4-output strips above take about 85 with their requantization parameters,
 * weights and the row's last pixels reloaded.
 * ------------------------------------------------------------------------------- */
typedef struct
{
    const int8_t *p0, *p1, *p2; /* 0, 4, 8: the 3 input lines at the first window (bytes 4 apart) */
    int8_t *dst;                /* 12 */
    int32_t dstep;              /* 16: bytes from one output to the next along the line */
    int32_t nstrips;            /* 20: strips of 3 outputs a line */
    int32_t w[9];               /* 24: w[3 r + k]: line r, position k along it */
    int32_t init;               /* 60: bias + input offset x weight sum */
    uint32_t m2;                /* 64: 2 x multiplier (>= 0) */
    int32_t pre;                /* 68: the requantization's right shift e in [1, 31] as */
    int32_t h;                  /* 72:   ((t - (t < 0)) >> pre + h) >> sh, pre = e >= 2, */
    int32_t sh;                 /* 76:   sh = e - pre, h with the output offset (cv_rq_h_with_offset) */
    int32_t out_off;            /* 80: (the C path's) */
    int32_t act_min;            /* 84 */
    int32_t act_max;            /* 88 */
    int32_t ntail;              /* 92: outputs after the strips of a line (0 to 2) */
    int32_t nlines;             /* 96: output lines, >= 1 (counted down) */
    int32_t padv;               /* 100: bytes from one output line's input lines to the next's */
    int32_t dadv;               /* 104: bytes from one output line to the next */
    int32_t relu;               /* 108: cv_rq_relu */
} cv_dw3_args;

/* One line's contribution to the 3 accumulators t3, t4, t5 (x in t0, product in t1;
   each load has an instruction between it and its use). NEXT: the first load of the
   next line (or another instruction). */
#define CV_DW3_L1(P, W0, W1, W2, NEXT)                                                                                 \
    "mul t1, t0, " #W0 "\n\tlb t0, 4(" #P ")\n\tadd t3, t3, t1\n\t"                                                    \
    "mul t1, t0, " #W1 "\n\tadd t3, t3, t1\n\tmul t1, t0, " #W0 "\n\tlb t0, 8(" #P ")\n\tadd t4, t4, t1\n\t"             \
    "mul t1, t0, " #W2 "\n\tadd t3, t3, t1\n\tmul t1, t0, " #W1 "\n\tadd t4, t4, t1\n\t"                                \
    "mul t1, t0, " #W0 "\n\tlb t0, 12(" #P ")\n\tadd t5, t5, t1\n\t"                                                   \
    "mul t1, t0, " #W2 "\n\tadd t4, t4, t1\n\tmul t1, t0, " #W1 "\n\tlb t0, 16(" #P ")\n\tadd t5, t5, t1\n\t"            \
    "mul t1, t0, " #W2 "\n\t" NEXT "\n\tadd t5, t5, t1\n\t"
#define CV_DW3_L2(P, W0, W1, W2, NEXT)                                                                                 \
    "mul t1, t0, " #W0 "\n\tlb t0, 4(" #P ")\n\tadd t3, t3, t1\n\t"                                                    \
    "mul t1, t0, " #W1 "\n\tlb t0, 8(" #P ")\n\tadd t3, t3, t1\n\t"                                                    \
    "mul t1, t0, " #W2 "\n\tadd t3, t3, t1\n\tmul t1, t0, " #W0 "\n\tlb t0, 12(" #P ")\n\tadd t4, t4, t1\n\t"            \
    "mul t1, t0, " #W1 "\n\tlb t0, 16(" #P ")\n\tadd t4, t4, t1\n\t"                                                   \
    "mul t1, t0, " #W2 "\n\tadd t4, t4, t1\n\tmul t1, t0, " #W0 "\n\tlb t0, 20(" #P ")\n\tadd t5, t5, t1\n\t"            \
    "mul t1, t0, " #W1 "\n\tlb t0, 24(" #P ")\n\tadd t5, t5, t1\n\t"                                                   \
    "mul t1, t0, " #W2 "\n\t" NEXT "\n\tadd t5, t5, t1\n\t"
/* The output stage of accumulator X (arm_nn_requantize, + output offset, clamp, store:
   CV_RQ_SPLIT, corev_nn.h); L: its label number (L0..L3). */
#define CV_DW3_STORE(R) "sb " #R ", 0(t6)\n\tadd t6, t6, ra"
#define CV_DW3_RQ(X, L) CV_RQ_SPLIT(X, s9, s10, s11, a4, t0, a7, CV_DW3_STORE, L)
#define CV_DW3_FIX(X, L) CV_RQ_SPLIT_FIX(X, t0, a5, a6, a7, CV_DW3_STORE, L)

/* One output (the last of a line): line P's 3 values times W0..W2 into t3. */
#define CV_DW3_ONE(P, W0, W1, W2, NEXT)                                                                                \
    "mul t1, t0, " #W0 "\n\tlb t0, 4(" #P ")\n\tadd t3, t3, t1\n\tmul t1, t0, " #W1 "\n\tlb t0, 8(" #P ")\n\t"           \
    "add t3, t3, t1\n\tmul t1, t0, " #W2 "\n\t" NEXT "\n\tadd t3, t3, t1\n\t"

/* nlines output lines of nstrips strips of 3 and ntail single outputs each; the line
   pointers and dst in *a advance by padv and dadv from line to line (a is changed). The
   argument pointer is kept at 52(sp). */
#define CV_DW3_KERNEL(NAME, LINE, STEP)                                                                                \
    static __attribute__((naked, noinline, noclone)) void NAME(cv_dw3_args *a)                                        \
    {                                                                                                                  \
        (void)a;                                                                                                       \
        __asm__ volatile(                                                                                              \
            "addi sp, sp, -64\n\t"                                                                                     \
            "sw ra, 0(sp)\n\tsw s0, 4(sp)\n\tsw s1, 8(sp)\n\tsw s2, 12(sp)\n\tsw s3, 16(sp)\n\tsw s4, 20(sp)\n\t"     \
            "sw s5, 24(sp)\n\tsw s6, 28(sp)\n\tsw s7, 32(sp)\n\tsw s8, 36(sp)\n\tsw s9, 40(sp)\n\tsw s10, 44(sp)\n\t" \
            "sw s11, 48(sp)\n\tsw a0, 52(sp)\n\t"                                                                      \
            "lw ra, 16(a0)\n\t"                                                                                        \
            "lw s0, 24(a0)\n\tlw s1, 28(a0)\n\tlw s2, 32(a0)\n\tlw s3, 36(a0)\n\tlw s4, 40(a0)\n\t"                    \
            "lw s5, 44(a0)\n\tlw s6, 48(a0)\n\tlw s7, 52(a0)\n\tlw s8, 56(a0)\n\tlw t2, 60(a0)\n\t"                    \
            "lw s9, 64(a0)\n\tlw s10, 68(a0)\n\tlw s11, 72(a0)\n\tlw a4, 76(a0)\n\tlw a5, 108(a0)\n\t"                  \
            "lw a6, 84(a0)\n\tlw a7, 88(a0)\n\t"                                                                       \
            /* a line */                                                                                               \
            ".balign 4\n5:\n\tlw t0, 52(sp)\n\tlw a1, 0(t0)\n\tlw a2, 4(t0)\n\tlw a3, 8(t0)\n\tlw t6, 12(t0)\n\t"                 \
            "lw a0, 20(t0)\n\tbeqz a0, 6f\n\t"                                                                         \
            ".balign 4\n1:\n\tlb t0, 0(a1)\n\tmv t3, t2\n\tmv t4, t2\n\tmv t5, t2\n\t" LINE(a1, s0, s1, s2, "lb t0, 0(a2)")       \
                LINE(a2, s3, s4, s5, "lb t0, 0(a3)") LINE(a3, s6, s7, s8, "addi a1, a1, 3 * " #STEP)                   \
            "addi a2, a2, 3 * " #STEP "\n\taddi a3, a3, 3 * " #STEP "\n\t" CV_DW3_RQ(t3, 11)                   \
                CV_DW3_RQ(t4, 21) CV_DW3_RQ(t5, 31) "addi a0, a0, -1\n\tbnez a0, 1b\n"                 \
            /* the outputs after the strips */                                                                         \
            "6:\n\tlw t0, 52(sp)\n\tlw a0, 92(t0)\n\tbeqz a0, 8f\n"                                                    \
            ".balign 4\n7:\n\tlb t0, 0(a1)\n\tmv t3, t2\n\t" CV_DW3_ONE(a1, s0, s1, s2, "lb t0, 0(a2)")                           \
                CV_DW3_ONE(a2, s3, s4, s5, "lb t0, 0(a3)") CV_DW3_ONE(a3, s6, s7, s8, "addi a1, a1, " #STEP)           \
            "addi a2, a2, " #STEP "\n\taddi a3, a3, " #STEP "\n\t" CV_DW3_RQ(t3, 41)                           \
            "addi a0, a0, -1\n\tbnez a0, 7b\n"                                                                         \
            /* the next line */                                                                                        \
            "8:\n\tlw t0, 52(sp)\n\tlw a0, 96(t0)\n\taddi a0, a0, -1\n\tsw a0, 96(t0)\n\tbeqz a0, 9f\n\t"              \
            "lw t1, 100(t0)\n\tlw a1, 0(t0)\n\tlw a2, 4(t0)\n\tlw a3, 8(t0)\n\t"                                       \
            "add a1, a1, t1\n\tadd a2, a2, t1\n\tadd a3, a3, t1\n\t"                                                   \
            "sw a1, 0(t0)\n\tsw a2, 4(t0)\n\tsw a3, 8(t0)\n\t"                                                         \
            "lw t1, 104(t0)\n\tlw t6, 12(t0)\n\tadd t6, t6, t1\n\tsw t6, 12(t0)\n\tj 5b\n"                             \
            "9:\n\t"                                                                                                   \
            "lw ra, 0(sp)\n\tlw s0, 4(sp)\n\tlw s1, 8(sp)\n\tlw s2, 12(sp)\n\tlw s3, 16(sp)\n\tlw s4, 20(sp)\n\t"     \
            "lw s5, 24(sp)\n\tlw s6, 28(sp)\n\tlw s7, 32(sp)\n\tlw s8, 36(sp)\n\tlw s9, 40(sp)\n\tlw s10, 44(sp)\n\t" \
            "lw s11, 48(sp)\n\taddi sp, sp, 64\n\tret\n" CV_DW3_FIX(t3, 11) CV_DW3_FIX(t4, 21)         \
                CV_DW3_FIX(t5, 31) CV_DW3_FIX(t3, 41) CV_RQ_SPLIT_REST(s9, s10, s11, a4, t0, a0, 56, a5, a6, a7, CV_DW3_STORE));                                                \
    }

/* Strides 1 and 2 along the line: 3 outputs take 5 or 7 input values of each line. */
CV_DW3_KERNEL(cv_dw3_s1, CV_DW3_L1, 4)
CV_DW3_KERNEL(cv_dw3_s2, CV_DW3_L2, 8)
#undef CV_DW3_KERNEL
#undef CV_DW3_L1
#undef CV_DW3_L2
#undef CV_DW3_RQ
#undef CV_DW3_FIX
#undef CV_DW3_STORE
#undef CV_DW3_ONE

/* The map as lines: a fast axis along the lines and a slow one across them. */
typedef struct
{
    int32_t F, S, OF, OS, sF, sS, pF, pS; /* input and output lengths, strides, paddings */
    int32_t in_f, in_s, out_f, out_s;     /* bytes from one pixel to the next along each */
} cv_dw3_view;

/* The lines along the columns (vertical) or along the rows. */
static cv_dw3_view cv_dw3_view_of(const cv_dw3_geom *g, int32_t vertical)
{
    const int32_t C = g->C;
    cv_dw3_view v;
    v.F = vertical ? g->H : g->W;
    v.S = vertical ? g->W : g->H;
    v.OF = vertical ? g->OH : g->OW;
    v.OS = vertical ? g->OW : g->OH;
    v.sF = vertical ? g->sy : g->sx;
    v.sS = vertical ? g->sx : g->sy;
    v.pF = vertical ? g->py : g->px;
    v.pS = vertical ? g->px : g->py;
    v.in_f = vertical ? g->W * C : C;
    v.in_s = vertical ? C : g->W * C;
    v.out_f = vertical ? g->OW * C : C;
    v.out_s = vertical ? C : g->OW * C;
    return v;
}

/* One input line (slow index is, fast positions if0 .. if0 + n - 1) of channels c ..
   c + nc - 1 (nc <= 4) as words; outside the input: -input_offset. Word loads when the
   pixels are word-aligned, else bytes (a last group of fewer than 4 channels, channel
   counts that are no multiple of 4). */
static void cv_dw3_fill_line(const cv_dw3_geom *g,
                             const cv_dw3_view *v,
                             const int8_t *input,
                             int32_t c,
                             int32_t nc,
                             int32_t is,
                             int32_t if0,
                             int32_t n,
                             uint32_t *line)
{
    const uint32_t pad = 0x01010101u * (uint8_t)(int8_t)-g->off;
    int32_t i = 0;
    if (is >= 0 && is < v->S)
    {
        for (; i < n && if0 + i < 0; i++)
        {
            line[i] = pad;
        }
        const int32_t end = v->F - if0 < n ? v->F - if0 : n;
        const int8_t *src = input + is * v->in_s + (if0 + i) * v->in_f + c;
        const int32_t step = v->in_f;
        if (nc == 4 && (((uintptr_t)src | (uintptr_t)step) & 3) == 0)
        {
            for (; i + 2 <= end; i += 2, src += 2 * step)
            {
                const uint32_t a = *(const cv_word *)src, b = *(const cv_word *)(src + step);
                line[i] = a;
                line[i + 1] = b;
            }
        }
        for (; i < end; i++, src += step)
        {
            uint32_t word = pad;
            for (int32_t j = 0; j < nc; j++)
            {
                word = (word & ~(0xffu << (8 * j))) | (uint32_t)(uint8_t)src[j] << (8 * j);
            }
            line[i] = word;
        }
    }
    for (; i < n; i++)
    {
        line[i] = pad;
    }
}

/* Lines is0 .. is0 + nl - 1 of n words each into band (cv_dw3_fill_line's words). For 4
   channels of word-aligned pixels the copies run here with the geometry in registers:
   a call per line took 16 to 27 cycles a word on MobileNet's 6x6 and 3x3 maps, longer
   than the kernel's reads of them. */
static __attribute__((noinline)) void cv_dw3_fill_band(const cv_dw3_geom *g,
                                                       const cv_dw3_view *v,
                                                       const int8_t *input,
                                                       int32_t c,
                                                       int32_t nc,
                                                       int32_t is0,
                                                       int32_t nl,
                                                       int32_t if0,
                                                       int32_t n,
                                                       uint32_t *band)
{
    const int8_t *base = input + c;
    if (nc != 4 || (((uintptr_t)base | (uintptr_t)v->in_f | (uintptr_t)v->in_s) & 3) != 0)
    {
        for (int32_t i = 0; i < nl; i++)
        {
            cv_dw3_fill_line(g, v, input, c, nc, is0 + i, if0, n, band + i * n);
        }
        return;
    }
    const uint32_t pad = 0x01010101u * (uint8_t)(int8_t)-g->off;
    const int32_t lead = if0 < 0 ? (-if0 < n ? -if0 : n) : 0; /* words before the input */
    const int32_t end = v->F - if0 < n ? v->F - if0 : n;          /* words up to its end */
    /* the geometry in locals: the stores into the band may alias *v for the compiler */
    const int32_t step = v->in_f >> 2, S = v->S, in_s = v->in_s;
    const int8_t *const first = base + (if0 + lead) * v->in_f;
    uint32_t *line = band;
    for (int32_t i = 0; i < nl; i++)
    {
        const int32_t is = is0 + i;
        uint32_t *d = line, *const line_end = line + n;
        line = line_end;
        if (is < 0 || is >= S)
        {
            for (; d < line_end; d++)
            {
                *d = pad;
            }
            continue;
        }
        for (uint32_t *const lead_end = d + lead; d < lead_end; d++)
        {
            *d = pad;
        }
        const uint32_t *src = (const uint32_t *)(const void *)(first + is * in_s);
        for (uint32_t *const copy_end = line_end - n + end; d < copy_end; d++, src += step)
        {
            *d = *src;
        }
        for (; d < line_end; d++)
        {
            *d = pad;
        }
    }
}

/* Words of input lines (4 channels a pixel) on the stack for cv_dw3_lines. */
#define CV_DW3_BAND 512

/* One group of nc <= 4 channels, every channel in the kernels' requantization mode.
   Input lines (padded) go into a band on the
   stack, as many as it holds; one kernel call per channel then does the band's output
   lines. args[j]: channel j's weights and output stage (pointers and counts set here).
   Lines longer than a third of the band go in chunks. */
static CV_NO_SCHED void cv_dw3_lines(const cv_dw3_geom *g,
                                     const cv_dw3_view *v,
                                     const int8_t *input,
                                     cv_dw3_args *args,
                                     int32_t c,
                                     int32_t nc,
                                     int8_t *output)
{
    uint32_t band[CV_DW3_BAND];
    const int32_t sF = v->sF, sS = v->sS;
    /* Outputs per chunk: their windows span (chunk - 1) * sF + 3 input pixels. */
    const int32_t chunk = (CV_DW3_BAND / 3 - 3) / sF + 1;
    for (int32_t of0 = 0; of0 < v->OF; of0 += chunk)
    {
        const int32_t nf = v->OF - of0 < chunk ? v->OF - of0 : chunk;
        const int32_t if0 = of0 * sF - v->pF;
        const int32_t n = (nf - 1) * sF + 3; /* words a line */
        const int32_t lines = CV_DW3_BAND / n;
        const int32_t per_band = (lines - 3) / sS + 1; /* output lines a band */
        for (int32_t os0 = 0; os0 < v->OS; os0 += per_band)
        {
            const int32_t nb = v->OS - os0 < per_band ? v->OS - os0 : per_band;
            const int32_t nl = (nb - 1) * sS + 3;
            const int32_t is0 = os0 * sS - v->pS;
            cv_dw3_fill_band(g, v, input, c, nc, is0, nl, if0, n, band);
            int8_t *out = output + os0 * v->out_s + of0 * v->out_f + c;
            /* the same for every channel (computed once: the stores through a may alias
               v's fields for the compiler, and nf / 3 is a division) */
            const int32_t nstrips = nf / 3, ntail = nf - 3 * nstrips, padv = 4 * n * sS;
            const int32_t dstep = v->out_f, dadv = v->out_s;
            for (int32_t j = 0; j < nc; j++)
            {
                cv_dw3_args *a = &args[j];
                a->p0 = (const int8_t *)band + j;
                a->p1 = a->p0 + 4 * n;
                a->p2 = a->p1 + 4 * n;
                a->dst = out + j;
                a->dstep = dstep;
                a->nstrips = nstrips;
                a->ntail = ntail;
                a->nlines = nb;
                a->padv = padv;
                a->dadv = dadv;
                if (a->pre < 0)
                {
                    for (int32_t l = 0; l < nb; l++)
                    {
                        for (int32_t o = 0; o < nf; o++)
                        {
                            int32_t acc = a->init;
                            for (int32_t r = 0; r < 3; r++)
                            {
                                const int8_t *x = a->p0 + 4 * n * (l * sS + r) + 4 * sF * o;
                                acc += x[0] * a->w[3 * r] + x[4] * a->w[3 * r + 1] + x[8] * a->w[3 * r + 2];
                            }
                            a->dst[l * v->out_s + o * v->out_f] = cv_rq_out_any(
                                acc, (int32_t)a->m2, a->sh, a->out_off, a->act_min, a->act_max);
                        }
                    }
                }
                else if (sF == 1)
                {
                    cv_dw3_s1(a);
                }
                else
                {
                    cv_dw3_s2(a);
                }
            }
        }
    }
}

/* The group's arguments for cv_dw3_lines (a channel whose requantization is not the
   kernels' mode, multiplier >= 0 and shift in [-31, -1], is marked pre = -1 and done in
   C). Returns 1. Taps outside, channels inside: the group's 4 weights of a tap are
   neighbours (per channel, 9 loads C bytes apart and their index arithmetic took about
   200 cycles a channel, as long as the kernel on a 3x3 map's 9 outputs). */
static int32_t cv_dw3_prep(const cv_dw3_geom *g,
                           int32_t vertical,
                           const int8_t *kernel,
                           const int32_t *bias,
                           const int32_t *mult,
                           const int32_t *shift,
                           int32_t c,
                           int32_t nc,
                           cv_dw3_args *args)
{
    /* a[3 ky + kx] of tap (ky, kx), or a[3 kx + ky] when the lines run down the columns */
    static const uint8_t transposed[9] = {0, 3, 6, 1, 4, 7, 2, 5, 8};
    const int32_t C = g->C;
    int32_t sum[4] = {0, 0, 0, 0};
    const int8_t *k = kernel + c;
    if (nc == 4)
    {
        /* the sums in registers (through the array they were a load and a store a weight) */
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (int32_t t = 0; t < 9; t++, k += C)
        {
            const int32_t at = vertical ? transposed[t] : t;
            const int32_t w0 = k[0], w1 = k[1], w2 = k[2], w3 = k[3];
            args[0].w[at] = w0;
            args[1].w[at] = w1;
            args[2].w[at] = w2;
            args[3].w[at] = w3;
            s0 += w0;
            s1 += w1;
            s2 += w2;
            s3 += w3;
        }
        sum[0] = s0;
        sum[1] = s1;
        sum[2] = s2;
        sum[3] = s3;
    }
    else
    {
        for (int32_t t = 0; t < 9; t++, k += C)
        {
            const int32_t at = vertical ? transposed[t] : t;
            for (int32_t j = 0; j < nc; j++)
            {
                const int32_t w = k[j];
                args[j].w[at] = w;
                sum[j] += w;
            }
        }
    }
    for (int32_t j = 0; j < nc; j++)
    {
        const int32_t m = mult[c + j], sft = shift[c + j];
        cv_dw3_args *a = &args[j];
        a->init = (int32_t)((uint32_t)(bias ? bias[c + j] : 0) + (uint32_t)sum[j] * (uint32_t)g->off);
        a->out_off = g->out_off;
        a->act_min = g->act_min;
        a->act_max = g->act_max;
        if (m < 0 || sft > -1 || sft < -31)
        {
            /* not the kernel's requantization mode: this channel in C (pre < 0) */
            a->m2 = (uint32_t)m;
            a->pre = -1;
            a->sh = sft;
            continue;
        }
        const int32_t e = -sft;
        a->m2 = 2u * (uint32_t)m;
        a->pre = e >= 2;
        a->sh = e - a->pre;
        a->relu = cv_rq_relu(g->out_off, g->act_min);
        if (g->act_min > g->out_off || !cv_rq_h_with_offset(a->pre, a->sh, g->out_off, &a->h))
        {
            /* not the split output stage's mode (CV_RQ_SPLIT): in C */
            a->m2 = (uint32_t)m;
            a->pre = -1;
            a->sh = sft;
        }
    }
    return 1;
}

#if COREV_XCV
/*
 * CORE-V: dot products over the taps (corev_xcv.h, cv_xdw3_s1 / cv_xdw3_s2). Per group
 * of up to 4 channels, the input is transposed into lines of one channel along the axis
 * with stride 1 or 2 (the one that needs fewer strips of 4 outputs: DS-CNN's 25 x 5
 * maps run down the columns), padded with -input_offset, as many lines as the buffer
 * holds (a band of output lines); then per channel one call computes the band's
 * accumulators, which are requantized with the channel's bias + offset x filter sum.
 * Lines longer than the buffer allows go in chunks of outputs. Returns 0 (nothing done)
 * where neither axis has stride 1 or 2, or -input_offset is no int8.
 */
#define CV_XDW_BUF 3072 /* bytes of transposed input lines (with 1536, MobileNet's depthwise
                           layers took 76 K cycles more: bands of 3 to 11 lines, each with
                           its set-up and 2 lines transposed again) */
#define CV_XDW_ACC 160  /* accumulators per call */

/* One line of the band for channels c .. c + nc - 1 (nc <= 4): channel j at
   line + j * Lb, input bytes at positions [lo, hi) from src (pixels in_f apart; NULL: a
   line outside the input: all padding). The rest of the line is padding
   already (cv_xfill_words on the band at the start of the chunk). */
static __attribute__((noinline)) void
cv_xdw3_fill(int8_t *line, int32_t Lb, const int8_t *src, int32_t in_f, int32_t nc, int32_t lo, int32_t hi, uint32_t pad)
{
    if (hi <= lo)
    {
        return;
    }
    if (src == NULL)
    {
        cv_xfill_words((uint32_t *)(void *)line, pad, Lb);
        return;
    }
    if (nc == 4)
    {
        cv_xtranspose4(src, in_f, line, Lb, lo, hi - lo, 1, 0);
        return;
    }
    for (int32_t pos = lo; pos < hi; pos++, src += in_f)
    {
        for (int32_t j = 0; j < nc; j++)
        {
            line[j * Lb + pos] = src[j];
        }
    }
}

/*
 * cv_xdw3x3's lines under a ReLU (cv_xdwp): the dot products and the output stage of one
 * channel in one loop, two outputs an iteration, where cv_xdw3_s1 / _s2 stored
 * accumulators that cv_xrq_lines loaded again (and the caller set up two calls a
 * channel). Stride 1: per pair and kernel line one word of the line,
 * X = (x0 x1 x2 x3) at the pair's first input (a misaligned load every other pair: 2
 * cycles on the CV32E40P), gives both outputs: X.(w0 w1 w2 0) and X.(0 w0 w1 w2).
 * Stride 2: a word per output and kernel line, 2 bytes apart. Then cv_xrq_lines' output
 * stage (XCV_RQ_SPLIT, with I folded in as below) for each output and the store: 29
 * instructions a pair with stride 1, 32 with stride 2. The loops end on the line
 * pointer (no count to step), and stride 1 runs two pairs an iteration: one taken
 * branch for 4 outputs where there were two and two counter steps. An odd last output
 * takes one more window. The reads reach one
 * byte past the last window (cv_xdw3x3's lines are 4 bytes longer than its outputs
 * need). With stride 1 both ways, two output lines at a time: per pair of outputs of
 * each the 4 input lines' words, the middle two shared (4 loads for 4 outputs, where
 * they took 6), and one line's overhead for two (the small DS-CNN's 3x3 layers took
 * 7.6 K cycles each less); a last odd line as above. The channel's words come from
 * cv_xrq_make, per call: writing them out once a group of channels (as cv_xdw3_cols
 * does) was faster on the kernel fixture but slower on DS-CNN and MobileNet (by 0.5 %
 * and 0.1 %, commit 8fa75e1).
 * The sums start at 0 (the first product of each output is cv.dotsp.b), and the initial
 * value I (bias + offset x filter sum) is folded into the output stage's words instead:
 * y = (X + I) mh + f = X mh + (f + I mh), y + x = X mh + X + (f + I mh + I), x <= 0 is
 * X <= -I and x >= xlim is X >= xlim - I (saturated), so the two moves of I into the
 * sums a pair are gone (DS-CNN's 3x3 layers took 1 cycle an output more with them). For
 * |I| <= 2^30, so that -I and the sums do not wrap.
 */
typedef struct
{
    cv_xrq_args q;    /* 0..47: the channel's output stage, which cv_xdwp computes from mult,
                         shift and init (cv_xrq_make_pos' words, xlim lowered as
                         cv_xrq_xlim, I folded in), of which it keeps in memory m2,
                         offsh, sh (36..47: the exact stage's); act_min, act_max (28, 32):
                         the caller's */
    const int8_t *r0; /* 48: line 0 of the first output line; lines 1 and 2 pitch apart */
    int32_t pitch;    /* 52 */
    int32_t pairs;    /* 56: pairs of outputs a line, >= 0 */
    int32_t odd;      /* 60: 1 if a line ends with one more output */
    int32_t nlines;   /* 64: output lines, >= 1 */
    int32_t radv;     /* 68: added to the line pointers after a line (after their own steps) */
    int8_t *out;      /* 72: the first output */
    int32_t ostep;    /* 76: bytes from an output to the next along the line */
    int32_t oadv;     /* 80: added to out after a line */
    uint32_t w[6];    /* 84: (w0 w1 w2 0) of kernel lines 0..2 (the caller's), then (0 w0 w1 w2) */
    int32_t stride2;  /* 108: 0 for stride 1 along the lines, else stride 2 */
    int32_t ni;       /* 112: -I (cv_xdwp's) */
    /* Two output lines at a time (stride 1 along and across the lines, nlines >= 2): */
    int32_t two;      /* 116: 1 to take them so */
    int32_t oline;    /* 120: bytes from an output line to the next */
    int32_t radv2;    /* 124: added to the line pointers after two lines (2 pitch - 2 pairs) */
    int32_t oadv2;    /* 128: added to out after two lines */
    /* The channel's requantization, and the layer's output offset (in [-256, 255]; act_max
       in [-512, 510]): */
    int32_t mult;     /* 132 */
    int32_t shift;    /* 136 */
    int32_t init;     /* 140: I, |I| <= 2^30 */
    int32_t out_off;  /* 144 */
} cv_xdwp_args;
_Static_assert(offsetof(cv_xdwp_args, r0) == 48 && offsetof(cv_xdwp_args, out_off) == 144, "cv_xdwp's offsets");

/* Registers of cv_xdwp: args a0, line pointers a1-a3 (and gp: line 3 of two output
   lines), out a4, ostep a5, -I a6, lines a7, (w0 w1 w2 0) s0-s2, (0 w0 w1 w2) s3-s5, mh s6,
   f + I mh s7, xlim - I s8, f + I mh + I s9, act_min s11 (act_max: 32(a0), the exact
   stage's alone); one line: its words t0-t2, the sums t3, t4, temporaries t0 and t5 in
   the output stage; two lines: the words t0-t2, t5, the sums t3, t4 (line 0) and t6,
   s10 (line 1), temporaries t0 and t1 once the words are used, the line step of the
   outputs tp; the pairs' end ra; the shared exact stage t1, t2, t5 (and s10, saved). */
#define XCV_DWP_STORE(R) XCV_SB_PR(R, a4, a5)
/* the second line's outputs: at out + oline, out unchanged (cv.sb rs2, rs3(rs1)) */
#define XCV_DWP_STORE1(R) ".insn r 0x2b, 3, 0x14, tp, a4, " #R "\n\t"
/* XCV_RQ_SPLIT with I folded in (signed compares with -I and xlim - I), the result in t0,
   temporary T */
#define XCV_DWP_OUT(X, T, STORE, L)                                                                            \
    "bge a6, " #X ", " #L "0f\n\t"                                                                             \
    "bge " #X ", s8, " #L "3f\n\t"                                                                             \
    "mul t0, " #X ", s6\n\t"                                                                                   \
    "add " #T ", t0, " #X "\n\t" XCV_ADDN22(t0, t0, s7) XCV_ADDN22(T, T, s9) "bne t0, " #T ", " #L "3f\n\t"     \
        #L "2:\n\t" STORE(t0) #L "4:\n\t"
/* its out-of-line parts: a sum <= 0 stores act_min; the exact stage of X + I in the
   shared code (label 90), then the store */
#define XCV_DWP_OUT_FIX(X, STORE, L)                                                                           \
    #L "0:\n\t" STORE(s11) "j " #L "4b\n"                                                                      \
    #L "3:\n\tsub t2, " #X ", a6\n\tjal t1, 90f\n\tj " #L "2b\n"
/* The shared code: the exact stage of t2 with both clamps, the result in t0, back to t1.
   t5 and s10 are borrowed (the words are used by then; s10, a sum of the second line, is
   kept on the stack). One copy, where a copy an output took 0.75 KiB more text; the
   call costs the small DS-CNN's 3x3 layers about 1 K cycles each. */
#define XCV_DWP_EXACT                                                                                          \
    "90:\n\tsw s10, 60(sp)\n\t" XCV_RQ_EXACT(t2, t5, s10, "36(a0)", "40(a0)", "44(a0)") XCV_MAX(t2, t2, s11)       \
        "lw t5, 32(a0)\n\t" XCV_MIN(t0, t2, t5) "lw s10, 60(sp)\n\tjr t1\n"
#define XCV_DWP_OUTPUT(X, L) XCV_DWP_OUT(X, t5, XCV_DWP_STORE, L)
#define XCV_DWP_OUTPUT_FIX(X, L) XCV_DWP_OUT_FIX(X, XCV_DWP_STORE, L)

/* Stride 1: a pair of outputs (labels L1, L2 of their output stages) */
#define XCV_DWP_PAIR_S1(L1, L2)                                                                                 \
    XCV_LW_PI(t0, a1, 2) XCV_LW_PI(t1, a2, 2) XCV_LW_PI(t2, a3, 2) XCV_DOTSP(t3, t0, s0) XCV_DOTSP(t4, t0, s3)   \
        XCV_SDOTSP(t3, t1, s1) XCV_SDOTSP(t4, t1, s4) XCV_SDOTSP(t3, t2, s2) XCV_SDOTSP(t4, t2, s5)              \
            XCV_DWP_OUTPUT(t3, L1) XCV_DWP_OUTPUT(t4, L2)
/* Two lines, a pair each from the 4 input lines' words (the middle two shared) */
#define XCV_DWP_WORDS2                                                                                          \
    XCV_LW_PI(t0, a1, 2) XCV_LW_PI(t1, a2, 2) XCV_LW_PI(t2, a3, 2) XCV_LW_PI(t5, gp, 2) XCV_DOTSP(t3, t0, s0)      \
        XCV_DOTSP(t4, t0, s3) XCV_DOTSP(t6, t1, s0) XCV_DOTSP(s10, t1, s3) XCV_SDOTSP(t3, t1, s1)                \
            XCV_SDOTSP(t4, t1, s4) XCV_SDOTSP(t6, t2, s1) XCV_SDOTSP(s10, t2, s4) XCV_SDOTSP(t3, t2, s2)         \
                XCV_SDOTSP(t4, t2, s5) XCV_SDOTSP(t6, t5, s2) XCV_SDOTSP(s10, t5, s5)
/* their output stages: line 1's first output (at out + oline), line 0's (out stepped),
   line 1's second, line 0's (labels L0 to L3) */
#define XCV_DWP_OUTS2(L0, L1, L2, L3)                                                                           \
    XCV_DWP_OUT(t6, t1, XCV_DWP_STORE1, L0) XCV_DWP_OUT(t3, t1, XCV_DWP_STORE, L1)                              \
        XCV_DWP_OUT(s10, t1, XCV_DWP_STORE1, L2) XCV_DWP_OUT(t4, t1, XCV_DWP_STORE, L3)
#define XCV_DWP_OUTS2_FIX(L0, L1, L2, L3)                                                                       \
    XCV_DWP_OUT_FIX(t6, XCV_DWP_STORE1, L0) XCV_DWP_OUT_FIX(t3, XCV_DWP_STORE, L1)                              \
        XCV_DWP_OUT_FIX(s10, XCV_DWP_STORE1, L2) XCV_DWP_OUT_FIX(t4, XCV_DWP_STORE, L3)

CV_XCV_NAKED int cv_xdwp(cv_xdwp_args *args)
{
    (void)args;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t" XCV_PROLOGUE "sw gp, 52(sp)\n\tsw tp, 56(sp)\n\t"
                     /* the channel's words (cv_xrq_make_pos, cv_xrq_xlim, I folded in, see
                        the struct; in C they took 150 cycles a channel): the mode first,
                        m >= 0 and e = -shift in [2, 21] (else 0 is returned) */
                     "lw t0, 132(a0)\n\t"
                     "lw t1, 136(a0)\n\t"
                     "lw t2, 140(a0)\n\t"
                     "bltz t0, 98f\n\t"
                     "neg t1, t1\n\t"
                     "addi t3, t1, -2\n\t"
                     "li t4, 19\n\t"
                     "bltu t4, t3, 98f\n\t"
                     /* s = e + 9: mh = m >> s, f = (2^30 >> s) + 2^21 + out_off 2^22, xlim =
                        ((2^31 - 1 - f) >> (31 - s)) + 1 (cv_rq_fast) */
                     "addi t3, t1, 9\n\t"
                     "srl s6, t0, t3\n\t"
                     "lw t4, 144(a0)\n\t"
                     "lui t5, 0x40000\n\t"
                     "srl t5, t5, t3\n\t"
                     "lui t6, 0x200\n\t"
                     "add t5, t5, t6\n\t"
                     "slli t6, t4, 22\n\t"
                     "add s7, t5, t6\n\t"
                     "li t5, 31\n\t"
                     "sub t5, t5, t3\n\t"
                     "li t6, 0x7fffffff\n\t"
                     "sub t6, t6, s7\n\t"
                     "srl t6, t6, t5\n\t"
                     "addi s8, t6, 1\n\t"
                     /* lowered to ceil(((act_max + 1) 2^22 - f) / mh) where smaller (0 if f
                        reaches (act_max + 1) 2^22; as it is where mh = 0) */
                     "beqz s6, 2f\n\t"
                     "lw t5, 32(a0)\n\t"
                     "addi t5, t5, 1\n\t"
                     "slli t5, t5, 22\n\t"
                     "bge s7, t5, 3f\n\t"
                     "sub t5, t5, s7\n\t"
                     "divu t6, t5, s6\n\t"
                     "mul s9, t6, s6\n\t"
                     "sub s9, s9, t5\n\t"
                     "snez s9, s9\n\t"
                     "add t6, t6, s9\n\t"
                     "bgeu t6, s8, 2f\n\t"
                     "mv s8, t6\n\t"
                     "j 2f\n"
                     "3:\n\t"
                     "li s8, 0\n"
                     "2:\n\t"
                     /* the exact stage's words: 2 m, out_off << sh, sh = e - 1 */
                     "slli t5, t0, 1\n\t"
                     "sw t5, 36(a0)\n\t"
                     "addi t5, t1, -1\n\t"
                     "sw t5, 44(a0)\n\t"
                     "sll t6, t4, t5\n\t"
                     "sw t6, 40(a0)\n\t"
                     /* I folded in: f + I mh, f + I mh + I, -I, xlim - I (INT32_MAX where it
                        passes it: only for I < 0) */
                     "mul t5, t2, s6\n\t"
                     "add s7, s7, t5\n\t"
                     "add s9, s7, t2\n\t"
                     "neg a6, t2\n\t"
                     "sub s8, s8, t2\n\t"
                     "bgez t2, 4f\n\t"
                     "bgez s8, 4f\n\t"
                     "li s8, 0x7fffffff\n"
                     "4:\n\t"
                     "lw s0, 84(a0)\n\tlw s1, 88(a0)\n\tlw s2, 92(a0)\n\tlw s11, 28(a0)\n\t"
                     "slli s3, s0, 8\n\tslli s4, s1, 8\n\tslli s5, s2, 8\n\t"
                     "lw a1, 48(a0)\n\tlw t0, 52(a0)\n\tlw a7, 64(a0)\n\tlw a4, 72(a0)\n\tlw a5, 76(a0)\n\t"
                     "add a2, a1, t0\n\tadd a3, a2, t0\n\t"
                     "lw t1, 116(a0)\n\t"
                     "beqz t1, 1f\n\t"
                     "li t1, 2\n\t"
                     "blt a7, t1, 1f\n\t"
                     "add gp, a3, t0\n\t"
                     "lw tp, 120(a0)\n"
                     /* two lines at a time: ra = where line 0's pointer ends, two pairs an
                        iteration, an odd count entering at the second */
                     "20:\n\t"
                     "lw ra, 56(a0)\n\t"
                     "beqz ra, 23f\n\t"
                     "andi t0, ra, 1\n\t"
                     "slli ra, ra, 1\n\t"
                     "add ra, ra, a1\n\t"
                     "bnez t0, 27f\n"
                     "22:\n\t" XCV_DWP_WORDS2 XCV_DWP_OUTS2(30, 31, 32, 33)
                     "27:\n\t" XCV_DWP_WORDS2 XCV_DWP_OUTS2(34, 35, 36, 37) "bne a1, ra, 22b\n"
                     "23:\n\t"
                     "lw t0, 60(a0)\n\t"
                     "beqz t0, 25f\n\t"
                     "lw t0, 0(a1)\n\tlw t1, 0(a2)\n\tlw t2, 0(a3)\n\tlw t5, 0(gp)\n\t" XCV_DOTSP(t3, t0, s0)
                         XCV_DOTSP(t6, t1, s0) XCV_SDOTSP(t3, t1, s1) XCV_SDOTSP(t6, t2, s1) XCV_SDOTSP(t3, t2, s2)
                             XCV_SDOTSP(t6, t5, s2) XCV_DWP_OUT(t6, t1, XCV_DWP_STORE1, 40)
                                 XCV_DWP_OUT(t3, t1, XCV_DWP_STORE, 41)
                     "25:\n\t"
                     "lw t0, 124(a0)\n\t"
                     "add a1, a1, t0\n\t"
                     "add a2, a2, t0\n\t"
                     "add a3, a3, t0\n\t"
                     "add gp, gp, t0\n\t"
                     "lw t0, 128(a0)\n\t"
                     "add a4, a4, t0\n\t"
                     "addi a7, a7, -2\n\t"
                     "li t0, 2\n\t"
                     "bge a7, t0, 20b\n\t"
                     "beqz a7, 9f\n"
                     /* one line at a time */
                     "1:\n\t"
                     "lw ra, 56(a0)\n\t"
                     "beqz ra, 3f\n\t"
                     "lw t0, 108(a0)\n\t"
                     "bnez t0, 6f\n\t"
                     /* stride 1: ra = where line 0's pointer ends (2 bytes a pair), two pairs
                        an iteration, an odd count entering at the second */
                     "andi t0, ra, 1\n\t"
                     "slli ra, ra, 1\n\t"
                     "add ra, ra, a1\n\t"
                     "bnez t0, 7f\n"
                     "2:\n\t" XCV_DWP_PAIR_S1(10, 11) "7:\n\t" XCV_DWP_PAIR_S1(15, 16) "bne a1, ra, 2b\n\t"
                     "j 3f\n"
                     /* stride 2: each output its own words (the second at 2 bytes on); 4 bytes a pair */
                     "6:\n\t"
                     "slli ra, ra, 2\n\t"
                     "add ra, ra, a1\n"
                     "8:\n\t" XCV_LW_PI(t0, a1, 2) XCV_LW_PI(t1, a2, 2) XCV_LW_PI(t2, a3, 2) XCV_DOTSP(t3, t0, s0) XCV_SDOTSP(t3, t1, s1) XCV_SDOTSP(t3, t2, s2) XCV_LW_PI(t0, a1, 2)
                             XCV_LW_PI(t1, a2, 2) XCV_LW_PI(t2, a3, 2) XCV_DOTSP(t4, t0, s0)
                                 XCV_SDOTSP(t4, t1, s1) XCV_SDOTSP(t4, t2, s2) XCV_DWP_OUTPUT(t3, 13)
                                     XCV_DWP_OUTPUT(t4, 14) "bne a1, ra, 8b\n"
                     "3:\n\t"
                     "lw t0, 60(a0)\n\t"
                     "beqz t0, 5f\n\t"
                     "lw t0, 0(a1)\n\tlw t1, 0(a2)\n\tlw t2, 0(a3)\n\t" XCV_DOTSP(t3, t0, s0)
                         XCV_SDOTSP(t3, t1, s1) XCV_SDOTSP(t3, t2, s2) XCV_DWP_OUTPUT(t3, 12) "5:\n\t"
                     "lw t0, 68(a0)\n\t"
                     "add a1, a1, t0\n\t"
                     "add a2, a2, t0\n\t"
                     "add a3, a3, t0\n\t"
                     "lw t0, 80(a0)\n\t"
                     "add a4, a4, t0\n\t"
                     "addi a7, a7, -1\n\t"
                     "bnez a7, 1b\n"
                     "9:\n\t"
                     "li a0, 1\n"
                     "97:\n\t"
                     "lw gp, 52(sp)\n\tlw tp, 56(sp)\n\t" XCV_EPILOGUE "98:\n\tli a0, 0\n\tj 97b\n" XCV_DWP_OUTPUT_FIX(t3, 10)
                         XCV_DWP_OUTPUT_FIX(t4, 11)
                         XCV_DWP_OUTPUT_FIX(t3, 12) XCV_DWP_OUTPUT_FIX(t3, 13) XCV_DWP_OUTPUT_FIX(t4, 14)
                             XCV_DWP_OUTPUT_FIX(t3, 15) XCV_DWP_OUTPUT_FIX(t4, 16) XCV_DWP_OUTS2_FIX(30, 31, 32, 33)
                                 XCV_DWP_OUTS2_FIX(34, 35, 36, 37) XCV_DWP_OUT_FIX(t6, XCV_DWP_STORE1, 40)
                                     XCV_DWP_OUT_FIX(t3, XCV_DWP_STORE, 41) XCV_DWP_EXACT
                             ".option pop\n\t");
}
#undef XCV_DWP_STORE
#undef XCV_DWP_STORE1
#undef XCV_DWP_PAIR_S1
#undef XCV_DWP_WORDS2
#undef XCV_DWP_OUTS2
#undef XCV_DWP_OUTS2_FIX
#undef XCV_DWP_OUT
#undef XCV_DWP_OUT_FIX
#undef XCV_DWP_EXACT
#undef XCV_DWP_OUTPUT
#undef XCV_DWP_OUTPUT_FIX

/* For 4 channels, per channel j and kernel line l the word (t0 t1 t2 0) of its taps into
   wl[j][l] (line l at t + l lstep, tap k at + k tstep: a word of 4 channels each, 4 x 4
   bytes transposed by cv.shuffle2.b), and the channels' filter sums. Apart from
   cv_xdw3x3, whose registers the compiler spilled here (DS-CNN's 3x3 layers took 2 K
   cycles more each). */
static __attribute__((noinline)) void
cv_xdw3_weights4(const int8_t *t, int32_t lstep, int32_t tstep, uint32_t wl[4][3], int32_t sum[4])
{
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int32_t l = 0; l < 3; l++, t += lstep)
    {
        const uint32_t w0 = cv_lw_any(t), w1 = cv_lw_any(t + tstep), w2 = cv_lw_any(t + 2 * tstep);
        const uint32_t u0 = cv_xshuffle2(w0, w1, 0x06020400u), u1 = cv_xshuffle2(w0, w1, 0x07030501u);
        const uint32_t u2 = cv_xshuffle2(w2, 0, 0x06020400u), u3 = cv_xshuffle2(w2, 0, 0x07030501u);
        const uint32_t a0 = cv_xshuffle2(u0, u2, 0x05040100u), a1 = cv_xshuffle2(u1, u3, 0x05040100u);
        const uint32_t a2 = cv_xshuffle2(u0, u2, 0x07060302u), a3 = cv_xshuffle2(u1, u3, 0x07060302u);
        wl[0][l] = a0;
        wl[1][l] = a1;
        wl[2][l] = a2;
        wl[3][l] = a3;
        s0 = cv_xsdot(s0, a0, 0x01010101u);
        s1 = cv_xsdot(s1, a1, 0x01010101u);
        s2 = cv_xsdot(s2, a2, 0x01010101u);
        s3 = cv_xsdot(s3, a3, 0x01010101u);
    }
    sum[0] = s0;
    sum[1] = s1;
    sum[2] = s2;
    sum[3] = s3;
}

/* cv_xdwp's arguments that are the same for every channel of a band: nf outputs a line,
   nlines lines, the lines pitch bytes apart in the buffer. */
CV_INLINE void cv_xdwp_band_args(cv_xdwp_args *p, const cv_dw3_geom *g, const cv_dw3_view *v, int32_t pitch,
                                 int32_t nf, int32_t nlines)
{
    p->pitch = pitch;
    p->pairs = nf >> 1;
    p->odd = nf & 1;
    p->nlines = nlines;
    p->radv = v->sS * pitch - 2 * v->sF * p->pairs;
    p->ostep = v->out_f;
    p->oadv = v->out_s - nf * v->out_f;
    p->stride2 = v->sF != 1;
    p->two = v->sF == 1 && v->sS == 1;
    p->oline = v->out_s;
    p->radv2 = 2 * pitch - 2 * p->pairs;
    p->oadv2 = 2 * v->out_s - nf * v->out_f;
    p->q.act_min = g->act_min;
    p->q.act_max = g->act_max;
    p->out_off = g->out_off;
}

/* cv_xdw3x3's common case in one pass: one chunk and one band, the channels a multiple
   of 4, each in cv_xdwp's mode (DS-CNN's and MobileNet's 3x3 layers under a ReLU). The
   padding written once and cv_xdwp's band arguments set once; per group of 4 channels
   the taps' words and filter sums, the band's lines inside the input transposed, one
   call of cv_xdwp a channel. Through the general loops (chunks, bands, lines, channels,
   whose variables the compiler kept on the stack) the small DS-CNN's 3x3 layers took
   about 5 K cycles more each. buf: CV_XDW_BUF bytes. */
typedef struct
{
    cv_dw3_view v;
    int32_t vertical, Lb; /* the lines' pitch: 4 Lb */
    uint32_t pad;
} cv_xdw3_band;

static __attribute__((noinline)) void cv_xdw3x3_band(const cv_dw3_geom *g,
                                                     const cv_xdw3_band *b,
                                                     const int8_t *input,
                                                     const int8_t *kernel,
                                                     const int32_t *bias,
                                                     const int32_t *mult,
                                                     const int32_t *shift,
                                                     int8_t *output,
                                                     uint32_t *buf_w)
{
    const cv_dw3_view *v = &b->v;
    const int32_t C = g->C, Lb = b->Lb, pitch = 4 * b->Lb;
    const int32_t nl = (v->OS - 1) * v->sS + 3;            /* the band's lines */
    const int32_t lo = v->pF, hi = v->F + v->pF < Lb ? v->F + v->pF : Lb; /* inside: [lo, hi) */
    const int32_t i0 = v->pS, i1 = v->S + v->pS < nl ? v->S + v->pS : nl;
    int8_t *buf = (int8_t *)buf_w;
    cv_xfill_words(buf_w, b->pad, nl * Lb);
    cv_xdwp_args p;
    cv_xdwp_band_args(&p, g, v, pitch, v->OF, v->OS);
    const int32_t lstep = (b->vertical ? 1 : 3) * C, tstep = (b->vertical ? 3 : 1) * C;
    const int8_t *src0 = input + (i0 - v->pS) * v->in_s + (lo - v->pF) * v->in_f;
    for (int32_t c = 0; c < C; c += 4)
    {
        uint32_t wl[4][3];
        int32_t sum[4];
        cv_xdw3_weights4(kernel + c, lstep, tstep, wl, sum);
        if (i1 > i0)
        {
            cv_xtranspose4(src0 + c, v->in_f, buf + i0 * pitch, Lb, lo, hi - lo, i1 - i0, v->in_s);
        }
        for (int32_t j = 0; j < 4; j++)
        {
            p.mult = mult[c + j];
            p.shift = shift[c + j];
            p.init = (int32_t)((uint32_t)(bias ? bias[c + j] : 0) + (uint32_t)sum[j] * (uint32_t)g->off);
            p.w[0] = wl[j][0];
            p.w[1] = wl[j][1];
            p.w[2] = wl[j][2];
            p.r0 = buf + j * Lb;
            p.out = output + c + j;
            (void)cv_xdwp(&p);
        }
    }
}

/* Whether every channel is in cv_xdwp's mode (its test: multiplier >= 0, shift in [-21,
   -2]) with |I| <= 2^30 (|bias| <= 2^30 - 2^19: the offset times a filter sum is below
   2^18 in magnitude). */
static int32_t cv_xdwp_takes_all(int32_t C, const int32_t *bias, const int32_t *mult, const int32_t *shift)
{
    for (int32_t c = 0; c < C; c++)
    {
        const uint32_t b = bias ? (uint32_t)bias[c] + ((1u << 30) - (1u << 19)) : 0u;
        if (mult[c] < 0 || shift[c] > -2 || shift[c] < -21 || b > 2u * ((1u << 30) - (1u << 19)))
        {
            return 0;
        }
    }
    return 1;
}

static int cv_xdw3x3(const cv_dw3_geom *g,
                     const int8_t *input,
                     const int8_t *kernel,
                     const int32_t *bias,
                     const int32_t *mult,
                     const int32_t *shift,
                     int8_t *output)
{
    const int32_t C = g->C;
    const int32_t ok_h = g->sx == 1 || g->sx == 2;
    const int32_t ok_v = g->sy == 1 || g->sy == 2;
    if ((!ok_h && !ok_v) || g->off < -127 || g->off > 128 || g->px < 0 || g->py < 0)
    {
        return 0;
    }
    const int32_t strips_h = g->OH * ((g->OW + 3) >> 2);
    const int32_t strips_v = g->OW * ((g->OH + 3) >> 2);
    const int32_t vertical = ok_v && (!ok_h || strips_v < strips_h);
    /* The fast axis (along the lines) and the slow one, in input and output elements. */
    const cv_dw3_view v = cv_dw3_view_of(g, vertical);
    const int32_t F = v.F, OF = v.OF, sF = v.sF, pF = v.pF, S = v.S, OS = v.OS, sS = v.sS, pS = v.pS;
    const int32_t in_f = v.in_f, in_s = v.in_s, out_f = v.out_f, out_s = v.out_s;

    /* Strips per chunk: 3 lines x 4 channels of Lb bytes in the buffer, 4 x strips
       accumulators per line in the accumulator buffer. */
    const int32_t nbuf = sF == 1 ? CV_XDW_BUF / 48 - 1 : (CV_XDW_BUF / 12 - 4) / 8;
    const int32_t nmax = nbuf < CV_XDW_ACC / 4 ? nbuf : CV_XDW_ACC / 4; /* a call's strips fit too */
    int32_t n = (OF + 3) >> 2;
    n = n < nmax ? n : nmax;
    const int32_t Lb = sF == 1 ? 4 * (n + 1) : 8 * n + 4;
    const int32_t pitch = 4 * Lb;
    const int32_t R = CV_XDW_BUF / pitch;
    const int32_t band = (R - 3) / sS + 1;
    const int32_t per_call = CV_XDW_ACC / (4 * n);
    const uint32_t pad = 0x01010101u * (uint8_t)(int8_t)-g->off;

    uint32_t buf_w[CV_XDW_BUF / 4];
    int8_t *buf = (int8_t *)buf_w;
    int32_t acc[CV_XDW_ACC];
    uint32_t wl[4][3]; /* (w0 w1 w2 0) per channel and kernel line */
    /* under a ReLU (either stride along the lines): the fused loop, cv_xdwp */
    const int32_t fused = cv_rq_relu(g->out_off, g->act_min) && g->out_off >= -256 && g->out_off <= 255 &&
                          g->act_max >= -512 && g->act_max <= 510;
    int32_t init[4];
    /* One chunk and one band (DS-CNN's 25 x 5 maps): the padding sits at the same bytes
       for every group of channels, and the groups write only the input's bytes; it is
       written for the first group alone (the band's 896 bytes and the padding lines,
       every group, took DS-CNN's 3x3 layers about 5 K cycles each). */
    const int32_t same_padding = OF <= 4 * n && OS <= band;
    if (fused && same_padding && (C & 3) == 0 && F > 0 && cv_xdwp_takes_all(C, bias, mult, shift))
    {
        const cv_xdw3_band b = {v, vertical, Lb, pad};
        cv_xdw3x3_band(g, &b, input, kernel, bias, mult, shift, output, buf_w);
        return 1;
    }

    for (int32_t c = 0; c < C; c += 4)
    {
        const int32_t nc = C - c < 4 ? C - c : 4;
        /* per channel and kernel line the word (t0 t1 t2 0) of its 3 taps; the filter
           sums for the initial values */
        int32_t sum[4] = {0, 0, 0, 0};
        const int32_t tstep = (vertical ? 3 : 1) * C;
        if (nc == 4)
        {
            cv_xdw3_weights4(kernel + c, (vertical ? 1 : 3) * C, tstep, wl, sum);
        }
        for (int32_t l = 0; l < 3 && nc < 4; l++)
        {
            const int8_t *t0 = kernel + (vertical ? l : 3 * l) * C + c;
            for (int32_t j = 0; j < nc; j++)
            {
                wl[j][l] = cv_xbytes(t0[j], t0[tstep + j], t0[2 * tstep + j], 0);
                sum[j] = cv_xsdot(sum[j], wl[j][l], 0x01010101u);
            }
        }
        for (int32_t j = 0; j < nc; j++)
        {
            init[j] = (int32_t)((uint32_t)(bias ? bias[c + j] : 0) + (uint32_t)sum[j] * (uint32_t)g->off);
        }
        for (int32_t f0 = 0; f0 < OF; f0 += 4 * n)
        {
            const int32_t nf = OF - f0 < 4 * n ? OF - f0 : 4 * n; /* outputs of this chunk */
            const int32_t ns = (nf + 3) >> 2;
            const int32_t fin0 = f0 * sF - pF; /* input position of byte 0 of a line */
            const int32_t lo = fin0 < 0 ? -fin0 : 0;
            const int32_t hi = F - fin0 < Lb ? F - fin0 : Lb; /* bytes [lo, hi) are inside */
            /* padding in every line of the band; the lines' inside is written below */
            const int32_t nlmax = ((OS < band ? OS : band) - 1) * sS + 3;
            const int32_t padded = same_padding && c > 0;
            if (!padded)
            {
                cv_xfill_words(buf_w, pad, nlmax * Lb);
            }
            for (int32_t o0 = 0; o0 < OS; o0 += band)
            {
                const int32_t ob = OS - o0 < band ? OS - o0 : band;
                const int32_t nl = (ob - 1) * sS + 3;
                const int32_t sin0 = o0 * sS - pS;
                /* Fill the band's lines: line i, channel j at buf + (4 i + j) Lb. */
                for (int32_t i = 0; i < nl; i++)
                {
                    const int32_t outside = sin0 + i < 0 || sin0 + i >= S;
                    if (outside && padded)
                    {
                        continue;
                    }
                    if (!outside && nc == 4 && hi > lo)
                    {
                        cv_xtranspose4(input + (sin0 + i) * in_s + (fin0 + lo) * in_f + c, in_f, buf + 4 * i * Lb, Lb,
                                       lo, hi - lo, 1, 0);
                        continue;
                    }
                    cv_xdw3_fill(buf + 4 * i * Lb, Lb, outside ? NULL : input + (sin0 + i) * in_s + (fin0 + lo) * in_f + c,
                                 in_f, nc, lo, hi, pad);
                }
                /* the fused loop's arguments that are the same for every channel of the band */
                cv_xdwp_args p;
                cv_xdwp_band_args(&p, g, &v, pitch, nf, ob);
                for (int32_t j = 0; j < nc; j++)
                {
                    if (fused && (uint32_t)init[j] + (1u << 30) <= (1u << 31))
                    {
                        p.mult = mult[c + j];
                        p.shift = shift[c + j];
                        p.init = init[j];
                        p.r0 = buf + j * Lb;
                        p.out = output + o0 * out_s + f0 * out_f + c + j;
                        p.w[0] = wl[j][0];
                        p.w[1] = wl[j][1];
                        p.w[2] = wl[j][2];
                        if (cv_xdwp(&p))
                        {
                            continue;
                        }
                    }
                    /* the taps' words shifted as cv_xdw3_s1 / _s2 take them (here, not per group
                       of channels: cv_xdwp takes most layers, and there DS-CNN's took 6 K cycles
                       a layer more) */
                    uint32_t wq[18];
                    uint32_t *q = wq;
                    for (int32_t l = 0; l < 3; l++)
                    {
                        q = cv_xdw3_line_words(q, wl[j][l], sF);
                    }
                    for (int32_t l0 = 0; l0 < ob; l0 += per_call)
                    {
                        const int32_t cnt = ob - l0 < per_call ? ob - l0 : per_call;
                        cv_xdw_args a;
                        a.r0 = buf + (4 * l0 * sS + j) * Lb;
                        a.r1 = a.r0 + pitch;
                        a.r2 = a.r1 + pitch;
                        a.adv = sS * pitch - 4 * sF * ns;
                        a.nstrips = ns;
                        a.nlines = cnt;
                        a.wq = wq;
                        a.out = acc;
                        if (sF == 1)
                        {
                            cv_xdw3_s1(&a);
                        }
                        else
                        {
                            cv_xdw3_s2(&a);
                        }
                        int8_t *dst = output + (o0 + l0) * out_s + f0 * out_f + c + j;
                        cv_xrq_lines_args qa;
                        if (cv_xrq_make(&qa.q, init[j], mult[c + j], shift[c + j], g->out_off, g->act_min,
                                        g->act_max))
                        {
                            qa.nlines = cnt;
                            qa.askip = 4 * ns - nf;
                            qa.dline = out_s;
                            cv_xrq_lines(acc, nf, dst, out_f, &qa);
                            continue;
                        }
                        for (int32_t l = 0; l < cnt; l++, dst += out_s)
                        {
                            cv_xq_run(acc + 4 * ns * l,
                                      1,
                                      init[j],
                                      nf,
                                      dst,
                                      out_f,
                                      mult[c + j],
                                      shift[c + j],
                                      g->out_off,
                                      g->act_min,
                                      g->act_max);
                        }
                    }
                }
            }
        }
    }
    return 1;
}
#endif

#if COREV_XCV
/*
 * CORE-V, small maps (cv_xdw3_cols): at most CV_XDWC_MAX_OUTPUTS outputs a channel, under
 * a ReLU, where cv_xdw3x3's set-up per channel (the input transposed into lines, a call
 * of the dot products and one of the output stage) costs more than the channel's
 * outputs (MobileNet's 6 x 6 and 3 x 3 layers). Here the dot products and the output
 * stage are one loop. The map is walked along its longer output axis (the "line"); per
 * group of 4 channels the whole input is copied into a band, one word (4 channels) a pixel,
 * padded with -input_offset, so that the 3 pixels of a window across the line (a
 * "triple") are consecutive words and the next triple along the line is cstep bytes on.
 * Per channel, cv_xdwc (assembly) walks the band's lines: a new triple
 * (3 word loads) gives the channel's word (x0 x1 x2 x) with 2 cv.shuffle2.b; an output
 * is 3 cv.sdotsp.b of the window's 3 such words against the channel's 3 words of
 * weights ((w0 w1 w2 0): the 4th byte adds nothing), then cv_xrq_lines' output stage
 * (one mul for a sum >= 0, act_min for a sum < 0 under the ReLU, the exact stage out
 * of line), cv.min with act_max and the store: 18 instructions an output with stride 1.
 * Stride 2 loads two new triples an output. Returns 0 (nothing done) for other layers:
 * no ReLU, larger maps, strides other than 1 or 2 along the line, requantization
 * outside cv_xrq_make's mode, a padded input larger than the band.
 */
#define CV_XDWC_WORDS 512 /* words of the band (2 KiB on the stack): the whole input, padded */
/* Outputs a channel up to which this pays: its loop takes longer an output than
   cv_xdw3x3's with cv_xdwp, so what it saves is cv_xdw3x3's set-up per channel, which
   weighs on small maps only (MobileNet on the PULP testbench, cycles with cv_xdw3x3 ->
   here: 6 x 6 x 128 237.9 K -> 179.7 K, 3 x 3 x 256 249.9 K -> 147.1 K, 6 x 6 x 64 from
   12 x 12 with stride 2 149.3 K -> 118.0 K; with every layer through a first version of
   it, 12 x 12 x 64 took 288.8 K -> 292.7 K and 48 x 48 x 8 473.0 K -> 521.1 K; on the
   kernel fixture with cv_xdwp, 6 x 6 x 128 under a ReLU 231.2 K through cv_xdw3x3,
   202.2 K here). */
#define CV_XDWC_MAX_OUTPUTS 64

/* One channel: its lines in the band, weights and output stage (offsets: the assembly's). */
typedef struct
{
    const uint32_t *q; /* 0: the first window's first triple */
    int32_t cstep;     /* 4: bytes from a triple to the next along the line */
    int32_t n;         /* 8: outputs a line, >= 1 */
    int32_t nlines;    /* 12: lines, >= 1 */
    int32_t qadv;      /* 16: added to q after a line */
    int8_t *out;       /* 20: the first output */
    int32_t ostep;     /* 24: bytes from an output to the next along the line */
    int32_t oadv;      /* 28: added to out after a line */
    uint32_t sel1;     /* 32: (x0 x1 . .) of the channel from triple words 0 and 1 */
    uint32_t sel2;     /* 36: (. . x2 .) from word 2 */
    uint32_t w[3];     /* 40: the weights' words along the line's 3 positions */
    int32_t init;      /* 52: bias + input offset x filter sum */
    uint32_t mh;       /* 56: cv_xrq_args' words */
    uint32_t f;        /* 60 */
    uint32_t xlim;     /* 64 */
    int32_t act_min;   /* 68: what a sum < 0 stores (the ReLU) */
    int32_t act_max;   /* 72 */
    uint32_t m2;       /* 76: the exact stage's */
    uint32_t offsh;    /* 80 */
    uint32_t sh;       /* 84 */
    int32_t stride2;   /* 88: 0 for stride 1 along the line, else stride 2 */
} cv_xdwc_args;
_Static_assert(offsetof(cv_xdwc_args, stride2) == 88 && sizeof(cv_xdwc_args) == 92, "cv_xdwc's offsets");

/* Registers of cv_xdwc: args a0, q a1, cstep a2, out a3, ostep a4, sel1 a5, sel2 a6, act_max a7;
   weights s0-s2, mh s3, f s4, xlim s5, init s6, n s7, lines s8, qadv s9, oadv s10,
   act_min s11; the window's words t0-t3, temporaries t4-t6, the count of a line's
   outputs ra. */
#define XCV_DWC_LOAD(R, MID) /* the channel's word of the triple at a1 into R, a1 += cstep; MID fills the \
                                 load's delay */                                                            \
    "lw t5, 4(a1)\n\tlw t6, 8(a1)\n\t" XCV_LW_PR(R, a1, a2) MID XCV_SHUFFLE2(R, t5, a5) XCV_SHUFFLE2(R, t6, a6)
#define XCV_DWC_STORE(R) XCV_SB_PR(R, a3, a4)
#define XCV_DWC_OUTPUT(A, B, C, L) /* the output of the window's words A B C, t4 = init */                   \
    XCV_SDOTSP(t4, A, s0) XCV_SDOTSP(t4, B, s1) XCV_SDOTSP(t4, C, s2)                                         \
        XCV_RQ_SPLIT_IN(t4, s3, s4, s5, t5, t6, XCV_MIN(t5, t5, a7), XCV_DWC_STORE, L)
/* its out-of-line parts: a sum < 0 stores act_min (a sum >= xlim goes on); the exact stage */
#define XCV_DWC_OUTPUT_FIX(L)                                                                                  \
    #L "0:\n\tbgez t4, " #L "3f\n\t" XCV_DWC_STORE(s11) "j " #L "4b\n"                                        \
    #L "3:\n\t" XCV_RQ_EXACT(t4, t5, t6, "76(a0)", "80(a0)", "84(a0)") XCV_MAX(t4, t4, s11) XCV_MIN(t5, t4, a7)  \
    "j " #L "2b\n"
#define XCV_DWC_PROLOGUE                                                                                       \
    ".option push\n\t"                                                                                          \
    ".option norvc\n\t" XCV_PROLOGUE "sw a1, 52(sp)\n"                                                         \
    "0:\n\tlw a1, 0(a0)\n\tlw a2, 4(a0)\n\tlw s7, 8(a0)\n\tlw s8, 12(a0)\n\t"                                  \
    "lw s9, 16(a0)\n\tlw a3, 20(a0)\n\tlw a4, 24(a0)\n\tlw s10, 28(a0)\n\tlw a5, 32(a0)\n\tlw a6, 36(a0)\n\t"  \
    "lw s0, 40(a0)\n\tlw s1, 44(a0)\n\tlw s2, 48(a0)\n\tlw s6, 52(a0)\n\tlw s3, 56(a0)\n\tlw s4, 60(a0)\n\t"   \
    "lw s5, 64(a0)\n\tlw s11, 68(a0)\n\tlw a7, 72(a0)\n\t"
#define XCV_DWC_NEXT_LINE(L) /* to the next line, which starts at label L */                            \
    "add a1, a1, s9\n\t"                                                                                        \
    "add a3, a3, s10\n\t"                                                                                       \
    "addi s8, s8, -1\n\t"                                                                                       \
    "bnez s8, " #L "b\n\t"

/* Stride 1: the output of the window A B (and the triple after them, loaded into A once
   its product is taken: B A is then the next window's first two), t4 = init; 18
   instructions. */
#define XCV_DWC_OUTPUT_S1(A, B, L)                                                                             \
    "mv t4, s6\n\t" XCV_SDOTSP(t4, A, s0) "lw t5, 4(a1)\n\tlw t6, 8(a1)\n\t" XCV_LW_PR(A, a1, a2)                    \
        XCV_SDOTSP(t4, B, s1) XCV_SHUFFLE2(A, t5, a5) XCV_SHUFFLE2(A, t6, a6) XCV_SDOTSP(t4, A, s2)               \
            XCV_RQ_SPLIT_IN(t4, s3, s4, s5, t5, t6, XCV_MIN(t5, t5, a7), XCV_DWC_STORE, L)
/* Stride 1 along the lines (labels 1 to 4) loads one new triple an output, two outputs an
   iteration (t0 t1, then t1 t0: no moves; with a move of each triple and the count an
   output, MobileNet's 6 x 6 x 128 layers took about 3 cycles an output more), then an
   odd last one; stride 2 (labels 5, 6) two (the window t0 t1 t2, t2 the next one's
   first). The nc (1 to 4) channels of a group in one call, args[0 .. nc - 1] (a call a
   channel, with its saves and restores, took MobileNet's small maps 19 K cycles more). */
CV_XCV_NAKED void cv_xdwc(const cv_xdwc_args *args, int32_t nc)
{
    (void)args;
    (void)nc;
    __asm__ volatile(XCV_DWC_PROLOGUE "lw t3, 88(a0)\n\t"
                     "bnez t3, 5f\n"
                     "1:\n\t" XCV_DWC_LOAD(t0, "") XCV_DWC_LOAD(t1, "") "srli ra, s7, 1\n\t"
                     "beqz ra, 3f\n"
                     "2:\n\t" XCV_DWC_OUTPUT_S1(t0, t1, 7) XCV_DWC_OUTPUT_S1(t1, t0, 17) "addi ra, ra, -1\n\t"
                     "bnez ra, 2b\n"
                     "3:\n\t"
                     "andi ra, s7, 1\n\t"
                     "beqz ra, 4f\n\t" XCV_DWC_OUTPUT_S1(t0, t1, 27) "4:\n\t" XCV_DWC_NEXT_LINE(1) "j 9f\n"
                     "5:\n\t" XCV_DWC_LOAD(t2, "") "mv ra, s7\n"
                     "6:\n\t" XCV_DWC_LOAD(t1, "mv t0, t2\n\t") XCV_DWC_LOAD(t2, "mv t4, s6\n\t")
                         XCV_DWC_OUTPUT(t0, t1, t2, 8) "addi ra, ra, -1\n\t"
                     "bnez ra, 6b\n\t" XCV_DWC_NEXT_LINE(5) "9:\n\t"
                     "lw t0, 52(sp)\n\t"
                     "addi t0, t0, -1\n\t"
                     "sw t0, 52(sp)\n\t"
                     "addi a0, a0, 92\n\t"
                     "bnez t0, 0b\n\t" XCV_EPILOGUE XCV_DWC_OUTPUT_FIX(7)
                         XCV_DWC_OUTPUT_FIX(17) XCV_DWC_OUTPUT_FIX(27) XCV_DWC_OUTPUT_FIX(8) ".option pop\n\t");
}
#undef XCV_DWC_LOAD
#undef XCV_DWC_STORE
#undef XCV_DWC_OUTPUT
#undef XCV_DWC_OUTPUT_S1
#undef XCV_DWC_OUTPUT_FIX
#undef XCV_DWC_PROLOGUE
#undef XCV_DWC_NEXT_LINE

/* 1 if every channel's requantization is in cv_xrq_make's mode (its checks: cv_xq_make's
   mode 1 with pre = 1 is a multiplier >= 0 and a shift in [-31, -2]; the offset's bound of
   cv_rq_h_with_offset holds for |out_off| <= 255 where sh = -shift - 1 <= 22, and is
   tested otherwise). A few instructions a channel: MobileNet's small-map layers check
   1,088 channels. */
static int32_t cv_xdwc_rq_ok(const cv_dw3_geom *g, const int32_t *mult, const int32_t *shift)
{
    const int32_t small_off = g->out_off >= -255 && g->out_off <= 255;
    for (int32_t c = 0; c < g->C; c++)
    {
        const int32_t sh = -shift[c] - 1;
        int32_t h;
        if (mult[c] < 0 || (uint32_t)(sh - 1) > 29u ||
            ((sh > 22 || !small_off) && !cv_rq_h_with_offset(1, sh, g->out_off, &h)))
        {
            return 0;
        }
    }
    return 1;
}

static __attribute__((noinline)) int cv_xdw3_cols(const cv_dw3_geom *g,
                                                  const int8_t *input,
                                                  const int8_t *kernel,
                                                  const int32_t *bias,
                                                  const int32_t *mult,
                                                  const int32_t *shift,
                                                  int8_t *output)
{
    const int32_t C = g->C;
    const int32_t ok_h = (g->sx == 1 || g->sx == 2) && g->px <= 1 && (g->OW - 1) * g->sx - g->px + 2 <= g->W;
    const int32_t ok_v = (g->sy == 1 || g->sy == 2) && g->py <= 1 && (g->OH - 1) * g->sy - g->py + 2 <= g->H;
    if ((!ok_h && !ok_v) || g->OH * g->OW > CV_XDWC_MAX_OUTPUTS || !cv_rq_relu(g->out_off, g->act_min) ||
        g->off < -127 || g->off > 128 || g->px < 0 || g->py < 0 || !cv_xdwc_rq_ok(g, mult, shift))
    {
        return 0;
    }
    const int32_t vertical = ok_v && (!ok_h || g->OH > g->OW);
    /* The line's axis F and the other one S, in input and output elements; the kernel's
       taps along them tF and tS weights apart. */
    const cv_dw3_view v = cv_dw3_view_of(g, vertical);
    const int32_t F = v.F, OF = v.OF, sF = v.sF, pF = v.pF, S = v.S, OS = v.OS, sS = v.sS, pS = v.pS;
    const int32_t in_f = v.in_f, in_s = v.in_s, out_f = v.out_f, out_s = v.out_s;
    const int32_t tF = vertical ? 3 : 1, tS = vertical ? 1 : 3;
    const int32_t nl = (OS - 1) * sS + 3; /* positions across the lines: words a triple column */
    if ((F + 2) * nl > CV_XDWC_WORDS)
    {
        return 0;
    }
    const uint32_t pad = 0x01010101u * (uint8_t)(int8_t)-g->off;
    uint32_t buf[CV_XDWC_WORDS];
    /* buf[f nl + i]: the input at position f - 1 along the lines, i - pS across */
    cv_xdwc_args a[4];
    for (int32_t j = 0; j < 4; j++)
    {
        a[j].q = buf + (1 - pF) * nl;
        a[j].cstep = 4 * nl;
        a[j].n = OF;
        a[j].nlines = OS;
        a[j].qadv = 4 * sS - (sF == 1 ? OF + 2 : 2 * OF + 1) * 4 * nl; /* back by the triples a line loads */
        a[j].ostep = out_f;
        a[j].oadv = out_s - OF * out_f;
        a[j].sel1 = ((uint32_t)j | (uint32_t)(4 + j) << 8) * 0x00010001u; /* (x0 x1 x0 x1) */
        a[j].sel2 = 0x0100u | (uint32_t)(4 + j) * 0x01010000u;            /* (u0 u1 x2 x2) */
        a[j].act_min = g->act_min;
        a[j].act_max = g->act_max;
        a[j].stride2 = sF != 1;
    }

    for (int32_t c = 0; c < C; c += 4)
    {
        const int32_t nc = C - c < 4 ? C - c : 4;
        for (int32_t i = 0; i < nl; i++)
        {
            uint32_t *d = buf + i;
            const int32_t is = i - pS;
            d[0] = pad;
            d[(F + 1) * nl] = pad;
            d += nl;
            const int32_t inside = is >= 0 && is < S;
            const int8_t *src = input + (inside ? is : 0) * in_s + c;
            if (inside && nc == 4)
            {
                /* (in C, MobileNet's small-map layers took 70 K cycles more in all) */
                cv_xgather_words(d, src, in_f, F, 4 * nl);
                continue;
            }
            for (int32_t f = 0; f < F; f++, src += in_f, d += nl)
            {
                *d = !inside ? pad : cv_xbytes(src[0], nc > 1 ? src[1] : 0, nc > 2 ? src[2] : 0, 0);
            }
        }
        for (int32_t j = 0; j < nc; j++)
        {
            const int8_t *t = kernel + c + j;
            int32_t sum = 0;
            for (int32_t k = 0; k < 3; k++)
            {
                a[j].w[k] = cv_xbytes(t[k * tF * C], t[(k * tF + tS) * C], t[(k * tF + 2 * tS) * C], 0);
                sum = cv_xsdot(sum, a[j].w[k], 0x01010101u);
            }
            a[j].init = (int32_t)((uint32_t)(bias ? bias[c + j] : 0) + (uint32_t)sum * (uint32_t)g->off);
            /* cv_xrq_make's words for a mode it takes (cv_xdwc_rq_ok): pre = 1, so sh =
               -shift - 1 and out_off << sh minus 2^(sh - 1) from h; the sums <= 0 need no
               fneg, xneg under the ReLU */
            uint32_t fast[3];
            cv_rq_fast(fast, mult[c + j], -shift[c + j], g->out_off);
            a[j].mh = fast[0];
            a[j].f = fast[1];
            a[j].xlim = fast[2];
            a[j].m2 = 2u * (uint32_t)mult[c + j];
            a[j].sh = (uint32_t)(-shift[c + j] - 1);
            a[j].offsh = (uint32_t)g->out_off << a[j].sh;
            a[j].out = output + c + j;
        }
        cv_xdwc(a, nc);
    }
    return 1;
}
#endif

arm_cmsis_nn_status arm_depthwise_conv_3x3_s8(const cmsis_nn_context *ctx,
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
    cv_dw3_geom g;
    g.W = input_dims->w;
    g.H = input_dims->h;
    g.C = input_dims->c;
    g.px = dw_conv_params->padding.w;
    g.py = dw_conv_params->padding.h;
    g.sx = dw_conv_params->stride.w;
    g.sy = dw_conv_params->stride.h;
    g.OW = output_dims->w;
    g.OH = output_dims->h;
    g.off = dw_conv_params->input_offset;
    g.out_off = dw_conv_params->output_offset;
    g.act_min = dw_conv_params->activation.min;
    g.act_max = dw_conv_params->activation.max;
    const int32_t *mult = quant_params->multiplier;
    const int32_t *shift = quant_params->shift;
    const int32_t C = g.C;

    if (C != output_dims->c)
    {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    if (g.px > 1 || filter_dims->w != 3 || filter_dims->h != 3)
    {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
#if COREV_XCV
    if (cv_xdw3_cols(&g, input, kernel, bias, mult, shift, output))
    {
        return ARM_CMSIS_NN_SUCCESS;
    }
    if (cv_xdw3x3(&g, input, kernel, bias, mult, shift, output))
    {
        return ARM_CMSIS_NN_SUCCESS;
    }
#endif
    /* Lines along the longer output axis (with stride 1 or 2 along it); padding written
       as -input_offset contributes nothing only if that is an int8 value: always, for
       the offsets of int8 zero points. */
    const int32_t ok_h = g.sx == 1 || g.sx == 2, ok_v = g.sy == 1 || g.sy == 2;
    const int32_t vertical = ok_v && (!ok_h || g.OH > g.OW);
    const cv_dw3_view view = cv_dw3_view_of(&g, vertical);
#if COREV_XCV
    /* cv_xdw3x3 took every layer the lines take: without them here (3.8 KB of text) */
    const int32_t lines_ok = 0;
#else
    const int32_t lines_ok = (ok_h || ok_v) && g.px >= 0 && g.py >= 0 && g.py <= 1 && g.off >= -127 &&
                             g.off <= 128;
#endif

    for (int32_t c = 0; c < C; c += 4)
    {
        const int32_t n = C - c < 4 ? C - c : 4;
        if (lines_ok)
        {
            cv_dw3_args args[4];
            if (cv_dw3_prep(&g, vertical, kernel, bias, mult, shift, c, n, args))
            {
                cv_dw3_lines(&g, &view, input, args, c, n, output);
                continue;
            }
        }
        /* other requantization parameters, strides or offsets: one pixel at a time */
        int8_t *out = output + c;
        for (int32_t oy = 0; oy < g.OH; oy++)
        {
            const int32_t in_h = oy * g.sy - g.py;
            for (int32_t ox = 0; ox < g.OW; ox++, out += C)
            {
                int32_t acc[4];
                cv_dw3x3_single(input, kernel, bias, c, n, C, g.W, g.H, ox * g.sx - g.px, in_h, g.off, acc);
                for (int32_t j = 0; j < n; j++)
                {
                    out[j] = cv_rq_out_any(acc[j], mult[c + j], shift[c + j], g.out_off, g.act_min, g.act_max);
                }
            }
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
}
