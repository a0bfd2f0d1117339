/*
 * The CORE-V extension kernels of the CMSIS-NN replacements in this directory (CV32E40P
 * with COREV_PULP: isa=rv32imc_xcv / rv32imfc_xcv, which define COREV_XCV=1). Included by
 * corev_nn.h when COREV_XCV is set; nothing here is compiled otherwise.
 *
 * Instructions used (cv32e40p user manual, "CORE-V Instruction Set Custom Extensions"):
 *   cv.sdotsp.b rd, rs1, rs2   rd += sum of the 4 signed byte products (one cycle)
 *   cv.dotsp.b  rd, rs1, rs2   rd  = the same sum (no accumulator to initialise)
 *   cv.lw / cv.lb rd, (rs1), imm   load, then rs1 += imm (post-increment)
 *   cv.sw rs2, (rs1), imm          store, then rs1 += imm
 *   cv.setup L, rs1, end       hardware loop L: the instructions up to `end` run rs1 times
 *                              with no branch (loop 0 inside loop 1)
 *   cv.max / cv.min / cv.mac
 * Our compilers (Debian's GCC 12, CORE-V GCC 12) know no xcv mnemonics: the instructions
 * are written with the assembler's `.insn` directive (R, I and S formats, the manual's
 * opcodes and function fields) and `.word` for the hardware loop set-up, whose end offset
 * is a label difference. The kernels that use hardware loops are whole functions in
 * assembly (`naked`): their bodies use 28 registers and must hold no compressed
 * instruction (.option norvc), no branch, and start at 4-byte aligned addresses.
 *
 * cv.sdotsp.b multiplies signed by signed bytes: the int8 inputs and weights as they are.
 * The input offset stays outside the loops (offset x filter sum per output channel,
 * corev_nn.h), and padding is -input_offset, as in the RV32IMC kernels.
 */
#ifndef COREV_XCV_H
#define COREV_XCV_H

/* ---------------------------------------------------------------------------------
 * Encodings (strings for asm statements)
 * ------------------------------------------------------------------------------- */
#define CV_S_(x) #x
#define CV_S(x) CV_S_(x)
/* cv.sdotsp.b / cv.dotsp.b / cv.sdotusp.b (funct7 1010100 / 1001000 / 1010000) */
#define XCV_SDOTSP(rd, a, b) ".insn r 0x7b, 1, 0x54, " #rd ", " #a ", " #b "\n\t"
#define XCV_DOTSP(rd, a, b) ".insn r 0x7b, 1, 0x48, " #rd ", " #a ", " #b "\n\t"
/* cv.lw rd, (rs1), imm / cv.lb rd, (rs1), imm (opcode 0001011) */
#define XCV_LW_PI(rd, rs1, imm) ".insn i 0x0b, 2, " #rd ", " #rs1 ", " #imm "\n\t"
#define XCV_LB_PI(rd, rs1, imm) ".insn i 0x0b, 0, " #rd ", " #rs1 ", " #imm "\n\t"
/* cv.lw rd, (rs1), rs2: post-increment by a register */
#define XCV_LW_PR(rd, rs1, rs2) ".insn r 0x2b, 3, 0x02, " #rd ", " #rs1 ", " #rs2 "\n\t"
/* cv.sw rs2, (rs1), imm (opcode 0101011, funct3 010) */
#define XCV_SW_PI(rs2, rs1, imm) ".insn s 0x2b, 2, " #rs2 ", " #imm "(" #rs1 ")\n\t"
#define XCV_SB_PI(rs2, rs1, imm) ".insn s 0x2b, 0, " #rs2 ", " #imm "(" #rs1 ")\n\t"
/* cv.subNr rd, rs1, rs2: rd = (rd - rs1) >> rs2 / cv.addRNr rd, rs1, rs2:
   rd = (rd + rs1 + 2^(rs2 - 1)) >> rs2 (arithmetic; funct7 1000100 / 1000010) */
#define XCV_SUBNR(rd, a, b) ".insn r 0x2b, 3, 0x44, " #rd ", " #a ", " #b "\n\t"
#define XCV_ADDRNR(rd, a, b) ".insn r 0x2b, 3, 0x42, " #rd ", " #a ", " #b "\n\t"
/* cv.subN rd, rs1, rs2, 1: rd = (rs1 - rs2) >> 1 (arithmetic; opcode 1011011, funct3 011,
   the shift in funct7) */
#define XCV_SUBN1(rd, a, b) ".insn r 0x5b, 3, 0x01, " #rd ", " #a ", " #b "\n\t"
/* cv.max / cv.min (funct7 0101101 / 0101011) */
#define XCV_MAX(rd, a, b) ".insn r 0x2b, 3, 0x2d, " #rd ", " #a ", " #b "\n\t"
#define XCV_MIN(rd, a, b) ".insn r 0x2b, 3, 0x2b, " #rd ", " #a ", " #b "\n\t"
/* cv.sb / cv.sw rs2, (rs1), rs3: store, then rs1 += rs3 (funct7 0010000 / 0010010, rs3 in
   the rd field) */
#define XCV_SB_PR(rs2, rs1, rs3) ".insn r 0x2b, 3, 0x10, " #rs3 ", " #rs1 ", " #rs2 "\n\t"
#define XCV_SW_PR(rs2, rs1, rs3) ".insn r 0x2b, 3, 0x12, " #rs3 ", " #rs1 ", " #rs2 "\n\t"
/* cv.setup L, x<reg>, end, written at label `start` (the set-up instruction itself):
   lpstart = start + 4, lpend = start + 4 * uimm, lpcount = x<reg>. */
#define XCV_SETUP(L, reg, start, end)                                                                                  \
    ".word 0x2b | (4 << 12) | ((14 + " #L ") << 7) | (" #reg " << 15) | (((" #end " - " #start ") >> 2) << 20)\n\t"

#define CV_XCV_NAKED static __attribute__((naked, noinline, noclone, aligned(4))) CV_UNUSED
/* Kernels several files call, defined in those that ask for them (CV_WANT_GEMM: the
   matrix kernels, CV_WANT_RQ_LINES: cv_xrq_lines) and kept once in the image (weak, as
   corev_nn.h's CV_SHARED). */
#define CV_XCV_SHARED_NAKED CV_SHARED __attribute__((naked, noinline, noclone, aligned(4)))

/* Register save area of the naked functions: ra and s0-s11 (52 bytes), then 12 bytes of
   locals, 64 in all (16-byte aligned stack). */
#define XCV_PROLOGUE                                                                                                   \
    "addi sp, sp, -64\n\t"                                                                                             \
    "sw ra, 0(sp)\n\tsw s0, 4(sp)\n\tsw s1, 8(sp)\n\tsw s2, 12(sp)\n\tsw s3, 16(sp)\n\tsw s4, 20(sp)\n\t"             \
    "sw s5, 24(sp)\n\tsw s6, 28(sp)\n\tsw s7, 32(sp)\n\tsw s8, 36(sp)\n\tsw s9, 40(sp)\n\tsw s10, 44(sp)\n\t"          \
    "sw s11, 48(sp)\n\t"
#define XCV_EPILOGUE                                                                                                   \
    "lw ra, 0(sp)\n\tlw s0, 4(sp)\n\tlw s1, 8(sp)\n\tlw s2, 12(sp)\n\tlw s3, 16(sp)\n\tlw s4, 20(sp)\n\t"             \
    "lw s5, 24(sp)\n\tlw s6, 28(sp)\n\tlw s7, 32(sp)\n\tlw s8, 36(sp)\n\tlw s9, 40(sp)\n\tlw s10, 44(sp)\n\t"          \
    "lw s11, 48(sp)\n\t"                                                                                               \
    "addi sp, sp, 64\n\t"                                                                                              \
    "ret\n\t"

/* ---------------------------------------------------------------------------------
 * Small helpers in C (GCC schedules them)
 * ------------------------------------------------------------------------------- */
