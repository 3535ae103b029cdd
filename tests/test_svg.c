/* tests/test_svg.c — heat-maps and bar charts: a well-formed standalone
 * document, every label, value and note shown and escaped, the colour scale,
 * one best outline, the cases with no or equal values, and bad input. */
#include "explore/explore.h"
#include "harness.h"

#include <math.h>

/* ------------------------------------------------------------------------ */
/* A small XML checker                                                      */
/* ------------------------------------------------------------------------ */

/* An entity reference at s (after its `&`): the five XML names or a
 * character reference. */
static bool entity_ok(const char *s) {
    static const char *const names[] = {"amp;", "lt;", "gt;", "quot;", "apos;"};
    for (int i = 0; i < 5; i++)
        if (!strncmp(s, names[i], strlen(names[i]))) return true;
    if (*s++ != '#') return false;
    size_t n = strspn(s, "x0123456789abcdefABCDEF");
    return n > 0 && s[n] == ';';
}

static size_t name_len(const char *s) { return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:-."); }

/* Whether text is one XML document: the declaration, one root element whose
 * tags all balance (or close themselves), quoted attributes, no raw `<` or
 * stray `&` in text or values. The first problem goes into why. */
static bool well_formed(const char *s, char *why, size_t cap) {
    const char *stack[64];
    size_t lens[64];
    int depth = 0, roots = 0;
    if (strncmp(s, "<?xml ", 6)) return snprintf(why, cap, "no <?xml declaration first"), false;
    for (const char *p = s; *p;) {
        if (*p == '&') {
            if (!entity_ok(p + 1)) return snprintf(why, cap, "stray & at %zu", (size_t)(p - s)), false;
            p++;
            continue;
        }
        if (*p != '<') {
            if (depth == 0 && !strchr(" \n\r\t", *p))
                return snprintf(why, cap, "text outside the root at %zu", (size_t)(p - s)), false;
            p++;
            continue;
        }
        if (!strncmp(p, "<?", 2)) {
            const char *end = strstr(p, "?>");
            if (!end || p != s) return snprintf(why, cap, "bad processing instruction at %zu", (size_t)(p - s)), false;
            p = end + 2;
            continue;
        }
        if (!strncmp(p, "</", 2)) {
            size_t n = name_len(p + 2);
            if (depth == 0 || n != lens[depth - 1] || strncmp(p + 2, stack[depth - 1], n) || p[2 + n] != '>')
                return snprintf(why, cap, "unbalanced </%.*s> at %zu", (int)n, p + 2, (size_t)(p - s)), false;
            depth--;
            p += 3 + n;
            continue;
        }
        size_t n = name_len(p + 1);
        if (n == 0) return snprintf(why, cap, "raw < at %zu", (size_t)(p - s)), false;
        if (depth == 0 && roots++) return snprintf(why, cap, "a second root at %zu", (size_t)(p - s)), false;
        const char *name = p + 1;
        p += 1 + n;
        for (;;) {
            p += strspn(p, " \n\t");
            if (!strncmp(p, "/>", 2)) {
                p += 2;
                break;
            }
            if (*p == '>') {
                if (depth == 64) return snprintf(why, cap, "nested too deep"), false;
                stack[depth] = name;
                lens[depth++] = n;
                p++;
                break;
            }
            size_t an = name_len(p);
            if (an == 0 || p[an] != '=' || (p[an + 1] != '"' && p[an + 1] != '\''))
                return snprintf(why, cap, "bad attribute in <%.*s> at %zu", (int)n, name, (size_t)(p - s)), false;
            char quote = p[an + 1];
            p += an + 2;
            for (; *p != quote; p++) {
                if (!*p || *p == '<') return snprintf(why, cap, "unclosed attribute at %zu", (size_t)(p - s)), false;
                if (*p == '&' && !entity_ok(p + 1))
                    return snprintf(why, cap, "stray & in an attribute at %zu", (size_t)(p - s)), false;
            }
            p++;
        }
    }
    if (depth) return snprintf(why, cap, "<%.*s> never closed", (int)lens[depth - 1], stack[depth - 1]), false;
    if (roots != 1) return snprintf(why, cap, "no root element"), false;
    return true;
}

#define ck_assert_well_formed(text)                                                  \
    do {                                                                             \
        char why_[160];                                                              \
        ck_assert_msg(well_formed((text), why_, sizeof why_), "%s in:\n%s", why_, (text)); \
    } while (0)

static int count(const char *text, const char *part) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, part)); p += strlen(part)) n++;
    return n;
}

