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

/* A writer failure while rebuilding field fn: over the data cap, or malformed hex. */
static int fail_put(struct attest_err *err, int x, uint64_t line, unsigned fn, const char *what)
{
        if (x == -E2BIG)
                return fail_line(err, -E2BIG, AE_IMA_DATA_TOO_LONG, line, fn,
                                 "template data longer than 65536 bytes");
        return fail_line(err, -EBADMSG, AE_IMA_BAD_FIELD, line, fn, what);
}

/*
 * One u32 length-prefixed field of the rebuilt data: raw bytes as they are, a NUL when nul, then
 * hex decoded. All or nothing: on failure the writer is as it was (nothing is copied into the
 * space reserved for raw until every check passed). -EBADMSG malformed hex, -E2BIG over the cap.
 */
static int put_field(struct wb *w, bool be, struct span raw, bool nul, struct span hex)
{
        size_t mark;
        uint8_t *o;
        int x;

        if ((x = wb_sized_begin(w, be, &mark)) < 0)
                return x;
        if ((x = wb_reserve(w, raw.n + nul, &o)) < 0 || (x = wb_put_hex(w, hex.p, hex.n)) < 0 ||
            (x = wb_sized_end(w, be, mark, IMA_DATA_MAX)) < 0)
                return wb_rollback(w, mark) < 0 ? -EINVAL : x;
        if (raw.n)
                memcpy(o, raw.p, raw.n);
        if (nul)
                o[raw.n] = '\0';
        return 0;
}

/* d-ng and d-modsig: "<algo>:\0" digest, from "algo:hex". */
static int put_digest_ng(struct wb *w, bool be, struct span v)
{
        struct tok t = TOK_INIT(v.p, v.n);
        struct span algo, hex;

        if (tok_field(&t, ':', 32, &algo) < 0 || !t.more || algo.n == 0)
                return -EBADMSG;
        if (tok_rest(&t, 2 * BANK_DIGEST_MAX, &hex) < 0)
                return -EBADMSG;
        /* "algo:" as it stands in the line, then the NUL */
        return put_field(w, be, (struct span){algo.p, algo.n + 1}, true, hex);
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
int ima_ascii_next(struct ima_reader *rd, struct ima_entry *ret, struct attest_err *err)
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
        e.violation = ima_all_zero(e.sha1, 20);
        /* field 3: template name */
        if (tok_field(&ln, ' ', IMA_TMPL_NAME_MAX, &v) < 0 || v.n == 0)
                return fail_line(err, -EBADMSG, AE_IMA_BAD_TEMPLATE, line, 3,
                                 "template name empty or too long");
        e.tmpl_name = v.p;
        e.tmpl_name_len = (uint32_t)v.n;
        if (ima_reader_tmpl(rd, (const uint8_t *)v.p, e.tmpl_name_len, &e.tmpl) < 0 ||
            !e.tmpl.known)
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
                        if ((x = put_field(&w, be, (struct span){0}, false, f[i])) < 0)
                                return fail_put(err, x, line, fn, "field is not hex");
                        break;
                case IMA_FIELD_D_NG:
                case IMA_FIELD_D_MODSIG:
                        if (f[i].n == 0 && fld == IMA_FIELD_D_MODSIG)
                                x = put_field(&w, be, (struct span){0}, false, f[i]); /* none */
                        else
                                x = put_digest_ng(&w, be, f[i]);
                        if (x < 0)
                                return fail_put(err, x, line, fn, "digest is not algo:hex");
                        break;
                case IMA_FIELD_N:
                case IMA_FIELD_N_NG:
                        /* n-ng: name NUL; n in template 'ima': the name alone */
                        if ((x = put_field(&w, be, f[i], !e.tmpl.legacy, (struct span){0})) < 0)
                                return fail_put(err, x, line, fn, "name");
                        break;
                default:
                        return fail_line(err, -EOPNOTSUPP, AE_IMA_UNKNOWN_TEMPLATE, line, fn,
                                         "field cannot be rebuilt");
                }
        }
        e.data = wb_data(&w);
        e.data_len = (uint32_t)wb_len(&w);
        if (ima_tmpl_decode(&e, be, idx, 0, err) < 0) {
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
