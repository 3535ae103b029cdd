/* codegen/runtime/ptxas.c — what ptxas says of strata's CUDA kernels, and the
 * occupancy that follows from it.
 *
 * A GPU-shaped kernel can be checked without a GPU: NVRTC runs ptxas to
 * make the CUBIN, and `--ptxas-options=-v` has it report each kernel's
 * registers, spills, stack and static shared memory. From those, the block
 * size and the dynamic shared memory, the CUDA Occupancy Calculator's rules
 * give how many blocks a multiprocessor keeps resident. */
#include "codegen/codegen.h"
#include "cuda_lib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the report ---- */

/* The number just before `what` in line (up to its end), or -1. */
static int number_before(const char *line, const char *end, const char *what) {
    const char *at = strstr(line, what);
    if (!at || at >= end) return -1;
    const char *p = at;
    while (p > line && p[-1] == ' ') p--;
    const char *digits = p;
    while (digits > line && digits[-1] >= '0' && digits[-1] <= '9') digits--;
    return digits < p ? atoi(digits) : -1;
}

/* The name between quotes after `what`, or after it up to the line's end. */
static void name_after(const char *line, const char *end, const char *what, char *name, size_t cap) {
    const char *p = strstr(line, what);
    name[0] = 0;
    if (!p || p >= end) return;
    p += strlen(what);
    const char *stop = end;
    if (*p == '\'') {
        p++;
        const char *q = memchr(p, '\'', (size_t)(end - p));
        if (q) stop = q;
    }
    while (stop > p && (stop[-1] == ' ' || stop[-1] == '\r')) stop--;
    snprintf(name, cap, "%.*s", (int)(stop - p), p);
}

static bool line_has(const char *line, const char *end, const char *what) {
    const char *at = strstr(line, what);
    return at && at < end;
}

static int kernel_named(const st_ptxas_kernel *ks, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(ks[i].name, name)) return (int)i;
    return -1;
}

/* ptxas writes, for each entry function:
 *   ptxas info    : Compiling entry function 'k1_lookback' for 'sm_90'
 *   ptxas info    : Function properties for k1_lookback
 *       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 32 registers, used 1 barriers, 13596 bytes smem
 * (older versions: "Used 32 registers, 13596 bytes smem, 380 bytes cmem[0]";
 * no smem when the kernel has none). Device functions that were not inlined
 * have "Function properties" of their own, which are skipped. */
bool st_ptxas_parse(const char *log, st_arena *a, st_ptxas_kernel **kernels, uint32_t *count, st_err *err) {
    *kernels = NULL;
    *count = 0;
    uint32_t most = 0;
    for (const char *p = log; (p = strstr(p, "Compiling entry function")); p++) most++;
    if (!most) return true;
    st_ptxas_kernel *ks = st_arena_zalloc(a, most * sizeof *ks);
    if (!ks) return st_fail(err, (st_loc){0}, "out of memory for ptxas' report");
    uint32_t n = 0;
    int current = -1, props = -1;
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        char name[sizeof ks->name];
        if (line_has(line, end, "Compiling entry function ") && n < most) {
            name_after(line, end, "Compiling entry function ", name, sizeof name);
            current = kernel_named(ks, n, name);
            if (current < 0) {
                current = (int)n++;
                memcpy(ks[current].name, name, sizeof name);
            }
        } else if (line_has(line, end, "bytes stack frame") && props >= 0) {
            ks[props].stack_bytes = number_before(line, end, "bytes stack frame");
            ks[props].spill_stores = number_before(line, end, "bytes spill stores");
            ks[props].spill_loads = number_before(line, end, "bytes spill loads");
        } else if (line_has(line, end, "Function properties for ")) {
            name_after(line, end, "Function properties for ", name, sizeof name);
            props = kernel_named(ks, n, name);
        } else if (line_has(line, end, " registers") && current >= 0) {
            ks[current].registers = number_before(line, end, "registers");
            int smem = number_before(line, end, "bytes smem");
            ks[current].shared_bytes = smem > 0 ? smem : 0;
        }
        line = *end ? end + 1 : end;
    }
    *kernels = ks;
    *count = n;
    return true;
}

bool st_cuda_ptxas(const st_code *code, int arch, st_arena *a, st_ptxas_kernel **kernels, uint32_t *count,
                   st_err *err) {
    *kernels = NULL;
    *count = 0;
    cuda_nvrtc n;
    if (!cuda_nvrtc_load(&n, err)) return false;
    char *image = NULL, *log = NULL;
    size_t len = 0;
    bool ok = cuda_compile(&n, code->cuda, arch, &image, &len, &log, err);
    free(image);
    cuda_nvrtc_unload(&n);
    if (ok) ok = st_ptxas_parse(log, a, kernels, count, err);
    if (ok && *count == 0 && code->nkernels > 0)
        ok = st_fail(err, (st_loc){0}, "NVRTC compiled the kernels for sm_%d but its log has no report of ptxas "
                                       "(--ptxas-options=-v)", arch);
    free(log);
    return ok;
}

