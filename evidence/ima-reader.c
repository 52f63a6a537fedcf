/* SPDX-License-Identifier: MIT */
/* The reader both formats share: options, the template cache, dispatch, format detection. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/ima-internal.h"

void ima_reader_opts(struct ima_reader *rd, const struct ima_log_opts *opts)
{
        if (opts)
                rd->o = *opts;
        if (!rd->o.max_entries)
                rd->o.max_entries = IMA_ENTRIES_DEFAULT;
}

/* Template by name, past the one-entry cache (ima-internal.h: ima_reader_tmpl). */
int ima_reader_tmpl_lookup(struct ima_reader *rd, const uint8_t *name, uint32_t len,
                           struct ima_tmpl *ret)
{
        int e;

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

int ima_reader_init_auto(struct ima_reader *rd, const uint8_t *buf, size_t len,
                         const struct ima_log_opts *opts)
{
        if (ima_ascii_looks(buf, len))
                return ima_reader_init_ascii(rd, (const char *)buf, len, opts);
        ima_reader_init_binary(rd, buf, len, opts);
        return 0;
}

void ima_reader_done(struct ima_reader *rd)
{
        free(rd->scratch);
        rd->scratch = NULL;
}

int ima_reader_next(struct ima_reader *rd, struct ima_entry *ret, struct attest_err *err)
{
        return rd->format == IMA_FORMAT_ASCII ? ima_ascii_next(rd, ret, err)
                                              : ima_binary_next(rd, ret, err);
}
