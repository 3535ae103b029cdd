/* codegen/codegen.h — the public interface of strata's codegen stage.
 *
 *   devices    the OpenCL platforms and devices of this machine
 *   codegen    a lowered def to OpenCL C kernels and host glue C (st_codegen)
 *   runtime    a device opened (st_cl), a generated program built on it with
 *              its glue compiled in-process by libtcc (st_exe), and one
 *              binding of inputs run, timed and read back (st_launch); its
 *              files are codegen/runtime/'s, its interface this header's
 *
 * The generated glue is the one place that knows the launch sequence; the
 * runtime only gives it buffers and scalars and reads the results back. Its
 * entry point, the same in the JIT and in an exported .c file, is
 *
 *   int strata_run(cl_context ctx, cl_command_queue queue, cl_kernel *kernels,
 *                  cl_mem *inputs, cl_mem *outputs, const void *const *scalars,
 *                  cl_event *events, char *msg, size_t msgcap);
 *
 *   kernels   one per st_code.kernel_names, created from st_code.opencl
 *   inputs    one buffer per array leaf of the def's parameters, in order
 *   outputs   one buffer per leaf of the result (st_value_leaves order), each
 *             of st_code.outputs[i] elements; a scalar leaf is one element;
 *             bool is one byte per element. A length known only at run time
 *             (take(k, xs): [?k]t) is allocated for its worst case, and when
 *             the result has st_code.nlengths > 0 of them, one more buffer of
 *             that many i64s follows, where the glue writes each one's value
 *             (st_code_lengths_of's order) once everything has run
 *   scalars   st_code.nscalars pointers, to values of st_code.scalars[i].kind:
 *             the def's scalar parameters, then its size variables (i64)
 *   events    st_code.nkernels slots, filled with the profiling event of
 *             each kernel's last launch (a loop launches its body's kernels
 *             again; NULL for a kernel that had nothing to do)
 *
 * It returns CL_SUCCESS, or an OpenCL error code with a sentence in msg. The
 * glue allocates and releases its own intermediate buffers. It checks its
 * arguments first (NULLs, negative sizes, buffers smaller than the sizes
 * say; the contract is in the glue's own header comment, cg_glue.c), and
 * after each launch what the kernel recorded as wrong (an index out of
 * range: STRATA_INDEX_OUT_OF_RANGE; a look-back that gave up waiting:
 * STRATA_LOOKBACK_STALLED; cg_fault.c).
 */
#ifndef STRATA_CODEGEN_H
#define STRATA_CODEGEN_H

#include "ir/ir.h"

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

/* What runs the kernels: a backend, described by one descriptor each
 * (codegen/backend.c). The layers above codegen/ hold a descriptor and ask
 * it; none of them tests which backend it is. */
typedef struct st_backend {
    const char *name;          /* --backend NAME, and the "backend" explore.json and records say */
    const char *kernel_file;   /* what --emit and export call its kernels */
    size_t kernels_at;         /* where in st_code its kernels' text is (st_backend_kernels) */
    const char *folder_suffix; /* after a device's folder name, so that two backends of one GPU
                                  keep their own results ("" for the default backend) */
    const char *runs;          /* --backend's help: how it runs the kernels (NULL for the default) */
    const char *lists;         /* `devices --backend`'s help: what it lists */
    const char *about_run;     /* a paragraph of `run --help` about it, or NULL */
    const char *about_devices; /* a paragraph of `devices --help` about it, or NULL */
} st_backend;

typedef struct st_device_info {
    const st_backend *backend; /* what runs it; NULL for the default (st_device_backend) */
    uint32_t index;          /* across all platforms, in listing order */
    uint32_t platform_index, device_index;
    char platform[128];      /* "Portable Computing Language" */
    char platform_version[128];
    char name[256];          /* "pthread-skylake-avx512-…" */
    char vendor[128];
    char version[128];       /* "OpenCL 3.0 PoCL …" */
    char driver[128];
    const char *type;        /* "GPU", "CPU", "accelerator", "other" */
    uint32_t compute_units;
    uint64_t global_mem_bytes, local_mem_bytes;
    uint64_t max_alloc_bytes; /* the largest buffer it allocates (CL_DEVICE_MAX_MEM_ALLOC_SIZE); 0: not said */
    size_t max_work_group;
} st_device_info;

