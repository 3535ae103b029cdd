/* explore/svg.c — SVG heat-maps and bar charts of an exploration.
 *
 * The output is meant to be read by a person in a browser, and checked into
 * a results folder: so it is a standalone SVG 1.1 document (no scripts, no
 * external fonts or styles), and the same chart always gives the same bytes
 * (no time stamps, coordinates printed with a fixed precision).
 *
 * Layout is computed from estimated text widths (0.6 em per character, a
 * fair average for sans-serif), so that long labels widen the cells instead
 * of overlapping. Heat-map rows go down the page in the order of values[]
 * (row 0 at the top, as in a table), columns left to right.
 *
 * Colours: a five-stop approximation of viridis, dark (smallest) to bright
 * yellow (largest), interpolated in RGB over the finite values; a point with
 * no finite value is grey. Each value's label is black or white, whichever
 * contrasts with its fill.
 */
#include "explore/explore.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_POINTS = 10000,
    PAD = 20,          /* around the whole picture */
    FONT = 12,         /* labels and values */
    SMALL = 9,         /* notes of points with no value */
    TITLE_FONT = 16,
    CELL_H = 32,       /* heat-map row height */
    MAX_CELL_W = 240,  /* beyond this a long label overflows rather than stretch the chart */
    PLOT_H = 200,      /* bar chart plot height */
    LEGEND_W = 160,
    LEGEND_H = 12,
    MAX_TEXT_W = 4000, /* widths of absurdly long texts are capped: the layout stays in int */
};

static const char GREY[] = "#ddd";
static const char BEST_STROKE[] = "#111";

typedef struct rgb {
    double r, g, b;
} rgb;

/* viridis at 0, 1/4, 1/2, 3/4 and 1 */
static const rgb STOPS[] = {
    {0x44, 0x01, 0x54}, {0x3b, 0x52, 0x8b}, {0x21, 0x91, 0x8c}, {0x5e, 0xc9, 0x62}, {0xfd, 0xe7, 0x25},
};
enum { NSTOPS = sizeof STOPS / sizeof STOPS[0] };

/* ------------------------------------------------------------------------ */
/* Text                                                                     */
/* ------------------------------------------------------------------------ */

/* Text for XML, in content or in a quoted attribute. Control characters
 * other than tab and newlines cannot appear in XML 1.0 at all, not even as
 * references, so they become U+FFFD rather than break the document. */
static void put_escaped(st_buf *b, const char *s) {
    const char *run = s;
    for (const char *c = s; *c; c++) {
        unsigned char u = (unsigned char)*c;
        const char *rep;
        switch (u) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&apos;"; break;
        default:
            if (u >= 0x20 || u == '\t' || u == '\n' || u == '\r') continue;
            rep = "\xEF\xBF\xBD";
        }
        st_buf_put(b, run, (size_t)(c - run));
        st_buf_puts(b, rep);
        run = c + 1;
    }
    st_buf_puts(b, run);
}

/* Characters, not bytes: UTF-8 continuation bytes do not count. */
static size_t text_chars(const char *s) {
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static int text_width(const char *s, int font) {
    double w = (double)text_chars(s) * font * 0.6;
    return w > MAX_TEXT_W ? MAX_TEXT_W : (int)ceil(w);
}

static const char *or_empty(const char *s) { return s ? s : ""; }

/* A value with three significant digits, written out without an exponent
 * where that stays short (0.00123 … 999000), since "1.23e+02" reads badly
 * in a small cell. */
static void format_value(double v, char *out, size_t cap) {
    if (v == 0) {
        snprintf(out, cap, "0");
        return;
    }
    char rounded[32];
    snprintf(rounded, sizeof rounded, "%.3g", v);
    double r = strtod(rounded, NULL), a = fabs(r);
    if (a >= 1e-3 && a < 1e6) {
        int decimals = 2 - (int)floor(log10(a));
        snprintf(out, cap, "%.*f", decimals > 0 ? decimals : 0, r);
    } else {
        snprintf(out, cap, "%s", rounded);
    }
}

/* <text> at (x, y) with its attributes, the text escaped. */
static void put_text(st_buf *b, double x, double y, int font, const char *anchor, const char *fill,
                     const char *extra, const char *text) {
    st_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\" fill=\"%s\"%s%s>", x, y, font,
                  anchor, fill, extra ? " " : "", extra ? extra : "");
    put_escaped(b, text);
    st_buf_puts(b, "</text>\n");
}

/* ------------------------------------------------------------------------ */
/* Colours and the value range                                              */
/* ------------------------------------------------------------------------ */

