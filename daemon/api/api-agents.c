/* SPDX-License-Identifier: MIT */
/* The agents API: list, get, delete, decommission, readmit, bind a policy; the refused EKs. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "daemon/api/api-internal.h"
#include "daemon/ear.h"
#include "daemon/log.h"
#include "util/buf.h"
#include "util/hex.h"

/* ---- agents ---- */

#define API_AGENTS_LIMIT 100      /* GET /v1/agents: agents a page by default */
#define API_AGENTS_LIMIT_MAX 1000 /* and at most (?limit=) */
#define API_QUERY_VALUE_MAX 4096  /* a query value looked at (longer ones fail their check) */
#define API_PREFIX_MIN 4          /* ?prefix=: characters of an id at least */

bool api_agent_stale(const struct attestd *d, const struct store_agent *a, int64_t now)
{
        /* never attested: due one interval after enrolment */
        int64_t due = a->next_due ? a->next_due : a->created + (int64_t)d->cfg.interval * 1000;

        return now > due + (int64_t)d->cfg.grace * 1000;
}

/* The stored labels (a JSON object text the store wrote), {} before any report. */
static json_t *labels_json(const struct store_agent *a)
{
        json_t *o = a->labels ? json_loads(a->labels, JSON_REJECT_DUPLICATES, NULL) : NULL;

        if (o && json_is_object(o))
                return o;
        json_decref(o);
        return json_object();
}

static json_t *agent_json(const struct attestd *d, const struct store_agent *a, int64_t now)
{
        bool stale = api_agent_stale(d, a, now);

        return json_pack("{s:s, s:s, s:b, s:s?, s:o, s:o, s:o, s:s?, s:s?, s:I, s:s?, s:s?, s:o}",
                         "id", a->id, "state", stale ? "stale" : agent_state_name(a->state),
                         "stale", stale, "policy", a->policy, "created", api_time_json(a->created),
                         "last_seen", api_time_json(a->last_seen), "next_due",
                         api_time_json(a->next_due), "last_status", a->last_status, "last_policy",
                         a->last_policy, "ima_offset", (json_int_t)a->ima_offset, "hostname",
                         a->hostname[0] ? a->hostname : NULL, "machine_id",
                         a->machine_id[0] ? a->machine_id : NULL, "labels", labels_json(a));
}

struct agents_list {
        const struct attestd *d;
        json_t *arr;
        int64_t now;
        uint64_t limit, n;
        char last[STORE_ID_MAX + 1]; /* id of the last agent listed */
        bool more;                   /* a row past the limit exists */
};

static int agents_list_one(const struct store_agent *a, void *arg)
{
        struct agents_list *l = arg;
        json_t *o;

        if (l->n == l->limit) {
                l->more = true;
                return 0;
        }
        o = agent_json(l->d, a, l->now);
        if (!o || json_array_append_new(l->arr, o) < 0)
                return -ENOMEM;
        l->n++;
        snprintf(l->last, sizeof(l->last), "%s", a->id);
        return 0;
}

/* How often key is among the query parameters. */
static unsigned query_count(const struct api_req *req, const char *key)
{
        unsigned n = 0;

        for (size_t i = 0; i < req->nquery; i++)
                n += !strcmp(req->qkey[i], key);
        return n;
}

/* The cursor: the hex of the last id of the previous page (opaque to clients). */
static int cursor_parse(const char *s, char out[STORE_ID_MAX + 1])
{
        size_t n = strnlen(s, 2 * STORE_ID_MAX + 1), got;
        uint8_t id[STORE_ID_MAX];

        if (n == 0 || n > 2 * STORE_ID_MAX || hex_decode(s, n, id, sizeof(id), &got) < 0 ||
            !api_id_valid((const char *)id, got))
                return -EBADMSG;
        memcpy(out, id, got);
        out[got] = '\0';
        return 0;
}

