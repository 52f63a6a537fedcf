/* SPDX-License-Identifier: MIT */
/*
 * evidence_from_json: the evidence document read with the pull reader of util/json-rd.h straight
 * into struct evidence, without a jansson tree (issue 15: the tree, its allocations and the copy
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
 * 2. the checks, in the jansson decoder's order, on the remembered values; base64 is decoded from
 *    the input straight into the final buffer, in one pass.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "evidence/evjson.h"
#include "evidence/jpath.h"
#include "evidence/quote.h"
#include "util/hex.h"
#include "util/json-rd.h"

/* A leaf of the schema as the walk met it (present only when its object was one). */
struct slot {
        bool present;
        enum jrd_type type;
        struct jrd_str s; /* JRD_STRING: borrowed from the input */
        int64_t i;        /* JRD_INT */
};

/* An object of the schema. */
struct obj {
        bool present, is_obj;
        bool unknown; /* a key outside the schema was met: the first is in key */
        struct jrd_str key;
};

struct walk {
        struct jrd r;
        struct evidence *ev;
        struct obj top, quote, pcrs, ima, host, cfi, tk, boot;
        struct slot version, nonce, attest, sig, offset, format, entries, kernel, cmdline, boot_id,
                cfi_source, cfi_enabled, cfi_permissive, tk_source, tk_origin;
        struct slot hostname, machine_id;
        struct slot boot_offset, boot_data;
        struct obj labels;
        unsigned n_labels; /* members of "labels"; the first EVIDENCE_LABELS_MAX are kept */
        struct jrd_str label_key[EVIDENCE_LABELS_MAX];
        struct slot label_val[EVIDENCE_LABELS_MAX];
        int pcrs_e; /* the PCR map's first error, in pcrs_err */
        unsigned pcrs_count;
        struct attest_err pcrs_err;
};

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
static int join(char *out, const char *parent, const struct jrd_str *key)
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

        if ((e = join(bp, "$.quote.pcrs", bank)) < 0 || (index && (e = join(p, bp, index)) < 0))
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

/* ---- step 2: the checks, in the order of the jansson decoder ---- */

static int object(const struct obj *o, const char *path, struct attest_err *err)
{
        char p[JPATH_MAX];
        int e;

        if (!o->is_obj)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not an object");
        if (o->unknown) {
                if ((e = join(p, path, &o->key)) < 0)
                        return e;
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD, p, "unknown field");
        }
        return 0;
}

static int field(const struct slot *s, const char *path, struct attest_err *err)
{
        if (!s->present)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, path, "missing");
        return 0;
}

/*
 * A string of at most max bytes: *ret is the input's bytes, or the unescaped copy in buf (size >
 * max); not NUL terminated.
 */
static int str(const struct slot *v, const char *path, size_t max, char *buf, size_t size,
               const char **ret, size_t *ret_len, struct attest_err *err)
{
        if (v->type != JRD_STRING)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not a string");
        if (v->s.len > max)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path, "%zu bytes > %zu",
                                  v->s.len, max);
        *ret = v->s.p;
        if (v->s.esc) {
                if (jrd_str_copy(&v->s, buf, size) < 0)
                        return -EINVAL; /* size <= max: a caller's bug */
                *ret = buf;
        }
        *ret_len = v->s.len;
        return 0;
}

/* a log offset: an integer, not negative */
static int offset(const struct slot *v, const char *path, uint64_t *ret, struct attest_err *err)
{
        if (v->type != JRD_INT)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not an integer");
        if (v->i < 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, path, "negative");
        *ret = (uint64_t)v->i;
        return 0;
}

static int boolean(const struct slot *v, const char *path, bool *ret, struct attest_err *err)
{
        if (v->type != JRD_TRUE && v->type != JRD_FALSE)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not a boolean");
        *ret = v->type == JRD_TRUE;
        return 0;
}

/* Hex of 1..max bytes. */
static int hexfield(const struct slot *v, const char *path, uint8_t *out, size_t max,
                    size_t *ret_len, struct attest_err *err)
{
        char buf[2 * EVIDENCE_NONCE_MAX + 1];
        const char *s = NULL;
        size_t n = 0, got;
        int x;

        if (2 * max >= sizeof(buf))
                return -EINVAL;
        if ((x = str(v, path, 2 * max, buf, sizeof(buf), &s, &n, err)) < 0)
                return x == -E2BIG ? jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_HEX, path,
                                                "%zu hex digits, at most %zu bytes wanted",
                                                v->s.len, max)
                                   : x;
        if (hex_decode(s, n, out, max, &got) < 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_HEX, path, "not hex");
        if (got == 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_HEX, path, "%zu bytes, %zu wanted",
                                  got, max);
        *ret_len = got;
        return 0;
}