CV_INLINE int32_t cv_xmax(int32_t a, int32_t b)
{
    int32_t r;
    __asm__(".insn r 0x2b, 3, 0x2d, %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

CV_INLINE int32_t cv_xmin(int32_t a, int32_t b)
{
    int32_t r;
    __asm__(".insn r 0x2b, 3, 0x2b, %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/* acc + the 4 byte products of a and b */
CV_INLINE int32_t cv_xsdot(int32_t acc, uint32_t a, uint32_t b)
{
    __asm__(".insn r 0x7b, 1, 0x54, %0, %1, %2" : "+r"(acc) : "r"(a), "r"(b));
    return acc;
}

/* acc + a * b (cv.mac) */
CV_INLINE int32_t cv_xmac(int32_t acc, int32_t a, int32_t b)
{
    __asm__(".insn r 0x2b, 3, 0x48, %0, %1, %2" : "+r"(acc) : "r"(a), "r"(b));
    return acc;
}

/* ---------------------------------------------------------------------------------
 * Requantization with cv.addRNr (rD = (rD + rs1 + 2^(rs2 - 1)) >> rs2, arithmetic),
 * arm_nn_requantize bit for bit:
 * - t = (x * mult + 2^30) >> 31 as in corev_nn.h (mul, mulhsu, the low word's bit 31);
 * - shift >= 0: x = acc << shift and the result is t;
 * - shift = -e < 0 (e <= 31): arm_nn_divide_by_power_of_two(t, e) rounds half away from
 *   zero: floor((t' + 2^(e-1)) / 2^e) with t' = t - (t < 0). t > INT32_MIN (the product
 *   is larger than -2^62), so t' does not wrap; t <= 2^31 - 2, so for e = 1
 *   cv.addRNr(t', 1) does not wrap; for e >= 2 it is cv.addRNr(t' >> 1, e - 1) (the same
 *   floor, and no sum near 2^31). 4 instructions instead of 6.
 * Negative multipliers (not produced by the quantizers) and shifts below -31 take
 * arm_nn_requantize itself.
 * ------------------------------------------------------------------------------- */
typedef struct
{
    uint32_t m2;  /* 2 * mult */
    int32_t ls;   /* left shift (mode 0) */
    int32_t pre;  /* shift before the rounding (mode 1): 0 or 1 */
    int32_t sh;   /* the rounding shift (mode 1) */
    int32_t mode; /* 0: shift >= 0, 1: shift in [-31, -1], 2: arm_nn_requantize */
} cv_xq;

CV_INLINE cv_xq cv_xq_make(int32_t mult, int32_t shift)
{
    cv_xq q;
    q.m2 = 2u * (uint32_t)mult;
    q.ls = shift > 0 ? shift : 0;
    q.pre = shift < -1 ? 1 : 0;
    q.sh = -shift - q.pre;
    q.mode = mult < 0 || shift < -31 ? 2 : shift < 0 ? 1 : 0;
    return q;
}

/* (x * mult + 2^30) >> 31, mult = m2 / 2 >= 0 */
CV_INLINE int32_t cv_xq_high(int32_t x, uint32_t m2)
{
    const int64_t p = (int64_t)x * (int64_t)m2;
    return (int32_t)((uint32_t)((uint64_t)p >> 32) + ((uint32_t)p >> 31));
}

CV_INLINE int32_t cv_xq_round(int32_t t, int32_t pre, int32_t sh)
{
    int32_t v = (t + (t >> 31)) >> pre;
    __asm__(".insn r 0x2b, 3, 0x42, %0, zero, %1" : "+r"(v) : "r"(sh));
    return v;
}

CV_INLINE int8_t cv_xclamp(int32_t v, int32_t act_min, int32_t act_max)
{
    return (int8_t)cv_xmin(cv_xmax(v, act_min), act_max);
}

/* Mode 0 / mode 1 / any mode, then + out_off, clamped. */
CV_INLINE int8_t cv_xq_out0(int32_t acc, const cv_xq q, int32_t out_off, int32_t act_min, int32_t act_max)
{
    return cv_xclamp(cv_xq_high((int32_t)((uint32_t)acc << q.ls), q.m2) + out_off, act_min, act_max);
}

CV_INLINE int8_t cv_xq_out1(int32_t acc, const cv_xq q, int32_t out_off, int32_t act_min, int32_t act_max)
{
    return cv_xclamp(cv_xq_round(cv_xq_high(acc, q.m2), q.pre, q.sh) + out_off, act_min, act_max);
}

/*
 * n outputs of one channel: acc[i * astep] + add, requantized, to dst[i * dstep].
 * The channel's mode is decided once.
 */
static CV_UNUSED void cv_xq_run(const int32_t *acc,
                                int32_t astep,
                                int32_t add,
                                int32_t n,
                                int8_t *dst,
                                int32_t dstep,
                                int32_t mult,
                                int32_t shift,
                                int32_t out_off,
                                int32_t act_min,
                                int32_t act_max)
{
    const cv_xq q = cv_xq_make(mult, shift);
    if (q.mode == 1)
    {
        for (; n > 0; n--, acc += astep, dst += dstep)
        {
            *dst = cv_xq_out1((int32_t)((uint32_t)*acc + (uint32_t)add), q, out_off, act_min, act_max);
        }
    }
    else if (q.mode == 0)
    {
        for (; n > 0; n--, acc += astep, dst += dstep)
        {
            *dst = cv_xq_out0((int32_t)((uint32_t)*acc + (uint32_t)add), q, out_off, act_min, act_max);
        }
    }
    else
    {
        for (; n > 0; n--, acc += astep, dst += dstep)
        {
            *dst = cv_rq_out_neg((int32_t)((uint32_t)*acc + (uint32_t)add), mult, shift, out_off, act_min, act_max);
        }
    }
}

#if defined(CV_WANT_GEMM)
/*
 * The outputs of a block: acc[4 * j + r] is row r (< rows) of channel j (< nch), stored
 * at dst[r * dst_stride + j].
 */
static __attribute__((noinline)) CV_UNUSED void cv_xstore(const int32_t *acc,
                                                          int32_t nch,
                                                          int32_t rows,
                                                          int8_t *dst,
                                                          const int32_t *mult,
                                                          const int32_t *shift,
                                                          const cv_out_params *o)
{
    const int32_t stride = o->dst_stride;
    const int32_t out_off = o->out_off;
    const int32_t act_min = o->act_min;
    const int32_t act_max = o->act_max;
    for (int32_t j = 0; j < nch; j++, acc += 4, dst++)
    {
        const cv_xq q = cv_xq_make(mult[j], shift[j]);
        int8_t *d = dst;
        if (rows == 4 && q.mode == 1)
        {
            const int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
            d[0] = cv_xq_out1(a0, q, out_off, act_min, act_max);
            d[stride] = cv_xq_out1(a1, q, out_off, act_min, act_max);
            d[2 * stride] = cv_xq_out1(a2, q, out_off, act_min, act_max);
            d[3 * stride] = cv_xq_out1(a3, q, out_off, act_min, act_max);
            continue;
        }
        cv_xq_run(acc, 1, 0, rows, d, stride, mult[j], shift[j], out_off, act_min, act_max);
    }
}

#endif

/*
 * init[n] = bias[n] + off * sum_k w[n * K + k] for n < count (cv_filter_init; bias NULL:
 * 0), in assembly: per row a hardware loop of two words (post-increment loads, a sum of
 * 4 bytes a cv.sdotsp.b with 0x01010101, two sums so that no load's result is used at
 * once: 4 cycles for 8 bytes), then a word and bytes for K's rest. In C (the loop's
 * pointer steps and a stall after each load) MobileNet's filter sums took about 1.4
 * cycles a byte, 274 K cycles in all. Also the transposed weight rows of
 * arm_depthwise_conv_s8.c. Caller-saved registers only.
 */
CV_XCV_NAKED void cv_xfilter_init(int32_t *init, const int8_t *w, int32_t count, int32_t K, const int32_t *bias, int32_t off)
{
    (void)init;
    (void)w;
    (void)count;
    (void)K;
    (void)bias;
    (void)off;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "blez a2, 9f\n\t"
                     "li a6, 0x01010101\n\t"
                     "srli a7, a3, 3\n"
                     "1:\n\t"
                     "li t3, 0\n\t"
                     "li t4, 0\n\t"
                     "beqz a7, 3f\n"
                     "2:\n\t" XCV_SETUP(0, 17, 2b, 3f) XCV_LW_PI(t5, a1, 4) XCV_LW_PI(t6, a1, 4) XCV_SDOTSP(t3, t5, a6)
                         XCV_SDOTSP(t4, t6, a6) "3:\n\t"
                     "andi t0, a3, 4\n\t"
                     "beqz t0, 4f\n\t" XCV_LW_PI(t5, a1, 4) XCV_SDOTSP(t3, t5, a6) "4:\n\t"
                     "andi t0, a3, 3\n\t"
                     "beqz t0, 6f\n"
                     "5:\n\t" XCV_LB_PI(t5, a1, 1) "addi t0, t0, -1\n\t"
                     "add t3, t3, t5\n\t"
                     "bnez t0, 5b\n"
                     "6:\n\t"
                     "add t3, t3, t4\n\t"
                     "mul t3, t3, a5\n\t"
                     "beqz a4, 7f\n\t" XCV_LW_PI(t5, a4, 4) "add t3, t3, t5\n"
                     "7:\n\t" XCV_SW_PI(t3, a0, 4) "addi a2, a2, -1\n\t"
                     "bnez a2, 1b\n"
                     "9:\n\t"
                     "ret\n\t"
                     ".option pop\n\t");
}

/* ---------------------------------------------------------------------------------
 * The output stage split by the sum's sign, with the multiply-only paths of corev_nn.h's
 * cv_rq_fast (one mul instead of mul + mulhsu: 5 cycles on the CV32E40P).
 *
 * Register X, temporaries t0 and T: bgeu xlim (a sum < 0, unsigned at least 2^31 >= xlim,
 * and a sum >= xlim out of line), mul, add x, cv.addN with f and the shift by 22 twice
 * (for y and y + x: an add and a srai each before, 1 cycle more an output), bne, the
 * store: 7 cycles (10 with mulhsu). A sum of 0 takes the path too: y = f, whose shift is
 * out_off (f's rounding part is below 2^22), which is >= act_min. No clamp: xlim is at
 * most where the result would pass act_max (cv_xrq_xlim), so those sums take the exact
 * stage, which clamps. (A blez for the sums <= 0 and a cv.min with act_max each cost
 * every sum >= 0 a cycle.)
 * Out of line, a sum < 0 under a ReLU (act_min == out_off) stores act_min; otherwise it
 * takes cv_rq_fast_neg's path, then cv.max with act_min. What the two paths leave takes
 * the exact stage.
 * L: a label number (L0, L2 to L5 are used).
 * ------------------------------------------------------------------------------- */
#define XCV_RQ_Y_SHIFT CV_RQ_Y_SHIFT
/* cv.addN rd, a, b, 22: rd = (a + b) >> 22 (XCV_RQ_Y_SHIFT), arithmetic (opcode 1011011,
   funct3 010, the shift in funct7) */
#define XCV_ADDN22(rd, a, b) ".insn r 0x5b, 2, " XCV_RQ_Y_SHIFT ", " #rd ", " #a ", " #b "\n\t"
#define XCV_RQ_SPLIT(X, MH, F, XLIM, T, STORE, L) XCV_RQ_SPLIT_IN(X, MH, F, XLIM, t0, T, "", STORE, L)
/* The same with its registers named (the depthwise kernels, whose t0 holds input): the
   temporaries T0 and T, the result in T0, CLAMP before the store (cv_xdwc's cv.min with
   its xlim not lowered: a divu a channel costs more than a cycle an output on maps of 36
   outputs a channel and less). */
#define XCV_RQ_SPLIT_IN(X, MH, F, XLIM, T0, T, CLAMP, STORE, L)                                                      \
    "bgeu " #X ", " #XLIM ", " #L "0f\n\t"                                                                              \
    "mul " #T0 ", " #X ", " #MH "\n\t"                                                                                 \
    "add " #T ", " #T0 ", " #X "\n\t" XCV_ADDN22(T0, T0, F) XCV_ADDN22(T, T, F)                                        \
    "bne " #T0 ", " #T ", " #L "3f\n\t" CLAMP #L "2:\n\t" STORE(T0) #L "4:\n\t"
/* Its out-of-line parts (after the function's return), per register. Register ZERO
   (cv_xrq_zero) is act_min's byte (0 to 255) under a ReLU, else INT32_MIN: one signed
   compare sends a sum >= ZERO on (a sum < 0 without the ReLU, a sum >= xlim) and lets a
   sum < 0 under the ReLU store act_min, in as many cycles as the blez and the test of
   ZERO took. Those sent on: a sum < 0 goes, moved into V, to the shared code at label
   96 (XCV_RQ_SHARED), one >= xlim to label 95; t0 is the link register. */
#define XCV_RQ_SPLIT_FIX(X, ZERO, V, STORE, L)                                                                         \
    #L "0:\n\tbge " #X ", " #ZERO ", " #L "5f\n\t" STORE(ZERO) "j " #L "4b\n"                                          \
    #L "5:\n\tbgez " #X ", " #L "3f\n\tmv " #V ", " #X "\n\tjal t0, 96f\n\tj " #L "4b\n"                                \
    #L "3:\n\tmv " #V ", " #X "\n\tjal t0, 95f\n\tj " #L "4b\n"
/* The exact stage up to its clamps, the sum in V, A and B temporaries: t = (x m + 2^30) >>
   31 (mul, mulhsu, the low word's bit 31), (t - (t < 0)) >> 1, cv.addRNr with out_off << sh
   and sh = e - 1. M2, OFFSH, SH: the memory operands of 2 m, out_off << sh minus
   2^(sh - 1) and sh. (XCV_RQ_SHARED and the depthwise kernels' out-of-line parts.) */
#define XCV_RQ_EXACT(V, A, B, M2, OFFSH, SH)                                                                           \
    "lw " #A ", " M2 "\n\tmul " #B ", " #V ", " #A "\n\tmulhsu " #V ", " #V ", " #A "\n\tsrli " #B ", " #B             \
    ", 31\n\tadd " #V ", " #V ", " #B "\n\tslt " #B ", " #V ", zero\n\t" XCV_SUBN1(V, V, B) "lw " #A ", " OFFSH "\n\t"   \
    "lw " #B ", " SH "\n\t" XCV_ADDRNR(V, A, B)
/* The shared code's exact stage alone (labels 95 and 97), for a kernel that handles
   every sum <= 0 itself (cv_xgemm_4x4q). LO, HI: the memory operands of act_min and
   act_max (the paths need no register for them). */
#define XCV_RQ_SHARED_EXACT(V, A, B, RESTORE, M2, OFFSH, SH, LO, HI, STORE)                                            \
    "95:\n"                                                                                                             \
    "97:\n\t" XCV_RQ_EXACT(V, A, B, M2, OFFSH, SH) "lw " #A ", " LO "\n\t" XCV_MAX(V, V, A) "lw " #A ", " HI "\n\t"       \
        XCV_MIN(V, V, A)                                                                                               \
        STORE(V) RESTORE "jr t0\n"
/* A sum <= 0 without a ReLU, in V: cv_rq_fast_neg's path (memory operands XNEG, FNEG, LO:
   xneg, fneg, act_min; register MH), then cv.max with act_min and the store (STORE), then
   DONE; sums it cannot say go to EXACT with V unchanged. T1, T2, T3: temporaries (the
   result in T2). cv_xgemm_4x4q's registers' out-of-line parts and the shared code's
   label 96. */
#define XCV_RQ_NEG(V, MH, T1, T2, T3, XNEG, FNEG, LO, EXACT, STORE, DONE)                                               \
    "lw " #T1 ", " XNEG "\n\tblt " #V ", " #T1 ", " EXACT "\n\tlw " #T1 ", " FNEG "\n\tmul " #T2 ", " #V ", " #MH      \
    "\n\tadd " #T3 ", " #T2 ", " #V "\n\t" XCV_ADDN22(T2, T2, T1) XCV_ADDN22(T3, T3, T1) "lw " #T1 ", " LO "\n\tbne " #T2 \
    ", " #T3 ", " EXACT "\n\t" XCV_MAX(T2, T2, T1) STORE(T2) DONE
/* The shared code (once per function, labels 95 to 97), the sum in V, A, B and C borrowed
   and loaded again from where the kernel keeps their values (RESTORE: no saves), the
   result stored (STORE) before returning to t0.
   96: a sum <= 0 without a ReLU (XCV_RQ_NEG, memory operands FNEG, XNEG, LO; register
   MH); 95 (97): the exact stage for what the paths leave: t = (x m + 2^30) >> 31 (mul,
   mulhsu, the low word's bit 31), (t - (t < 0)) >> 1, cv.addRNr with out_off << sh and
   sh = e - 1, both clamps. M2, OFFSH, SH, LO, HI: the memory operands of 2 m, out_off <<
   sh minus 2^(sh - 1), sh, act_min and act_max. One copy instead of one per register (5 in
   cv_xrq_lines) keeps the text small; the sums that take it pay a few cycles for the
   call (ResNet-8 took 45 K cycles more when A and B were saved and restored and 96
   jumped to 95's store). */
#define XCV_RQ_SHARED(V, MH, A, B, C, RESTORE, FNEG, XNEG, M2, OFFSH, SH, LO, HI, STORE)                                \
    XCV_RQ_SHARED_EXACT(V, A, B, RESTORE, M2, OFFSH, SH, LO, HI, STORE)                                                \
    "96:\n\t" XCV_RQ_NEG(V, MH, A, B, C, XNEG, FNEG, LO, "97b", STORE, RESTORE "jr t0\n")

/* Words per channel of cv_xrq_prep (the callers' buffers). */
#define CV_XRQ_WORDS 8

/* cv_rq_fast's xlim of {mh, f, xlim} lowered to xc = ceil(((act_max + 1) 2^22 - f) / mh):
   for x < xc, x mh + f < (act_max + 1) 2^22, so the multiply-only path's result is at
   most act_max and needs no upper clamp; larger sums take the exact stage, which
   clamps. A divu (up to 35 cycles) per channel and call, for a cycle less every
   output. (Below xlim the path's results are below 2^9: act_max >= 511 needs no bound;
   otherwise t = (act_max + 1) 2^22 is an int32 for act_max >= -512, and t - f < 2^32,
   as |f| <= 2^30 + 2^22: 32-bit arithmetic, 64 bytes less a copy than in int64.) */
CV_INLINE uint32_t cv_xrq_xlim(const uint32_t *w, int32_t act_max)
{
    if (act_max >= 511 || w[0] == 0)
    {
        return w[2];
    }
    const int32_t t = (int32_t)((uint32_t)(act_max + 1) << 22);
    if ((int32_t)w[1] >= t || act_max < -512)
    {
        return 0;
    }
    const uint32_t n = (uint32_t)t - w[1];
    const uint32_t q = n / w[0];
    const uint32_t xc = q + (n != q * w[0]);
    return xc < w[2] ? xc : w[2];
}

/* The multiply-only paths' constants {mh, f, xlim, fneg, xneg} of one channel
   (cv_rq_fast, cv_rq_fast_neg, cv_xrq_xlim). */
CV_INLINE void cv_xrq_fast(uint32_t *w, int32_t mult, int32_t e, int32_t out_off, int32_t act_max)
{
    cv_rq_fast(w, mult, e, out_off);
    cv_rq_fast_neg(w, e, out_off, act_max);
    w[2] = cv_xrq_xlim(w, act_max);
}

#if defined(CV_WANT_GEMM)
/* ---------------------------------------------------------------------------------
 * The matrix kernel: a panel of 4 rows (corev_nn.h: groups of 4 along K interleaved,
 * panel[16 g + 4 r + j]) times 4 weight rows at a time.
 *
 * Per group of 4 along K: 4 words of the panel (one per row), 4 words of weights (one
 * per channel, post-increment loads), 16 cv.sdotsp.b: 64 MACs in 24 cycles, in a
 * hardware loop. A second hardware loop runs over `tiles` groups of 4 channels: per tile
 * the 16 accumulators start from init[0..3] (one per channel), and end in out[16]
 * (out[4 j + r]: channel j, row r). Then w += 4 * wstride, init += 4, out += 16 (the
 * struct's fields are advanced).
 *
 * K is read in whole groups: the panel's bytes past K up to the group end must be zero
 * (the weights' bytes there, read past each row's end, then add nothing).
 * wstride = 0 computes one weight row 4 times (the last channels of a count that is no
 * multiple of 4).
 * ------------------------------------------------------------------------------- */
typedef struct
{
    const int8_t *panel; /* 0 */
    const int8_t *w;     /* 4: first row of the tile (advanced) */
    int32_t wstride;     /* 8: bytes from one weight row to the next */
    int32_t groups;      /* 12: >= 1 */
    const int32_t *init; /* 16: advanced by 4 per tile */
    int32_t *out;        /* 20: advanced by 16 per tile */
    int32_t tiles;       /* 24: >= 1 */
} cv_xgemm_args;

/*
 * Registers: accumulators s0-s3 (channel 0, rows 0-3), s4-s7, s8-s11, t3-t6 (channel 3);
 * panel words a2-a5, weight words a6/a7, panel pointer a0, weight pointers t0, t1, t2, ra,
 * the arguments a1.
 */
CV_XCV_SHARED_NAKED void cv_xgemm_4x4(cv_xgemm_args *args)
{
    (void)args;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t" XCV_PROLOGUE "mv a1, a0\n\t"
                     "lw a2, 24(a1)\n\t"
                     "1:\n\t" XCV_SETUP(1, 12, 1b, 4f)
                     /* one tile of 4 channels */
                     "lw t0, 4(a1)\n\t"
                     "lw a3, 8(a1)\n\t"
                     "lw a4, 16(a1)\n\t"
                     "add t1, t0, a3\n\t"
                     "add t2, t1, a3\n\t"
                     "add ra, t2, a3\n\t"
                     "add a5, ra, a3\n\t"
                     "sw a5, 4(a1)\n\t" XCV_LW_PI(s0, a4, 4) XCV_LW_PI(s4, a4, 4) XCV_LW_PI(s8, a4, 4)
                         XCV_LW_PI(t3, a4, 4) "sw a4, 16(a1)\n\t"
                     "mv s1, s0\n\tmv s2, s0\n\tmv s3, s0\n\t"
                     "mv s5, s4\n\tmv s6, s4\n\tmv s7, s4\n\t"
                     "mv s9, s8\n\tmv s10, s8\n\tmv s11, s8\n\t"
                     "mv t4, t3\n\tmv t5, t3\n\tmv t6, t3\n\t"
                     "lw a0, 0(a1)\n\t"
                     "lw a2, 12(a1)\n\t"
                     "2:\n\t" XCV_SETUP(0, 12, 2b, 3f)
                     /* one group of 4 along K: 64 MACs */
                     "lw a3, 4(a0)\n\t"
                     "lw a4, 8(a0)\n\t"
                     "lw a5, 12(a0)\n\t" XCV_LW_PI(a2, a0, 16) XCV_LW_PI(a6, t0, 4) XCV_LW_PI(a7, t1, 4)
                         XCV_SDOTSP(s0, a2, a6) XCV_SDOTSP(s1, a3, a6) XCV_SDOTSP(s2, a4, a6) XCV_SDOTSP(s3, a5, a6)
                             XCV_LW_PI(a6, t2, 4) XCV_SDOTSP(s4, a2, a7) XCV_SDOTSP(s5, a3, a7) XCV_SDOTSP(s6, a4, a7)
                                 XCV_SDOTSP(s7, a5, a7) XCV_LW_PI(a7, ra, 4) XCV_SDOTSP(s8, a2, a6)
                                     XCV_SDOTSP(s9, a3, a6) XCV_SDOTSP(s10, a4, a6) XCV_SDOTSP(s11, a5, a6)
                                         XCV_SDOTSP(t3, a2, a7) XCV_SDOTSP(t4, a3, a7) XCV_SDOTSP(t5, a4, a7)
                                             XCV_SDOTSP(t6, a5, a7) "3:\n\t"
                     "lw a2, 20(a1)\n\t" XCV_SW_PI(s0, a2, 4) XCV_SW_PI(s1, a2, 4) XCV_SW_PI(s2, a2, 4) XCV_SW_PI(s3, a2, 4)
                         XCV_SW_PI(s4, a2, 4) XCV_SW_PI(s5, a2, 4) XCV_SW_PI(s6, a2, 4) XCV_SW_PI(s7, a2, 4)
                             XCV_SW_PI(s8, a2, 4) XCV_SW_PI(s9, a2, 4) XCV_SW_PI(s10, a2, 4) XCV_SW_PI(s11, a2, 4)
                                 XCV_SW_PI(t3, a2, 4) XCV_SW_PI(t4, a2, 4) XCV_SW_PI(t5, a2, 4)
                                     XCV_SW_PI(t6, a2, 4) "sw a2, 20(a1)\n\t"
                     "4:\n\t" XCV_EPILOGUE ".option pop\n\t");
}

/*
 * The same kernel with the output stage fused (all 4 rows present; every channel's
 * multiplier >= 0 and shift in [-31, -2], act_min <= out_off: cv_xrq_prep): after each
 * tile's K loop the 16 accumulators are requantized in registers by XCV_RQ_SPLIT (a
 * sum >= 0: one mul, the store with the row step as post-increment; the result is >=
 * out_off >= act_min, and <= act_max below xlim). A sum < 0 under a ReLU (act_min == out_off)
 * stores act_min; a sum < 0 without a ReLU takes cv_rq_fast_neg's path in its
 * register's out-of-line part (XCV_RQ_FIX); sums near a rounding tie or past xlim (or
 * xneg) run the shared exact stage. The tiles run in a counted loop, not a
 * hardware loop: the output stage branches. rq holds CV_XRQ_WORDS words per channel
 * (cv_xrq_prep).
 */
typedef struct
{
    cv_xgemm_args g;     /* 0..27 (out, tiles unused; w and init advanced by cv_xgemm_5x4q, held
                            in registers by cv_xgemm_4x4q) */
    int8_t *dst;         /* 28: row 0, channel 0 of the tile (advanced by 4) */
    int32_t dstride;     /* 32: bytes from one output row to the next */
    const uint32_t *rq;  /* 36: CV_XRQ_WORDS words per channel (as g.w) */
    int32_t zero;        /* 40: a sum < 0 stores this byte if >= 0 (cv_xrq_zero) */
    int32_t act_min;     /* 44 */
    int32_t act_max;     /* 48 */
    int32_t back;        /* 52: rows * dstride - 1 (rows: the panels', 4 or 5) */
    /* More panels of the same weights in one call (cv_xpanels_gemmq): after the tiles of
       a panel, panel += pstep, dst += dadv, and w, init, rq start again. */
    int32_t more;        /* 56: panels after this one (counted down) */
    int32_t pstep;       /* 60: bytes from a panel to the next */
    const int8_t *w0;    /* 64 */
    const int32_t *init0; /* 68 */
    const uint32_t *rq0; /* 72 */
    int32_t dadv;        /* 76: rows * dstride - 4 * tiles (dst past the panel's tiles to the next's) */
    const uint32_t *rq_end; /* 80: rq past the last tile's words (where the tiles end) */
    /* cv_xgemm_5x4q's weight steps (K a multiple of 4): */
    int32_t wtile;       /* 84: 4 * wstride, from a tile's first weight row to the next's */
    int32_t wback;       /* 88: 4 - 3 * wstride, from row 3 of a group to row 0 of the next */
    int32_t wskip;       /* 92: 4 * groups - wstride: where cv_xgemm_4x4q's row 3 pointer ends past the next
                            tile's row 0 (the groups read past each row's end) */
} cv_xgemmq_args;
_Static_assert(offsetof(cv_xgemmq_args, back) == 52 && offsetof(cv_xgemmq_args, wskip) == 92, "cv_xgemm_4x4q's offsets");

/* cv_xgemm_4x4q: a2 = mh, a3 = f, a4 = xlim (gp: past the channel's words), a5 temporary,
   a6 = zero, t1 = output pointer, t2 = row step (act_max: only the exact stage reads it). */
#define XCV_G4_STORE(R) XCV_SB_PR(R, t1, t2)
#define XCV_RQ_REG(X, L) XCV_RQ_SPLIT(X, a2, a3, a4, a5, XCV_G4_STORE, L)
/* The out-of-line part of one register (XCV_RQ_SPLIT_FIX's, with a sum < 0 without a
   ReLU handled here: cv_rq_fast_neg's path, as the shared code's label 96, then cv.max
   with act_min). Inline, it saves the two jumps to and from the shared code and the
   registers' restore, about 9 cycles for each such sum (ResNet's layers before an
   addition and its 1x1 shortcuts, where most sums are negative), for 40 bytes of text
   a register. It borrows a4 (xlim) and loads it again; the exact stage (label 95)
   restores a4 itself. */
#define XCV_RQ_FIX(X, L)                                                                                               \
    #L "0:\n\tbge " #X ", a6, " #L "5f\n\t" XCV_G4_STORE(a6) "j " #L "4b\n"                                            \
    #L "5:\n\tbgez " #X ", " #L "3f\n\t"                                                                                \
    XCV_RQ_NEG(X, a2, a5, t0, a4, "-16(gp)", "-20(gp)", "44(a1)", #L "3f", XCV_G4_STORE, "lw a4, -24(gp)\n\tj " #L "4b\n") \
    #L "3:\n\tmv a5, " #X "\n\tjal t0, 95f\n\tj " #L "4b\n"
/* A channel's 4 rows, then back to row 0 of the next channel (a0 = 4 * row step - 1);
   xlim loaded first, so that the first bgeu does not wait for it. */
#define XCV_RQ_CHANNEL(A, B, C, D, L)                                                                                  \
    "lw a4, 8(gp)\n\tlw a3, 4(gp)\n\t" XCV_LW_PI(a2, gp, 32) XCV_RQ_REG(A, L##0) XCV_RQ_REG(B, L##1)               \
        XCV_RQ_REG(C, L##2) XCV_RQ_REG(D, L##3) "sub t1, t1, a0\n\t"
#define XCV_RQ_CHANNEL_FIX(A, B, C, D, L) XCV_RQ_FIX(A, L##0) XCV_RQ_FIX(B, L##1) XCV_RQ_FIX(C, L##2) XCV_RQ_FIX(D, L##3)

/* Registers across the tiles: the arguments a1, the next tile's weight rows ra (where
   the K loop leaves row 3's pointer, wskip bytes past them: the rows are K bytes apart),
   its initial values tp, its output-stage words gp (saved; the tiles end where gp
   reaches rq_end). The tile's set-up took about 13 cycles more with these in the
   arguments. */
CV_XCV_SHARED_NAKED void cv_xgemm_4x4q(cv_xgemmq_args *args)
{
    (void)args;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t" XCV_PROLOGUE "sw gp, 52(sp)\n\tsw tp, 56(sp)\n\t"
                     "mv a1, a0\n\t"
                     "lw ra, 4(a1)\n\t"
                     "lw t0, 92(a1)\n\t"
                     "lw tp, 16(a1)\n\t"
                     "lw gp, 36(a1)\n\t"
                     "add ra, ra, t0\n"
                     "1:\n\t"
                     /* one tile of 4 channels */
                     "lw t0, 92(a1)\n\t"
                     "lw a3, 8(a1)\n\t"
                     "sub t0, ra, t0\n\t" XCV_LW_PI(s0, tp, 4) XCV_LW_PI(s4, tp, 4) XCV_LW_PI(s8, tp, 4)
                         XCV_LW_PI(t3, tp, 4) "add t1, t0, a3\n\t"
                     "add t2, t1, a3\n\t"
                     "add ra, t2, a3\n\t"
                     "mv s1, s0\n\tmv s2, s0\n\tmv s3, s0\n\t"
                     "mv s5, s4\n\tmv s6, s4\n\tmv s7, s4\n\t"
                     "mv s9, s8\n\tmv s10, s8\n\tmv s11, s8\n\t"
                     "mv t4, t3\n\tmv t5, t3\n\tmv t6, t3\n\t"
                     "lw a2, 12(a1)\n\t"
                     "lw a0, 0(a1)\n\t"
                     "2:\n\t" XCV_SETUP(0, 12, 2b, 3f)
                     /* one group of 4 along K: 64 MACs */
                     "lw a3, 4(a0)\n\t"
                     "lw a4, 8(a0)\n\t"
                     "lw a5, 12(a0)\n\t" XCV_LW_PI(a2, a0, 16) XCV_LW_PI(a6, t0, 4) XCV_LW_PI(a7, t1, 4)
                         XCV_SDOTSP(s0, a2, a6) XCV_SDOTSP(s1, a3, a6) XCV_SDOTSP(s2, a4, a6) XCV_SDOTSP(s3, a5, a6)
                             XCV_LW_PI(a6, t2, 4) XCV_SDOTSP(s4, a2, a7) XCV_SDOTSP(s5, a3, a7) XCV_SDOTSP(s6, a4, a7)
                                 XCV_SDOTSP(s7, a5, a7) XCV_LW_PI(a7, ra, 4) XCV_SDOTSP(s8, a2, a6)
                                     XCV_SDOTSP(s9, a3, a6) XCV_SDOTSP(s10, a4, a6) XCV_SDOTSP(s11, a5, a6)
                                         XCV_SDOTSP(t3, a2, a7) XCV_SDOTSP(t4, a3, a7) XCV_SDOTSP(t5, a4, a7)
                                             XCV_SDOTSP(t6, a5, a7) "3:\n\t"
                     /* the output stage */
                     "lw t1, 28(a1)\n\t"
                     "lw t2, 32(a1)\n\t"
                     "lw a6, 40(a1)\n\t"
                     "lw a0, 52(a1)\n\t" XCV_RQ_CHANNEL(s0, s1, s2, s3, 10) XCV_RQ_CHANNEL(s4, s5, s6, s7, 11)
                         XCV_RQ_CHANNEL(s8, s9, s10, s11, 12) XCV_RQ_CHANNEL(t3, t4, t5, t6, 13)
                     /* t1 is the next tile's dst (4 channels on) */
                     "lw t0, 80(a1)\n\t"
                     "sw t1, 28(a1)\n\t"
                     "bne gp, t0, 1b\n\t"
                     /* the next panel, if any */
                     "lw t0, 56(a1)\n\t"
                     "beqz t0, 8f\n\t"
                     "addi t0, t0, -1\n\t"
                     "sw t0, 56(a1)\n\t"
                     "lw t1, 0(a1)\n\tlw t2, 60(a1)\n\tadd t1, t1, t2\n\tsw t1, 0(a1)\n\t"
                     "lw ra, 64(a1)\n\t"
                     "lw t0, 92(a1)\n\t"
                     "lw tp, 68(a1)\n\t"
                     "lw gp, 72(a1)\n\t"
                     "add ra, ra, t0\n\t"
                     "lw t1, 28(a1)\n\tlw t2, 76(a1)\n\tadd t1, t1, t2\n\tsw t1, 28(a1)\n\t"
                     "j 1b\n"
                     "8:\n\tlw gp, 52(sp)\n\tlw tp, 56(sp)\n\t" XCV_EPILOGUE XCV_RQ_CHANNEL_FIX(s0, s1, s2, s3, 10)
                         XCV_RQ_CHANNEL_FIX(s4, s5, s6, s7, 11) XCV_RQ_CHANNEL_FIX(s8, s9, s10, s11, 12)
                             XCV_RQ_CHANNEL_FIX(t3, t4, t5, t6, 13) XCV_RQ_SHARED_EXACT(a5, a4, a6, "lw a4, -24(gp)\n\tlw a6, 40(a1)\n\t", "-12(gp)", "-8(gp)",
                                                                         "-4(gp)", "44(a1)", "48(a1)", XCV_G4_STORE) ".option pop\n\t");
}
/*
 * The same under a ReLU (zero: act_min's byte, cv_xrq_zero) with panels of 5 rows (20
 * bytes a group along K: panel[20 g + 4 r + j], cv_xpanel_5rows) and a tile of 5 rows x
 * 4 channels: per group the 4 channels' weight words are held (one pointer stepping K,
 * K, K and 4 - 3K bytes) and the 5 rows' words stream through 2 registers: 80 MACs in 29
 * cycles (2.76 a cycle, the 4 x 4 tile's 64 in 24 make 2.67), and the tile's set-up and
 * output-stage words shared by 20 outputs. K must be a multiple of 4 (groups * 4 ==
 * wstride); back = 5 * dstride - 1, dadv = 5 * dstride - 4 * tiles.
 * Registers in the K loop: the accumulators s0-s3, a0 (channel 0, rows 0-4), s4-s7, a7,
 * s8-s11, ra, t3-t6, tp (channel 3); weight words a2-a5, row words a6 and t0, panel
 * pointer t1, weight pointer t2, its steps gp (K) and a1 (4 - 3K): the arguments' pointer
 * is kept at 60(sp). The output stage's registers are cv_xgemm_4x4q's (gp: the channel's
 * words); row 0 of the next channel is back = 5 row steps - 1 away (in s0 once channel 0
 * is stored; for channel 0, dst + 1).
 */
#define XCV_RQ_CHANNEL5(A, B, C, D, E, BACK, L)                                                                         \
    "lw a4, 8(gp)\n\tlw a3, 4(gp)\n\t" XCV_LW_PI(a2, gp, 32) XCV_RQ_REG(A, L##0) XCV_RQ_REG(B, L##1)               \
        XCV_RQ_REG(C, L##2) XCV_RQ_REG(D, L##3) XCV_RQ_REG(E, L##4) BACK
/* Out of line, under the ReLU (a6 = act_min's byte): a sum < 0 stores it, the rest takes
   the exact stage (6 instructions a register where XCV_RQ_FIX's path for a sum < 0
   without a ReLU takes 20: 1.1 KiB less text). */
#define XCV_RQ_FIX5(X, L)                                                                                              \
    #L "0:\n\tbge " #X ", a6, " #L "3f\n\t" XCV_G4_STORE(a6) "j " #L "4b\n"                                          \
    #L "3:\n\tmv a5, " #X "\n\tjal t0, 95f\n\tj " #L "4b\n"
#define XCV_RQ_CHANNEL5_FIX(A, B, C, D, E, L)                                                                           \
    XCV_RQ_FIX5(A, L##0) XCV_RQ_FIX5(B, L##1) XCV_RQ_FIX5(C, L##2) XCV_RQ_FIX5(D, L##3) XCV_RQ_FIX5(E, L##4)
/* one group of 4 along K: the 4 weight words, then the 5 rows' words one after the other */
#define XCV_G5_ROW(P, A, B, C, D) XCV_SDOTSP(A, P, a2) XCV_SDOTSP(B, P, a3) XCV_SDOTSP(C, P, a4) XCV_SDOTSP(D, P, a5)

CV_XCV_SHARED_NAKED void cv_xgemm_5x4q(cv_xgemmq_args *args)
{
    (void)args;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t" XCV_PROLOGUE "sw gp, 52(sp)\n\tsw tp, 56(sp)\n\tsw a0, 60(sp)\n\t"
                     "mv a1, a0\n"
                     "1:\n\t"
                     /* one tile of 4 channels: the weight rows, the next tile's, the initial values */
                     "lw t2, 4(a1)\n\t"
                     "lw t0, 16(a1)\n\t"
                     "lw a6, 84(a1)\n\t" XCV_LW_PI(s0, t0, 4) XCV_LW_PI(s4, t0, 4) XCV_LW_PI(s8, t0, 4)
                         XCV_LW_PI(t3, t0, 4) "add a6, t2, a6\n\t"
                     "sw a6, 4(a1)\n\t"
                     "sw t0, 16(a1)\n\t"
                     "mv s1, s0\n\tmv s2, s0\n\tmv s3, s0\n\tmv a0, s0\n\t"
                     "mv s5, s4\n\tmv s6, s4\n\tmv s7, s4\n\tmv a7, s4\n\t"
                     "mv s9, s8\n\tmv s10, s8\n\tmv s11, s8\n\tmv ra, s8\n\t"
                     "mv t4, t3\n\tmv t5, t3\n\tmv t6, t3\n\tmv tp, t3\n\t"
                     "lw gp, 8(a1)\n\t"
                     "lw t1, 0(a1)\n\t"
                     "lw a5, 12(a1)\n\t"
                     "lw a1, 88(a1)\n\t"
                     "2:\n\t" XCV_SETUP(0, 15, 2b, 3f)
                     /* one group of 4 along K: 80 MACs */
                     XCV_LW_PI(a6, t1, 4) XCV_LW_PR(a2, t2, gp) XCV_LW_PR(a3, t2, gp) XCV_LW_PR(a4, t2, gp)
                         XCV_LW_PR(a5, t2, a1) XCV_LW_PI(t0, t1, 4) XCV_G5_ROW(a6, s0, s4, s8, t3) XCV_LW_PI(a6, t1, 4)
                             XCV_G5_ROW(t0, s1, s5, s9, t4) XCV_LW_PI(t0, t1, 4) XCV_G5_ROW(a6, s2, s6, s10, t5)
                                 XCV_LW_PI(a6, t1, 4) XCV_G5_ROW(t0, s3, s7, s11, t6) XCV_G5_ROW(a6, a0, a7, ra, tp)
                     "3:\n\t"
                     /* the output stage */
                     "lw a1, 60(sp)\n\t"
                     "lw gp, 36(a1)\n\t"
                     "lw t1, 28(a1)\n\t"
                     "lw t2, 32(a1)\n\t"
                     "lw a6, 40(a1)\n\t" XCV_RQ_CHANNEL5(s0, s1, s2, s3, a0, "lw t1, 28(a1)\n\taddi t1, t1, 1\n\tlw s0, 52(a1)\n\t", 10)
                         XCV_RQ_CHANNEL5(s4, s5, s6, s7, a7, "sub t1, t1, s0\n\t", 11)
                             XCV_RQ_CHANNEL5(s8, s9, s10, s11, ra, "sub t1, t1, s0\n\t", 12)
                                 XCV_RQ_CHANNEL5(t3, t4, t5, t6, tp, "sub t1, t1, s0\n\t", 13)
                     /* t1 is the next tile's dst (4 channels on) */
                     "lw t0, 80(a1)\n\t"
                     "sw t1, 28(a1)\n\t"
                     "sw gp, 36(a1)\n\t"
                     "bne gp, t0, 1b\n\t"
                     /* the next panel, if any */
                     "lw t0, 56(a1)\n\t"
                     "beqz t0, 8f\n\t"
                     "addi t0, t0, -1\n\t"
                     "sw t0, 56(a1)\n\t"
                     "lw t1, 0(a1)\n\tlw t2, 60(a1)\n\tadd t1, t1, t2\n\tsw t1, 0(a1)\n\t"
                     "lw t1, 64(a1)\n\tsw t1, 4(a1)\n\t"
                     "lw t1, 68(a1)\n\tsw t1, 16(a1)\n\t"
                     "lw t1, 72(a1)\n\tsw t1, 36(a1)\n\t"
                     "lw t1, 28(a1)\n\tlw t2, 76(a1)\n\tadd t1, t1, t2\n\tsw t1, 28(a1)\n\t"
                     "j 1b\n"
                     "8:\n\tlw gp, 52(sp)\n\tlw tp, 56(sp)\n\t" XCV_EPILOGUE XCV_RQ_CHANNEL5_FIX(s0, s1, s2, s3, a0, 10)
                         XCV_RQ_CHANNEL5_FIX(s4, s5, s6, s7, a7, 11) XCV_RQ_CHANNEL5_FIX(s8, s9, s10, s11, ra, 12)
                             XCV_RQ_CHANNEL5_FIX(t3, t4, t5, t6, tp, 13) XCV_RQ_SHARED_EXACT(a5, a4, a6, "lw a4, -24(gp)\n\tlw a6, 40(a1)\n\t", "-12(gp)", "-8(gp)",
                                                                         "-4(gp)", "44(a1)", "48(a1)", XCV_G4_STORE) ".option pop\n\t");
}
#undef XCV_RQ_CHANNEL5
#undef XCV_RQ_FIX5
#undef XCV_RQ_CHANNEL5_FIX
#undef XCV_G5_ROW
#undef XCV_RQ_REG
#undef XCV_RQ_FIX
#undef XCV_G4_STORE
#undef XCV_RQ_CHANNEL
#undef XCV_RQ_CHANNEL_FIX

#endif

/* The constants of one channel's output stage (cv_xrq_lines: split by the sum's sign
   as cv_xgemm_4x4q's). */
typedef struct
{
    int32_t add;     /* 0: added to each accumulator first */
    uint32_t mh;     /* 4: cv_xrq_fast's words */
    uint32_t f;      /* 8 */
    uint32_t xlim;   /* 12 */
    uint32_t fneg;   /* 16 */
    int32_t xneg;    /* 20 */
    int32_t zero;    /* 24: cv_xrq_zero */
    int32_t act_min; /* 28 */
    int32_t act_max; /* 32 */
    uint32_t m2;     /* 36: 2 mult */
    uint32_t offsh;  /* 40: out_off << sh minus 2^(sh - 1) (cv.addRNr adds it) */
    uint32_t sh;     /* 44: the rounding shift after t >> 1 */
} cv_xrq_args;

/* What a sum < 0 stores (XCV_RQ_SPLIT_FIX): act_min's byte under a ReLU (act_min ==
   out_off), else INT32_MIN (cv_rq_fast_neg's path, then the exact stage). A ReLU's byte
   is compared with the sums that reach it, every sum < 0 and >= xlim: xlim must be
   above 255 (xlim_min, the smallest of the channels'), else a sum in [xlim, byte) would
   store it. */
CV_INLINE int32_t cv_xrq_zero(int32_t out_off, int32_t act_min, uint32_t xlim_min)
{
    return cv_rq_relu(out_off, act_min) && xlim_min > 255u ? (int32_t)(uint8_t)act_min : INT32_MIN;
}

/* The words of a sum >= 0: mh, f, xlim (cv_rq_fast's, which the caller lowers with
   cv_xrq_xlim) and the exact stage's m2, offsh, sh; returns 1 if the parameters are in
   that stage's mode (multiplier >= 0, shift in [-31, -2], the offset folds into the
   rounding), else 0. (All cv_xdwp reads: under its ReLU a sum < 0 stores act_min.) */
CV_INLINE int32_t cv_xrq_make_pos(cv_xrq_args *q, int32_t mult, int32_t shift, int32_t out_off)
{
    const cv_xq x = cv_xq_make(mult, shift);
    int32_t h = 0;
    if (x.mode != 1 || x.pre != 1 || !cv_rq_h_with_offset(1, x.sh, out_off, &h))
    {
        return 0;
    }
    q->m2 = x.m2;
    q->offsh = (uint32_t)h - (1u << (x.sh - 1));
    q->sh = (uint32_t)x.sh;
    cv_rq_fast(&q->mh, mult, -shift, out_off);
    return 1;
}

/* Fills q; returns 1 if the parameters are in that stage's mode (cv_xrq_make_pos's, and
   act_min <= out_off), else 0. */
static CV_UNUSED int32_t cv_xrq_make(cv_xrq_args *q,
                                     int32_t add,
                                     int32_t mult,
                                     int32_t shift,
                                     int32_t out_off,
                                     int32_t act_min,
                                     int32_t act_max)
{
    if (act_min > out_off || !cv_xrq_make_pos(q, mult, shift, out_off))
    {
        return 0;
    }
    q->xlim = cv_xrq_xlim(&q->mh, act_max);
    q->add = add;
    cv_rq_fast_neg(&q->mh, -shift, out_off, act_max);
    q->zero = cv_xrq_zero(out_off, act_min, q->xlim);
    q->act_min = act_min;
    q->act_max = act_max;
    return 1;
}

#if defined(CV_WANT_GEMM)
/*
 * Per channel {mh, f, xlim, fneg, xneg, 2 mult, out_off << sh minus 2^(sh - 1), sh} for
 * cv_xgemm_4x4q (cv_xrq_args' words from mh, less the layer's); returns 1 if every
 * channel is in cv_xrq_make's mode, else 0 (the caller takes the C output stage). The
 * checks are cv_xrq_make's, written out: through cv_xrq_make (a whole cv_xrq_args a
 * channel) ResNet-8 took 12 K cycles more with the extensions. Under a ReLU every
 * channel's xlim must be above 255 (cv_xrq_zero), else the block takes the C stage: xlim
 * is about (act_max - out_off + 1) 2^(e + 1), so only a right shift e of a few bits with
 * a narrow output range brings it below.
 */
static CV_UNUSED int32_t cv_xrq_prep(uint32_t *rq,
                                     const int32_t *mult,
                                     const int32_t *shift,
                                     int32_t count,
                                     int32_t out_off,
                                     int32_t act_min,
                                     int32_t act_max)
{
    int32_t ok = act_min <= out_off;
    for (int32_t n = 0; n < count && ok; n++, rq += CV_XRQ_WORDS)
    {
        const cv_xq q = cv_xq_make(mult[n], shift[n]);
        int32_t h = 0;
        ok = q.mode == 1 && q.pre == 1 && cv_rq_h_with_offset(1, q.sh, out_off, &h);
        if (ok)
        {
            cv_xrq_fast(rq, mult[n], -shift[n], out_off, act_max);
            ok = rq[2] > 255u || !cv_rq_relu(out_off, act_min);
            rq[5] = q.m2;
            rq[6] = (uint32_t)h - (1u << (q.sh - 1)); /* cv.addRNr adds the 2^(sh - 1) */
            rq[7] = (uint32_t)q.sh;
        }
    }
    return ok;
}

/*
 * The outputs of one row (the last 1 to 3 rows of a product): acc[n] of channel n at
 * dst[n], through cv_xrq_prep's words (rq; NULL: none) where they give the exact result
 * (XCV_RQ_SPLIT's test in C: a sum in [0, xlim) whose results with mh and mh + 1 agree;
 * a sum < 0 under a ReLU stores act_min), else through cv_rq_out_any. (With
 * cv_rq_out_any for every output the small DS-CNN's 1x1 layers took 5.5 K cycles each
 * for their last row, now 3.2 K.)
 */
CV_SHARED void cv_xrq_row(const int32_t *acc,
                          int32_t count,
                          const uint32_t *rq,
                          const int32_t *mult,
                          const int32_t *shift,
                          int8_t *dst,
                          const cv_out_params *o)
{
    const int32_t relu = cv_rq_relu(o->out_off, o->act_min);
    for (int32_t n = 0; n < count; n++)
    {
        const int32_t x = acc[n];
        if (rq)
        {
            const uint32_t *w = rq + CV_XRQ_WORDS * n;
            if ((uint32_t)x < w[2])
            {
                const uint32_t y = (uint32_t)x * w[0] + w[1]; /* shifted by 22: CV_RQ_Y_SHIFT */
                if (((int32_t)y >> 22) == ((int32_t)(y + (uint32_t)x) >> 22))
                {
                    dst[n] = (int8_t)((int32_t)y >> 22);
                    continue;
                }
            }
            else if (x < 0 && relu)
            {
                dst[n] = (int8_t)o->act_min;
                continue;
            }
        }
        dst[n] = cv_rq_out_any(x, mult[n], shift[n], o->out_off, o->act_min, o->act_max);
    }
}

/* Output channels per call of cv_xgemm_4x4 (their accumulators on the stack). */
#define CV_XGEMM_NCH 16

/* The arguments of cv_xgemm_4x4q and cv_xgemm_5x4q for panels of `rows` rows (4 or 5: a
   constant at each call, so each wrapper sets only its kernel's fields). */
CV_INLINE void cv_xgemmq_make(cv_xgemmq_args *f,
                              int32_t rows,
                              const int8_t *panels,
                              int32_t npanels,
                              int32_t pstep,
                              int32_t K,
                              const int8_t *w,
                              int32_t count,
                              const int32_t *init,
                              const uint32_t *rq,
                              int8_t *dst,
                              const cv_out_params *o)
{
    f->g.panel = panels;
    f->g.w = w;
    f->g.wstride = K;
    f->g.groups = (K + 3) >> 2;
    f->g.init = init;
    f->dst = dst;
    f->dstride = o->dst_stride;
    f->rq = rq;
    f->zero = cv_xrq_zero(o->out_off, o->act_min, 256u); /* cv_xrq_prep: every xlim > 255 */
    f->act_min = o->act_min;
    f->act_max = o->act_max;
    f->back = rows * o->dst_stride - 1;
    f->more = npanels - 1;
    f->rq_end = rq + CV_XRQ_WORDS * count;
    if (rows == 5)
    {
        f->wtile = 4 * K;
        f->wback = 4 - 3 * K;
    }
    else
    {
        f->wskip = 4 * f->g.groups - K;
    }
    if (npanels > 1)
    {
        f->pstep = pstep;
        f->w0 = w;
        f->init0 = init;
        f->rq0 = rq;
        f->dadv = rows * o->dst_stride - count;
    }
}

/*
 * npanels (>= 1) full panels of 4 rows, pstep bytes apart, against count channels (a
 * multiple of 4, rq: cv_xrq_prep's words) in one call of the fused kernel: panel i's
 * outputs at dst + 4 i dst_stride. A call a panel (cv_xpanel_gemm) cost about 160 cycles
 * more a panel (its arguments, the call, the kernel's saves and restores), as much as one
 * of its tiles where K is small: MobileNet's 1x1 layers of 8 to 32 input channels have
 * hundreds of panels of 1 to 4 tiles.
 */
CV_SHARED void cv_xpanels_gemmq(const int8_t *panels,
                                int32_t npanels,
                                int32_t pstep,
                                int32_t K,
                                const int8_t *w,
                                int32_t count,
                                const int32_t *init,
                                const uint32_t *rq,
                                int8_t *dst,
                                const cv_out_params *o)
{
    cv_xgemmq_args f;
    cv_xgemmq_make(&f, 4, panels, npanels, pstep, K, w, count, init, rq, dst, o);
    cv_xgemm_4x4q(&f);
}

/* The same with panels of 5 rows (cv_xpanel_5rows, pstep bytes apart), K a multiple of
   4, under a ReLU, through cv_xgemm_5x4q: panel i's outputs at dst + 5 i dst_stride. */
CV_SHARED void cv_xpanels5_gemmq(const int8_t *panels,
                                 int32_t npanels,
                                 int32_t pstep,
                                 int32_t K,
                                 const int8_t *w,
                                 int32_t count,
                                 const int32_t *init,
                                 const uint32_t *rq,
                                 int8_t *dst,
                                 const cv_out_params *o)
{
    cv_xgemmq_args f;
    cv_xgemmq_make(&f, 5, panels, npanels, pstep, K, w, count, init, rq, dst, o);
    cv_xgemm_5x4q(&f);
}

/*
 * cv_panel_gemm with the kernels above: the same arguments and outputs, and rq: the
 * channels' cv_xrq_prep words if it returned 1 (else NULL). Full panels of such
 * channels take the fused kernel; the rest stores accumulators for cv_xstore. The
 * panel's bytes from K to the end of its last group must be zero (cv_panel_zero_tail, corev_nn.h).
 */
CV_SHARED void cv_xpanel_gemm(const int8_t *panel,
                              int32_t rows,
                              int32_t K,
                              const int8_t *w,
                              int32_t count,
                              const int32_t *init,
                              const int32_t *mult,
                              const int32_t *shift,
                              const uint32_t *rq,
                              int8_t *dst,
                              const cv_out_params *o)
{
    int32_t acc[4 * CV_XGEMM_NCH] __attribute__((aligned(4)));
    cv_xgemm_args a;
    a.panel = panel;
    a.wstride = K;
    a.groups = (K + 3) >> 2;
    int32_t n = 0;
    if (rq && rows == 4 && count >= 4)
    {
        n = count & ~3;
        cv_xpanels_gemmq(panel, 1, 0, K, w, n, init, rq, dst, o);
    }
    while (count - n >= 4)
    {
        const int32_t nch = (count - n < CV_XGEMM_NCH ? count - n : CV_XGEMM_NCH) & ~3;
        a.w = w + n * K;
        a.init = init + n;
        a.out = acc;
        a.tiles = nch >> 2;
        cv_xgemm_4x4(&a);
        cv_xstore(acc, nch, rows, dst + n, mult + n, shift + n, o);
        n += nch;
    }
    /* The last 1 to 3 channels: one weight row per tile. */
    for (; n < count; n++)
    {
        const int32_t init4[4] = {init[n], init[n], init[n], init[n]};
        a.w = w + n * K;
        a.wstride = 0;
        a.init = init4;
        a.out = acc;
        a.tiles = 1;
        cv_xgemm_4x4(&a);
        cv_xstore(acc, 1, rows, dst + n, mult + n, shift + n, o);
    }
}
#endif


/* ---------------------------------------------------------------------------------
 * Depthwise 3x3 along one axis: dot products over the taps.
 *
 * The input of one channel is transposed into lines (bytes along the "fast" axis, one
 * line per position of the other axis); a 3x3 window is then 3 lines x 3 consecutive
 * bytes. For 4 outputs side by side (a strip), each line's bytes are loaded as words and
 * multiplied with the 3 weights of that kernel line placed at the byte offsets each
 * output needs ("shifted weights"):
 *   stride 1: words X0 = x0..x3, X1 = x4..x7:
 *     out0 = X0.(w0 w1 w2 0)   out1 = X0.(0 w0 w1 w2)
 *     out2 = X0.(0 0 w0 w1) + X1.(w2 0 0 0)   out3 = X0.(0 0 0 w0) + X1.(w1 w2 0 0)
 *   stride 2: X0, X1, X2 = x0..x11:
 *     out0 = X0.A  out1 = X0.B + X1.C  out2 = X1.A  out3 = X1.B + X2.C
 *     with A = (w0 w1 w2 0), B = (0 0 w0 w1), C = (w2 0 0 0)
 * 18 (9) weight words live in registers for a whole call; per strip and line 2 (3) word
 * loads and 6 dot products: 36 MACs in 28 (31) cycles with the 4 stores. The first
 * product of each output is cv.dotsp.b (no accumulator to clear); the caller adds
 * bias + input offset x filter sum when it requantizes.
 * ------------------------------------------------------------------------------- */
typedef struct
{
    const int8_t *r0, *r1, *r2; /* 0, 4, 8: the 3 input lines of the first output line */
    int32_t adv;                /* 12: added to r0..r2 after each output line (after the strips' own steps) */
    int32_t nstrips;            /* 16: strips per output line, >= 1 */
    int32_t nlines;             /* 20: output lines, >= 1 */
    const uint32_t *wq;         /* 24: 18 (stride 1) or 9 (stride 2) weight words */
    int32_t *out;               /* 28: 4 * nstrips * nlines accumulators */
} cv_xdw_args;

/* Registers: weights s0-s11, a2-a7; accumulators t3-t6; line words t1, t2; line pointers
   a0, a1, t0; output pointer ra. Locals: nstrips at 52(sp), adv at 56(sp). */
CV_XCV_NAKED void cv_xdw3_s1(const cv_xdw_args *args)
{
    (void)args;
    __asm__ volatile(
        ".option push\n\t"
        ".option norvc\n\t" XCV_PROLOGUE "lw t1, 16(a0)\n\t"
        "lw t2, 12(a0)\n\t"
        "lw t3, 20(a0)\n\t"
        "lw t4, 24(a0)\n\t"
        "sw t1, 52(sp)\n\t"
        "sw t2, 56(sp)\n\t"
        "lw a1, 4(a0)\n\t"
        "lw t0, 8(a0)\n\t"
        "lw ra, 28(a0)\n\t"
        "lw a0, 0(a0)\n\t"
        "lw s0, 0(t4)\n\tlw s1, 4(t4)\n\tlw s2, 8(t4)\n\tlw s3, 12(t4)\n\tlw s4, 16(t4)\n\tlw s5, 20(t4)\n\t"
        "lw s6, 24(t4)\n\tlw s7, 28(t4)\n\tlw s8, 32(t4)\n\tlw s9, 36(t4)\n\tlw s10, 40(t4)\n\tlw s11, 44(t4)\n\t"
        "lw a2, 48(t4)\n\tlw a3, 52(t4)\n\tlw a4, 56(t4)\n\tlw a5, 60(t4)\n\tlw a6, 64(t4)\n\tlw a7, 68(t4)\n\t"
        "1:\n\t" XCV_SETUP(1, 28, 1b, 4f) "lw t4, 52(sp)\n\t"
        "2:\n\t" XCV_SETUP(0, 29, 2b, 3f)
        /* line 0 */
        XCV_LW_PI(t1, a0, 4) "lw t2, 0(a0)\n\t" XCV_DOTSP(t3, t1, s0) XCV_DOTSP(t4, t1, s1) XCV_DOTSP(t5, t1, s2)
            XCV_DOTSP(t6, t1, s3) XCV_LW_PI(t1, a1, 4) XCV_SDOTSP(t5, t2, s4) XCV_SDOTSP(t6, t2, s5)
        /* line 1 */
        "lw t2, 0(a1)\n\t" XCV_SDOTSP(t3, t1, s6) XCV_SDOTSP(t4, t1, s7) XCV_SDOTSP(t5, t1, s8) XCV_SDOTSP(t6, t1, s9)
            XCV_LW_PI(t1, t0, 4) XCV_SDOTSP(t5, t2, s10) XCV_SDOTSP(t6, t2, s11)
        /* line 2 */
        "lw t2, 0(t0)\n\t" XCV_SDOTSP(t3, t1, a2) XCV_SDOTSP(t4, t1, a3) XCV_SDOTSP(t5, t1, a4) XCV_SDOTSP(t6, t1, a5)
            XCV_SDOTSP(t5, t2, a6) XCV_SDOTSP(t6, t2, a7) XCV_SW_PI(t3, ra, 4) XCV_SW_PI(t4, ra, 4)
                XCV_SW_PI(t5, ra, 4) XCV_SW_PI(t6, ra, 4) "3:\n\t"
        "lw t1, 56(sp)\n\t"
        "add a0, a0, t1\n\t"
        "add a1, a1, t1\n\t"
        "add t0, t0, t1\n\t"
        "4:\n\t" XCV_EPILOGUE ".option pop\n\t");
}

/* Stride 2: weights s0-s8, third line word s9. */
CV_XCV_NAKED void cv_xdw3_s2(const cv_xdw_args *args)
{
    (void)args;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t" XCV_PROLOGUE "lw t1, 16(a0)\n\t"
                     "lw t2, 12(a0)\n\t"
                     "lw t3, 20(a0)\n\t"
                     "lw t4, 24(a0)\n\t"
                     "sw t1, 52(sp)\n\t"
                     "sw t2, 56(sp)\n\t"
                     "lw a1, 4(a0)\n\t"
                     "lw t0, 8(a0)\n\t"
                     "lw ra, 28(a0)\n\t"
                     "lw a0, 0(a0)\n\t"
                     "lw s0, 0(t4)\n\tlw s1, 4(t4)\n\tlw s2, 8(t4)\n\tlw s3, 12(t4)\n\tlw s4, 16(t4)\n\t"
                     "lw s5, 20(t4)\n\tlw s6, 24(t4)\n\tlw s7, 28(t4)\n\tlw s8, 32(t4)\n\t"
                     "1:\n\t" XCV_SETUP(1, 28, 1b, 4f) "lw t4, 52(sp)\n\t"
                     "2:\n\t" XCV_SETUP(0, 29, 2b, 3f)
                     /* line 0 */
                     XCV_LW_PI(t1, a0, 4) XCV_LW_PI(t2, a0, 4) "lw s9, 0(a0)\n\t" XCV_DOTSP(t3, t1, s0)
                         XCV_DOTSP(t4, t1, s1) XCV_SDOTSP(t4, t2, s2) XCV_DOTSP(t5, t2, s0) XCV_DOTSP(t6, t2, s1)
                             XCV_SDOTSP(t6, s9, s2)
                     /* line 1 */
                     XCV_LW_PI(t1, a1, 4) XCV_LW_PI(t2, a1, 4) "lw s9, 0(a1)\n\t" XCV_SDOTSP(t3, t1, s3)
                         XCV_SDOTSP(t4, t1, s4) XCV_SDOTSP(t4, t2, s5) XCV_SDOTSP(t5, t2, s3) XCV_SDOTSP(t6, t2, s4)
                             XCV_SDOTSP(t6, s9, s5)
                     /* line 2 */
                     XCV_LW_PI(t1, t0, 4) XCV_LW_PI(t2, t0, 4) "lw s9, 0(t0)\n\t" XCV_SDOTSP(t3, t1, s6)
                         XCV_SDOTSP(t4, t1, s7) XCV_SDOTSP(t4, t2, s8) XCV_SDOTSP(t5, t2, s6) XCV_SDOTSP(t6, t2, s7)
                             XCV_SDOTSP(t6, s9, s8) XCV_SW_PI(t3, ra, 4) XCV_SW_PI(t4, ra, 4) XCV_SW_PI(t5, ra, 4)
                                 XCV_SW_PI(t6, ra, 4) "3:\n\t"
                     "lw t1, 56(sp)\n\t"
                     "add a0, a0, t1\n\t"
                     "add a1, a1, t1\n\t"
                     "add t0, t0, t1\n\t"
                     "4:\n\t" XCV_EPILOGUE ".option pop\n\t");
}

/*
 * Convolution panels (arm_convolve_s8.c): `rows` kernel rows of 2 x pairs aligned
 * words each into a panel row (dst: panel + 4 r, word k at dst + 16 k), the source
 * advancing by adv bytes after each kernel row's words. Two words per 4 cycles in
 * hardware loops (post-increment loads and stores), where the C loop took about 6
 * cycles a word. rows, pairs >= 1. Caller-saved registers only.
 */
CV_XCV_NAKED void cv_xpanel_rows(int8_t *dst, const int8_t *src, int32_t pairs, int32_t rows, int32_t adv)
{
    (void)dst;
    (void)src;
    (void)pairs;
    (void)rows;
    (void)adv;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "mv t2, a2\n\t"
                     "1:\n\t" XCV_SETUP(1, 13, 1b, 4f)
                     "2:\n\t" XCV_SETUP(0, 7, 2b, 3f)
                     XCV_LW_PI(t0, a1, 4) XCV_LW_PI(t1, a1, 4) XCV_SW_PI(t0, a0, 16) XCV_SW_PI(t1, a0, 16)
                     "3:\n\t"
                     "add a1, a1, a4\n\t"
                     /* (the outer loop ends two instructions after the inner one) */
                     "nop\n\t"
                     "4:\n\t"
                     "ret\n\t"
                     ".option pop\n\t");
}

/*
 * A matrix product's panel (arm_nn_mat_mult_nt_t_s8.c: the 4 rows of a 1x1 convolution's
 * output pixels): rows r0..r3 of `groups` words each into panel rows 0..3 (word k of row r
 * at panel + 16 k + 4 r), a word from each row, then the 4 stores, in one hardware loop.
 * One call a panel, where cv_xpanel_rows took one a row. groups >= 1. Caller-saved
 * registers only.
 */
CV_XCV_NAKED void cv_xpanel_4rows(int8_t *panel,
                                  const int8_t *r0,
                                  const int8_t *r1,
                                  const int8_t *r2,
                                  const int8_t *r3,
                                  int32_t groups)
{
    (void)panel;
    (void)r0;
    (void)r1;
    (void)r2;
    (void)r3;
    (void)groups;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "1:\n\t" XCV_SETUP(0, 15, 1b, 2f) XCV_LW_PI(t0, a1, 4) XCV_LW_PI(t1, a2, 4) XCV_LW_PI(t2, a3, 4)
                         XCV_LW_PI(t3, a4, 4) XCV_SW_PI(t0, a0, 4) XCV_SW_PI(t1, a0, 4) XCV_SW_PI(t2, a0, 4)
                             XCV_SW_PI(t3, a0, 4) "2:\n\t"
                     "ret\n\t"
                     ".option pop\n\t");
}

/* The same for 5 rows (cv_xgemm_5x4q's panels: 20 bytes a group) */
CV_XCV_NAKED void cv_xpanel_5rows(int8_t *panel,
                                  const int8_t *r0,
                                  const int8_t *r1,
                                  const int8_t *r2,
                                  const int8_t *r3,
                                  const int8_t *r4,
                                  int32_t groups)
{
    (void)panel;
    (void)r0;
    (void)r1;
    (void)r2;
    (void)r3;
    (void)r4;
    (void)groups;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "1:\n\t" XCV_SETUP(0, 16, 1b, 2f) XCV_LW_PI(t0, a1, 4) XCV_LW_PI(t1, a2, 4) XCV_LW_PI(t2, a3, 4)
                         XCV_LW_PI(t3, a4, 4) XCV_LW_PI(t4, a5, 4) XCV_SW_PI(t0, a0, 4) XCV_SW_PI(t1, a0, 4)
                             XCV_SW_PI(t2, a0, 4) XCV_SW_PI(t3, a0, 4) XCV_SW_PI(t4, a0, 4) "2:\n\t"
                     "ret\n\t"
                     ".option pop\n\t");
}

/* cv.insert rD, rs1, Is3, Is2: rD's bits Is2 .. Is2 + Is3 = rs1's low Is3 + 1 bits (f2 = 10:
   the immediate's bit 11, so written as a negative 12-bit number) */
#define XCV_INSERT(rd, rs1, is3, is2) ".insn i 0x5b, 0, " #rd ", " #rs1 ", (" #is3 " << 5 | " #is2 ") - 2048\n\t"

/*
 * A run of n >= 1 windows of a 3x3 kernel over 3 channels (RGB), all inside the input,
 * into consecutive panel rows from dst on (arm_convolve_s8.c's cv_panel_gather_3x3x3, word
 * for word): the window's three runs of 9 bytes, row_step apart, as the panel row's 7
 * words (word k at dst + 16 k; the last word's fourth byte 0), windows pixel_step bytes
 * apart. Per window 9 loads (at any alignment), two cv.insert for the words that join two
 * runs, 7 stores: 19 instructions in a hardware loop, where the C took about 70 cycles a
 * window. Caller-saved registers only.
 */
CV_XCV_NAKED void cv_xrgb3x3_run(int8_t *dst, const int8_t *p0, int32_t row_step, int32_t n, int32_t pixel_step)
{
    (void)dst;
    (void)p0;
    (void)row_step;
    (void)n;
    (void)pixel_step;
    /* a1: the window's row 0, a5: row 1 less 1 byte, a6: row 2 less 2 bytes */
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "add a5, a1, a2\n\t"
                     "addi a5, a5, -1\n\t"
                     "add a6, a5, a2\n\t"
                     "addi a6, a6, -1\n"
                     "1:\n\t" XCV_SETUP(0, 13, 1b, 2f) "lhu t4, 8(a5)\n\t"
                     "lbu t0, 8(a1)\n\t"
                     "lw t1, 4(a1)\n\t" XCV_LW_PR(t2, a1, a4) "lw t5, 4(a5)\n\t" XCV_LW_PR(t3, a5, a4)
                     "lw t6, 7(a6)\n\t"
                     "sw t1, 16(a0)\n\t" XCV_INSERT(t3, t0, 7, 0) "lw t1, 4(a6)\n\t" XCV_LW_PR(t0, a6, a4)
                     "sw t5, 48(a0)\n\t"
                     "srli t6, t6, 8\n\t" XCV_INSERT(t0, t4, 15, 0) "sw t3, 32(a0)\n\t"
                     "sw t1, 80(a0)\n\t"
                     "sw t0, 64(a0)\n\t"
                     "sw t6, 96(a0)\n\t" XCV_SW_PI(t2, a0, 4) "2:\n\t"
                     "ret\n\t"
                     ".option pop\n\t");
}

/* The 4 bytes b0..b3 as a word, b0 at the lowest address. */
CV_INLINE uint32_t cv_xbytes(int32_t b0, int32_t b1, int32_t b2, int32_t b3)
{
    return (uint32_t)(uint8_t)b0 | (uint32_t)(uint8_t)b1 << 8 | (uint32_t)(uint8_t)b2 << 16 |
           (uint32_t)(uint8_t)b3 << 24;
}

/* The weight words of one kernel line for stride 1 (6) or 2 (3): all are
   a0 = (t0 t1 t2 0), its 3 taps, shifted. */
CV_INLINE uint32_t *cv_xdw3_line_words(uint32_t *q, uint32_t a0, int32_t stride)
{
    if (stride == 1)
    {
        q[0] = a0;
        q[1] = a0 << 8;
        q[2] = a0 << 16;
        q[3] = a0 << 24;
        q[4] = a0 >> 16;
        q[5] = a0 >> 8;
        return q + 6;
    }
    q[0] = a0;
    q[1] = a0 << 16;
    q[2] = a0 >> 16;
    return q + 3;
}

/* cv.shuffle2.b: byte i of the result is byte sel[i] & 3 of (sel[i] & 4 ? s : d). */
CV_INLINE uint32_t cv_xshuffle2(uint32_t d, uint32_t s, uint32_t sel)
{
    __asm__(".insn r 0x7b, 1, 0x70, %0, %1, %2" : "+r"(d) : "r"(s), "r"(sel));
    return d;
}

/* cv.shuffle2.b rd, rs1, rs2: byte i of rd becomes byte rs2[i] & 3 of (rs2[i] & 4 ? rs1 : rd)
   (funct7 1110000) */
#define XCV_SHUFFLE2(rd, a, b) ".insn r 0x7b, 1, 0x70, " #rd ", " #a ", " #b "\n\t"

/* nwords (a multiple of 4, >= 4) copies of v from the aligned p on. */
CV_XCV_NAKED void cv_xfill_words(uint32_t *p, uint32_t v, int32_t nwords)
{
    (void)p;
    (void)v;
    (void)nwords;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "srli a2, a2, 2\n\t"
                     "1:\n\t" XCV_SETUP(0, 12, 1b, 2f) XCV_SW_PI(a1, a0, 4) XCV_SW_PI(a1, a0, 4) XCV_SW_PI(a1, a0, 4)
                         XCV_SW_PI(a1, a0, 4) "2:\n\t"
                     "ret\n\t"
                     ".option pop\n\t");
}

