/* tests/test_cuda.c — the CUDA backend (codegen/cg_cuda.c,
 * codegen/runtime/cuda_cl.c, cuda_lib.c).
 *
 * Without a GPU: every kernel strata generates — each scan rule, the
 * look-back in both protocols, widths and loads, each histogram choice, the
 * reductions, tuples, 64-bit and f64 — compiles with NVRTC for the H100
 * (sm_90) and an older GPU (sm_75, the oldest CUDA 13 has), as `--backend cuda` would build it; the
 * CUDA text is the OpenCL text with each __local made CUDA's; a kernel
 * that does not compile is an error with NVRTC's log; and without a
 * driver, --backend cuda says so and exits 1.
 *
 * With a GPU (a CUDA driver that sees one): examples run through the
 * backend equal the interpreter. The whole look-back, histogram and
 * codegen suites run there too with STRATA_TEST_DEVICE=cuda.
 *
 * Where NVRTC is missing (it comes with the CUDA toolkit, not with
 * Debian's packages), or no GPU is there, those parts are skipped (exit 77:
 * SKIP in meson's log), each a test of its own (main, below). */
#include "histogram_programs.h"
#include "lookback_cases.h"
#include "pipeline_fixture.h"
#include "run_strata.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Every kernel compiles                                                    */
/* ------------------------------------------------------------------------ */

typedef struct program_case {
    const char *what;   /* an example's name, or a label for src */
    const char *src;    /* NULL: examples/<what>.strata */
    const char *strategy;
} program_case;

#define BLOCKS_SCAN "def main(xs: [N]f32): [N]f32 where N % 512 == 0 =\n  xs |> scan(+, 0.0)\n"
#define F64_SCAN "def main(xs: [N]f64): [N]f64 =\n  xs |> scan(+, 0.0f64)\n"
#define I64_MAX_SCAN "def main(xs: [N]i64): [N]i64 =\n  xs |> scan(max, -9223372036854775808i64)\n"
#define BOOL_SCAN "def main(xs: [N]bool): [N]bool =\n  xs |> scan(||, false)\n"
#define U32_SUM "def main(xs: [N]u32): u32 =\n  xs |> reduce(+, 0u32)\n"
/* 8- and 16-bit integers: every operator, conversions, and histograms whose
 * buckets are small (a compare-and-swap on their 32-bit word) */
#define SMALL_OPS                                                                                     \
    "def main(xs: [N]u8, ys: [N]i8, zs: [N]u16, ws: [N]i16) =\n"                                    \
    "  map((x, y, z, w) => (x + x * x - x / 3u8 % 7u8, x << u8(y) >> 1u8 ^ (x & 7u8 | 1u8), -y / y % y,"   \
    " min(z, 3u16) * z >> 9u16, max(w, -w) << 3i16 >> 1i16, i8(f32(w) * 0.5), u16(f64(x)), u8(z), x < u8(y)),"  \
    " zip(zip(xs, ys), zip(zs, ws)) |> map(p => (p.0.0, p.0.1, p.1.0, p.1.1)))\n"
#define U16_SCAN "def main(xs: [N]u16): [N]u16 =\n  xs |> scan(+, 0u16)\n"
#define I8_MAX "def main(xs: [N]i8): i8 =\n  xs |> reduce(max, i8.min)\n"
#define U8_BUCKETS "def main(is: [N]u8, vs: [N]u8): [256]u8 =\n  reduce_by_index(replicate(256, 0u8), +, 0u8, is, vs)\n"
#define I16_BUCKETS                                                                                   \
    "def main(is: [N]i32, vs: [N]i16, H: i64): [H]i16 =\n  reduce_by_index(replicate(H, 0i16), min, i16.max, is, vs)\n"