/*
 * GET /v1/agents?status=S&label=K=V&hostname=H&prefix=P&policy=NAME&limit=N&cursor=C (reader);
 * docs/api.md. Each parameter at most once except label (at most STORE_LABEL_FILTERS_MAX, all
 * must match); bad input is 400 bad_query naming the parameter.
 */
void api_agents_list(struct attestd *d, const struct api_req *req, struct api_resp *r,
                     const char *id)
{
        static const char *const q[] = {"status", "label",  "hostname", "limit",
                                        "cursor", "prefix", "policy"};
        static const char *const once[] = {"status", "hostname", "limit",
                                           "cursor", "prefix",   "policy"};
        struct agents_list l = {.d = d, .now = attestd_now_ms(), .limit = API_AGENTS_LIMIT};
        struct store_agent_filter f = {0};
        char after[STORE_ID_MAX + 1], *next = NULL;
        char lk[STORE_LABEL_FILTERS_MAX][EVIDENCE_LABEL_KEY_MAX + 1];
        char hex[2 * STORE_ID_MAX + 1];
        int e;

        (void)id;
        if (api_query_check(d, req, r, q, ARRAY_SIZE(q)) < 0)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(once); i++)
                if (query_count(req, once[i]) > 1) {
                        api_error(d, r, 400, AE_BAD_QUERY, "%s: given more than once", once[i]);
                        return;
                }
        if (api_query_u64(d, req, r, "limit", 1, API_AGENTS_LIMIT_MAX, &l.limit) < 0)
                return;
        for (size_t i = 0; i < req->nquery; i++) {
                const char *k = req->qkey[i], *v = req->qval[i] ? req->qval[i] : "";
                size_t vn = strnlen(v, API_QUERY_VALUE_MAX + 1);

                if (!strcmp(k, "status")) {
                        f.status = STORE_STATUS__COUNT;
                        for (int s = 1; s < STORE_STATUS__COUNT; s++)
                                if (!strcmp(v, store_status_name((enum store_status)s)))
                                        f.status = (enum store_status)s;
                        if (f.status == STORE_STATUS__COUNT) {
                                api_error(d, r, 400, AE_BAD_QUERY,
                                          "status: expected pending, active, decommissioned, "
                                          "pass, fail, failing, stale or never");
                                return;
                        }
                } else if (!strcmp(k, "hostname")) {
                        if (!evidence_hostname_valid(v, vn)) {
                                api_error(d, r, 400, AE_BAD_QUERY,
                                          "hostname: expected 1..%d of [A-Za-z0-9._-]",
                                          EVIDENCE_HOSTNAME_MAX);
                                return;
                        }
                        f.hostname = v;
                } else if (!strcmp(k, "prefix") || !strcmp(k, "policy")) {
                        bool prefix = !strcmp(k, "prefix");

                        /* a prefix too short to narrow the search is refused, not listed */
                        if (prefix && (!api_id_valid(v, vn) || vn < API_PREFIX_MIN)) {
                                api_error(d, r, 400, AE_BAD_QUERY,
                                          "prefix: expected %d..%d of [A-Za-z0-9_.-] (the start "
                                          "of an agent id)",
                                          API_PREFIX_MIN, API_ID_MAX);
                                return;
                        }
                        if (!prefix && !api_id_valid(v, vn)) {
                                api_error(d, r, 400, AE_BAD_QUERY,
                                          "policy: expected a policy name");
                                return;
                        }
                        if (prefix)
                                f.prefix = v;
                        else
                                f.policy = v;
                } else if (!strcmp(k, "cursor")) {
                        if (cursor_parse(v, after) < 0) {
                                api_error(d, r, 400, AE_BAD_QUERY,
                                          "cursor: not a cursor this API returned");
                                return;
                        }
                        f.after = after;
                } else if (!strcmp(k, "label")) {
                        const char *eq = memchr(v, '=', vn);
                        size_t kn = eq ? (size_t)(eq - v) : 0;

                        if (f.n_labels == STORE_LABEL_FILTERS_MAX) {
                                api_error(d, r, 400, AE_BAD_QUERY, "label: at most %d",
                                          STORE_LABEL_FILTERS_MAX);
                                return;
                        }
                        if (!eq || !evidence_label_key_valid(v, kn) ||
                            !evidence_label_value_valid(eq + 1, vn - kn - 1)) {
                                api_error(d, r, 400, AE_BAD_QUERY,
                                          "label: expected KEY=VALUE (key 1..%d of [a-z0-9._-], "
                                          "value 1..%d of [A-Za-z0-9._-])",
                                          EVIDENCE_LABEL_KEY_MAX, EVIDENCE_LABEL_VALUE_MAX);
                                return;
                        }
                        memcpy(lk[f.n_labels], v, kn);
                        lk[f.n_labels][kn] = '\0';
                        f.label_key[f.n_labels] = lk[f.n_labels];
                        f.label_value[f.n_labels] = eq + 1;
                        f.n_labels++;
                }
        }
        if (!(l.arr = json_array())) {
                api_nomem(d, r);
                return;
        }
        f.limit = l.limit + 1; /* one more: is there a next page? */
        f.now = l.now;
        f.grace = (int64_t)d->cfg.grace * 1000;
        f.interval = (int64_t)d->cfg.interval * 1000;
        if ((e = store_agent_query(d->store, &f, agents_list_one, &l)) < 0) {
                json_decref(l.arr);
                api_store_error(d, r, e, "agent list");
                return;
        }
        if (l.more) {
                hex_encode((const uint8_t *)l.last, strlen(l.last), hex);
                next = hex;
        }
        if (api_json(r, 200, json_pack("{s:o, s:s?}", "agents", l.arr, "next", next)) < 0)
                api_nomem(d, r);
}