/* n >= 1 words from src, src + step, ... to d, d + dstep, ... (bytes): an odd first one,
   then pairs in a hardware loop, 4 cycles a pair (in C about 10 cycles a word). */
CV_XCV_SHARED_NAKED void cv_xgather_words(uint32_t *d, const int8_t *src, int32_t step, int32_t n, int32_t dstep)
{
    (void)d;
    (void)src;
    (void)step;
    (void)n;
    (void)dstep;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "andi t2, a3, 1\n\t"
                     "beqz t2, 1f\n\t" XCV_LW_PR(t0, a1, a2) XCV_SW_PR(t0, a0, a4) "1:\n\t"
                     "srli a3, a3, 1\n\t"
                     "beqz a3, 3f\n"
                     "2:\n\t" XCV_SETUP(0, 13, 2b, 3f) XCV_LW_PR(t0, a1, a2) XCV_LW_PR(t1, a1, a2)
                         XCV_SW_PR(t0, a0, a4) XCV_SW_PR(t1, a0, a4) "3:\n\t"
                     "ret\n\t"
                     ".option pop\n\t");
}

/* 5 panel rows at once (cv_xgemm_5x4q's panels: 20 bytes a group) from 5 pixels of one
   line, a word each kernel row: for each of n kernel rows (row_step bytes apart) the
   words at src, src + pix_step, ... src + 4 pix_step into dst[0..4], then dst += 5. In
   a hardware loop, 11 cycles a kernel row (the 5 rows one at a time took about 80
   cycles each: the small DS-CNN's first layer 5 K cycles more). */
