/* SPDX-License-Identifier: MIT */
/*
 * attestctl's tables: cells escaped once when added and cut when printed (never inside an
 * escape), fitted to the terminal; the colours of status words; a verdict's claims.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attestctl/remote.h"
#include "attestctl/tty.h"

/* ---- tables ---- */

void table_init(struct table *t, unsigned ncols, const char *const *head)
{
        *t = (struct table){.ncols = ncols};
        for (unsigned i = 0; i < ncols && i < TABLE_COLS; i++)
                t->head[i] = head[i];
}

int table_row(struct table *t, const char *const *cells, const enum color *colors)
{
        return table_row_ranked(t, 0, cells, colors);
}

int table_row_ranked(struct table *t, unsigned rank, const char *const *cells,
                     const enum color *colors)
{
        char *esc[TABLE_COLS] = {0};
        size_t len[TABLE_COLS], total = 0, off = 0;
        char *row = NULL;
        int x = -ENOMEM;

        if (t->nrows >= TABLE_ROWS_MAX) {
                t->dropped++;
                return -E2BIG;
        }
        /* every cell escaped whole (attestctl/tty.h: at most 4 bytes for each byte of it) */
        for (unsigned i = 0; i < t->ncols; i++) {
                const char *c = cells[i] ? cells[i] : "-";
                size_t n = strnlen(c, TABLE_BYTES_MAX);

                if (n == TABLE_BYTES_MAX || !(esc[i] = malloc(4 * n + 4)))
                        goto out;
                tty_text(c, 0, esc[i], 4 * n + 4);
                len[i] = strlen(esc[i]) + 1;
                total += len[i];
        }
        if (total > TABLE_BYTES_MAX - t->bytes) {
                t->dropped++;
                x = -E2BIG;
                goto out;
        }
        if (t->nrows == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 16;
                char **nr = realloc(t->rows, cap * sizeof(*nr));
                unsigned char *nrk;
                enum color *ncol;

                if (!nr)
                        goto out;
                t->rows = nr;
                if (!(nrk = realloc(t->ranks, cap)))
                        goto out;
                t->ranks = nrk;
                if (!(ncol = realloc(t->colors, cap * t->ncols * sizeof(*ncol))))
                        goto out;
                t->colors = ncol;
                t->cap = cap;
        }
        if (!(row = malloc(total)))
                goto out;
        for (unsigned i = 0; i < t->ncols; i++) {
                memcpy(row + off, esc[i], len[i]);
                off += len[i];
                t->colors[t->nrows * t->ncols + i] = colors ? colors[i] : C_NONE;
        }
        t->rows[t->nrows] = row;
        t->ranks[t->nrows] = (unsigned char)(rank < TABLE_RANKS ? rank : TABLE_RANKS - 1);
        t->bytes += total;
        t->nrows++;
        x = 0;
out:
        for (unsigned i = 0; i < t->ncols; i++)
                free(esc[i]);
        return x;
}

static const char *const color_on[] = {"", "\033[31m", "\033[32m", "\033[33m", "\033[1m"};

/*
 * One cell (escaped already: its text is printable), cut at width columns (never inside an
 * escape, tty_cut()) and padded to them unless last.
 */
static void cell(const char *s, enum color c, bool color, size_t width, bool last)
{
        size_t n = tty_width(s);
        char *cut = NULL;

        if (n > width) {
                size_t len = strlen(s) + 4;

                /* a cut is never longer than the text and its "..." */
                if ((cut = malloc(len))) {
                        n = tty_cut(s, width, cut, len);
                        s = cut;
                }
        }
        if (color && c != C_NONE)
                printf("%s%s\033[0m", color_on[c], s);
        else
                fputs(s, stdout);
        if (!last && n <= width)
                printf("%*s", (int)(width - n + 2), "");
        else if (!last)
                fputs("  ", stdout);
        free(cut);
}

/* The columns of the widest cell of each column, capped at CELL_MAX unless t->full. */
static void widths(const struct table *t, size_t w[TABLE_COLS])
{
        for (unsigned i = 0; i < t->ncols; i++)
                w[i] = tty_width(t->head[i]);
        for (size_t r = 0; r < t->nrows; r++) {
                const char *c = t->rows[r];

                for (unsigned i = 0; i < t->ncols; i++) {
                        size_t n = tty_width(c);

                        if (!t->full && n > CELL_MAX)
                                n = CELL_MAX;
                        if (n > w[i])
                                w[i] = n;
                        c += strlen(c) + 1;
                }
        }
}

