/* tests/test_codegen.c — the whole pipeline of `strata run`, checked against
 * the reference interpreter: parse, apply a strategy, lower (lower-opencl),
 * generate OpenCL and host glue (st_codegen), build on the default device
 * (PoCL on CI: kernels by the driver, glue by libtcc), run, read back, and
 * compare with st_eval of the ORIGINAL def on the same seeded inputs
 * (integers and bools exactly, floats within 1e-3 relative, as `run --check`).
 *
 *   examples     every scan example under no strategy, scan-then-propagate,
 *                parallel-scan with several (BS, BF, TD|SE) and the fusions
 *                that apply, at lengths 0, 1, 7, 1000, 65536 (and 1000003 for
 *                a few); dot, block_sums and histogram sequentially
 *   sequential   a program with nothing parallel is one kernel of one
 *                work-item, and still right
 *   compose      programs written with the low-level primitives directly, in
 *                combinations no rule produces (local-memory transposes,
 *                tuple scans per block, unzip out of a group, iterate,
 *                scatter and reduce_by_index in a work-item, every scalar
 *                type, the integer corner cases), at several lengths
 *   errors       what codegen and the runtime cannot do comes back as an
 *                st_err that names the node or the kernel, never a crash
 *   glue         the emitted host glue compiles on its own with the system C
 *                compiler against <CL/cl.h>, warnings as errors
 */
#include "pipeline_fixture.h"
#include "rewrite/rewrite.h"
#include "strategies/strategies.h"

#include <stdint.h>
#include <sys/wait.h>

static char scratch[256];

/* ------------------------------------------------------------------------ */
/* 1. The examples under the scan strategies                                */
/* ------------------------------------------------------------------------ */

enum { SEQ = 0, GROUPS = 1, TREE = 2 }; /* what the kernels must show */

typedef struct example_case {
    const char *program;
    const char *strategy; /* NULL: none, everything sequential */
    int shape;            /* SEQ: no work-group kernel; GROUPS: the kernels of a blocked scan; TREE: with barriers */
    bool big;             /* also at 1000003 */
} example_case;

#define STP(bs) "pad-scan(BS=" #bs ") ; first(scan, scan-then-propagate(BS=" #bs "))"
#define STP_IN(bs) "first(scan, pad-scan(BS=" #bs ")) ; first(scan, scan-then-propagate(BS=" #bs "))"
#define PS(args) "parallel-scan(" args ")"
#define PS_IN(args) "first(scan, parallel-scan(" args "))"
#define FUSE "first(let, fuse-map-scan)"

static const example_case example_cases[] = {
    {"prefix_sum", NULL, SEQ, true},
    {"prefix_sum", STP(64), GROUPS, false},
    {"prefix_sum", STP(7), GROUPS, false},
    {"prefix_sum", PS("BS=8, BF=2, SE=2"), TREE, false},
    {"prefix_sum", PS("BS=16, BF=2, TD=4"), TREE, false},
    {"prefix_sum", PS("BS=64, BF=4, TD=2"), TREE, false},
    {"prefix_sum", PS("BS=256, BF=2, SE=4"), TREE, true},
    {"prefix_sum", PS("BS=512, BF=2, SE=16"), TREE, false},
    /* two levels: the scan of the block sums is parallel too */
    {"prefix_sum", PS("BS=64, BF=2, SE=2") " ; each(scan, try(" PS("BS=8, BF=2, TD=1") "))", TREE, true},

    {"advanced", NULL, SEQ, false},
    {"advanced", STP_IN(64), GROUPS, false},
    {"advanced", PS_IN("BS=8, BF=2, SE=2"), TREE, false},
    {"advanced", PS_IN("BS=64, BF=4, TD=2"), TREE, false},
    {"advanced", PS_IN("BS=256, BF=2, SE=4"), TREE, true},

    {"linear_recurrence", NULL, SEQ, false},
    {"linear_recurrence", STP_IN(64), GROUPS, false},
    {"linear_recurrence", PS_IN("BS=16, BF=2, TD=4"), TREE, false},
    {"linear_recurrence", PS_IN("BS=512, BF=2, SE=16"), TREE, false},

    {"filter", NULL, SEQ, true},
    {"filter", STP_IN(64), GROUPS, false},
    {"filter", PS_IN("BS=8, BF=2, SE=2"), TREE, false},
    {"filter", PS_IN("BS=16, BF=2, TD=4"), TREE, false},
    {"filter", PS_IN("BS=64, BF=4, TD=2"), TREE, false},
    {"filter", PS_IN("BS=256, BF=2, SE=4"), TREE, true},
    {"filter", PS_IN("BS=512, BF=2, SE=16"), TREE, false},
    {"filter", FUSE, SEQ, false},
    {"filter", FUSE " ; " PS_IN("BS=64, BF=2, TD=3"), TREE, false},
    {"filter", FUSE " ; " PS_IN("BS=256, BF=2, SE=4"), TREE, true},
    {"filter", FUSE " ; first(let, fuse-scan-map) ; first(let, fuse-scan-scatter)", SEQ, false},
    {"filter", FUSE " ; first(let, fuse-scan-map) ; " PS_IN("BS=32, BF=2, SE=2"), TREE, false},
    {"filter", FUSE " ; first(let, fuse-scan-map) ; first(let, fuse-scan-scatter) ; " PS_IN("BS=64, BF=2, SE=2"), TREE,
     false},
};
enum { NEXAMPLE_CASES = sizeof example_cases / sizeof *example_cases };

static const int64_t example_lengths[] = {0, 1, 7, 1000, 65536};

START_TEST(example_scans_agree) {
    const example_case *c = &example_cases[_i];
    const char *label = text_of("%s under `%s`", c->program, c->strategy ? c->strategy : "(no strategy)");
    const st_def *orig = example_def(c->program);
    const st_def *low = lowered(apply(orig, c->strategy, label), label);
    st_code code = generated(low, label);
    /* the strategy shows in the kernels: a sequential program has no group
     * kernel; a blocked scan has a kernel per step of listing 4 (the blocks,
     * the scan of their totals, read out of the scanned blocks, and the
     * propagation, which may be fused into the read of the first N elements
     * of a padded scan, so the blocks may be scanned a work-item each); a
     * tree has barriers between steps */
    bool groups = strstr(code.opencl, "get_group_id(0)") != NULL;
    bool barriers = strstr(code.opencl, "barrier(") != NULL;
    if (c->shape == SEQ) ck_assert_msg(!groups && !barriers, "%s: a work-group kernel without a strategy:\n%s", label, code.opencl);
    if (c->shape == GROUPS) ck_assert_msg(code.nkernels >= 3, "%s: not the kernels of a blocked scan:\n%s", label, code.opencl);
    if (c->shape == TREE) ck_assert_msg(groups && code.nkernels >= 2, "%s: no work-group kernel:\n%s", label, code.opencl);
    if (c->shape == TREE) ck_assert_msg(barriers, "%s: a tree without barriers:\n%s", label, code.opencl);
    st_exe *exe = built(&code, label);
    for (size_t l = 0; l < sizeof example_lengths / sizeof *example_lengths; l++)
        agrees(exe, orig, text_of("N=%lld", (long long)example_lengths[l]), 11 + l, label);
    if (c->big && st_test_length(1000003, _i)) agrees(exe, orig, "N=1000003", 5, label);
    st_exe_free(exe);
}
END_TEST

/* Scans of other element types and operators, and a program whose where
 * clause lets the primitive rules compose without padding. */
typedef struct typed_case {
    const char *src;
    const char *strategy;
} typed_case;

#define I64_MAX_SCAN "def main(xs: [N]i64): [N]i64 = xs |> scan(max, -1000i64)\n"
#define U32_XOR_SCAN "def main(xs: [N]u32): [N]u32 = xs |> scan(^, 0u32)\n"
#define BOOL_OR_SCAN "def main(xs: [N]bool): [N]bool = xs |> scan(||, false)\n"
#define PAIR_SCAN "def main(xs: [N]i32, ys: [N]f64) = zip(xs, ys) |> scan((a, b) => (a.0 + b.0, a.1 + b.1), (0, 0.0f64)) |> unzip\n"
#define BLOCKED_SUM "def main(xs: [N]f32): [N]f32 where N % 512 == 0 = xs |> scan(+, 0.0)\n"
#define SUM "def main(xs: [N]f32): [N]f32 = xs |> scan(+, 0.0)\n"
#define TYPED(src) {src, PS_IN("BS=64, BF=2, SE=2")}, {src, STP_IN(7)}

static const typed_case typed_cases[] = {
    TYPED(I64_MAX_SCAN),
    {I64_MAX_SCAN, PS_IN("BS=27, BF=3, TD=3")},
    TYPED(U32_XOR_SCAN),
    TYPED(BOOL_OR_SCAN),
    TYPED(PAIR_SCAN),
    {BLOCKED_SUM, "scan-then-propagate(BS=512) ; first(scan, brent-kung(BF=2, TD=5))"},
    {BLOCKED_SUM, "scan-then-propagate(BS=512) ; each(scan, try(brent-kung(BF=2, TD=2)))"},
    {BLOCKED_SUM, "brent-kung(BF=2, TD=9)"},
    {SUM, PS("BS=4096, BF=2, SE=1")},
    {SUM, PS("BS=1024, BF=32, TD=2")},
};
enum { NTYPED_CASES = sizeof typed_cases / sizeof *typed_cases };

START_TEST(typed_scans_agree) {
    const typed_case *c = &typed_cases[_i];
    const char *src = c->src;
    const char *label = text_of("`%s` under `%s`", src, c->strategy ? c->strategy : "(no strategy)");
    const st_def *orig = def_of(src);
    st_code code = generated(lowered(apply(orig, c->strategy, label), label), label);
    if (c->strategy) ck_assert_msg(code.nkernels >= 2, "%s: %u kernel, nothing parallel:\n%s", label, code.nkernels, code.opencl);
    st_exe *exe = built(&code, label);
    bool blocks = strstr(src, "% 512") != NULL;
    static const int64_t any[] = {0, 1, 7, 1000, 4099}, whole[] = {0, 512, 1024, 65536, 512 * 131};
    for (size_t l = 0; l < 5; l++) agrees(exe, orig, text_of("N=%lld", (long long)(blocks ? whole : any)[l]), 41 + l, label);
    st_exe_free(exe);
}
END_TEST

/* The other examples, with no strategy: each at its own sizes. */
typedef struct plain_case {
    const char *program;
    const char *sets[7];
} plain_case;