CV_XCV_SHARED_NAKED void cv_xgather5_words(uint32_t *dst, const int8_t *src, int32_t row_step, int32_t n, int32_t pix_step)
{
    (void)dst;
    (void)src;
    (void)row_step;
    (void)n;
    (void)pix_step;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "slli t0, a4, 2\n\t"
                     "add t0, t0, a4\n\t"
                     "sub a2, a2, t0\n"
                     "1:\n\t" XCV_SETUP(0, 13, 1b, 2f) XCV_LW_PR(t0, a1, a4) XCV_LW_PR(t1, a1, a4) XCV_LW_PR(t2, a1, a4)
                         XCV_LW_PR(t3, a1, a4) XCV_LW_PR(t4, a1, a4) "add a1, a1, a2\n\t" XCV_SW_PI(t0, a0, 4)
                             XCV_SW_PI(t1, a0, 4) XCV_SW_PI(t2, a0, 4) XCV_SW_PI(t3, a0, 4) XCV_SW_PI(t4, a0, 4) "2:\n\t"
                     "ret\n\t"
                     ".option pop\n\t");
}

/* One pixel of the transposer: its word (post-increment by step) into 4 lines (a2-a5,
   post-increment by 1); 9 cycles (the load's result is used at once). */
#define XCV_TR4_PIXEL                                                                                                  \
    XCV_LW_PR(t1, a0, a1) XCV_SB_PI(t1, a2, 1) "srli t6, t1, 8\n\t" XCV_SB_PI(t6, a3, 1) "srli t6, t1, 16\n\t"           \
        XCV_SB_PI(t6, a4, 1) "srli t6, t1, 24\n\t" XCV_SB_PI(t6, a5, 1)

