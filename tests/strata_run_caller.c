/* tests/strata_run_caller.c — a careless caller of an exported strata_run.
 *
 * The honest suite (test_honest.c) compiles this with the host.c strata
 * writes for `def main(xs: [N]f32): [N]f32 = xs |> map(x => x + 1.0)` and
 * runs it: `caller KERNELS.cl`. It calls strata_run once as it should, then
 * once per kind of bad argument, and expects each refused with its error
 * code and a sentence (or, without room for one, nothing written). It prints
 * what it did and exits 0 when every call went as the contract in host.c's
 * header says, 1 otherwise. With `lengths KERNEL…` it calls the host.c of a
 * program whose result's length is known only at run time (lengths_mode). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int strata_run(cl_context context, cl_command_queue queue, cl_kernel *kernels, cl_mem *inputs, cl_mem *outputs,
               const void *const *scalars, cl_event *events, char *msg, size_t msgcap);

static int failures;

static void expect(const char *what, cl_int got, cl_int want, const char *msg, const char *says) {
    bool ok = got == want && (!says || strstr(msg, says));
    printf("%s %s: %d (want %d) \"%s\"\n", ok ? "ok  " : "FAIL", what, (int)got, (int)want, msg);
    if (!ok) failures++;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* `caller KERNELS.cl lengths KERNEL…`: the host.c of
 *   let k = xs |> map(x => if x > 0.0 then 1i64 else 0i64) |> reduce(+, 0i64)
 *   in take(k, xs) |> map(x => x + 1.0)
 * whose kernels are named in order: its output is allocated for the worst
 * case (N elements), and one more output receives the length k. */
