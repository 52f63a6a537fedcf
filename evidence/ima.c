/* SPDX-License-Identifier: MIT */
/*
 * IMA log readers, template hashes and PCR replay. Layout facts from security/integrity/ima/
 * (ima_fs.c ima_measurements_show, ima_template_lib.c, ima_crypto.c ima_calc_field_array_hash):
 *
 *   binary entry: u32 pcr | sha1 template hash[20] | u32 tname_len | tname | u32 data_len | data
 *   template 'ima' has no data_len: digest[20] | u32 strlen(name) | name, and its hash covers
 *   digest || name padded with NULs to 256 bytes; every other template's hash covers data as is.
 *   A field in data is u32 len | bytes; d-ng = "<algo>:\0" digest; n-ng = name NUL.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "util/hex.h"
#include "evidence/ima.h"
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

/* Digest sizes of the algorithms the kernel's hash_algo_name[] can name in d-ng. */
static const struct {
        const char *name;
        uint32_t size;
} digest_algos[] = {
        {"md4", 16},      {"md5", 16},      {"sha1", 20},        {"rmd160", 20},
        {"sha256", 32},   {"sha384", 48},   {"sha512", 64},      {"sha224", 28},
        {"rmd128", 16},   {"rmd256", 32},   {"rmd320", 40},      {"wp256", 32},
        {"wp384", 48},    {"wp512", 64},    {"tgr128", 16},      {"tgr160", 20},
        {"tgr192", 24},   {"sm3", 32},      {"streebog256", 32}, {"streebog512", 64},
        {"sha3-256", 32}, {"sha3-384", 48}, {"sha3-512", 64},
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

/* ---- field decoding (shared by both readers) ---- */

static bool all_zero(const uint8_t *p, size_t n)
{
        uint8_t acc = 0;

        for (size_t i = 0; i < n; i++)
                acc |= p[i];
        return acc == 0;
}

static int fail_entry(struct attest_err *err, int e, enum attest_code code, uint64_t idx,
                      size_t off, const char *what)
{
        return attest_fail(err, e, code, "entry %" PRIu64 " at byte %zu: %s", idx, off, what);
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
        /*
         * only the kernel's hash_algo_name[] names, each with its digest size. Names are unique,
         * so a size mismatch may be tested first: it skips the strlen() and memcmp() of most rows
         * (that loop was a third of the binary reader's instructions).
         */
        for (size_t i = 0; i < ARRAY_SIZE(digest_algos); i++) {
                if (digest_algos[i].size != dlen || strlen(digest_algos[i].name) != alen ||
                    memcmp(digest_algos[i].name, p, alen) != 0)
                        continue;
                e->algo = (const char *)p;
                e->algo_len = alen;
                e->digest = nul + 1;
                e->digest_len = dlen;
                return 0;
        }
        return -EBADMSG;
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

/* The kernel records violations with a zero file digest (ima_eventdigest_init). */
static int check_violation(const struct ima_entry *e, uint64_t idx, size_t base,
                           struct attest_err *err)
{
        if (e->violation && e->digest && !all_zero(e->digest, e->digest_len))
                return fail_entry(err, -EBADMSG, AE_IMA_BAD_VIOLATION, idx, base,
                                  "violation entry with a non-zero file digest");
        return 0;
}

/*
 * Decode e->data by e->tmpl into the field views. idx and base (byte offset of data in the log,
 * or 0 for ascii) only feed messages.
 */
static int decode_fields(struct ima_entry *e, bool big_endian, uint64_t idx, size_t base,
                         struct attest_err *err)
{
        struct rd r = RD_INIT(e->data, e->data_len);

        if (e->tmpl.legacy) {
                const uint8_t *d, *name;
                uint32_t nlen;
                int x;

                if (rd_bytes(&r, 20, &d) < 0)
                        return fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, base,
                                          "template 'ima' digest truncated");
                x = rd_sized(&r, big_endian, IMA_LEGACY_NAME_MAX, &name, &nlen);
                if (x == -E2BIG)
                        return fail_entry(err, -E2BIG, AE_IMA_NAME_TOO_LONG, idx,
                                          base + rd_offset(&r), "template 'ima' name > 255 bytes");
                if (x < 0)
                        return fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx,
                                          base + rd_offset(&r), "template 'ima' name truncated");
                if (memchr(name, '\0', nlen))
                        return fail_entry(err, -EBADMSG, AE_IMA_BAD_FIELD, idx,
                                          base + rd_offset(&r), "NUL inside the name");
                e->algo = "sha1";
                e->algo_len = 4;
                e->digest = d;
                e->digest_len = 20;
                e->name = (const char *)name;
                e->name_len = nlen;
                return check_violation(e, idx, base, err);
        }
        if (!e->tmpl.known)
                return 0;
        for (unsigned i = 0; i < e->tmpl.nfields; i++) {
                enum ima_field f = e->tmpl.field[i];
                size_t off = base + rd_offset(&r);
                const uint8_t *p;
                uint32_t n;
                int x;

                x = rd_sized(&r, big_endian, IMA_DATA_MAX, &p, &n);
                if (x < 0) {
                        char what[64];

                        snprintf(what, sizeof(what), "field %u (%s) truncated", i,
                                 ima_field_name(f));
                        return fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, off, what);
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
                default:
                        break;
                }
                if (x < 0) {
                        char what[64];

                        snprintf(what, sizeof(what), "field %u (%s) malformed%s", i,
                                 ima_field_name(f), x == -E2BIG ? ": name > 4096 bytes" : "");
                        return fail_entry(err, x,
                                          x == -E2BIG ? AE_IMA_NAME_TOO_LONG : AE_IMA_BAD_FIELD,
                                          idx, off, what);
                }
        }
        if (rd_left(&r))
                return fail_entry(err, -EBADMSG, AE_IMA_TRAILING_DATA, idx, base + rd_offset(&r),
                                  "bytes after the last template field");
        return check_violation(e, idx, base, err);
}