/*
 * n pixels of 4 channels (4 bytes at src, src + step, ...) into 4 lines of bytes
 * (channel j at line + j * Lb, positions pos .. pos + n - 1; line and Lb word aligned):
 * pixels one at a time up to a word boundary of the lines (9 cycles each), then blocks
 * of 4 pixels (4 loads post-incremented by step, a 4 x 4 byte transpose in 8
 * cv.shuffle2.b, 4 word stores: 20 cycles per 16 bytes), then the rest one at a time,
 * each part in a hardware loop. With the pixels around the blocks in C and the blocks
 * in a call of their own, DS-CNN's 3x3 layers took 7 K cycles each more.
 * nlines (>= 1) such groups of 4 lines in one call: group i from src + i * src_adv into
 * line + 4 i Lb (a band of cv_xdw3x3_band: a call a group took the small DS-CNN's 3x3
 * layers about 0.9 K cycles more each). Caller-saved registers only; the counts and the
 * next group's pointers on the stack.
 */
CV_XCV_NAKED void
cv_xtranspose4(const int8_t *src, int32_t step, int8_t *line, int32_t Lb, int32_t pos, int32_t n, int32_t nlines, int32_t src_adv)
{
    (void)src;
    (void)step;
    (void)line;
    (void)Lb;
    (void)pos;
    (void)n;
    (void)nlines;
    (void)src_adv;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "addi sp, sp, -32\n\t"
                     "add a2, a2, a4\n\t"
                     "neg t0, a4\n\t"
                     "andi t0, t0, 3\n\t" XCV_MIN(t0, t0, a5) "sub t3, a5, t0\n\t"
                     "andi t2, t3, 3\n\t"
                     "srli t3, t3, 2\n\t"
                     /* 0: src, 4: line + pos, 8: Lb, 12: groups left, 16: src_adv, 20, 24, 28: the
                        counts of the pixels before the blocks, the blocks, the rest */
                     "sw a0, 0(sp)\n\tsw a2, 4(sp)\n\tsw a3, 8(sp)\n\tsw a6, 12(sp)\n\tsw a7, 16(sp)\n\t"
                     "sw t0, 20(sp)\n\tsw t3, 24(sp)\n\tsw t2, 28(sp)\n\t"
                     "li a6, 0x06020400\n\t"
                     "li a7, 0x07030501\n\t"
                     "li t5, 0x05040100\n\t"
                     "li t4, 0x07060302\n"
                     /* a group of 4 lines: a0 = its pixels, a2 = line + pos */
                     "9:\n\t"
                     "lw t1, 8(sp)\n\t"
                     "add a3, a2, t1\n\t"
                     "add a4, a3, t1\n\t"
                     "add a5, a4, t1\n\t"
                     "beqz t0, 2f\n"
                     "1:\n\t" XCV_SETUP(0, 5, 1b, 2f) XCV_TR4_PIXEL "2:\n\t"
                     "beqz t3, 4f\n"
                     "3:\n\t" XCV_SETUP(0, 28, 3b, 5f) XCV_LW_PR(t0, a0, a1) XCV_LW_PR(t1, a0, a1)
                         XCV_LW_PR(t2, a0, a1) XCV_LW_PR(t3, a0, a1) "mv t6, t0\n\t" XCV_SHUFFLE2(t6, t1, a6)
                             XCV_SHUFFLE2(t0, t1, a7) "mv t1, t2\n\t" XCV_SHUFFLE2(t1, t3, a6)
                                 XCV_SHUFFLE2(t2, t3, a7) "mv t3, t6\n\t" XCV_SHUFFLE2(t3, t1, t5)
                                     XCV_SHUFFLE2(t6, t1, t4) "mv t1, t0\n\t" XCV_SHUFFLE2(t1, t2, t5)
                                         XCV_SHUFFLE2(t0, t2, t4) XCV_SW_PI(t3, a2, 4) XCV_SW_PI(t1, a3, 4)
                                             XCV_SW_PI(t6, a4, 4) XCV_SW_PI(t0, a5, 4) "5:\n"
                     "4:\n\t"
                     "lw t2, 28(sp)\n\t"
                     "beqz t2, 7f\n"
                     "6:\n\t" XCV_SETUP(0, 7, 6b, 7f) XCV_TR4_PIXEL "7:\n\t"
                     /* the next group */
                     "lw t0, 12(sp)\n\t"
                     "addi t0, t0, -1\n\t"
                     "beqz t0, 8f\n\t"
                     "sw t0, 12(sp)\n\t"
                     "lw a0, 0(sp)\n\t"
                     "lw t1, 16(sp)\n\t"
                     "lw a2, 4(sp)\n\t"
                     "lw t2, 8(sp)\n\t"
                     "add a0, a0, t1\n\t"
                     "slli t2, t2, 2\n\t"
                     "add a2, a2, t2\n\t"
                     "sw a0, 0(sp)\n\t"
                     "sw a2, 4(sp)\n\t"
                     "lw t0, 20(sp)\n\t"
                     "lw t3, 24(sp)\n\t"
                     "j 9b\n"
                     "8:\n\t"
                     "addi sp, sp, 32\n\t"
                     "ret\n\t"
                     ".option pop\n\t");
}
#undef XCV_TR4_PIXEL

