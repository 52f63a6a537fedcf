/* SPDX-License-Identifier: MIT */
/*
 * evidence_from_json: the evidence document read with the pull reader of util/json-rd.h straight
 * into struct evidence, without a jansson tree (the tree, its allocations and the copy
 * of the base64 log were most of attestd's JSON cost).
 *
 * It gives the answer the jansson decoder gave (tests/fuzz/evjson-jansson.c keeps that decoder,
 * and tests/fuzz/fuzz-evidence-diff.c compares the two on every input): the same accept/reject,
 * error code, errno, message (except the wording of a syntax error) and decoded struct. jansson
 * parsed the whole text before looking at a field, and then checked the fields in a fixed order,
 * whatever their order in the text. So the read is two steps:
 * 1. the walk: the whole text through the reader, every byte checked, remembering for each field
 *    of the schema where its value is (a string stays in the input: no copy), and for each object
 *    the first key outside the schema; the PCR map is checked and decoded as it goes by, its first
 *    error kept for step 2. Any syntax error ends the read as evidence_json.
 * 2. the checks (evjson-check.c), in the jansson decoder's order, on the remembered values;
 *    base64 is decoded from the input straight into the final buffer, in one pass.
 * The walk's record (struct walk) is in evjson-read-internal.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "evidence/evjson-read-internal.h"
#include "evidence/evjson.h"
#include "evidence/jpath.h"
#include "evidence/quote.h"
#include "util/hex.h"
#include "util/json-rd.h"
enum kind { LEAF, OBJ, PCRS, LABELS };

/* A member of an object of the schema: its value goes to the slot or object at off in the walk. */
struct member {
        const char *name;
        enum kind kind;
        size_t off;
        const struct member *members; /* OBJ: the nested object's */
};

#define M_LEAF(n, f)                                                                               \
        {                                                                                          \
                n, LEAF, offsetof(struct walk, f), NULL                                            \
        }
#define M_OBJ(n, f, m)                                                                             \
        {                                                                                          \
                n, OBJ, offsetof(struct walk, f), m                                                \
        }

static const struct member cfi_members[] = {M_LEAF("source", cfi_source),
                                            M_LEAF("enabled", cfi_enabled),
                                            M_LEAF("permissive", cfi_permissive),
                                            {NULL, LEAF, 0, NULL}};
static const struct member tk_members[] = {
        M_LEAF("source", tk_source), M_LEAF("origin", tk_origin), {NULL, LEAF, 0, NULL}};
static const struct member host_members[] = {
        M_LEAF("kernel", kernel),
        M_LEAF("cmdline", cmdline),
        M_LEAF("boot_id", boot_id),
        M_OBJ("cfi", cfi, cfi_members),
        M_OBJ("trusted_keys", tk, tk_members),
        M_LEAF("hostname", hostname),
        M_LEAF("machine_id", machine_id),
        {"labels", LABELS, offsetof(struct walk, labels), NULL},
        {NULL, LEAF, 0, NULL}};
static const struct member quote_members[] = {M_LEAF("attest", attest),
                                              M_LEAF("signature", sig),
                                              {"pcrs", PCRS, offsetof(struct walk, pcrs), NULL},
                                              {NULL, LEAF, 0, NULL}};
static const struct member ima_members[] = {M_LEAF("offset", offset),
                                            M_LEAF("format", format),
                                            M_LEAF("entries", entries),
                                            {NULL, LEAF, 0, NULL}};
static const struct member boot_members[] = {
        M_LEAF("offset", boot_offset), M_LEAF("data", boot_data), {NULL, LEAF, 0, NULL}};
static const struct member top_members[] = {M_LEAF("version", version),
                                            M_LEAF("nonce", nonce),
                                            M_OBJ("quote", quote, quote_members),
                                            M_OBJ("ima", ima, ima_members),
                                            M_OBJ("boot_log", boot, boot_members),
                                            M_OBJ("host", host, host_members),
                                            {NULL, LEAF, 0, NULL}};

/* ---- step 1: the walk ---- */

/* A key unescaped into a new NUL terminated string, for a path in a message (cold path). */
static char *key_dup(const struct jrd_str *k)
{
        char *s = malloc(k->len + 1);

        if (s && jrd_str_copy(k, s, k->len + 1) < 0) {
                free(s);
                s = NULL;
        }
        return s;
}

/* parent + key, as jpath_join names it. */
int evjson_read_join(char *out, const char *parent, const struct jrd_str *key)
{
        _cleanup_free_ char *k = key_dup(key);

        if (!k)
                return -ENOMEM;
        jpath_join(out, parent, k);
        return 0;
}