static const plain_case plain_cases[] = {
    {"dot", {"N=0", "N=1", "N=7", "N=1000", "N=65536", "N=1000003"}},
    {"block_sums", {"N=0", "N=256", "N=1024", "N=65536", "N=1000192"}},
    {"histogram", {"N=0 H=0", "N=7 H=0", "N=1 H=1", "N=7 H=3", "N=1000 H=37", "N=65536 H=1000", "N=1000003 H=50"}},
    {"image_histogram", {"N=0", "N=1", "N=7", "N=1000", "N=1000003"}},
};
enum { NPLAIN_CASES = sizeof plain_cases / sizeof *plain_cases };

START_TEST(other_examples_agree) {
    const plain_case *c = &plain_cases[_i];
    const st_def *orig = example_def(c->program);
    st_code code = generated(lowered(orig, c->program), c->program);
    st_exe *exe = built(&code, c->program);
    for (size_t k = 0; k < 7 && c->sets[k]; k++) agrees(exe, orig, c->sets[k], 3 + k, c->program);
    st_exe_free(exe);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 2. Nothing parallel: one kernel of one work-item                         */
/* ------------------------------------------------------------------------ */

static void single_work_item(const st_def *orig, const char *label, const char *const *sets) {
    const st_def *low = lowered(orig, label);
    st_code code = generated(low, label);
    ck_assert_msg(code.nkernels == 1, "%s: %u kernels, want 1:\n%s", label, code.nkernels, code.opencl);
    ck_assert_msg(strstr(code.opencl, "if (get_global_id(0) != 0) return;") != NULL,
                  "%s: the kernel is not guarded to one work-item:\n%s", label, code.opencl);
    ck_assert_msg(strstr(code.opencl, "get_group_id") == NULL && strstr(code.opencl, "barrier(") == NULL,
                  "%s: a work-group kernel:\n%s", label, code.opencl);
    /* launched as one work-item in one group */
    ck_assert_has(code.host, "one work-item");
    ck_assert_has(code.host, "global = 1;");
    st_exe *exe = built(&code, label);
    for (size_t k = 0; sets[k]; k++) agrees(exe, orig, sets[k], 21 + k, label);
    st_exe_free(exe);
}

START_TEST(sequential_examples_are_one_work_item) {
    static const char *const sizes[] = {"N=0", "N=1", "N=7", "N=1000", "N=65536", NULL};
    static const char *const hsizes[] = {"N=1 H=1", "N=7 H=3", "N=1000 H=37", "N=65536 H=100", NULL};
    const st_def *d = example_def("prefix_sum");
    single_work_item(d, "prefix_sum", sizes);
    /* the program's interface: one input, one output, the size N */
    st_code code = generated(lowered(d, "prefix_sum"), "prefix_sum");
    ck_assert_uint_eq(code.ninputs, 1);
    ck_assert_uint_eq(code.noutputs, 1);
    ck_assert_uint_eq(code.nscalars, 1);
    ck_assert_str_eq(code.scalars[0].name, "N");
    ck_assert_int_eq(code.scalars[0].kind, ST_I64);
    ck_assert_int_eq(code.inputs[0].kind, ST_F32);
    ck_assert_int_eq(code.outputs[0].kind, ST_F32);
    single_work_item(example_def("histogram"), "histogram", hsizes);
}
END_TEST

/* [Pizzuti et al. 2022]'s space moves only the bytes its algorithm needs: the input is
 * read by one kernel (the first level's block scans; no padding copy, no
 * second pass for the block totals), the output written by one (the
 * propagation, fused with keeping the first N of the padded scan), and the
 * kernels are one per level's block scans, the last level's sequential scan
 * and the propagation (the levels below the first are propagated where the
 * level above reads them). A group of work-items on a CPU is one: the
 * trees' mapLcl loops run as plain loops. */
static unsigned kernels_naming(const char *opencl, const char *name) {
    unsigned n = 0;
    for (const char *k = strstr(opencl, "__kernel"); k; ) {
        const char *next = strstr(k + 1, "__kernel");
        const char *at = strstr(k, name);
        n += at && (!next || at < next);
        k = next;
    }
    return n;
}

/* whether the kernel that names `name` also has `part` in its text */
static bool kernel_naming_has(const char *opencl, const char *name, const char *part) {
    for (const char *k = strstr(opencl, "__kernel"); k; ) {
        const char *next = strstr(k + 1, "__kernel"), *at = strstr(k, name), *p = strstr(k, part);
        if (at && (!next || at < next)) return p && (!next || p < next);
        k = next;
    }
    return false;
}

START_TEST(paper_space_moves_only_its_bytes) {
    static const struct {
        const char *strategy;
        unsigned levels;
    } cases[] = {
        {"parallel-scan(BS=32, BF=2, SE=1)", 4},
        {"parallel-scan(BS=128, BF=2, SE=16)", 3},
        {"parallel-scan(BS=256, BF=2, SE=4)", 2},
        {"parallel-scan(BS=512, BF=2, SE=16)", 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *label = text_of("prefix_sum under `%s`", cases[c].strategy);
        const st_def *orig = example_def("prefix_sum");
        st_code code = generated(lowered(apply(orig, cases[c].strategy, label), label), label);
        ck_assert_msg(code.nkernels == cases[c].levels + 2, "%s: %u kernels, want %u:\n%s", label, code.nkernels,
                      cases[c].levels + 2, code.opencl);
        ck_assert_msg(kernels_naming(code.opencl, "in_xs") == 1, "%s: the input is read by more than one kernel:\n%s",
                      label, code.opencl);
        ck_assert_msg(kernels_naming(code.opencl, "out0") == 1, "%s: the output is written by more than one kernel:\n%s",
                      label, code.opencl);
        ck_assert_has(code.host, "if (!strata_is_cpu(queue)) {");
        /* the propagation is one element a work-item, no loop of its own (so
         * PoCL vectorises it), and reads the padded scan at the element's own
         * index: one that the range analysis sees is in it, unchecked */
        ck_assert_msg(!strstr(code.opencl, "get_global_size"), "%s: a loop strided by the global size:\n%s", label,
                      code.opencl);
        ck_assert_msg(!kernel_naming_has(code.opencl, "out0", "st_fault(") &&
                          !kernel_naming_has(code.opencl, "out0", "st_mod_long("),
                      "%s: the propagation checks its reads, or splits their index:\n%s", label, code.opencl);
        /* a whole block is scanned without testing its elements against the
         * end, and a whole group propagates its block's prefix read once
         * (the group's quotient), without the test i < N */
        ck_assert_msg(kernel_naming_has(code.opencl, "in_xs", "a whole block") &&
                          kernel_naming_has(code.opencl, "in_xs", "(true || "),
                      "%s: no whole-block copy of the block scan:\n%s", label, code.opencl);
        /* the down-sweep reads the element before its own at i - 1, in the branch where i > 0, not at
         * max(i - 1, 0) (which PoCL gathers) */
        ck_assert_msg(!kernel_naming_has(code.opencl, "in_xs", "max(") &&
                          kernel_naming_has(code.opencl, "in_xs", "[(long)st_sub_long("),
                      "%s: the block scan reads the element before at max(i - 1, 0):\n%s", label, code.opencl);
        /* its local arrays restrict on a CPU, where the down-sweep's loops then vectorise */
        ck_assert_msg(kernel_naming_has(code.opencl, "in_xs", "__local float *ST_LOCAL_RESTRICT l_") &&
                          strstr(code.opencl, "#define ST_LOCAL_RESTRICT restrict"),
                      "%s: the block scan's local arrays are not restrict on a CPU:\n%s", label, code.opencl);
        ck_assert_msg(kernel_naming_has(code.opencl, "out0", "a whole group") &&
                          kernel_naming_has(code.opencl, "out0", "% (long)get_local_size(0) == 0 ?"),
                      "%s: no whole-group copy of the propagation:\n%s", label, code.opencl);
        st_exe *exe = built(&code, label);
        /* whole blocks only (65536), one element past them, one short */
        static const char *const sizes[] = {"N=0", "N=1", "N=7", "N=1000", "N=65536", "N=65537", "N=65535", "N=1000003"};
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) agrees(exe, orig, sizes[k], 31 + k, label);
        st_exe_free(exe);
    }
}
END_TEST

/* One program, one kernel text: the same strategy applied twice in one
 * context gives other fresh names, and codegen does not let them through
 * (the build cache, the explorer's grouping and the records' SHA-256 rely
 * on it). */
START_TEST(kernels_do_not_depend_on_fresh_names) {
    static const char *const strategies[] = {"parallel-scan(BS=64, BF=2, SE=4)",
                                             "first(let, fuse-map-scan) ; first(scan, parallel-scan(BS=32, BF=2, TD=3))"};
    static const char *const programs[] = {"prefix_sum", "filter"};
    for (size_t i = 0; i < 2; i++) {
        const st_def *d = example_def(programs[i]);
        const char *label = text_of("%s under %s", programs[i], strategies[i]);
        const st_def *one = lowered(apply(d, strategies[i], label), label);
        const st_def *two = lowered(apply(d, strategies[i], label), label);
        ck_assert_ptr_ne(one->body, two->body); /* other names */
        st_code a = generated(one, label), b = generated(two, label);
        ck_assert_msg(!strcmp(a.opencl, b.opencl), "%s: two kernel texts for one program", label);
        ck_assert_str_eq(a.host, b.host);
    }
}
END_TEST

START_TEST(sequential_tuples_and_folds_are_one_work_item) {
    static const char *const sizes[] = {"N=0", "N=1", "N=7", "N=1009", NULL};
    /* a scan of pairs, a fold of a view, an iterate: all at the top, all in one work-item */
    const st_def *d = def_of("def main(xs: [N]i32, ys: [N]f32): [N](i32, f32) =\n"
                             "  zip(xs, ys) |> scanSeq((a, b) => (max(a.0, b.0), a.1 * 0.5 + b.1), (-1000, 0.0))\n");
    single_work_item(d, "a scanSeq of pairs", sizes);
    d = def_of("def main(xs: [N]i64): (i64, i64) =\n"
               "  zip(iota(N), xs) |> reduceSeq((a, p) => (a.0 * 3i64 + p.1, a.1 + p.0 * p.1), (1i64, 0i64))\n");
    single_work_item(d, "a fold of pairs", sizes);
    d = def_of("def main(xs: [N]u32): [N]u32 = xs |> scanSeq((a, x) => (a ^ x) * 16777619u32, 2166136261u32)\n");
    single_work_item(d, "an FNV scan", sizes);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 3. Compositions of the low-level primitives                              */
/* ------------------------------------------------------------------------ */

typedef struct compose_case {
    const char *name;
    const char *src;
    const char *sets[6];
} compose_case;

static const compose_case compose_cases[] = {
    {"tiled transpose through local memory",
     "def main(xss: [N][M]i32): [M][N]i32 where N % 4 == 0 =\n"
     "  xss |> split(4)\n"
     "      |> mapWrg(rows => let t = rows |> mapLcl(r => r |> mapSeq(x => x * 2)) |> toLocal\n"
     "                        in t |> transpose |> mapLcl(c => c |> mapSeq(x => x + 1)))\n"
     "      |> transpose\n"
     "      |> mapGlb(r => r |> join)\n",
     {"N=4 M=1", "N=8 M=7", "N=1000 M=13", "N=0 M=3", "N=4 M=0"}},
    {"per-block scan of pairs, joined and unzipped",
     "def main(xs: [N]i32, ys: [N]i32) where N % 8 == 0 =\n"
     "  zip(xs, ys) |> split(8)\n"
     "    |> mapWrg(blk => let t = blk |> mapLcl((x, y) => (x * 2, y - x)) |> toLocal\n"
     "                     in t |> scanSeq((p, q) => (p.0 + q.0, max(p.1, q.1)), (0, -1000)))\n"
     "    |> join |> unzip\n",
     {"N=8", "N=16", "N=1000", "N=65536"}},
    {"mapLcl writing a tuple of arrays through unzip",
     "def main(xss: [N][M]f32) =\n"
     "  xss |> mapWrg(row => row |> mapLcl(x => (x * 2.0, x > 0.5)) |> unzip) |> unzip\n",
     {"N=1 M=1", "N=7 M=13", "N=101 M=31"}},
    {"nested mapSeq on a 2-D array",
     "def main(xss: [N][M]i32) = xss |> mapSeq(xs => xs |> mapSeq(x => x * x - 3))\n",
     {"N=1 M=1", "N=7 M=13", "N=31 M=5"}},
    {"rows of a 3-D array folded in each work-item",
     "def main(xsss: [N][M][3]i32) = xsss |> mapGlb(xss => xss |> mapSeq(xs => xs |> reduceSeq(max, -1000)))\n",
     {"N=1 M=1", "N=7 M=13", "N=1009 M=2"}},
    {"iterate on a scalar inside mapGlb",
     "def main(xs: [N]i32, K: i64) = xs |> mapGlb(x => x |> iterate(K, y => (y * 3 + 1) % 1001))\n",
     {"N=1 K=0", "N=7 K=5", "N=1009 K=17"}},
    {"iterate over an array, at the top and in a work-item",
     "def main(xs: [N]i32, xss: [N][4]i32) =\n"
     "  (iterate(3, ys => ys |> map(y => y * 2 - 1), xs),\n"
     "   xss |> mapGlb(r => zip(r |> iterate(2, ys => ys |> mapSeq(y => y + 1)), r) |> mapSeq((p, q) => p * q)))\n",
     {"N=1", "N=7", "N=1009"}},
    {"iterate on a pair inside mapGlb",
     "def main(xs: [N]i64) = xs |> mapGlb(x => (x, 1i64) |> iterate(6, p => (p.1, (p.0 + p.1) % 1000003i64)))\n",
     {"N=1", "N=7", "N=1009"}},
    {"reduce_by_index inside one work-item",
     "def main(iss: [N][12]i32) =\n"
     "  iss |> mapGlb(row => reduce_by_index(replicate(8, 0), +, 0, row |> mapSeq(i => i % 8), replicate(12, 1)))\n",
     {"N=1", "N=7", "N=1009"}},
    {"scatter inside one work-item",
     "def main(xss: [N][16]i32) = xss |> mapGlb(row => scatter(replicate(16, -7), row |> mapSeq(x => x % 16), row))\n",
     {"N=1", "N=7", "N=1009"}},
    {"u32, i64, f64 and bool elements",
     "def main(xs: [N]u32, ys: [N]i64, zs: [N]f64, bs: [N]bool) =\n"
     "  zip(xs, ys, zs, bs)\n"
     "    |> mapGlb((x, y, z, b) => (if b then x * 3u32 else x / 7u32, y << 3i64, z * 2.5f64 - 1.0f64, !b && (x > 50u32)))\n"
     "    |> unzip\n",
     {"N=1", "N=7", "N=1009"}},
    {"f64 and u64 scans, bool folds",
     "def main(xs: [N]f64, ys: [N]u64, bs: [N]bool) =\n"
     "  (xs |> scanSeq(+, 0.0f64), ys |> mapGlb(y => y * 3u64 / 2u64 % 7u64 - 3u64), bs |> scanSeq(^, false),\n"
     "   bs |> mapGlb(b => b != true))\n",
     {"N=1", "N=7", "N=1009"}},
    {"integer division and modulo with negatives, min, max",
     "def main(xs: [N]i32, ys: [N]i32) =\n"
     "  zip(xs, ys) |> mapGlb((x, y) => let d = if y == 0 then 7 else y\n"
     "    in (x / d, x % d, min(x, y), max(x, y), x / -3, x % -3, i64(x) / i64(d) % 5i64, u32(x + 50) % u32(d + 51)))\n"
     "    |> unzip\n",
     {"N=1", "N=7", "N=1009"}},
    {"shifts by counts of any sign, wrapping products",
     "def main(xs: [N]i32, ys: [N]i32) =\n"
     "  zip(xs, ys) |> mapGlb((x, y) => (x << y, x >> y, u32(x) >> u32(y), i64(x) << i64(y), x * 65537 * 65537, -x))\n"
     "    |> unzip\n",
     {"N=1", "N=7", "N=1009"}},
    {"the most negative integer divided by -1",
     "def main(xs: [N]i32) =\n"
     "  xs |> mapGlb(x => let m = (-2147483647 - 1) + x - x\n"
     "    in (m / -1, m % -1, m / (x - x + 1), (i64(x) - i64(x) - 9223372036854775807i64 - 1i64) / -1i64, m * -1, -m))\n"
     "    |> unzip\n",
     {"N=1", "N=7"}},
    {"float to integer conversions that saturate",
     "def main(zs: [N]f32) =\n"
     "  zs |> mapGlb(z => (i32((z - 0.5) * 1.0e10), u32((z - 0.5) * 1.0e10), i64(f64(z) * 1.0e20f64),\n"
     "                     i32(i64(z * 1.0e9) * 100i64), i32(z * 100.0), u64(-z * 1.0e30)))\n"
     "    |> unzip\n",
     {"N=1", "N=7", "N=1009"}},
    {"NaN through min, max and conversions",
     "def main(zs: [N]f32) =\n"
     "  zs |> mapGlb(z => let n = (z - z) / (z - z)\n"
     "    in (min(z, n), max(n, z), i32(n), u32(-z * 1.0e12), i64(z / 0.0), z % 0.25, n == n))\n"
     "    |> unzip\n",
     {"N=1", "N=7", "N=1009"}},
    {"neighbours read through local memory after a barrier",
     "def main(xs: [N]i32) where N % 8 == 0 =\n"
     "  xs |> split(8) |> mapWrg(blk =>\n"
     "    let t = blk |> mapLcl(x => x * 2) |> toLocal\n"
     "    let s = t |> reduceSeq(max, -1000)\n"
     "    let u = iota(8) |> mapLcl(i => get((i + 1) % 8, t) + get(i, t) + s) |> toLocal\n"
     "    in iota(4) |> mapLcl(k => get(2 * k, u) - get(2 * k + 1, u))) |> join\n",
     {"N=8", "N=16", "N=808"}},
    {"steps of different widths in one group",
     "def main(xs: [N]i32) where N % 12 == 0 =\n"
     "  xs |> split(12) |> mapWrg(blk =>\n"
     "    let a = blk |> split(3) |> mapLcl(r => r |> reduceSeq(+, 0)) |> toLocal\n"
     "    let b = blk |> mapLcl(x => x * 3) |> toLocal\n"
     "    let c = b |> split(3) |> mapLcl(r => r |> reduceSeq(max, -1000)) |> toLocal\n"
     "    in zip(a, c) |> mapLcl((p, q) => p - q)) |> join\n",
     {"N=12", "N=24", "N=1200"}},
    {"an array-valued if in a group",
     "def main(xs: [N]i32) where N % 16 == 0 =\n"
     "  xs |> split(16) |> mapWrg(blk =>\n"
     "    if get(0, blk) > 0 then blk |> mapLcl(x => x + 1) else blk |> mapLcl(x => x - 1)) |> join\n",
     {"N=16", "N=160", "N=1008"}},
    {"mapWrg over pairs of blocks",
     "def main(xs: [N]i32, ys: [N]i32) where N % 4 == 0 =\n"
     "  zip(xs |> split(4), ys |> split(4)) |> mapWrg((a, b) => zip(a, b) |> mapLcl((x, y) => x * y - 1)) |> join\n",
     {"N=4", "N=12", "N=1000"}},
    {"private arrays inside mapLcl",
     "def main(xs: [N]f32) where N % 8 == 0 =\n"
     "  xs |> split(8) |> mapWrg(r =>\n"
     "    let q = r |> mapLcl(y => y * 2.0) |> toLocal\n"
     "    let t = q |> scanSeq(+, 0.0) |> toLocal\n"
     "    in t |> mapLcl(z => let p = replicate(2, z) |> mapSeq(u => u * u) |> toPrivate in p |> reduceSeq(+, 0.0)))\n"
     "  |> join\n",
     {"N=8", "N=64", "N=1000"}},
    {"a private scan of pairs per block, joined",
     "def main(xs: [N]f32) where N % 4 == 0 =\n"
     "  xs |> split(4)\n"
     "     |> mapGlb(r => let p = r |> mapSeq(x => (x, x * x)) |> toPrivate\n"
     "                    in p |> scanSeq((a, b) => (a.0 + b.0, max(a.1, b.1)), (0.0, 0.0)))\n"
     "     |> join |> unzip\n",
     {"N=4", "N=1000"}},
    {"iota, replicate and an intermediate returned twice",
     "def main(xs: [N]i32) =\n"
     "  let a = xs |> mapGlb(x => x + 1) |> toGlobal\n"
     "  in (a, a, xs, zip(iota(N), replicate(N, 3i64)) |> mapGlb((i, r) => i * r))\n",
     {"N=1", "N=7", "N=1009"}},
    {"a gather through get",
     "def main(xs: [N]i32) = iota(N) |> mapGlb(i => get(N - 1 - i, xs) * i32(i))\n",
     {"N=1", "N=7", "N=1009"}},
    {"a transposed view read by two kernels",
     "def main(xss: [N][M]i32) =\n"
     "  let v = xss |> transpose\n"
     "  in (v |> mapGlb(c => c |> reduceSeq(+, 0)), v |> mapGlb(c => c |> reduceSeq(min, 1000)), xss)\n",
     {"N=1 M=1", "N=7 M=13", "N=13 M=7"}},
    {"scalar parameters of every kind, and results that are inputs",
     "def main(xs: [N]u32, bs: [N]bool, H: i64, b: bool, z: f64, k: i32, u: u64) =\n"
     "  (xs |> mapGlb(x => x % 3u32), bs |> mapGlb(c => c != b), replicate(H, z), xs, b, k * 2, u >> 3u64,\n"
     "   bs |> reduceSeq((a, c) => a || c, false))\n",
     {"N=1 H=1 b=true z=2.5 k=-3 u=18446744073709551615", "N=7 H=0 b=false z=-0.125 k=7 u=9",
      "N=1009 H=13 b=true z=1e300 k=-2147483648 u=0"}},
    {"bools and a pair of arrays in local memory",
     "def main(xs: [N]i32) where N % 8 == 0 =\n"
     "  xs |> split(8) |> mapWrg(blk =>\n"
     "    let (f, v) = blk |> mapLcl(x => (x > 0, x * 2)) |> unzip |> toLocal\n"
     "    in iota(8) |> mapLcl(i => if get((i + 3) % 8, f) then get(i, v) else 0 - get(7 - i, v))) |> join\n",
     {"N=8", "N=800"}},
    {"scalars and private arrays at group level",
     "def main(xs: [N]i32) where N % 8 == 0 =\n"
     "  xs |> split(8) |> mapWrg(blk =>\n"
     "    let t = blk |> mapLcl(x => x + 1) |> toLocal\n"
     "    let (lo, hi) = t |> reduceSeq((a, x) => (min(a.0, x), max(a.1, x)), (1000, -1000))\n"
     "    let p = replicate(3, lo) |> mapSeq(v => v * 2) |> toPrivate\n"
     "    let r = let q = t |> mapLcl(x => x - lo) |> toLocal in q |> mapLcl(x => x * hi) |> toLocal\n"
     "    in zip(r, t) |> mapLcl((a, b) => a + b + get(1, p)))\n"
     "  |> join\n",
     {"N=8", "N=800"}},
    {"a sum per group from local memory",
     "def main(xs: [N]f32) where N % 32 == 0 =\n"
     "  xs |> split(32) |> mapWrg(blk => let t = blk |> mapLcl(x => x * x) |> toLocal in t |> reduceSeq(+, 0.0))\n",
     {"N=32", "N=3200"}},
    {"output views: a transpose of blocks, a join of a transpose",
     "def main(xs: [N]i32, xss: [K][M]i32) where N % 4 == 0 =\n"
     "  (xs |> mapGlb(x => x + 1) |> split(4) |> transpose,\n"
     "   xs |> split(4) |> mapGlb(r => r |> scanSeq(+, 0)) |> transpose |> join,\n"
     "   xss |> transpose |> mapGlb(c => c |> mapSeq(x => x * 2)) |> transpose |> join,\n"
     "   xss |> mapGlb(r => r |> mapSeq(x => x - 1)) |> transpose)\n",
     {"N=4 K=1 M=1", "N=8 K=7 M=5", "N=100 K=3 M=13"}},
    {"a permutation by a parallel scatter",
     "def main(xs: [N]i32) = scatter(replicate(N, 0), iota(N) |> map(i => N - 1 - i), xs)\n", {"N=1", "N=1001"}},
    {"sizes computed from sizes",
     "def main(xs: [N]i32) where N % 2 == 0 = iota(N / 2) |> map(i => get(2 * i, xs) + get(2 * i + 1, xs) + i32(i))\n",
     {"N=2", "N=1000"}},
    {"an element read once and used by every work-item",
     "def main(xs: [N]i32) = let h = get(0, xs) in xs |> map(x => x - h)\n", {"N=1", "N=1001"}},
    {"a work-item's results of mixed shapes, array-valued ifs",
     "def main(xs: [N]i32) where N % 4 == 0 =\n"
     "  (xs |> split(4) |> mapGlb(r => (r |> reduceSeq(+, 0), r |> mapSeq(x => x * 2))) |> unzip,\n"
     "   xs |> split(4) |> mapGlb(r => if get(0, r) > 0 then r |> mapSeq(x => x + 1) else r |> scanSeq(+, 0)) |> join)\n",
     {"N=4", "N=100"}},
    {"accumulators that are arrays",
     "def main(xss: [N][M][4]i32) =\n"
     "  (xss |> mapGlb(rows => rows |> reduceSeq((a, r) => zip(a, r) |> mapSeq((x, y) => x + y), replicate(4, 0))),\n"
     "   xss |> mapGlb(rows => rows |> scanSeq((a, r) => zip(a, r) |> mapSeq((x, y) => max(x, y)), replicate(4, -100))))\n",
     {"N=1 M=1", "N=7 M=5", "N=101 M=0"}},
    {"rows of local memory scanned by each work-item; a replicated row",
     "def main(xss: [N][8][4]i32, ys: [4]i32) =\n"
     "  (xss |> mapWrg(blk => blk |> mapLcl(r => r |> scanSeq(+, 0))),\n"
     "   zip(iota(N), replicate(N, ys)) |> mapGlb((i, r) => r |> reduceSeq((a, y) => a + i32(i) * y, 0)))\n",
     {"N=1", "N=7", "N=301"}},
    /* high-level programs, lowered by lower-opencl */
    {"lower-opencl's kernels of groups and of work-items",
     "def main(xss: [N][M]i32) =\n"
     "  let a = xss |> map(xs => xs |> map(x => x + 1))\n"
     "  let b = xss |> map(xs => xs |> reduce(+, 0))\n"
     "  let c = xss |> map(xs => let t = xs |> map(x => x * 2) in t |> scan(+, 0))\n"
     "  in (a, b, c)\n",
     {"N=1 M=1", "N=7 M=13", "N=13 M=7"}},
    {"a scalar computed by one kernel and read by another",
     "def main(xs: [N]i32) = let s = xs |> reduce(max, -1000) in xs |> map(x => x - s)\n",
     {"N=1", "N=7", "N=1009"}},
    {"a scalar read by another kernel and returned",
     "def main(xs: [N]i32) = let s = xs |> reduceSeq(max, -1000) in (s, xs |> mapGlb(x => x - s))\n",
     {"N=1", "N=7", "N=1009"}},
    {"a group's map feeding a sequential scan",
     "def main(xs: [N]i32) where N % 8 == 0 =\n"
     "  xs |> split(8) |> mapWrg(blk => blk |> mapLcl(x => x * x) |> scanSeq(+, 0)) |> join\n",
     {"N=8", "N=800"}},
    {"a group's map read by get",
     "def main(xs: [N]i32) where N % 8 == 0 =\n"
     "  xs |> split(8) |> mapWrg(blk => let s = get(3, blk |> mapLcl(x => x * x)) in blk |> mapLcl(x => x - s)) |> join\n",
     {"N=8", "N=800"}},
    {"a group's map in the condition of an array-valued if",
     "def main(xs: [N]i32) where N % 8 == 0 =\n"
     "  xs |> split(8) |> mapWrg(blk =>\n"
     "    if (blk |> mapLcl(x => x * 3) |> reduceSeq(+, 0)) > 0 then blk |> mapLcl(x => x + 1) else blk |> mapLcl(x => x - 1))\n"
     "  |> join\n",
     {"N=8", "N=800"}},
    {"a group's map zipped with its input, read by another map",
     "def main(xs: [N]i32) where N % 4 == 0 =\n"
     "  xs |> split(4) |> mapWrg(blk => zip(blk, blk |> mapLcl(x => x + 1)) |> mapLcl((p, q) => p - q)) |> join\n",
     {"N=4", "N=1000"}},
    {"a group's map zipped into another, then folded",
     "def main(xs: [N]i32) where N % 8 == 0 =\n"
     "  xs |> split(8) |> mapWrg(blk => zip(blk |> mapLcl(x => x + 1), blk) |> mapLcl((a, b) => a * b) |> reduceSeq(max, -100000))\n",
     {"N=8", "N=800"}},
    {"a map feeding a sequential scan at the top",
     "def main(xs: [N]i32) = xs |> map(x => x * x) |> scan(+, 0)\n", {"N=1", "N=7", "N=1009"}},
    {"a kernel's result folded in a condition",
     "def main(xs: [N]i32) =\n"
     "  let s = if (xs |> mapGlb(x => x * 2) |> reduceSeq(+, 0)) > 0 then 1 else 2\n"
     "  in xs |> mapGlb(x => x * s)\n",
     {"N=1", "N=7", "N=1009"}},
    {"scalars from folds feeding folds",
     "def main(xs: [N]i32) =\n"
     "  let m = xs |> reduce(max, -1000)\n"
     "  let c = xs |> map(x => if x == m then 1 else 0) |> reduce(+, 0)\n"
     "  in (m, c, xs |> map(x => x * c - m))\n",
     {"N=1", "N=7", "N=1009"}},
    {"a histogram of mapped indices and values, sequential",
     "def main(is: [N]i32, H: i64): [H]i32 =\n"
     "  reduce_by_index(replicate(H, 0), +, 0, is |> map(i => i % 20), is |> map(i => i * i))\n",
     {"N=1 H=1", "N=7 H=20", "N=1009 H=13"}},
    {"a sequential scan of rows after a map of rows",
     "def main(xss: [N][4]i32) =\n"
     "  xss |> map(r => r |> map(x => x + 1)) |> scan((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(4, 0))\n",
     {"N=1", "N=7", "N=1009"}},
    {"rows wider than the device's largest work-group",
     "def main(xss: [N][M]i32) = xss |> map(xs => xs |> map(x => x + 1))\n", {"N=2 M=5000", "N=3 M=7"}},
    {"a group's map feeding a reduction (lower-opencl's own output)",
     "def main(xss: [N][M]i32) = xss |> map(xs => xs |> map(x => x * x) |> reduce(+, 0))\n",
     {"N=1 M=1", "N=7 M=13", "N=13 M=7"}},
};
enum { NCOMPOSE_CASES = sizeof compose_cases / sizeof *compose_cases };

START_TEST(compositions_agree) {
    const compose_case *c = &compose_cases[_i];
    const st_def *orig = def_of(c->src);
    st_code code = generated(lowered(orig, c->name), c->name);
    st_exe *exe = built(&code, c->name);
    for (size_t k = 0; k < 6 && c->sets[k]; k++) agrees(exe, orig, c->sets[k], 31 + k, c->name);
    st_exe_free(exe);
}
END_TEST

/* What the interpreter runs, codegen runs (issue 46, item 14): an unzip of
 * an array of tuples that is no zip in memory (an index map making pairs,
 * a literal of pairs, a slice or rows of one), and lengths that are
 * products of sums ((B + 1)*(B + 1) flattened by a 2-D scatter and split
 * by B + 1, (N + 1)*(N + 2) split by N + 2). Each under lowering alone
 * (`run -s id`) and the device's default, against the interpreter. */
typedef struct valid_case {
    const char *name, *src;
    const char *sets[5];
} valid_case;

static const valid_case valid_cases[] = {
    {"unzip of an index map of pairs",
     "def main(xs: [N]i32): ([N]i64, [N]i32) = iota(N) |> map(i => (i, xs[i] - 1)) |> unzip\n",
     {"N=1", "N=7", "N=1000", "N=1000003"}},
    {"unzip of an index map of pairs read by get in a map",
     "def main(xs: [N]i32): [N]i32 =\n"
     "  iota(N) |> map(i => let (a, b) = iota(N) |> map(j => (xs[j], i32(j))) |> unzip in a[i] + b[i])\n",
     {"N=1", "N=7", "N=1000"}},
    {"unzip of an index map of pairs in a map",
     "def main(xs: [N]i32): [N]i64 =\n"
     "  iota(N) |> map(i => let (a, b) = iota(4) |> map(j => (j, i + j)) |> unzip in reduce(+, 0, b) + reduce(+, 0, a))\n",
     {"N=1", "N=7", "N=1000003"}},
    {"unzip of a literal of pairs", "def main(xs: [N]i32): ([2]i32, [2]i32) = [(1, 2), (3, 4)] |> unzip\n", {"N=1"}},
    {"unzip of a slice of an index map",
     "def main(xs: [N]i32): ([N - 1]i64, [N - 1]i32) = (iota(N) |> map(i => (i, xs[i] * 3)))[1:N] |> unzip\n",
     {"N=1", "N=7", "N=1000003"}},
    {"unzip of the rows of a split index map",
     "def main(xs: [N]i32): [N]i64 =\n"
     "  iota(N) |> map(i => (i, xs[i])) |> split(1) |> map(r => let (a, b) = unzip(r) in a[0] + i64(b[0]))\n",
     {"N=1", "N=7", "N=1000003"}},
    {"scatter_2d on a (B + 1) x (B + 1) grid",
     "def main(B: i64): [B + 1][B + 1]i32 = scatter_2d(replicate(B + 1, replicate(B + 1, 0i32)), [(0i64, 0i64)], [1])\n",
     {"B=0", "B=1", "B=7", "B=1000"}},
    {"reduce_by_index_2d on an (N + 1) x (N + 2) grid",
     "def main(xs: [N]i32): [N + 1][N + 2]i32 =\n"
     "  reduce_by_index_2d(replicate(N + 1, replicate(N + 2, 0i32)), +, 0, iota(N) |> map(i => (i % 3, i % 5)), xs)\n",
     {"N=1", "N=7", "N=1000"}},
    {"(N + 1)*(N + 2) split by N + 2 and by N + 1",
     "def main(xs: [N]i32): ([N + 1][N + 2]i32, [N + 2]i64) =\n"
     "  (replicate((N + 1) * (N + 2), 1i32) |> split(N + 2),\n"
     "   iota((N + 1) * (N + 2)) |> split(N + 1) |> map(r => reduce(+, 0, r)))\n",
     {"N=1", "N=7", "N=1000"}},
    {"a cube split by a square",
     "def main(xs: [N]i32): [N + 1][N + 1]i64 =\n"
     "  iota((N + 1) * (N + 1) * (N + 1)) |> split((N + 1) * (N + 1)) |> map(r => r |> split(N + 1) |> map(q => reduce(+, 0, q)))\n",
     {"N=1", "N=7", "N=100"}},
};
enum { NVALID_CASES = sizeof valid_cases / sizeof *valid_cases };

START_TEST(what_evaluates_runs) {
    const valid_case *c = &valid_cases[_i / 2];
    const char *strategy = _i % 2 ? st_default_strategy(st_cl_device(device())->type) : NULL;
    const char *label = text_of("%s under %s", c->name, strategy ? "the default" : "no strategy");
    const st_def *orig = def_of(c->src);
    st_code code = generated(lowered(apply(orig, strategy, label), label), label);
    st_exe *exe = built(&code, label);
    for (size_t k = 0; k < 5 && c->sets[k]; k++) agrees(exe, orig, c->sets[k], 53 + k, label);
    st_exe_free(exe);
}
END_TEST

/* Rows as elements (issue 18, item 5): programs whose elements, accumulators
 * or buckets are arrays of symbolic length, with no strategy (lower-opencl
 * alone, as `run -s id`). A work-item of a parallel kernel keeps such a row
 * in its own slot of a global scratch buffer. */
typedef struct rows_case {
    const char *name, *src;
    const char *fixed;  /* sizes and scalars every run has besides M (and K, which it may not have) */
    bool scratch;       /* a parallel kernel keeps its rows in scratch */
} rows_case;

static const rows_case rows_cases[] = {
    {"a scan of rows with a row-wise operator",
     "def main(xss: [M][K]i32): [M][K]i32 =\n"
     "  xss |> scan((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(K, 0))\n", "", false},
    {"a map of a scan of a map of each row",
     "def main(xss: [M][K]i32): [M][K]i32 =\n"
     "  xss |> map(xs => xs |> map(x => x + 1) |> scan(+, 0))\n", "", false},
    {"a scan of rows inside a map",
     "def main(xsss: [P][M][K]i32): [P][M][K]i32 =\n"
     "  xsss |> map(xss => xss |> scan((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(K, 0)))\n", "P=3", true},
    {"a scan of tuples holding rows",
     "def main(xss: [M][K]i32, ys: [M]i32): ([M][K]i32, [M]i32) =\n"
     "  zip(xss, ys) |> scan((a, b) => (zip(a.0, b.0) |> map((x, y) => x + y), a.1 + b.1), (replicate(K, 0), 0)) |> unzip\n",
     "", false},
    {"a scan of tuples holding rows inside a map",
     "def main(xsss: [P][M][K]i32, yss: [P][M]i32) =\n"
     "  zip(xsss, yss) |> map((xss, ys) =>\n"
     "    zip(xss, ys) |> scan((a, b) => (zip(a.0, b.0) |> map((x, y) => max(x, y)), a.1 + b.1), (replicate(K, -100), 0))\n"
     "    |> unzip)\n", "P=3", true},
    {"a histogram per segment",
     "def main(iss: [M][N]i32, H: i64): [M][H]i32 =\n"
     "  iss |> map(is => reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1)))\n", "N=1001 H=5", false},
    {"a histogram whose buckets are rows",
     "def main(is: [M]i32, vss: [M][K]i32, H: i64): [H][K]i32 =\n"
     "  reduce_by_index(replicate(H, replicate(K, 0)), (a, b) => zip(a, b) |> map((x, y) => x + y), replicate(K, 0), is, vss)\n",
     "H=5", false},
    {"a histogram whose buckets are rows, per segment",
     "def main(iss: [P][M]i32, vsss: [P][M][K]i32, H: i64): [P][H][K]i32 =\n"
     "  zip(iss, vsss) |> map((is, vss) =>\n"
     "    reduce_by_index(replicate(H, replicate(K, 0)), (a, b) => zip(a, b) |> map((x, y) => x + y), replicate(K, 0), is, vss))\n",
     "P=3 H=5", true},
    {"a reduction of rows inside a map",
     "def main(xsss: [P][M][K]i32): [P][K]i32 =\n"
     "  xsss |> map(xss => xss |> reduce((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(K, 0)))\n", "P=3", true},
    {"a scan of a row let-bound in a map, then mapped and scanned again",
     "def main(xss: [M][K]i32): [M][K]i32 =\n"
     "  xss |> map(xs => let ys = xs |> scan(+, 0) in ys |> map(y => y * 2) |> scan(max, 0))\n", "", false},
};
enum { NROWS_CASES = sizeof rows_cases / sizeof *rows_cases };

/* Each rows case with no strategy, and (strategy) its scans parallel where
 * parallel-scan takes them: rows of a block in a work-group's slot of
 * scratch, a padded element a tuple holding a row. */
static void rows_run(const rows_case *c, const char *strategy) {
    const st_def *orig = def_of(c->src);
    st_code code = generated(lowered(apply(orig, strategy, c->name), c->name), c->name);
    if (c->scratch && !strategy) ck_assert_has(code.opencl, "scratch");
    st_exe *exe = built(&code, c->name);
    static const char *const ms[] = {"1", "7"}, *const ks[] = {"1", "13", "1000"};
    bool has_k = strstr(c->src, "[K]") != NULL;
    for (size_t m = 0; m < 2; m++)
        for (size_t k = 0; k < (has_k ? 3 : 1); k++)
            agrees(exe, orig, text_of("M=%s %s%s %s", ms[m], has_k ? "K=" : "", has_k ? ks[k] : "", c->fixed),
                   41 + 3 * m + k, c->name);
    st_exe_free(exe);
}

/* segmented-scan(WG): one row per work-group, WG work-items a row, for
 * every row length (K below, equal to and above WG, not a multiple). */
static const rows_case segmented_cases[] = {
    {"a map of a scan of a map of each row", "def main(xss: [M][K]i32): [M][K]i32 =\n  xss |> map(xs => xs |> map(x => x + 1) |> scan(+, 0))\n", "", false},
    {"a scan of f32 rows", "def main(xss: [M][K]f32): [M][K]f32 =\n  xss |> map(xs => xs |> scan(+, 0.0))\n", "", false},
    {"a scan with a fold and a post-function per row",
     "def main(xss: [M][K]i32): ([M][K]i64, [M][K]i32) =\n"
     "  (xss |> map(xs => xs |> scan(+, (a, x) => a + i64(x) * 3i64, 0i64)),\n"
     "   xss |> map(xs => xs |> scan(+, (a, x) => a + x * 2, (a, x) => a - x, 0)))\n", "", false},
    {"a scan of pairs per row",
     "def main(xss: [M][K]i32, yss: [M][K]i64) =\n"
     "  zip(xss, yss) |> map((xs, ys) => zip(xs, ys) |> scan((a, b) => (max(a.0, b.0), a.1 + b.1), (-1000000, 0i64)))\n", "", false},
    {"a scan of rows per segment",
     "def main(xsss: [P][M][K]i32): [P][M][K]i32 =\n"
     "  xsss |> map(xss => xss |> scan((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(K, 0)))\n", "P=3", false},
};
enum { NSEGMENTED_CASES = sizeof segmented_cases / sizeof *segmented_cases };

/* segmented-histogram(WG): a histogram per row, one row per work-group */
static const rows_case histogram_cases[] = {
    {"a histogram per segment", "def main(iss: [M][N]i32, H: i64): [M][H]i32 =\n"
     "  iss |> map(is => reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1)))\n", "N=1001 H=5", false},
    {"a histogram of f32 per segment, mapped indices",
     "def main(iss: [M][N]i64, vss: [M][N]f32, H: i64): [M][H]f32 =\n"
     "  zip(iss, vss) |> map((is, vs) => reduce_by_index(replicate(H, 0.0), +, 0.0, is |> map(i => i % 7), vs))\n",
     "N=1001 H=6", false},
    {"a max-histogram of unsigned indices into a destination of its own",
     "def main(iss: [M][N]u32, H: i64): [M][H]i32 =\n"
     "  iss |> map(is => reduce_by_index(replicate(H, 100), max, -1000000, is, is |> map(i => i32(i) * 3)))\n",
     "N=13 H=5", false},
    {"a histogram whose buckets are rows, per segment",
     "def main(iss: [P][M]i32, vsss: [P][M][K]i32, H: i64): [P][H][K]i32 =\n"
     "  zip(iss, vsss) |> map((is, vss) =>\n"
     "    reduce_by_index(replicate(H, replicate(K, 0)), (a, b) => zip(a, b) |> map((x, y) => x + y), replicate(K, 0), is, vss))\n",
     "P=3 H=5", false},
};
enum { NHISTOGRAM_CASES = sizeof histogram_cases / sizeof *histogram_cases };

START_TEST(rows_segmented_histogram) {
    const rows_case *c = &histogram_cases[_i];
    ck_assert_has(printed_def(apply(def_of(c->src), "first(map, segmented-histogram(WG=5))", c->name)), "iota(5)");
    rows_run(c, "first(map, segmented-histogram(WG=5))");
    rows_run(c, "first(map, segmented-histogram(WG=256))");
}
END_TEST

START_TEST(rows_agree) { rows_run(&rows_cases[_i], NULL); }
END_TEST

/* A short row of constant length folded by one work-item (a count per bit
 * of each key, the maxima of 4 columns, a scan of 8-wide rows) is a private
 * array, not a host buffer, and a step that reads element j of the
 * accumulator for element j of its result updates it in place, its loops
 * unrolled; a step that reads the accumulator elsewhere too computes into a
 * fresh row, copied back; a row longer than a few vectors stays a host
 * buffer. Each agrees with the interpreter at every length. */
START_TEST(short_row_folds_stay_private) {
    static const struct {
        const char *src;
        bool in_place, host_buffer;
        int len;
    } cases[] = {
        {"def main(xs: [N]u32): [32]i64 =\n"
         "  xs |> map(k => iota(32) |> map(d => i64((k >> u32(d)) & 1u32)))\n"
         "     |> reduce((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(32, 0i64))",
         true, false, 32},
        {"def main(xss: [N][4]i32): [4]i32 =\n"
         "  xss |> reduce((a, b) => zip(a, b) |> map((x, y) => max(x, y)), replicate(4, -2147483648))",
         true, false, 4},
        {"def main(xss: [N][8]f32): [N][8]f32 =\n"
         "  xss |> scan((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(8, 0.0))",
         true, false, 8},
        {"def main(xss: [N][4]i32): [4]i32 =\n"
         "  xss |> reduce((a, b) => zip(a, b) |> map((x, y) => x + y + (a |> get(0)) % 3), replicate(4, 0))",
         false, false, 4},
        /* rows of rows, each inner row read reversed: not in place */
        {"def main(xss: [N][2][4]i32): [2][4]i32 =\n"
         "  xss |> reduce((a, b) => zip(a, b) |> map((r, s) => iota(4) |> map(k => (r |> get(3 - k)) * 2 + (s |> get(k)))),\n"
         "                replicate(2, replicate(4, 0)))",
         false, false, 8},
        {"def main(xss: [N][300]i32): [300]i32 =\n"
         "  xss |> reduce((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(300, 0))",
         true, true, 300},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *label = text_of("row fold %zu", c);
        const st_def *orig = def_of(cases[c].src);
        st_code code = generated(lowered(apply(orig, "try(each(any, try(fuse-map-reduce)))", label), label), label);
        /* private rows are declared `p_7[len];`, host buffers are t2_acc, t3_next */
        int rows = count_of(code.opencl, text_of("[%d];", cases[c].len));
        bool host = strstr(code.opencl, "_acc[") != NULL, in_place = host ? !strstr(code.opencl, "_next[") : rows == 1;
        ck_assert_msg(host == cases[c].host_buffer && in_place == cases[c].in_place && (host || rows >= 1),
                      "%s: the accumulator %s a host buffer, %s in place:\n%s", label, host ? "is" : "is not",
                      in_place ? "updated" : "not updated", code.opencl);
        if (cases[c].in_place && !cases[c].host_buffer) ck_assert_has(code.opencl, "#pragma unroll\n");
        st_exe *exe = built(&code, label);
        static const char *const sizes[] = {"N=0", "N=1", "N=7", "N=1000", "N=100003"};
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) agrees(exe, orig, sizes[k], 17 + k, label);
        st_exe_free(exe);
    }
}
END_TEST

START_TEST(rows_segmented) {
    const rows_case *c = &segmented_cases[_i];
    /* the rule fired: the lanes of a group are there */
    ck_assert_has(printed_def(apply(def_of(c->src), "each(map, try(segmented-scan(WG=5)))", c->name)), "iota(5)");
    rows_run(&segmented_cases[_i], "each(map, try(segmented-scan(WG=5)))");
    rows_run(&segmented_cases[_i], "each(map, try(segmented-scan(WG=256)))");
}
END_TEST

START_TEST(rows_agree_parallel) {
    if (!strstr(rows_cases[_i].src, "scan(")) return;
    rows_run(&rows_cases[_i], "try(each(scan, try(parallel-scan(BS=256, BF=2, SE=4))))");
    rows_run(&rows_cases[_i], st_default_strategy("CPU")); /* segmented-scan first where a map scans each row */
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 4. Errors                                                                */
/* ------------------------------------------------------------------------ */

/* st_codegen of d fails as the user's error, with every part in the message */
static void codegen_fails(const st_def *d, const char *const *parts) {
    st_code code;
    st_err err = {0};
    ck_assert_msg(!st_codegen(cx, d, ar, &code, &err), "expected st_codegen to fail for:\n%s\n--- it gave ---\n%s",
                  printed_def(d), code.opencl);
    ck_assert_msg(err.kind == ST_ERR_USER, "an internal error: %s", err.message);
    ck_assert_has(err.message, "cannot generate OpenCL for `main`");
    for (size_t i = 0; parts[i]; i++) ck_assert_has(err.message, parts[i]);
}

/* A mapGlb's index over a constant: the group's quotient where the group's
 * size divides it (512, 256), one element a work-item then (else runs of
 * them), the element's own where not (3, 100), and
 * nothing of the kind for an index that is not the work-item's own (i + 1),
 * for a remainder, or in an operator's C function. Each agrees with the interpreter at lengths around
 * the group's and block's sizes, the last group short or whole. */
START_TEST(group_quotients_agree) {
    static const struct {
        const char *src;
        bool quotient; /* the whole-group copy, with the group's quotient */
    } cases[] = {
        {"def main(xs: [N]i32): [N]i64 = iota(N) |> map(i => i / 512 + i64(xs |> get(i / 512 * 512)))", true},
        {"def main(xs: [N]i32): [N]i64 = iota(N) |> map(i => i / 256 * 1000 + i / 3 + i64(xs |> get(i)))", true},
        /* a function of the index alone is a C function of it (cg_apply): it reads nothing to share */
        {"def main(xs: [N]i32): [N]i64 = iota(N) |> map(i => i / 256 * 1000 + i / 3)", false},
        {"def main(xs: [N]i32): [N]i32 = iota(N) |> map(i => xs |> get(i / 3))", true},
        {"def main(xs: [N]i32): [N]i64 = iota(N) |> map(i => i / 100 - i64(xs |> get(i)))", true},
        {"def main(xs: [N]i32): [N]i64 = iota(N) |> map(i => (i + 1) / 256)", false},
        {"def main(xs: [N]i32): [N]i64 = iota(N) |> map(i => i % 256)", false},
    };
    static const char *const sizes[] = {"N=1", "N=7", "N=255", "N=256", "N=257", "N=1000", "N=1024", "N=1000003"};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *label = cases[c].src;
        const st_def *d = def_of(cases[c].src);
        st_code code = generated(lowered(d, label), label);
        ck_assert_msg(!strstr(code.opencl, "a whole group") == !cases[c].quotient &&
                          !strstr(code.opencl, "get_local_size(0) == 0 ?") == !cases[c].quotient,
                      "%s: the group's quotient %s:\n%s", label, cases[c].quotient ? "missing" : "where it is not",
                      code.opencl);
        /* without it, each work-item a run of elements, on a CPU thousands of them (a group of
           one each) and on a GPU one: the runs here are PoCL's, at every length below */
        ck_assert_msg(!strstr(code.opencl, "const long st_lo = (long)get_global_id(0) * st_run;") == cases[c].quotient &&
                          !strstr(code.host, "size_t run = strata_map_run(queue, n);") == cases[c].quotient &&
                          !strstr(code.host, "group = strata_is_cpu(queue) ? 1 : strata_group(") == cases[c].quotient,
                      "%s: runs %s:\n%s\n%s", label, cases[c].quotient ? "where a quotient is read" : "missing",
                      code.opencl, code.host);
        st_exe *exe = built(&code, label);
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) agrees(exe, d, sizes[k], 7 + k, label);
        st_exe_free(exe);
    }
}
END_TEST

