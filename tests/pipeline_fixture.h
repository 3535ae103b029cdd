/* tests/pipeline_fixture.h — the whole pipeline of `strata run`, step by
 * step, for the suites that check generated code against the interpreter:
 * parse, rewrite with a strategy, lower, generate, build on the default
 * device (PoCL on CI; $STRATA_TEST_DEVICE picks another), run, and compare
 * with st_eval of the original def.
 * Included by one test file each (its globals are that file's). */
#ifndef STRATA_TESTS_PIPELINE_FIXTURE_H
#define STRATA_TESTS_PIPELINE_FIXTURE_H

#include "codegen/codegen.h"
#include "rules_fixture.h"

/* ------------------------------------------------------------------------ */
/* Fixture                                                                  */
/* ------------------------------------------------------------------------ */

static st_cl *device_cl; /* opened on first use, once per test process */

static inline void pipeline_teardown(void) {
    st_cl_close(device_cl);
    device_cl = NULL;
    rules_teardown();
}

/* The default device, or $STRATA_TEST_DEVICE as --device takes it: `cuda`
 * runs a suite's kernels through the CUDA backend on an NVIDIA GPU. */
static inline st_cl *device(void) {
    if (!device_cl) {
        st_err err = {0};
        const char *spec = getenv("STRATA_TEST_DEVICE");
        device_cl = st_cl_open(spec && spec[0] ? spec : NULL, &err);
        ck_assert_msg(device_cl != NULL, "st_cl_open: %s", err.message);
    }
    return device_cl;
}


/* ------------------------------------------------------------------------ */
/* The pipeline, step by step                                               */
/* ------------------------------------------------------------------------ */

static inline const st_def *def_of(const char *src) { return entry_ok(parse_ok(cx, src)); }

static inline const st_def *example_def(const char *name) {
    const char *src = example_text(ar, name);
    st_err err = {0};
    const st_program *p = st_parse_program(cx, text_of("%s.strata", name), src, strlen(src), &err);
    ck_assert_msg(p != NULL, "%s.strata: %d:%d: %s", name, err.loc.line, err.loc.col, err.message);
    return entry_ok(p);
}

static inline const char *printed_def(const st_def *d) {
    st_buf b = {0};
    st_print_def(d, &b);
    const char *s = text_of("%s", b.data ? b.data : "");
    st_buf_free(&b);
    return s;
}

/* d rewritten by the strategy text (NULL: d itself) */
/* n elements of elem bytes in the test's arena (room for one when n = 0) */
static inline void *room(int64_t n, size_t elem) {
    void *p = st_arena_alloc(ar, (size_t)(n ? n : 1) * elem);
    ck_assert(p != NULL);
    return p;
}

/* a tuple of copies of n items */
static inline st_value tuple_of(uint32_t n, const st_value *items) {
    st_value *copy = room(n, sizeof *copy);
    memcpy(copy, items, n * sizeof *copy);
    return st_value_tuple(n, copy);
}

/* d run by the interpreter at N = n on args gives want */
static inline void interpreted(const st_def *d, const st_value *args, int64_t n, const st_value *want,
                               const char *label) {
    st_binding env = {st_intern_cstr(cx, "N"), n};
    st_value got;
    st_err err = {0};
    ck_assert_msg(st_eval(cx, d, args, &env, 1, ar, &got, &err), "%s, N = %lld: the interpreter fails: %s\n%s", label,
                  (long long)n, err.message, printed_def(d));
    ck_assert_msg(st_value_agree(&got, want, 0, &err), "%s, N = %lld: %s\n%s", label, (long long)n, err.message,
                  printed_def(d));
}

static inline const st_def *apply(const st_def *d, const char *strategy, const char *label) {
    if (!strategy) return d;
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", strategy, &err);
    ck_assert_msg(s != NULL, "%s: `%s` does not parse: %s", label, strategy, err.message);
    st_rw *rw = st_rw_new(cx, reg);
    ck_assert(rw != NULL);
    const st_def *now = st_rewrite_def(rw, s, d, &err);
    st_rw_free(rw);
    ck_assert_msg(now != NULL, "%s: `%s` does not apply: %s", label, strategy, err.message);
    return now;
}

/* d after the default lowering, as `run` does it */
static inline const st_def *lowered(const st_def *d, const char *label) {
    const st_strategy *s = st_default_lowering(cx, reg);
    ck_assert(s != NULL);
    st_rw *rw = st_rw_new(cx, reg);
    st_err err = {0};
    const st_def *now = st_rewrite_def(rw, s, d, &err);
    st_rw_free(rw);
    ck_assert_msg(now != NULL, "%s: lower-opencl fails: %s", label, err.message);
    return now;
}

/* Kernel `name` is declared in text: `__kernel void name(` or CUDA's
 * `extern "C" __global__ void name(`, attributes between (cg_glue.c). */
static inline bool kernel_declared(const char *text, const char *name) {
    const char *at = strstr(text, text_of(" %s(", name)), *line = at;
    if (!at) return false;
    while (line > text && line[-1] != '\n') line--;
    bool kernel = !strncmp(line, "__kernel ", strlen("__kernel ")) ||
                  !strncmp(line, "extern \"C\" __global__ ", strlen("extern \"C\" __global__ "));
    const char *is_void = strstr(line, " void ");
    return kernel && is_void && is_void < at;
}