struct store_agent *api_req_agent(const struct api_req *req, const char *id)
{
        struct store_agent *a;

        if (!req || !req->agent || !*req->agent || strcmp((*req->agent)->id, id) != 0)
                return NULL;
        a = *req->agent;
        *req->agent = NULL;
        return a;
}

int api_agent_load(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id,
                   struct store_agent **ret)
{
        int e;

        if ((*ret = api_req_agent(req, id)))
                return 0;
        e = store_agent_get(d->store, id, ret);

        if (e == -ENOENT)
                api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", id);
        else if (e < 0)
                api_store_error(d, r, e, "agent lookup");
        return e;
}

/* The newest result's stored verdict text, copied into *(char **)arg. */
static int last_verdict_one(const struct store_result_row *row, void *arg)
{
        char **ret = arg;
        int e;

        free(*ret);
        *ret = NULL;
        if ((e = api_verdict_full(row, ret)) < 0 || *ret)
                return e;
        *ret = row->verdict ? strdup(row->verdict) : NULL;
        return row->verdict && !*ret ? -ENOMEM : 0;
}

/*
 * The EAR status (ear.status, docs/ear.md) of the agent's newest result, NULL when it has none
 * (no result, or one stored before appraisals were): what GET /v1/agents/{id}/ear would sign.
 * A row that cannot be read is logged and NULL (the agent's answer does not fail over it).
 */
static const char *latest_ear_status(struct attestd *d, const char *id)
{
        struct store_result_head l;
        struct ear_appraisal ap;
        struct attest_err err = {0};

        if (store_result_latest(d->store, id, &l) < 0 || !l.has_appraisal)
                return NULL;
        if (ear_appraisal_from_store(&l.appraisal, &ap, &err) < 0) {
                log_err("agent %s, result %lld: %s", id, (long long)l.id, err.msg);
                return NULL;
        }
        return ear_status_name(ap.status);
}

