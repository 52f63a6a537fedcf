/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "hex.h"
#include "pcrs.h"

static int bank_for_len(size_t n)
{
        for (int b = 0; b < BANK_COUNT; b++)
                if (bank_size(b) == n)
                        return b;
        return -EOPNOTSUPP;
}

static const char *skip_ws(const char *p, const char *end)
{
        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        return p;
}

/* Parse one PCR index (decimal, < PCR_COUNT) at *p, advancing only on success. */
static int parse_index(const char **p, const char *end, unsigned *ret)
{
        const char *q = *p;
        unsigned v = 0;

        if (q == end || *q < '0' || *q > '9')
                return -EBADMSG;
        while (q < end && *q >= '0' && *q <= '9') {
                v = v * 10 + (unsigned)(*q - '0');
                if (v >= PCR_COUNT)
                        return -ERANGE;
                q++;
        }
        *p = q;
        *ret = v;
        return 0;
}

int pcrs_parse(const char *text, size_t len, struct pcr_set *ret, struct attest_err *err)
{
        struct pcr_set s;
        const char *p = text, *end = text + len;
        int yaml_bank = -1;
        unsigned line = 0;

        if (len > PCR_FILE_MAX)
                return attest_fail(err, -E2BIG, "pcrs_too_big", "PCR file of %zu bytes > %d", len,
                                   PCR_FILE_MAX);
        memset(&s, 0, sizeof(s));
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));
                const char *q, *hex;
                int bank = -1;
                unsigned idx;
                size_t hexlen, n;
                uint8_t buf[BANK_DIGEST_MAX];

                if (!eol)
                        eol = end;
                line++;
                q = skip_ws(p, eol);
                p = eol < end ? eol + 1 : end;
                while (eol > q && (eol[-1] == ' ' || eol[-1] == '\r' || eol[-1] == '\t'))
                        eol--;
                if (q == eol || *q == '#')
                        continue;
                /* "sha256:" alone opens a YAML bank section; "sha256:N HEX" names the bank. */
                const char *colon = memchr(q, ':', (size_t)(eol - q));
                if (colon && (*q < '0' || *q > '9')) {
                        bank = bank_from_name(q, (size_t)(colon - q));
                        if (bank < 0)
                                return attest_fail(err, -EOPNOTSUPP, "pcrs_bad_bank",
                                                   "line %u: unknown bank '%.*s'", line,
                                                   (int)(colon - q), q);
                        q = skip_ws(colon + 1, eol);
                        if (q == eol) {
                                yaml_bank = bank;
                                continue;
                        }
                }
                if (parse_index(&q, eol, &idx) < 0)
                        return attest_fail(err, -EBADMSG, "pcrs_bad_index",
                                           "line %u: expected a PCR index 0-23", line);
                q = skip_ws(q, eol);
                if (q < eol && *q == ':') /* YAML "N : 0xHEX" */
                        q = skip_ws(q + 1, eol);
                if (eol - q >= 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
                        q += 2;
                hex = q;
                hexlen = (size_t)(eol - q);
                if (hex_decode(hex, hexlen, buf, sizeof(buf), &n) < 0)
                        return attest_fail(err, -EBADMSG, "pcrs_bad_value",
                                           "line %u: PCR %u value is not a digest in hex", line,
                                           idx);
                if (bank < 0)
                        bank = yaml_bank >= 0 ? yaml_bank : bank_for_len(n);
                if (bank < 0 || bank_size(bank) != n)
                        return attest_fail(err, -EBADMSG, "pcrs_bad_value",
                                           "line %u: PCR %u value of %zu bytes fits no bank", line,
                                           idx, n);
                if (s.have[bank] & (1u << idx))
                        return attest_fail(err, -EBADMSG, "pcrs_duplicate",
                                           "line %u: PCR %u of %s given twice", line, idx,
                                           bank_name(bank));
                s.have[bank] |= 1u << idx;
                memcpy(s.v[bank][idx], buf, n);
        }
        *ret = s;
        return 0;
}
