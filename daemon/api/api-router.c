/* SPDX-License-Identifier: MIT */
/* The REST API's router: the route table, dispatch, and the response and request helpers. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "daemon/api/api-internal.h"
#include "daemon/log.h"
#include "daemon/webhook.h"
#include "util/clock.h"
#include "util/hex.h"
#include "util/tok.h"

/* ---- responses ---- */

void api_resp_done(struct api_resp *r)
{
        free(r->body);
        r->body = NULL;
        r->body_len = 0;
}

void api_resp_text(struct api_resp *r, unsigned status, const char *ctype, char *body, size_t len)
{
        free(r->body);
        r->status = status;
        r->content_type = ctype;
        r->body = body;
        r->body_len = len;
}

void api_error(struct attestd *d, struct api_resp *r, unsigned status, enum attest_code code,
               const char *fmt, ...)
{
        char detail[512];
        json_t *o;
        char *s;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        r->error = code;
        if (d)
                metrics_rejected(&d->metrics, code);
        /* detail may hold agent bytes: jansson escapes them; invalid UTF-8 is replaced */
        o = json_pack("{s:s, s:s?}", "error", attest_code_name(code), "detail", detail);
        if (!o) {
                o = json_pack("{s:s, s:s}", "error", attest_code_name(code), "detail",
                              "(detail not valid UTF-8)");
        }
        s = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        if (!s) {
                api_resp_text(r, 500, "application/json", NULL, 0);
                return;
        }
        api_resp_text(r, status, "application/json", s, strlen(s));
}

int api_json(struct api_resp *r, unsigned status, json_t *o)
{
        char *s = json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY);

        json_decref(o);
        if (!s)
                return -ENOMEM;
        api_resp_text(r, status, "application/json", s, strlen(s));
        return 0;
}

void api_nomem(struct attestd *d, struct api_resp *r)
{
        api_error(d, r, 500, AE_INTERNAL, "out of memory");
}

void api_store_error(struct attestd *d, struct api_resp *r, int e, const char *what)
{
        if (e == -EAGAIN) {
                /* every pooled connection stayed taken for --db-wait-ms (counted by the store,
                 * attestd_db_pool_exhausted_total): try again shortly */
                r->retry_after = 1;
                api_error(d, r, 503, AE_STORE_BUSY,
                          "%s: no database connection free within %llu ms", what,
                          (unsigned long long)d->cfg.db_wait_ms);
                return;
        }
        if (e == -ENOTCONN) {
                /* the database is gone (PostgreSQL restarting, its primary lost and a standby
                 * not yet promoted): the connection is tried again on its next use; one log line
                 * a second at most however many requests fail */
                static _Atomic int64_t last;
                static atomic_uint_fast64_t quiet;
                int64_t now = mono_ms(), l = atomic_load(&last);

                if (now - l >= 1000 && atomic_compare_exchange_strong(&last, &l, now))
                        log_warning("store: %s failed: the database is unreachable (%llu more "
                                    "such failures since the last line)",
                                    what, (unsigned long long)atomic_exchange(&quiet, 0));
                else
                        atomic_fetch_add(&quiet, 1);
                r->retry_after = 1;
                api_error(d, r, 503, AE_STORE_UNAVAILABLE, "%s: the database is unreachable", what);
                return;
        }
        log_err("store: %s failed: %s", what, strerror(-e));
        api_error(d, r, 500, AE_STORE_FAILED, "%s failed", what);
}

void api_time(int64_t ms, char out[API_TIME_MAX])
{
        struct tm tm;
        time_t t = (time_t)(ms / 1000);

        if (ms <= 0 || !gmtime_r(&t, &tm) ||
            !strftime(out, API_TIME_MAX, "%Y-%m-%dT%H:%M:%SZ", &tm))
                snprintf(out, API_TIME_MAX, "%s", "");
}

json_t *api_time_json(int64_t ms)
{
        char t[API_TIME_MAX];

        if (ms <= 0)
                return json_null();
        api_time(ms, t);
        return json_string(t);
}

/* ---- request checks ---- */

bool api_id_valid(const char *s, size_t n)
{
        if (n == 0 || n > API_ID_MAX || s[0] == '.' || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '-'))
                        return false;
        }
        return true;
}