/* ------------------------------------------------------------------------ */
/* Charts                                                                   */
/* ------------------------------------------------------------------------ */

static const char *const BS[] = {"32", "64", "128", "256", "512"};
static const char *const SE[] = {"1", "2", "4", "8", "16"};

/* BS x SE as the explorer would chart it: 5 by 5, one point wrong. */
typedef struct figure {
    double values[25];
    const char *notes[25];
    st_chart chart;
} figure;

static void make_figure(figure *f) {
    memset(f, 0, sizeof *f);
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 5; x++) f->values[y * 5 + x] = 10.0 + x * 3.1 + y * 1.7;
    f->values[2 * 5 + 3] = 123.456; /* the best: BS 256, SE 4 */
    f->values[1 * 5 + 4] = NAN;
    f->notes[1 * 5 + 4] = "wrong_answer";
    f->chart = (st_chart){.title = "prefix_sum: GB/s over BS x SE",
                          .unit = "GB/s",
                          .x_name = "BS",
                          .nx = 5,
                          .x_labels = BS,
                          .y_name = "SE",
                          .ny = 5,
                          .y_labels = SE,
                          .values = f->values,
                          .notes = f->notes};
}

static char *heatmap_ok(const st_chart *c) {
    st_buf b = {0};
    st_err err = {0};
    ck_assert_msg(st_svg_heatmap(c, &b, &err), "heat-map failed: %s", err.message);
    ck_assert(b.data != NULL);
    return b.data;
}

static char *bars_ok(const st_chart *c) {
    st_buf b = {0};
    st_err err = {0};
    ck_assert_msg(st_svg_bars(c, &b, &err), "bars failed: %s", err.message);
    ck_assert(b.data != NULL);
    return b.data;
}

/* The x and y of the <rect> whose tooltip starts with `tip`. */
static void rect_of(const char *svg, const char *tip, double *x, double *y, double *w, double *h) {
    char key[96];
    snprintf(key, sizeof key, "<title>%s", tip);
    const char *t = strstr(svg, key);
    ck_assert_msg(t != NULL, "no tooltip `%s`", tip);
    const char *r = t;
    while (r > svg && strncmp(r, "<rect ", 6)) r--;
    ck_assert_msg(sscanf(r, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"", x, y, w, h) == 4,
                  "cannot read the rect of `%s`", tip);
}