static void opts_set(struct ima_reader *rd, const struct ima_log_opts *opts)
{
        if (opts)
                rd->o = *opts;
        if (!rd->o.max_entries)
                rd->o.max_entries = IMA_ENTRIES_DEFAULT;
}

/* Template by name, through the one-entry cache. */
static int reader_tmpl(struct ima_reader *rd, const uint8_t *name, uint32_t len,
                       struct ima_tmpl *ret)
{
        int e;

        if (rd->tname_len == len && len && memcmp(rd->tname, name, len) == 0) {
                *ret = rd->tmpl;
                return 0;
        }
        e = ima_tmpl_lookup((const char *)name, len, ret);
        if (e == -EOPNOTSUPP) {
                *ret = (struct ima_tmpl){.known = false};
                e = 0;
        }
        if (e < 0)
                return e;
        memcpy(rd->tname, name, len);
        rd->tname_len = len;
        rd->tmpl = *ret;
        return 0;
}

/* ---- binary reader ---- */

void ima_reader_init_binary(struct ima_reader *rd, const uint8_t *buf, size_t len,
                            const struct ima_log_opts *opts)
{
        *rd = (struct ima_reader){.r = RD_INIT(buf, len), .format = IMA_FORMAT_BINARY};
        opts_set(rd, opts);
}