/* an index the kernel checks, recording a fault (codegen/cg_fault.c) */
#define CHECKED_GET "def main(xs: [N]f32, ks: [M]i64): [M]f32 =\n  ks |> map(k => xs |> get(k))\n"
/* issue 46: divisors the kernel checks, reads through views it checks, in a map and in a look-back's operator */
#define CHECKED_DIVISION                                                                              \
    "def main(xs: [N]i32, ys: [N]u64): [N]i32 =\n  map2((x, y) => x / (x - 1) + x % i32(y) + i32(y / y), xs, ys)\n"
#define CHECKED_VIEWS                                                                                 \
    "def main(xs: [N]i64, is: [M]i64): [M]i64 =\n"                                                   \
    "  let s = xs[2:4] in map(i => s[i] + [1i64, 2i64, 3i64][i] + iota(5)[i], is)\n"
#define DIVIDING_SCAN "def main(xs: [N]i32): [N]i32 =\n  xs |> scan((a, b) => a + 100 / b, 0)\n"
#define TOP_LOOP_SCAN "def main(xs: [N]u32, k: i64): [N]u32 =\n  loop ys = xs for i < k do ys |> scan(+, 0u32)\n"
#define WHILE_IN_MAP                                                                                  \
    "def main(xs: [N]i32): [N]i32 =\n  xs |> map(x => let (a, b) = loop (a, b) = ((x & 127) + 1, 0) while a != 1 do " \
    "(if a % 2 == 0 then a / 2 else 3 * a + 1, b + 1) in b)\n"

/* a scatter whose indices repeat: its winners claimed by atomic max (32-bit
 * words or 64-bit, as the length says when it runs), then its writes; of a
 * scan's indices, the look-back run once to claim and once to write */
#define REPEATED_SCATTER "def main(xs: [N]i32): [4]i64 =\n  scatter(replicate(4, -1i64), map(x => i64(x) & 3, xs), iota(N))\n"
#define REPEATED_SCATTER_1000                                                                          \
    "def main(xs: [1000]i32): [4]f32 =\n  scatter(replicate(4, 0.0), map(x => i64(x) & 3, xs), xs |> map(x => f32(x)))\n"
#define SCANNED_SCATTER                                                                                 \
    "def main(xs: [N]i32): [16]i32 =\n  let c = xs |> map(x => i64(x & 1)) |> scan(+, 0i64)\n"            \
    "  in scatter(replicate(16, -7), c |> map(k => k % 20 - 2), xs)\n"
#define GPU_DEFAULT_SCATTER                                                                             \
    "try(each(any, try(fuse-map-scan))) ; try(each(any, try(fuse-scan-map))) ; try(each(any, try(fuse-scan-scatter))) ; " \
    "try(each(scatter, try(one(lookback(M=12, WG=256, LW=32)))))"