/* The run kernels as a GPU launches them, on PoCL: the glue told that its
 * device is not a CPU launches runs of 16 bytes of the narrowest array
 * (cg_host.c), whose whole runs take the unrolled 128-bit branch and whose
 * last, short one the plain loop; each agrees with the interpreter at
 * lengths that leave the last run whole, short or alone, through views,
 * tuples, bytes and 64-bit elements. */
START_TEST(gpu_runs_agree_launched_as_on_a_gpu) {
    static const char *const progs[] = {
        "def main(xs: [N]f32): [N]f32 = xs |> map(x => x)",
        "def main(xs: [N]f32, ys: [N]f32): [N]f32 = zip(xs, ys) |> map((x, y) => 2.5 * x + y)",
        "def main(xs: [N]i32): ([N]i32, [N]f64) = xs |> map(x => (x * 3, f64(x) / 7.0)) |> unzip",
        "def main(xs: [N]u8): [N]f32 = xs |> map(x => f32(x) * 0.5)",
        "def main(xs: [N]i64): [N]i64 = xs |> map(x => x * 3 - 1)",
        "def main(xs: [N]i32): [N]i64 = iota(N) |> map(i => i64(xs |> get(i)) + i)",
        "def main(xs: [N]i32): [N - 2]i32 = map3((a, b, c) => a + 2 * b + c, xs[0:N - 2], xs[1:N - 1], xs[2:N])",
        "def main(xs: [N]i16, ys: [N]i32): [N + N]i32 = concat(map(x => i32(x), xs), ys) |> map(x => x - 7)",
    };
    static const char *const sizes[] = {"N=3", "N=7", "N=1000", "N=1027", "N=1000003"};
    for (size_t p = 0; p < sizeof progs / sizeof *progs; p++) {
        const char *label = text_of("%s, launched as on a GPU", progs[p]);
        const st_def *d = def_of(progs[p]);
        st_code code = generated(lowered(apply(d, st_default_strategy("GPU"), label), label), label);
        ck_assert_msg(strstr(code.opencl, "a GPU's run: 128-bit loads and stores"), "%s: no run:\n%s", label,
                      code.opencl);
        code = as_on_a_gpu(code, label);
        st_exe *exe = built(&code, label);
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) agrees(exe, d, sizes[k], 11 + k, label);
        st_exe_free(exe);
    }
}
END_TEST

