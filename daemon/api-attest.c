/* SPDX-License-Identifier: MIT */
/* The attestation round: challenge (nonce) and evidence (verdict). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-internal.h"
#include "hex.h"
#include "log.h"

int api_policy_validate(json_t *policy, struct attest_err *err)
{
        if (!json_is_object(policy))
                return attest_fail(err, -EBADMSG, "policy_type", "$: expected an object");
        return 0;
}

void api_challenge(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id)
{
        _cleanup_(store_agent_freep) struct store_agent *a = NULL;
        json_auto_t *o = NULL;
        uint8_t nonce[NONCE_LEN];
        char hex[2 * NONCE_LEN + 1];
        uint64_t expires;
        int e;

        if (api_parse_body(d, req, r, true, &o) < 0 || api_check_fields(d, r, o, "$", NULL, 0) < 0)
                return;
        if (api_agent_load(d, r, id, &a) < 0)
                return;
        e = nonce_issue(d->nonces, id, (uint64_t)attestd_now_ms(), nonce, &expires);
        if (e == -EBUSY) {
                api_error(d, r, 503, "nonces_exhausted", "too many outstanding challenges");
                return;
        }
        if (e < 0) {
                api_error(d, r, 500, "internal", "no randomness");
                return;
        }
        hex_encode(nonce, sizeof(nonce), hex);
        if (api_json(r, 201,
                     json_pack("{s:s, s:o, s:I, s:s}", "nonce", hex, "expires",
                               api_time_json((int64_t)expires), "ima_offset",
                               (json_int_t)a->ima_offset, "pcr_selection", d->pcr_sel_text)) < 0)
                api_nomem(d, r);
}

static unsigned nonce_status(const char *code)
{
        if (!strcmp(code, "nonce_expired"))
                return 410;
        if (!strcmp(code, "nonce_unknown"))
                return 400;
        return 409; /* reused, wrong agent */
}

void api_evidence(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id)
{
        _cleanup_(store_agent_freep) struct store_agent *a = NULL;
        json_auto_t *o = NULL;
        struct attest_err err = {0};
        uint8_t nonce[NONCE_LEN * 2];
        size_t nonce_len;
        json_t *n;

        if (api_parse_body(d, req, r, false, &o) < 0)
                return;
        if (api_agent_load(d, r, id, &a) < 0)
                return;
        n = json_object_get(o, "nonce");
        if (!json_is_string(n) || hex_decode(json_string_value(n), json_string_length(n), nonce,
                                             sizeof(nonce), &nonce_len) < 0) {
                api_error(d, r, 400, "evidence_bad_hex", "$.nonce: expected hex");
                return;
        }
        if (nonce_consume(d->nonces, id, nonce, nonce_len, (uint64_t)attestd_now_ms(), &err) < 0) {
                api_error(d, r, nonce_status(err.code), err.code, "$.nonce: %s", err.msg);
                return;
        }
        api_error(d, r, 501, "not_implemented", "evidence verification is not wired yet");
}
