/* SPDX-License-Identifier: MIT */
/* The attestation round: evidence (verdict), as named stages; the challenge is api-challenge.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "daemon/api/api-internal.h"
#include "daemon/ear.h"
#include "daemon/log.h"
#include "daemon/policy-cache.h"
#include "evidence/evjson.h"
#include "policy/policy.h"
#include "policy/runtime-state.h"
#include "policy/runtime.h"
#include "policy/verdict.h"
#include "util/buf.h"
#include "util/clock.h"
#include "verify/claims.h"
#include "verify/verify.h"

static unsigned nonce_status(enum attest_code code)
{
        if (code == AE_NONCE_EXPIRED)
                return 410;
        if (code == AE_NONCE_UNKNOWN)
                return 400;
        return 409; /* reused, wrong agent */
}

/*
 * One evidence round, stage by stage: gate (agent state) -> decode (evidence JSON, nonce) ->
 * verify (quote, replay) -> judge (claims, policy, verdict) -> store -> respond. Each stage takes
 * the round, answers the request itself when it stops the round (then returns < 0), and leaves
 * what it owns in the round, which round_done() releases.
 */
struct round {
        const char *id;
        int64_t t0;
        struct store_agent *a;
        bool kept;  /* a is the row the round's challenge kept (rowstash.h) */
        bool fresh; /* a second pass, after the kept row had moved on: read the row */
        struct evidence *ev;
        struct attest_err err; /* why verification failed, when !verified */
        bool verified;
        /* api_evidence's own, not zeroed with the round (tens of KiB): verify_evidence fills it
         * on success only, and it is read (and released) only when verified */
        struct verify_result *vr;
        /* runtime: the ima.runtime results, as stored and then as this round leaves them (the
         * observer's; api_evidence's own, as vr) */
        struct rt_state *rts;
        struct policy_cached *policy; /* parsed, from the cache; NULL: none bound, no "default" */
        struct rt_ctx *rt;            /* runtime: this round's ima.runtime context, if any */
        char ref[API_POLICY_REF_MAX];
        enum verdict_status status;
        struct ear_appraisal appraisal; /* of the verdict, stored with it (daemon/ear.h) */
        /* why this verified round could not be judged ("": it was); then it is stored as an
         * error result and keeps the last good replay state */
        char unjudged[256];
        json_t *verdict;
        char *text;             /* the verdict as stored (compact JSON) */
        uint32_t failed_claims; /* bit per enum claim_id that did not pass */
        char failing[384];      /* their names, ", " between, for the log */
        char *failing_json;     /* their names as a JSON array, for the event (NULL: none) */
        const char *reason;     /* static: the code of a round not verified or not judged */
        uint8_t *state;         /* the next replay state, encoded */
        size_t state_len;
        int64_t now, next_due, rid;
};

static void round_done(struct round *rd)
{
        store_agent_free(rd->a);
        evidence_free(rd->ev);
        if (rd->verified)
                verify_result_done(rd->vr);
        policy_cached_unref(rd->policy);
        rt_ctx_free(rd->rt);
        json_decref(rd->verdict);
        free(rd->text);
        free(rd->failing_json);
        free(rd->state);
}

static void round_error(struct attestd *d, const struct round *rd)
{
        metrics_attestation(&d->metrics, METRICS_ERROR, (uint64_t)(mono_us() - rd->t0));
}

/* Refuse the round of an agent that is not active (r answered, < 0). */
static int gate_state(struct attestd *d, struct api_resp *r, const struct round *rd)
{
        switch (store_agent_active(rd->a)) {
        case 0:
                return 0;
        case -EPERM:
                api_error(d, r, 403, AE_AGENT_DECOMMISSIONED,
                          "agent %s was decommissioned by an administrator", rd->id);
                return -EPERM;
        default:
                api_error(d, r, 403, AE_AGENT_NOT_ACTIVE,
                          "agent %s has not activated its enrolment credential", rd->id);
                return -EACCES;
        }
}

/*
 * The agent first: no parsing of 16 MiB for an unknown id. Its row is the pre-flight check's, or
 * the one its challenge kept (taken once the nonce is known, round_row), or read here.
 */
static int stage_gate(struct attestd *d, const struct api_req *req, struct api_resp *r,
                      struct round *rd)
{
        enum agent_state state;

