/* SPDX-License-Identifier: MIT */
/*
 * attestd's request handling (daemon/api/api-*.c: routing, auth, query and body checks, the
 * handlers, the SQLite store) fed one request per input:
 *
 *   byte 0      method: GET POST PUT DELETE PATCH (mod 5)
 *   byte 1      Authorization: none, admin, reader, enroll, an unknown token, junk (mod 6)
 *   byte 2      Content-Type: none, application/json, text/plain, "application/json; x" (mod 4)
 *   then        PATH[?QUERY] up to '\n', the rest is the body
 *
 * The context is real (tokens, nonce store, a database in a temporary directory) and lives for
 * the process, so inputs build on each other's state as requests would. Invariants: a status in
 * 200..599; JSON bodies parse; an error status carries {"error","detail"} and a success none.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "daemon/api/api.h"
#include "tests/fuzz/fuzz.h"

static const char *const methods[] = {"GET", "POST", "PUT", "DELETE", "PATCH"};
static const char *const auths[] = {
        NULL,          "Bearer fuzz-admin", "Bearer fuzz-reader", "Bearer fuzz-enroll",
        "Bearer nope", "Basic Zm9v"};
static const char *const ctypes[] = {NULL, "application/json", "text/plain",
                                     "application/json; charset=utf-8"};

static char dir[] = "/tmp/fuzz-http.XXXXXX";

/* The database goes when the process does: replays in `meson test` leave nothing in /tmp. */
static void remove_db(void)
{
        static const char *const suffix[] = {"", "-wal", "-shm"};
        char path[64];

        for (size_t i = 0; i < ARRAY_SIZE(suffix); i++) {
                snprintf(path, sizeof(path), "%s/attestd.db%s", dir, suffix[i]);
                unlink(path);
        }
        rmdir(dir);
}

static struct attestd *ctx_get(void)
{
        static struct attestd d;
        static int ready;
        struct attest_err err = {0};
        char db[64], text[1024];
        unsigned char h[3][32];
        const char *names[3] = {"fuzz-admin", "fuzz-reader", "fuzz-enroll"};
        const char *roles[3] = {"admin", "reader", "enroll"};
        size_t o = 0;

        if (ready)
                return &d;
        memset(&d, 0, sizeof(d));
        d.cfg.max_body = 64 * 1024;
        d.cfg.max_evidence = 16u * 1024 * 1024;
        d.cfg.max_entries = 10000;
        d.cfg.interval = 300;
        d.cfg.grace = 60;
        d.cfg.retain = 5;
        d.cfg.nonce_ttl = 60;
        FUZZ_CHECK(mkdtemp(dir) != NULL);
        atexit(remove_db);
        snprintf(db, sizeof(db), "%s/attestd.db", dir);
        metrics_init(&d.metrics);
        pthread_rwlock_init(&d.tokens_lock, NULL);
        for (int i = 0; i < 3; i++) {
                char hex[65];

                SHA256((const unsigned char *)names[i], strlen(names[i]), h[i]);
                for (int k = 0; k < 32; k++)
                        snprintf(hex + 2 * k, 3, "%02x", h[i][k]);
                o += (size_t)snprintf(text + o, sizeof(text) - o, "%s %s\n", roles[i], hex);
        }
        FUZZ_CHECK(auth_parse(text, o, "fuzz", &d.tokens, &err) == 0);
        FUZZ_CHECK(pcr_sel_parse("sha256:0-10", &d.pcr_sel) == 0);
        snprintf(d.pcr_sel_text, sizeof(d.pcr_sel_text), "sha256:0-10");
        FUZZ_CHECK(store_open(db, STORE_POOL, 1, &d.store, &err) == 0);
        {
                static const uint8_t key[NONCE_KEY_MIN] = {1, 2, 3};

                FUZZ_CHECK(nonce_store_new(60000, key, sizeof(key), &d.nonces) == 0);
        }
        FUZZ_CHECK(ratelimit_new(5, 60000, &d.activation_rl) == 0);
        FUZZ_CHECK(akcache_new(1000, &d.aks) == 0);
        FUZZ_CHECK(policy_cache_new(POLICY_CACHE_MAX, &d.policies) == 0);
        ready = 1;
        return &d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct attestd *d = ctx_get();
        struct api_req req = {0};
        struct api_resp r;
        char *line, *q, *path_copy;
        const uint8_t *nl;
        size_t plen;

        if (size < 4)
                return 0;
        req.method = methods[data[0] % ARRAY_SIZE(methods)];
        req.authorization = auths[data[1] % ARRAY_SIZE(auths)];
        req.content_type = ctypes[data[2] % ARRAY_SIZE(ctypes)];
        data += 3;
        size -= 3;
        nl = memchr(data, '\n', size);
        plen = nl ? (size_t)(nl - data) : size;
        if (plen > API_PATH_MAX + 64) /* the router's cap, and past it */
                return 0;
        line = strndup((const char *)data, plen);
        FUZZ_CHECK(line != NULL);
        path_copy = line;
        /* the query as libmicrohttpd hands it over: key[=value] pairs split on '&' */
        q = strchr(line, '?');
        if (q) {
                char *save = NULL, *kv;

                *q++ = '\0';
                for (kv = strtok_r(q, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
                        char *eq = strchr(kv, '=');

                        if (req.nquery == API_QUERY_MAX) {
                                req.query_overflow = true;
                                break;
                        }
                        if (eq)
                                *eq++ = '\0';
                        req.qkey[req.nquery] = kv;
                        req.qval[req.nquery++] = eq;
                }
        }
        req.path = path_copy;
        if (nl) {
                req.body = (const char *)nl + 1;
                req.body_len = size - plen - 1;
        }
        api_handle(d, &req, &r);
        FUZZ_CHECK(r.status >= 200 && r.status <= 599);
        if (r.content_type && !strcmp(r.content_type, "application/json")) {
                json_t *j = json_loadb(r.body, r.body_len, 0, NULL);

                FUZZ_CHECK(j != NULL);
                FUZZ_CHECK((r.status >= 400) == (json_object_get(j, "error") != NULL));
                if (r.status >= 400)
                        FUZZ_CHECK(json_is_string(json_object_get(j, "detail")));
                json_decref(j);
        }
        api_resp_done(&r);
        free(line);
        return 0;
}
