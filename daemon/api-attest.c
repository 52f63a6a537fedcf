/* SPDX-License-Identifier: MIT */
/* The attestation round: challenge (nonce) and evidence (verdict). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "daemon/api-internal.h"
#include "evidence/evjson.h"
#include "policy/policy.h"
#include "verify/verify.h"
#include "util/hex.h"
#include "daemon/log.h"

int api_policy_validate(const char *body, size_t len, struct attest_err *err)
{
        _cleanup_(policy_freep) struct policy *p = NULL;

        return policy_parse(body, len, &p, err);
}

int api_judge(struct attestd *d, const char *policy, const char *ref,
              const struct verify_result *vr, const struct evidence *ev, json_t **ret)
{
        _cleanup_(policy_freep) struct policy *p = NULL;
        struct attest_err err = {0};
        json_t *v = NULL;
        int e;

        (void)d;
        if (!policy) {
                v = json_pack("{s:s, s:n, s:[], s:s}", "status", "pass", "policy", "claims", "note",
                              "no policy bound and no policy named default: nothing "
                              "checked beyond the quote and the log");
                if (!v)
                        return -ENOMEM;
                *ret = v;
                return 0;
        }
        /* stored policies were validated on PUT; a failure here means a newer schema */
        if ((e = policy_parse(policy, strlen(policy), &p, &err)) < 0)
                return e;
        if ((e = policy_eval(p, vr, ev, &v)) < 0)
                return e;
        if (json_object_set_new(v, "policy", json_string(ref)) < 0) {
                json_decref(v);
                return -ENOMEM;
        }
        *ret = v;
        return 0;
}

int api_verdict_failed(const char *ref, const struct attest_err *why, json_t **ret)
{
        json_t *v = json_pack("{s:s, s:s?, s:[], s:{s:s, s:s}}", "status", "fail", "policy",
                              ref[0] ? ref : NULL, "claims", "reason", "code",
                              attest_code_name(why->code ? why->code : AE_VERIFY_FAILED), "detail",
                              why->msg);

        if (!v)
                return -ENOMEM;
        *ret = v;
        return 0;
}