void api_agent_get(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id)
{
        _cleanup_(store_agent_freep) struct store_agent *a = NULL;
        _cleanup_free_ char *verdict = NULL;
        char namehex[2 * QUOTE_NAME_MAX + 1] = "";
        const char *ear;
        char *body;
        size_t n;
        json_t *o;
        int e;

        if (api_agent_load(d, req, r, id, &a) < 0)
                return;
        if (a->last_result &&
            (e = store_results_list(d->store, id, 1, 0, last_verdict_one, &verdict)) < 0 &&
            e != -ENOENT) {
                if (e == -ENOMEM)
                        api_nomem(d, r);
                else
                        api_store_error(d, r, e, "result lookup");
                return;
        }
        if (a->ak_name_len <= QUOTE_NAME_MAX)
                hex_encode(a->ak_name, a->ak_name_len, namehex);
        ear = a->last_result ? latest_ear_status(d, id) : NULL;
        o = agent_json(d, a, attestd_now_ms());
        if (!o || json_object_set_new(o, "ak_name", json_string(namehex)) < 0 ||
            json_object_set_new(o, "ear_status", ear ? json_string(ear) : json_null()) < 0) {
                json_decref(o);
                api_nomem(d, r);
                return;
        }
        /* the last member, where json_object_set_new put it when the text was parsed */
        if (api_json_with_verdict(o, "last_verdict", verdict, &body, &n) < 0) {
                api_nomem(d, r);
                return;
        }
        api_resp_text(r, 200, "application/json", body, n);
}

void api_agent_delete(struct attestd *d, const struct api_req *req, struct api_resp *r,
                      const char *id)
{
        int e = store_agent_delete(d->store, id, attestd_now_ms());

        (void)req;
        if (e == -ENOENT) {
                api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", id);
                return;
        }
        if (e < 0) {
                api_store_error(d, r, e, "agent delete");
                return;
        }
        akcache_drop(d->aks, id);
        log_info("agent %s deleted", id);
        api_resp_text(r, 204, NULL, NULL, 0);
}

/*
 * POST /v1/agents/{id}/decommission (admin): the agent is refused (challenges, evidence,
 * activation: 403 agent_decommissioned) and its EK at enrolment (403 ek_decommissioned) until
 * POST /v1/agents/{id}/readmit. No body.
 */
void api_agent_decommission(struct attestd *d, const struct api_req *req, struct api_resp *r,
                            const char *id)
{
        json_auto_t *o = NULL;
        int e;

        if (api_parse_body(d, req, r, true, &o) < 0 || api_check_fields(d, r, o, "$", NULL, 0) < 0)
                return;
        e = store_agent_decommission(d->store, id, attestd_now_ms());
        if (e == -ENOENT) {
                api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", id);
                return;
        }
        if (e < 0) {
                api_store_error(d, r, e, "decommission");
                return;
        }
        akcache_drop(d->aks, id);
        log_notice("agent %s decommissioned: it and its EK are refused until readmitted", id);
        if (api_json(r, 200,
                     json_pack("{s:s, s:s}", "id", id, "state",
                               agent_state_name(AGENT_STATE_DECOMMISSIONED))) < 0)
                api_nomem(d, r);
}

/* POST /v1/agents/{id}/readmit (admin): lifts a decommission (also of a deleted agent's EK). */
void api_agent_readmit(struct attestd *d, const struct api_req *req, struct api_resp *r,
                       const char *id)
{
        _cleanup_(store_agent_freep) struct store_agent *a = NULL;
        json_auto_t *o = NULL;
        int e;

        if (api_parse_body(d, req, r, true, &o) < 0 || api_check_fields(d, r, o, "$", NULL, 0) < 0)
                return;
        e = store_agent_readmit(d->store, id, attestd_now_ms());
        if (e == -ENOENT) {
                api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent or decommissioned EK of %s", id);
                return;
        }
        if (e == -EALREADY) {
                api_error(d, r, 409, AE_AGENT_NOT_DECOMMISSIONED, "agent %s is not decommissioned",
                          id);
                return;
        }
        if (e < 0) {
                api_store_error(d, r, e, "readmit");
                return;
        }
        log_notice("agent %s readmitted", id);
        e = store_agent_get(d->store, id, &a);
        if (api_json(r, 200,
                     json_pack("{s:s, s:s}", "id", id, "state",
                               e == 0 ? agent_state_name(a->state) : "forgotten")) < 0)
                api_nomem(d, r);
}