#if defined(CV_WANT_RQ_LINES)
/*
 * Requantize nlines lines of n outputs of one channel (cv_xrq_make's mode): line l's
 * accumulators at acc + l * (n + askip), plus c->q.add; its outputs at
 * dst + l * dline + i * dstep. The output stage is cv_xgemm_4x4q's, split by the
 * sum's sign (it branches, so the loop is counted, 4 outputs an iteration, not a
 * hardware loop): 10 instructions for a sum >= 0 (the add, XCV_RQ_SPLIT), 5 for a sum < 0
 * under a ReLU.
 * c->nlines (>= 1) is counted down to 0. Caller-saved registers and s0.
 */
typedef struct
{
    cv_xrq_args q;  /* 0..47 */
    int32_t nlines; /* 48 */
    int32_t askip;  /* 52: accumulators to skip after each line */
    int32_t dline;  /* 56: bytes from one line's first output to the next's */
} cv_xrq_lines_args;

/* One output in register V: t3 = add, a5 = mh, a7 = f, a6 = xlim, t4 temporary, t5 =
   zero, a2 = output pointer, a3 = output step. */
#define XCV_RQ1_STORE(R) XCV_SB_PR(R, a2, a3)
#define XCV_RQ1(V, L) "add " #V ", " #V ", t3\n\t" XCV_RQ_SPLIT(V, a5, a7, a6, t4, XCV_RQ1_STORE, L)
#define XCV_RQ1_FIX(V, L) XCV_RQ_SPLIT_FIX(V, t5, t4, XCV_RQ1_STORE, L)

