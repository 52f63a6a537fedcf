/* SPDX-License-Identifier: MIT */
/*
 * The evidence JSON written with the bounded writer, in two parts around the entries' base64 so
 * that the agent can stream its log between them (agent/evout.c) and evidence_to_json() can put
 * the whole text in one buffer: one encoder for both.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/evjson.h"
#include "util/hex.h"

static int put_s(struct wb *w, const char *s)
{
        return wb_put(w, s, strlen(s));
}

/* A JSON string of printable ASCII, escaped as jansson's compact dump does. */
static int put_str(struct wb *w, const char *s)
{
        size_t mark = wb_len(w);
        int x = wb_put_u8(w, '"');

        for (; x == 0 && *s; s++) {
                unsigned char c = (unsigned char)*s;

                if (c < 0x20 || c > 0x7e)
                        x = -EINVAL;
                else if (c == '"' || c == '\\')
                        x = wb_put(w, c == '"' ? "\\\"" : "\\\\", 2);
                else
                        x = wb_put_u8(w, c);
        }
        if (x == 0)
                x = wb_put_u8(w, '"');
        if (x < 0 && wb_rollback(w, mark) < 0)
                return -EINVAL;
        return x;
}

/* "key": */
static int put_key(struct wb *w, const char *key)
{
        int x = put_str(w, key);

        return x < 0 ? x : wb_put_u8(w, ':');
}

static int put_hex(struct wb *w, const uint8_t *p, size_t n)
{
        uint8_t *o;
        int x;

        /* hex_encode writes a NUL after the 2n digits: reserve it, then drop it */
        if ((x = wb_reserve(w, 2 * n + 1, &o)) < 0)
                return x;
        hex_encode(p, n, (char *)o);
        return wb_rollback(w, wb_len(w) - 1);
}

static int put_b64(struct wb *w, const uint8_t *p, size_t n)
{
        uint8_t *o;
        int x;

        if ((x = wb_reserve(w, b64_encoded_size(n), &o)) < 0)
                return x;
        b64_encode(p, n, (char *)o);
        return wb_rollback(w, wb_len(w) - 1);
}

static int put_bool(struct wb *w, bool b)
{
        return put_s(w, b ? "true" : "false");
}

size_t evidence_json_head_max(const struct evidence *ev)
{
        return EVIDENCE_HEAD_MAX + (ev->boot_log ? b64_encoded_size(ev->boot_log_len) : 0);
}

/*
 * {"version":1,"nonce":..,"quote":{..},["boot_log":{"offset":N,"data":".."},]
 *  "ima":{"offset":N,"format":"..","entries":"
 */
int evidence_json_head(const struct evidence *ev, struct wb *w)
{
        char num[32];
        bool first_bank = true;
        int x = 0;

        snprintf(num, sizeof(num), "{\"version\":%d,", EVIDENCE_VERSION);
#define TRY(e)                                                                                     \
        do {                                                                                       \
                if ((x = (e)) < 0)                                                                 \
                        return x;                                                                  \
        } while (0)
        TRY(put_s(w, num));
        TRY(put_key(w, "nonce"));
        TRY(wb_put_u8(w, '"'));
        TRY(put_hex(w, ev->nonce, ev->nonce_len));
        TRY(put_s(w, "\",\"quote\":{\"attest\":\""));
        TRY(put_b64(w, ev->attest, ev->attest_len));
        TRY(put_s(w, "\",\"signature\":\""));
        TRY(put_b64(w, ev->sig, ev->sig_len));
        TRY(put_s(w, "\",\"pcrs\":{"));
        for (int b = 0; b < BANK_COUNT; b++) {
                bool first = true;

                if (!ev->pcrs.have[b])
                        continue;
                if (!first_bank)
                        TRY(wb_put_u8(w, ','));
                first_bank = false;
                TRY(put_key(w, bank_name(b)));
                TRY(wb_put_u8(w, '{'));
                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        if (!(ev->pcrs.have[b] & (1u << i)))
                                continue;
                        snprintf(num, sizeof(num), "%s\"%u\":\"", first ? "" : ",", i);
                        first = false;
                        TRY(put_s(w, num));
                        TRY(put_hex(w, ev->pcrs.v[b][i], bank_size(b)));
                        TRY(wb_put_u8(w, '"'));
                }
                TRY(wb_put_u8(w, '}'));
        }
        TRY(put_s(w, "}},"));
        if (ev->boot_log) {
                if (ev->boot_log_len > EVIDENCE_BOOT_LOG_MAX)
                        return -E2BIG;
                snprintf(num, sizeof(num), "%" PRIu64, ev->boot_offset);
                TRY(put_s(w, "\"boot_log\":{\"offset\":"));
                TRY(put_s(w, num));
                TRY(put_s(w, ",\"data\":\""));
                TRY(put_b64(w, ev->boot_log, ev->boot_log_len));
                TRY(put_s(w, "\"},"));
        }
        snprintf(num, sizeof(num), "%" PRIu64, ev->ima_offset);
        TRY(put_s(w, "\"ima\":{\"offset\":"));
        TRY(put_s(w, num));
        TRY(put_s(w, ev->ima_format == IMA_FORMAT_ASCII ? ",\"format\":\"ascii\""
                                                        : ",\"format\":\"binary\""));
        return put_s(w, ",\"entries\":\"");
}

