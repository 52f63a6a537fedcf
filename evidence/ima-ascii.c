/* SPDX-License-Identifier: MIT */
/*
 * IMA ascii log reader (ima_fs.c ima_ascii_measurements_show): one line per entry,
 * "PCR HASH TEMPLATE FIELD...", every field but the name shown in hex (d-ng as algo:hex). The
 * template data the hashes cover is rebuilt from the fields.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/ima-internal.h"
#include "util/buf.h"
#include "util/hex.h"
#include "util/tok.h"

int ima_reader_init_ascii(struct ima_reader *rd, const char *buf, size_t len,
                          const struct ima_log_opts *opts)
{
        *rd = (struct ima_reader){.r = RD_INIT(buf, len), .format = IMA_FORMAT_ASCII, .line = 1};
        ima_reader_opts(rd, opts);
        /* the hard maximum of the writer the template data is rebuilt through */
        rd->scratch = malloc(IMA_DATA_MAX);
        return rd->scratch ? 0 : -ENOMEM;
}

bool ima_ascii_looks(const uint8_t *buf, size_t len)
{
        size_t i = 0;

        /* "N[N] " then 40 hex digits and a space */
        while (i < len && i < 2 && buf[i] >= '0' && buf[i] <= '9')
                i++;
        if (i == 0 || i >= len || buf[i] != ' ')
                return false;
        i++;
        for (size_t k = 0; k < 40; k++, i++)
                if (i >= len ||
                    !((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'f')))
                        return false;
        return i < len && buf[i] == ' ';
}

static int fail_line(struct attest_err *err, int e, enum attest_code code, uint64_t line,
                     unsigned field, const char *what)
{
        return attest_fail(err, e, code, "line %" PRIu64 " field %u: %s", line, field, what);
}

/*
 * What a field is rebuilt for: the writer, the byte order, and where messages point (line and
 * field number). Each put_*() below writes one field of the template data whole or not at all
 * and fails with a message of its own. A failed field fails the line, and the writer (local to
 * ima_ascii_next()) goes with it: nothing half-written is ever handed out.
 */
struct rebuild {
        struct wb w;
        bool be;
        uint64_t line;
        unsigned fn;
        struct attest_err *err;
};

static int fail_field(struct rebuild *b, int e, enum attest_code code, const char *what)
{
        return fail_line(b->err, e, code, b->line, b->fn, what);
}

static int fail_data_cap(struct rebuild *b)
{
        return fail_field(b, -E2BIG, AE_IMA_DATA_TOO_LONG, "template data longer than 65536 bytes");
}

/*
 * The u32 v as the log's byte order lays it out in memory (be: big-endian), for one store: four
 * byte stores read back as one word stalled the load on every field (a store-forwarding failure).
 */
static uint32_t prefix_word(uint32_t v, bool be)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return be ? __builtin_bswap32(v) : v;
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        return be ? v : __builtin_bswap32(v);
#else
#error "unknown byte order"
#endif
}

/*
 * Reserve a u32 length-prefixed field of n bytes at the end of the data and write its prefix;
 * *ret points at the n bytes, for the caller to fill. -E2BIG past the data cap, nothing written.
 */
static int put_sized(struct rebuild *b, size_t n, uint8_t **ret)
{
        /* made before the store: stores through o may alias b */
        uint32_t v = prefix_word((uint32_t)n, b->be);
        uint8_t *o;

        if (n > IMA_DATA_MAX || wb_reserve(&b->w, 4 + n, &o) < 0)
                return -E2BIG;
        memcpy(o, &v, 4);
        if (ret)
                *ret = o + 4;
        return 0;
}

/* Decode hex into the n = hex.n / 2 bytes at o, through a writer bounded by exactly those. */
static int put_hex_at(uint8_t *o, struct span hex)
{
        struct wb sub = WB_INIT(o, hex.n / 2);

        return wb_put_hex(&sub, hex.p, hex.n) < 0 ? -EBADMSG : 0;
}

/* A field of hex (d outside template 'ima', sig, buf, modsig): *ret, *ret_len its bytes. */
static int put_hex_field(struct rebuild *b, struct span hex, const uint8_t **ret, uint32_t *ret_len)
{
        uint8_t *o;

        if (put_sized(b, hex.n / 2, &o) < 0)
                return fail_data_cap(b);
        if (put_hex_at(o, hex) < 0)
                return fail_field(b, -EBADMSG, AE_IMA_BAD_FIELD, "field is not hex");
        *ret = o;
        *ret_len = (uint32_t)(hex.n / 2);
        return 0;
}

