/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "util/hex.h"
#include "evidence/pcrs.h"
#include "util/tok.h"

static int bank_for_len(size_t n)
{
        for (int b = 0; b < BANK_COUNT; b++)
                if (bank_size(b) == n)
                        return b;
        return -EOPNOTSUPP;
}

/* longest bank name looked at ("sha256" is 6) */
#define PCRS_BANK_NAME_MAX 16

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/*
 * Lines "N HEX", "BANK:N HEX", YAML "BANK:" then "  N : 0xHEX", blanks and '#' comments, cut by
 * the text cursor; each digest is decoded through a writer of BANK_DIGEST_MAX bytes.
 */
int pcrs_parse(const char *text, size_t len, struct pcr_set *ret, struct attest_err *err)
{
        struct tok t = TOK_INIT(text, len), ln;
        struct pcr_set s;
        int yaml_bank = -1, x;
        unsigned line = 0;

        if (len > PCR_FILE_MAX)
                return attest_fail(err, -E2BIG, AE_PCRS_TOO_BIG, "PCR file of %zu bytes > %d", len,
                                   PCR_FILE_MAX);
        memset(&s, 0, sizeof(s));
        while ((x = tok_line(&t, PCR_FILE_MAX, TOK_STRIP_CR, &ln)) != 0) {
                struct span rest, name, hex;
                int bank = -1;
                uint32_t idx;
                uint8_t buf[BANK_DIGEST_MAX];
                size_t n;

                line++;
                if (x < 0)
                        return attest_fail(err, -EBADMSG, AE_PCRS_BAD_LINE, "line %u: NUL byte",
                                           line);
                if (tok_rest(&ln, PCR_FILE_MAX, &rest) < 0)
                        continue; /* empty line */
                rest = span_trim(rest);
                if (rest.n == 0 || rest.p[0] == '#')
                        continue;
                struct tok l = TOK_INIT(rest.p, rest.n);
                /* "sha256:" alone opens a YAML bank section; "sha256:N HEX" names the bank. */
                if (!is_digit(rest.p[0]) && memchr(rest.p, ':', rest.n)) {
                        if (tok_field(&l, ':', PCRS_BANK_NAME_MAX, &name) < 0)
                                name = (struct span){rest.p, PCRS_BANK_NAME_MAX};
                        if (name.n > PCRS_BANK_NAME_MAX ||
                            (bank = bank_from_name(name.p, name.n)) < 0)
                                return attest_fail(err, -EOPNOTSUPP, AE_PCRS_BAD_BANK,
                                                   "line %u: unknown bank '%.*s'", line,
                                                   (int)name.n, name.p);
                        tok_skip_blank(&l);
                        if (tok_empty(&l)) {
                                yaml_bank = bank;
                                continue;
                        }
                }
                if (tok_u32(&l, PCR_COUNT - 1, &idx) < 0)
                        return attest_fail(err, -EBADMSG, AE_PCRS_BAD_INDEX,
                                           "line %u: expected a PCR index 0-23", line);
                tok_skip_blank(&l);
                if (tok_char(&l, ':')) /* YAML "N : 0xHEX" */
                        tok_skip_blank(&l);
                struct tok before_0x = l;
                if (!tok_char(&l, '0') || (!tok_char(&l, 'x') && !tok_char(&l, 'X')))
                        l = before_0x;
                if (tok_rest(&l, 2 * BANK_DIGEST_MAX + 1, &hex) < 0 ||
                    hex_decode(hex.p, hex.n, buf, sizeof(buf), &n) < 0)
                        return attest_fail(err, -EBADMSG, AE_PCRS_BAD_VALUE,
                                           "line %u: PCR %u value is not a digest in hex", line,
                                           idx);
                if (bank < 0)
                        bank = yaml_bank >= 0 ? yaml_bank : bank_for_len(n);
                if (bank < 0 || bank_size(bank) != n)
                        return attest_fail(err, -EBADMSG, AE_PCRS_BAD_VALUE,
                                           "line %u: PCR %u value of %zu bytes fits no bank", line,
                                           idx, n);
                if (s.have[bank] & (1u << idx))
                        return attest_fail(err, -EBADMSG, AE_PCRS_DUPLICATE,
                                           "line %u: PCR %u of %s given twice", line, idx,
                                           bank_name(bank));
                s.have[bank] |= 1u << idx;
                memcpy(s.v[bank][idx], buf, n);
        }
        *ret = s;
        return 0;
}
