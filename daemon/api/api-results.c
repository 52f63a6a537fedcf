/* SPDX-License-Identifier: MIT */
/*
 * An agent's results: GET /v1/agents/{id}/results, newest first by ?before= (the history), or
 * oldest first by ?since= and ?after= (the export: a cursor retention cannot move); each row's
 * verdict embedded as the store holds it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "daemon/api/api-internal.h"
#include "daemon/store/store.h"
#include "util/buf.h"

#define API_RESULTS_LIMIT 20       /* results a page by default */
#define API_RESULTS_LIMIT_MAX 1000 /* and at most (?limit=) */

/* The verdict text's head: the members the results row's columns hold (api-internal.h). */
static char *verdict_head(const char *status, const char *policy, int64_t time, int64_t due,
                          size_t *ret_len)
{
        json_t *o = json_pack("{s:s, s:s?, s:o, s:o}", "status", status ? status : "", "policy",
                              policy, "time", api_time_json(time), "next_due", api_time_json(due));
        char *t = o ? json_dumps(o, JSON_COMPACT) : NULL;

        json_decref(o);
        *ret_len = t ? strlen(t) : 0;
        return t;
}

/* head ("{...}") without its "}", then rest (n bytes and a NUL), as a new text; NULL: ENOMEM. */
static char *verdict_join(const char *head, size_t hn, const char *rest, size_t n)
{
        char *t;

        if (hn < 2 || n >= SIZE_MAX - hn)
                return NULL;
        t = malloc(hn - 1 + n + 1);
        if (!t)
                return NULL;
        memcpy(t, head, hn - 1);
        memcpy(t + hn - 1, rest, n + 1);
        return t;
}

int api_verdict_text(json_t *v, const char *status, const char *policy, int64_t time, int64_t due,
                     char **ret_full, const char **ret_stored)
{
        _cleanup_free_ char *head = NULL, *rest = NULL;
        size_t hn, rn;

        (void)json_object_del(v, "status");
        (void)json_object_del(v, "policy");
        head = verdict_head(status, policy, time, due, &hn);
        rest = json_dumps(v, JSON_COMPACT);
        if (!head || !rest)
                return -ENOMEM;
        rn = strlen(rest);
        if (rn <= 2) { /* no other member (never made so): the head alone, stored whole */
                *ret_stored = *ret_full = TAKE_PTR(head);
                return 0;
        }
        rest[0] = ','; /* "{...}" -> ",...}" */
        *ret_full = verdict_join(head, hn, rest, rn);
        if (!*ret_full)
                return -ENOMEM;
        *ret_stored = *ret_full + hn - 1;
        return 0;
}

int api_verdict_full(const struct store_result_row *row, char **ret)
{
        _cleanup_free_ char *head = NULL;
        size_t hn;

        *ret = NULL;
        if (!row->verdict || row->verdict[0] != ',')
                return 0;
        head = verdict_head(row->status, row->policy, row->time, row->due, &hn);
        if (!head || !(*ret = verdict_join(head, hn, row->verdict, strlen(row->verdict))))
                return -ENOMEM;
        return 0;
}

/*
 * A verdict as the store gives it back whole (api_verdict_full: the compact JSON stage_store
 * rendered from the typed verdict) is embedded in answers as it is: never parsed back. Text that
 * is not an object goes out as null.
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
int api_json_with_verdict(json_t *o, const char *key, const char *verdict, char **ret,
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

static int results_one(const struct store_result_row *row, void *arg)
{
        struct results *l = arg;
        _cleanup_free_ char *whole = NULL;
        json_t *o;
        int e;

        l->last = row->id;
        if (l->n == l->cap) /* the store hands out limit rows at most */
                return -E2BIG;
        if ((e = api_verdict_full(row, &whole)) < 0)
                return e;
        o = json_pack("{s:I, s:o, s:s, s:s?}", "id", (json_int_t)row->id, "time",
                      api_time_json(row->time), "status", row->status ? row->status : "", "policy",
                      row->policy);
        if (!o)
                return -ENOMEM;
        if ((e = api_json_with_verdict(o, "verdict", whole ? whole : row->verdict, &l->rows[l->n],
                                       &l->lens[l->n])) < 0)
                return e;
        l->bytes += l->lens[l->n++];
        return 0;
}

/* What the results answer has between its head and its rows, and after them. */
static const char results_mid[] = ",\"results\":[";

/* The answer's parts into w, in order (the caller sized w for them); tail: "],\"next_...\":". */
static int results_put(struct wb *w, const char *head, size_t hn, const struct results *l,
                       const char *tail, const char *next)
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
        if ((e = wb_put(w, tail, strlen(tail))) < 0 || (e = wb_put(w, next, strlen(next))) < 0)
                return e;
        return wb_put_u8(w, '}');
}

/*
 * {"id":ID,"results":[rows],KEY:N|null} into a new writer *ret (KEY next_before, or next_after
 * for the export), the bytes jansson wrote for it when the rows were parsed verdicts; -ENOMEM.
 */