/* Base64 from the input straight into a new buffer of at most max bytes; "" gives NULL, 0. */
static int b64field(const struct slot *v, const char *path, size_t max, uint8_t **ret,
                    size_t *ret_len, struct attest_err *err)
{
        _cleanup_free_ uint8_t *out = NULL;
        _cleanup_free_ char *unescaped = NULL;
        const char *s;
        size_t n, got, room;
        int x;

        if (v->type != JRD_STRING)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not a string");
        n = v->s.len;
        if (n / 4 > max / 3 + 1)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path,
                                  "decodes to more than %zu bytes", max);
        if (n == 0) {
                *ret = NULL;
                *ret_len = 0;
                return 0;
        }
        s = v->s.p;
        if (v->s.esc) { /* rare: an encoder that writes "\/" */
                if (!(unescaped = malloc(n + 1)) || jrd_str_copy(&v->s, unescaped, n + 1) < 0)
                        return -ENOMEM;
                s = unescaped;
        }
        room = n / 4 * 3; /* 0 when n < 4: b64_decode refuses that length before writing */
        if (!(out = malloc(room > 0 ? room : 1)))
                return -ENOMEM;
        x = b64_decode(s, n, out, max < room ? max : room, &got);
        if (x == -E2BIG)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path,
                                  "decodes to more than %zu bytes", max);
        if (x < 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_B64, path, "not base64");
        *ret = TAKE_PTR(out);
        *ret_len = got;
        return 0;
}

/* A short identifier-like string ([A-Za-z0-9_.+~-], 1..cap-1 bytes) into a fixed buffer. */
static int word(const struct slot *v, const char *path, char *out, size_t cap,
                struct attest_err *err)
{
        char buf[EVIDENCE_WORD_MAX];
        const char *s = NULL;
        size_t n = 0;
        int x;

        if (cap > sizeof(buf))
                return -EINVAL;
        if ((x = str(v, path, cap - 1, buf, sizeof(buf), &s, &n, err)) < 0)
                return x;
        if (n == 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, path, "empty");
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '.' || c == '+' || c == '~'))
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, path,
                                          "byte %zu is not [A-Za-z0-9_.+~-]", i);
        }
        memcpy(out, s, n);
        out[n] = '\0';
        return 0;
}

static int check_quote(const struct walk *w, struct evidence *ev, struct attest_err *err)
{
        int x;

        if ((x = object(&w->quote, "$.quote", err)) < 0)
                return x;
        if ((x = field(&w->attest, "$.quote.attest", err)) < 0 ||
            (x = b64field(&w->attest, "$.quote.attest", QUOTE_ATTEST_MAX, &ev->attest,
                          &ev->attest_len, err)) < 0)
                return x;
        if (!ev->attest)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.quote.attest", "empty");
        if ((x = field(&w->sig, "$.quote.signature", err)) < 0 ||
            (x = b64field(&w->sig, "$.quote.signature", QUOTE_SIG_MAX, &ev->sig, &ev->sig_len,
                          err)) < 0)
                return x;
        if (!ev->sig)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.quote.signature",
                                  "empty");
        if (!w->pcrs.present)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, "$.quote.pcrs",
                                  "missing");
        if (!w->pcrs.is_obj)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, "$.quote.pcrs", "not an object");
        if (w->pcrs_e) {
                if (err)
                        *err = w->pcrs_err;
                return w->pcrs_e;
        }
        if (!w->pcrs_count)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.quote.pcrs",
                                  "no PCR listed");
        return 0;
}

static int check_ima(const struct walk *w, size_t max_ima, struct evidence *ev,
                     struct attest_err *err)
{
        char buf[17];
        const char *s = NULL;
        size_t n = 0;
        int x;

        if ((x = object(&w->ima, "$.ima", err)) < 0)
                return x;
        if ((x = field(&w->offset, "$.ima.offset", err)) < 0 ||
            (x = offset(&w->offset, "$.ima.offset", &ev->ima_offset, err)) < 0)
                return x;
        if ((x = field(&w->format, "$.ima.format", err)) < 0 ||
            (x = str(&w->format, "$.ima.format", 16, buf, sizeof(buf), &s, &n, err)) < 0)
                return x;
        if (n == 6 && memcmp(s, "binary", 6) == 0)
                ev->ima_format = IMA_FORMAT_BINARY;
        else if (n == 5 && memcmp(s, "ascii", 5) == 0)
                ev->ima_format = IMA_FORMAT_ASCII;
        else
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.ima.format",
                                  "not \"binary\" or \"ascii\"");
        if ((x = field(&w->entries, "$.ima.entries", err)) < 0 ||
            (x = b64field(&w->entries, "$.ima.entries", max_ima, &ev->ima, &ev->ima_len, err)) < 0)
                return x;
        return 0;
}