/* A mapWrg over a padded array's blocks: the whole blocks (all but the
 * last) are written without the test against the end, the last keeps it,
 * and the padding (here 7, not 0, and returned) is where the interpreter
 * has it, at lengths that leave the last block short, whole or of one. */
START_TEST(whole_blocks_test_only_the_last) {
    const char *src = "def main(xs: [N]i32): [256 * ((N + 255) / 256)]i32 =\n"
                      "  iota(256 * ((N + 255) / 256)) |> map(i => if i < N then xs |> get(i) else 7) |> split(256)\n"
                      "    |> mapWrg(b => b |> mapLcl(x => x + 1)) |> join";
    const st_def *d = def_of(src);
    st_code code = generated(d, "padded blocks");
    ck_assert_has(code.opencl, "if (wg_0 < (s_N / 256L)) { /* a whole block");
    ck_assert_has(code.opencl, "(true || (");
    ck_assert_has(code.opencl, "(false || (");
    st_exe *exe = built(&code, "padded blocks");
    static const char *const sizes[] = {"N=1", "N=255", "N=256", "N=257", "N=1000", "N=1000003"};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) agrees(exe, d, sizes[k], 3 + k, "padded blocks");
    st_exe_free(exe);
}
END_TEST

/* A concat's side runs only where it is chosen: the tail here is empty where
 * N is a multiple of 4, and its element 0, read for every element of the
 * whole chunks, was checked and reported out of range. */