void api_agent_policy(struct attestd *d, const struct api_req *req, struct api_resp *r,
                      const char *id)
{
        static const char *const fields[] = {"policy"};
        json_auto_t *o = NULL;
        json_t *p;
        const char *name = NULL;
        int e;

        if (api_parse_body(d, req, r, false, &o) < 0 ||
            api_check_fields(d, r, o, "$", fields, ARRAY_SIZE(fields)) < 0)
                return;
        p = json_object_get(o, "policy");
        if (!p) {
                api_error(d, r, 400, AE_MISSING_FIELD, "$.policy: required (a name or null)");
                return;
        }
        if (!json_is_null(p)) {
                if (!json_is_string(p) ||
                    !api_id_valid(json_string_value(p), json_string_length(p))) {
                        api_error(d, r, 400, AE_BAD_FIELD, "$.policy: expected a policy name");
                        return;
                }
                name = json_string_value(p);
        }
        e = store_agent_set_policy(d->store, id, name);
        if (e == -ENOENT) {
                api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", id);
                return;
        }
        if (e == -ENODATA) {
                api_error(d, r, 404, AE_POLICY_NOT_FOUND, "$.policy: no policy %s", name);
                return;
        }
        if (e < 0) {
                api_store_error(d, r, e, "policy binding");
                return;
        }
        log_info("agent %s bound to policy %s", id, name ? name : "(default)");
        if (api_json(r, 200, json_pack("{s:s, s:s?}", "id", id, "policy", name)) < 0)
                api_nomem(d, r);
}

static void stale_one(const char *id, const char *hostname, const char *last_status,
                      int64_t last_seen, void *arg)
{
        char seen[API_TIME_MAX];

        (void)arg;
        api_time(last_seen, seen);
        log_notice("agent %s host %s: stale (last verdict %s, last seen %s)", id,
                   hostname[0] ? hostname : "-", last_status ? last_status : "none",
                   seen[0] ? seen : "never");
}

void api_stale_scan(struct attestd *d)
{
        int e = store_agent_stale_scan(d->store, attestd_now_ms(), (int64_t)d->cfg.grace * 1000,
                                       (int64_t)d->cfg.interval * 1000, stale_one, NULL);

        if (e < 0)
                log_warning("stale scan: %s", strerror(-e));
}

/* ---- the refused EKs ---- */

#define API_REFUSED_LIMIT 100      /* GET /v1/refused-eks: rows a page by default */
#define API_REFUSED_LIMIT_MAX 1000 /* and at most */

struct refused_list {
        json_t *arr;
        uint64_t limit, n;
        char last[STORE_ID_MAX + 1]; /* the cursor: the last row's agent and EK */
        uint8_t last_ek[STORE_EK_ID_LEN];
        bool more;
};

static int refused_one(const uint8_t ek_id[STORE_EK_ID_LEN], const char *agent, int64_t time,
                       bool agent_exists, void *arg)
{
        struct refused_list *l = arg;
        char ekhex[2 * STORE_EK_ID_LEN + 1];
        json_t *o;

        if (l->n == l->limit) {
                l->more = true;
                return 0;
        }
        hex_encode(ek_id, STORE_EK_ID_LEN, ekhex);
        o = json_pack("{s:s, s:s, s:o, s:b}", "agent", agent, "ek_id", ekhex, "time",
                      api_time_json(time), "agent_deleted", !agent_exists);
        if (!o || json_array_append_new(l->arr, o) < 0)
                return -ENOMEM;
        l->n++;
        snprintf(l->last, sizeof(l->last), "%s", agent);
        memcpy(l->last_ek, ek_id, STORE_EK_ID_LEN);
        return 0;
}