static const program_case program_cases[] = {
    /* the default lowering, and every scan rule of [Pizzuti et al. 2022] */
    {"prefix_sum", NULL, NULL},
    {"prefix_sum", NULL, "parallel-scan(BS=256, BF=2, SE=4)"},
    {"prefix_sum", NULL, "parallel-scan(BS=16, BF=2, TD=2)"},
    {"blocks of 512", BLOCKS_SCAN, "scan-then-propagate(BS=512) ; first(scan, brent-kung(BF=2, TD=5))"},
    {"prefix_sum", NULL, "first(scan, sequential-scan)"},
    {"advanced", NULL, NULL},
    {"linear_recurrence", NULL, "first(scan, parallel-scan(BS=64, BF=4, SE=4))"},
    {"filter", NULL, NULL},
    {"radix_step", NULL, NULL},
    {"dot", NULL, NULL},
    {"block_sums", NULL, NULL},
    {"histogram", NULL, NULL},
    /* scalar types a prelude must map */
    {"an f64 scan", F64_SCAN, NULL},
    {"an i64 max scan", I64_MAX_SCAN, NULL},
    {"a bool scan", BOOL_SCAN, NULL},
    {"a u32 sum", U32_SUM, NULL},
    {"a checked get", CHECKED_GET, NULL},
    {"checked divisions", CHECKED_DIVISION, NULL},
    {"checked reads of views", CHECKED_VIEWS, NULL},
    {"a dividing scan", DIVIDING_SCAN, NULL},
    {"8/16-bit operators", SMALL_OPS, NULL},
    {"a u16 scan", U16_SCAN, NULL},
    {"a u16 scan", U16_SCAN, "parallel-scan(BS=256, BF=2, SE=4)"},
    {"a u16 scan", U16_SCAN, "first(scan, lookback(M=4, WG=64))"},
    {"an i8 max", I8_MAX, NULL},
    {"image_histogram", NULL, NULL},
    {"image_histogram", NULL, "subhistogram(MEM=local, ATOMIC=cas)"},
    {"u8 buckets", U8_BUCKETS, "subhistogram(MEM=local, ATOMIC=cas)"},
    {"u8 buckets", U8_BUCKETS, "subhistogram(C=4, MEM=global, ATOMIC=cas)"},
    {"i16 buckets", I16_BUCKETS, "subhistogram(C=8, MEM=local)"},
    {"i16 buckets", I16_BUCKETS, "subhistogram(MEM=global, ATOMIC=xchg)"},
    /* loops: in a map (a C loop in the kernel), at the top (the glue's) with a look-back in the body */
    {"loop_recurrence", NULL, NULL},
    {"a top-level loop of scans", TOP_LOOP_SCAN, "try(each(top scan, lookback(M=12, WG=256, LW=32)))"},
    {"a while loop of pairs in a map", WHILE_IN_MAP, NULL},
    /* scatters whose indices repeat */
    {"a scatter of repeated indices", REPEATED_SCATTER, NULL},
    {"a scatter of repeated indices, 1000 of them", REPEATED_SCATTER_1000, NULL},
    {"a scatter of a scan's repeated indices", SCANNED_SCATTER, GPU_DEFAULT_SCATTER},
    {"radix_sort", NULL, GPU_DEFAULT_SCATTER},
};

static st_code code_of(const char *what, const char *src, const char *strategy) {
    const char *label = text_of("%s under %s", what, strategy ? strategy : "the default lowering");
    const st_def *d = src ? def_of(src) : example_def(what);
    return generated(lowered(apply(d, strategy, label), label), label);
}

/* code compiles for the H100 and an older GPU, into a CUBIN. */
static void compiles(const st_code *code, const char *label) {
    static const int archs[] = {90, 75};
    for (size_t i = 0; i < sizeof archs / sizeof *archs; i++) {
        st_err err = {0};
        size_t bytes = 0;
        ck_assert_msg(st_cuda_compile_check(code, archs[i], &bytes, &err), "%s, sm_%d: %s", label, archs[i],
                      err.message);
        ck_assert_msg(bytes > 0, "%s: an empty CUBIN", label);
    }
}

START_TEST(each_program_compiles_with_nvrtc) {
    const program_case *c = &program_cases[_i];
    st_code code = code_of(c->what, c->src, c->strategy);
    compiles(&code, text_of("%s under %s", c->what, c->strategy ? c->strategy : "the default lowering"));
}
END_TEST

START_TEST(each_lookback_compiles_with_nvrtc) {
    const example_case *c = &example_cases[_i];
    st_code code = code_of(c->program, NULL, c->strategy);
    compiles(&code, text_of("%s under %s", c->program, c->strategy));
}
END_TEST