/* "boot_log": sent means non-NULL, also with no new bytes ("data":""). */
static int check_boot(const struct walk *w, struct evidence *ev, struct attest_err *err)
{
        int x;

        if ((x = object(&w->boot, "$.boot_log", err)) < 0)
                return x;
        if ((x = field(&w->boot_offset, "$.boot_log.offset", err)) < 0 ||
            (x = offset(&w->boot_offset, "$.boot_log.offset", &ev->boot_offset, err)) < 0)
                return x;
        if ((x = field(&w->boot_data, "$.boot_log.data", err)) < 0 ||
            (x = b64field(&w->boot_data, "$.boot_log.data", EVIDENCE_BOOT_LOG_MAX, &ev->boot_log,
                          &ev->boot_log_len, err)) < 0)
                return x;
        if (!ev->boot_log && !(ev->boot_log = malloc(1)))
                return -ENOMEM;
        return 0;
}

static int check_cfi(const struct walk *w, struct evidence_host *h, struct attest_err *err)
{
        int x;

        if ((x = object(&w->cfi, "$.host.cfi", err)) < 0)
                return x;
        if ((x = field(&w->cfi_source, "$.host.cfi.source", err)) < 0 ||
            (x = word(&w->cfi_source, "$.host.cfi.source", h->cfi_source, sizeof(h->cfi_source),
                      err)) < 0)
                return x;
        if ((x = field(&w->cfi_enabled, "$.host.cfi.enabled", err)) < 0 ||
            (x = boolean(&w->cfi_enabled, "$.host.cfi.enabled", &h->cfi_enabled, err)) < 0)
                return x;
        if ((x = field(&w->cfi_permissive, "$.host.cfi.permissive", err)) < 0 ||
            (x = boolean(&w->cfi_permissive, "$.host.cfi.permissive", &h->cfi_permissive, err)) < 0)
                return x;
        h->cfi_present = true;
        return 0;
}

static int check_tk(const struct walk *w, struct evidence_host *h, struct attest_err *err)
{
        int x;

        if ((x = object(&w->tk, "$.host.trusted_keys", err)) < 0)
                return x;
        if ((x = field(&w->tk_source, "$.host.trusted_keys.source", err)) < 0 ||
            (x = word(&w->tk_source, "$.host.trusted_keys.source", h->tk_source,
                      sizeof(h->tk_source), err)) < 0)
                return x;
        if ((x = field(&w->tk_origin, "$.host.trusted_keys.origin", err)) < 0 ||
            (x = word(&w->tk_origin, "$.host.trusted_keys.origin", h->tk_origin,
                      sizeof(h->tk_origin), err)) < 0)
                return x;
        h->tk_present = true;
        return 0;
}

/* A string of the identity syntax (evidence/evidence.h) into out (cap bytes with the NUL). */
static int ident(const struct slot *v, const char *path, bool (*valid)(const char *, size_t),
                 const char *what, char *out, size_t cap, struct attest_err *err)
{
        char buf[EVIDENCE_HOSTNAME_MAX + 1];
        const char *s = NULL;
        size_t n = 0;
        int x;

        if (cap > sizeof(buf))
                return -EINVAL;
        if ((x = str(v, path, cap - 1, buf, sizeof(buf), &s, &n, err)) < 0)
                return x;
        if (!valid(s, n))
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, path, "not %s", what);
        memcpy(out, s, n);
        out[n] = '\0';
        return 0;
}

static int check_labels(const struct walk *w, struct evidence_host *h, struct attest_err *err)
{
        const char *path = "$.host.labels";
        char p[JPATH_MAX];
        int x;

        if (!w->labels.is_obj)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not an object");
        if (w->n_labels > EVIDENCE_LABELS_MAX)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path, "%u labels > %d",
                                  w->n_labels, EVIDENCE_LABELS_MAX);
        for (unsigned i = 0; i < w->n_labels; i++) {
                const struct jrd_str *k = &w->label_key[i];
                char key[EVIDENCE_LABEL_KEY_MAX + 1];

                if (k->len > EVIDENCE_LABEL_KEY_MAX || jrd_str_copy(k, key, sizeof(key)) < 0 ||
                    !evidence_label_key_valid(key, k->len))
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, path,
                                          EVIDENCE_LABEL_KEY_WHY, i, EVIDENCE_LABEL_KEY_MAX);
                jpath_join(p, path, key);
                if ((x = ident(&w->label_val[i], p, evidence_label_value_valid,
                               EVIDENCE_LABEL_VALUE_WHAT, h->labels[i].value,
                               sizeof(h->labels[i].value), err)) < 0)
                        return x;
                memcpy(h->labels[i].key, key, k->len + 1);
        }
        h->n_labels = w->n_labels;
        h->labels_present = true;
        return 0;
}