bool api_ctype_is_json(const char *ct)
{
        struct tok t;
        struct span type;

        if (!ct)
                return false;
        /* the media type is what comes before the first ';' (parameters are allowed), trimmed */
        tok_init(&t, ct, strnlen(ct, API_HEADER_MAX + 1));
        if (tok_left(&t) > API_HEADER_MAX || tok_field(&t, ';', API_HEADER_MAX, &type) < 0)
                return false;
        type = span_trim(type);
        return type.n == strlen("application/json") &&
               strncasecmp(type.p, "application/json", type.n) == 0;
}

int api_parse_body(struct attestd *d, const struct api_req *req, struct api_resp *r,
                   bool allow_empty, json_t **ret)
{
        json_error_t je;
        json_t *o;

        if (req->body_len == 0 && allow_empty) {
                *ret = json_object();
                return *ret ? 0 : -ENOMEM;
        }
        if (!api_ctype_is_json(req->content_type)) {
                api_error(d, r, 415, AE_UNSUPPORTED_MEDIA_TYPE,
                          "Content-Type must be application/json");
                return -EBADMSG;
        }
        if (req->body_len == 0) {
                api_error(d, r, 400, AE_BAD_JSON, "empty body");
                return -EBADMSG;
        }
        o = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &je);
        if (!o) {
                api_error(d, r, 400, AE_BAD_JSON, "line %d column %d: %s", je.line, je.column,
                          je.text);
                return -EBADMSG;
        }
        if (!json_is_object(o)) {
                json_decref(o);
                api_error(d, r, 400, AE_BAD_JSON, "$: expected an object");
                return -EBADMSG;
        }
        *ret = o;
        return 0;
}

int api_check_fields(struct attestd *d, struct api_resp *r, json_t *o, const char *path,
                     const char *const *allowed, size_t n)
{
        const char *key;
        json_t *v;

        json_object_foreach(o, key, v)
        {
                bool ok = false;

                for (size_t i = 0; i < n && !ok; i++)
                        ok = !strcmp(key, allowed[i]);
                if (!ok) {
                        api_error(d, r, 400, AE_UNKNOWN_FIELD, "%s.%.64s: unknown field", path,
                                  key);
                        return -EBADMSG;
                }
        }
        return 0;
}

/* A base64 string field into a malloc'ed buffer of at most max bytes. */
int api_b64_field(struct attestd *d, struct api_resp *r, json_t *o, const char *name, bool required,
                  size_t max, uint8_t **ret, size_t *ret_len)
{
        json_t *v = json_object_get(o, name);
        _cleanup_free_ uint8_t *buf = NULL;
        size_t n, got;

        *ret = NULL;
        *ret_len = 0;
        if (!v || json_is_null(v)) {
                if (!required)
                        return 0;
                api_error(d, r, 400, AE_MISSING_FIELD, "$.%s: required", name);
                return -EBADMSG;
        }
        if (!json_is_string(v)) {
                api_error(d, r, 400, AE_BAD_FIELD, "$.%s: expected a base64 string", name);
                return -EBADMSG;
        }
        n = json_string_length(v);
        if (n / 4 * 3 > max + 3) {
                api_error(d, r, 400, AE_BAD_FIELD, "$.%s: longer than %zu bytes", name, max);
                return -EBADMSG;
        }
        buf = malloc(max ? max : 1);
        if (!buf) {
                api_nomem(d, r);
                return -ENOMEM;
        }
        if (b64_decode(json_string_value(v), n, buf, max, &got) < 0) {
                api_error(d, r, 400, AE_BAD_FIELD, "$.%s: not base64 of at most %zu bytes", name,
                          max);
                return -EBADMSG;
        }
        *ret = TAKE_PTR(buf);
        *ret_len = got;
        return 0;
}

static const char *query_get(const struct api_req *req, const char *key)
{
        for (size_t i = 0; i < req->nquery; i++)
                if (!strcmp(req->qkey[i], key))
                        return req->qval[i] ? req->qval[i] : "";
        return NULL;
}