static int results_answer(const char *id, const struct results *l, bool more, bool export,
                          struct wb *ret)
{
        const char *tail = export ? "],\"next_after\":" : "],\"next_before\":";
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
        max = hn - 1 + sizeof(results_mid) - 1 + l->bytes + l->n + strlen(tail) + strlen(next) + 1;
        if (wb_new(&w, max) < 0)
                return -ENOMEM;
        if ((e = results_put(&w, head, hn, l, tail, next)) < 0) {
                wb_free(&w);
                return e;
        }
        *ret = w;
        return 0;
}

/* n decimal digits at s into *v. */
static bool digits(const char *s, unsigned n, int *v)
{
        *v = 0;
        for (unsigned i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                *v = *v * 10 + (s[i] - '0');
        }
        return true;
}

/*
 * ?since=: the API's own time form, YYYY-MM-DDTHH:MM:SSZ (UTC), a real date and time, into ms
 * since the epoch; -EINVAL for anything else.
 */
static int since_parse(const char *s, int64_t *ret)
{
        struct tm tm = {0}, back;
        int y, mo, d, h, mi, se;
        time_t t;

        if (strnlen(s, 21) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
            s[16] != ':' || s[19] != 'Z' || !digits(s, 4, &y) || !digits(s + 5, 2, &mo) ||
            !digits(s + 8, 2, &d) || !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) ||
            !digits(s + 17, 2, &se) || y < 1970 || mo < 1 || mo > 12 || d < 1 || h > 23 ||
            mi > 59 || se > 59)
                return -EINVAL;
        tm.tm_year = y - 1900;
        tm.tm_mon = mo - 1;
        tm.tm_mday = d;
        tm.tm_hour = h;
        tm.tm_min = mi;
        tm.tm_sec = se;
        t = timegm(&tm);
        /* a day the month does not have comes back as another date */
        if (t == (time_t)-1 || !gmtime_r(&t, &back) || back.tm_mday != d || back.tm_mon != mo - 1)
                return -EINVAL;
        *ret = (int64_t)t * 1000;
        return 0;
}

static const char *query_value(const struct api_req *req, const char *key)
{
        for (size_t i = 0; i < req->nquery; i++)
                if (!strcmp(req->qkey[i], key))
                        return req->qval[i] ? req->qval[i] : "";
        return NULL;
}

/*
 * GET /v1/agents/{id}/results (reader; docs/api.md): ?limit=N (1..API_RESULTS_LIMIT_MAX) and
 * either ?before=RESULT (newest first; "next_before") or ?since=TIME and/or ?after=RESULT
 * (oldest first; "next_after", the export's cursor). Each parameter at most once.
 */
void api_agent_results(struct attestd *d, const struct api_req *req, struct api_resp *r,
                       const char *id)
{
        static const char *const q[] = {"limit", "before", "since", "after"};
        uint64_t limit = API_RESULTS_LIMIT, before = 0, after = 0;
        _cleanup_(results_done) struct results l = {0};
        const char *since_s = query_value(req, "since");
        int64_t since = 0;
        bool export;
        struct wb w;
        int e;

        if (api_query_check(d, req, r, q, ARRAY_SIZE(q)) < 0)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(q); i++) {
                unsigned n = 0;

                for (size_t k = 0; k < req->nquery; k++)
                        n += !strcmp(req->qkey[k], q[i]);
                if (n > 1) {
                        api_error(d, r, 400, AE_BAD_QUERY, "%s: given more than once", q[i]);
                        return;
                }
        }
        if (api_query_u64(d, req, r, "limit", 1, API_RESULTS_LIMIT_MAX, &limit) < 0 ||
            api_query_u64(d, req, r, "before", 1, INT64_MAX, &before) < 0 ||
            api_query_u64(d, req, r, "after", 1, INT64_MAX, &after) < 0)
                return;
        if (since_s && since_parse(since_s, &since) < 0) {
                api_error(d, r, 400, AE_BAD_QUERY, "since: expected YYYY-MM-DDTHH:MM:SSZ (UTC)");
                return;
        }
        export = since_s || query_value(req, "after");
        if (export && query_value(req, "before")) {
                api_error(d, r, 400, AE_BAD_QUERY,
                          "before pages newest first, since and after oldest first: not both");
                return;
        }
        l.rows = calloc(limit, sizeof(*l.rows));
        l.lens = calloc(limit, sizeof(*l.lens));
        if (!l.rows || !l.lens) {
                api_nomem(d, r);
                return;
        }
        l.cap = limit;
        if (export)
                e = store_results_since(d->store, id, limit, (int64_t)after, since, results_one,
                                        &l);
        else
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
        if (results_answer(id, &l, l.n == limit, export, &w) < 0) {
                api_nomem(d, r);
                return;
        }
        api_resp_text(r, 200, "application/json", (char *)w.p, wb_len(&w));
}