static int next_binary(struct ima_reader *rd, struct ima_entry *ret, struct attest_err *err)
{
        struct rd r = rd->r;
        struct ima_entry e = {0};
        const uint8_t *sha1, *tname;
        bool be = rd->o.big_endian;
        uint64_t idx = rd->idx;
        size_t start = rd_offset(&r);
        int x;

        if (rd_left(&r) == 0)
                return 0;
        if (idx >= rd->o.max_entries)
                return attest_fail(err, -E2BIG, AE_IMA_TOO_MANY_ENTRIES,
                                   "entry %" PRIu64 " at byte %zu: more than %" PRIu64 " entries",
                                   idx, start, rd->o.max_entries);
        if (rd_u32(&r, be, &e.pcr) < 0 || rd_bytes(&r, 20, &sha1) < 0)
                return fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, start,
                                  "entry header truncated");
        if (e.pcr >= PCR_COUNT) {
                char what[48];

                snprintf(what, sizeof(what), "PCR index %" PRIu32 " > 23", e.pcr);
                return fail_entry(err, -EBADMSG, AE_IMA_BAD_PCR, idx, start, what);
        }
        memcpy(e.sha1, sha1, 20);
        e.violation = all_zero(e.sha1, 20);
        x = rd_sized(&r, be, IMA_TMPL_NAME_MAX, &tname, &e.tmpl_name_len);
        if (x == -E2BIG)
                return fail_entry(err, -E2BIG, AE_IMA_BAD_TEMPLATE, idx, rd_offset(&r),
                                  "template name longer than 255 bytes");
        if (x < 0)
                return fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, rd_offset(&r),
                                  "template name truncated");
        if (e.tmpl_name_len == 0)
                return fail_entry(err, -EBADMSG, AE_IMA_BAD_TEMPLATE, idx, rd_offset(&r),
                                  "empty template name");
        e.tmpl_name = (const char *)tname;
        if ((x = reader_tmpl(rd, tname, e.tmpl_name_len, &e.tmpl)) < 0)
                return fail_entry(err, x, AE_IMA_BAD_TEMPLATE, idx, rd_offset(&r),
                                  "template lookup failed");
        /*
         * The template hash covers the field data, not the template name: accepting unknown
         * names would let a relabelled entry replay fine while its fields go unread.
         */
        if (!e.tmpl.known && !rd->o.allow_unknown_templates)
                return fail_entry(err, -EOPNOTSUPP, AE_IMA_UNKNOWN_TEMPLATE, idx, rd_offset(&r),
                                  "unknown template (fields other than d, n, d-ng, n-ng, sig, "
                                  "buf, d-modsig, modsig)");
        size_t data_off = rd_offset(&r);
        if (e.tmpl.legacy) {
                /* digest[20] | u32 len | name: measure the span, decode_fields checks it */
                struct rd peek = r;
                const uint8_t *d, *name;
                uint32_t nlen;

                if (rd_bytes(&peek, 20, &d) < 0)
                        return fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, data_off,
                                          "template 'ima' digest truncated");
                x = rd_sized(&peek, be, IMA_LEGACY_NAME_MAX, &name, &nlen);
                if (x == -E2BIG)
                        return fail_entry(err, -E2BIG, AE_IMA_NAME_TOO_LONG, idx, data_off + 20,
                                          "template 'ima' name > 255 bytes");
                if (x < 0)
                        return fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, data_off + 20,
                                          "template 'ima' name truncated");
                e.data_len = (uint32_t)(rd_offset(&peek) - data_off);
                if (rd_bytes(&r, e.data_len, &e.data) < 0)
                        return -EBADMSG; /* cannot happen: peek read it */
        } else {
                x = rd_sized(&r, be, IMA_DATA_MAX, &e.data, &e.data_len);
                if (x == -E2BIG)
                        return fail_entry(err, -E2BIG, AE_IMA_DATA_TOO_LONG, idx, data_off,
                                          "template data longer than 65536 bytes");
                if (x < 0)
                        return fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, data_off,
                                          "template data truncated");
                data_off += 4;
        }
        if ((x = decode_fields(&e, be, idx, data_off, err)) < 0)
                return x;
        rd->r = r;
        rd->idx++;
        *ret = e;
        return 1;
}

/* ---- ascii reader ---- */

int ima_reader_init_ascii(struct ima_reader *rd, const char *buf, size_t len,
                          const struct ima_log_opts *opts)
{
        *rd = (struct ima_reader){.r = RD_INIT(buf, len), .format = IMA_FORMAT_ASCII, .line = 1};
        opts_set(rd, opts);
        /* the hard maximum of the writer the template data is rebuilt through */
        rd->scratch = malloc(IMA_DATA_MAX);
        return rd->scratch ? 0 : -ENOMEM;
}

static bool looks_ascii(const uint8_t *buf, size_t len)
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

int ima_reader_init_auto(struct ima_reader *rd, const uint8_t *buf, size_t len,
                         const struct ima_log_opts *opts)
{
        if (looks_ascii(buf, len))
                return ima_reader_init_ascii(rd, (const char *)buf, len, opts);
        ima_reader_init_binary(rd, buf, len, opts);
        return 0;
}

void ima_reader_done(struct ima_reader *rd)
{
        free(rd->scratch);
        rd->scratch = NULL;
}

static int fail_line(struct attest_err *err, int e, enum attest_code code, uint64_t line,
                     unsigned field, const char *what)
{
        return attest_fail(err, e, code, "line %" PRIu64 " field %u: %s", line, field, what);
}

/* A writer failure while rebuilding field fn: over the data cap, or malformed hex. */
static int fail_put(struct attest_err *err, int x, uint64_t line, unsigned fn, const char *what)
{
        if (x == -E2BIG)
                return fail_line(err, -E2BIG, AE_IMA_DATA_TOO_LONG, line, fn,
                                 "template data longer than 65536 bytes");
        return fail_line(err, -EBADMSG, AE_IMA_BAD_FIELD, line, fn, what);
}

