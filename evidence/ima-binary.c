/* SPDX-License-Identifier: MIT */
/*
 * IMA binary log reader (ima_fs.c ima_measurements_show):
 *
 *   entry: u32 pcr | sha1 template hash[20] | u32 tname_len | tname | u32 data_len | data
 *   template 'ima' has no data_len (see ima_tmpl_decode_legacy()).
 *
 * u32s are in host order of the measuring kernel, little-endian for canonical logs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "evidence/ima-internal.h"

void ima_reader_init_binary(struct ima_reader *rd, const uint8_t *buf, size_t len,
                            const struct ima_log_opts *opts)
{
        *rd = (struct ima_reader){.r = RD_INIT(buf, len), .format = IMA_FORMAT_BINARY};
        ima_reader_opts(rd, opts);
}

int ima_binary_next(struct ima_reader *rd, struct ima_entry *ret, struct attest_err *err)
{
        struct rd r = rd->r;
        struct ima_entry e = {0};
        const uint8_t *sha1, *tname;
        bool be = rd->o.big_endian;
        uint64_t idx = rd->idx, base = rd->base;
        uint64_t start = base + rd_offset(&r);
        int x;

        if (rd_left(&r) == 0)
                return 0;
        if (idx >= rd->o.max_entries)
                return attest_fail(err, -E2BIG, AE_IMA_TOO_MANY_ENTRIES,
                                   "entry %" PRIu64 " at byte %" PRIu64 ": more than %" PRIu64
                                   " entries",
                                   idx, start, rd->o.max_entries);
        if (rd_u32(&r, be, &e.pcr) < 0 || rd_bytes(&r, 20, &sha1) < 0)
                return ima_fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, start,
                                      "entry header truncated");
        if (e.pcr >= PCR_COUNT) {
                char what[48];

                snprintf(what, sizeof(what), "PCR index %" PRIu32 " > 23", e.pcr);
                return ima_fail_entry(err, -EBADMSG, AE_IMA_BAD_PCR, idx, start, what);
        }
        memcpy(e.sha1, sha1, 20);
        e.violation = ima_all_zero(e.sha1, 20);
        x = rd_sized(&r, be, IMA_TMPL_NAME_MAX, &tname, &e.tmpl_name_len);
        if (x == -E2BIG)
                return ima_fail_entry(err, -E2BIG, AE_IMA_BAD_TEMPLATE, idx, base + rd_offset(&r),
                                      "template name longer than 255 bytes");
        if (x < 0)
                return ima_fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, base + rd_offset(&r),
                                      "template name truncated");
        if (e.tmpl_name_len == 0)
                return ima_fail_entry(err, -EBADMSG, AE_IMA_BAD_TEMPLATE, idx, base + rd_offset(&r),
                                      "empty template name");
        e.tmpl_name = (const char *)tname;
        if ((x = ima_reader_tmpl(rd, tname, e.tmpl_name_len, &e.tmpl)) < 0)
                return ima_fail_entry(err, x, AE_IMA_BAD_TEMPLATE, idx, base + rd_offset(&r),
                                      "template lookup failed");
        /*
         * The template hash covers the field data, not the template name: accepting unknown
         * names would let a relabelled entry replay fine while its fields go unread.
         */
        if (!e.tmpl.known && !rd->o.allow_unknown_templates)
                return ima_fail_entry(err, -EOPNOTSUPP, AE_IMA_UNKNOWN_TEMPLATE, idx,
                                      base + rd_offset(&r),
                                      "unknown template (fields other than d, n, d-ng, n-ng, sig, "
                                      "buf, d-modsig, modsig)");
        uint64_t data_off = base + rd_offset(&r);
        if (e.tmpl.legacy) {
                /* no data length: the decoder measures the span as it reads it */
                x = ima_tmpl_decode_legacy(&r, be, &e, idx, base, err);
                if (x == 0)
                        x = ima_tmpl_check_violation(&e, idx, data_off, err);
        } else {
                x = rd_sized(&r, be, IMA_DATA_MAX, &e.data, &e.data_len);
                if (x == -E2BIG)
                        return ima_fail_entry(err, -E2BIG, AE_IMA_DATA_TOO_LONG, idx, data_off,
                                              "template data longer than 65536 bytes");
                if (x < 0)
                        return ima_fail_entry(err, -EBADMSG, AE_IMA_TRUNCATED, idx, data_off,
                                              "template data truncated");
                x = ima_tmpl_decode(&e, be, idx, data_off + 4, err);
        }
        if (x < 0)
                return x;
        rd->r = r;
        rd->idx++;
        *ret = e;
        return 1;
}