static void best_rect(const char *svg, double *x, double *y, double *w, double *h) {
    const char *b = strstr(svg, "<rect class=\"best\"");
    ck_assert(b != NULL);
    ck_assert(sscanf(b, "<rect class=\"best\" x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"", x, y, w, h) == 4);
}

/* ------------------------------------------------------------------------ */

START_TEST(checker_finds_faults) {
    /* the checker the other tests rely on can say no */
    static const char *const broken[] = {
        "<svg/>",                                     /* no declaration */
        "<?xml version=\"1.0\"?><a><b></a></b>",      /* crossed */
        "<?xml version=\"1.0\"?><a>",                 /* unclosed */
        "<?xml version=\"1.0\"?><a x=\"1></a>",       /* unclosed attribute */
        "<?xml version=\"1.0\"?><a x=1></a>",         /* unquoted */
        "<?xml version=\"1.0\"?><a>&</a>",            /* stray & */
        "<?xml version=\"1.0\"?><a>x < y</a>",        /* raw < */
        "<?xml version=\"1.0\"?><a/><b/>",            /* two roots */
        "<?xml version=\"1.0\"?><a title=\"<\"/>",    /* < in a value */
    };
    char why[160];
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++)
        ck_assert_msg(!well_formed(broken[i], why, sizeof why), "accepted `%s`", broken[i]);
    ck_assert_msg(well_formed("<?xml version=\"1.0\"?>\n<a k='v'><b/>t &amp; &#x41;<c>&lt;</c></a>\n", why, sizeof why),
                  "%s", why);
}
END_TEST

START_TEST(heatmap_figure) {
    figure f;
    make_figure(&f);
    char *svg = heatmap_ok(&f.chart);
    ck_assert_msg(!strncmp(svg, "<?xml ", 6), "starts with: %.40s", svg);
    ck_assert_has(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"");
    ck_assert_has(svg, " viewBox=\"0 0 ");
    ck_assert_well_formed(svg);
    ck_assert_has(svg, ">prefix_sum: GB/s over BS x SE</text>");
    ck_assert_has(svg, ">BS</text>");
    ck_assert_has(svg, ">SE</text>");
    for (int i = 0; i < 5; i++) {
        char label[32];
        snprintf(label, sizeof label, ">%s</text>", BS[i]);
        ck_assert_has(svg, label);
        snprintf(label, sizeof label, ">%s</text>", SE[i]);
        ck_assert_has(svg, label);
    }
    /* values to three significant digits; the missing one grey with its note */
    ck_assert_has(svg, ">123</text>");
    ck_assert_has(svg, ">10.0</text>");
    ck_assert_has(svg, ">13.1</text>");
    ck_assert_has(svg, ">wrong_answer</text>");
    ck_assert_int_eq(count(svg, "fill=\"#ddd\""), 1);
    /* the legend: min, max and unit */
    ck_assert_has(svg, ">GB/s</text>");
    ck_assert_has(svg, "linearGradient");
    /* one best outline, on BS 256 / SE 4 */
    ck_assert_int_eq(count(svg, "class=\"best\""), 1);
    double cx, cy, cw, ch, bx, by, bw, bh;
    rect_of(svg, "BS 256, SE 4: 123.456 GB/s", &cx, &cy, &cw, &ch);
    best_rect(svg, &bx, &by, &bw, &bh);
    ck_assert_msg(bx >= cx && by >= cy && bx + bw <= cx + cw && by + bh <= cy + ch,
                  "best outline %g,%g %gx%g is not on the cell %g,%g %gx%g", bx, by, bw, bh, cx, cy, cw, ch);
    ck_assert_has(svg, "stroke-width=\"3\"");
    /* the same chart gives the same bytes */
    char *again = heatmap_ok(&f.chart);
    ck_assert_str_eq(svg, again);
    free(svg);
    free(again);
}
END_TEST

START_TEST(heatmap_layout) {
    /* columns left to right, rows top to bottom in values[] order */
    figure f;
    make_figure(&f);
    char *svg = heatmap_ok(&f.chart);
    double x0, y0, x1, y1, w, h, xr, yr;
    rect_of(svg, "BS 32, SE 1:", &x0, &y0, &w, &h);
    rect_of(svg, "BS 64, SE 1:", &x1, &y1, &w, &h);
    rect_of(svg, "BS 32, SE 2:", &xr, &yr, &w, &h);
    ck_assert(x1 == x0 + w && y1 == y0);
    ck_assert(xr == x0 && yr == y0 + h);
    /* every cell has a tooltip, and the grid fits inside the picture */
    ck_assert_int_eq(count(svg, "<title>BS "), 25);
    int width = 0, height = 0;
    ck_assert(sscanf(strstr(svg, "<svg "), "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\"",
                     &width, &height) == 2);
    double xe, ye;
    rect_of(svg, "BS 512, SE 16:", &xe, &ye, &w, &h);
    ck_assert(xe + w <= width && ye + h <= height);
    free(svg);
}
END_TEST

START_TEST(colours_and_contrast) {
    static const char *const xs[] = {"a", "b", "c"};
    static const char *const ys[] = {"r"};
    double v[] = {1, 5, 9};
    st_chart c = {.title = "t", .unit = "u", .x_name = "x", .nx = 3, .x_labels = xs, .y_name = "y", .ny = 1,
                  .y_labels = ys, .values = v};
    char *svg = heatmap_ok(&c);
    ck_assert_well_formed(svg);
    /* the ends of the scale: dark purple for the least, yellow for the most */
    ck_assert_int_eq(count(svg, "fill=\"#440154\""), 1);
    ck_assert_int_eq(count(svg, "fill=\"#21918c\""), 1);
    ck_assert_int_eq(count(svg, "fill=\"#fde725\""), 1);
    /* white on dark, black on bright */
    ck_assert_has(svg, "fill=\"#fff\">1.00</text>");
    ck_assert_has(svg, "fill=\"#000\">9.00</text>");
    free(svg);
}
END_TEST

START_TEST(escaping) {
    static const char *const xs[] = {"<&>", "a\"b'c", "ctl\x01"};
    static const char *const ys[] = {"</svg>"};
    double v[] = {1, NAN, 3};
    const char *notes[] = {NULL, "bad <&> note", NULL};
    st_chart c = {.title = "a<b & c", .unit = "<u>", .x_name = "x&y", .nx = 3, .x_labels = xs, .y_name = "\"y\"",
                  .ny = 1, .y_labels = ys, .values = v, .notes = notes};
    char *svgs[2] = {heatmap_ok(&c), bars_ok(&c)};
    for (int i = 0; i < 2; i++) {
        const char *svg = svgs[i];
        ck_assert_well_formed(svg);
        ck_assert_has(svg, ">a&lt;b &amp; c</text>");
        ck_assert_has(svg, "<title>a&lt;b &amp; c</title>");
        ck_assert_has(svg, ">&lt;&amp;&gt;</text>");
        ck_assert_has(svg, ">a&quot;b&apos;c</text>");
        ck_assert_has(svg, ">bad &lt;&amp;&gt; note</text>");
        ck_assert_has(svg, ">&lt;u&gt;</text>");
        ck_assert_has(svg, ">x&amp;y</text>");
        ck_assert(strstr(svg, "a<b") == NULL);
        ck_assert(strchr(svg, '\x01') == NULL);
        if (i == 0) {
            ck_assert_has(svg, ">&lt;/svg&gt;</text>");
            ck_assert_has(svg, ">&quot;y&quot;</text>");
        }
        free(svgs[i]);
    }
}
END_TEST

START_TEST(all_equal) {
    double v[25];
    for (int i = 0; i < 25; i++) v[i] = 7;
    st_chart c = {.title = "flat", .unit = "GB/s", .x_name = "BS", .nx = 5, .x_labels = BS, .y_name = "SE",
                  .ny = 5, .y_labels = SE, .values = v};
    char *svg = heatmap_ok(&c);
    ck_assert_well_formed(svg);
    /* no spread: every cell takes the middle of the scale */
    ck_assert_int_eq(count(svg, "fill=\"#21918c\""), 25);
    ck_assert_int_eq(count(svg, ">7.00</text>"), 25 + 2); /* the cells and the legend's two ends */
    ck_assert_int_eq(count(svg, "class=\"best\""), 1);
    free(svg);
    svg = bars_ok(&c);
    ck_assert_well_formed(svg);
    ck_assert_int_eq(count(svg, "fill=\"#21918c\""), 5);
    ck_assert_int_eq(count(svg, "class=\"best\""), 1);
    free(svg);
}
END_TEST

START_TEST(all_missing) {
    double v[25];
    const char *notes[25] = {0};
    for (int i = 0; i < 25; i++) v[i] = NAN;
    notes[0] = "constraint";
    notes[24] = "timeout";
    st_chart c = {.title = "nothing", .unit = "GB/s", .x_name = "BS", .nx = 5, .x_labels = BS, .y_name = "SE",
                  .ny = 5, .y_labels = SE, .values = v, .notes = notes};
    for (int kind = 0; kind < 2; kind++) {
        char *svg = kind ? bars_ok(&c) : heatmap_ok(&c);
        ck_assert_well_formed(svg);
        ck_assert_int_eq(count(svg, "class=\"best\""), 0);
        ck_assert_has(svg, ">constraint</text>");
        if (!kind) ck_assert_has(svg, ">timeout</text>");
        ck_assert_has(svg, ">n/a</text>");
        ck_assert_has(svg, "no finite values");
        ck_assert_int_eq(count(svg, "fill=\"#ddd\""), kind ? 5 : 25);
        free(svg);
    }
    /* no notes at all */
    c.notes = NULL;
    char *svg = heatmap_ok(&c);
    ck_assert_well_formed(svg);
    ck_assert_int_eq(count(svg, ">n/a</text>"), 25);
    free(svg);
}
END_TEST

START_TEST(bars) {
    double v[] = {10, 20, NAN, 40, 5};
    const char *notes[] = {NULL, NULL, "timeout", NULL, NULL};
    st_chart c = {.title = "scan: GB/s over BS", .unit = "GB/s", .x_name = "BS", .nx = 5, .x_labels = BS,
                  .values = v, .notes = notes};
    char *svg = bars_ok(&c);
    ck_assert_msg(!strncmp(svg, "<?xml ", 6), "starts with: %.40s", svg);
    ck_assert_well_formed(svg);
    ck_assert_has(svg, ">scan: GB/s over BS</text>");
    for (int i = 0; i < 5; i++) {
        char label[32];
        snprintf(label, sizeof label, ">%s</text>", BS[i]);
        ck_assert_has(svg, label);
    }
    ck_assert_has(svg, ">10.0</text>");
    ck_assert_has(svg, ">40.0</text>");
    ck_assert_has(svg, ">timeout</text>");
    ck_assert_has(svg, ">GB/s</text>");
    /* heights proportional to the values from one baseline */
    double x10, y10, w, h10, x20, y20, h20, x40, y40, h40, xs, ys, hs;
    rect_of(svg, "BS 32: 10 GB/s", &x10, &y10, &w, &h10);
    rect_of(svg, "BS 64: 20 GB/s", &x20, &y20, &w, &h20);
    rect_of(svg, "BS 256: 40 GB/s", &x40, &y40, &w, &h40);
    ck_assert_msg(fabs(h20 - 2 * h10) < 0.2 && fabs(h40 - 4 * h10) < 0.2, "heights %g %g %g", h10, h20, h40);
    ck_assert(fabs((y10 + h10) - (y40 + h40)) < 0.1);
    ck_assert(x10 < x20 && x20 < x40);
    /* the missing bar: a short grey stub on the baseline */
    rect_of(svg, "BS 128: timeout", &xs, &ys, &w, &hs);
    ck_assert(hs > 0 && hs < h10);
    ck_assert(fabs((ys + hs) - (y10 + h10)) < 0.1);
    ck_assert_int_eq(count(svg, "fill=\"#ddd\""), 1);
    /* the best: the 40 */
    ck_assert_int_eq(count(svg, "class=\"best\""), 1);
    double bx, by, bw, bh;
    best_rect(svg, &bx, &by, &bw, &bh);
    ck_assert(bx >= x40 && bx + bw <= x40 + w && by >= y40 && by + bh <= y40 + h40);
    /* y is ignored */
    c.ny = 7;
    c.y_labels = NULL;
    char *again = bars_ok(&c);
    ck_assert_str_eq(svg, again);
    free(svg);
    free(again);
}
END_TEST

START_TEST(bars_negative_and_zero) {
    double v[] = {-3, 0, 6};
    const char *const xs[] = {"a", "b", "c"};
    st_chart c = {.title = "signed", .unit = "u", .x_name = "x", .nx = 3, .x_labels = xs, .values = v};
    char *svg = bars_ok(&c);
    ck_assert_well_formed(svg);
    double xn, yn, w, hn, xp, yp, hp;
    rect_of(svg, "x a: -3 u", &xn, &yn, &w, &hn);
    rect_of(svg, "x c: 6 u", &xp, &yp, &w, &hp);
    /* the negative bar hangs from the baseline where the positive one stands */
    ck_assert(fabs(yn - (yp + hp)) < 0.1);
    ck_assert(fabs(hp - 2 * hn) < 0.2);
    ck_assert_has(svg, ">-3.00</text>");
    ck_assert_has(svg, ">0</text>");
    free(svg);
    /* all zero still draws */
    double z[] = {0, 0, 0};
    c.values = z;
    svg = bars_ok(&c);
    ck_assert_well_formed(svg);
    ck_assert_int_eq(count(svg, "class=\"best\""), 1);
    free(svg);
}
END_TEST

START_TEST(value_format) {
    double v[] = {0.012345, 1234.5, 1e7, 99.96, 0.5, -0.0};
    const char *const xs[] = {"a", "b", "c", "d", "e", "f"};
    st_chart c = {.title = "fmt", .unit = "u", .x_name = "x", .nx = 6, .x_labels = xs, .values = v};
    char *svg = bars_ok(&c);
    ck_assert_has(svg, ">0.0123</text>");
    ck_assert_has(svg, ">1230</text>");
    ck_assert_has(svg, ">1e+07</text>");
    ck_assert_has(svg, ">100</text>");
    ck_assert_has(svg, ">0.500</text>");
    ck_assert(strstr(svg, ">-0</text>") == NULL);
    free(svg);
}
END_TEST

START_TEST(largest_allowed) {
    static char names[100][8];
    const char *labels[100];
    for (int i = 0; i < 100; i++) {
        snprintf(names[i], sizeof names[i], "%d", i);
        labels[i] = names[i];
    }
    double *v = malloc(10000 * sizeof *v);
    ck_assert(v != NULL);
    for (int i = 0; i < 10000; i++) v[i] = i % 7 == 0 ? NAN : (double)((i * 7919) % 10007);
    st_chart c = {.title = "big", .unit = "u", .x_name = "x", .nx = 100, .x_labels = labels, .y_name = "y", .ny = 100,
                  .y_labels = labels, .values = v};
    char *svg = heatmap_ok(&c);
    ck_assert_well_formed(svg);
    ck_assert_int_eq(count(svg, "class=\"best\""), 1);
    free(svg);
    free(v);
}
END_TEST

/* st_fail with no place, a message naming the fault, and nothing written. */
static void expect_bad(bool heatmap, const st_chart *c, const char *part) {
    st_buf b = {0};
    st_err err = {0};
    bool ok = heatmap ? st_svg_heatmap(c, &b, &err) : st_svg_bars(c, &b, &err);
    ck_assert_msg(!ok, "accepted a chart that should fail with \"%s\"", part);
    ck_assert_msg(strstr(err.message, part) != NULL, "expected \"%s\" in \"%s\"", part, err.message);
    ck_assert_int_eq(err.kind, ST_ERR_USER);
    ck_assert_int_eq(err.loc.line, 0);
    ck_assert_uint_eq(b.len, 0);
    st_buf_free(&b);
}

START_TEST(bad_input) {
    double v[25] = {0};
    const char *const holes[] = {"32", NULL, "128", "256", "512"};
    st_chart good = {.title = "t", .unit = "u", .x_name = "BS", .nx = 5, .x_labels = BS, .y_name = "SE", .ny = 5,
                     .y_labels = SE, .values = v};
    st_chart c = good;
    c.nx = 0;
    expect_bad(true, &c, "nx is 0");
    expect_bad(false, &c, "nx is 0");
    c = good;
    c.ny = 0;
    expect_bad(true, &c, "ny is 0");
    c = good;
    c.values = NULL;
    expect_bad(true, &c, "values is NULL");
    expect_bad(false, &c, "values is NULL");
    c = good;
    c.x_labels = NULL;
    expect_bad(true, &c, "x_labels");
    expect_bad(false, &c, "x_labels");
    c = good;
    c.x_labels = holes;
    expect_bad(true, &c, "x_labels[1] is NULL");
    expect_bad(false, &c, "x_labels[1] is NULL");
    c = good;
    c.y_labels = holes;
    expect_bad(true, &c, "y_labels[1] is NULL");
    c = good;
    c.y_labels = NULL;
    expect_bad(true, &c, "y_labels");
    /* the size limit, checked before any array is read */
    c = good;
    c.nx = 101;
    c.ny = 100;
    expect_bad(true, &c, "too many points (10100; at most 10000)");
    c.nx = 10001;
    expect_bad(false, &c, "too many points");
    c.nx = 100000;
    c.ny = 100000;
    expect_bad(true, &c, "too many points");
    /* a chart with neither title, unit nor names is still a chart */
    c = good;
    c.title = c.unit = c.x_name = c.y_name = NULL;
    char *svg = heatmap_ok(&c);
    ck_assert_well_formed(svg);
    free(svg);
}
END_TEST

int main(void) {
    Suite *s = suite_create("svg");
    TCase *heat = tcase_create("heatmap");
    tcase_add_test(heat, checker_finds_faults);
    tcase_add_test(heat, heatmap_figure);
    tcase_add_test(heat, heatmap_layout);
    tcase_add_test(heat, colours_and_contrast);
    tcase_add_test(heat, escaping);
    tcase_add_test(heat, all_equal);
    tcase_add_test(heat, all_missing);
    tcase_add_test(heat, largest_allowed);
    suite_add_tcase(s, heat);
    TCase *bar = tcase_create("bars");
    tcase_add_test(bar, bars);
    tcase_add_test(bar, bars_negative_and_zero);
    tcase_add_test(bar, value_format);
    tcase_add_test(bar, bad_input);
    suite_add_tcase(s, bar);
    return run_suite(s);
}
