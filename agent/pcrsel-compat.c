/* SPDX-License-Identifier: MIT */
#include "pcrsel-compat.h"

#ifdef PCRSEL_COMPAT
#include <errno.h>
#include <string.h>

/* One decimal PCR index < PCR_COUNT at *p; advances only on success. */
static int parse_pcr(const char **p, unsigned *ret)
{
        const char *q = *p;
        unsigned v = 0;

        if (*q < '0' || *q > '9')
                return -EINVAL;
        while (*q >= '0' && *q <= '9') {
                v = v * 10 + (unsigned)(*q - '0');
                if (v >= PCR_COUNT)
                        return -EINVAL;
                q++;
        }
        *p = q;
        *ret = v;
        return 0;
}

int pcr_sel_parse(const char *s, struct pcr_sel *ret)
{
        struct pcr_sel sel;
        const char *p = s;

        memset(&sel, 0, sizeof(sel));
        for (;;) {
                const char *colon = strchr(p, ':');
                int b;

                if (!colon)
                        return -EINVAL;
                b = bank_from_name(p, (size_t)(colon - p));
                if (b < 0)
                        return -EINVAL;
                p = colon + 1;
                for (;;) {
                        unsigned lo, hi;

                        if (parse_pcr(&p, &lo) < 0)
                                return -EINVAL;
                        hi = lo;
                        if (*p == '-') {
                                p++;
                                if (parse_pcr(&p, &hi) < 0 || hi < lo)
                                        return -EINVAL;
                        }
                        for (unsigned i = lo; i <= hi; i++)
                                sel.mask[b] |= 1u << i;
                        if (*p != ',')
                                break;
                        p++;
                }
                if (*p == '\0')
                        break;
                if (*p != '+')
                        return -EINVAL;
                p++;
        }
        *ret = sel;
        return 0;
}
#endif