int api_query_check(struct attestd *d, const struct api_req *req, struct api_resp *r,
                    const char *const *allowed, size_t n)
{
        if (req->query_overflow) {
                api_error(d, r, 400, AE_BAD_QUERY, "too many query parameters");
                return -EBADMSG;
        }
        for (size_t i = 0; i < req->nquery; i++) {
                bool ok = false;

                for (size_t j = 0; j < n && !ok; j++)
                        ok = !strcmp(req->qkey[i], allowed[j]);
                if (!ok) {
                        api_error(d, r, 400, AE_BAD_QUERY, "unknown query parameter '%.64s'",
                                  req->qkey[i]);
                        return -EBADMSG;
                }
        }
        return 0;
}

int api_query_u64(struct attestd *d, const struct api_req *req, struct api_resp *r, const char *key,
                  uint64_t min, uint64_t max, uint64_t *v)
{
        const char *s = query_get(req, key);
        uint64_t x;

        if (!s)
                return 0;
        /* decimal digits only, no sign, no leading zero, at most max (checked before overflow) */
        if (span_u64((struct span){s, strnlen(s, 32)}, max, &x) < 0 || x < min) {
                api_error(d, r, 400, AE_BAD_QUERY, "%s: expected an integer in %llu..%llu", key,
                          (unsigned long long)min, (unsigned long long)max);
                return -EBADMSG;
        }
        *v = x;
        return 0;
}

/* ---- handlers: health, metrics ---- */

static void routes_for_metrics(struct metrics_routes *mr);

static void h_healthz(struct attestd *d, const struct api_req *req, struct api_resp *r,
                      const char *id)
{
        char why[160] = "";
        int v = 0;

        (void)req;
        (void)id;
        if (atomic_load(&d->draining)) {
                api_error(d, r, 503, AE_DRAINING, "shutting down");
                return;
        }
        if (store_schema_version(d->store, &v) < 0) {
                api_error(d, r, 503, AE_STORE_UNAVAILABLE, "database not readable");
                return;
        }
        /* ready only while the store takes writes (a disk-full verifier is not ready); at most
         * one real write probe a second, whatever the rate of /healthz */
        if (store_probe(d->store, attestd_now_ms(), 1000, why, sizeof(why)) < 0) {
                api_error(d, r, 503, AE_STORE_UNAVAILABLE, "database not writable: %s", why);
                return;
        }
        if (api_json(r, 200,
                     json_pack("{s:s, s:i, s:s}", "status", "ok", "schema", v, "store",
                               "writable")) < 0)
                api_nomem(d, r);
}

static void h_metrics(struct attestd *d, const struct api_req *req, struct api_resp *r,
                      const char *id)
{
        struct store_counts c = {0};
        struct metrics_agents a;
        struct metrics_store st;
        struct store_cache_stats cs;
        struct policy_cache_stats pcs;
        struct metrics_policies pm;
        struct metrics_routes mr;
        char *text;
        size_t len;
        int e;

        (void)req;
        (void)id;
        /* the agent counts are read from the database: when it cannot be read now (the pool
         * exhausted, the database gone) the page goes without them, not without the rest
         * (attestd_db_pool_exhausted_total and the store's readiness among it) */
        e = store_agent_counts(d->store, attestd_now_ms(), (int64_t)d->cfg.grace * 1000,
                               (int64_t)d->cfg.interval * 1000, &c);
        if (e == -ENOMEM) {
                api_nomem(d, r);
                return;
        }
        a = (struct metrics_agents){c.active, c.stale, c.failing, c.never, c.decommissioned};
        store_stats(d->store, &st.commits, &st.writes);
        st.wal_pages = store_wal_pages(d->store);
        store_cache_stats(d->store, &cs);
        st.cache_hits = cs.hits;
        st.cache_misses = cs.misses;
        st.cache_evictions = cs.evictions;
        st.cache_entries = cs.entries;
        {
                struct store_db_stats ds;

                store_db_stats(d->store, &ds);
                st.db_statements = ds.statements;
                st.pool_waits = ds.pool_waits;
                st.pool_exhausted = ds.pool_exhausted;
                st.pool_size = ds.pool_size;
                st.pool_in_use = ds.pool_in_use;
        }
        {
                char why[160];

                st.writable = store_probe(d->store, attestd_now_ms(), 1000, why, sizeof(why)) == 0;
        }
        policy_cache_stats(d->policies, &pcs);
        pm = (struct metrics_policies){pcs.hits,      pcs.misses,  pcs.parses,
                                       pcs.evictions, pcs.entries, pcs.bytes};
        routes_for_metrics(&mr);
        if (metrics_render(&d->metrics, e == 0 ? &a : NULL, &st, &pm, &mr, &text, &len) < 0) {
                api_nomem(d, r);
                return;
        }
        /* the outbox is read only when the agent counts were: not a second wait for the pool */
        if (d->webhooks && webhook_metrics_append(d->webhooks, e == 0, &text, &len) < 0) {
                free(text);
                api_nomem(d, r);
                return;
        }
        api_resp_text(r, 200, "text/plain; version=0.0.4", text, len);
}