/* The scale at t in [0, 1]. */
static rgb scale_colour(double t) {
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double at = t * (NSTOPS - 1);
    int i = (int)at;
    if (i >= NSTOPS - 1) return STOPS[NSTOPS - 1];
    double f = at - i;
    const rgb *a = &STOPS[i], *b = &STOPS[i + 1];
    return (rgb){a->r + (b->r - a->r) * f, a->g + (b->g - a->g) * f, a->b + (b->b - a->b) * f};
}

static void colour_hex(rgb c, char out[8]) {
    snprintf(out, 8, "#%02x%02x%02x", (unsigned)lround(c.r) & 0xff, (unsigned)lround(c.g) & 0xff,
             (unsigned)lround(c.b) & 0xff);
}

/* Black on bright fills, white on dark ones (by perceived brightness). */
static const char *text_on(rgb c) { return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b > 140 ? "#000" : "#fff"; }

/* The finite values' extent, and the first point holding the largest. */
typedef struct range {
    bool any;
    double lo, hi;
    size_t best;
} range;

static range finite_range(const double *v, size_t n) {
    range r = {0};
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) continue;
        if (!r.any || v[i] < r.lo) r.lo = v[i];
        if (!r.any || v[i] > r.hi) {
            r.hi = v[i];
            r.best = i;
        }
        r.any = true;
    }
    return r;
}

/* Where v falls on the scale: all values equal sit in its middle. */
static double scale_t(const range *r, double v) { return r->hi > r->lo ? (v - r->lo) / (r->hi - r->lo) : 0.5; }

/* ------------------------------------------------------------------------ */
/* Shared pieces                                                            */
/* ------------------------------------------------------------------------ */

/* What is drawn in place of a value: a point's note, else why it has none. */
static const char *missing_label(const st_chart *c, size_t i) {
    if (c->notes && c->notes[i]) return c->notes[i];
    if (isinf(c->values[i])) return c->values[i] > 0 ? "+inf" : "-inf";
    return "n/a";
}

/* The widest label a point can get, value or note, so columns fit it. */
static int widest_point_label(const st_chart *c, size_t n, int *note_w) {
    int w = 0;
    *note_w = 0;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(c->values[i])) {
            char text[32];
            format_value(c->values[i], text, sizeof text);
            int tw = text_width(text, FONT);
            if (tw > w) w = tw;
        } else {
            int tw = text_width(missing_label(c, i), SMALL);
            if (tw > *note_w) *note_w = tw;
        }
    }
    return w;
}

static int widest_label(const char *const *labels, size_t n, int font) {
    int w = 0;
    for (size_t i = 0; i < n; i++) {
        int tw = text_width(labels[i], font);
        if (tw > w) w = tw;
    }
    return w;
}

static int max_int(int a, int b) { return a > b ? a : b; }

static bool labels_present(const char *const *labels, uint32_t n, const char *which, const char *kind,
                           st_err *err) {
    if (!labels) return st_fail(err, (st_loc){0}, "%s: no %s (the labels are NULL)", kind, which);
    for (uint32_t i = 0; i < n; i++)
        if (!labels[i]) return st_fail(err, (st_loc){0}, "%s: %s[%u] is NULL", kind, which, i);
    return true;
}

/* The chart's shape and arrays, checked before anything is drawn. */
static bool check_chart(const st_chart *c, const st_buf *out, bool heatmap, st_err *err) {
    const char *kind = heatmap ? "heat-map" : "bar chart";
    if (!c || !out) return st_fail_internal(err, "%s: no chart or no output buffer", kind);
    if (c->nx < 1) return st_fail(err, (st_loc){0}, "%s: nx is 0: a chart needs at least one x value", kind);
    uint64_t n = c->nx;
    if (heatmap) {
        if (c->ny < 1) return st_fail(err, (st_loc){0}, "heat-map: ny is 0: a heat-map needs at least one y value");
        n *= c->ny;
    }
    if (n > MAX_POINTS)
        return st_fail(err, (st_loc){0}, "%s: too many points (%llu; at most %d)", kind, (unsigned long long)n,
                       MAX_POINTS);
    if (!c->values) return st_fail(err, (st_loc){0}, "%s: no values (values is NULL)", kind);
    if (!labels_present(c->x_labels, c->nx, "x_labels", kind, err)) return false;
    if (heatmap && !labels_present(c->y_labels, c->ny, "y_labels", kind, err)) return false;
    return true;
}