/* The PCR index a key names: decimal 0-23, no leading zero (jpath_pcr_index). */
static int pcr_index(const struct jrd_str *k, unsigned *ret)
{
        char s[3];

        if (k->len < 1 || k->len > 2 || jrd_str_copy(k, s, sizeof(s)) < 0)
                return -EINVAL;
        return jpath_pcr_index(s, ret);
}

/*
 * Keep the PCR map's first error for step 2, at $.quote.pcrs.<bank> or, with an index key,
 * $.quote.pcrs.<bank>.<index> (the paths are made here only: no allocation on the good path).
 */
static int pcrs_fail(struct walk *w, enum attest_code code, const struct jrd_str *bank,
                     const struct jrd_str *index, const char *why)
{
        char bp[JPATH_MAX], p[JPATH_MAX];
        int e;

        if ((e = evjson_read_join(bp, "$.quote.pcrs", bank)) < 0 ||
            (index && (e = evjson_read_join(p, bp, index)) < 0))
                return e;
        w->pcrs_e = jpath_fail(&w->pcrs_err, -EBADMSG, code, index ? p : bp, "%s", why);
        return 0;
}

/* One bank's map {"0":"HEX", ...}, opened; b < 0: only read (an error was kept already). */
static int walk_bank(struct walk *w, int b, const struct jrd_str *bname)
{
        struct jrd_str k;
        int m, e;

        while ((m = jrd_member(&w->r, &k)) > 0) {
                struct jrd_val v;
                size_t n = b >= 0 ? bank_size(b) : 0, got = 0;
                unsigned i = 0;
                char hex[2 * BANK_DIGEST_MAX + 1];
                const char *h;

                if ((e = jrd_value(&w->r, &v)) < 0)
                        return e;
                if (v.type == JRD_OBJECT || v.type == JRD_ARRAY) {
                        if ((e = jrd_skip(&w->r)) < 0)
                                return e;
                }
                if (b < 0 || w->pcrs_e)
                        continue;
                if (pcr_index(&k, &i) < 0) {
                        if ((e = pcrs_fail(w, AE_EVIDENCE_UNKNOWN_FIELD, bname, &k,
                                           "not a PCR index 0-23")) < 0)
                                return e;
                        continue;
                }
                if (v.type != JRD_STRING) {
                        if ((e = pcrs_fail(w, AE_EVIDENCE_TYPE, bname, &k, "not a string")) < 0)
                                return e;
                        continue;
                }
                h = v.s.p;
                if (v.s.len == 2 * n && v.s.esc && jrd_str_copy(&v.s, hex, sizeof(hex)) == 0)
                        h = hex;
                if (v.s.len != 2 * n || hex_decode(h, v.s.len, w->ev->pcrs.v[b][i], n, &got) < 0 ||
                    got != n) {
                        char why[64];

                        snprintf(why, sizeof(why), "not a %s digest (%zu hex digits)", bank_name(b),
                                 2 * n);
                        if ((e = pcrs_fail(w, AE_EVIDENCE_BAD_HEX, bname, &k, why)) < 0)
                                return e;
                        continue;
                }
                w->ev->pcrs.have[b] |= 1u << i;
                w->pcrs_count++;
        }
        return m;
}

/* The PCR map, opened: checked as pcrs_from_json checks it, in the text's order. */
static int walk_pcrs(struct walk *w)
{
        struct jrd_str k;
        int m, e;

        while ((m = jrd_member(&w->r, &k)) > 0) {
                char s[16];
                struct jrd_val v;
                int b = -1;

                e = 0;
                if (k.len < sizeof(s) && jrd_str_copy(&k, s, sizeof(s)) == 0)
                        b = bank_from_name(s, k.len);
                if ((e = jrd_value(&w->r, &v)) < 0)
                        return e;
                if (!w->pcrs_e && b < 0)
                        e = pcrs_fail(w, AE_EVIDENCE_UNKNOWN_FIELD, &k, NULL, "unknown PCR bank");
                else if (!w->pcrs_e && v.type != JRD_OBJECT)
                        e = pcrs_fail(w, AE_EVIDENCE_TYPE, &k, NULL, "not an object");
                if (e < 0)
                        return e;
                if (v.type == JRD_OBJECT)
                        e = walk_bank(w, w->pcrs_e ? -1 : b, &k);
                else if (v.type == JRD_ARRAY)
                        e = jrd_skip(&w->r);
                if (e < 0)
                        return e;
        }
        return m;
}