void api_challenge(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id)
{
        uint64_t offset;
        json_auto_t *o = NULL;
        uint8_t nonce[NONCE_LEN];
        char hex[2 * NONCE_LEN + 1];
        uint64_t expires;
        int e;

        if (api_parse_body(d, req, r, true, &o) < 0 || api_check_fields(d, r, o, "$", NULL, 0) < 0)
                return;
        if ((e = store_agent_offset(d->store, id, &offset)) < 0) {
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
        e = nonce_issue(d->nonces, id, (uint64_t)attestd_now_ms(), nonce, &expires);
        if (e < 0) {
                api_error(d, r, 500, AE_INTERNAL, "no randomness");
                return;
        }
        hex_encode(nonce, sizeof(nonce), hex);
        if (api_json(r, 201,
                     json_pack("{s:s, s:o, s:I, s:s}", "nonce", hex, "expires",
                               api_time_json((int64_t)expires), "ima_offset", (json_int_t)offset,
                               "pcr_selection", d->pcr_sel_text)) < 0)
                api_nomem(d, r);
}

static unsigned nonce_status(enum attest_code code)
{
        if (code == AE_NONCE_EXPIRED)
                return 410;
        if (code == AE_NONCE_UNKNOWN)
                return 400;
        return 409; /* reused, wrong agent */
}

/*
 * Whether a verification failure says the evidence is not a fresh quote of this agent's AK
 * (malformed, bad signature, another nonce): then it is rejected and changes nothing, since
 * anyone can post it. Failures after that point come from the agent's own TPM and are verdicts.
 */
static bool unauthenticated(enum attest_code code)
{
        switch (code) {
        case AE_NONE:
        case AE_EVIDENCE_NONCE_MISMATCH:
        case AE_QUOTE_AK_ALG:
        case AE_QUOTE_AK_ATTRIBUTES:
        case AE_QUOTE_AK_CURVE:
        case AE_QUOTE_AK_KEY:
        case AE_QUOTE_AK_MALFORMED:
        case AE_QUOTE_AK_NAME_ALG:
        case AE_QUOTE_AK_TOO_BIG:
        case AE_QUOTE_AK_TRAILING:
        case AE_QUOTE_AK_WEAK:
        case AE_QUOTE_ATTEST_MALFORMED:
        case AE_QUOTE_ATTEST_TOO_BIG:
        case AE_QUOTE_ATTEST_TRAILING:
        case AE_QUOTE_INTERNAL:
        case AE_QUOTE_INVALID:
        case AE_QUOTE_INVALID_ARGUMENT:
        case AE_QUOTE_MAGIC:
        case AE_QUOTE_NONCE:
        case AE_QUOTE_SIG_ALG:
        case AE_QUOTE_SIG_MALFORMED:
        case AE_QUOTE_SIG_SCHEME:
        case AE_QUOTE_SIG_TOO_BIG:
        case AE_QUOTE_SIG_TRAILING:
        case AE_QUOTE_SIGNATURE:
        case AE_QUOTE_TYPE:
        case AE_VERIFY_INTERNAL:
        case AE_VERIFY_INVALID_ARGUMENT:
                return true;
        default:
                return false;
        }
}

static int64_t mono_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The policy that judges the agent: its bound one, else "default" if it exists, else none. */
static int policy_for(struct attestd *d, const struct store_agent *a, char **ret_body,
                      char ret_ref[API_POLICY_REF_MAX])
{
        const char *name = a->policy ? a->policy : "default";
        int64_t version = 0;
        int e;

        *ret_body = NULL;
        ret_ref[0] = '\0';
        e = store_policy_get(d->store, name, 0, ret_body, &version, NULL);
        if (e == -ENOENT && !a->policy)
                return 0;
        if (e < 0)
                return e;
        snprintf(ret_ref, API_POLICY_REF_MAX, "%s@%lld", name, (long long)version);
        return 0;
}

void api_evidence(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id)
{
        _cleanup_(store_agent_freep) struct store_agent *a = NULL;
        _cleanup_(evidence_freep) struct evidence *ev = NULL;
        struct akcache_ref *ak = NULL;
        _cleanup_free_ char *policy_body = NULL, *state_json = NULL, *verdict_text = NULL;
        struct replay_state prev;
        struct verify_result vr;
        struct verify_input in;
        struct attest_err err = {0};
        char ref[API_POLICY_REF_MAX], esc[128];
        json_t *verdict = NULL;
        int64_t t0 = mono_us(), now, next_due, rid = 0;
        uint64_t nonce_expires = 0;
        bool verified = false;
        int e;

        if (!api_ctype_is_json(req->content_type)) {
                api_error(d, r, 415, AE_UNSUPPORTED_MEDIA_TYPE,
                          "Content-Type must be application/json");
                return;
        }
        /* the agent first: no parsing of 16 MiB for an unknown id */
        if (api_agent_load(d, r, id, &a) < 0)
                return;
        if (!strcmp(a->state, "decommissioned")) {
                api_error(d, r, 403, AE_AGENT_DECOMMISSIONED,
                          "agent %s was decommissioned by an administrator", id);
                return;
        }
        if (strcmp(a->state, "active") != 0) {
                api_error(d, r, 403, AE_AGENT_NOT_ACTIVE,
                          "agent %s has not activated its enrolment credential", id);
                return;
        }
        if ((e = evidence_from_json(req->body, req->body_len, d->cfg.max_evidence, &ev, &err)) <
            0) {
                api_error(d, r, e == -E2BIG ? 413 : 400, err.code ? err.code : AE_EVIDENCE_JSON,
                          "%s", err.msg);
                return;
        }
        /* MAC, agent and expiry first (no I/O), then whether a verified quote used it already;
         * it is remembered only once a quote over it verifies (store_result_add) */
        if ((e = nonce_check(d->nonces, id, ev->nonce, ev->nonce_len, (uint64_t)attestd_now_ms(),
                             &nonce_expires, &err)) < 0) {
                if (e == -ESTALE)
                        api_error(d, r, nonce_status(err.code), err.code, "$.nonce: %s", err.msg);
                else
                        api_error(d, r, 500, AE_INTERNAL, "nonce check failed");
                return;
        }
        if ((e = store_nonce_used(d->store, ev->nonce)) < 0) {
                if (e == -EALREADY)
                        api_error(d, r, 409, AE_NONCE_REUSED, "$.nonce: nonce was already used");
                else
                        api_store_error(d, r, e, "nonce lookup");
                return;
        }
        if (akcache_get(d->aks, id, a->ak_public, a->ak_public_len, &ak, &err) < 0) {
                log_err("agent %s: stored AK does not parse: %s", id, err.msg);
                api_error(d, r, 500, AE_STORE_CORRUPT, "stored AK of %s is unusable", id);
                return;
        }
        replay_state_init(&prev);
        if (a->replay_state &&
            replay_state_from_json(a->replay_state, strlen(a->replay_state), &prev, &err) < 0) {
                /* an unreadable state costs a full replay, not the agent */
                log_warning("agent %s: stored replay state unusable (%s): replaying from 0", id,
                            err.msg);
                replay_state_init(&prev);
        }
        in = (struct verify_input){
                .ak = akcache_ak(ak),
                .nonce = ev->nonce,
                .nonce_len = ev->nonce_len,
                .sel = &d->pcr_sel,
                .prev = &prev,
                .max_entries = d->cfg.max_entries,
        };
        e = verify_evidence(&in, ev, &vr, &err);
        replay_state_done(&prev);
        akcache_put(d->aks, ak);
        if (e < 0 && e != -ENOMEM && unauthenticated(err.code)) {
                metrics_attestation(&d->metrics, METRICS_ERROR, (uint64_t)(mono_us() - t0));
                api_error(d, r, e == -EBADMSG ? 400 : 422, err.code ? err.code : AE_QUOTE_INVALID,
                          "%s", err.msg);
                return;
        }
        if (e < 0 && err.code && err.code == AE_IMA_OFFSET_REBOOT) {
                int x = store_agent_reset_replay(d->store, id, a->seq);

                metrics_attestation(&d->metrics, METRICS_ERROR, (uint64_t)(mono_us() - t0));
                if (x < 0 && x != -ESTALE) {
                        api_store_error(d, r, x, "replay reset");
                        return;
                }
                log_notice("agent %s rebooted: replay restarts from entry 0", id);
                api_error(d, r, 409, err.code, "%s; ask a new challenge", err.msg);
                return;
        }
        /* the agent's state moved on (another submission came first): refused, not judged */
        if (e < 0 && err.code &&
            (err.code == AE_IMA_OFFSET_MISMATCH || err.code == AE_QUOTE_CLOCK_REWIND)) {
                metrics_attestation(&d->metrics, METRICS_ERROR, (uint64_t)(mono_us() - t0));
                api_error(d, r, 409, err.code, "%s", err.msg);
                return;
        }
        if (e == -ENOMEM) {
                api_nomem(d, r);
                return;
        }
        verified = e == 0;
        if ((e = policy_for(d, a, &policy_body, ref)) < 0) {
                if (verified)
                        verify_result_done(&vr);
                if (e == -ENOENT)
                        api_error(d, r, 409, AE_POLICY_NOT_FOUND, "bound policy %s is gone",
                                  a->policy);
                else
                        api_store_error(d, r, e, "policy lookup");
                return;
        }
        now = attestd_now_ms();
        next_due = now + (int64_t)d->cfg.interval * 1000;
        if (verified)
                e = api_judge(d, policy_body, ref, &vr, ev, &verdict);
        else
                e = api_verdict_failed(ref, &err, &verdict);
        if (e == 0 && verified)
                e = replay_state_to_json(&vr.next, &state_json);
        if (e == 0 && (json_object_set_new(verdict, "time", api_time_json(now)) < 0 ||
                       json_object_set_new(verdict, "next_due", api_time_json(next_due)) < 0))
                e = -ENOMEM;
        if (e == 0 && verified &&
            json_object_set_new(verdict, "ima",
                                json_pack("{s:I, s:I, s:I, s:b, s:b, s:b}", "offset",
                                          (json_int_t)ev->ima_offset, "new_entries",
                                          (json_int_t)vr.new_entries, "entries",
                                          (json_int_t)vr.next.entries, "rebooted", vr.rebooted,
                                          "boot_aggregate_seen", vr.boot_aggregate_seen,
                                          "boot_aggregate_ok", vr.boot_aggregate_ok)) < 0)
                e = -ENOMEM;
        if (e == 0 && !(verdict_text = json_dumps(verdict, JSON_COMPACT)))
                e = -ENOMEM;
        if (e < 0) {
                if (verified)
                        verify_result_done(&vr);
                json_decref(verdict);
                api_error(d, r, 500, AE_INTERNAL, "could not judge");
                return;
        }
        {
                const char *status = json_string_value(json_object_get(verdict, "status"));
                struct store_result res = {
                        .agent = id,
                        .time = now,
                        .status = status ? status : "fail",
                        .policy = ref[0] ? ref : NULL,
                        .verdict = verdict_text,
                        .next_due = next_due,
                        /* a failed round keeps the last good state: the next one retries */
                        .ima_offset = verified ? vr.next.entries : a->ima_offset,
                        .replay_state = verified ? state_json : a->replay_state,
                        .nonce = ev->nonce,
                        .nonce_expires = (int64_t)nonce_expires,
                };
                bool pass = status && !strcmp(status, "pass");

                e = store_result_add(d->store, &res, a->seq, d->cfg.retain, &rid);
                if (e == 0) {
                        if (verified)
                                metrics_replayed(&d->metrics, vr.new_entries);
                        metrics_attestation(&d->metrics, pass ? METRICS_PASS : METRICS_FAIL,
                                            (uint64_t)(mono_us() - t0));
                        if (!pass || (a->last_status && strcmp(a->last_status, "pass")))
                                log_notice("agent %s: %s (%s)%s%s", id, res.status,
                                           ref[0] ? ref : "no policy", verified ? "" : ": ",
                                           verified ? ""
                                                    : log_escape(err.msg, sizeof(err.msg), esc,
                                                                 sizeof(esc)));
                }
        }
        if (verified)
                verify_result_done(&vr);
        if (e == -EALREADY) {
                json_decref(verdict);
                api_error(d, r, 409, AE_NONCE_REUSED, "$.nonce: nonce was already used");
                return;
        }
        if (e == -ESTALE) {
                json_decref(verdict);
                api_error(d, r, 409, AE_AGENT_BUSY,
                          "another submission of this agent was judged meanwhile");
                return;
        }
        if (e < 0) {
                json_decref(verdict);
                api_store_error(d, r, e, "result insert");
                return;
        }
        json_decref(verdict);
        /* the stored text with the result id in front: no second serialisation */
        {
                size_t n = strlen(verdict_text);
                char *body = malloc(n + 32);
                int k;

                if (!body || n < 2 || verdict_text[0] != '{') {
                        free(body);
                        api_nomem(d, r);
                        return;
                }
                k = snprintf(body, 32, "{\"id\":%lld%s", (long long)rid, n > 2 ? "," : "");
                memcpy(body + k, verdict_text + 1, n);
                api_resp_text(r, 200, "application/json", body, (size_t)k + n - 1);
        }
}