START_TEST(a_concats_empty_side_reads_nothing) {
    const char *src = "def main(xs: [N]f32): [N]f32 =\n"
                      "  concat(join(iota(N / 4) |> map(c => iota(4) |> map(j => xs[c * 4 + j]))),\n"
                      "         iota(N - N / 4 * 4) |> map(j => xs[N / 4 * 4 + j]))";
    const st_def *d = def_of(src);
    st_code code = generated(lowered(d, "concat"), "concat");
    st_exe *exe = built(&code, "concat");
    static const char *const sizes[] = {"N=1", "N=4", "N=7", "N=8", "N=1000", "N=1003"};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) agrees(exe, d, sizes[k], 5 + k, "concat");
    st_exe_free(exe);
}
END_TEST

START_TEST(unlowered_map_at_the_top) {
    const st_def *d = def_of("def main(xs: [N]i32) = xs |> map(x => x + 1)");
    codegen_fails(d, (const char *const[]){"a map that was not lowered", "lower-opencl", "(at `xs |> map(x => x + 1)`)", NULL});
    /* lowered, the same program runs */
    st_code code = generated(lowered(d, "map"), "map");
    st_exe *exe = built(&code, "map");
    agrees(exe, d, "N=1001", 1, "map");
    st_exe_free(exe);
}
END_TEST

