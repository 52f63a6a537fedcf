/* SPDX-License-Identifier: MIT */
/* The attestation round's first step: the challenge (a nonce and the log offsets to send from). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "daemon/api/api-internal.h"
#include "daemon/log.h"
#include "policy/runtime-state.h"
#include "util/buf.h"
#include "util/hex.h"

/*
 * What the challenge hands out, from one read of the agent row (the pre-flight check's, or read
 * here; *ret_a, the caller's to free or keep): the IMA entries and the bytes of
 * the firmware event log the verifier holds for this boot (verify/boot.h). Both are 0 without a
 * state, and the boot offset whenever the IMA replay restarts (ima_offset 0: a new boot or a
 * reset). A stored state the evidence round cannot decode (it replays from entry 0 then: a
 * corrupt row, a format from another version) asks for the log from entry 0 too, else the agent
 * would be sent the column's offset, refused with 409, and sent it again for ever.
 * rt_state_stored_boot_offset refuses exactly what rt_state_stored_decode refuses, without
 * building the state (fuzz-replay-state checks that they agree).
 */
static int challenge_offsets(struct attestd *d, const struct api_req *req, const char *id,
                             struct store_agent **ret_a, uint64_t *ret_ima, uint64_t *ret_boot)
{
        struct store_agent *a = api_req_agent(req, id);
        uint64_t boot = 0;
        int e;

        *ret_ima = *ret_boot = 0;
        if (!a && (e = store_agent_get(d->store, id, &a)) < 0)
                return e;
        *ret_a = a;
        if ((e = store_agent_active(a)) < 0)
                return e;
        if (!a->ima_offset)
                return 0;
        if (!a->replay_state ||
            rt_state_stored_boot_offset(a->replay_state, a->replay_state_len, &boot, NULL) < 0) {
                log_warning("agent %s: stored replay state unusable: its log is asked from "
                            "entry 0",
                            id);
                return 0;
        }
        *ret_ima = a->ima_offset;
        *ret_boot = boot;
        return 0;
}

/* a string literal and its length, for wb_put */
#define LIT_SZ(s) s, sizeof(s) - 1

/*
 * The challenge answer without a jansson tree: the bytes json_pack("{s:s, s:o, s:I, s:I, s:s}")
 * dumps compact, when every string is plain (wb_put_json_plain: the nonce's hex, the time, the
 * PCR selection text all are); -EINVAL otherwise (the caller packs it with jansson).
 */
static int challenge_text(struct api_resp *r, const char *hex, int64_t expires, uint64_t offset,
                          uint64_t boot_offset, const char *sel)
{
        char t[API_TIME_MAX], num[96];
        struct wb w;
        int n, e;

        if (wb_new(&w, 2 * NONCE_LEN + API_TIME_MAX + strlen(sel) + 160) < 0)
                return -ENOMEM;
        api_time(expires, t);
        /* the integers as jansson's json_int_t (a signed 64-bit value) */
        n = snprintf(num, sizeof(num), ",\"ima_offset\":%" PRId64 ",\"boot_offset\":%" PRId64,
                     (int64_t)offset, (int64_t)boot_offset);
        if (n < 0 || (size_t)n >= sizeof(num) || (e = wb_put(&w, LIT_SZ("{\"nonce\":"))) < 0 ||
            (e = wb_put_json_plain(&w, hex)) < 0 || (e = wb_put(&w, LIT_SZ(",\"expires\":"))) < 0 ||
            (e = expires > 0 ? wb_put_json_plain(&w, t) : wb_put(&w, LIT_SZ("null"))) < 0 ||
            (e = wb_put(&w, num, (size_t)n)) < 0 ||
            (e = wb_put(&w, LIT_SZ(",\"pcr_selection\":"))) < 0 ||
            (e = wb_put_json_plain(&w, sel)) < 0 || (e = wb_put(&w, LIT_SZ("}"))) < 0) {
                wb_free(&w);
                return -EINVAL;
        }
        api_resp_text(r, 201, "application/json", (char *)w.p, wb_len(&w));
        return 0;
}

void api_challenge(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id)
{
        _cleanup_(store_agent_freep) struct store_agent *a = NULL;
        uint64_t offset, boot_offset;
        json_auto_t *o = NULL;
        uint8_t nonce[NONCE_LEN];
        char hex[2 * NONCE_LEN + 1];
        uint64_t expires;
        int e;

        if (api_parse_body(d, req, r, true, &o) < 0 || api_check_fields(d, r, o, "$", NULL, 0) < 0)
                return;
        if ((e = challenge_offsets(d, req, id, &a, &offset, &boot_offset)) < 0) {
                if (e == -ENOENT)
                        api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", id);
                else if (e == -EACCES)
                        api_error(d, r, 403, AE_AGENT_NOT_ACTIVE,
                                  "agent %s has not activated its enrolment credential", id);
                else if (e == -EPERM)
                        api_error(d, r, 403, AE_AGENT_DECOMMISSIONED,
                                  "agent %s was decommissioned by an administrator", id);
                else
                        api_store_error(d, r, e, "agent lookup");
                return;
        }
        /* stateless: nothing is stored, so anonymous challenges exhaust nothing */
        /* bound to the agent's state: the first verdict after it makes it stale */
        e = nonce_issue(d->nonces, id,
                        &(struct nonce_round){.last_result = a->last_result, .created = a->created},
                        (uint64_t)attestd_now_ms(), nonce, &expires);
        if (e < 0) {
                api_error(d, r, 500, AE_INTERNAL, "no randomness");
                return;
        }
        hex_encode(nonce, sizeof(nonce), hex);
        /* the row, for the evidence over this nonce (rowstash.h): its round reads none */
        if (d->rows) {
                rowstash_put(d->rows, a, nonce, expires);
                a = NULL;
        }
        if (challenge_text(r, hex, (int64_t)expires, offset, boot_offset, d->pcr_sel_text) == 0)
                return;
        /* boot_offset: bytes of the firmware event log the verifier holds for this boot */
        if (api_json(r, 201,
                     json_pack("{s:s, s:o, s:I, s:I, s:s}", "nonce", hex, "expires",
                               api_time_json((int64_t)expires), "ima_offset", (json_int_t)offset,
                               "boot_offset", (json_int_t)boot_offset, "pcr_selection",
                               d->pcr_sel_text)) < 0)
                api_nomem(d, r);
}