/*
 * d-ng and d-modsig: "<algo>:\0" digest, from "algo:hex". The algorithm must be one the kernel
 * can name, with its digest size (the check the binary reader makes in ima_tmpl_decode()).
 */
static int put_digest_ng(struct rebuild *b, struct span v, struct ima_entry *e)
{
        const char *colon = memchr(v.p, ':', v.n < 33 ? v.n : 33);
        size_t alen = colon ? (size_t)(colon - v.p) : 0;
        struct span hex;
        uint8_t *o;

        if (alen == 0 || v.n - alen - 1 > 2 * BANK_DIGEST_MAX)
                return fail_field(b, -EBADMSG, AE_IMA_BAD_FIELD, "digest is not algo:hex");
        hex = (struct span){colon + 1, v.n - alen - 1};
        if (put_sized(b, alen + 2 + hex.n / 2, &o) < 0)
                return fail_data_cap(b);
        if (put_hex_at(o + alen + 2, hex) < 0)
                return fail_field(b, -EBADMSG, AE_IMA_BAD_FIELD, "digest is not algo:hex");
        if (!ima_digest_algo_ok(v.p, (uint32_t)alen, (uint32_t)(hex.n / 2)))
                return fail_field(b, -EBADMSG, AE_IMA_BAD_FIELD,
                                  "digest algorithm unknown or digest of the wrong size");
        /* "algo:" as it stands in the line, then the NUL */
        memcpy(o, v.p, alen + 1);
        o[alen + 1] = '\0';
        if (e) {
                e->algo = (const char *)o;
                e->algo_len = (uint32_t)alen;
                e->digest = o + alen + 2;
                e->digest_len = (uint32_t)(hex.n / 2);
        }
        return 0;
}

/* n-ng (and n outside template 'ima'): name NUL; in template 'ima' the name alone (legacy). */
static int put_name(struct rebuild *b, struct span name, bool legacy, struct ima_entry *e)
{
        uint8_t *o;

        /* the line holds no NUL (tok_line), so neither does the name */
        if (name.n > (legacy ? IMA_LEGACY_NAME_MAX : IMA_NAME_MAX))
                return fail_field(b, -E2BIG, AE_IMA_NAME_TOO_LONG, "name longer than the cap");
        if (put_sized(b, name.n + !legacy, &o) < 0)
                return fail_data_cap(b);
        if (name.n)
                memcpy(o, name.p, name.n);
        if (!legacy)
                o[name.n] = '\0';
        e->name = (const char *)o;
        e->name_len = (uint32_t)name.n;
        return 0;
}

/*
 * One field of the template data, rebuilt from its text v into b and decoded into e as it is
 * written: no second pass over the rebuilt data.
 */
