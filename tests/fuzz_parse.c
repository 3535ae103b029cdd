/* tests/fuzz_parse.c — a libFuzzer target for the front end.
 *
 * Any bytes: the parser and type checker must answer with a program or an
 * error, never crash, leak or hang. When a program comes back, printing it
 * and parsing the print must give the same text again and the same nodes:
 * the printer's contract. Seeds: examples/ and tests/fuzz-seeds/parse/ (the
 * forms no example shows, such as the 8- and 16-bit integers). */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    st_ctx *cx = st_ctx_new();
    st_err err = {0};
    const st_program *p = st_parse_program(cx, "fuzz.strata", (const char *)data, size, &err);
    if (!p) {
        /* an error is fine, but it must be located in the input or say why not */
        if (err.kind == ST_ERR_USER && err.loc.line < 0) abort();
        st_ctx_free(cx);
        return 0;
    }
    st_buf first = {0}, second = {0};
    st_print_program(p, &first);
    const st_program *q = st_parse_program(cx, "printed.strata", first.data, first.len, &err);
    if (!q) {
        fprintf(stderr, "the printed program does not parse: %d:%d: %s\n%s\n", err.loc.line,
                err.loc.col, err.message, first.data);
        abort();
    }
    st_print_program(q, &second);
    if (first.len != second.len || memcmp(first.data, second.data, first.len) != 0) {
        fprintf(stderr, "print is not stable:\n%s\n---\n%s\n", first.data, second.data);
        abort();
    }
    for (uint32_t i = 0; i < p->ndefs; i++)
        if (p->defs[i].body != q->defs[i].body) {
            fprintf(stderr, "reparsing gives other nodes for def %s:\n%s\n", p->defs[i].name, first.data);
            abort();
        }
    st_buf_free(&first);
    st_buf_free(&second);
    st_ctx_free(cx);
    return 0;
}