/* A u32 length-prefixed hex field (d outside 'ima', sig, buf, modsig). */
static int put_hex_field(struct wb *w, bool be, struct span v)
{
        size_t mark;
        int x;

        if ((x = wb_sized_begin(w, be, &mark)) < 0)
                return x;
        if ((x = wb_put_hex(w, v.p, v.n)) < 0 || (x = wb_sized_end(w, be, mark, IMA_DATA_MAX)) < 0)
                return wb_rollback(w, mark) < 0 ? -EINVAL : x;
        return 0;
}

/* d-ng and d-modsig: "<algo>:\0" digest, from "algo:hex". -EBADMSG malformed, -E2BIG over cap. */
static int put_digest_ng(struct wb *w, bool be, struct span v)
{
        struct tok t = TOK_INIT(v.p, v.n);
        struct span algo, hex;
        size_t mark;
        int x;

        if (tok_field(&t, ':', 32, &algo) < 0 || !t.more || algo.n == 0)
                return -EBADMSG;
        if (tok_rest(&t, 2 * BANK_DIGEST_MAX, &hex) < 0)
                return -EBADMSG;
        if ((x = wb_sized_begin(w, be, &mark)) < 0)
                return x;
        if ((x = wb_put(w, algo.p, algo.n)) < 0 || (x = wb_put(w, ":", 2)) < 0 ||
            (x = wb_put_hex(w, hex.p, hex.n)) < 0 ||
            (x = wb_sized_end(w, be, mark, IMA_DATA_MAX)) < 0)
                return wb_rollback(w, mark) < 0 ? -EINVAL : x;
        return 0;
}

/* n-ng (name NUL) or, in template 'ima', n (the name without its NUL). */
static int put_name(struct wb *w, bool be, bool legacy, struct span v)
{
        size_t mark;
        int x;

        if ((x = wb_sized_begin(w, be, &mark)) < 0)
                return x;
        if ((x = wb_put(w, v.p, v.n)) < 0 || (!legacy && (x = wb_put_u8(w, 0)) < 0) ||
            (x = wb_sized_end(w, be, mark, IMA_DATA_MAX)) < 0)
                return wb_rollback(w, mark) < 0 ? -EINVAL : x;
        return 0;
}

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
 * The template data is rebuilt through a writer whose hard maximum is IMA_DATA_MAX.
 */