START_TEST(each_histogram_compiles_with_nvrtc) {
    const hist_case *c = &hist_cases[_i];
    st_code code = code_of(c->what, c->src, text_of("first(reduce_by_index, %s)", c->strategy));
    compiles(&code, text_of("%s under %s", c->what, c->strategy));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The CUDA text                                                            */
/* ------------------------------------------------------------------------ */

/* A local histogram has both kinds of __local: an array the kernel declares
 * (lb_…, hs_…) and a parameter sized by the host; the look-back declares
 * its own. In CUDA the first are __shared__, the parameters offsets into
 * the launch's dynamic shared memory, and no __local is left. */
START_TEST(each_local_becomes_shared_memory_or_an_offset) {
    st_code h = code_of("+ on i32", ADD_I32, "first(reduce_by_index, subhistogram(C=64, MEM=local, ATOMIC=xchg))");
    ck_assert_msg(!strstr(h.cuda, "__local"), "a __local is left in the CUDA text");
    ck_assert_int_eq(count_of(h.opencl, "__local int *ST_LOCAL_RESTRICT hs_sub"), 1);
    ck_assert_int_eq(count_of(h.cuda, "unsigned long long hs_sub_at"), 1);
    ck_assert_int_eq(count_of(h.cuda, "int *hs_sub = (int *)(strata_shared + hs_sub_at);"), 1);
    /* a pointer into local memory is a generic pointer */
    ck_assert_int_gt(count_of(h.opencl, "(volatile __local int *)"), 0);
    ck_assert_int_eq(count_of(h.cuda, "(volatile int *)"), count_of(h.opencl, "(volatile __local int *)"));
    st_code l = code_of("prefix_sum", NULL, LB("M=4, WG=64"));
    ck_assert_msg(!strstr(l.cuda, "__local"), "a __local is left in the CUDA text");
    ck_assert_int_eq(count_of(l.cuda, "__shared__ float lb_tile["), 1);
    ck_assert_int_eq(count_of(l.cuda, "__shared__ long lb_id;"), 1);
    /* every kernel, under its own name, in both texts */
    for (uint32_t i = 0; i < l.nkernels; i++) {
        ck_assert_int_eq(count_of(l.opencl, text_of(" %s(", l.kernel_names[i])), 1);
        ck_assert(kernel_declared(l.opencl, l.kernel_names[i]));
        ck_assert_int_eq(count_of(l.cuda, text_of(" %s(", l.kernel_names[i])), 1);
        ck_assert(kernel_declared(l.cuda, l.kernel_names[i]));
    }
}
END_TEST

START_TEST(kernels_that_do_not_compile_are_an_error_with_the_log) {
    st_code code = {.cuda = "extern \"C\" __global__ void k(int *x) {\n    x[0] = no_such_name;\n}\n"};
    st_err err = {0};
    ck_assert(!st_cuda_compile_check(&code, 90, NULL, &err));
    ck_assert_has(err.message, "do not compile with NVRTC for sm_90");
    ck_assert_has(err.message, "kernels.cu(2)");
    ck_assert_has(err.message, "no_such_name");
}
END_TEST

/* A kernel whose own local memory is more than CUDA's 48 KiB (the radix
 * sort's look-back tile at M=64, WG=64 of (index, key) pairs): ptxas' log
 * said as the host glue says a group's local memory is too much. */
START_TEST(too_much_local_memory_is_said_plainly) {
    const st_def *d = example_def("radix_sort");
    const char *s = "try(each(any, try(fuse-map-scan))) ; try(each(top scan, lookback(M=64, WG=64, LOAD=local)))";
    st_code code = generated(lowered(apply(d, s, "radix_sort"), "radix_sort"), "radix_sort");
    st_err err = {0};
    ck_assert(!st_cuda_compile_check(&code, 90, NULL, &err));
    ck_assert_has(err.message, "bytes of local memory per work-group; CUDA gives a kernel's own local memory 49152");
    ck_assert_msg(strlen(err.message) < 300, "more than the refusal: %s", err.message);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The backend on a GPU, or its absence                                    */
/* ------------------------------------------------------------------------ */

START_TEST(examples_through_the_backend_equal_the_interpreter) {
    st_err err = {0};
    st_cl *cl = st_cl_open("cuda", &err);
    ck_assert_msg(cl != NULL, "%s", err.message); /* main skipped this part without a GPU */
    ck_assert_ptr_eq(st_cl_device(cl)->backend, st_backend_named("cuda"));
    static const struct {
        const char *program, *strategy, *sets;
    } runs[] = {
        {"prefix_sum", NULL, "N=1000003"},
        {"prefix_sum", LB("M=16, WG=256, LW=32"), "N=1000003"},
        {"filter", FUSED LB("M=8, WG=256"), "N=65536"},
        {"advanced", LB("M=4, WG=128"), "N=4099"},
        {"histogram", "first(reduce_by_index, subhistogram)", "N=100000 H=256"},
        {"block_sums", NULL, "N=65536"},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        const char *label = text_of("%s under %s on CUDA", runs[i].program, runs[i].strategy ? runs[i].strategy : "-");
        const st_def *orig = example_def(runs[i].program);
        st_code code = generated(lowered(apply(orig, runs[i].strategy, label), label), label);
        st_exe *exe = st_exe_build(cl, &code, &err);
        ck_assert_msg(exe != NULL, "%s: %s", label, err.message);
        agrees(exe, orig, runs[i].sets, 7, label);
        st_exe_free(exe);
    }
    st_cl_close(cl);
}
END_TEST

START_TEST(the_command_line_takes_the_backend) {
    cli c;
    cli_open(&c, "cuda");
    char *out, *err;
    const char *ps = cli_example(&c, "prefix_sum");
    ck_assert_int_eq(cli_strata(&c, ARGS("run", ps, "--size", "N=10", "--backend", "metal"), &out, &err), 1);
    ck_assert_has(err, "--backend is opencl or cuda, not `metal`");
    ck_assert_int_eq(cli_strata(&c, ARGS("devices", "--backend", "metal"), &out, &err), 1);
    ck_assert_has(err, "--backend is opencl or cuda, not `metal`");
    /* --emit writes the CUDA text beside the OpenCL */
    const char *emit = arena_text(c.a, "%s/emitted", c.dir);
    int rc = cli_strata(&c, ARGS("run", ps, "--size", "N=10", "--emit", emit), &out, &err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_has(slurp_file(c.a, arena_text(c.a, "%s/kernels.cu", emit), NULL), "extern \"C\" __global__ void");
    st_err e = {0};
    st_cl *cl = st_cl_open("cuda", &e);
    rc = cli_strata(&c, ARGS("run", ps, "--size", "N=1000", "--backend", "cuda", "--check"), &out, &err);
    if (cl) { /* a GPU: the run checks */
        ck_assert_msg(rc == 0, "%s", err);
        ck_assert_has(err, "(CUDA)");
        ck_assert_has(err, "check: the results equal the interpreter's");
        st_cl_close(cl);
    } else { /* none: the library's words, and exit 1 */
        ck_assert_int_eq(rc, 1);
        ck_assert_has(err, e.message);
        ck_assert_int_eq(cli_strata(&c, ARGS("devices", "--backend", "cuda"), &out, &err), 1);
        ck_assert_has(err, e.message);
        ck_assert_int_eq(cli_strata(&c, ARGS("run", ps, "--size", "N=10", "--device", "cuda:0"), &out, &err), 1);
        ck_assert_has(err, e.message);
    }
    cli_close(&c);
}
END_TEST

/* A backend is codegen/'s (st_backend): what explore/ and cli/ need of one
 * they ask its descriptor, so no C file there names the CUDA backend (in
 * any case). The user's name for it comes from the descriptor. */
START_TEST(nothing_above_codegen_names_the_cuda_backend) {
    st_arena *a = st_arena_new();
    const char *folders[] = {"explore", "cli"};
    for (size_t f = 0; f < sizeof folders / sizeof *folders; f++) {
        int files;
        const char *at = source_mention(a, folders[f], "cuda", NULL, &files);
        ck_assert_msg(!at, "%s names the CUDA backend", at);
        ck_assert_int_gt(files, 5);
    }
    st_arena_free(a);
}
END_TEST

/* Three meson tests of one executable, so that what cannot run here says
 * so (exit 77, "SKIP" in the log) rather than passing silently:
 *   cuda         the command line's backend option, with or without CUDA
 *   cuda-nvrtc   every kernel compiled by NVRTC (skipped without NVRTC)
 *   cuda-gpu     examples run on a CUDA GPU (skipped without one) */
static Suite *cuda_suite(const char *part) {
    Suite *s = suite_create("cuda");
    TCase *t = tcase_create(part);
    tcase_set_timeout(t, 600);
    tcase_add_checked_fixture(t, rules_setup, pipeline_teardown);
    if (!strcmp(part, "nvrtc")) {
        tcase_add_loop_test(t, each_program_compiles_with_nvrtc, 0, (int)(sizeof program_cases / sizeof *program_cases));
        tcase_add_loop_test(t, each_lookback_compiles_with_nvrtc, 0, (int)(sizeof example_cases / sizeof *example_cases));
        tcase_add_loop_test(t, each_histogram_compiles_with_nvrtc, 0, (int)(sizeof hist_cases / sizeof *hist_cases));
        tcase_add_test(t, each_local_becomes_shared_memory_or_an_offset);
        tcase_add_test(t, kernels_that_do_not_compile_are_an_error_with_the_log);
        tcase_add_test(t, too_much_local_memory_is_said_plainly);
    } else if (!strcmp(part, "gpu")) {
        tcase_add_test(t, examples_through_the_backend_equal_the_interpreter);
    } else {
        tcase_add_test(t, the_command_line_takes_the_backend);
        tcase_add_test(t, nothing_above_codegen_names_the_cuda_backend);
    }
    suite_add_tcase(s, t);
    return s;
}

/* Why `part` cannot run here, or NULL. A CUDA toolkit or driver that is
 * there but broken is not a reason to skip: *broken, and the test fails. */
static const char *missing(const char *part, st_err *err, bool *broken) {
    *broken = false;
    if (!strcmp(part, "nvrtc")) {
        st_code code = {.cuda = "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n"};
        if (st_cuda_compile_check(&code, 90, NULL, err)) return NULL;
        *broken = !strstr(err->message, "no NVRTC here");
        return err->message;
    }
    if (!strcmp(part, "gpu")) {
        /* asked in a child: CUDA started in this process would not work in
           the children Check forks for the tests (cuInit's NOT_INITIALIZED) */
        int pipe_fd[2];
        if (pipe(pipe_fd) != 0) return "no pipe to ask a child whether CUDA starts";
        pid_t child = fork();
        if (child == 0) {
            st_cl *cl = st_cl_open("cuda", err);
            if (cl) st_cl_close(cl);
            else if (write(pipe_fd[1], err->message, strlen(err->message)) < 0) _exit(2);
            _exit(cl ? 0 : 1);
        }
        close(pipe_fd[1]);
        ssize_t got = child > 0 ? read(pipe_fd[0], err->message, sizeof err->message - 1) : -1;
        err->message[got > 0 ? got : 0] = 0;
        close(pipe_fd[0]);
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child) return "no child to ask whether CUDA starts";
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return NULL;
        if (!err->message[0]) snprintf(err->message, sizeof err->message, "the child asking CUDA ended with %d", status);
        *broken = !strstr(err->message, "no CUDA driver here") && !strstr(err->message, "sees no GPU") &&
                  !strstr(err->message, "does not start");
        return err->message;
    }
    return NULL;
}

int main(int argc, char **argv) {
    const char *part = argc > 1 ? argv[1] : "cli";
    st_err err = {0};
    bool broken;
    const char *why = missing(part, &err, &broken);
    if (why) {
        fprintf(stderr, "cuda-%s: %s: %s\n", part, broken ? "the toolkit is here but fails" : "skipped", why);
        return broken ? 1 : 77;
    }
    return run_suite(cuda_suite(part));
}