/* Every OpenCL device of every platform. *out is malloc'ed (free it); a
 * machine without any OpenCL platform is an error that says how to get one. */
bool st_devices_list(st_device_info **out, size_t *count, st_err *err);
/* Every CUDA device, the same way; no driver is an error that says so. */
bool st_cuda_devices_list(st_device_info **out, size_t *count, st_err *err);

/* Every backend, the default first; *count of them. */
const st_backend *const *st_backends(size_t *count);
/* The backend called name (exactly), or NULL. */
const st_backend *st_backend_named(const char *name);
/* The backend of a device (the default where it says none). */
const st_backend *st_device_backend(const st_device_info *dev);
/* Every device of b, as st_devices_list lists OpenCL's. */
bool st_backend_devices(const st_backend *b, st_device_info **out, size_t *count, st_err *err);
/* The spec st_cl_open takes for device (NULL: b's default device, else as
 * st_cl_open reads a spec) on b: device itself on the default backend, else
 * "NAME:device" (or "NAME") in buf, a device already "NAME:D" staying so. */
const char *st_backend_spec(const st_backend *b, const char *device, char *buf, size_t cap);
/* The backend a spec picks: "NAME" or "NAME:D" (NAME in any case) picks
 * that backend and *rest is D ("" for none); any other spec the default's
 * device, and *rest is the spec. */
const st_backend *st_backend_of_spec(const char *spec, const char **rest);

/* ------------------------------------------------------------------------ */
/* Code generation                                                          */
/* ------------------------------------------------------------------------ */

typedef struct st_code_scalar {
    const char *name;     /* the parameter or size variable */
    st_scalar_kind kind;
} st_code_scalar;

typedef struct st_code_array {
    st_scalar_kind kind;  /* the element */
    const st_size *length;/* elements, over the def's sizes (1 for a scalar leaf) */
} st_code_array;

/* A def turned into OpenCL. Everything lives in the arena it was made in. */
typedef struct st_code {
    const st_def *def;           /* what it computes (its result type shapes the outputs) */
    const char *opencl;          /* OpenCL C 1.2: every kernel of the program */
    const char *cuda;            /* the same kernels in CUDA C++ for NVRTC (cg_cuda.c) */
    const char *host;            /* the host glue in C (see the top of this file) */
    uint32_t nkernels;
    const char *const *kernel_names;
    uint32_t ninputs;
    const st_code_array *inputs; /* array leaves of the parameters */
    uint32_t nscalars;
    const st_code_scalar *scalars;
    uint32_t noutputs;
    const st_code_array *outputs;/* leaves of the result; a length known only at run time at its worst case */
    uint32_t nlengths;           /* lengths known only at run time in the result's type
                                    (st_code_lengths_of): one more output buffer of as many
                                    i64s after the others, where the glue writes them */
} st_code;

/* The existentials (1·?k each) in the array lengths of a value of type t,
 * each once, in the order the glue reports them: the type's parts in
 * order (tuple components in turn, an array's length before its element's),
 * within a length as st_size_each_exist meets them. How many; at most cap
 * stored in out. */
uint32_t st_code_lengths_of(const st_type *t, const st_size **out, uint32_t cap);

/* Generate kernels and glue for a lowered def (see strategies' lower-opencl;
 * what is left high-level inside one work-item runs sequentially). The
 * error names the node codegen cannot map and says why. */
bool st_codegen(st_ctx *cx, const st_def *def, st_arena *a, st_code *out, st_err *err);

/* The text of b's kernels in code (NULL where it has none); setting it. */
const char *st_backend_kernels(const st_backend *b, const st_code *code);
void st_backend_set_kernels(const st_backend *b, st_code *code, const char *text);