/* ---- routing ---- */

typedef void (*handler_fn)(struct attestd *d, const struct api_req *req, struct api_resp *r,
                           const char *id);

struct method {
        const char *method;
        enum auth_role role; /* AUTH_NONE: no token needed */
        handler_fn fn;
        bool evidence; /* larger body cap */
};

/* A route: fixed segments, "*" for the one id segment. */
struct route {
        const char *pattern;
        const char *allow;
        struct method m[3];
};

static const struct route routes[] = {
        /* at most METRICS_ROUTES_MAX - 1 */
        {"/healthz", "GET", {{"GET", AUTH_NONE, h_healthz, false}}},
        {"/metrics", "GET", {{"GET", AUTH_NONE, h_metrics, false}}},
        {"/v1/agents",
         "GET, POST",
         {{"GET", AUTH_READER, api_agents_list, false},
          {"POST", AUTH_ENROLL, api_agent_enroll, false}}},
        {"/v1/agents/*",
         "GET, DELETE",
         {{"GET", AUTH_READER, api_agent_get, false},
          {"DELETE", AUTH_ADMIN, api_agent_delete, false}}},
        {"/v1/agents/*/activate", "POST", {{"POST", AUTH_NONE, api_agent_activate, false}}},
        {"/v1/agents/*/challenges", "POST", {{"POST", AUTH_NONE, api_challenge, false}}},
        {"/v1/agents/*/evidence", "POST", {{"POST", AUTH_NONE, api_evidence, true}}},
        {"/v1/agents/*/results", "GET", {{"GET", AUTH_READER, api_agent_results, false}}},
        {"/v1/agents/*/ear", "GET", {{"GET", AUTH_READER, api_agent_ear, false}}},
        {"/v1/agents/*/policy", "PUT", {{"PUT", AUTH_ADMIN, api_agent_policy, false}}},
        {"/v1/agents/*/decommission",
         "POST",
         {{"POST", AUTH_ADMIN, api_agent_decommission, false}}},
        {"/v1/agents/*/readmit", "POST", {{"POST", AUTH_ADMIN, api_agent_readmit, false}}},
        {"/v1/refused-eks", "GET", {{"GET", AUTH_READER, api_refused_eks, false}}},
        {"/v1/policies", "GET", {{"GET", AUTH_READER, api_policies_list, false}}},
        {"/v1/ear/keys", "GET", {{"GET", AUTH_NONE, api_ear_keys, false}}},
        {"/v1/policies/*",
         "GET, PUT, DELETE",
         {{"GET", AUTH_READER, api_policy_get, false},
          {"PUT", AUTH_ADMIN, api_policy_put, false},
          {"DELETE", AUTH_ADMIN, api_policy_delete, false}}},
};

/*
 * Match the path against a pattern, segment by segment through the text cursor; the "*" segment
 * is the id, copied (NUL terminated) when it is valid, else *ret_bad_id. The pattern is ours, the
 * path is the client's (unescaped by the HTTP layer, %00 refused there).
 */