CV_XCV_SHARED_NAKED void cv_xrq_lines(const int32_t *acc, int32_t n, int8_t *dst, int32_t dstep, cv_xrq_lines_args *c)
{
    (void)acc;
    (void)n;
    (void)dst;
    (void)dstep;
    (void)c;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "addi sp, sp, -16\n\t"
                     "sw s0, 0(sp)\n\t"
                     "lw t3, 0(a4)\n\t"
                     "lw a5, 4(a4)\n\t"
                     "lw a7, 8(a4)\n\t"
                     "lw a6, 12(a4)\n\t"
                     "lw t5, 24(a4)\n\t"
                     "5:\n\t"
                     "srli s0, a1, 2\n\t"
                     "beqz s0, 2f\n\t"
                     "1:\n\t" XCV_LW_PI(t1, a0, 4) XCV_LW_PI(t2, a0, 4) XCV_RQ1(t1, 60) XCV_LW_PI(t1, a0, 4)
                         XCV_RQ1(t2, 61) XCV_LW_PI(t2, a0, 4) XCV_RQ1(t1, 62) XCV_RQ1(t2, 63)
                     "addi s0, s0, -1\n\t"
                     "bnez s0, 1b\n"
                     "2:\n\t"
                     "andi s0, a1, 3\n\t"
                     "beqz s0, 4f\n"
                     "3:\n\t" XCV_LW_PI(t1, a0, 4) "addi s0, s0, -1\n\t" XCV_RQ1(t1, 64)
                     "bnez s0, 3b\n"
                     "4:\n\t"
                     "lw t0, 52(a4)\n\t"
                     "lw t1, 56(a4)\n\t"
                     "slli t0, t0, 2\n\t"
                     "add a0, a0, t0\n\t"
                     "mul t0, a1, a3\n\t"
                     "sub t1, t1, t0\n\t"
                     "add a2, a2, t1\n\t"
                     "lw t0, 48(a4)\n\t"
                     "addi t0, t0, -1\n\t"
                     "sw t0, 48(a4)\n\t"
                     "bnez t0, 5b\n\t"
                     "lw s0, 0(sp)\n\t"
                     "addi sp, sp, 16\n\t"
                     "ret\n" XCV_RQ1_FIX(t1, 60) XCV_RQ1_FIX(t2, 61) XCV_RQ1_FIX(t1, 62) XCV_RQ1_FIX(t2, 63)
                         XCV_RQ1_FIX(t1, 64) XCV_RQ_SHARED(t4, a5, a6, a7, t3, "lw a6, 12(a4)\n\tlw a7, 8(a4)\n\tlw t3, 0(a4)\n\t", "16(a4)", "20(a4)", "36(a4)", "40(a4)",
                                                           "44(a4)", "28(a4)", "32(a4)", XCV_RQ1_STORE) ".option pop\n\t");
}
#undef XCV_RQ1
#undef XCV_RQ1_FIX
#undef XCV_RQ1_STORE
#endif
/* (XCV_RQ_SPLIT, XCV_RQ_SPLIT_IN and XCV_RQ_EXACT stay defined: arm_depthwise_conv_3x3_s8.c's
   kernels use them) */
#undef XCV_RQ_SPLIT_FIX

/* cv.lw rd, rs2(rs1): load from rs1 + rs2 (funct7 0000110) */
#define XCV_LW_RR(rd, rs1, rs2) ".insn r 0x2b, 3, 0x06, " #rd ", " #rs1 ", " #rs2 "\n\t"
/*
 * Element-wise addition through two tables: out[i] = requantize(t1[a[i]] + t2[b[i]]) +
 * out_off, clamped (mode 1 of cv_xq), where t1/t2 are the requantized inputs of every
 * int8 value (int32, indexed from -128: the pointers are to entry 0). Per element 2
 * post-increment byte loads, 2 table loads (register + register), the output stage:
 * 22 cycles, in a hardware loop. n >= 1. Caller-saved registers only.
 */
typedef struct
{
    const int32_t *t1, *t2; /* 0, 4: entry 0 of each table */
    uint32_t m2;            /* 8 */
    uint32_t ps;            /* 12: pre << 8 | sh */
    int32_t out_off;        /* 16 */
    int32_t act_min;        /* 20 */
    int32_t act_max;        /* 24 */
} cv_xadd_args;

CV_XCV_NAKED void cv_xadd_lut(const int8_t *a, const int8_t *b, int8_t *out, int32_t n, const cv_xadd_args *c)
{
    (void)a;
    (void)b;
    (void)out;
    (void)n;
    (void)c;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "lw a5, 0(a4)\n\t"
                     "lw a6, 4(a4)\n\t"
                     "lw a7, 8(a4)\n\t"
                     "lw t3, 12(a4)\n\t"
                     "lw t4, 16(a4)\n\t"
                     "lw t5, 20(a4)\n\t"
                     "lw t6, 24(a4)\n\t"
                     "srli a4, t3, 8\n\t"
                     "1:\n\t" XCV_SETUP(0, 13, 1b, 2f) XCV_LB_PI(t0, a0, 1) XCV_LB_PI(t1, a1, 1) "slli t0, t0, 2\n\t"
                     "slli t1, t1, 2\n\t" XCV_LW_RR(t0, a5, t0) XCV_LW_RR(t1, a6, t1) "add t0, t0, t1\n\t"
                     "mul t1, t0, a7\n\t"
                     "mulhsu t0, t0, a7\n\t"
                     "srli t1, t1, 31\n\t"
                     "add t0, t0, t1\n\t"
                     "slt t1, t0, zero\n\t" XCV_SUBNR(t0, t1, a4) XCV_ADDRNR(t0, zero, t3) "add t0, t0, t4\n\t"
                         XCV_MAX(t0, t0, t5) XCV_MIN(t0, t0, t6) XCV_SB_PI(t0, a2, 1) "2:\n\t"
                     "ret\n\t"
                     ".option pop\n\t");
}

/*
 * Element-wise addition through two tables of the output's scale: out[i] =
 * (T1[a[i]] + T2[b[i]]) >> 16, clamped, where T1/T2 (int32, indexed from -128) are each
 * input's requantized value times the output's multiplier, in units of 2^-16 of an
 * output step, rounded down, and T1 also holds the bias 2^15 + 8 + 1 (for the two
 * roundings down) + out_off 2^16, so that the loop has one add less
 * (arm_elementwise_add_s8.c builds them and says when this is exact). An element whose
 * sum has its low 16 bits below 16 lies within 8 units of a half-integer: the loop stops
 * there, before storing it, and returns how many it stored (the caller computes that
 * element exactly and calls again). Per element 2 post-increment byte loads, 2 table
 * loads (register + register), the add, the test, the shift, the clamps and the store:
 * 13 instructions, where cv_xadd_lut's exact output stage took 22 cycles an element.
 * Four elements an iteration of a counted loop (the test branches, so no hardware loop),
 * their loads first: the later ones' hide the earlier ones' load-use stalls, and the
 * loop's branch is paid once for four (with the bias in T1, the small residual net's
 * additions 2.7 cycles an element less than one at a time). The last 1 to 3 elements one at a time.
 * Elements 0 .. m - 1, m >= 1. Saves s0 to s3 on the stack.
 */
typedef struct
{
    const int32_t *T1, *T2; /* 0, 4: entry 0 of each table */
    int32_t act_min;        /* 8 */
    int32_t act_max;        /* 12 */
} cv_xadd_near_args;

/* An element's table entries into R (T1's) and Q (T2's), then added into R */
#define XCV_ADD_NEAR_LOAD(R, Q) XCV_LB_PI(R, a0, 1) XCV_LB_PI(Q, a1, 1)
#define XCV_ADD_NEAR_TABLES(R, Q) "slli " #R ", " #R ", 2\n\tslli " #Q ", " #Q ", 2\n\t" XCV_LW_RR(R, a5, R) XCV_LW_RR(Q, a6, Q)
/* the test (Q: a temporary), the shift, the clamps, the store */
#define XCV_ADD_NEAR_STORE(R, Q)                                                                                       \
    "slli " #Q ", " #R ", 16\n\tbltu " #Q ", a7, 8f\n\tsrai " #R ", " #R ", 16\n\t" XCV_MAX(R, R, t4) XCV_MIN(R, R, t5)      \
        XCV_SB_PI(R, a2, 1)

CV_XCV_NAKED int32_t cv_xadd_near(const int8_t *a, const int8_t *b, int8_t *out, int32_t m, const cv_xadd_near_args *c)
{
    (void)a;
    (void)b;
    (void)out;
    (void)m;
    (void)c;
    __asm__ volatile("lw a5, 0(a4)\n\t"
                     "lw a6, 4(a4)\n\t"
                     "lw t4, 8(a4)\n\t"
                     "lw t5, 12(a4)\n\t"
                     "lui a7, 0x100\n\t"
                     "mv t6, a2\n\t"
                     "add a3, a3, a2\n\t"
                     "addi t3, a3, -3\n\t"
                     "addi sp, sp, -16\n\t"
                     "sw s0, 0(sp)\n\t"
                     "sw s1, 4(sp)\n\t"
                     "sw s2, 8(sp)\n\t"
                     "sw s3, 12(sp)\n\t"
                     "bgeu a2, t3, 2f\n"
                     /* four elements while four are left (t3: 3 before the end) */
                     "1:\n\t" XCV_ADD_NEAR_LOAD(t0, t1) XCV_ADD_NEAR_LOAD(t2, a4) XCV_ADD_NEAR_LOAD(s0, s1)
                         XCV_ADD_NEAR_LOAD(s2, s3) XCV_ADD_NEAR_TABLES(t0, t1) XCV_ADD_NEAR_TABLES(t2, a4)
                             XCV_ADD_NEAR_TABLES(s0, s1) XCV_ADD_NEAR_TABLES(s2, s3) "add t0, t0, t1\n\tadd t2, t2, a4\n\t"
                     "add s0, s0, s1\n\tadd s2, s2, s3\n\t" XCV_ADD_NEAR_STORE(t0, t1) XCV_ADD_NEAR_STORE(t2, a4)
                         XCV_ADD_NEAR_STORE(s0, s1) XCV_ADD_NEAR_STORE(s2, s3) "bltu a2, t3, 1b\n"
                     "2:\n\t"
                     "beq a2, a3, 8f\n\t" XCV_ADD_NEAR_LOAD(t0, t1) XCV_ADD_NEAR_TABLES(t0, t1)
                         "add t0, t0, t1\n\t" XCV_ADD_NEAR_STORE(t0, t1) "j 2b\n"
                     "8:\n\t"
                     "lw s0, 0(sp)\n\t"
                     "lw s1, 4(sp)\n\t"
                     "lw s2, 8(sp)\n\t"
                     "lw s3, 12(sp)\n\t"
                     "addi sp, sp, 16\n\t"
                     "sub a0, a2, t6\n\t"
                     "ret\n\t");
}
#undef XCV_ADD_NEAR_LOAD
#undef XCV_ADD_NEAR_TABLES
#undef XCV_ADD_NEAR_STORE