        if (!api_ctype_is_json(req->content_type)) {
                api_error(d, r, 415, AE_UNSUPPORTED_MEDIA_TYPE,
                          "Content-Type must be application/json");
                return -EINVAL;
        }
        rd->a = api_req_agent(req, rd->id);
        if (!rd->a && d->rows && !rd->fresh &&
            rowstash_state(d->rows, rd->id, (uint64_t)attestd_now_ms(), &state) &&
            state == AGENT_STATE_ACTIVE)
                return 0;
        if (!rd->a && api_agent_load(d, req, r, rd->id, &rd->a) < 0)
                return -ENOENT;
        return gate_state(d, r, rd);
}

/* The row the round's challenge kept, else the row read now (r answered, < 0, when none). */
static int round_row(struct attestd *d, const struct api_req *req, struct api_resp *r,
                     struct round *rd)
{
        if (rd->a) { /* the pre-flight check's, or read by stage_gate: checked there */
                metrics_evidence_row(&d->metrics, false);
                return 0;
        }
        if (d->rows && !rd->fresh) {
                rd->a = rowstash_take(d->rows, rd->id, rd->ev->nonce, rd->ev->nonce_len,
                                      (uint64_t)attestd_now_ms());
                rd->kept = rd->a != NULL;
        }
        metrics_evidence_row(&d->metrics, rd->kept);
        if (!rd->a && api_agent_load(d, req, r, rd->id, &rd->a) < 0)
                return -ENOENT;
        return gate_state(d, r, rd);
}

/*
 * The nonce answers the agent's state: no round was judged since it was issued (a replayed
 * submission is refused here, before its quote is checked, and changes nothing).
 */
static int round_nonce(struct attestd *d, struct api_resp *r, const struct round *rd)
{
        struct attest_err err = {0};
        int e = nonce_check_round(
                d->nonces, rd->id,
                &(struct nonce_round){.last_result = rd->a->last_result, .created = rd->a->created},
                rd->ev->nonce, &err);

        if (e == -ESTALE)
                api_error(d, r, nonce_status(err.code), err.code, "$.nonce: %s", err.msg);
        else if (e < 0)
                api_error(d, r, 500, AE_INTERNAL, "nonce check failed");
        return e;
}

static int stage_decode(struct attestd *d, const struct api_req *req, struct api_resp *r,
                        struct round *rd)
{
        struct attest_err err = {0};
        int e;

        if ((e = evidence_from_json(req->body, req->body_len, d->cfg.max_evidence, &rd->ev, &err)) <
            0) {
                api_error(d, r, e == -E2BIG ? 413 : 400, err.code ? err.code : AE_EVIDENCE_JSON,
                          "%s", err.msg);
                return e;
        }
        /* MAC, agent and expiry (no I/O); whether a round was judged since it was issued once
         * the agent's row is known (round_row) */
        if ((e = nonce_check(d->nonces, rd->id, rd->ev->nonce, rd->ev->nonce_len,
                             (uint64_t)attestd_now_ms(), NULL, &err)) < 0) {
                if (e == -ESTALE)
                        api_error(d, r, nonce_status(err.code), err.code, "$.nonce: %s", err.msg);
                else
                        api_error(d, r, 500, AE_INTERNAL, "nonce check failed");
                return e;
        }
        return 0;
}

static const struct rt_policy *round_runtime(const struct round *rd)
{
        return rd->policy ? policy_runtime(policy_cached_policy(rd->policy)) : NULL;
}

/*
 * Verify against the stored state. The failure's class (util/err.h) decides: a verdict of the
 * agent's own TPM and log goes on (0 with !rd->verified and rd->err); anything else refuses the
 * round (answered here, < 0) and changes nothing but the replay reset a reboot calls for.
 */
