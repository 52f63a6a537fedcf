/* SPDX-License-Identifier: MIT */
/* The policies API: list, put (validated), get, delete. */
#include <errno.h>
#include <malloc.h>
#include <string.h>

#include <jansson.h>

#include "daemon/api/api-internal.h"
#include "daemon/log.h"
#include "daemon/policy-cache.h"
#include "policy/runtime.h"

/* ---- policies ---- */

static int policy_list_one(const char *name, int64_t version, int64_t created, void *arg)
{
        json_t *o = json_pack("{s:s, s:I, s:o}", "name", name, "version", (json_int_t)version,
                              "created", api_time_json(created));

        if (!o || json_array_append_new(arg, o) < 0)
                return -ENOMEM;
        return 0;
}

void api_policies_list(struct attestd *d, const struct api_req *req, struct api_resp *r,
                       const char *id)
{
        json_t *arr = json_array();
        int e;

        (void)req;
        (void)id;
        if (!arr) {
                api_nomem(d, r);
                return;
        }
        if ((e = store_policy_list(d->store, policy_list_one, arr)) < 0) {
                json_decref(arr);
                api_store_error(d, r, e, "policy list");
                return;
        }
        if (api_json(r, 200, json_pack("{s:o}", "policies", arr)) < 0)
                api_nomem(d, r);
}

/* A PUT body above this gives its freed memory back to the system (malloc_trim) */
#define POLICY_PUT_TRIM_BYTES (1024 * 1024)

/* A probe warning: into the response's "warnings", and the log. */
static void probe_warn(void *arg, const char *msg)
{
        if (json_array_append_new(arg, json_string(msg)) < 0)
                log_debug("policy warning not returned (out of memory): %s", msg);
}

void api_policy_put(struct attestd *d, const struct api_req *req, struct api_resp *r,
                    const char *name)
{
        json_auto_t *o = NULL, *warnings = json_array();
        json_t *resp;
        _cleanup_free_ char *canon = NULL;
        _cleanup_(policy_freep) struct policy *pol = NULL;
        struct attest_err err = {0};
        json_t *n;
        int64_t version;
        int e;

        if (api_parse_body(d, req, r, false, &o) < 0)
                return;
        n = json_object_get(o, "name");
        if (n && (!json_is_string(n) || strcmp(json_string_value(n), name) != 0)) {
                api_error(d, r, 400, AE_BAD_FIELD, "$.name: must equal the name in the path (%s)",
                          name);
                return;
        }
        /* the path names the policy; the document may leave it out */
        if (!n && json_object_set_new(o, "name", json_string(name)) < 0) {
                api_nomem(d, r);
                return;
        }
        /* the one parse: the body's JSON, validated as a policy, kept in the cache */
        if ((e = policy_cache_parse(d->policies, o, &pol, &err)) < 0) {
                api_error(d, r, 400, err.code ? err.code : AE_POLICY_INVALID, "%s", err.msg);
                return;
        }
        /* cost bounds: an exclude that backtracks exponentially on a short path built from its
         * own characters is refused; a polynomial one is stored, warned (attestd-policy(5)) */
        if (!warnings) {
                api_nomem(d, r);
                return;
        }
        e = rt_policy_probe(policy_runtime(pol), "$.ima.runtime.excludes", probe_warn, warnings,
                            &err);
        if (e == -EBADMSG) {
                api_error(d, r, 400, err.code ? err.code : AE_POLICY_INVALID, "%s", err.msg);
                return;
        }
        if (e < 0) {
                api_nomem(d, r);
                return;
        }
        canon = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        if (!canon || strlen(canon) > POLICY_JSON_MAX) {
                if (canon)
                        api_error(d, r, 400, AE_POLICY_TOO_BIG, "$: document of %zu bytes > %u",
                                  strlen(canon), POLICY_JSON_MAX);
                else
                        api_nomem(d, r);
                return;
        }
        /* the document's tree is done with: a 32 MiB policy's is the largest part of the peak */
        json_decref(o);
        o = NULL;
        e = store_policy_put(d->store, name, canon, attestd_now_ms(), &version);
        free(TAKE_PTR(canon));
        if (e < 0) {
                api_store_error(d, r, e, "policy insert");
                return;
        }
        /* a cache without this version would parse the stored text again on the next round */
        if (policy_cache_add(d->policies, name, version, TAKE_PTR(pol), NULL) < 0)
                log_debug("policy %s version %lld: not cached (out of memory)", name,
                          (long long)version);
        log_info("policy %s version %lld stored", name, (long long)version);
        /* the tree (3 times the body) and the canonical text are freed but stay in the process
         * (glibc keeps freed heap): a 32 MiB PUT left RSS 155 MB up, 51 MB of it the parsed
         * policy the cache keeps */
        if (req->body_len > POLICY_PUT_TRIM_BYTES)
                (void)malloc_trim(0);
        for (size_t i = 0; i < json_array_size(warnings); i++)
                log_warning("policy %s version %lld: %s", name, (long long)version,
                            json_string_value(json_array_get(warnings, i)));
        resp = json_pack("{s:s, s:I}", "name", name, "version", (json_int_t)version);
        if (resp && json_array_size(warnings) && json_object_set(resp, "warnings", warnings) < 0)
                resp = (json_decref(resp), NULL);
        if (api_json(r, 201, resp) < 0)
                api_nomem(d, r);
}