/*
 * s[j] += the n bytes p[j], p[j + step], ... for j < 4 (4 channels along a line of
 * pixels): per pixel one load (post-increment by step) and 4 cv.sdotsp.b against
 * (1 0 0 0) .. (0 0 0 1); an odd first pixel, then pairs in a hardware loop (5 cycles a
 * pixel, where one pixel an iteration waited a cycle for its load). n >= 1.
 * Caller-saved registers only.
 */
CV_XCV_NAKED void cv_xsum4(const int8_t *p, int32_t step, int32_t n, int32_t *s)
{
    (void)p;
    (void)step;
    (void)n;
    (void)s;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "lw t3, 0(a3)\n\t"
                     "lw t4, 4(a3)\n\t"
                     "lw t5, 8(a3)\n\t"
                     "lw t6, 12(a3)\n\t"
                     "li a4, 0x00000001\n\t"
                     "li a5, 0x00000100\n\t"
                     "li a6, 0x00010000\n\t"
                     "li a7, 0x01000000\n\t"
                     "andi t2, a2, 1\n\t"
                     "beqz t2, 1f\n\t" XCV_LW_PR(t0, a0, a1) "nop\n\t" XCV_SDOTSP(t3, t0, a4) XCV_SDOTSP(t4, t0, a5)
                         XCV_SDOTSP(t5, t0, a6) XCV_SDOTSP(t6, t0, a7) "1:\n\t"
                     "srli a2, a2, 1\n\t"
                     "beqz a2, 2f\n"
                     "3:\n\t" XCV_SETUP(0, 12, 3b, 2f) XCV_LW_PR(t0, a0, a1) XCV_LW_PR(t1, a0, a1) XCV_SDOTSP(t3, t0, a4)
                         XCV_SDOTSP(t4, t0, a5) XCV_SDOTSP(t5, t0, a6) XCV_SDOTSP(t6, t0, a7) XCV_SDOTSP(t3, t1, a4)
                             XCV_SDOTSP(t4, t1, a5) XCV_SDOTSP(t5, t1, a6) XCV_SDOTSP(t6, t1, a7) "2:\n\t"
                     "sw t3, 0(a3)\n\t"
                     "sw t4, 4(a3)\n\t"
                     "sw t5, 8(a3)\n\t"
                     "sw t6, 12(a3)\n\t"
                     "ret\n\t"
                     ".option pop\n\t");
}

/*
 * Fully connected: 4 weight rows (wstride apart; 0: one row 4 times) against the input
 * vector, over `groups` groups of 4 along K (>= 1): out[j] = sum of x . w_j and
 * out[4 + j] = sum of w_j (for the input offset). Per group one input word shared by
 * the 4 rows, 4 weight words, 8 cv.sdotsp.b: 16 MACs in 13 cycles, in a hardware loop.
 */
CV_XCV_NAKED void cv_xfc4(const int8_t *x, const int8_t *w, int32_t wstride, int32_t groups, int32_t *out)
{
    (void)x;
    (void)w;
    (void)wstride;
    (void)groups;
    (void)out;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "addi sp, sp, -16\n\t"
                     "sw s0, 0(sp)\n\t"
                     "sw s1, 4(sp)\n\t"
                     "sw s2, 8(sp)\n\t"
                     "sw ra, 12(sp)\n\t"
                     "add t0, a1, a2\n\t"
                     "add t1, t0, a2\n\t"
                     "add t2, t1, a2\n\t"
                     "li a2, 0x01010101\n\t"
                     "li a5, 0\n\tli a6, 0\n\tli a7, 0\n\tli t3, 0\n\t"
                     "li t4, 0\n\tli t5, 0\n\tli t6, 0\n\tli ra, 0\n\t"
                     "1:\n\t" XCV_SETUP(0, 13, 1b, 2f) XCV_LW_PI(s0, a0, 4) XCV_LW_PI(s1, a1, 4) XCV_LW_PI(s2, t0, 4)
                         XCV_SDOTSP(a5, s0, s1) XCV_SDOTSP(t4, s1, a2) XCV_LW_PI(s1, t1, 4) XCV_SDOTSP(a6, s0, s2)
                             XCV_SDOTSP(t5, s2, a2) XCV_LW_PI(s2, t2, 4) XCV_SDOTSP(a7, s0, s1) XCV_SDOTSP(t6, s1, a2)
                                 XCV_SDOTSP(t3, s0, s2) XCV_SDOTSP(ra, s2, a2) "2:\n\t"
                     "sw a5, 0(a4)\n\t"
                     "sw a6, 4(a4)\n\t"
                     "sw a7, 8(a4)\n\t"
                     "sw t3, 12(a4)\n\t"
                     "sw t4, 16(a4)\n\t"
                     "sw t5, 20(a4)\n\t"
                     "sw t6, 24(a4)\n\t"
                     "sw ra, 28(a4)\n\t"
                     "lw s0, 0(sp)\n\t"
                     "lw s1, 4(sp)\n\t"
                     "lw s2, 8(sp)\n\t"
                     "lw ra, 12(sp)\n\t"
                     "addi sp, sp, 16\n\t"
                     "ret\n\t"
                     ".option pop\n\t");
}

/* cv.sdotusp.b (funct7 1010000): rd += the 4 products of rs1's bytes as unsigned and
   rs2's as signed */
#define XCV_SDOTUSP(rd, a, b) ".insn r 0x7b, 1, 0x50, " #rd ", " #a ", " #b "\n\t"

/*
 * Fully connected, 8 weight rows (wstride apart) against the input vector x (words),
 * over `groups` groups of 4 along K (>= 1): out[j] = init[j] + x . w_j (the bias as the
 * accumulators' start: no pass over the outputs to add it). Per group one input word
 * shared by the 8 rows, 8 weight words, 8 dot products: 32 MACs in 17 cycles, in a
 * hardware loop (each load is used two instructions later: no stall). The input bytes
 * are signed (cv_xfc8: cv.sdotsp.b) or unsigned (cv_xfc8u: cv.sdotusp.b, for inputs
 * plus an offset that lie in 0..255). cv_xfc8 and cv_xfc4s are weak, one copy for the
 * fully connected kernel and cv_xrow_dots.
 */
#define CV_XFC8_BODY(DOT)                                                                                              \
    ".option push\n\t"                                                                                                \
    ".option norvc\n\t"                                                                                               \
    "addi sp, sp, -32\n\t"                                                                                            \
    "sw s0, 0(sp)\n\tsw s1, 4(sp)\n\tsw s2, 8(sp)\n\tsw s3, 12(sp)\n\tsw s4, 16(sp)\n\tsw ra, 20(sp)\n\t"             \
    "add t0, a1, a2\n\t"                                                                                              \
    "add t1, t0, a2\n\t"                                                                                              \
    "add t2, t1, a2\n\t"                                                                                              \
    "add s1, t2, a2\n\t"                                                                                              \
    "add s2, s1, a2\n\t"                                                                                              \
    "add s3, s2, a2\n\t"                                                                                              \
    "add s4, s3, a2\n\t"                                                                                              \
    "lw t3, 0(a5)\n\tlw t4, 4(a5)\n\tlw t5, 8(a5)\n\tlw t6, 12(a5)\n\tlw a6, 20(a5)\n\tlw a7, 24(a5)\n\t"                \
    "lw s0, 28(a5)\n\tlw a5, 16(a5)\n\t"                                                                                 \
    "1:\n\t" XCV_SETUP(0, 13, 1b, 2f) XCV_LW_PI(ra, a0, 4) XCV_LW_PI(a2, a1, 4) XCV_LW_PI(a3, t0, 4)              \
        DOT(t3, ra, a2) XCV_LW_PI(a2, t1, 4) DOT(t4, ra, a3) XCV_LW_PI(a3, t2, 4) DOT(t5, ra, a2)                   \
            XCV_LW_PI(a2, s1, 4) DOT(t6, ra, a3) XCV_LW_PI(a3, s2, 4) DOT(a5, ra, a2) XCV_LW_PI(a2, s3, 4)          \
                DOT(a6, ra, a3) XCV_LW_PI(a3, s4, 4) DOT(a7, ra, a2) DOT(s0, ra, a3) "2:\n\t"                        \
    "sw t3, 0(a4)\n\tsw t4, 4(a4)\n\tsw t5, 8(a4)\n\tsw t6, 12(a4)\n\t"                                                 \
    "sw a5, 16(a4)\n\tsw a6, 20(a4)\n\tsw a7, 24(a4)\n\tsw s0, 28(a4)\n\t"                                              \
    "lw s0, 0(sp)\n\tlw s1, 4(sp)\n\tlw s2, 8(sp)\n\tlw s3, 12(sp)\n\tlw s4, 16(sp)\n\tlw ra, 20(sp)\n\t"             \
    "addi sp, sp, 32\n\t"                                                                                             \
    "ret\n\t"                                                                                                         \
    ".option pop\n\t"

CV_XCV_SHARED_NAKED void cv_xfc8(const uint32_t *x, const int8_t *w, int32_t wstride, int32_t groups, int32_t *out,
                                 const int32_t *init)
{
    (void)x;
    (void)w;
    (void)wstride;
    (void)groups;
    (void)out;
    (void)init;
    __asm__ volatile(CV_XFC8_BODY(XCV_SDOTSP));
}

CV_XCV_NAKED void cv_xfc8u(const uint32_t *x, const int8_t *w, int32_t wstride, int32_t groups, int32_t *out,
                           const int32_t *init)
{
    (void)x;
    (void)w;
    (void)wstride;
    (void)groups;
    (void)out;
    (void)init;
    __asm__ volatile(CV_XFC8_BODY(XCV_SDOTUSP));
}
#undef CV_XFC8_BODY

/*
 * The same for 1 to 4 rows (wstride apart; 0: one row 4 times): out[j] = init[j] + x . w_j
 * for j < 4, 16 MACs in 9 cycles.
 */
#define CV_XFC4_BODY(DOT)                                                                                              \
    ".option push\n\t"                                                                                                \
    ".option norvc\n\t"                                                                                               \
    "add t0, a1, a2\n\t"                                                                                              \
    "add t1, t0, a2\n\t"                                                                                              \
    "add t2, t1, a2\n\t"                                                                                              \
    "lw t3, 0(a5)\n\tlw t4, 4(a5)\n\tlw t5, 8(a5)\n\tlw t6, 12(a5)\n\t"                                                  \
    "1:\n\t" XCV_SETUP(0, 13, 1b, 2f) XCV_LW_PI(a5, a0, 4) XCV_LW_PI(a6, a1, 4) XCV_LW_PI(a7, t0, 4)              \
        DOT(t3, a5, a6) XCV_LW_PI(a6, t1, 4) DOT(t4, a5, a7) XCV_LW_PI(a7, t2, 4) DOT(t5, a5, a6)                   \
            DOT(t6, a5, a7) "2:\n\t"                                                                                 \
    "sw t3, 0(a4)\n\tsw t4, 4(a4)\n\tsw t5, 8(a4)\n\tsw t6, 12(a4)\n\t"                                                 \
    "ret\n\t"                                                                                                         \
    ".option pop\n\t"

CV_XCV_SHARED_NAKED void cv_xfc4s(const uint32_t *x, const int8_t *w, int32_t wstride, int32_t groups, int32_t *out,
                                  const int32_t *init)
{
    (void)x;
    (void)w;
    (void)wstride;
    (void)groups;
    (void)out;
    (void)init;
    __asm__ volatile(CV_XFC4_BODY(XCV_SDOTSP));
}

CV_XCV_NAKED void cv_xfc4u(const uint32_t *x, const int8_t *w, int32_t wstride, int32_t groups, int32_t *out,
                           const int32_t *init)
{
    (void)x;
    (void)w;
    (void)wstride;
    (void)groups;
    (void)out;
    (void)init;
    __asm__ volatile(CV_XFC4_BODY(XCV_SDOTUSP));
}
#undef CV_XFC4_BODY

/* SIMD on the 4 bytes of a word: byte-wise signed max / min, byte-wise add (wrapping) */
CV_INLINE uint32_t cv_xmax_b(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__(".insn r 0x7b, 1, 0x18, %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

CV_INLINE uint32_t cv_xmin_b(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__(".insn r 0x7b, 1, 0x10, %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

CV_INLINE uint32_t cv_xadd_b(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__(".insn r 0x7b, 1, 0x00, %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

#if defined(CV_WANT_GEMM)
/*
 * Dot products of one row x (int8, K) with `count` weight rows (K apart): acc[n] =
 * init[n] + x . w_n (cv_row_dots with the SIMD fully connected kernels: 8 rows, then 4,
 * then one at a time; the last K % 4 values in C). The kernels write into acc (through
 * a buffer and a copy in C the small DS-CNN's first layer took 1.8 K cycles more for
 * its last pixel). One copy for the files that call it (weak, with the 8- and 4-row
 * kernels it calls).
 */
CV_SHARED void cv_xrow_dots(const int8_t *x, int32_t K, const int8_t *w, int32_t count, const int32_t *init,
                            int32_t *acc)
{
    const int32_t groups = K >> 2, k4 = K & ~3;
    const uint32_t *xv = (const uint32_t *)(const void *)x;
    for (int32_t n = 0; n < count;)
    {
        /* 8 and 4 rows straight into acc; one row (computed 4 times) through r4 */
        int32_t *out = acc + n;
        int32_t nr, r4[4];
        if (groups && count - n >= 8)
        {
            cv_xfc8(xv, w, K, groups, out, init + n);
            nr = 8;
        }
        else if (groups && count - n >= 4)
        {
            cv_xfc4s(xv, w, K, groups, out, init + n);
            nr = 4;
        }
        else
        {
            const int32_t init4[4] = {init[n], init[n], init[n], init[n]};
            if (groups)
            {
                cv_xfc4s(xv, w, 0, groups, r4, init4);
            }
            else
            {
                r4[0] = init[n];
            }
            out[0] = r4[0];
            nr = 1;
        }
        /* K's last 1 to 3 values (none from the panels' callers: K a multiple of 4) */
        for (int32_t k = k4; k < K; k++)
        {
            for (int32_t j = 0; j < nr; j++)
            {
                out[j] += x[k] * w[j * K + k];
            }
        }
        n += nr;
        w += nr * K;
    }
}
#endif

#endif