static int stage_verify(struct attestd *d, struct api_resp *r, struct round *rd)
{
        struct akcache_ref *ak = NULL;
        struct replay_state prev;
        struct verify_input in;
        struct attest_err err = {0};
        const struct rt_policy *rp = round_runtime(rd);
        struct rt_observer obs = {.st = rd->rts};
        const struct verify_observer observer = {
                .begin = rt_observer_begin, .entry = rt_observer_entry, .arg = &obs};
        enum rt_round plan;
        int e, x;

        if (rp && rt_ctx_new(rp, &rd->rt) < 0) {
                api_nomem(d, r);
                return -ENOMEM;
        }
        obs.ctx = rd->rt;
        if (akcache_get(d->aks, rd->id, rd->a->ak_public, rd->a->ak_public_len, &ak, &err) < 0) {
                log_err("agent %s: stored AK does not parse: %s", rd->id, err.msg);
                api_error(d, r, 500, AE_STORE_CORRUPT, "stored AK of %s is unusable", rd->id);
                return -EIO;
        }
        /* decode fills prev and the runtime results whole when it succeeds (and leaves them
         * alone when not) */
        if (!rd->a->replay_state) {
                replay_state_init(&prev);
                rt_state_empty(rd->rts);
        } else if (rt_state_stored_decode(rd->a->replay_state, rd->a->replay_state_len, &prev,
                                          rd->rts, &err) < 0) {
                /* an unreadable state costs a full replay, not the agent */
                log_warning("agent %s: stored replay state unusable (%s): replaying from 0", rd->id,
                            err.msg);
                metrics_replay_reset(&d->metrics, METRICS_RESET_STATE_UNUSABLE);
                replay_state_init(&prev);
                rt_state_empty(rd->rts);
        }
        in = (struct verify_input){
                .ak = akcache_ak(ak),
                .nonce = rd->ev->nonce,
                .nonce_len = rd->ev->nonce_len,
                .sel = &d->pcr_sel,
                .prev = &prev,
                .max_entries = d->cfg.max_entries,
        };
        /* runtime: whether the new entries are judged in the same pass (policy/runtime-state.h) */
        plan = rt_state_for_round(rd->rts, prev.valid, rd->ev->ima_offset, rp ? rd->ref : NULL);
        if (plan == RT_ROUND_AFRESH)
                in.prev = NULL;
        if (plan == RT_ROUND_JUDGE || plan == RT_ROUND_AFRESH)
                in.observer = &observer;
        e = verify_evidence(&in, rd->ev, rd->vr, &rd->err);
        akcache_put(d->aks, ak);
        /* cost bounds: which exclude stopped at its limit (control bytes already '?') */
        if (rd->rt && rt_ctx_exclude_note(rd->rt))
                log_warning("agent %s: %s", rd->id, rt_ctx_exclude_note(rd->rt));
        rd->verified = e == 0;
        if (e == 0 && plan == RT_ROUND_RESTART) {
                /* runtime: another policy judged the earlier entries; start again from 0. Not
                 * an error: the agent asks a fresh challenge at once (counted apart) */
                verify_result_done(rd->vr);
                rd->verified = false;
                x = store_agent_reset_replay(d->store, rd->id, rd->a->seq);
                if (x < 0 && x != -ESTALE) {
                        round_error(d, rd);
                        api_store_error(d, r, x, "replay reset");
                        return x;
                }
                metrics_replay_reset(&d->metrics, METRICS_RESET_RUNTIME_POLICY);
                log_notice("agent %s: runtime policy now %s (was %s): replay restarts from entry 0",
                           rd->id, rd->ref, rd->rts->ref[0] ? rd->rts->ref : "none");
                api_error(d, r, 409, AE_RUNTIME_POLICY_CHANGED,
                          "the runtime policy is now %s: the log must be judged from entry 0; ask "
                          "a new challenge",
                          rd->ref);
                return -ESTALE;
        }
        if (e == 0)
                return 0;
        if (e == -ENOMEM) {
                api_nomem(d, r);
                return e;
        }
        switch (attest_code_class(rd->err.code)) {
        case AEC_VERDICT:
                /* the agent's own TPM and log failed: a stored fail verdict */
                return 0;
        case AEC_STALE:
                round_error(d, rd);
                if (rd->err.code == AE_IMA_OFFSET_REBOOT || rd->err.code == AE_BOOT_OFFSET_REBOOT) {
                        x = store_agent_reset_replay(d->store, rd->id, rd->a->seq);
                        if (x < 0 && x != -ESTALE) {
                                api_store_error(d, r, x, "replay reset");
                                return x;
                        }
                        metrics_replay_reset(&d->metrics, METRICS_RESET_REBOOT);
                        log_notice("agent %s rebooted: replay restarts from entry 0", rd->id);
                        api_error(d, r, 409, rd->err.code, "%s; ask a new challenge", rd->err.msg);
                        return e;
                }
                /* the agent's state moved on (another submission came first): refused */
                api_error(d, r, 409, rd->err.code, "%s", rd->err.msg);
                return e;
        case AEC_SERVER:
                /* ours (a hash or OpenSSL call failed, a bug): the evidence is not judged */
                round_error(d, rd);
                log_err("agent %s: verification failed on our side: %s", rd->id, rd->err.msg);
                api_error(d, r, 500, rd->err.code ? rd->err.code : AE_VERIFY_INTERNAL, "%s",
                          rd->err.msg);
                return e;
        case AEC_UNAUTHENTICATED:
        case AEC_CLIENT:
        default:
                /* not proven to be this agent's fresh quote: anyone could have posted it, so it
                 * changes nothing */
                round_error(d, rd);
                api_error(d, r, e == -EBADMSG ? 400 : 422,
                          rd->err.code ? rd->err.code : AE_QUOTE_INVALID, "%s", rd->err.msg);
                return e;
        }
}