static int next_ascii(struct ima_reader *rd, struct ima_entry *ret, struct attest_err *err)
{
        struct tok text = TOK_INIT(rd->r.p, rd->r.left), ln;
        struct wb w = WB_INIT(rd->scratch, IMA_DATA_MAX);
        struct span f[IMA_TMPL_FIELDS_MAX], v;
        uint64_t line = rd->line, idx = rd->idx;
        struct ima_entry e = {0};
        bool be = rd->o.big_endian;
        unsigned nf, name_field, got = 0;
        size_t n;
        int x;

        if (tok_empty(&text))
                return 0;
        if (idx >= rd->o.max_entries)
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

        /* field 1: PCR */
        x = tok_u32(&ln, PCR_COUNT - 1, &e.pcr);
        if (x == -ERANGE)
                return fail_line(err, -EBADMSG, AE_IMA_BAD_PCR, line, 1, "PCR index > 23");
        if (x < 0 || !tok_char(&ln, ' '))
                return fail_line(err, -EBADMSG, AE_IMA_BAD_PCR, line, 1, "PCR is not a number");
        /* field 2: sha1 template hash */
        if (tok_field(&ln, ' ', 40, &v) < 0 || v.n != 40 || !ln.more ||
            hex_decode(v.p, v.n, e.sha1, sizeof(e.sha1), &n) < 0)
                return fail_line(err, -EBADMSG, AE_IMA_BAD_HASH, line, 2,
                                 "template hash is not 40 hex digits");
        e.violation = all_zero(e.sha1, 20);
        /* field 3: template name */
        if (tok_field(&ln, ' ', IMA_TMPL_NAME_MAX, &v) < 0 || v.n == 0)
                return fail_line(err, -EBADMSG, AE_IMA_BAD_TEMPLATE, line, 3,
                                 "template name empty or too long");
        e.tmpl_name = v.p;
        e.tmpl_name_len = (uint32_t)v.n;
        if (reader_tmpl(rd, (const uint8_t *)v.p, e.tmpl_name_len, &e.tmpl) < 0 || !e.tmpl.known)
                return fail_line(err, -EOPNOTSUPP, AE_IMA_UNKNOWN_TEMPLATE, line, 3,
                                 "template has fields the ascii log cannot be rebuilt from");

        /* cut the fields */
        nf = e.tmpl.nfields;
        name_field = nf;
        for (unsigned i = 0; i < nf; i++)
                if (e.tmpl.field[i] == IMA_FIELD_N || e.tmpl.field[i] == IMA_FIELD_N_NG)
                        name_field = i;
        for (unsigned i = 0; i < name_field; i++, got++)
                if (tok_field(&ln, ' ', IMA_ASCII_LINE_MAX, &f[i]) < 0)
                        return fail_count(err, line, nf, got);
        if (name_field < nf) {
                size_t name_max = e.tmpl.legacy ? IMA_LEGACY_NAME_MAX : IMA_NAME_MAX;

                for (unsigned i = nf - 1; i > name_field; i--, got++)
                        if (tok_rfield(&ln, ' ', IMA_ASCII_LINE_MAX, &f[i]) < 0)
                                return fail_count(err, line, nf, got);
                x = tok_rest(&ln, name_max, &f[name_field]);
                if (x == -E2BIG)
                        return fail_line(err, -E2BIG, AE_IMA_NAME_TOO_LONG, line, 4 + name_field,
                                         "name longer than the cap");
                if (x < 0)
                        return fail_count(err, line, nf, got);
        } else if (!tok_empty(&ln) || ln.more) {
                return fail_line(err, -EBADMSG, AE_IMA_BAD_LINE, line, 4 + nf, "too many fields");
        }

        /* rebuild the template data */
        for (unsigned i = 0; i < nf; i++) {
                enum ima_field fld = e.tmpl.field[i];
                unsigned fn = 4 + i;

                switch (fld) {
                case IMA_FIELD_D:
                        if (e.tmpl.legacy) {
                                if (f[i].n != 40 || (x = wb_put_hex(&w, f[i].p, 40)) < 0)
                                        return fail_line(err, -EBADMSG, AE_IMA_BAD_FIELD, line, fn,
                                                         "d is not 40 hex digits");
                                break;
                        }
                        _fallthrough_; /* a len-prefixed hex digest */
                case IMA_FIELD_SIG:
                case IMA_FIELD_BUF:
                case IMA_FIELD_MODSIG:
                        if ((x = put_hex_field(&w, be, f[i])) < 0)
                                return fail_put(err, x, line, fn, "field is not hex");
                        break;
                case IMA_FIELD_D_NG:
                case IMA_FIELD_D_MODSIG:
                        if (f[i].n == 0 && fld == IMA_FIELD_D_MODSIG)
                                x = put_hex_field(&w, be, f[i]); /* empty: no modsig */
                        else
                                x = put_digest_ng(&w, be, f[i]);
                        if (x < 0)
                                return fail_put(err, x, line, fn, "digest is not algo:hex");
                        break;
                case IMA_FIELD_N:
                case IMA_FIELD_N_NG:
                        if ((x = put_name(&w, be, e.tmpl.legacy, f[i])) < 0)
                                return fail_put(err, x, line, fn, "name");
                        break;
                default:
                        return fail_line(err, -EOPNOTSUPP, AE_IMA_UNKNOWN_TEMPLATE, line, fn,
                                         "field cannot be rebuilt");
                }
        }
        e.data = wb_data(&w);
        e.data_len = (uint32_t)wb_len(&w);
        if (decode_fields(&e, be, idx, 0, err) < 0) {
                char what[sizeof(err->msg)];

                snprintf(what, sizeof(what), "%s", err ? err->msg : "malformed field");
                return fail_line(err, -EBADMSG, err ? err->code : AE_IMA_BAD_FIELD, line, 4, what);
        }
        rd->r.p += tok_offset(&text);
        rd->r.left -= tok_offset(&text);
        rd->line++;
        rd->idx++;
        *ret = e;
        return 1;
}

int ima_reader_next(struct ima_reader *rd, struct ima_entry *ret, struct attest_err *err)
{
        return rd->format == IMA_FORMAT_ASCII ? next_ascii(rd, ret, err)
                                              : next_binary(rd, ret, err);
}

/* ---- hashes and replay ---- */

int ima_tmpl_hash(struct hasher *h, enum bank b, const struct ima_entry *e, uint8_t *out)
{
        int x;

        if (!e->tmpl.legacy)
                return hasher_digest(h, b, e->data, e->data_len, out);
        /* 'ima': digest || name padded to IMA_EVENT_NAME_LEN_MAX + 1 */
        uint8_t name[IMA_LEGACY_NAME_MAX + 1] = {0};

        memcpy(name, e->name, e->name_len);
        if ((x = hasher_begin(h, b)) < 0 || (x = hasher_update(h, e->digest, 20)) < 0 ||
            (x = hasher_update(h, name, sizeof(name))) < 0)
                return x;
        return hasher_end(h, out);
}