static int put_one(struct rebuild *b, enum ima_field fld, struct span v, struct ima_entry *e)
{
        const uint8_t *p;
        uint32_t n;
        int x;

        switch (fld) {
        case IMA_FIELD_D:
                if (e->tmpl.legacy) {
                        /* template 'ima': the 20 bytes of the sha1 file digest, no prefix */
                        uint8_t *o;

                        if (v.n != 40)
                                return fail_field(b, -EBADMSG, AE_IMA_BAD_FIELD,
                                                  "d is not 40 hex digits");
                        if (wb_reserve(&b->w, 20, &o) < 0)
                                return fail_data_cap(b);
                        if (put_hex_at(o, v) < 0)
                                return fail_field(b, -EBADMSG, AE_IMA_BAD_FIELD,
                                                  "d is not 40 hex digits");
                        e->algo = "sha1";
                        e->algo_len = 4;
                        e->digest = o;
                        e->digest_len = 20;
                        return 0;
                }
                if ((x = put_hex_field(b, v, &p, &n)) < 0)
                        return x;
                if (n != 0 && n != 16 && n != 20)
                        return fail_field(b, -EBADMSG, AE_IMA_BAD_FIELD,
                                          "d is not an md5 or sha1 digest");
                if (n) {
                        e->algo = n == 20 ? "sha1" : "md5";
                        e->algo_len = n == 20 ? 4 : 3;
                        e->digest = p;
                        e->digest_len = n;
                }
                return 0;
        case IMA_FIELD_D_NG:
                return put_digest_ng(b, v, e);
        case IMA_FIELD_D_MODSIG:
                if (v.n == 0) /* no modsig: an empty field */
                        return put_sized(b, 0, NULL) < 0 ? fail_data_cap(b) : 0;
                {
                        struct ima_entry tmp = {0};

                        if ((x = put_digest_ng(b, v, &tmp)) < 0)
                                return x;
                        e->modsig_algo = tmp.algo;
                        e->modsig_algo_len = tmp.algo_len;
                        e->modsig_digest = tmp.digest;
                        e->modsig_digest_len = tmp.digest_len;
                        return 0;
                }
        case IMA_FIELD_N:
        case IMA_FIELD_N_NG:
                return put_name(b, v, e->tmpl.legacy, e);
        case IMA_FIELD_SIG:
                if ((x = put_hex_field(b, v, &p, &n)) < 0)
                        return x;
                e->sig = n ? p : NULL;
                e->sig_len = n;
                return 0;
        case IMA_FIELD_BUF:
                if ((x = put_hex_field(b, v, &p, &n)) < 0)
                        return x;
                e->buf = p;
                e->buf_len = n;
                return 0;
        case IMA_FIELD_MODSIG:
                if ((x = put_hex_field(b, v, &p, &n)) < 0)
                        return x;
                e->modsig = n ? p : NULL;
                e->modsig_len = n;
                return 0;
        default:
                return fail_field(b, -EOPNOTSUPP, AE_IMA_UNKNOWN_TEMPLATE,
                                  "field cannot be rebuilt");
        }
}

static const struct ima_entry empty_entry;

static int fail_count(struct attest_err *err, uint64_t line, unsigned want, unsigned got)
{
        char what[64];

        snprintf(what, sizeof(what), "template has %u fields, line has %u", want, got);
        return fail_line(err, -EBADMSG, AE_IMA_BAD_LINE, line, 4 + got, what);
}

/*
 * One line: "PCR HASH TEMPLATE FIELD..." with each field shown as " " + value (empty values keep
 * their space). Every field is hex or algo:hex but the name, which may hold spaces: the fields
 * before the name are cut from the left, those after it from the right, the name is what is left.
 * The template data is rebuilt through a writer whose hard maximum is IMA_DATA_MAX, and each
 * field is decoded into the entry as it is written (the checks ima_tmpl_decode() makes on binary
 * logs, without reading the rebuilt bytes again). The entry is filled in place: on failure *ret
 * holds no meaning, the reader has not moved.
 */