/*
 * The policy that judges the agent: its bound one, else "default" if it exists, else none
 * (*ret NULL). Stored policies were validated on PUT; a parse failure means a newer schema.
 */
static int policy_load(struct attestd *d, const struct store_agent *a, struct policy_cached **ret,
                       char ret_ref[API_POLICY_REF_MAX])
{
        const char *name = a->policy ? a->policy : "default";
        int e;

        *ret = NULL;
        ret_ref[0] = '\0';
        e = policy_cache_get(d->policies, d->store, name, ret, NULL);
        if (e == -ENOENT && !a->policy)
                return 0;
        if (e == -EBADMSG)
                return -EPROTO;
        if (e < 0)
                return e;
        snprintf(ret_ref, API_POLICY_REF_MAX, "%s@%lld", name,
                 (long long)policy_cached_version(*ret));
        return 0;
}

/* The verdict JSON (the network edge) of a round that verified or failed verification. */
/* round.failed_claims holds one bit per claim id: a claim added past 32 must widen it */
_Static_assert(CLAIM__COUNT <= 32, "failed_claims is a 32-bit set of enum claim_id");

/* What failed, for the log line and the per-claim counters. */
static void note_failures(struct round *rd, const struct verdict *v)
{
        size_t at = 0;

        for (size_t i = 0; i < v->n_claims; i++) {
                const struct verdict_claim *c = &v->claims[i];
                char name[VERDICT_ARG_MAX + 64];
                int w;

                if (!verdict_claim_failing(c))
                        continue;
                if ((unsigned)c->id < CLAIM__COUNT)
                        rd->failed_claims |= 1u << c->id;
                verdict_claim_name(c, name, sizeof(name));
                w = snprintf(rd->failing + at, sizeof(rd->failing) - at, "%s%s", at ? ", " : "",
                             name);
                if (w < 0 || (size_t)w >= sizeof(rd->failing) - at) {
                        /* cut: end in "..." rather than mid-name without a word */
                        memcpy(rd->failing + sizeof(rd->failing) - 4, "...", 4);
                        break;
                }
                at += (size_t)w;
        }
}

/* The failing claims as the event's JSON array text: rendered once, here, from the typed verdict
 * (store-outbox.c and webhook.c take it as it is). */
static int failing_json(struct round *rd, const struct verdict *v)
{
        json_auto_t *a = NULL;
        int e;

        if ((e = verdict_failing_to_json(v, &a)) < 0)
                return e;
        free(rd->failing_json);
        rd->failing_json = json_dumps(a, JSON_COMPACT);
        return rd->failing_json ? 0 : -ENOMEM;
}

/* The appraisal of a verdict without claims (not verified, no policy, not judged). */
static void appraise_bare(struct round *rd, enum verdict_status status)
{
        _cleanup_(verdict_done) struct verdict v = {0};

        verdict_init(&v);
        v.status = status;
        ear_appraise(&v, rd->verified, &rd->appraisal);
}