static inline st_code generated(const st_def *d, const char *label) {
    st_code code;
    st_err err = {0};
    ck_assert_msg(st_codegen(cx, d, ar, &code, &err), "%s: st_codegen fails: %s\n--- for ---\n%s", label, err.message,
                  printed_def(d));
    /* what the glue contract promises */
    ck_assert_ptr_eq(code.def, d);
    ck_assert(code.opencl != NULL && code.host != NULL);
    ck_assert_uint_ge(code.nkernels, 1);
    for (uint32_t i = 0; i < code.nkernels; i++) {
        ck_assert_msg(kernel_declared(code.opencl, code.kernel_names[i]), "%s: no kernel %s", label,
                      code.kernel_names[i]);
        ck_assert_has(code.host, code.kernel_names[i]);
    }
    return code;
}

/* code launched as on a GPU, on whatever device runs the tests (PoCL's CPU
 * on CI): the glue's strata_is_cpu made to answer 0, so that the launches
 * (groups, runs, tiles) are the ones a GPU gets. */
static inline st_code as_on_a_gpu(st_code code, const char *label) {
    const char *cpu = "return (strata_device_ulong(queue, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;";
    const char *at = strstr(code.host, cpu);
    ck_assert_msg(at != NULL, "%s: the glue's device test moved:\n%s", label, code.host);
    code.host = text_of("%.*sreturn 0;%s", (int)(at - code.host), code.host, at + strlen(cpu));
    return code;
}

static inline st_exe *built(const st_code *code, const char *label) {
    st_err err = {0};
    st_exe *exe = st_exe_build(device(), code, &err);
    /* the kernels on stderr: a failure's message is short (Check sends it to
       the runner, which takes a few KiB) */
    if (!exe) fprintf(stderr, "--- %s: the kernels st_exe_build failed on ---\n%s\n", label, code->opencl);
    ck_assert_msg(exe != NULL, "%s: st_exe_build fails: %s", label, err.message);
    return exe;
}

/* Seeded inputs for `orig` with the sizes and scalars in `sets` ("N=1000
 * H=37"), generated as `strata run` does, in an arena of their own. */
typedef struct seeded {
    st_arena *a;
    const st_value *args;
    const st_binding *env;
    size_t nenv;
} seeded;

static inline seeded seeded_inputs(const st_def *orig, const char *sets, uint64_t seed, const char *label) {
    seeded in = {.a = st_arena_new()};
    ck_assert(in.a != NULL);
    st_inputs *inputs = st_inputs_new(cx, orig, in.a);
    ck_assert(inputs != NULL);
    st_err err = {0};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", sets);
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        ck_assert_msg(st_inputs_set(inputs, tok, &err), "%s: %s: %s", label, tok, err.message);
    ck_assert_msg(st_inputs_generate(inputs, seed, &err), "%s, %s: %s", label, sets, err.message);
    ck_assert_msg(st_inputs_finish(inputs, &in.args, &in.env, &in.nenv, &err), "%s, %s: %s", label, sets, err.message);
    return in;
}

/* Seeded inputs for `orig` with `sets`, run on the device twice and in the
 * interpreter; the results agree. The second run gets the first one's
 * temporaries back from the executable's pool
 * (codegen/runtime/buffer_pool.h), as they were left: what it computes
 * must not depend on them. */
static inline void agrees(st_exe *exe, const st_def *orig, const char *sets, uint64_t seed, const char *label) {
    seeded in = seeded_inputs(orig, sets, seed, label);
    st_err err = {0};
    st_expected want;
    st_value got;
    ck_assert_msg(st_eval_expected(cx, orig, in.args, in.env, in.nenv, in.a, &want, &err),
                  "%s, %s: the interpreter fails: %s", label, sets, err.message);
    st_launch *l = st_launch_new(exe, in.args, in.env, in.nenv, &err);
    ck_assert_msg(l != NULL, "%s, %s: st_launch_new: %s", label, sets, err.message);
    for (int run = 1; run <= 2; run++) {
        ck_assert_msg(st_launch_run(l, NULL, &err), "%s, %s, run %d: st_launch_run: %s", label, sets, run, err.message);
        ck_assert_msg(st_launch_read(l, in.a, &got, &err), "%s, %s, run %d: st_launch_read: %s", label, sets, run,
                      err.message);
        ck_assert_msg(st_expected_agree(&got, &want, ST_TOLERANCE, &err),
                      "%s, %s, run %d: the device disagrees with the interpreter: %s", label, sets, run, err.message);
    }
    st_launch_free(l);
    st_arena_free(in.a);
}

/* A rewrite keeps the result: orig and now, on the same seeded inputs with
 * `sets`, give exactly the same in the interpreter. */
static inline void same_in_the_interpreter(const st_def *orig, const st_def *now, const char *sets, uint64_t seed,
                                           const char *label) {
    seeded in = seeded_inputs(orig, sets, seed, label);
    st_err err = {0};
    st_value want, got;
    ck_assert_msg(st_eval(cx, orig, in.args, in.env, in.nenv, in.a, &want, &err), "%s, %s: %s", label, sets, err.message);
    ck_assert_msg(st_eval(cx, now, in.args, in.env, in.nenv, in.a, &got, &err), "%s rewritten, %s: %s", label, sets,
                  err.message);
    ck_assert_msg(st_value_agree(&got, &want, 0, &err), "%s, %s: %s\n%s", label, sets, err.message, printed_def(now));
    st_arena_free(in.a);
}

#endif