START_TEST(map_lcl_at_the_top) {
    const st_def *d = def_of("def main(xs: [N]i32) = xs |> mapLcl(x => x + 1)");
    const char *const parts[] = {"mapLcl outside a work-group", "(at `xs |> mapLcl(x => x + 1)`)", NULL};
    codegen_fails(d, parts);
    codegen_fails(lowered(d, "mapLcl"), parts); /* lowering leaves it to codegen */
}
END_TEST

START_TEST(parallel_maps_inside_groups_and_work_items) {
    codegen_fails(def_of("def main(xss: [N][M]i32) = xss |> mapWrg(xs => xs |> split(1) |> mapWrg(r => r |> mapLcl(x => x)))"),
                  (const char *const[]){"mapWrg inside a work-group", "inside mapWrg the parallel map is mapLcl",
                                        "(at `xs |> split(1) |> mapWrg(", NULL});
    codegen_fails(def_of("def main(xss: [N][M]i32) = xss |> mapWrg(xs => xs |> mapGlb(x => x + 1))"),
                  (const char *const[]){"mapGlb inside a work-group", "(at `xs |> mapGlb(x => x + 1)`)", NULL});
    codegen_fails(def_of("def main(xss: [N][M]i32) = xss |> mapGlb(xs => xs |> mapLcl(x => x + 1))"),
                  (const char *const[]){"mapLcl inside one work-item's sequential code", "(at `xs |> mapLcl(x => x + 1)`)", NULL});
    codegen_fails(def_of("def main(xss: [N][M][2]i32) = xss |> mapWrg(xs => xs |> mapLcl(x => x |> mapGlb(y => y)))"),
                  (const char *const[]){"mapGlb inside one work-item's sequential code", "(at `x |> mapGlb(y => y)`)", NULL});
}
END_TEST