static int lengths_mode(cl_context context, cl_command_queue queue, cl_program program, char **names, int nnames) {
    cl_kernel kernels[16] = {0};
    cl_event events[16] = {0};
    cl_int rc;
    if (nnames > 16) return fprintf(stderr, "too many kernels\n"), 2;
    for (int i = 0; i < nnames; i++)
        if (!(kernels[i] = clCreateKernel(program, names[i], &rc))) return fprintf(stderr, "no kernel %s\n", names[i]), 2;
    float xs[3] = {1, -2, 3}, ys[3] = {0, 0, 0};
    long got = -1;
    cl_mem in = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof xs, xs, &rc);
    cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof ys, NULL, &rc);
    cl_mem lengths = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof got, NULL, &rc);
    cl_mem small = clCreateBuffer(context, CL_MEM_READ_WRITE, 2 * sizeof(float), NULL, &rc);
    cl_mem tiny = clCreateBuffer(context, CL_MEM_READ_WRITE, 4, NULL, &rc);
    long n = 3;
    cl_mem inputs[] = {in}, outputs[] = {out, lengths}, short_out[] = {small, lengths}, short_lengths[] = {out, tiny},
           no_lengths[] = {out, NULL};
    const void *scalars[] = {&n};
    char msg[256];

    rc = strata_run(context, queue, kernels, inputs, outputs, scalars, events, msg, sizeof msg);
    expect("a good call", rc, CL_SUCCESS, msg, NULL);
    clFinish(queue);
    clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof ys, ys, 0, NULL, NULL);
    clEnqueueReadBuffer(queue, lengths, CL_TRUE, 0, sizeof got, &got, 0, NULL, NULL);
    if (got != 2 || ys[0] != 2 || ys[1] != -1)
        printf("FAIL a good call computed the length %ld and %g %g\n", got, ys[0], ys[1]), failures++;
    else
        printf("ok   the length 2 and its elements\n");
    for (int i = 0; i < nnames; i++)
        if (events[i]) clReleaseEvent(events[i]);
    /* the output is the worst case's, though k elements would fit */
    rc = strata_run(context, queue, kernels, inputs, short_out, scalars, events, msg, sizeof msg);
    expect("an output smaller than its worst case", rc, CL_INVALID_BUFFER_SIZE, msg, "outputs[0] holds 8 bytes");
    rc = strata_run(context, queue, kernels, inputs, short_lengths, scalars, events, msg, sizeof msg);
    expect("no room for the length", rc, CL_INVALID_BUFFER_SIZE, msg, "outputs[1] holds 4 bytes");
    rc = strata_run(context, queue, kernels, inputs, no_lengths, scalars, events, msg, sizeof msg);
    expect("the lengths' output NULL", rc, CL_INVALID_VALUE, msg, "outputs[1] is NULL");
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(lengths);
    clReleaseMemObject(small);
    clReleaseMemObject(tiny);
    for (int i = 0; i < nnames; i++) clReleaseKernel(kernels[i]);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2 || (argc > 2 && strcmp(argv[2], "lengths")))
        return fprintf(stderr, "usage: caller KERNELS.cl [lengths KERNEL…]\n"), 2;
    char *source = slurp(argv[1]);
    cl_platform_id platform;
    cl_device_id device;
    cl_int rc;
    if (!source || clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS)
        return fprintf(stderr, "no kernels or no OpenCL device\n"), 2;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &rc);
    const char *sources[] = {source};
    cl_program program = clCreateProgramWithSource(context, 1, sources, NULL, &rc);
    if (clBuildProgram(program, 1, &device, NULL, NULL, NULL) != CL_SUCCESS) return fprintf(stderr, "no build\n"), 2;
    if (argc > 2) {
        int r = lengths_mode(context, queue, program, argv + 3, argc - 3);
        clReleaseProgram(program);
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
        free(source);
        return r ? r : failures ? 1 : 0;
    }
    cl_kernel kernel;
    cl_uint nkernels = 0;
    if (clCreateKernelsInProgram(program, 1, &kernel, &nkernels) != CL_SUCCESS || nkernels != 1)
        return fprintf(stderr, "the program should have one kernel\n"), 2;

    float xs[3] = {1, 2, 3}, ys[3] = {0, 0, 0};
    cl_mem in = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof xs, xs, &rc);
    cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof ys, NULL, &rc);
    cl_mem small = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(float), NULL, &rc);
    long n = 3, minus = -1, huge = 1L << 61;
    cl_mem inputs[] = {in}, outputs[] = {out}, small_in[] = {small}, small_out[] = {small}, none[] = {NULL};
    const void *scalars[] = {&n}, *negative[] = {&minus}, *too_many[] = {&huge}, *missing[] = {NULL};
    cl_kernel kernels[] = {kernel}, no_kernel[] = {NULL};
    cl_event events[1] = {NULL};
    char msg[256];

    /* as it should be called */
    rc = strata_run(context, queue, kernels, inputs, outputs, scalars, events, msg, sizeof msg);
    expect("a good call", rc, CL_SUCCESS, msg, NULL);
    clFinish(queue);
    clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof ys, ys, 0, NULL, NULL);
    if (ys[0] != 2 || ys[1] != 3 || ys[2] != 4) printf("FAIL a good call computed %g %g %g\n", ys[0], ys[1], ys[2]), failures++;
    if (events[0]) clReleaseEvent(events[0]);

    /* nowhere to say what is wrong: refused, and nothing written */
    rc = strata_run(context, queue, kernels, inputs, outputs, scalars, events, NULL, 64);
    expect("msg NULL", rc, CL_INVALID_VALUE, "", NULL);
    msg[0] = 'x';
    rc = strata_run(context, queue, kernels, NULL, outputs, scalars, events, msg, 0);
    expect("msgcap 0", rc, CL_INVALID_VALUE, "", NULL);
    if (msg[0] != 'x') printf("FAIL msgcap 0 wrote msg[0]\n"), failures++;
    /* a message cut to its room, and terminated */
    memset(msg, 'x', sizeof msg);
    rc = strata_run(context, queue, kernels, inputs, outputs, negative, events, msg, 8);
    expect("msgcap 8", rc, CL_INVALID_VALUE, msg, "strata_");
    if (strlen(msg) != 7) printf("FAIL msgcap 8 wrote %zu characters\n", strlen(msg)), failures++;

    /* NULLs */
    rc = strata_run(context, queue, kernels, NULL, outputs, scalars, events, msg, sizeof msg);
    expect("inputs NULL", rc, CL_INVALID_VALUE, msg, "inputs must not be NULL");
    rc = strata_run(context, queue, kernels, none, outputs, scalars, events, msg, sizeof msg);
    expect("inputs[0] NULL", rc, CL_INVALID_VALUE, msg, "inputs[0] is NULL");
    rc = strata_run(context, queue, kernels, inputs, NULL, scalars, events, msg, sizeof msg);
    expect("outputs NULL", rc, CL_INVALID_VALUE, msg, "outputs must not be NULL");
    rc = strata_run(context, queue, kernels, inputs, outputs, NULL, events, msg, sizeof msg);
    expect("scalars NULL", rc, CL_INVALID_VALUE, msg, "scalars must not be NULL");
    rc = strata_run(context, queue, kernels, inputs, outputs, missing, events, msg, sizeof msg);
    expect("scalars[0] NULL", rc, CL_INVALID_VALUE, msg, "scalars[0] is NULL");
    rc = strata_run(context, queue, NULL, inputs, outputs, scalars, events, msg, sizeof msg);
    expect("kernels NULL", rc, CL_INVALID_VALUE, msg, "kernels and events");
    rc = strata_run(context, queue, no_kernel, inputs, outputs, scalars, events, msg, sizeof msg);
    expect("kernels[0] NULL", rc, CL_INVALID_KERNEL, msg, "kernels[0] is NULL");
    rc = strata_run(context, queue, kernels, inputs, outputs, scalars, NULL, msg, sizeof msg);
    expect("events NULL", rc, CL_INVALID_VALUE, msg, "kernels and events");

    /* sizes */
    rc = strata_run(context, queue, kernels, inputs, outputs, negative, events, msg, sizeof msg);
    expect("N = -1", rc, CL_INVALID_VALUE, msg, "the size N is -1");
    rc = strata_run(context, queue, kernels, small_in, outputs, scalars, events, msg, sizeof msg);
    expect("an input too small", rc, CL_INVALID_BUFFER_SIZE, msg, "inputs[0] holds 4 bytes");
    rc = strata_run(context, queue, kernels, inputs, small_out, scalars, events, msg, sizeof msg);
    expect("an output too small", rc, CL_INVALID_BUFFER_SIZE, msg, "outputs[0] holds 4 bytes");
    rc = strata_run(context, queue, kernels, inputs, outputs, too_many, events, msg, sizeof msg);
    expect("N = 2^61 (bytes past a size_t)", rc, CL_INVALID_BUFFER_SIZE, msg, "inputs[0] holds 12 bytes");

    /* and the good call still works after all that */
    ys[0] = ys[1] = ys[2] = 0;
    clEnqueueWriteBuffer(queue, out, CL_TRUE, 0, sizeof ys, ys, 0, NULL, NULL);
    rc = strata_run(context, queue, kernels, inputs, outputs, scalars, events, msg, sizeof msg);
    expect("a good call again", rc, CL_SUCCESS, msg, NULL);
    clFinish(queue);
    clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof ys, ys, 0, NULL, NULL);
    if (ys[0] != 2 || ys[2] != 4) printf("FAIL the good call again computed %g %g %g\n", ys[0], ys[1], ys[2]), failures++;
    if (events[0]) clReleaseEvent(events[0]);

    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(small);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(source);
    return failures ? 1 : 0;
}