static int verdict_json(struct round *rd, json_t **ret, enum verdict_status *ret_status)
{
        _cleanup_(verdict_done) struct verdict v = {0};
        struct claims c;
        int e;

        if (!rd->verified) {
                rd->reason = attest_code_name(rd->err.code ? rd->err.code : AE_VERIFY_FAILED);
                snprintf(rd->failing, sizeof(rd->failing), "verification: %s: %.256s",
                         attest_code_name(rd->err.code ? rd->err.code : AE_VERIFY_FAILED),
                         rd->err.msg);
                *ret_status = VERDICT_FAIL;
                appraise_bare(rd, VERDICT_FAIL);
                *ret = json_pack("{s:s, s:s?, s:[], s:{s:s, s:s}}", "status", "fail", "policy",
                                 rd->ref[0] ? rd->ref : NULL, "claims", "reason", "code",
                                 attest_code_name(rd->err.code ? rd->err.code : AE_VERIFY_FAILED),
                                 "detail", rd->err.msg);
                return *ret ? 0 : -ENOMEM;
        }
        if (!rd->policy) {
                *ret_status = VERDICT_PASS;
                appraise_bare(rd, VERDICT_PASS);
                *ret = json_pack("{s:s, s:n, s:[], s:s}", "status", "pass", "policy", "claims",
                                 "note",
                                 "no policy bound and no policy named default: nothing "
                                 "checked beyond the quote and the log");
                return *ret ? 0 : -ENOMEM;
        }
        if ((e = claims_from_verified(rd->vr, rd->ev, &c)) < 0)
                return e;
        c.runtime = rd->rts->ref[0] ? rd->rts : NULL; /* runtime: the observer's results */
        if ((e = policy_eval(policy_cached_policy(rd->policy), &c, &v)) < 0)
                return e;
        snprintf(v.policy, sizeof(v.policy), "%s", rd->ref);
        note_failures(rd, &v);
        if ((e = failing_json(rd, &v)) < 0)
                return e;
        *ret_status = v.status;
        ear_appraise(&v, true, &rd->appraisal);
        return verdict_to_json(&v, ret);
}

static const char *round_hostname(const struct round *rd)
{
        return rd->ev->host.hostname[0] ? rd->ev->host.hostname : rd->a->hostname;
}

/* The policy before verification: its ima.runtime section judges entries in the verify pass. */
static int stage_policy(struct attestd *d, struct api_resp *r, struct round *rd)
{
        int e;

        if ((e = policy_load(d, rd->a, &rd->policy, rd->ref)) < 0) {
                if (e == -ENOENT)
                        api_error(d, r, 409, AE_POLICY_NOT_FOUND, "bound policy %s is gone",
                                  rd->a->policy);
                else if (e == -EPROTO) {
                        /* judged as an error once the quote verified (anyone may post a round) */
                        snprintf(rd->unjudged, sizeof(rd->unjudged),
                                 "stored policy %s does not parse",
                                 rd->a->policy ? rd->a->policy : "default");
                        return 0;
                } else
                        api_store_error(d, r, e, "policy lookup");
                return e;
        }
        return 0;
}

/*
 * A verified round that could not be judged: stored as an error result (counted, an agent.error
 * event, the agent's status "error"), never left looking like the previous verdict. The replay
 * state stays the last judged one, so the next round judges these entries again.
 */
static int judge_error(struct attestd *d, struct api_resp *r, struct round *rd, int e)
{
        if (!rd->unjudged[0])
                snprintf(rd->unjudged, sizeof(rd->unjudged), "%s", strerror(-e));
        log_err("agent %s: could not judge this round: %s", rd->id, rd->unjudged);
        json_decref(rd->verdict);
        free(rd->state);
        rd->state = NULL;
        rd->status = VERDICT_ERROR;
        appraise_bare(rd, VERDICT_ERROR);
        rd->failed_claims = 0;
        free(rd->failing_json);
        rd->failing_json = NULL;
        rd->reason = attest_code_name(AE_JUDGE_FAILED);
        snprintf(rd->failing, sizeof(rd->failing), "could not judge: %s", rd->unjudged);
        rd->verdict = json_pack("{s:s, s:s?, s:[], s:{s:s, s:s}}", "status", "error", "policy",
                                rd->ref[0] ? rd->ref : NULL, "claims", "reason", "code",
                                attest_code_name(AE_JUDGE_FAILED), "detail", rd->unjudged);
        if (!rd->verdict) {
                api_error(d, r, 500, AE_INTERNAL, "could not judge");
                return -ENOMEM;
        }
        return 0;
}