START_TEST(private_array_of_unknown_length) {
    /* a work-item of a mapGlb keeps it in its own slot of a global scratch buffer */
    const st_def *d = def_of("def main(xss: [N][M]i32) =\n"
                             "  xss |> mapGlb(xs => let p = xs |> mapSeq(x => x + 1) |> toPrivate in p |> reduceSeq(+, 0))");
    st_code code = generated(d, "scratch");
    st_exe *exe = built(&code, "scratch");
    agrees(exe, d, "N=7 M=13", 1, "scratch");
    st_exe_free(exe);
    /* every work-item of a group its own copy: no slot is each one's own */
    codegen_fails(def_of("def main(xss: [N][M]i32) =\n"
                         "  xss |> mapWrg(xs => let p = xs |> mapSeq(x => x + 1) |> toPrivate in p |> reduceSeq(+, 0))"),
                  (const char *const[]){"an array of type [M]i32 inside one work-item needs a constant length",
                                        "(at `xs |> mapSeq(x => x + 1)", NULL});
    /* toGlobal inside a group: each group would need a buffer of its own */
    codegen_fails(def_of("def main(xss: [N][M]i32) =\n"
                         "  xss |> mapWrg(xs => let t = xs |> mapLcl(x => x + 1) |> toGlobal in t |> mapLcl(x => x * 2))"),
                  (const char *const[]){"toGlobal inside a work-group", NULL});
}
END_TEST

/* An array literal is code in a kernel, which a device compiler takes in
 * time superlinear in its elements (minutes at 10^5 on PoCL): one past the
 * limit is refused at the literal, with its size; one at the limit is
 * generated. */
static const char *literal_of(int n, const char *tail) {
    st_buf b = {0};
    st_buf_printf(&b, "def main(xs: [N]i32): [%d]i32 =\n  [", n);
    for (int i = 0; i < n; i++) st_buf_printf(&b, "%s%d", i ? ", " : "", i % 1000);
    st_buf_printf(&b, "]%s\n", tail);
    const char *t = text_of("%s", b.data);
    st_buf_free(&b);
    return t;
}

START_TEST(array_literal_too_large) {
    const char *parts[] = {"an array literal of 8193 elements: a kernel holds one of at most 8192", "as an input", NULL};
    for (int fused = 0; fused < 2; fused++) {
        const char *src = literal_of(8193, fused ? " |> map(x => x * 2)" : "");
        const st_def *d = def_of(src);
        codegen_fails(lowered(d, "8193"), parts);
        codegen_fails(lowered(apply(d, st_default_strategy("CPU"), "8193"), "8193"), parts);
        st_code code;
        st_err err = {0};
        ck_assert(!st_codegen(cx, lowered(d, "8193"), ar, &code, &err));
        ck_assert_int_eq(err.loc.line, 2); /* at the literal's `[` */
        ck_assert_int_eq(err.loc.col, 3);
    }
    (void)generated(lowered(def_of(literal_of(8192, " |> map(x => x * 2)")), "8192"), "8192");
}
END_TEST

/* parallel-scan with BS=16384, BF=2 asks for work-groups of 8192 work-items
 * in its first layer; PoCL allows 4096. The glue either runs it in smaller
 * groups (a mapLcl is a loop strided by the group's size) and gets it right,
 * or refuses with a message that names the kernel and the sizes. */
START_TEST(work_group_too_large) {
    const st_def *orig = example_def("prefix_sum");
    const char *label = "parallel-scan(BS=16384, BF=2, SE=2)";
    st_code code = generated(lowered(apply(orig, label, label), label), label);
    ck_assert_has(code.host, "8192"); /* the widest mapLcl, asked for */
    st_exe *exe = built(&code, label);
    size_t most = st_cl_device(device())->max_work_group;
    st_arena *a = st_arena_new();
    st_inputs *in = st_inputs_new(cx, orig, a);
    st_err err = {0};
    const st_value *args;
    const st_binding *env;
    size_t nenv;
    ck_assert(st_inputs_set(in, "N=40000", &err) && st_inputs_generate(in, 1, &err) &&
              st_inputs_finish(in, &args, &env, &nenv, &err));
    st_launch *l = st_launch_new(exe, args, env, nenv, &err);
    ck_assert_msg(l != NULL, "%s", err.message);
    if (st_launch_run(l, NULL, &err)) {
        st_value got;
        st_expected want;
        ck_assert_msg(st_launch_read(l, a, &got, &err), "%s", err.message);
        ck_assert(st_eval_expected(cx, orig, args, env, nenv, a, &want, &err));
        ck_assert_msg(st_expected_agree(&got, &want, ST_TOLERANCE, &err), "%s in groups of at most %zu: %s", label, most,
                      err.message);
        agrees(exe, orig, "N=16385", 2, label);
        agrees(exe, orig, "N=7", 3, label);
    } else {
        /* work-groups shrink to fit; local memory cannot (a GPU's 48 KiB) */
        ck_assert_int_eq(err.kind, ST_ERR_USER);
        ck_assert_has(err.message, "bytes of local memory per work-group");
        ck_assert_has(err.message, text_of("the device has %llu", (unsigned long long)st_cl_device(device())->local_mem_bytes));
        bool named = false;
        for (uint32_t i = 0; i < code.nkernels; i++) named |= strstr(err.message, code.kernel_names[i]) != NULL;
        ck_assert_msg(named, "the message names no kernel: %s", err.message);
        st_value r;
        ck_assert(!st_launch_read(l, a, &r, &err)); /* refused, not garbage */
    }
    st_launch_free(l);
    st_arena_free(a);
    st_exe_free(exe);
}
END_TEST

/* One group's local array of `elems` i32 in rows of 1024, one work-item per
 * row: the lanes fit any device, the local memory is what is tested. */
