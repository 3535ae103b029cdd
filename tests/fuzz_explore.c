/* tests/fuzz_explore.c — a libFuzzer target for explore.json, an
 * exploration's description as strata reads it back: by export and merge
 * (st_exploration_read) and by a resumed exploration, which compares it with
 * its own (explorations_agree). Any bytes give a description or an error,
 * never a crash, a leak or undefined behaviour; a description agrees with
 * itself. */
#include "explore/variant.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What `strata explore examples/prefix_sum.strata --size N=1024 --space …`
 * writes, for the comparison a resumed exploration makes. */
static const char reference[] =
    "{\n  \"strata_explore\": 1,\n  \"program_sha256\": \"0f\",\n  \"entry\": \"main\",\n"
    "  \"space\": \"parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2])\",\n  \"inputs\": [\"N=1024\"],\n"
    "  \"seed\": 1,\n  \"device\": \"cpu\",\n  \"program\": \"p.strata\",\n  \"program_name\": \"p\",\n"
    "  \"dims\": [\"BS\", \"SE\"],\n  \"runs\": 7,\n  \"warmups\": 1,\n  \"tolerance\": 8,\n"
    "  \"shard\": \"0/1\"\n}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[320];
    fuzz_scratch_write("explore.json", data, size, path, sizeof path);
    static const char program[] = "def main(xs: [N]f32): [N]f32 = xs |> scan(+, 0.0)\n";
    fuzz_scratch_write("program.strata", (const uint8_t *)program, sizeof program - 1, path, sizeof path);
    st_exploration e;
    st_err err = {0};
    if (st_exploration_read(fuzz_scratch(), &e, &err)) st_exploration_free(&e);
    else if (!err.message[0]) abort(); /* a refusal says why */

    /* the resume's comparison, on anything that is JSON */
    st_arena *a = st_arena_new();
    const st_json *was = st_json_parse(a, "explore.json", (const char *)data, size, &err);
    const st_json *now = st_json_parse(a, "reference", reference, sizeof reference - 1, &err);
    if (!now) abort();
    char diff[600];
    if (was) {
        if (!explorations_agree(was, was, diff, sizeof diff)) {
            fprintf(stderr, "a description disagrees with itself: %s\n", diff);
            abort();
        }
        explorations_agree(was, now, diff, sizeof diff);
        explorations_agree(now, was, diff, sizeof diff);
    }
    st_arena_free(a);
    return 0;
}