/* The refused EKs' cursor: hex(agent id) "." hex(EK id) of the previous page's last row. */
static int refused_cursor_parse(const char *s, char agent[STORE_ID_MAX + 1],
                                uint8_t ek[STORE_EK_ID_LEN])
{
        const char *dot = strchr(s, '.');
        size_t got;

        if (!dot || strlen(dot + 1) != 2 * STORE_EK_ID_LEN ||
            hex_decode(dot + 1, 2 * STORE_EK_ID_LEN, ek, STORE_EK_ID_LEN, &got) < 0 ||
            got != STORE_EK_ID_LEN || (size_t)(dot - s) > 2 * STORE_ID_MAX)
                return -EBADMSG;
        {
                char hex[2 * STORE_ID_MAX + 1];

                memcpy(hex, s, (size_t)(dot - s));
                hex[dot - s] = '\0';
                return cursor_parse(hex, agent);
        }
}

/*
 * GET /v1/refused-eks?prefix=P&limit=N&cursor=C (reader; docs/api.md): the EKs refused at
 * enrolment since their agent was decommissioned, also after the agent was deleted (then
 * invisible in the agent list): the agent id to readmit, the EK's identity, when.
 */
void api_refused_eks(struct attestd *d, const struct api_req *req, struct api_resp *r,
                     const char *id)
{
        static const char *const q[] = {"prefix", "limit", "cursor"};
        struct refused_list l = {.limit = API_REFUSED_LIMIT};
        char after[STORE_ID_MAX + 1], cur[4 * STORE_ID_MAX + 2];
        uint8_t after_ek[STORE_EK_ID_LEN];
        const char *prefix = NULL, *cursor = NULL;
        bool have_cursor = false;
        int e;

        (void)id;
        if (api_query_check(d, req, r, q, ARRAY_SIZE(q)) < 0)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(q); i++)
                if (query_count(req, q[i]) > 1) {
                        api_error(d, r, 400, AE_BAD_QUERY, "%s: given more than once", q[i]);
                        return;
                }
        if (api_query_u64(d, req, r, "limit", 1, API_REFUSED_LIMIT_MAX, &l.limit) < 0)
                return;
        for (size_t i = 0; i < req->nquery; i++) {
                const char *v = req->qval[i] ? req->qval[i] : "";
                size_t vn = strnlen(v, API_QUERY_VALUE_MAX + 1);

                if (!strcmp(req->qkey[i], "prefix")) {
                        if (!api_id_valid(v, vn) || vn < API_PREFIX_MIN) {
                                api_error(d, r, 400, AE_BAD_QUERY,
                                          "prefix: expected %d..%d of [A-Za-z0-9_.-] (the start "
                                          "of an agent id)",
                                          API_PREFIX_MIN, API_ID_MAX);
                                return;
                        }
                        prefix = v;
                } else if (!strcmp(req->qkey[i], "cursor")) {
                        if (vn > API_QUERY_VALUE_MAX ||
                            refused_cursor_parse(v, after, after_ek) < 0) {
                                api_error(d, r, 400, AE_BAD_QUERY,
                                          "cursor: not a cursor this API returned");
                                return;
                        }
                        have_cursor = true;
                }
        }
        if (!(l.arr = json_array())) {
                api_nomem(d, r);
                return;
        }
        /* one more: is there a next page? */
        e = store_ek_refused_list(d->store, have_cursor ? after : NULL,
                                  have_cursor ? after_ek : NULL, prefix, l.limit + 1, refused_one,
                                  &l);
        if (e < 0) {
                json_decref(l.arr);
                if (e == -ENOMEM)
                        api_nomem(d, r);
                else
                        api_store_error(d, r, e, "refused EK list");
                return;
        }
        if (l.more) {
                size_t n = strlen(l.last);

                hex_encode((const uint8_t *)l.last, n, cur);
                cur[2 * n] = '.';
                hex_encode(l.last_ek, STORE_EK_ID_LEN, cur + 2 * n + 1);
                cursor = cur;
        }
        if (api_json(r, 200, json_pack("{s:o, s:s?}", "refused_eks", l.arr, "next", cursor)) < 0)
                api_nomem(d, r);
}