static void begin_svg(st_buf *b, int w, int h, const char *title) {
    st_buf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    st_buf_printf(b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
                  "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
                  w, h, w, h);
    st_buf_puts(b, "<title>");
    put_escaped(b, title);
    st_buf_puts(b, "</title>\n");
    st_buf_printf(b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", w, h);
    put_text(b, PAD, PAD + TITLE_FONT, TITLE_FONT, "start", "#000", "font-weight=\"bold\"", title);
}

/* The colour scale as a bar from (x, y), its min and max under its ends and
 * the unit after it; "no finite values" when there is nothing to scale. */
static void put_legend(st_buf *b, int x, int y, const range *r, const char *unit) {
    if (!r->any) {
        put_text(b, x, y + LEGEND_H - 2, FONT, "start", "#444", NULL, "no finite values");
        return;
    }
    st_buf_puts(b, "<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"0\" x2=\"1\" y2=\"0\">");
    for (int i = 0; i < NSTOPS; i++) {
        char hex[8];
        colour_hex(STOPS[i], hex);
        st_buf_printf(b, "<stop offset=\"%.2f\" stop-color=\"%s\"/>", (double)i / (NSTOPS - 1), hex);
    }
    st_buf_puts(b, "</linearGradient></defs>\n");
    st_buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"url(#scale)\" stroke=\"#888\"/>\n", x, y,
                  LEGEND_W, LEGEND_H);
    char lo[32], hi[32];
    format_value(r->lo, lo, sizeof lo);
    format_value(r->hi, hi, sizeof hi);
    put_text(b, x, y + LEGEND_H + FONT + 2, FONT, "start", "#000", NULL, lo);
    put_text(b, x + LEGEND_W, y + LEGEND_H + FONT + 2, FONT, "end", "#000", NULL, hi);
    put_text(b, x + LEGEND_W + 8, y + LEGEND_H - 1, FONT, "start", "#000", NULL, unit);
}

static int legend_width(const char *unit) { return LEGEND_W + 8 + text_width(unit, FONT); }
enum { LEGEND_TOTAL_H = LEGEND_H + FONT + 6 };

/* A point's tooltip: "BS 32, SE 1: 123.456 GB/s", or its note. */
static void put_tooltip(st_buf *b, const st_chart *c, size_t i, uint32_t x, uint32_t y, bool heatmap) {
    st_buf_puts(b, "<title>");
    put_escaped(b, or_empty(c->x_name));
    st_buf_puts(b, " ");
    put_escaped(b, c->x_labels[x]);
    if (heatmap) {
        st_buf_puts(b, ", ");
        put_escaped(b, or_empty(c->y_name));
        st_buf_puts(b, " ");
        put_escaped(b, c->y_labels[y]);
    }
    st_buf_puts(b, ": ");
    if (isfinite(c->values[i])) {
        st_buf_printf(b, "%.6g ", c->values[i]);
        put_escaped(b, or_empty(c->unit));
    } else {
        put_escaped(b, missing_label(c, i));
    }
    st_buf_puts(b, "</title>");
}

/* The thick dark frame around the best point, inside its box so that it
 * is not hidden under the neighbours drawn after it. */
static void put_best(st_buf *b, double x, double y, double w, double h) {
    st_buf_printf(b,
                  "<rect class=\"best\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                  "stroke=\"%s\" stroke-width=\"3\"/>\n",
                  x + 1.5, y + 1.5, w > 3 ? w - 3 : w, h > 3 ? h - 3 : h, BEST_STROKE);
}

/* An axis name written upwards, centred on (x, y). */
static void put_vertical_name(st_buf *b, double x, double y, const char *name) {
    char extra[96];
    snprintf(extra, sizeof extra, "transform=\"rotate(-90 %.1f %.1f)\" font-weight=\"bold\"", x, y);
    put_text(b, x, y, FONT, "middle", "#000", extra, name);
}

/* ------------------------------------------------------------------------ */
/* Heat-map                                                                 */
/* ------------------------------------------------------------------------ */

