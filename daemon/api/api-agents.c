/* SPDX-License-Identifier: MIT */
/* The agents API: list, get, delete, decommission, readmit, bind a policy, results. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "daemon/api/api-internal.h"
#include "daemon/log.h"
#include "util/buf.h"
#include "util/hex.h"

/* ---- agents ---- */

#define API_AGENTS_LIMIT 100      /* GET /v1/agents: agents a page by default */
#define API_AGENTS_LIMIT_MAX 1000 /* and at most (?limit=) */
#define API_QUERY_VALUE_MAX 4096  /* a query value looked at (longer ones fail their check) */

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
 * GET /v1/agents?status=S&label=K=V&hostname=H&limit=N&cursor=C (reader); docs/api.md. Each
 * parameter at most once except label (at most STORE_LABEL_FILTERS_MAX, all must match); bad
 * input is 400 bad_query naming the parameter.
 */
void api_agents_list(struct attestd *d, const struct api_req *req, struct api_resp *r,
                     const char *id)
{
        static const char *const q[] = {"status", "label", "hostname", "limit", "cursor"};
        static const char *const once[] = {"status", "hostname", "limit", "cursor"};
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

int api_agent_load(struct attestd *d, struct api_resp *r, const char *id, struct store_agent **ret)
{
        int e = store_agent_get(d->store, id, ret);

        if (e == -ENOENT)
                api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", id);
        else if (e < 0)
                api_store_error(d, r, e, "agent lookup");
        return e;
}

/*
 * A verdict as the store holds it (the compact JSON stage_store rendered from the typed verdict)
 * is embedded in answers as it is: never parsed back (DESIGN §1). Text that is not an object
 * goes out as null.
 */
static const char *stored_verdict(const char *text, size_t *ret_len)
{
        size_t n = text ? strlen(text) : 0;

        if (n < 2 || text[0] != '{' || text[n - 1] != '}') {
                *ret_len = 4;
                return "null";
        }
        *ret_len = n;
        return text;
}

/*
 * o's compact text (o's reference stolen) with "key": the stored verdict text last, written to
 * a new exact-size buffer *ret (its length *ret_len); -ENOMEM.
 */
static int json_with_verdict(json_t *o, const char *key, const char *verdict, char **ret,
                             size_t *ret_len)
{
        _cleanup_free_ char *head = json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY);
        size_t hn = head ? strlen(head) : 0, vn, max;
        const char *v = stored_verdict(verdict, &vn);
        struct wb w;
        char *p;

        json_decref(o);
        if (!head)
                return -ENOMEM;
        /* head, ",\"" key "\":" verdict: each below half of SIZE_MAX (they are in memory) */
        max = hn + strlen(key) + vn + 4;
        p = malloc(max);
        if (!p)
                return -ENOMEM;
        wb_init(&w, p, max);
        if (wb_put_json_raw_last(&w, head, hn, key, v, vn) < 0) {
                free(p);
                return -ENOMEM;
        }
        *ret = p;
        *ret_len = wb_len(&w);
        return 0;
}

/* The newest result's stored verdict text, copied into *(char **)arg. */
static int last_verdict_one(int64_t rid, int64_t time, const char *status, const char *policy,
                            const char *verdict, void *arg)
{
        char **ret = arg;

        (void)rid;
        (void)time;
        (void)status;
        (void)policy;
        free(*ret);
        *ret = verdict ? strdup(verdict) : NULL;
        return verdict && !*ret ? -ENOMEM : 0;
}