bool st_cuda_ptx(const st_code *code, int arch, st_arena *a, const char **ptx, st_err *err) {
    *ptx = NULL;
    cuda_nvrtc n;
    if (!cuda_nvrtc_load(&n, err)) return false;
    char *text = NULL;
    bool ok = cuda_compile_ptx(&n, code->cuda, arch, &text, err);
    cuda_nvrtc_unload(&n);
    char *copy = ok ? st_arena_alloc(a, strlen(text) + 1) : NULL;
    if (copy) *ptx = strcpy(copy, text);
    else if (ok) ok = st_fail(err, (st_loc){0}, "out of memory for the PTX");
    free(text);
    return ok;
}

/* ---- occupancy ---- */

/* A multiprocessor's limits, from the CUDA C++ Programming Guide's
 * "Technical Specifications per Compute Capability" and the CUDA Occupancy
 * Calculator (the allocation units and the shared memory the system
 * reserves per block). Shared memory per SM is the largest carveout: the
 * driver picks the carveout a kernel's blocks need. */
typedef struct sm_limits {
    int arch;
    int warps, blocks;               /* resident per SM */
    int registers, reg_unit;         /* 32-bit registers per SM; allocated per warp in units of reg_unit */
    int warp_granularity;            /* warps are given registers in groups of this many */
    int max_regs_thread;
    long shared_sm, shared_block;    /* bytes per SM, most per block */
    long shared_reserved, shared_unit; /* bytes the system keeps per block; allocation unit */
} sm_limits;

static const sm_limits known_sms[] = {
    {75, 32, 16, 65536, 256, 4, 255, 64L << 10, 64L << 10, 0, 256},
    {80, 64, 32, 65536, 256, 4, 255, 164L << 10, 163L << 10, 1L << 10, 128},
    {86, 48, 16, 65536, 256, 4, 255, 100L << 10, 99L << 10, 1L << 10, 128},
    {89, 48, 24, 65536, 256, 4, 255, 100L << 10, 99L << 10, 1L << 10, 128},
    {90, 64, 32, 65536, 256, 4, 255, 228L << 10, 227L << 10, 1L << 10, 128},
};

static long round_up(long x, long unit) { return (x + unit - 1) / unit * unit; }

/* Blocks resident per SM: the fewest that warps, blocks, registers and
 * shared memory allow (the Occupancy Calculator's rules):
 *   by warps      ⌊warps per SM / warps per block⌋
 *   by blocks     the SM's block limit
 *   by registers  a warp takes ⌈registers · 32 / unit⌉ · unit; an SM's
 *                 registers hold ⌊registers / that⌋ warps, rounded down to
 *                 the warp granularity, shared among the blocks' warps
 *   by shared     a block takes its static and dynamic shared memory and
 *                 the reserved KB, rounded up to the allocation unit */
static int resident_blocks(const sm_limits *l, int registers, long shared, int block, const char **limit) {
    int warps = (block + 31) / 32;
    int best = l->warps / warps;
    *limit = "warps";
    if (l->blocks < best) {
        best = l->blocks;
        *limit = "blocks";
    }
    if (registers > l->max_regs_thread) return *limit = "registers", 0;
    if (registers > 0) {
        long per_warp = round_up((long)registers * 32, l->reg_unit);
        long warps_by_regs = l->registers / per_warp / l->warp_granularity * l->warp_granularity;
        if (warps_by_regs / warps < best) {
            best = (int)(warps_by_regs / warps);
            *limit = "registers";
        }
    }
    if (shared > l->shared_block) return *limit = "shared memory", 0;
    long per_block = round_up(shared + l->shared_reserved, l->shared_unit);
    if (per_block > 0 && l->shared_sm / per_block < best) {
        best = (int)(l->shared_sm / per_block);
        *limit = "shared memory";
    }
    return best;
}

double st_cuda_occupancy(int arch, const st_ptxas_kernel *k, int block, long dynamic_shared, const char **limit) {
    const char *why = "";
    if (limit) *limit = why;
    for (size_t i = 0; i < sizeof known_sms / sizeof *known_sms; i++) {
        const sm_limits *l = &known_sms[i];
        if (l->arch != arch) continue;
        if (block < 1 || block > 1024) return 0;
        int blocks = resident_blocks(l, k->registers, k->shared_bytes + dynamic_shared, block, &why);
        if (limit) *limit = why;
        return (double)(blocks * ((block + 31) / 32)) / l->warps;
    }
    return -1;
}