static int stage_judge(struct attestd *d, struct api_resp *r, struct round *rd)
{
        json_t *v;
        int e;

        rd->now = attestd_now_ms();
        rd->next_due = rd->now + (int64_t)d->cfg.interval * 1000;
        if (rd->verified && rd->unjudged[0])
                e = -EPROTO;
        else if ((e = verdict_json(rd, &rd->verdict, &rd->status)) == 0 && rd->verified)
                e = rt_state_stored_encode(&rd->vr->next, rd->rts, &rd->state, &rd->state_len);
        if (e < 0 && (!rd->verified || judge_error(d, r, rd, e) < 0)) {
                if (!rd->verified)
                        api_error(d, r, 500, AE_INTERNAL, "could not judge");
                return e;
        }
        v = rd->verdict;
        /* the verdict names the host: as this round reported it, else as last stored */
        if (round_hostname(rd)[0] &&
            json_object_set_new(v, "hostname", json_string(round_hostname(rd))) < 0) {
                api_error(d, r, 500, AE_INTERNAL, "could not judge");
                return -ENOMEM;
        }
        /* "time" and "next_due" are the results row's: api_verdict_text puts them first */
        if ((rd->verified && rd->status != VERDICT_ERROR &&
             json_object_set_new(v, "ima",
                                 json_pack("{s:I, s:I, s:I, s:b, s:b, s:b}", "offset",
                                           (json_int_t)rd->ev->ima_offset, "new_entries",
                                           (json_int_t)rd->vr->new_entries, "entries",
                                           (json_int_t)rd->vr->next.entries, "rebooted",
                                           rd->vr->rebooted, "boot_aggregate_seen",
                                           rd->vr->boot_aggregate_seen, "boot_aggregate_ok",
                                           rd->vr->boot_aggregate_ok)) < 0)) {
                api_error(d, r, 500, AE_INTERNAL, "could not judge");
                return -ENOMEM;
        }
        return 0;
}

/*
 * The verdict's write found the agent's row changed since this round read it (its challenge's
 * row, or the one read at its start): answered from the row as it is now. Nothing was written.
 */
static void answer_moved(struct attestd *d, struct api_resp *r, const struct round *rd)
{
        _cleanup_(store_agent_freep) struct store_agent *now = NULL;
        int e = store_agent_get(d->store, rd->id, &now);

        if (e == -ENOENT)
                api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", rd->id);
        else if (e == 0 && store_agent_active(now) == -EPERM)
                api_error(d, r, 403, AE_AGENT_DECOMMISSIONED,
                          "agent %s was decommissioned by an administrator", rd->id);
        else if (e == 0 && store_agent_active(now) < 0)
                api_error(d, r, 403, AE_AGENT_NOT_ACTIVE,
                          "agent %s has not activated its enrolment credential", rd->id);
        else
                api_error(d, r, 409, AE_AGENT_BUSY,
                          "another submission of this agent was judged meanwhile, or its record "
                          "changed since the challenge; ask a new challenge");
}

