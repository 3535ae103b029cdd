/* tests/fuzz_records.c — a libFuzzer target for results.jsonl as strata
 * reads it back (resuming, merging, exporting): any bytes give records or an
 * error naming the line, never a crash, a leak or undefined behaviour. What
 * is read is then used as strata uses it: sorted, the best picked, copied,
 * written as JSON again (which must read back to the same text: merge and
 * export write records they read), and reported as CSV and SVG over a
 * space whose dimensions need not match the records'. */
#include "explore/explore.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A record's JSON read back and written again is the same text. */
static void same_after_reading(const st_record *r) {
    st_buf first = {0}, second = {0};
    st_record_to_json(r, &first);
    st_arena *a = st_arena_new();
    st_err err = {0};
    const st_json *j = st_json_parse(a, "record", first.data, first.len, &err);
    st_record back;
    if (!j || !st_record_from_json(j, &back, &err)) {
        fprintf(stderr, "a record written does not read back: %s\n%s\n", err.message, first.data);
        abort();
    }
    st_record_to_json(&back, &second);
    if (first.len != second.len || memcmp(first.data, second.data, first.len)) {
        fprintf(stderr, "a record read back is another:\n%s\n%s\n", first.data, second.data);
        abort();
    }
    st_record_clear(&back);
    st_arena_free(a);
    st_buf_free(&first);
    st_buf_free(&second);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[320];
    fuzz_scratch_write("results.jsonl", data, size, path, sizeof path);
    st_records rs;
    size_t truncated;
    st_err err = {0};
    if (!st_records_read(path, &rs, &truncated, &err)) {
        if (err.kind == ST_ERR_USER && (!err.loc.file || err.loc.line <= 0)) abort(); /* it names the line */
        return 0;
    }
    for (size_t i = 0; i < rs.count; i++) same_after_reading(&rs.items[i]);
    if (!st_records_sort(&rs)) abort();
    const st_record *best = st_records_best(&rs);
    st_record copy = {0};
    if (best && !st_record_copy(&copy, best)) abort();
    st_record_clear(&copy);
    st_space *space = st_space_parse("space", "parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2])", &err);
    if (!space) abort();
    char csv[320], svg[320];
    snprintf(csv, sizeof csv, "%s/results.csv", fuzz_scratch());
    snprintf(svg, sizeof svg, "%s/results.svg", fuzz_scratch());
    bool written;
    st_records_write_csv(&rs, space, csv, &err);
    st_records_write_svg(&rs, space, "fuzz", svg, &written, &err);
    st_space_free(space);
    st_records_free(&rs);
    return 0;
}
