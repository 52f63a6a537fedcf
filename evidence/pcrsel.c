/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "evidence/pcrsel.h"
#include "util/tok.h"

/* longest bank name looked at ("sha256" is 6) */
#define PCR_SEL_BANK_MAX 16

/* "N" or "N-M", each index < PCR_COUNT, N <= M. */
static int parse_range(struct span r, uint32_t *mask)
{
        struct tok t = TOK_INIT(r.p, r.n);
        uint32_t lo, hi;

        if (tok_u32(&t, PCR_COUNT - 1, &lo) < 0)
                return -EINVAL;
        hi = lo;
        if (tok_char(&t, '-') && tok_u32(&t, PCR_COUNT - 1, &hi) < 0)
                return -EINVAL;
        if (!tok_empty(&t) || hi < lo)
                return -EINVAL;
        for (uint32_t i = lo; i <= hi; i++)
                *mask |= 1u << i;
        return 0;
}

/* "BANK:LIST+BANK:LIST...", LIST ranges joined by ','; cut by the text cursor. */
int pcr_sel_parse(const char *s, struct pcr_sel *ret)
{
        struct pcr_sel sel;
        struct span item;
        struct tok t;
        size_t n;

        if (!s)
                return -EINVAL;
        n = strnlen(s, PCR_SEL_TEXT_MAX + 1);
        if (n == 0 || n > PCR_SEL_TEXT_MAX)
                return -EINVAL;
        memset(&sel, 0, sizeof(sel));
        tok_init(&t, s, n);
        while (tok_field(&t, '+', PCR_SEL_TEXT_MAX, &item) == 0) {
                struct tok it = TOK_INIT(item.p, item.n);
                struct span bank, range;
                uint32_t mask = 0;
                int b;

                if (tok_field(&it, ':', PCR_SEL_BANK_MAX, &bank) < 0 || !it.more ||
                    (b = bank_from_name(bank.p, bank.n)) < 0)
                        return -EINVAL;
                while (tok_field(&it, ',', PCR_SEL_TEXT_MAX, &range) == 0)
                        if (parse_range(range, &mask) < 0)
                                return -EINVAL;
                sel.mask[b] |= mask;
        }
        *ret = sel;
        return 0;
}

/* Append the formatted text to out at *pos; -E2BIG when it does not fit. */
static int append(char *out, size_t n, size_t *pos, const char *text)
{
        size_t len = strlen(text);

        if (len >= n - *pos)
                return -E2BIG;
        memcpy(out + *pos, text, len + 1);
        *pos += len;
        return 0;
}

int pcr_sel_format(const struct pcr_sel *s, char *out, size_t n)
{
        size_t pos = 0;
        bool first_bank = true;

        if (n == 0)
                return -E2BIG;
        out[0] = '\0';
        for (int b = 0; b < BANK_COUNT; b++) {
                uint32_t m = s->mask[b] & ((1u << PCR_COUNT) - 1);
                bool first = true;
                char item[32];

                if (!m)
                        continue;
                snprintf(item, sizeof(item), "%s%s:", first_bank ? "" : "+", bank_name(b));
                if (append(out, n, &pos, item) < 0)
                        goto too_small;
                first_bank = false;
                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        unsigned j = i;

                        if (!(m & (1u << i)))
                                continue;
                        while (j + 1 < PCR_COUNT && (m & (1u << (j + 1))))
                                j++;
                        if (j >= i + 2)
                                snprintf(item, sizeof(item), "%s%u-%u", first ? "" : ",", i, j);
                        else if (j == i + 1)
                                snprintf(item, sizeof(item), "%s%u,%u", first ? "" : ",", i, j);
                        else
                                snprintf(item, sizeof(item), "%s%u", first ? "" : ",", i);
                        if (append(out, n, &pos, item) < 0)
                                goto too_small;
                        first = false;
                        i = j;
                }
        }
        return 0;
too_small:
        out[pos] = '\0';
        return -E2BIG;
}

bool pcr_sel_equal(const struct pcr_sel *a, const struct pcr_sel *b)
{
        for (int i = 0; i < BANK_COUNT; i++)
                if (a->mask[i] != b->mask[i])
                        return false;
        return true;
}

bool pcr_sel_is_empty(const struct pcr_sel *s)
{
        return pcr_sel_count(s) == 0;
}

unsigned pcr_sel_count(const struct pcr_sel *s)
{
        unsigned n = 0;

        for (int b = 0; b < BANK_COUNT; b++)
                n += (unsigned)__builtin_popcount(s->mask[b]);
        return n;
}

void pcr_sel_from_set(const struct pcr_set *set, struct pcr_sel *ret)
{
        for (int b = 0; b < BANK_COUNT; b++)
                ret->mask[b] = set->have[b] & ((1u << PCR_COUNT) - 1);
}

void pcr_sel_to_tpml(const struct pcr_sel *s, TPML_PCR_SELECTION *ret)
{
        memset(ret, 0, sizeof(*ret));
        for (int b = 0; b < BANK_COUNT; b++) {
                TPMS_PCR_SELECTION *e;

                if (!s->mask[b])
                        continue;
                e = &ret->pcrSelections[ret->count++];
                e->hash = bank_tpm_alg(b);
                e->sizeofSelect = 3;
                for (unsigned i = 0; i < 3; i++)
                        e->pcrSelect[i] = (BYTE)(s->mask[b] >> (8 * i));
        }
}

int pcr_sel_from_tpml(const TPML_PCR_SELECTION *l, struct pcr_sel *ret)
{
        struct pcr_sel sel;
        uint32_t seen = 0;

        memset(&sel, 0, sizeof(sel));
        if (l->count > TPM2_NUM_PCR_BANKS)
                return -EBADMSG;
        for (uint32_t k = 0; k < l->count; k++) {
                const TPMS_PCR_SELECTION *e = &l->pcrSelections[k];
                uint32_t m = 0;
                int b;

                if (e->sizeofSelect > sizeof(e->pcrSelect))
                        return -EBADMSG;
                /* TPM 2.0 Part 2, 10.6.1: octet i bit j selects PCR 8i + j */
                for (unsigned i = 0; i < e->sizeofSelect; i++) {
                        if (i >= (PCR_COUNT + 7) / 8) {
                                if (e->pcrSelect[i])
                                        return -EBADMSG;
                                continue;
                        }
                        m |= (uint32_t)e->pcrSelect[i] << (8 * i);
                }
                b = bank_from_tpm_alg(e->hash);
                if (b < 0)
                        return -EOPNOTSUPP;
                if (seen & BANK_MASK(b))
                        return -EBADMSG;
                seen |= BANK_MASK(b);
                sel.mask[b] = m;
        }
        *ret = sel;
        return 0;
}