/* ------------------------------------------------------------------------ */
/* Runtime                                                                  */
/* ------------------------------------------------------------------------ */

/* An OpenCL device with its context and a profiling, in-order queue. */
typedef struct st_cl st_cl;

/* spec: NULL for the default (the first GPU, else the first device), a
 * number for the index `strata devices` lists, else a case-insensitive
 * substring of the device's name (or its platform's). A backend's name, or
 * "NAME:" and such a spec, picks among that backend's devices instead
 * (st_backend_of_spec). */
st_cl *st_cl_open(const char *spec, st_err *err);
/* Compile code->cuda with NVRTC for compute capability arch/10.arch%10 (90:
 * an H100) into a CUBIN of *cubin_bytes, without a GPU or a driver: what the
 * CUDA backend would load. False with NVRTC's log when it does not compile,
 * or when there is no NVRTC. */
bool st_cuda_compile_check(const st_code *code, int arch, size_t *cubin_bytes, st_err *err);

/* What ptxas reports of one kernel it compiled (`-v`): what decides how
 * many of its blocks a GPU's multiprocessor holds at once. */
typedef struct st_ptxas_kernel {
    char name[64];
    int registers;            /* per thread */
    int spill_stores;         /* bytes stored to and loaded from local memory */
    int spill_loads;          /*   for want of registers */
    int stack_bytes;          /* the stack frame, per thread */
    int shared_bytes;         /* static shared memory per block (__local arrays) */
} st_ptxas_kernel;

/* Compile code->cuda with NVRTC for sm_<arch>, as st_cuda_compile_check
 * does, with ptxas' report: one st_ptxas_kernel per kernel (in a's memory,
 * *count of them, in the order ptxas compiled them). False as that check
 * is, or when the log holds no report. */
bool st_cuda_ptxas(const st_code *code, int arch, st_arena *a, st_ptxas_kernel **kernels, uint32_t *count,
                   st_err *err);
/* Compile code->cuda with NVRTC for compute_<arch> into PTX (in a's
 * memory): the instructions each kernel loads and stores with (a run's
 * 128-bit `ld.global.v4`, say), without a GPU. False as st_cuda_ptxas is. */
bool st_cuda_ptx(const st_code *code, int arch, st_arena *a, const char **ptx, st_err *err);
/* The report in ptxas' verbose log (NVRTC's or nvcc's), as st_cuda_ptxas
 * gives it; a log without one gives no kernels. */
bool st_ptxas_parse(const char *log, st_arena *a, st_ptxas_kernel **kernels, uint32_t *count, st_err *err);
/* The theoretical occupancy of a kernel on sm_<arch> (75, 80, 86, 89, 90):
 * the share of a multiprocessor's warps that blocks of `block` threads
 * keep resident, with dynamic_shared bytes of shared memory per block
 * besides the kernel's own; 0 when a block does not fit, -1 for an
 * architecture whose limits strata does not know. *limit, when given,
 * names what bounds it: "warps", "blocks", "registers" or "shared memory". */
double st_cuda_occupancy(int arch, const st_ptxas_kernel *k, int block, long dynamic_shared, const char **limit);
void st_cl_close(st_cl *cl);
const st_device_info *st_cl_device(const st_cl *cl);
/* Keep built kernels in dir (NULL: no cache): a program is stored under the
 * SHA-256 of the device, its driver, the build options and the kernel
 * source, and later builds of the same source load the binary instead of
 * compiling. The directory is made when missing; a cache that cannot be
 * read or written only costs the time of a build. */
void st_cl_set_cache(st_cl *cl, const char *dir);
/* The cache a user gets: $STRATA_CACHE, else $XDG_CACHE_HOME/strata, else
 * $HOME/.cache/strata (into buf; false when none of them is set). */
bool st_default_cache_dir(char *buf, size_t cap);

/* A generated program built for one device: its kernels compiled (the build
 * log excerpt in the error when they do not) and its glue compiled by
 * libtcc. */