/* The labels object, opened: its members remembered in order (checked in step 2). */
static int walk_labels(struct walk *w)
{
        struct jrd_str k;
        int m, e;

        while ((m = jrd_member(&w->r, &k)) > 0) {
                struct jrd_val v;

                if ((e = jrd_value(&w->r, &v)) < 0)
                        return e;
                if (w->n_labels < EVIDENCE_LABELS_MAX) {
                        w->label_key[w->n_labels] = k;
                        w->label_val[w->n_labels] =
                                (struct slot){.present = true, .type = v.type, .s = v.s, .i = v.i};
                }
                w->n_labels++;
                if ((v.type == JRD_OBJECT || v.type == JRD_ARRAY) && (e = jrd_skip(&w->r)) < 0)
                        return e;
        }
        return m;
}

static const struct member *lookup(const struct member *m, const struct jrd_str *k)
{
        for (; m->name; m++)
                if (jrd_str_eq(k, m->name))
                        return m;
        return NULL;
}

/* An object of the schema, opened: its members into their slots, the rest skipped. */
static int walk_obj(struct walk *w, struct obj *o, const struct member *members)
{
        struct jrd_str k;
        int m, e;

        o->present = o->is_obj = true;
        while ((m = jrd_member(&w->r, &k)) > 0) {
                const struct member *f = lookup(members, &k);
                struct jrd_val v;
                void *at;

                if ((e = jrd_value(&w->r, &v)) < 0)
                        return e;
                if (!f) {
                        if (!o->unknown) {
                                o->unknown = true;
                                o->key = k;
                        }
                        if ((v.type == JRD_OBJECT || v.type == JRD_ARRAY) &&
                            (e = jrd_skip(&w->r)) < 0)
                                return e;
                        continue;
                }
                at = (char *)w + f->off;
                if (f->kind == LEAF) {
                        struct slot *s = at;

                        *s = (struct slot){.present = true, .type = v.type, .s = v.s, .i = v.i};
                        e = v.type == JRD_OBJECT || v.type == JRD_ARRAY ? jrd_skip(&w->r) : 0;
                } else {
                        struct obj *c = at;

                        *c = (struct obj){.present = true, .is_obj = v.type == JRD_OBJECT};
                        if (v.type != JRD_OBJECT)
                                e = v.type == JRD_ARRAY ? jrd_skip(&w->r) : 0;
                        else if (f->kind == PCRS)
                                e = walk_pcrs(w);
                        else if (f->kind == LABELS)
                                e = walk_labels(w);
                        else
                                e = walk_obj(w, c, f->members);
                }
                if (e < 0)
                        return e;
        }
        return m;
}

static int syntax_error(const struct walk *w, int e, struct attest_err *err)
{
        size_t off = 0, line = 1, col = 1;
        const char *why = jrd_error(&w->r, &off);

        if (e == -ENOMEM)
                return e;
        for (size_t i = 0; i < off && i < w->r.len; i++, col++)
                if (w->r.buf[i] == '\n') {
                        line++;
                        col = 0;
                }
        return attest_fail(err, -EBADMSG, AE_EVIDENCE_JSON,
                           "$: invalid JSON at line %zu column %zu: %s", line, col,
                           why ? why : "malformed");
}

static void walk_free(struct walk *w)
{
        jrd_free(&w->r);
}

int evidence_from_json(const char *buf, size_t len, size_t max_ima, struct evidence **ret,
                       struct attest_err *err)
{
        _cleanup_(evidence_freep) struct evidence *ev = NULL;
        _cleanup_(walk_free) struct walk w = {0};
        struct jrd_val v;
        int x;

        if (len > EVIDENCE_JSON_MAX)
                return attest_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG,
                                   "$: document of %zu bytes > %u", len, EVIDENCE_JSON_MAX);
        if (!(ev = calloc(1, sizeof(*ev))))
                return -ENOMEM;
        w.ev = ev;
        jrd_init(&w.r, buf, len);
        if ((x = jrd_value(&w.r, &v)) < 0)
                return syntax_error(&w, x, err);
        if (v.type == JRD_OBJECT)
                x = walk_obj(&w, &w.top, top_members);
        else if (v.type == JRD_ARRAY)
                x = jrd_skip(&w.r);
        if (x < 0 || (x = jrd_end(&w.r)) < 0)
                return syntax_error(&w, x, err);
        if (v.type != JRD_OBJECT)
                return attest_fail(err, -EBADMSG, AE_EVIDENCE_JSON, "$: not a JSON object");
        if ((x = evjson_read_check(&w, max_ima, ev, err)) < 0)
                return x;
        *ret = TAKE_PTR(ev);
        return 0;
}