void api_agent_get(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *id)
{
        _cleanup_(store_agent_freep) struct store_agent *a = NULL;
        _cleanup_free_ char *verdict = NULL;
        char namehex[2 * QUOTE_NAME_MAX + 1] = "";
        char *body;
        size_t n;
        json_t *o;
        int e;

        (void)req;
        if (api_agent_load(d, r, id, &a) < 0)
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
        o = agent_json(d, a, attestd_now_ms());
        if (!o || json_object_set_new(o, "ak_name", json_string(namehex)) < 0) {
                json_decref(o);
                api_nomem(d, r);
                return;
        }
        /* the last member, where json_object_set_new put it when the text was parsed */
        if (json_with_verdict(o, "last_verdict", verdict, &body, &n) < 0) {
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

struct results {
        char **rows; /* each row's answer text, its verdict in it as stored */
        size_t *lens;
        size_t n, cap; /* cap: the limit */
        size_t bytes;  /* of the rows, together */
        int64_t last;
};

static void results_done(struct results *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->rows[i]);
        free(l->rows);
        free(l->lens);
}

static int results_one(int64_t rid, int64_t time, const char *status, const char *policy,
                       const char *verdict, void *arg)
{
        struct results *l = arg;
        json_t *o;
        int e;

        l->last = rid;
        if (l->n == l->cap) /* the store hands out limit rows at most */
                return -E2BIG;
        o = json_pack("{s:I, s:o, s:s, s:s?}", "id", (json_int_t)rid, "time", api_time_json(time),
                      "status", status ? status : "", "policy", policy);
        if (!o)
                return -ENOMEM;
        if ((e = json_with_verdict(o, "verdict", verdict, &l->rows[l->n], &l->lens[l->n])) < 0)
                return e;
        l->bytes += l->lens[l->n++];
        return 0;
}

/* What the results answer has between its head, its rows and next_before. */
static const char results_mid[] = ",\"results\":[", results_tail[] = "],\"next_before\":";

/* The answer's parts into w, in order (the caller sized w for them). */
static int results_put(struct wb *w, const char *head, size_t hn, const struct results *l,
                       const char *next)
{
        int e;

        /* head: {"id":ID} without its "}" */
        if ((e = wb_put(w, head, hn - 1)) < 0 ||
            (e = wb_put(w, results_mid, sizeof(results_mid) - 1)) < 0)
                return e;
        for (size_t i = 0; i < l->n; i++)
                if ((i && (e = wb_put_u8(w, ',')) < 0) ||
                    (e = wb_put(w, l->rows[i], l->lens[i])) < 0)
                        return e;
        if ((e = wb_put(w, results_tail, sizeof(results_tail) - 1)) < 0 ||
            (e = wb_put(w, next, strlen(next))) < 0)
                return e;
        return wb_put_u8(w, '}');
}

/*
 * {"id":ID,"results":[rows],"next_before":N|null} into a new writer *ret, the bytes jansson
 * wrote for it when the rows were parsed verdicts; -ENOMEM.
 */
static int results_answer(const char *id, const struct results *l, bool more, struct wb *ret)
{
        json_t *o = json_pack("{s:s}", "id", id);
        _cleanup_free_ char *head = o ? json_dumps(o, JSON_COMPACT) : NULL;
        char next[24];
        size_t hn, max;
        struct wb w;
        int e;

        json_decref(o);
        if (!head)
                return -ENOMEM;
        hn = strlen(head);
        if (more)
                snprintf(next, sizeof(next), "%" PRId64, l->last);
        else
                snprintf(next, sizeof(next), "null");
        /* head without "}", the rows with a comma each at most, next and "}" */
        max = hn - 1 + sizeof(results_mid) - 1 + l->bytes + l->n + sizeof(results_tail) - 1 +
              strlen(next) + 1;
        if (wb_new(&w, max) < 0)
                return -ENOMEM;
        if ((e = results_put(&w, head, hn, l, next)) < 0) {
                wb_free(&w);
                return e;
        }
        *ret = w;
        return 0;
}

void api_agent_results(struct attestd *d, const struct api_req *req, struct api_resp *r,
                       const char *id)
{
        static const char *const q[] = {"limit", "before"};
        uint64_t limit = 20, before = 0;
        _cleanup_(results_done) struct results l = {0};
        struct wb w;
        int e;

        if (api_query_check(d, req, r, q, ARRAY_SIZE(q)) < 0 ||
            api_query_u64(d, req, r, "limit", 1, 1000, &limit) < 0 ||
            api_query_u64(d, req, r, "before", 1, INT64_MAX, &before) < 0)
                return;
        l.rows = calloc(limit, sizeof(*l.rows));
        l.lens = calloc(limit, sizeof(*l.lens));
        if (!l.rows || !l.lens) {
                api_nomem(d, r);
                return;
        }
        l.cap = limit;
        e = store_results_list(d->store, id, limit, (int64_t)before, results_one, &l);
        if (e < 0) {
                if (e == -ENOENT)
                        api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", id);
                else if (e == -ENOMEM)
                        api_nomem(d, r);
                else
                        api_store_error(d, r, e, "results");
                return;
        }
        if (results_answer(id, &l, l.n == limit, &w) < 0) {
                api_nomem(d, r);
                return;
        }
        api_resp_text(r, 200, "application/json", (char *)w.p, wb_len(&w));
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