/* The identity members ("hostname", "machine_id", "labels"), each when reported; *first: no
 * member written before them (a comma goes first otherwise). */
static int put_identity(struct wb *w, const struct evidence_host *h, bool *first)
{
        int x = 0;

        /* TRY: evidence_json_head's, defined to the end of the file */
#define SEP()                                                                                      \
        do {                                                                                       \
                if (!*first)                                                                       \
                        TRY(wb_put_u8(w, ','));                                                    \
                *first = false;                                                                    \
        } while (0)
        if (h->hostname[0]) {
                SEP();
                TRY(put_key(w, "hostname"));
                TRY(put_str(w, h->hostname));
        }
        if (h->machine_id[0]) {
                SEP();
                TRY(put_key(w, "machine_id"));
                TRY(put_str(w, h->machine_id));
        }
        if (h->labels_present) {
                SEP();
                TRY(put_s(w, "\"labels\":{"));
                for (unsigned i = 0; i < h->n_labels && i < EVIDENCE_LABELS_MAX; i++) {
                        if (i)
                                TRY(wb_put_u8(w, ','));
                        TRY(put_key(w, h->labels[i].key));
                        TRY(put_str(w, h->labels[i].value));
                }
                TRY(wb_put_u8(w, '}'));
        }
#undef SEP
        return 0;
}

int evidence_host_identity_to_json(const struct evidence_host *h, char **ret)
{
        struct wb w;
        bool first = true;
        uint8_t *o;
        int x;

        if ((x = wb_new(&w, EVIDENCE_TAIL_MAX)) < 0)
                return x;
        x = wb_put_u8(&w, '{');
        if (x == 0)
                x = put_identity(&w, h, &first);
        if (x == 0)
                x = put_s(&w, "}");
        if (x == 0 && (x = wb_reserve(&w, 1, &o)) == 0)
                *o = '\0';
        if (x < 0) {
                wb_free(&w);
                return x;
        }
        *ret = (char *)wb_data(&w);
        return 0;
}

/* "},"host":{..}} */
int evidence_json_tail(const struct evidence_host *h, struct wb *w)
{
        bool first = true;
        int x = 0;

        TRY(put_s(w, "\"},\"host\":{"));
#define SEP()                                                                                      \
        do {                                                                                       \
                if (!first)                                                                        \
                        TRY(wb_put_u8(w, ','));                                                    \
                first = false;                                                                     \
        } while (0)
        if (h->kernel[0]) {
                SEP();
                TRY(put_key(w, "kernel"));
                TRY(put_str(w, h->kernel));
        }
        if (h->cmdline) {
                SEP();
                TRY(put_key(w, "cmdline"));
                TRY(put_str(w, h->cmdline));
        }
        if (h->boot_id[0]) {
                SEP();
                TRY(put_key(w, "boot_id"));
                TRY(put_str(w, h->boot_id));
        }
        if (h->cfi_present) {
                SEP();
                TRY(put_s(w, "\"cfi\":{\"source\":"));
                TRY(put_str(w, h->cfi_source));
                TRY(put_s(w, ",\"enabled\":"));
                TRY(put_bool(w, h->cfi_enabled));
                TRY(put_s(w, ",\"permissive\":"));
                TRY(put_bool(w, h->cfi_permissive));
                TRY(wb_put_u8(w, '}'));
        }
        if (h->tk_present) {
                SEP();
                TRY(put_s(w, "\"trusted_keys\":{\"source\":"));
                TRY(put_str(w, h->tk_source));
                TRY(put_s(w, ",\"origin\":"));
                TRY(put_str(w, h->tk_origin));
                TRY(wb_put_u8(w, '}'));
        }
        TRY(put_identity(w, h, &first));
#undef SEP
#undef TRY
        return put_s(w, "}}");
}

int evidence_to_json(const struct evidence *ev, char **ret)
{
        struct wb w;
        uint8_t *o;
        int x;

        if (ev->ima_len > EVIDENCE_JSON_MAX)
                return -E2BIG;
        if ((x = wb_new(&w, evidence_json_head_max(ev) + b64_encoded_size(ev->ima_len) +
                                    EVIDENCE_TAIL_MAX)) < 0)
                return x;
        x = evidence_json_head(ev, &w);
        if (x == 0 && ev->ima_len)
                x = put_b64(&w, ev->ima, ev->ima_len);
        if (x == 0)
                x = evidence_json_tail(&ev->host, &w);
        if (x == 0 && (x = wb_reserve(&w, 1, &o)) == 0)
                *o = '\0';
        if (x < 0) {
                wb_free(&w);
                return x;
        }
        /* the buffer is the caller's now (NUL terminated above) */
        *ret = (char *)wb_data(&w);
        return 0;
}