static bool route_match(const char *pattern, const char *path, char *id, size_t idmax,
                        bool *ret_bad_id)
{
        struct tok pt = TOK_INIT(pattern, strlen(pattern));
        struct tok st = TOK_INIT(path, strnlen(path, API_PATH_MAX + 1));
        bool bad = false;

        *ret_bad_id = false;
        if (tok_left(&st) > API_PATH_MAX || !tok_char(&pt, '/') || !tok_char(&st, '/'))
                return false;
        for (;;) {
                struct span ps, ss;
                int ep = tok_field(&pt, '/', API_PATH_MAX, &ps);
                int es = tok_field(&st, '/', API_PATH_MAX, &ss);

                if (ep == -ENOENT || es == -ENOENT) {
                        if (ep != es)
                                return false;
                        *ret_bad_id = bad;
                        return true;
                }
                if (ep < 0 || es < 0 || ss.n == 0)
                        return false;
                if (span_eq(ps, "*")) {
                        if (!api_id_valid(ss.p, ss.n) || span_cstr(ss, id, idmax) < 0)
                                bad = true;
                        continue;
                }
                if (ps.n != ss.n || memcmp(ps.p, ss.p, ss.n) != 0)
                        return false;
        }
}

static const struct route *route_find(const char *path, char *id, size_t idmax, bool *bad_id)
{
        for (size_t i = 0; i < ARRAY_SIZE(routes); i++)
                if (route_match(routes[i].pattern, path, id, idmax, bad_id))
                        return &routes[i];
        return NULL;
}

static const struct method *method_find(const struct route *rt, const char *method)
{
        for (size_t i = 0; i < ARRAY_SIZE(rt->m) && rt->m[i].method; i++)
                if (!strcmp(rt->m[i].method, method))
                        return &rt->m[i];
        return NULL;
}

/* A method's body cap: evidence, a policy document (POLICY_JSON_MAX: runtime allowlists), else
 * --max-body. */
static size_t method_body_limit(const struct attestd *d, const struct method *m)
{
        if (m && m->evidence)
                return d->cfg.max_evidence;
        if (m && m->fn == api_policy_put)
                return POLICY_JSON_MAX;
        return d->cfg.max_body;
}

size_t api_body_limit(const struct attestd *d, const char *method, const char *path)
{
        char id[API_ID_MAX + 1];
        bool bad;
        const struct route *rt = route_find(path, id, sizeof(id), &bad);
        const struct method *m = rt ? method_find(rt, method) : NULL;

        return method_body_limit(d, m);
}

static enum auth_role bearer_role(struct attestd *d, const char *h)
{
        struct tok t;
        struct span scheme, cred;
        enum auth_role role;

        if (!h)
                return AUTH_NONE;
        /* "Bearer" SP token (RFC 6750 2.1), blanks around the token ignored */
        tok_init(&t, h, strnlen(h, API_HEADER_MAX + 1));
        if (tok_left(&t) > API_HEADER_MAX || tok_word(&t, API_HEADER_MAX, &scheme) < 0 ||
            scheme.n != 6 || strncasecmp(scheme.p, "Bearer", 6) != 0 ||
            tok_rest(&t, API_HEADER_MAX, &cred) < 0)
                return AUTH_NONE;
        cred = span_trim(cred);
        pthread_rwlock_rdlock(&d->tokens_lock);
        role = auth_lookup(d->tokens, cred.p, cred.n);
        pthread_rwlock_unlock(&d->tokens_lock);
        return role;
}

/* Routing's decision for api_preflight (api-preflight.c): no body needed to make it. */
void api_route_info(struct attestd *d, const char *method, const char *path,
                    const char *authorization, struct api_route_info *ret)
{
        const struct route *rt;
        const struct method *m;

        memset(ret, 0, sizeof(*ret));
        rt = route_find(path, ret->id, sizeof(ret->id), &ret->bad_id);
        if (!rt)
                return;
        ret->found = true;
        ret->allow = rt->allow;
        m = method_find(rt, method);
        if (!m)
                return;
        ret->method_ok = true;
        ret->need = m->role;
        if (m->role != AUTH_NONE)
                ret->have = bearer_role(d, authorization);
        if (m->fn == api_evidence)
                ret->gate = API_GATE_EVIDENCE;
        else if (m->fn == api_challenge)
                ret->gate = API_GATE_ACTIVE;
        else if (m->fn == api_agent_activate)
                ret->gate = API_GATE_EXISTS;
}