static int check_host(const struct walk *w, struct evidence_host *h, struct attest_err *err)
{
        char buf[sizeof(h->kernel)];
        const char *s = NULL;
        size_t n = 0;
        int x;

        if ((x = object(&w->host, "$.host", err)) < 0)
                return x;
        if (w->kernel.present) {
                if ((x = str(&w->kernel, "$.host.kernel", sizeof(h->kernel) - 1, buf, sizeof(buf),
                             &s, &n, err)) < 0)
                        return x;
                if (n == 0)
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.kernel",
                                          "empty");
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
                                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE,
                                                  "$.host.kernel", "byte %zu is not printable", i);
                memcpy(h->kernel, s, n);
                h->kernel[n] = '\0';
        }
        if (w->cmdline.present) {
                const struct slot *v = &w->cmdline;

                if (v->type != JRD_STRING)
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, "$.host.cmdline",
                                          "not a string");
                if (v->s.len > EVIDENCE_CMDLINE_MAX)
                        return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, "$.host.cmdline",
                                          "%zu bytes > %d", v->s.len, EVIDENCE_CMDLINE_MAX);
                if (!(h->cmdline = malloc(v->s.len + 1)))
                        return -ENOMEM;
                if (jrd_str_copy(&v->s, h->cmdline, v->s.len + 1) < 0)
                        return -EINVAL;
                for (size_t i = 0; i < v->s.len; i++)
                        if ((unsigned char)h->cmdline[i] < 0x20 ||
                            (unsigned char)h->cmdline[i] > 0x7e)
                                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE,
                                                  "$.host.cmdline", "byte %zu is not printable", i);
        }
        if (w->boot_id.present) {
                if ((x = str(&w->boot_id, "$.host.boot_id", sizeof(h->boot_id) - 1, buf,
                             sizeof(buf), &s, &n, err)) < 0)
                        return x;
                if (n == 0)
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.boot_id",
                                          "empty");
                for (size_t i = 0; i < n; i++)
                        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
                              s[i] == '-'))
                                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE,
                                                  "$.host.boot_id", "byte %zu is not [0-9a-f-]", i);
                memcpy(h->boot_id, s, n);
                h->boot_id[n] = '\0';
        }
        if (w->cfi.present && (x = check_cfi(w, h, err)) < 0)
                return x;
        if (w->tk.present && (x = check_tk(w, h, err)) < 0)
                return x;
        if (w->hostname.present &&
            (x = ident(&w->hostname, "$.host.hostname", evidence_hostname_valid,
                       EVIDENCE_HOSTNAME_WHAT, h->hostname, sizeof(h->hostname), err)) < 0)
                return x;
        if (w->machine_id.present &&
            (x = ident(&w->machine_id, "$.host.machine_id", evidence_machine_id_valid,
                       EVIDENCE_MACHINE_ID_WHAT, h->machine_id, sizeof(h->machine_id), err)) < 0)
                return x;
        if (w->labels.present && (x = check_labels(w, h, err)) < 0)
                return x;
        return 0;
}

static int check(const struct walk *w, size_t max_ima, struct evidence *ev, struct attest_err *err)
{
        int x;

        if ((x = object(&w->top, "$", err)) < 0)
                return x;
        if ((x = field(&w->version, "$.version", err)) < 0)
                return x;
        if (w->version.type != JRD_INT)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, "$.version", "not an integer");
        if (w->version.i != EVIDENCE_VERSION)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_VERSION, "$.version",
                                  "version %" PRId64 " is not supported (1)", w->version.i);
        if ((x = field(&w->nonce, "$.nonce", err)) < 0 ||
            (x = hexfield(&w->nonce, "$.nonce", ev->nonce, sizeof(ev->nonce), &ev->nonce_len,
                          err)) < 0)
                return x;
        if (!w->quote.present)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, "$.quote", "missing");
        if ((x = check_quote(w, ev, err)) < 0)
                return x;
        if (!w->ima.present)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, "$.ima", "missing");
        if ((x = check_ima(w, max_ima, ev, err)) < 0)
                return x;
        if (w->boot.present && (x = check_boot(w, ev, err)) < 0)
                return x;
        if (w->host.present && (x = check_host(w, &ev->host, err)) < 0)
                return x;
        return 0;
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
        if ((x = check(&w, max_ima, ev, err)) < 0)
                return x;
        *ret = TAKE_PTR(ev);
        return 0;
}