/* Take columns from column i (by one, down to min) while the row is wider than width. */
static void shrink(size_t *w, size_t min, size_t *total, size_t width)
{
        while (*total > width && *w > min) {
                (*w)--;
                (*total)--;
        }
}

/*
 * Narrow the columns until the row fits t->width: first the last one (free text: a reason) down
 * to CELL_FIT_MIN, then the widest ones, one column at a time, down to CELL_FIT_MIN, then (a very
 * narrow terminal) down to 4 ("x..."). A column narrower than that is left as it is.
 */
static void fit_width(const struct table *t, size_t w[TABLE_COLS])
{
        static const size_t floor_of[] = {CELL_FIT_MIN, 4};
        size_t total = 0;

        if (t->full || !t->width || !t->ncols)
                return;
        for (unsigned i = 0; i < t->ncols; i++)
                total += w[i] + (i + 1 < t->ncols ? 2 : 0);
        shrink(&w[t->ncols - 1], CELL_FIT_MIN, &total, t->width);
        for (size_t f = 0; f < ARRAY_SIZE(floor_of); f++)
                while (total > t->width) {
                        unsigned widest = TABLE_COLS;

                        for (unsigned i = 0; i < t->ncols; i++)
                                if (w[i] > floor_of[f] &&
                                    (widest == TABLE_COLS || w[i] > w[widest]))
                                        widest = i;
                        if (widest == TABLE_COLS)
                                break;
                        w[widest]--;
                        total--;
                }
}

void table_print(const struct table *t, bool color)
{
        size_t w[TABLE_COLS] = {0};

        widths(t, w);
        fit_width(t, w);
        for (unsigned i = 0; i < t->ncols; i++)
                cell(t->head[i], C_BOLD, color, w[i], i + 1 == t->ncols);
        putchar('\n');
        /* by rank, each rank in the order the rows came */
        for (unsigned rank = 0; rank < TABLE_RANKS; rank++)
                for (size_t r = 0; r < t->nrows; r++) {
                        const char *c = t->rows[r];

                        if (t->ranks[r] != rank)
                                continue;
                        for (unsigned i = 0; i < t->ncols; i++) {
                                cell(c, t->colors[r * t->ncols + i], color, w[i],
                                     i + 1 == t->ncols);
                                c += strlen(c) + 1;
                        }
                        putchar('\n');
                }
        if (t->dropped)
                printf("(%zu more rows not shown: a table holds at most %u rows and %u MiB)\n",
                       t->dropped, TABLE_ROWS_MAX, TABLE_BYTES_MAX >> 20);
}

void table_fit(struct table *t, const struct remote *r)
{
        t->width = r->width;
        t->full = r->full;
}

void table_done(struct table *t)
{
        for (size_t i = 0; i < t->nrows; i++)
                free(t->rows[i]);
        free(t->rows);
        free(t->ranks);
        free(t->colors);
        *t = (struct table){0};
}

enum color status_color(const char *s)
{
        if (!s)
                return C_NONE;
        if (!strcmp(s, "fail") || !strcmp(s, "failing") || !strcmp(s, "decommissioned") ||
            !strcmp(s, "error") || !strcmp(s, "contraindicated"))
                return C_RED;
        if (!strcmp(s, "stale") || !strcmp(s, "warning") || !strcmp(s, "pending"))
                return C_YELLOW;
        if (!strcmp(s, "pass") || !strcmp(s, "ok") || !strcmp(s, "affirming"))
                return C_GREEN;
        return C_NONE;
}

const char *colored(const char *s, enum color c, bool color, char *buf, size_t n)
{
        static const char off[] = "\033[0m";
        size_t on, len;

        if (!color || c == C_NONE || n < strlen(color_on[c]) + sizeof(off) + 4) {
                tty_text(s, 0, buf, n);
                return buf;
        }
        /* our escapes around s, s escaped (it may come from the server) */
        on = strlen(color_on[c]);
        memcpy(buf, color_on[c], on);
        tty_text(s, 0, buf + on, n - on - (sizeof(off) - 1));
        len = on + strlen(buf + on);
        memcpy(buf + len, off, sizeof(off));
        return buf;
}

/* ---- verdicts ---- */

static const char *str(const json_t *o, const char *k)
{
        return json_string_value(json_object_get(o, k));
}

/*
 * A JSON value's text in a cell: "-" for none, a string bare, the rest compact JSON (then *owned
 * holds it, to be freed); NULL when that cannot be allocated.
 */