int ima_ascii_next(struct ima_reader *rd, struct ima_entry *ret, struct attest_err *err)
{
        struct tok text = TOK_INIT(rd->r.p, rd->r.left), ln;
        struct rebuild b = {.w = WB_INIT(rd->scratch, IMA_DATA_MAX),
                            .be = rd->o.big_endian,
                            .line = rd->line,
                            .err = err};
        struct span f[IMA_TMPL_FIELDS_MAX], v;
        uint64_t line = rd->line;
        struct ima_entry *e = ret;
        unsigned nf, name_field, got = 0, dfield = 0;
        size_t n;
        int x;

        if (tok_empty(&text))
                return 0;
        if (rd->idx >= rd->o.max_entries)
                return attest_fail(err, -E2BIG, AE_IMA_TOO_MANY_ENTRIES,
                                   "line %" PRIu64 ": more than %" PRIu64 " entries", line,
                                   rd->o.max_entries);
        x = tok_line(&text, IMA_ASCII_LINE_MAX, 0, &ln);
        if (x == -E2BIG)
                return fail_line(err, -E2BIG, AE_IMA_LINE_TOO_LONG, line, 1,
                                 "line longer than the cap");
        if (x == -EBADMSG)
                return fail_line(err, -EBADMSG, AE_IMA_BAD_LINE, line, 1, "NUL byte in line");
        if (x <= 0)
                return fail_line(err, -EBADMSG, AE_IMA_BAD_LINE, line, 1, "no line");
        if (tok_empty(&text) && rd->r.p[rd->r.left - 1] != '\n')
                return fail_line(err, -EBADMSG, AE_IMA_TRUNCATED, line, 1,
                                 "last line has no newline");

        /* a copy of a zero entry is a few vector moves; = {0} became a slow-starting rep stos */
        *e = empty_entry;
        /* field 1: PCR */
        x = tok_u32(&ln, PCR_COUNT - 1, &e->pcr);
        if (x == -ERANGE)
                return fail_line(err, -EBADMSG, AE_IMA_BAD_PCR, line, 1, "PCR index > 23");
        if (x < 0 || !tok_char(&ln, ' '))
                return fail_line(err, -EBADMSG, AE_IMA_BAD_PCR, line, 1, "PCR is not a number");
        /* field 2: sha1 template hash, 40 hex digits and a space */
        if (tok_left(&ln) <= 40 || ln.p[40] != ' ' ||
            hex_decode(ln.p, 40, e->sha1, sizeof(e->sha1), &n) < 0 ||
            tok_field(&ln, ' ', 40, &v) < 0)
                return fail_line(err, -EBADMSG, AE_IMA_BAD_HASH, line, 2,
                                 "template hash is not 40 hex digits");
        e->violation = ima_all_zero(e->sha1, 20);
        /* field 3: template name */
        if (tok_field(&ln, ' ', IMA_TMPL_NAME_MAX, &v) < 0 || v.n == 0)
                return fail_line(err, -EBADMSG, AE_IMA_BAD_TEMPLATE, line, 3,
                                 "template name empty or too long");
        e->tmpl_name = v.p;
        e->tmpl_name_len = (uint32_t)v.n;
        if (ima_reader_tmpl(rd, (const uint8_t *)v.p, e->tmpl_name_len, &e->tmpl) < 0 ||
            !e->tmpl.known)
                return fail_line(err, -EOPNOTSUPP, AE_IMA_UNKNOWN_TEMPLATE, line, 3,
                                 "template has fields the ascii log cannot be rebuilt from");

        /* cut the fields */
        nf = e->tmpl.nfields;
        name_field = nf;
        for (unsigned i = 0; i < nf; i++)
                if (e->tmpl.field[i] == IMA_FIELD_N || e->tmpl.field[i] == IMA_FIELD_N_NG)
                        name_field = i;
        for (unsigned i = 0; i < name_field; i++, got++)
                if (tok_field(&ln, ' ', IMA_ASCII_LINE_MAX, &f[i]) < 0)
                        return fail_count(err, line, nf, got);
        if (name_field < nf) {
                size_t name_max = e->tmpl.legacy ? IMA_LEGACY_NAME_MAX : IMA_NAME_MAX;

                for (unsigned i = nf - 1; i > name_field; i--, got++)
                        if (tok_rfield(&ln, ' ', IMA_ASCII_LINE_MAX, &f[i]) < 0)
                                return fail_count(err, line, nf, got);
                x = tok_rest(&ln, name_max, &f[name_field]);
                if (x == -E2BIG)
                        return fail_line(err, -E2BIG, AE_IMA_NAME_TOO_LONG, line, 4 + name_field,
                                         "name longer than the cap");
                if (x < 0)
                        return fail_count(err, line, nf, got);
        } else if (!tok_empty(&ln) || ln.more)
                return fail_line(err, -EBADMSG, AE_IMA_BAD_LINE, line, 4 + nf, "too many fields");

        /* rebuild the template data, decoding each field as it is written */
        for (unsigned i = 0; i < nf; i++) {
                const uint8_t *digest = e->digest;

                b.fn = 4 + i;
                if ((x = put_one(&b, e->tmpl.field[i], f[i], e)) < 0)
                        return x;
                if (e->digest != digest)
                        dfield = b.fn;
        }
        e->data = wb_data(&b.w);
        e->data_len = (uint32_t)wb_len(&b.w);
        /* violations carry a zero file digest (the kernel's ima_eventdigest_init) */
        if (e->violation && e->digest && !ima_all_zero(e->digest, e->digest_len))
                return fail_line(err, -EBADMSG, AE_IMA_BAD_VIOLATION, line, dfield,
                                 "violation entry with a non-zero file digest");
        rd->r.p += tok_offset(&text);
        rd->r.left -= tok_offset(&text);
        rd->line++;
        rd->idx++;
        return 1;
}