void api_policy_get(struct attestd *d, const struct api_req *req, struct api_resp *r,
                    const char *name)
{
        static const char *const q[] = {"version"};
        _cleanup_free_ char *body = NULL;
        uint64_t want = 0;
        int64_t version, created;
        json_t *p;
        int e;

        if (api_query_check(d, req, r, q, ARRAY_SIZE(q)) < 0 ||
            api_query_u64(d, req, r, "version", 1, INT64_MAX, &want) < 0)
                return;
        e = store_policy_get(d->store, name, (int64_t)want, &body, &version, &created);
        if (e == -ENOENT) {
                api_error(d, r, 404, AE_POLICY_NOT_FOUND, "no policy %s%s", name,
                          want ? " at that version" : "");
                return;
        }
        if (e < 0) {
                api_store_error(d, r, e, "policy lookup");
                return;
        }
        p = json_loads(body, 0, NULL);
        if (!p) {
                api_error(d, r, 500, AE_STORE_CORRUPT, "stored policy is not JSON");
                return;
        }
        if (api_json(r, 200,
                     json_pack("{s:s, s:I, s:o, s:o}", "name", name, "version", (json_int_t)version,
                               "created", api_time_json(created), "policy", p)) < 0)
                api_nomem(d, r);
}

#define API_IN_USE_NAMED 8 /* agents a 409 policy_in_use names at most */

struct in_use {
        char text[API_IN_USE_NAMED * (API_ID_MAX + 2) + 1];
        size_t len;
};

static int in_use_one(const struct store_agent *a, void *arg)
{
        struct in_use *u = arg;
        int w = snprintf(u->text + u->len, sizeof(u->text) - u->len, "%s%s", u->len ? ", " : "",
                         a->id);

        if (w > 0 && (size_t)w < sizeof(u->text) - u->len)
                u->len += (size_t)w;
        return 0;
}

/* 409 policy_in_use naming the agents bound to policy name: the first API_IN_USE_NAMED in id
 * order and how many more (attestctl agents list --policy NAME lists them all). */
static void policy_in_use(struct attestd *d, struct api_resp *r, const char *name)
{
        struct store_agent_filter f = {.policy = name, .limit = API_IN_USE_NAMED};
        struct in_use u = {.len = 0};
        uint64_t total = 0;

        if (store_agent_query_count(d->store, &f, &total) < 0 ||
            store_agent_query(d->store, &f, in_use_one, &u) < 0) {
                api_error(d, r, 409, AE_POLICY_IN_USE, "policy %s is bound to agents", name);
                return;
        }
        if (total > API_IN_USE_NAMED)
                api_error(d, r, 409, AE_POLICY_IN_USE,
                          "policy %s is bound to %llu agents: %s and %llu more; bind them to "
                          "another policy first",
                          name, (unsigned long long)total, u.text,
                          (unsigned long long)(total - API_IN_USE_NAMED));
        else
                api_error(d, r, 409, AE_POLICY_IN_USE,
                          "policy %s is bound to %llu agent%s: %s; bind %s to another policy "
                          "first",
                          name, (unsigned long long)total, total == 1 ? "" : "s", u.text,
                          total == 1 ? "it" : "them");
}

void api_policy_delete(struct attestd *d, const struct api_req *req, struct api_resp *r,
                       const char *name)
{
        int e = store_policy_delete(d->store, name);

        (void)req;
        if (e == -ENOENT) {
                api_error(d, r, 404, AE_POLICY_NOT_FOUND, "no policy %s", name);
                return;
        }
        if (e == -EBUSY) {
                policy_in_use(d, r, name);
                return;
        }
        if (e < 0) {
                api_store_error(d, r, e, "policy delete");
                return;
        }
        policy_cache_drop(d->policies, name);
        log_info("policy %s deleted", name);
        api_resp_text(r, 204, NULL, NULL, 0);
}