bool st_svg_heatmap(const st_chart *c, st_buf *out, st_err *err) {
    if (!check_chart(c, out, true, err)) return false;
    size_t n = (size_t)c->nx * c->ny;
    range r = finite_range(c->values, n);
    const char *title = or_empty(c->title), *unit = or_empty(c->unit);

    int note_w, value_w = widest_point_label(c, n, &note_w);
    int cell_w = max_int(56, max_int(widest_label(c->x_labels, c->nx, FONT) + 12, max_int(value_w + 10, note_w + 8)));
    if (cell_w > MAX_CELL_W) cell_w = MAX_CELL_W;
    int grid_w = cell_w * (int)c->nx, grid_h = CELL_H * (int)c->ny;
    int left = PAD + FONT + 8 + widest_label(c->y_labels, c->ny, FONT) + 8;
    int top = PAD + TITLE_FONT + 20;
    int x_labels_y = top + grid_h + FONT + 6, x_name_y = x_labels_y + FONT + 8, legend_y = x_name_y + 14;
    int width = max_int(left + grid_w, max_int(PAD + text_width(title, TITLE_FONT), left + legend_width(unit))) + PAD;
    int height = legend_y + LEGEND_TOTAL_H + PAD;

    begin_svg(out, width, height, title);
    put_vertical_name(out, PAD + FONT, top + grid_h / 2.0, or_empty(c->y_name));
    for (uint32_t y = 0; y < c->ny; y++)
        put_text(out, left - 8, top + y * CELL_H + CELL_H / 2.0 + 4, FONT, "end", "#000", NULL, c->y_labels[y]);
    for (uint32_t x = 0; x < c->nx; x++)
        put_text(out, left + x * cell_w + cell_w / 2.0, x_labels_y, FONT, "middle", "#000", NULL, c->x_labels[x]);
    put_text(out, left + grid_w / 2.0, x_name_y, FONT, "middle", "#000", "font-weight=\"bold\"", or_empty(c->x_name));

    st_buf_puts(out, "<g stroke=\"#fff\" stroke-width=\"1\">\n");
    for (uint32_t y = 0; y < c->ny; y++)
        for (uint32_t x = 0; x < c->nx; x++) {
            size_t i = (size_t)y * c->nx + x;
            int cx = left + (int)x * cell_w, cy = top + (int)y * CELL_H;
            bool has = isfinite(c->values[i]);
            rgb fill = has ? scale_colour(scale_t(&r, c->values[i])) : (rgb){0xdd, 0xdd, 0xdd};
            char hex[8];
            colour_hex(fill, hex);
            st_buf_printf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">", cx, cy, cell_w,
                          CELL_H, has ? hex : GREY);
            put_tooltip(out, c, i, x, y, true);
            st_buf_puts(out, "</rect>\n");
        }
    st_buf_puts(out, "</g>\n");
    /* labels after all cells, so that no cell is painted over one */
    for (uint32_t y = 0; y < c->ny; y++)
        for (uint32_t x = 0; x < c->nx; x++) {
            size_t i = (size_t)y * c->nx + x;
            double mx = left + x * cell_w + cell_w / 2.0, my = top + y * CELL_H + CELL_H / 2.0;
            if (isfinite(c->values[i])) {
                char text[32];
                format_value(c->values[i], text, sizeof text);
                put_text(out, mx, my + 4, FONT, "middle", text_on(scale_colour(scale_t(&r, c->values[i]))), NULL, text);
            } else {
                put_text(out, mx, my + 3, SMALL, "middle", "#333", "font-style=\"italic\"", missing_label(c, i));
            }
        }
    if (r.any)
        put_best(out, left + (double)(r.best % c->nx) * cell_w, top + (double)(r.best / c->nx) * CELL_H, cell_w,
                 CELL_H);
    put_legend(out, left, legend_y, &r, unit);
    st_buf_puts(out, "</svg>\n");
    return out->failed ? st_fail_internal(err, "out of memory writing a heat-map") : true;
}

/* ------------------------------------------------------------------------ */
/* Bars                                                                     */
/* ------------------------------------------------------------------------ */

enum { BAR_GAP = 12, STUB_H = 6 };

/* The bars' vertical scale: always includes 0 (the baseline), and spans at
 * least 1 so that all-zero or no values still give a drawable axis. */
typedef struct bar_scale {
    double lo, hi;
    int top;
} bar_scale;

static double bar_y(const bar_scale *s, double v) { return s->top + (s->hi - v) / (s->hi - s->lo) * PLOT_H; }