typedef struct st_exe st_exe;

st_exe *st_exe_build(st_cl *cl, const st_code *code, st_err *err);
void st_exe_free(st_exe *exe);

/* One set of inputs on the device: uploaded once, run any number of times. */
typedef struct st_launch st_launch;

/* args and env as st_inputs_finish gives them. */
st_launch *st_launch_new(st_exe *exe, const st_value *args, const st_binding *env, size_t nenv,
                         st_err *err);
/* Run the whole program once and wait for it; *ms (when not NULL) is the
 * device time from the start of its first kernel to the end of its last, by
 * profiling events. */
bool st_launch_run(st_launch *l, double *ms, st_err *err);
/* The outputs of the last run, shaped like the def's result type. Every
 * output buffer has a guard region after its end, filled with a pattern
 * when it is allocated; a kernel that wrote into it is an error here that names
 * the output and the first byte past its end that changed. */
bool st_launch_read(st_launch *l, st_arena *a, st_value *result, st_err *err);
/* Time the program: `warmups` untimed runs, then `runs` runs whose device
 * times go into samples_ms (runs entries) and, when kernel_samples_ms is
 * not NULL, each kernel's into it (runs rows of st_code.nkernels: the
 * kernel's launch, in a loop its last turn's; negative where it did not
 * run, a branch not taken or an empty launch). */
bool st_launch_time(st_launch *l, uint32_t warmups, uint32_t runs, double *samples_ms, double *kernel_samples_ms,
                    st_err *err);

/* The median, min and max of n > 0 samples (the median of an even count is
 * the mean of the middle two). */
typedef struct st_timing {
    double median_ms, min_ms, max_ms;
} st_timing;
st_timing st_timing_of(const double *samples_ms, size_t n);

/* Bytes of the program's inputs read plus outputs written: what GB/s counts. */
uint64_t st_launch_bytes(const st_launch *l);
void st_launch_free(st_launch *l);

/* ------------------------------------------------------------------------ */
/* A histogram's plan (codegen/hist_plan.c)                                 */
/* ------------------------------------------------------------------------ */

/* What subhistograms(C, MEM, ATOMIC) does on a device, chosen when the
 * program runs: the generated glue runs the same code (hist_plan.c gives
 * it as text), so a test can ask what a device gets without the device.
 *   given:  N elements, H buckets, bytes a bucket takes (its lock too), C
 *           (0: the heuristic), may_local (MEM is not global); the device:
 *           cpu, units (compute units), local_bytes (per group), cache_bytes
 *           (its global memory cache; 0 unknown);
 *   chosen: B work-items a group; local (subhistograms in local memory),
 *           then hpb of them a group, Cl work-items each, G groups; else T
 *           work-items in all, Cg each subhistogram, S subhistograms; nsub
 *           global subhistograms besides the output. */
#define ST_HIST_PLAN_FIELDS(X)                                                                                    \
    X(N) X(H) X(bytes) X(C) X(may_local) X(cpu) X(units) X(local_bytes) X(cache_bytes) X(B) X(local) X(hpb) X(Cl) \
    X(G) X(T) X(Cg) X(S) X(nsub)
#define ST_HIST_PLAN_FIELD(name) long name;
typedef struct st_hist_plan {
    ST_HIST_PLAN_FIELDS(ST_HIST_PLAN_FIELD)
} st_hist_plan;
#undef ST_HIST_PLAN_FIELD
/* Fill the chosen fields of p from the given ones. */
void st_hist_plan_choose(st_hist_plan *p);
/* The same, as C for the glue: `strata_hist_plan` and `strata_hist_choose`. */
const char *st_hist_plan_source(void);

/* ------------------------------------------------------------------------ */
/* Checksums                                                                */
/* ------------------------------------------------------------------------ */

/* SHA-256 of len bytes as 64 lowercase hex digits and a NUL. */
void st_sha256_hex(const void *data, size_t len, char out[65]);

#endif