static const char *value_text(const json_t *v, char **owned)
{
        *owned = NULL;
        if (!v || json_is_null(v))
                return "-";
        if (json_is_string(v))
                return json_string_value(v);
        return *owned = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
}

/* A JSON value as a table cell: strings bare, the rest compact JSON; escaped, cut at CELL_MAX. */
void cell_text(const json_t *v, char *buf, size_t n)
{
        _cleanup_free_ char *s = NULL;
        const char *t = value_text(v, &s);

        tty_text(t ? t : "?", CELL_MAX, buf, n);
}

char *digests_shortened(const char *s)
{
        size_t n = strlen(s), o = 0;
        char *out = malloc(n + 1);

        if (!out)
                return NULL;
        for (size_t i = 0; i < n;) {
                size_t run = 0;

                while (i + run < n && ((s[i + run] >= '0' && s[i + run] <= '9') ||
                                       (s[i + run] >= 'a' && s[i + run] <= 'f') ||
                                       (s[i + run] >= 'A' && s[i + run] <= 'F')))
                        run++;
                if (run >= DIGEST_RUN_MIN) {
                        /* DIGEST_SHORT + 3 < DIGEST_RUN_MIN: never longer than s */
                        memcpy(out + o, s + i, DIGEST_SHORT);
                        memcpy(out + o + DIGEST_SHORT, "...", 3);
                        o += DIGEST_SHORT + 3;
                        i += run;
                } else if (run) {
                        memcpy(out + o, s + i, run);
                        o += run;
                        i += run;
                } else
                        out[o++] = s[i++];
        }
        out[o] = '\0';
        return out;
}

/* A claim's value as the text of its cell (strings bare, the rest compact JSON), its digests
 * shortened unless full; NULL: out of memory. */
static char *claim_cell(const json_t *v, bool full)
{
        _cleanup_free_ char *s = NULL;
        const char *t = value_text(v, &s);

        if (!t)
                return NULL;
        return full ? strdup(t) : digests_shortened(t);
}

/* The claims of a verdict as a table, failing claims first; the top-level reason when any. */
void print_claims(const json_t *verdict, const struct remote *r)
{
        static const char *const head[] = {"RESULT",   "CLAIM", "EXPECTED", "OBSERVED",
                                           "ANCHORED", "ENTRY", "REASON"};
        static const char *const keys[] = {"expected", "observed", "entry", "reason"};
        const json_t *claims = json_object_get(verdict, "claims"), *reason;
        const json_t *unchecked = json_object_get(verdict, "sections_unchecked");
        struct table t;

        reason = json_object_get(verdict, "reason");
        if (json_is_object(reason)) {
                fputs("reason:     ", stdout);
                tty_fputs(str(reason, "code") ? str(reason, "code") : "?", 0, stdout);
                fputs(": ", stdout);
                tty_fputs(str(reason, "detail") ? str(reason, "detail") : "", 0, stdout);
                putchar('\n');
        }
        if (str(verdict, "note")) {
                fputs("note:       ", stdout);
                tty_fputs(str(verdict, "note"), 0, stdout);
                putchar('\n');
        }
        if (json_array_size(unchecked)) {
                _cleanup_free_ char *s = json_dumps(unchecked, JSON_COMPACT);

                fputs("unchecked:  ", stdout);
                tty_fputs(s ? s : "?", 0, stdout);
                putchar('\n');
        }
        if (!json_array_size(claims))
                return;
        putchar('\n');
        table_init(&t, ARRAY_SIZE(head), head);
        table_fit(&t, r);
        for (size_t i = 0; i < json_array_size(claims); i++) {
                const json_t *c = json_array_get(claims, i);
                const char *res = str(c, "result");
                bool failing = !res || strcmp(res, "pass") != 0;
                char *v[ARRAY_SIZE(keys)] = {0};
                const char *cells[7];
                enum color col[7] = {0};
                bool nomem = false;
                int x;

                for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
                        nomem |= !(v[k] = claim_cell(json_object_get(c, keys[k]), r->full));
                cells[0] = res;
                cells[1] = str(c, "name");
                cells[2] = v[0];
                cells[3] = v[1];
                cells[4] = json_is_true(json_object_get(c, "anchored")) ? "yes" : "no";
                cells[5] = v[2];
                cells[6] = v[3];
                col[0] = status_color(res);
                /* failing claims first (rank 0), each group in the verdict's order */
                x = nomem ? -ENOMEM : table_row_ranked(&t, failing ? 0 : 1, cells, col);
                for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
                        free(v[k]);
                if (x == -ENOMEM)
                        break;
        }
        table_print(&t, r->color);
        table_done(&t);
}