bool st_svg_bars(const st_chart *c, st_buf *out, st_err *err) {
    if (!check_chart(c, out, false, err)) return false;
    size_t n = c->nx;
    range r = finite_range(c->values, n);
    const char *title = or_empty(c->title), *unit = or_empty(c->unit);

    int top = PAD + TITLE_FONT + 20 + FONT + 4; /* room for a label above the tallest bar */
    bar_scale s = {r.any && r.lo < 0 ? r.lo : 0, r.any && r.hi > 0 ? r.hi : 0, top};
    if (s.hi == s.lo) s.hi = s.lo + 1;
    char lo_text[32], hi_text[32];
    format_value(s.lo, lo_text, sizeof lo_text);
    format_value(s.hi, hi_text, sizeof hi_text);
    int tick_w = max_int(text_width(lo_text, FONT), text_width(hi_text, FONT));

    int note_w, value_w = widest_point_label(c, n, &note_w);
    int slot = max_int(48, max_int(widest_label(c->x_labels, c->nx, FONT) + 12, max_int(value_w + 8, note_w + 6)));
    if (slot > MAX_CELL_W) slot = MAX_CELL_W;
    int left = PAD + FONT + 8 + tick_w + 10;
    int plot_w = slot * (int)c->nx, bottom = top + PLOT_H;
    int x_labels_y = bottom + FONT + 6, x_name_y = x_labels_y + FONT + 8, legend_y = x_name_y + 14;
    int width = max_int(left + plot_w, max_int(PAD + text_width(title, TITLE_FONT), left + legend_width(unit))) + PAD;
    int height = legend_y + LEGEND_TOTAL_H + PAD;

    begin_svg(out, width, height, title);
    /* the y axis: the unit, a line, and ticks at both ends (and 0 when it lies between) */
    put_vertical_name(out, PAD + FONT, top + PLOT_H / 2.0, unit);
    st_buf_printf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n", left - 4, top, left - 4,
                  bottom);
    double ticks[] = {s.hi, 0, s.lo};
    for (int t = 0; t < 3; t++) {
        if (t == 1 && (s.lo == 0 || s.hi == 0)) continue;
        char text[32];
        format_value(ticks[t], text, sizeof text);
        double ty = bar_y(&s, ticks[t]);
        st_buf_printf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000\"/>\n", left - 8, ty,
                      left - 4, ty);
        put_text(out, left - 10, ty + 4, FONT, "end", "#000", NULL, text);
    }
    double base = bar_y(&s, 0);
    for (uint32_t x = 0; x < c->nx; x++)
        put_text(out, left + x * slot + slot / 2.0, x_labels_y, FONT, "middle", "#000", NULL, c->x_labels[x]);
    put_text(out, left + plot_w / 2.0, x_name_y, FONT, "middle", "#000", "font-weight=\"bold\"", or_empty(c->x_name));

    double best_x = 0, best_y = 0, best_h = 0;
    for (uint32_t x = 0; x < c->nx; x++) {
        double bx = left + x * slot + BAR_GAP / 2.0, bw = slot - BAR_GAP, mid = bx + bw / 2.0;
        double v = c->values[x];
        if (!isfinite(v)) {
            /* a stub, so that the missing bar is visibly there, with its note above */
            st_buf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\">", bx,
                          base - STUB_H, bw, STUB_H, GREY);
            put_tooltip(out, c, x, x, 0, false);
            st_buf_puts(out, "</rect>\n");
            put_text(out, mid, base - STUB_H - 4, SMALL, "middle", "#333", "font-style=\"italic\"", missing_label(c, x));
            continue;
        }
        rgb fill = scale_colour(scale_t(&r, v));
        char hex[8], text[32];
        colour_hex(fill, hex);
        double y0 = bar_y(&s, v > 0 ? v : 0), h = fabs(bar_y(&s, v) - base);
        st_buf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">", bx, y0, bw, h, hex);
        put_tooltip(out, c, x, x, 0, false);
        st_buf_puts(out, "</rect>\n");
        format_value(v, text, sizeof text);
        /* inside the bar when it is tall enough to hold the text, else beside its end */
        if (h >= FONT + 6)
            put_text(out, mid, v > 0 ? y0 + FONT + 5 : y0 + h - 7, FONT, "middle", text_on(fill), NULL, text);
        else
            put_text(out, mid, v >= 0 ? y0 - 4 : y0 + h + FONT + 1, FONT, "middle", "#000", NULL, text);
        if (r.any && x == r.best) {
            best_x = bx;
            best_y = y0;
            best_h = h;
        }
    }
    st_buf_printf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000\"/>\n", left - 4, base,
                  left + plot_w, base);
    if (r.any) {
        if (best_h < STUB_H) { /* a frame around nothing would not show: at least a stub's height */
            best_y += best_h - STUB_H;
            best_h = STUB_H;
        }
        put_best(out, best_x, best_y, slot - BAR_GAP, best_h);
    }
    put_legend(out, left, legend_y, &r, unit);
    st_buf_puts(out, "</svg>\n");
    return out->failed ? st_fail_internal(err, "out of memory writing a bar chart") : true;
}