/* Route and method found set *ret_route and *ret_method (metrics_http's labels). */
static void dispatch(struct attestd *d, const struct api_req *req, struct api_resp *r,
                     size_t *ret_route, size_t *ret_method)
{
        char id[API_ID_MAX + 1] = "";
        const struct route *rt;
        const struct method *m;
        bool bad_id;

        rt = route_find(req->path, id, sizeof(id), &bad_id);
        if (!rt) {
                api_error(d, r, 404, AE_NOT_FOUND, "no such resource");
                return;
        }
        m = method_find(rt, req->method);
        if (m) {
                *ret_route = (size_t)(rt - routes);
                *ret_method = (size_t)(m - rt->m);
        }
        if (!m) {
                api_error(d, r, 405, AE_METHOD_NOT_ALLOWED, "%s is not allowed here; allowed: %s",
                          strcmp(req->method, "OPTIONS") ? "this method" : "OPTIONS", rt->allow);
                r->allow = rt->allow;
                return;
        }
        if (m->role != AUTH_NONE) {
                enum auth_role have = bearer_role(d, req->authorization);

                if (have == AUTH_NONE) {
                        if (m->role == AUTH_ENROLL)
                                api_enrol_refused_token(d, req->authorization != NULL);
                        api_error(d, r, 401, AE_UNAUTHORIZED,
                                  req->authorization ? "unknown bearer token"
                                                     : "a bearer token is required");
                        r->www_authenticate = true;
                        return;
                }
                if (!auth_allows(have, m->role)) {
                        api_error(d, r, 403, AE_FORBIDDEN,
                                  "%s here needs a token of role %s; this token's role is %s",
                                  req->method, auth_role_name(m->role), auth_role_name(have));
                        return;
                }
        }
        if (bad_id) {
                api_error(d, r, 400, AE_BAD_ID,
                          "ids are 1-64 of [A-Za-z0-9_.-], not starting with . or -");
                return;
        }
        if (req->body_len > method_body_limit(d, m)) {
                api_error(d, r, 413, AE_BODY_TOO_LARGE, "body larger than %llu bytes",
                          (unsigned long long)method_body_limit(d, m));
                return;
        }
        /* GET and DELETE take no body; only the routes that parse JSON look at Content-Type */
        if ((!strcmp(req->method, "GET") || !strcmp(req->method, "DELETE")) && req->body_len) {
                api_error(d, r, 400, AE_UNEXPECTED_BODY, "%s takes no body", req->method);
                return;
        }
        if (strcmp(req->method, "GET") && req->nquery) {
                api_error(d, r, 400, AE_BAD_QUERY, "query parameters only on GET");
                return;
        }
        if (!strcmp(req->method, "GET") && m->fn != api_agent_results && m->fn != api_policy_get &&
            m->fn != api_agent_ear && m->fn != api_agents_list && m->fn != api_refused_eks &&
            (req->nquery || req->query_overflow)) {
                api_error(d, r, 400, AE_BAD_QUERY, "this resource takes no query parameters");
                return;
        }
        m->fn(d, req, r, id);
}

void api_handle(struct attestd *d, const struct api_req *req, struct api_resp *r)
{
        size_t route = SIZE_MAX, method = 0;
        int64_t t0 = mono_us();

        memset(r, 0, sizeof(*r));
        metrics_request(&d->metrics);
        dispatch(d, req, r, &route, &method);
        metrics_response(&d->metrics, r->status);
        /* by the route table's index, never by the client's path: bounded label values */
        metrics_http(&d->metrics, route, method, (uint64_t)(mono_us() - t0));
}

static void routes_for_metrics(struct metrics_routes *mr)
{
        memset(mr, 0, sizeof(*mr));
        mr->n = ARRAY_SIZE(routes);
        for (size_t i = 0; i < ARRAY_SIZE(routes) && i < METRICS_ROUTES_MAX - 1; i++) {
                mr->pattern[i] = routes[i].pattern;
                for (size_t j = 0; j < METRICS_ROUTE_METHODS && j < ARRAY_SIZE(routes[i].m); j++)
                        mr->method[i][j] = routes[i].m[j].method;
        }
}