void ima_replay_init(struct ima_replay *rp, struct hasher *h, unsigned banks, bool check_sha1)
{
        memset(rp, 0, sizeof(*rp));
        rp->h = h;
        rp->banks = banks & BANK_MASK_ALL;
        rp->check_sha1 = check_sha1 || (banks & BANK_MASK(BANK_SHA1));
}

int ima_replay_extend(struct ima_replay *rp, const struct ima_entry *e, uint64_t idx,
                      struct attest_err *err)
{
        uint8_t th[BANK_DIGEST_MAX];
        int x;

        if (e->violation) {
                memset(th, 0xff, sizeof(th));
                for (int b = 0; b < BANK_COUNT; b++)
                        if (rp->banks & BANK_MASK(b) &&
                            (x = hasher_extend(rp->h, b, rp->pcr[b][e->pcr], th)) < 0)
                                return x;
                rp->violations++;
        } else {
                if (rp->check_sha1) {
                        if ((x = ima_tmpl_hash(rp->h, BANK_SHA1, e, th)) < 0)
                                return x;
                        if (memcmp(th, e->sha1, 20) != 0)
                                return attest_fail(err, -EBADMSG, AE_IMA_SHA1_MISMATCH,
                                                   "entry %" PRIu64
                                                   ": logged sha1 template hash does not match "
                                                   "the template data",
                                                   idx);
                }
                for (int b = 0; b < BANK_COUNT; b++) {
                        if (!(rp->banks & BANK_MASK(b)))
                                continue;
                        if (b == BANK_SHA1)
                                memcpy(th, e->sha1, 20);
                        else if ((x = ima_tmpl_hash(rp->h, b, e, th)) < 0)
                                return x;
                        if ((x = hasher_extend(rp->h, b, rp->pcr[b][e->pcr], th)) < 0)
                                return x;
                }
        }
        rp->used |= 1u << e->pcr;
        rp->entries++;
        return 0;
}

bool ima_entry_is_boot_aggregate(const struct ima_entry *e)
{
        return e->name && e->name_len == 14 && memcmp(e->name, "boot_aggregate", 14) == 0;
}

int ima_boot_aggregate_check(struct hasher *h, const struct ima_entry *e,
                             const struct pcr_set *pcrs, struct attest_err *err)
{
        uint8_t agg[BANK_DIGEST_MAX];
        char got[2 * BANK_DIGEST_MAX + 1], want[2 * BANK_DIGEST_MAX + 1];
        unsigned last;
        int b, x;

        if (!ima_entry_is_boot_aggregate(e) || !e->digest)
                return attest_fail(err, -EINVAL, AE_IMA_NO_BOOT_AGGREGATE,
                                   "entry is not a boot_aggregate");
        b = bank_from_name(e->algo, e->algo_len);
        if (b < 0)
                return attest_fail(err, -EOPNOTSUPP, AE_IMA_BOOT_AGGREGATE_ALGO,
                                   "boot_aggregate digest algorithm %.*s has no PCR bank",
                                   (int)e->algo_len, e->algo);
        last = b == BANK_SHA1 ? 7 : 9;
        for (unsigned i = 0; i <= last; i++)
                if (!(pcrs->have[b] & (1u << i)))
                        return attest_fail(err, -ENOENT, AE_IMA_BOOT_AGGREGATE_PCRS,
                                           "boot_aggregate needs %s PCR %u", bank_name(b), i);
        if ((x = hasher_begin(h, b)) < 0)
                return x;
        for (unsigned i = 0; i <= last; i++)
                if ((x = hasher_update(h, pcrs->v[b][i], bank_size(b))) < 0)
                        return x;
        if ((x = hasher_end(h, agg)) < 0)
                return x;
        if (e->digest_len == bank_size(b) && memcmp(agg, e->digest, e->digest_len) == 0)
                return 0;
        hex_encode(e->digest, e->digest_len, got);
        hex_encode(agg, bank_size(b), want);
        return attest_fail(err, -ESTALE, AE_IMA_BOOT_AGGREGATE_MISMATCH,
                           "boot_aggregate %s:%.16s... != H(%s PCR0-%u) %.16s...", bank_name(b),
                           got, bank_name(b), last, want);
}
