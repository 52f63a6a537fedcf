/* SPDX-License-Identifier: MIT */
/*
 * IMA templates and their fields, shared by the binary and ascii readers. Layout facts from
 * security/integrity/ima/ (ima_template.c, ima_template_lib.c):
 *
 *   template 'ima' has no data_len: digest[20] | u32 strlen(name) | name.
 *   Every other template's data is a run of fields, each u32 len | bytes;
 *   d-ng = "<algo>:\0" digest; n-ng = name NUL.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "evidence/hashalg.h"
#include "evidence/ima-internal.h"
#include "util/tok.h"

static const char *const field_names[IMA_FIELD_COUNT] = {
        [IMA_FIELD_D] = "d",
        [IMA_FIELD_N] = "n",
        [IMA_FIELD_D_NG] = "d-ng",
        [IMA_FIELD_N_NG] = "n-ng",
        [IMA_FIELD_SIG] = "sig",
        [IMA_FIELD_BUF] = "buf",
        [IMA_FIELD_D_MODSIG] = "d-modsig",
        [IMA_FIELD_MODSIG] = "modsig",
};

static const struct {
        const char *name;
        const char *fmt;
} named_templates[] = {
        {"ima", "d|n"},
        {"ima-ng", "d-ng|n-ng"},
        {"ima-sig", "d-ng|n-ng|sig"},
        {"ima-buf", "d-ng|n-ng|buf"},
        {"ima-modsig", "d-ng|n-ng|sig|d-modsig|modsig"},
};

const char *ima_field_name(enum ima_field f)
{
        return (unsigned)f < IMA_FIELD_COUNT ? field_names[f] : "?";
}

static int field_lookup(const char *s, size_t n)
{
        for (int f = 0; f < IMA_FIELD_COUNT; f++)
                if (strlen(field_names[f]) == n && memcmp(field_names[f], s, n) == 0)
                        return f;
        return -EOPNOTSUPP;
}

/* A field list "d-ng|n-ng|sig": at most IMA_TMPL_FIELDS_MAX known fields joined by '|'. */
static int fmt_parse(const char *fmt, size_t len, struct ima_tmpl *ret)
{
        struct ima_tmpl t = {.known = true};
        struct tok c = TOK_INIT(fmt, len);
        struct span f;

        if (len == 0)
                return -EOPNOTSUPP;
        while (tok_field(&c, '|', IMA_TMPL_NAME_MAX, &f) == 0) {
                int id = field_lookup(f.p, f.n);

                if (id < 0 || t.nfields == IMA_TMPL_FIELDS_MAX)
                        return -EOPNOTSUPP;
                t.field[t.nfields++] = (uint8_t)id;
        }
        if (!tok_empty(&c))
                return -EOPNOTSUPP; /* a field longer than any name */
        *ret = t;
        return 0;
}

int ima_tmpl_lookup(const char *name, size_t len, struct ima_tmpl *ret)
{
        for (size_t i = 0; i < ARRAY_SIZE(named_templates); i++) {
                if (strlen(named_templates[i].name) != len ||
                    memcmp(named_templates[i].name, name, len) != 0)
                        continue;
                int e = fmt_parse(named_templates[i].fmt, strlen(named_templates[i].fmt), ret);
                if (e < 0)
                        return e;
                ret->legacy = i == 0;
                return 0;
        }
        /* a custom ima_template_fmt= is shown under its field list */
        return fmt_parse(name, len, ret);
}

/* ---- field decoding ---- */

bool ima_all_zero(const uint8_t *p, size_t n)
{
        uint64_t acc = 0, v;
        size_t i = 0;

        if (n < 8) {
                for (; i < n; i++)
                        acc |= p[i];
                return acc == 0;
        }
        for (; n - i > 8; i += 8) {
                memcpy(&v, p + i, 8);
                acc |= v;
        }
        /* the last 8 bytes, overlapping the loop's when n is no multiple of 8: no byte loop */
        memcpy(&v, p + n - 8, 8);
        return (acc | v) == 0;
}

int ima_fail_entry(struct attest_err *err, int e, enum attest_code code, uint64_t idx, uint64_t off,
                   const char *what)
{
        return attest_fail(err, e, code, "entry %" PRIu64 " at byte %" PRIu64 ": %s", idx, off,
                           what);
}

/* d-ng and d-modsig: "<algo>:\0" digest. An empty d-modsig (no modsig) is allowed by the caller. */
static int decode_digest_ng(const uint8_t *p, uint32_t n, struct ima_entry *e)
{
        const uint8_t *nul = memchr(p, '\0', n);
        uint32_t alen, dlen;

        if (!nul || nul == p || nul[-1] != ':')
                return -EBADMSG;
        alen = (uint32_t)(nul - p) - 1; /* without ':' */
        if (alen == 0 || alen > 32)
                return -EBADMSG;
        dlen = n - alen - 2;
        if (!ima_digest_algo_ok((const char *)p, alen, dlen))
                return -EBADMSG;
        e->algo = (const char *)p;
        e->algo_len = alen;
        e->digest = nul + 1;
        e->digest_len = dlen;
        return 0;
}

/* n-ng (and n outside template 'ima'): name NUL, no NUL inside. */
static int decode_name_ng(const uint8_t *p, uint32_t n, struct ima_entry *e)
{
        if (n == 0 || p[n - 1] != '\0')
                return -EBADMSG;
        if (n - 1 > IMA_NAME_MAX)
                return -E2BIG;
        if (memchr(p, '\0', n - 1))
                return -EBADMSG;
        e->name = (const char *)p;
        e->name_len = n - 1;
        return 0;
}