static const st_def *local_block(int64_t elems) {
    return def_of(text_of("def main(xs: [N]i32) where N %% %lld == 0 =\n"
                          "  xs |> split(%lld) |> mapWrg(b =>\n"
                          "    let t = b |> split(1024) |> mapLcl(r => r |> mapSeq(x => x + 1)) |> toLocal\n"
                          "    in t |> mapLcl(r => r |> reduceSeq(+, 0))) |> join\n",
                          (long long)elems, (long long)elems));
}

START_TEST(local_memory_too_large) {
    const st_device_info *info = st_cl_device(device());
    /* twice the device's local memory, in i32 and whole rows */
    int64_t elems = (int64_t)(info->local_mem_bytes / 2 + 1023) / 1024 * 1024;
    if (elems / 1024 > (int64_t)info->max_work_group) return; /* lanes would not fit either */
    const st_def *d = local_block(elems);
    st_code code = generated(lowered(d, "local"), "local");
    st_exe *exe = built(&code, "local");
    st_arena *a = st_arena_new();
    st_inputs *in = st_inputs_new(cx, d, a);
    st_err err = {0};
    const st_value *args;
    const st_binding *env;
    size_t nenv;
    ck_assert(st_inputs_set(in, text_of("N=%lld", (long long)elems), &err) && st_inputs_generate(in, 1, &err) &&
              st_inputs_finish(in, &args, &env, &nenv, &err));
    st_launch *l = st_launch_new(exe, args, env, nenv, &err);
    ck_assert_msg(l != NULL, "%s", err.message);
    ck_assert(!st_launch_run(l, NULL, &err));
    ck_assert_int_eq(err.kind, ST_ERR_USER);
    ck_assert_has(err.message, "bytes of local memory per work-group");
    ck_assert_has(err.message, text_of("the device has %llu", (unsigned long long)info->local_mem_bytes));
    ck_assert_has(err.message, code.kernel_names[0]);
    st_launch_free(l);
    st_arena_free(a);
    st_exe_free(exe);
}
END_TEST

/* Three quarters of the device's local memory in one array fits, and runs. */
START_TEST(local_memory_that_fits) {
    const st_device_info *info = st_cl_device(device());
    int64_t elems = (int64_t)(info->local_mem_bytes / 4 * 3 / 4) / 1024 * 1024;
    if (elems < 1024 || elems / 1024 > (int64_t)info->max_work_group) return;
    const st_def *d = local_block(elems);
    const char *label = text_of("one local array of %lld bytes, the device has %llu", (long long)elems * 4,
                                (unsigned long long)info->local_mem_bytes);
    st_code code = generated(lowered(d, label), label);
    st_exe *exe = built(&code, label);
    agrees(exe, d, text_of("N=%lld", (long long)elems), 1, label);
    agrees(exe, d, text_of("N=%lld", (long long)elems * 2), 2, label);
    st_exe_free(exe);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 5. The glue compiles on its own                                          */
/* ------------------------------------------------------------------------ */

/* The C compiler meson builds strata with (STRATA_CC): there is always
 * one, so the check that the glue compiles standalone always runs. */
static const char *find_cc(void) {
    const char *cc = getenv("STRATA_CC");
    ck_assert_msg(cc && *cc, "STRATA_CC names no C compiler: run the suite through meson test");
    return cc;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert(fputs(text, f) >= 0);
    ck_assert(fclose(f) == 0);
}

typedef struct glue_case {
    const char *program; /* an example's name, or program text */
    const char *strategy;
} glue_case;

static const glue_case glue_cases[] = {
    {"prefix_sum", NULL},
    {"prefix_sum", PS("BS=64, BF=4, TD=2")},
    {"filter", FUSE " ; first(let, fuse-scan-map) ; first(let, fuse-scan-scatter)"},
    {"advanced", PS_IN("BS=8, BF=2, SE=2")},
    {"histogram", NULL},
    {"dot", NULL},
    {"block_sums", NULL},
    {"def main(xs: [N]u32, bs: [N]bool, H: i64, b: bool, z: f64) =\n"
     "  (xs |> mapGlb(x => x % 3u32), bs |> mapGlb(c => c != b), replicate(H, z))\n", NULL},
    /* scalars of 8 and 16 bits: the glue passes each by its own size */
    {"def main(xs: [N]u8, a: u8, b: i8, c: u16, d: i16) =\n"
     "  xs |> mapGlb(x => (x + a, i8(x) - b, u16(x) * c, i16(x) / d))\n", NULL},
    {"image_histogram", NULL},
};
enum { NGLUE_CASES = sizeof glue_cases / sizeof *glue_cases };

START_TEST(glue_compiles_standalone) {
    const char *cc = find_cc();
    const glue_case *c = &glue_cases[_i];
    bool text = strstr(c->program, "def ") != NULL;
    const char *label = text_of("%s under `%s`", text ? "a program of scalars" : c->program, c->strategy ? c->strategy : "");
    const st_def *d = text ? def_of(c->program) : example_def(c->program);
    st_code code = generated(lowered(apply(d, c->strategy, label), label), label);
    const char *src = text_of("%s/glue%d.c", scratch, _i);
    const char *obj = text_of("%s/glue%d.o", scratch, _i);
    const char *log = text_of("%s/glue%d.log", scratch, _i);
    write_text(src, code.host);
    int status = system(text_of("'%s' -std=c17 -Wall -Wextra -Werror -c '%s' -o '%s' > '%s' 2>&1", cc, src, obj, log));
    ck_assert_msg(status != -1 && WIFEXITED(status), "cannot run %s", cc);
    ck_assert_msg(WEXITSTATUS(status) == 0, "%s: the glue does not compile with `cc -std=c17 -Wall -Wextra -Werror`:\n%s",
                  label, slurp_file(ar, log, NULL));
    /* and the kernels build (st_exe_build compiles the glue again, with libtcc) */
    st_exe_free(built(&code, label));
}
END_TEST

/* A primitive that makes kernels of its own is named only by its own file,
 * which holds its descriptor (cg_algorithm): the shared code reads the
 * table, never a case of its own for one of them (docs/architecture.md),
 * and the runtime (codegen/runtime/) names none at all. */
START_TEST(only_its_own_file_names_a_kernel_making_primitive) {
    st_arena *a = st_arena_new();
    const struct {
        const char *prim, *own;
    } cases[] = {{"ST_PRIM_SCAN_LOOKBACK", "cg_lookback.c"}, {"ST_PRIM_SUBHISTOGRAMS", "cg_histogram.c"}};
    const struct {
        const char *folder;
        int least; /* files it holds at least, so that a moved folder is not read as empty */
    } folders[] = {{"codegen", 20}, {"codegen/runtime", 10}};
    for (size_t f = 0; f < sizeof folders / sizeof *folders; f++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            int files;
            const char *at =
                source_mention(a, folders[f].folder, cases[i].prim, (const char *[]){cases[i].own, NULL}, &files);
            ck_assert_msg(!at, "%s names %s, which only %s should", at, cases[i].prim, cases[i].own);
            ck_assert_int_gt(files, folders[f].least);
        }
    st_arena_free(a);
}
END_TEST

/* ------------------------------------------------------------------------ */

int main(void) {
    check_set_max_msg_size(64 * 1024); /* kernels and build logs in failures */
    scratch_make(scratch, sizeof scratch, "codegen");
    Suite *s = suite_create("codegen");

    TCase *ex = tcase_create("examples");
    tcase_add_checked_fixture(ex, rules_setup, pipeline_teardown);
    tcase_set_timeout(ex, 600);
    tcase_add_loop_test(ex, example_scans_agree, 0, NEXAMPLE_CASES);
    tcase_add_loop_test(ex, other_examples_agree, 0, NPLAIN_CASES);
    tcase_add_loop_test(ex, typed_scans_agree, 0, NTYPED_CASES);
    suite_add_tcase(s, ex);

    TCase *seq = tcase_create("sequential");
    tcase_add_checked_fixture(seq, rules_setup, pipeline_teardown);
    tcase_set_timeout(seq, 300);
    tcase_add_test(seq, sequential_examples_are_one_work_item);
    tcase_add_test(seq, sequential_tuples_and_folds_are_one_work_item);
    tcase_add_test(seq, kernels_do_not_depend_on_fresh_names);
    tcase_add_test(seq, paper_space_moves_only_its_bytes);
    tcase_add_test(seq, group_quotients_agree);
    tcase_add_test(seq, gpu_runs_agree_launched_as_on_a_gpu);
    tcase_add_test(seq, a_concats_empty_side_reads_nothing);
    tcase_add_test(seq, whole_blocks_test_only_the_last);
    tcase_add_test(seq, only_its_own_file_names_a_kernel_making_primitive);
    suite_add_tcase(s, seq);

    TCase *comp = tcase_create("compose");
    tcase_add_checked_fixture(comp, rules_setup, pipeline_teardown);
    tcase_set_timeout(comp, 300);
    tcase_add_loop_test(comp, compositions_agree, 0, NCOMPOSE_CASES);
    tcase_add_loop_test(comp, what_evaluates_runs, 0, 2 * NVALID_CASES);
    suite_add_tcase(s, comp);

    TCase *rows = tcase_create("rows");
    tcase_add_checked_fixture(rows, rules_setup, pipeline_teardown);
    tcase_set_timeout(rows, 300);
    tcase_add_loop_test(rows, rows_agree, 0, NROWS_CASES);
    tcase_add_test(rows, short_row_folds_stay_private);
    tcase_add_loop_test(rows, rows_agree_parallel, 0, NROWS_CASES);
    tcase_add_loop_test(rows, rows_segmented, 0, NSEGMENTED_CASES);
    tcase_add_loop_test(rows, rows_segmented_histogram, 0, NHISTOGRAM_CASES);
    suite_add_tcase(s, rows);

    TCase *err = tcase_create("errors");
    tcase_add_checked_fixture(err, rules_setup, pipeline_teardown);
    tcase_set_timeout(err, 300);
    tcase_add_test(err, unlowered_map_at_the_top);
    tcase_add_test(err, map_lcl_at_the_top);
    tcase_add_test(err, parallel_maps_inside_groups_and_work_items);
    tcase_add_test(err, private_array_of_unknown_length);
    tcase_add_test(err, array_literal_too_large);
    tcase_add_test(err, work_group_too_large);
    tcase_add_test(err, local_memory_too_large);
    tcase_add_test(err, local_memory_that_fits);
    suite_add_tcase(s, err);

    TCase *glue = tcase_create("glue");
    tcase_add_checked_fixture(glue, rules_setup, pipeline_teardown);
    tcase_set_timeout(glue, 300);
    tcase_add_loop_test(glue, glue_compiles_standalone, 0, NGLUE_CASES);
    suite_add_tcase(s, glue);

    int rc = run_suite(s);
    scratch_remove(scratch);
    return rc;
}