/* The result and the agent's next state, in one transaction. */
static int stage_store(struct attestd *d, struct api_resp *r, struct round *rd)
{
        const char *status = verdict_status_name(rd->status), *policy = rd->ref[0] ? rd->ref : NULL;
        bool pass = rd->status == VERDICT_PASS;
        /* a failed or unjudged round keeps the last good state: the next one retries */
        bool advance = rd->verified && rd->status != VERDICT_ERROR;
        struct store_appraisal appraisal;
        const char *stored;
        char esc[512];
        int e;

        /* the text answered (rd->text) and the part of it the results row keeps */
        if (api_verdict_text(rd->verdict, status, policy, rd->now, rd->next_due, &rd->text,
                             &stored) < 0) {
                api_nomem(d, r);
                return -ENOMEM;
        }
        ear_appraisal_to_store(&rd->appraisal, &appraisal);
        struct store_result res = {
                .agent = rd->id,
                .time = rd->now,
                .status = status,
                .policy = policy,
                .verdict = stored,
                .appraisal = &appraisal,
                .failing = rd->failing_json,
                .reason = rd->reason,
                .next_due = rd->next_due,
                .ima_offset = advance ? rd->vr->next.entries : rd->a->ima_offset,
                .replay_state = advance ? rd->state : rd->a->replay_state,
                .replay_state_len = advance ? rd->state_len : rd->a->replay_state_len,
                .kept_known = rd->a->results_kept >= 0,
                .kept = rd->a->results_kept,
        };
        e = store_result_add(d->store, &res, rd->a->seq, d->cfg.retain, &rd->rid);
        /* the row the challenge kept moved on: the caller judges the round again on the row
         * as it is now (api_evidence) */
        if (e == -ESTALE && rd->kept)
                return -EAGAIN;
        if (e == -ESTALE || e == -ENOENT) {
                answer_moved(d, r, rd);
                return e;
        }
        if (e < 0) {
                api_store_error(d, r, e, "result insert");
                return e;
        }
        if (advance)
                metrics_replayed(&d->metrics, rd->vr->new_entries);
        metrics_attestation(&d->metrics,
                            pass                          ? METRICS_PASS
                            : rd->status == VERDICT_ERROR ? METRICS_ERROR
                                                          : METRICS_FAIL,
                            (uint64_t)(mono_us() - rd->t0));
        for (unsigned c = 0; c < CLAIM__COUNT; c++)
                if (rd->failed_claims & (1u << c))
                        metrics_claim_failed(&d->metrics, (enum claim_id)c);
        /* the host's identity as it reports it now (rarely changed: written only then) */
        if (store_agent_identity_differs(rd->a, &rd->ev->host) &&
            (e = store_agent_set_identity(d->store, rd->id, &rd->ev->host)) < 0)
                log_err("agent %s: storing its host identity failed: %s", rd->id, strerror(-e));
        /* one line per verdict change (the first verdict too), naming the host and what failed */
        if (!rd->a->last_status || strcmp(rd->a->last_status, res.status) != 0) {
                char change[160];

                if (rd->a->last_status)
                        snprintf(change, sizeof(change), "%.64s -> %.64s", rd->a->last_status,
                                 res.status);
                else
                        snprintf(change, sizeof(change), "first verdict %.64s", res.status);
                log_escape(rd->failing, sizeof(rd->failing), esc, sizeof(esc));
                log_notice("agent %s host %s: %s%s%s%s, %s%s", rd->id,
                           round_hostname(rd)[0] ? round_hostname(rd) : "-", change,
                           esc[0] ? " (" : "", esc, esc[0] ? ")" : "",
                           rd->ref[0] ? "policy " : "no policy bound (and none named default)",
                           rd->ref);
        }
        return 0;
}

/*
 * The stored verdict with the result id in front: the stored text behind {"id":N, (the bytes
 * jansson wrote for the verdict object with "id" inserted first, without building and dumping
 * the verdict a second time).
 */
static void stage_respond(struct attestd *d, struct api_resp *r, const struct round *rd)
{
        size_t n = strlen(rd->text);
        struct wb w;

        if (wb_new(&w, n + 40) < 0) {
                api_nomem(d, r);
                return;
        }
        if (wb_put_json_int_first(&w, "id", rd->rid, rd->text, n) < 0) {
                wb_free(&w);
                api_error(d, r, 500, AE_INTERNAL, "could not judge");
                return;
        }
        api_resp_text(r, 200, "application/json", (char *)w.p, wb_len(&w));
}

/* One pass of the round; -EAGAIN (r not answered) when its kept row had moved on. */
static int evidence_pass(struct attestd *d, const struct api_req *req, struct api_resp *r,
                         const char *id, bool fresh)
{
        struct verify_result vr;
        struct rt_state rts;
        _cleanup_(round_done) struct round rd = {
                .id = id, .t0 = mono_us(), .vr = &vr, .rts = &rts, .fresh = fresh};
        int e;

        if ((e = stage_gate(d, req, r, &rd)) < 0 || (e = stage_decode(d, req, r, &rd)) < 0 ||
            (e = round_row(d, req, r, &rd)) < 0 || (e = round_nonce(d, r, &rd)) < 0 ||
            (e = stage_policy(d, r, &rd)) < 0 || (e = stage_verify(d, r, &rd)) < 0 ||
            (e = stage_judge(d, r, &rd)) < 0 || (e = stage_store(d, r, &rd)) < 0)
                return e;
        stage_respond(d, r, &rd);
        return 0;
}

/*
 * The round on the row its challenge kept; when that row moved on before the verdict was written
 * (an operator bound a policy, another instance judged a round: nothing was written), once more
 * on the row as the store has it now, so that an operator's change between challenge and
 * evidence costs the agent nothing. A second refusal is answered (answer_moved).
 */
void api_evidence(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id)
{
        if (evidence_pass(d, req, r, id, false) == -EAGAIN)
                (void)evidence_pass(d, req, r, id, true);
}