int ima_tmpl_check_violation(const struct ima_entry *e, uint64_t idx, uint64_t base,
                             struct attest_err *err)
{
        if (e->violation && e->digest && !ima_all_zero(e->digest, e->digest_len))
                return ima_fail_entry(err, -EBADMSG, AE_IMA_BAD_VIOLATION, idx, base,
                                      "violation entry with a non-zero file digest");
        return 0;
}

int ima_tmpl_decode_legacy(struct rd *r, bool big_endian, struct ima_entry *e, uint64_t idx,
                           uint64_t base, struct attest_err *err)
{
        struct rd t = *r;
        size_t start = rd_offset(&t);
        const uint8_t *d, *name;
        uint32_t nlen;
        int x;

        if (rd_bytes(&t, 20, &d) < 0)
                return ima_fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, base + start,
                                      "template 'ima' digest truncated");
        x = rd_sized(&t, big_endian, IMA_LEGACY_NAME_MAX, &name, &nlen);
        if (x == -E2BIG)
                return ima_fail_entry(err, -E2BIG, AE_IMA_NAME_TOO_LONG, idx, base + rd_offset(&t),
                                      "template 'ima' name > 255 bytes");
        if (x < 0)
                return ima_fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, base + rd_offset(&t),
                                      "template 'ima' name truncated");
        if (memchr(name, '\0', nlen))
                return ima_fail_entry(err, -EBADMSG, AE_IMA_BAD_FIELD, idx, base + rd_offset(&t),
                                      "NUL inside the name");
        e->data = d;
        e->data_len = (uint32_t)(rd_offset(&t) - start);
        e->algo = "sha1";
        e->algo_len = 4;
        e->digest = d;
        e->digest_len = 20;
        e->name = (const char *)name;
        e->name_len = nlen;
        *r = t;
        return 0;
}

int ima_tmpl_decode(struct ima_entry *e, bool big_endian, uint64_t idx, uint64_t base,
                    struct attest_err *err)
{
        struct rd r = RD_INIT(e->data, e->data_len);

        if (e->tmpl.legacy) {
                int x = ima_tmpl_decode_legacy(&r, big_endian, e, idx, base, err);

                if (x < 0)
                        return x;
                if (rd_left(&r))
                        return ima_fail_entry(err, -EBADMSG, AE_IMA_TRAILING_DATA, idx,
                                              base + rd_offset(&r),
                                              "bytes after the template 'ima' name");
                return ima_tmpl_check_violation(e, idx, base, err);
        }
        if (!e->tmpl.known)
                return 0;
        for (unsigned i = 0; i < e->tmpl.nfields; i++) {
                enum ima_field f = e->tmpl.field[i];
                uint64_t off = base + rd_offset(&r);
                const uint8_t *p;
                uint32_t n;
                int x;

                x = rd_sized(&r, big_endian, IMA_DATA_MAX, &p, &n);
                if (x < 0) {
                        char what[64];

                        snprintf(what, sizeof(what), "field %u (%s) truncated", i,
                                 ima_field_name(f));
                        return ima_fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, off, what);
                }
                switch (f) {
                case IMA_FIELD_D:
                        x = (n == 16 || n == 20 || n == 0) ? 0 : -EBADMSG;
                        if (x == 0 && n) {
                                e->algo = n == 20 ? "sha1" : "md5";
                                e->algo_len = n == 20 ? 4 : 3;
                                e->digest = p;
                                e->digest_len = n;
                        }
                        break;
                case IMA_FIELD_D_NG:
                        x = decode_digest_ng(p, n, e);
                        break;
                case IMA_FIELD_D_MODSIG:
                        if (n) {
                                struct ima_entry tmp = {0};

                                x = decode_digest_ng(p, n, &tmp);
                                e->modsig_algo = tmp.algo;
                                e->modsig_algo_len = tmp.algo_len;
                                e->modsig_digest = tmp.digest;
                                e->modsig_digest_len = tmp.digest_len;
                        }
                        break;
                case IMA_FIELD_N:
                case IMA_FIELD_N_NG:
                        x = decode_name_ng(p, n, e);
                        break;
                case IMA_FIELD_SIG:
                        e->sig = n ? p : NULL;
                        e->sig_len = n;
                        break;
                case IMA_FIELD_BUF:
                        e->buf = p;
                        e->buf_len = n;
                        break;
                case IMA_FIELD_MODSIG:
                        e->modsig = n ? p : NULL;
                        e->modsig_len = n;
                        break;
                default:
                        break;
                }
                if (x < 0) {
                        char what[64];

                        snprintf(what, sizeof(what), "field %u (%s) malformed%s", i,
                                 ima_field_name(f), x == -E2BIG ? ": name > 4096 bytes" : "");
                        return ima_fail_entry(err, x,
                                              x == -E2BIG ? AE_IMA_NAME_TOO_LONG : AE_IMA_BAD_FIELD,
                                              idx, off, what);
                }
        }
        if (rd_left(&r))
                return ima_fail_entry(err, -EBADMSG, AE_IMA_TRAILING_DATA, idx,
                                      base + rd_offset(&r), "bytes after the last template field");
        return ima_tmpl_check_violation(e, idx, base, err);
}
