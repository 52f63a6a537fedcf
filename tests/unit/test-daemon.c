/* SPDX-License-Identifier: MIT */
/*
 * attestd's modules in-process (Check): stateless nonces (MAC over every byte, TTL, agent
 * binding, shared key, distinct errors), the nonce key file, the failure rate limit, tokens file
 * parser and lookup, the config table (file + flags, errors naming file:line), PostgreSQL URLs
 * (multi-host, passwords refused, loopback for sslmode), the metrics text
 * and the store (migrations, versions, retention, optimistic seq, pending credentials, one
 * identity per EK, decommission, consumed nonces, file modes).
 */
#include <check.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/api/api-internal.h"
#include "daemon/auth.h"
#include "daemon/config.h"
#include "daemon/metrics.h"
#include "daemon/nonce.h"
#include "daemon/ratelimit.h"
#include "daemon/rowstash.h"
#include "daemon/store/db.h"
#include "daemon/store/store.h"
#include "store-target.h"

static const uint8_t key1[NONCE_KEY_MIN] = {1, 2, 3, 4}, key2[NONCE_KEY_MIN] = {9};

/*
 * One tag of nonce n recomputed with one-shot HMAC() (the wire format, docs/architecture.md §3.2):
 * HMAC-SHA256(key, label NUL | n[0..12] | agent | round), its first len bytes at n + at; agent
 * and round NULL for none. 1 when it matches.
 */
static int nonce_tag_is(const uint8_t *key, size_t key_len, const uint8_t *n, const char *label,
                        const char *agent, const struct nonce_round *round, size_t at, size_t len)
{
        uint8_t msg[32 + 12 + NONCE_AGENT_MAX + 16], md[32];
        size_t ll = strlen(label) + 1, m, al = agent ? strlen(agent) : 0;
        unsigned mdlen = 0;

        memcpy(msg, label, ll);
        memcpy(msg + ll, n, 12);
        m = ll + 12;
        memcpy(msg + m, agent ? agent : "", al);
        m += al;
        if (round) {
                for (int i = 0; i < 8; i++) {
                        msg[m + i] = (uint8_t)((uint64_t)round->last_result >> (56 - 8 * i));
                        msg[m + 8 + i] = (uint8_t)((uint64_t)round->created >> (56 - 8 * i));
                }
                m += 16;
        }
        return HMAC(EVP_sha256(), key, (int)key_len, msg, m, md, &mdlen) &&
               memcmp(md, n + at, len) == 0;
}

/* All three tags of n, recomputed: 1 when they match. */
static int nonce_tags_match(const uint8_t *key, size_t key_len, const uint8_t *n, const char *agent,
                            const struct nonce_round *round)
{
        return nonce_tag_is(key, key_len, n, "attestd-nonce-2", NULL, NULL, 12, 8) &&
               nonce_tag_is(key, key_len, n, "attestd-nonce-agent-2", agent, NULL, 20, 6) &&
               nonce_tag_is(key, key_len, n, "attestd-nonce-round-2", agent, round, 26, 6);
}

START_TEST(test_nonce_stateless_mac_ttl_and_binding)
{
        static const struct nonce_round r0 = {.last_result = 0, .created = 1700000000000},
                                        r1 = {.last_result = 41, .created = 1700000000000},
                                        reborn = {.last_result = 0, .created = 1700000000001};
        struct nonce_store *s, *s2, *other;
        struct attest_err err = {0};
        uint8_t n[NONCE_LEN], m[NONCE_LEN], t[NONCE_LEN];
        uint64_t exp, got = 0;

        ck_assert_int_eq(nonce_store_new(1000, key1, 16, &s), -EINVAL);
        ck_assert_int_eq(nonce_store_new(1000, key1, sizeof(key1), &s), 0);
        ck_assert_int_eq(nonce_store_new(1000, key1, sizeof(key1), &s2), 0);
        ck_assert_int_eq(nonce_store_new(1000, key2, sizeof(key2), &other), 0);
        ck_assert_int_eq(nonce_issue(s, "a", &r0, 5000, n, &exp), 0);
        ck_assert_uint_eq(exp, 6000);
        /* the wire format: the expiry in bytes 6..11, the three tags HMAC-SHA256 under the key,
         * so another instance with the key agrees */
        ck_assert_uint_eq(((uint64_t)n[10] << 8) | n[11], 6000);
        ck_assert_int_eq(nonce_tags_match(key1, sizeof(key1), n, "a", &r0), 1);
        ck_assert_int_eq(nonce_tags_match(key1, sizeof(key1), n, "a", &r1), 0);
        ck_assert_int_eq(nonce_check(s, "a", n, NONCE_LEN, 5001, &got, &err), 0);
        ck_assert_uint_eq(got, 6000);
        ck_assert_int_eq(nonce_check_round(s, "a", &r0, n, &err), 0);
        /* checking consumes nothing: a nonce is spent by the verdict that moves the agent's
         * state on (its last result), after which it answers a state that is gone */
        ck_assert_int_eq(nonce_check(s, "a", n, NONCE_LEN, 5002, &got, &err), 0);
        ck_assert_int_eq(nonce_check_round(s, "a", &r0, n, &err), 0);
        ck_assert_int_eq(nonce_check_round(s, "a", &r1, n, &err), -ESTALE);
        ck_assert_int_eq(err.code, AE_NONCE_REUSED);
        /* an agent deleted and enrolled again under the same id is another agent */
        ck_assert_int_eq(nonce_check_round(s, "a", &reborn, n, &err), -ESTALE);
        ck_assert_int_eq(err.code, AE_NONCE_REUSED);
        /* another instance with the same key accepts it, one with another key does not */
        ck_assert_int_eq(nonce_check(s2, "a", n, NONCE_LEN, 5002, &got, &err), 0);
        ck_assert_int_eq(nonce_check_round(s2, "a", &r0, n, &err), 0);
        ck_assert_int_eq(nonce_check(other, "a", n, NONCE_LEN, 5002, &got, &err), -ESTALE);
        ck_assert_int_eq(err.code, AE_NONCE_UNKNOWN);
        ck_assert_int_eq(nonce_check_round(other, "a", &r0, n, &err), -ESTALE);
        ck_assert_int_eq(nonce_check(s, "b", n, NONCE_LEN, 5001, &got, &err), -ESTALE);
        ck_assert_int_eq(err.code, AE_NONCE_WRONG_AGENT);
        ck_assert_int_eq(nonce_check(s, "a", n, NONCE_LEN, 6000, &got, &err), -ESTALE);
        ck_assert_int_eq(err.code, AE_NONCE_EXPIRED);
        ck_assert_int_eq(nonce_check(s, "a", n, 31, 5001, &got, &err), -ESTALE);
        ck_assert_int_eq(err.code, AE_NONCE_UNKNOWN);
        /* every byte is covered: a flipped bit anywhere is not a nonce of ours (the expiry
         * moved later by one bit included), or not this agent's, or not this state's */
        for (size_t i = 0; i < NONCE_LEN; i++) {
                memcpy(t, n, NONCE_LEN);
                t[i] ^= 1;
                if (i < 26) {
                        ck_assert_int_eq(nonce_check(s, "a", t, NONCE_LEN, 5001, &got, &err),
                                         -ESTALE);
                        ck_assert_msg(err.code == AE_NONCE_UNKNOWN ||
                                              (i >= 20 && err.code == AE_NONCE_WRONG_AGENT),
                                      "byte %zu: %s", i, attest_code_name(err.code));
                } else {
                        ck_assert_int_eq(nonce_check(s, "a", t, NONCE_LEN, 5001, &got, &err), 0);
                        ck_assert_int_eq(nonce_check_round(s, "a", &r0, t, &err), -ESTALE);
                        ck_assert_int_eq(err.code, AE_NONCE_REUSED);
                }
        }
        /* two nonces differ */
        ck_assert_int_eq(nonce_issue(s, "a", &r0, 5000, m, &exp), 0);
        ck_assert_mem_ne(n, m, NONCE_LEN);
        nonce_store_free(s);
        nonce_store_free(s2);
        nonce_store_free(other);
}
END_TEST

#define NONCE_THREADS 8
#define NONCE_ROUNDS 300

struct nonce_worker {
        struct nonce_store *s;
        int id, bad;
};

/* Issues and checks NONCE_ROUNDS nonces for its own agents, every tag recomputed by HMAC(). */
static void *nonce_worker_run(void *arg)
{
        struct nonce_worker *w = arg;

        for (int i = 0; i < NONCE_ROUNDS; i++) {
                struct attest_err err = {0};
                uint8_t n[NONCE_LEN];
                char agent[NONCE_AGENT_MAX + 1];
                uint64_t exp = 0;

                /* agent ids of every length up to the cap, so MACs of different sizes interleave */
                snprintf(agent, sizeof(agent), "w%d-%d-%.*s", w->id, i, i % 50,
                         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
                struct nonce_round r = {.last_result = i, .created = w->id};

                if (nonce_issue(w->s, agent, &r, 5000, n, &exp) != 0 ||
                    !nonce_tags_match(key1, sizeof(key1), n, agent, &r) ||
                    nonce_check(w->s, agent, n, NONCE_LEN, 5001, NULL, &err) != 0 ||
                    nonce_check_round(w->s, agent, &r, n, &err) != 0 ||
                    nonce_check(w->s, "another", n, NONCE_LEN, 5001, NULL, &err) != -ESTALE)
                        w->bad++;
        }
        return NULL;
}

/* The MAC contexts are reused (a pool of keyed contexts restarted per MAC) by many threads at
 * once: every tag must still be HMAC-SHA256 of its own message under the key, never a
 * continuation of another MAC or another thread's message. */
START_TEST(test_nonce_macs_reused_across_threads)
{
        struct nonce_worker w[NONCE_THREADS];
        pthread_t th[NONCE_THREADS];
        struct nonce_store *s;
        int bad = 0;

        ck_assert_int_eq(nonce_store_new(1000, key1, sizeof(key1), &s), 0);
        /* one thread first: the same contexts serve MAC after MAC */
        w[0] = (struct nonce_worker){.s = s, .id = 99};
        nonce_worker_run(&w[0]);
        ck_assert_int_eq(w[0].bad, 0);
        for (int i = 0; i < NONCE_THREADS; i++) {
                w[i] = (struct nonce_worker){.s = s, .id = i};
                ck_assert_int_eq(pthread_create(&th[i], NULL, nonce_worker_run, &w[i]), 0);
        }
        for (int i = 0; i < NONCE_THREADS; i++) {
                ck_assert_int_eq(pthread_join(th[i], NULL), 0);
                bad += w[i].bad;
        }
        ck_assert_int_eq(bad, 0);
        nonce_store_free(s);
}
END_TEST

START_TEST(test_nonce_key_file)
{
        char dir[] = "/tmp/attestd-key.XXXXXX", path[64];
        uint8_t k1[NONCE_KEY_MAX], k2[NONCE_KEY_MAX];
        struct attest_err err = {0};
        struct stat st;
        size_t l1 = 0, l2 = 0;
        FILE *f;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/nonce.key", dir);
        ck_assert_int_eq(nonce_key_load(path, false, k1, &l1, &err), -ENOENT);
        ck_assert_int_eq(nonce_key_load(path, true, k1, &l1, &err), 0);
        ck_assert_uint_eq(l1, NONCE_KEY_MIN);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 0777, 0600);
        /* the second start reads the same key */
        ck_assert_int_eq(nonce_key_load(path, true, k2, &l2, &err), 0);
        ck_assert_uint_eq(l2, l1);
        ck_assert_mem_eq(k1, k2, l1);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs("short", f);
        fclose(f);
        ck_assert_int_eq(nonce_key_load(path, true, k2, &l2, &err), -EINVAL);
        unlink(path);
        rmdir(dir);
}
END_TEST

/* A row as the store hands one out (its own allocations), with state_len bytes of replay state. */
static struct store_agent *stash_row(const char *id, enum agent_state state, size_t state_len)
{
        struct store_agent *a = calloc(1, sizeof(*a));

        ck_assert_ptr_nonnull(a);
        snprintf(a->id, sizeof(a->id), "%s", id);
        a->state = state;
        a->policy = strdup("p");
        a->replay_state_len = state_len;
        a->replay_state = calloc(1, state_len ? state_len : 1);
        ck_assert_ptr_nonnull(a->policy);
        ck_assert_ptr_nonnull(a->replay_state);
        return a;
}

/*
 * The challenge's rows for their evidence (daemon/rowstash.h): given back for the nonce they were
 * kept under only, once, until it expires; one per agent; bounded in rows and in bytes, the
 * oldest pushed out; a row over the byte bound is not kept (and freed: the ASan run sees a leak
 * otherwise).
 */
START_TEST(test_rowstash_rows_for_their_nonce)
{
        uint8_t n1[NONCE_LEN], n2[NONCE_LEN];
        struct rowstash_stats st;
        struct store_agent *a, *got;
        enum agent_state state = AGENT_STATE_PENDING;
        struct rowstash *s;

        memset(n1, 1, sizeof(n1));
        memset(n2, 2, sizeof(n2));
        ck_assert_int_eq(rowstash_new(4, 1u << 20, &s), 0);
        a = stash_row("a", AGENT_STATE_ACTIVE, 16);
        rowstash_put(s, a, n1, 1000);
        ck_assert(rowstash_state(s, "a", 999, &state));
        ck_assert_int_eq(state, AGENT_STATE_ACTIVE);
        ck_assert(!rowstash_state(s, "b", 999, &state));
        /* another nonce's evidence, a short nonce: not this row, which stays */
        ck_assert_ptr_null(rowstash_take(s, "a", n2, NONCE_LEN, 500));
        ck_assert_ptr_null(rowstash_take(s, "a", n1, NONCE_LEN - 1, 500));
        ck_assert_ptr_null(rowstash_take(s, "b", n1, NONCE_LEN, 500));
        got = rowstash_take(s, "a", n1, NONCE_LEN, 500);
        ck_assert_ptr_eq(got, a);
        store_agent_free(got);
        /* once */
        ck_assert_ptr_null(rowstash_take(s, "a", n1, NONCE_LEN, 500));
        ck_assert(!rowstash_state(s, "a", 500, &state));

        /* expired when its nonce is: not given, dropped */
        rowstash_put(s, stash_row("a", AGENT_STATE_ACTIVE, 16), n1, 1000);
        ck_assert(!rowstash_state(s, "a", 1000, &state));
        ck_assert_ptr_null(rowstash_take(s, "a", n1, NONCE_LEN, 1000));
        rowstash_stats(s, &st);
        ck_assert_uint_eq(st.rows, 0);
        ck_assert_uint_eq(st.bytes, 0);

        /* a newer challenge's row replaces the agent's older one */
        rowstash_put(s, stash_row("a", AGENT_STATE_ACTIVE, 16), n1, 1000);
        a = stash_row("a", AGENT_STATE_DECOMMISSIONED, 16);
        rowstash_put(s, a, n2, 2000);
        ck_assert_ptr_null(rowstash_take(s, "a", n1, NONCE_LEN, 500));
        ck_assert(rowstash_state(s, "a", 500, &state));
        ck_assert_int_eq(state, AGENT_STATE_DECOMMISSIONED);
        got = rowstash_take(s, "a", n2, NONCE_LEN, 500);
        ck_assert_ptr_eq(got, a);
        store_agent_free(got);

        /* four rows at most: the fifth pushes out the oldest */
        rowstash_put(s, stash_row("r1", AGENT_STATE_ACTIVE, 16), n1, 1000);
        rowstash_put(s, stash_row("r2", AGENT_STATE_ACTIVE, 16), n1, 1000);
        rowstash_put(s, stash_row("r3", AGENT_STATE_ACTIVE, 16), n1, 1000);
        rowstash_put(s, stash_row("r4", AGENT_STATE_ACTIVE, 16), n1, 1000);
        rowstash_put(s, stash_row("r5", AGENT_STATE_ACTIVE, 16), n1, 1000);
        ck_assert(!rowstash_state(s, "r1", 500, &state));
        ck_assert(rowstash_state(s, "r2", 500, &state));
        ck_assert(rowstash_state(s, "r5", 500, &state));
        rowstash_stats(s, &st);
        ck_assert_uint_eq(st.rows, 4);
        ck_assert_uint_eq(st.pushed_out, 1);
        ck_assert_uint_eq(st.kept, 9);
        ck_assert_uint_eq(st.taken, 2);
        rowstash_free(s); /* frees the rows it holds */

        /* bytes: a row larger than the stash is not kept; two 40 KiB rows fit in 100 KiB, the
         * third pushes the oldest out */
        ck_assert_int_eq(rowstash_new(100, 100u << 10, &s), 0);
        rowstash_put(s, stash_row("big", AGENT_STATE_ACTIVE, 200u << 10), n1, 1000);
        ck_assert(!rowstash_state(s, "big", 500, &state));
        rowstash_put(s, stash_row("b1", AGENT_STATE_ACTIVE, 40u << 10), n1, 1000);
        rowstash_put(s, stash_row("b2", AGENT_STATE_ACTIVE, 40u << 10), n1, 1000);
        ck_assert(rowstash_state(s, "b1", 500, &state));
        rowstash_put(s, stash_row("b3", AGENT_STATE_ACTIVE, 40u << 10), n1, 1000);
        ck_assert(!rowstash_state(s, "b1", 500, &state));
        ck_assert(rowstash_state(s, "b2", 500, &state));
        ck_assert(rowstash_state(s, "b3", 500, &state));
        rowstash_stats(s, &st);
        ck_assert_uint_eq(st.rows, 2);
        ck_assert_uint_le(st.bytes, 100u << 10);
        ck_assert_uint_gt(st.bytes, 80u << 10);
        rowstash_free(s);

        /* no room at all: nothing kept */
        ck_assert_int_eq(rowstash_new(0, 0, &s), 0);
        rowstash_put(s, stash_row("a", AGENT_STATE_ACTIVE, 16), n1, 1000);
        ck_assert(!rowstash_state(s, "a", 500, &state));
        rowstash_free(s);
}
END_TEST

START_TEST(test_ratelimit_windows_and_log_lines)
{
        struct ratelimit *r;
        uint64_t sup = 99;
        unsigned retry = 0;
        int logged = 0;

        ck_assert_int_eq(ratelimit_new(3, 60000, &r), 0);
        for (int i = 0; i < 3; i++) {
                ck_assert(!ratelimit_blocked(r, "a", 1000, &retry));
                logged += ratelimit_fail(r, "a", 1000 + (uint64_t)i, &sup);
        }
        ck_assert_int_eq(logged, 1);
        ck_assert(ratelimit_blocked(r, "a", 2000, &retry));
        ck_assert_uint_eq(retry, 59);
        ck_assert(!ratelimit_blocked(r, "b", 2000, &retry));
        for (int i = 0; i < 100; i++)
                ck_assert(ratelimit_blocked(r, "a", 3000, &retry));
        /* the next window: one line, carrying the 2 + 1 + 100 left out */
        ck_assert(!ratelimit_blocked(r, "a", 61000, &retry));
        ck_assert(ratelimit_fail(r, "a", 61000, &sup));
        ck_assert_uint_eq(sup, 103);
        ratelimit_free(r);
}
END_TEST

START_TEST(test_tokens_roles_and_errors)
{
        /* sha256("secret") and sha256("other") */
        static const char ok[] =
                "# comment\n\nadmin "
                "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b "
                "ops team\nreader\t"
                "d9298a10d1b0735837dc4bd85dac641b0f3cef27a47e5d53a54f2f3f5b2fcffa\n";
        struct auth_tokens *t;
        struct attest_err err = {0};

        ck_assert_int_eq(auth_parse(ok, strlen(ok), "tok", &t, &err), 0);
        ck_assert_uint_eq(auth_count(t), 2);
        ck_assert_int_eq(auth_lookup(t, "secret", 6), AUTH_ADMIN);
        ck_assert_int_eq(auth_lookup(t, "other", 5), AUTH_READER);
        ck_assert_int_eq(auth_lookup(t, "secreT", 6), AUTH_NONE);
        ck_assert_int_eq(auth_lookup(t, "", 0), AUTH_NONE);
        ck_assert(auth_allows(AUTH_ADMIN, AUTH_READER));
        ck_assert(!auth_allows(AUTH_READER, AUTH_ADMIN));
        ck_assert(!auth_allows(AUTH_ENROLL, AUTH_READER));
        auth_free(t);
        ck_assert_int_eq(auth_parse("root 00\n", 8, "tok", &t, &err), -EINVAL);
        ck_assert_int_eq(err.code, AE_TOKENS_BAD_ROLE);
        ck_assert_ptr_nonnull(strstr(err.msg, "tok:1"));
        ck_assert_int_eq(auth_parse("\nadmin abc\n", 11, "tok", &t, &err), -EINVAL);
        ck_assert_int_eq(err.code, AE_TOKENS_BAD_HASH);
        ck_assert_ptr_nonnull(strstr(err.msg, "tok:2"));
}
END_TEST

START_TEST(test_config_file_then_flags)
{
        char path[] = "/tmp/attestd-conf.XXXXXX";
        int fd = mkstemp(path);
        const char text[] = "# x\nthreads = 3\nretain=7\ninsecure-http = yes\n";
        char *argv[] = {"attestd", "--config", path, "--retain", "9", NULL};
        struct config c;
        struct attest_err err = {0};

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        ck_assert_int_eq(config_load(5, argv, &c, &err), 0);
        ck_assert_uint_eq(c.threads, 3);
        ck_assert_uint_eq(c.retain, 9);
        ck_assert(c.insecure_http);
        ck_assert_uint_eq(c.db_connections, 3);
        ck_assert_uint_eq(c.nonce_ttl, 60);
        char *bad[] = {"attestd", "--config", path, "--threads", "0", NULL};
        ck_assert_int_eq(config_load(5, bad, &c, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "threads"));
        char *unknown[] = {"attestd", "--config", path, "--colour", NULL};
        ck_assert_int_eq(config_load(4, unknown, &c, &err), -EINVAL);
        unlink(path);
}
END_TEST

/* --db with the config file path given: 0 or the error (err says) */
static int load_db(const char *path, const char *db, const char *pwfile, struct config *c,
                   struct attest_err *err)
{
        char *argv[] = {"attestd",  "--config",           (char *)path,   "--db",
                        (char *)db, "--db-password-file", (char *)pwfile, NULL};

        return config_load(pwfile ? 7 : 5, argv, c, err);
}

/*
 * PostgreSQL URLs (docs/scaling.md "Failover"): a multi-host URL is taken as given (libpq tries
 * its hosts in turn, target_session_attrs picks the one taking writes); every refusal of a
 * password in the URL holds for it too; sslmode defaults to prefer only when every host listed
 * is loopback (one remote host among them: require).
 */
START_TEST(test_config_db_urls)
{
        char path[] = "/tmp/attestd-conf.XXXXXX";
        int fd = mkstemp(path);
        const char *ha = "postgresql://attest@127.0.0.1:5432,127.0.0.1:5433/attestd?"
                         "target_session_attrs=read-write";
        struct config c;
        struct attest_err err = {0};

        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(load_db(path, ha, NULL, &c, &err), 0);
        ck_assert_str_eq(c.db, ha);
        ck_assert_int_eq(load_db(path, ha, "/etc/attestd/db.password", &c, &err), 0);
        ck_assert_int_eq(
                load_db(path, "postgres://attest@db1:5432,db2:5432/attestd", NULL, &c, &err), 0);
        /* a password in the URL: refused, one host or several, in the userinfo or a parameter */
        const char *pw[] = {
                "postgresql://attest:secret@127.0.0.1:5432/attestd",
                "postgresql://attest:secret@127.0.0.1:5432,127.0.0.1:5433/attestd",
                "postgres://attest:secret@db1,db2/attestd?target_session_attrs=read-write",
                "postgresql://attest@127.0.0.1:5432,127.0.0.1:5433/attestd?password=secret",
                "postgresql://attest@db1,db2/attestd?target_session_attrs=read-write&"
                "password=secret",
        };
        for (size_t i = 0; i < sizeof(pw) / sizeof(pw[0]); i++) {
                memset(&err, 0, sizeof(err));
                ck_assert_int_eq(load_db(path, pw[i], NULL, &c, &err), -EINVAL);
                ck_assert_ptr_nonnull(strstr(err.msg, "password in the URL"));
        }
        /* the password file goes with a URL only */
        ck_assert_int_eq(
                load_db(path, "/var/lib/attestd/attestd.db", "/etc/attestd/db.password", &c, &err),
                -EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "db-password-file"));
        unlink(path);

        /* loopback (sslmode prefer) only when every host is */
        ck_assert(db_pg_loopback("postgresql://attest@127.0.0.1:5432/attestd"));
        ck_assert(db_pg_loopback("postgresql://localhost/attestd"));
        ck_assert(db_pg_loopback("postgresql:///attestd"));
        ck_assert(db_pg_loopback("postgresql://[::1]:5432/attestd"));
        ck_assert(db_pg_loopback(ha));
        ck_assert(db_pg_loopback("postgresql://127.0.0.1,localhost:5433,[::1]:5434/a?x=y"));
        ck_assert(db_pg_loopback("postgresql://attest@127.0.0.2:1,127.9.9.9/attestd"));
        ck_assert(!db_pg_loopback("postgresql://attest@db.example:5432/attestd"));
        ck_assert(!db_pg_loopback("postgresql://attest@127.0.0.1:5432,db.example:5432/attestd"));
        ck_assert(!db_pg_loopback("postgresql://attest@db.example:5432,127.0.0.1:5432/attestd"));
        ck_assert(!db_pg_loopback("postgresql://127.0.0.1,localhost,10.0.0.7/attestd"));
        ck_assert(!db_pg_loopback("postgresql://[::1]:5432,[2001:db8::1]:5432/attestd"));
        ck_assert(!db_pg_loopback("postgresql://localhost.example,127.0.0.1/attestd"));
        ck_assert(!db_pg_loopback("/var/lib/attestd/attestd.db"));
}
END_TEST

START_TEST(test_metrics_text)
{
        struct metrics m;
        struct metrics_agents a = {1, 2, 3, 4, 5};
        struct metrics_routes mr = {.n = 1, .pattern = {"/v1/agents"}, .method = {{"GET"}}};
        char *t;
        size_t n;

        metrics_init(&m);
        metrics_attestation(&m, METRICS_PASS, 300);
        metrics_attestation(&m, METRICS_FAIL, 7000000);
        metrics_rejected(&m, AE_FORBIDDEN);
        metrics_rejected(&m, AE_FORBIDDEN);
        metrics_replayed(&m, 10);
        struct metrics_store st = {3, 9, 40, 11, 2, 1, 5, 123, 4, 1, 8, 2, 1};

        struct metrics_policies pol = {7, 2, 3, 0, 1, 0};

        metrics_claim_failed(&m, CLAIM_CFI_ENABLED);
        metrics_claim_failed(&m, CLAIM_CFI_ENABLED);
        metrics_claim_failed(&m, CLAIM__COUNT); /* out of range: dropped */
        metrics_http(&m, 0, 0, 700);
        metrics_http(&m, 0, 0, 2000);
        metrics_http(&m, 0, 0, 9000000);
        metrics_http(&m, SIZE_MAX, 0, 10); /* no route */
        metrics_http(&m, 3, 7, 10);        /* out of range: "none" */
        metrics_conn_open(&m, 1);
        metrics_conn_open(&m, 1);
        metrics_conn_open(&m, 1);
        metrics_conn_open(&m, -1);
        metrics_conn_closed(&m, METRICS_CONN_EVICTED);
        metrics_conn_closed(&m, METRICS_CONN_EVICTED);
        metrics_conn_closed(&m, METRICS_CONN_REFUSED);
        metrics_conn_closed(&m, METRICS_CONN__COUNT); /* out of range: dropped */
        metrics_response(&m, 200);
        metrics_response(&m, 204);
        metrics_response(&m, 409);
        metrics_response(&m, 503);
        metrics_response(&m, 0); /* nobody set one: a server error */
        metrics_replay_reset(&m, METRICS_RESET_REBOOT);
        metrics_replay_reset(&m, METRICS_RESET_STATE_UNUSABLE);
        metrics_replay_reset(&m, METRICS_RESET__COUNT); /* out of range: dropped */
        ck_assert_int_eq(metrics_render(&m, &a, &st, &pol, &mr, &t, &n), 0);
        ck_assert_msg(
                strstr(t, "\nattestd_http_connections 2\n") &&
                        strstr(t, "\nattestd_http_connections_closed_total{reason=\"overdue\"} "
                                  "0\n") &&
                        strstr(t, "\nattestd_http_connections_closed_total{reason=\"pressure\"} "
                                  "0\n") &&
                        strstr(t, "\nattestd_http_connections_closed_total{reason=\"evicted\"} "
                                  "2\n") &&
                        strstr(t, "\nattestd_http_connections_closed_total{reason=\"refused\"} "
                                  "1\n"),
                "%s", t);
        ck_assert_msg(strstr(t, "\nattestd_store_wal_pages_total 40\n") &&
                              strstr(t, "\nattestd_agent_cache_hits_total 11\n") &&
                              strstr(t, "\nattestd_agent_cache_misses_total 2\n") &&
                              strstr(t, "\nattestd_agent_cache_evictions_total 1\n") &&
                              strstr(t, "\nattestd_agent_cache_entries 5\n") &&
                              strstr(t, "\nattestd_db_statements_total 123\n") &&
                              strstr(t, "\nattestd_db_pool_waits_total 4\n") &&
                              strstr(t, "\nattestd_db_pool_exhausted_total 1\n") &&
                              strstr(t, "\nattestd_db_pool_connections 8\n") &&
                              strstr(t, "\nattestd_db_pool_in_use 2\n"),
                      "%s", t);
        {
                const char *b = strstr(t, "\nattestd_build_info{version=\"");
                const char *q = b ? strchr(b + 30, '"') : NULL;

                ck_assert_msg(b && q && q > b + 30 && !strncmp(q, "\"} 1\n", 5), "%s", t);
        }
        ck_assert_ptr_nonnull(strstr(t, "attestd_claim_failures_total{claim=\"cfi.enabled\"} 2\n"));
        ck_assert_ptr_nonnull(
                strstr(t, "attestd_claim_failures_total{claim=\"cfi.anchored\"} 0\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_agents{state=\"decommissioned\"} 5\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_http_request_duration_seconds_bucket{route=\"/v1/"
                                        "agents\",method=\"GET\",le=\"0.0005\"} 0\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_http_request_duration_seconds_bucket{route=\"/v1/"
                                        "agents\",method=\"GET\",le=\"0.001\"} 1\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_http_request_duration_seconds_bucket{route=\"/v1/"
                                        "agents\",method=\"GET\",le=\"0.0025\"} 2\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_http_request_duration_seconds_bucket{route=\"/v1/"
                                        "agents\",method=\"GET\",le=\"+Inf\"} 3\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_http_request_duration_seconds_count{route=\"/v1/"
                                        "agents\",method=\"GET\"} 3\n"));
        ck_assert_ptr_nonnull(strstr(t,
                                     "attestd_http_request_duration_seconds_count{route=\"none\","
                                     "method=\"\"} 2\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_policy_cache_hits_total 7\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_policy_cache_misses_total 2\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_policy_parses_total 3\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_store_writes_total 9\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_attestations_total{result=\"pass\"} 1\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_verification_seconds_bucket{le=\"0.0005\"} 1\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_verification_seconds_bucket{le=\"+Inf\"} 2\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_rejected_requests_total{code=\"forbidden\"} 2\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_agents{state=\"stale\"} 2\n"));
        ck_assert_ptr_nonnull(strstr(t, "attestd_ima_entries_replayed_total 10\n"));
        ck_assert_ptr_nonnull(strstr(t, "\nattestd_store_writable 1\n"));
        ck_assert_msg(strstr(t, "\nattestd_http_responses_total{class=\"2xx\"} 2\n") &&
                              strstr(t, "\nattestd_http_responses_total{class=\"3xx\"} 0\n") &&
                              strstr(t, "\nattestd_http_responses_total{class=\"4xx\"} 1\n") &&
                              strstr(t, "\nattestd_http_responses_total{class=\"5xx\"} 2\n"),
                      "%s", t);
        ck_assert_msg(strstr(t, "\nattestd_replay_resets_total{reason=\"reboot\"} 1\n") &&
                              strstr(t, "\nattestd_replay_resets_total{reason=\"runtime_policy\"} "
                                        "0\n") &&
                              strstr(t, "\nattestd_replay_resets_total{reason=\"state_unusable\"} "
                                        "1\n"),
                      "%s", t);
        free(t);
        metrics_done(&m);
}
END_TEST

static void rm_rf(const char *dir)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
}

/* A fresh directory from the mkdtemp template dir, and db = dir/t.db (n bytes) */
static void db_in_tmp(char *dir, char *db, size_t n)
{
        ck_assert_ptr_nonnull(mkdtemp(dir));
        store_target(dir, "t.db", db, n);
}

/* The same, always a SQLite file (tests of SQLite databases older attestd versions left) */
static void sqlite_in_tmp(char *dir, char *db, size_t n)
{
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_lt(snprintf(db, n, "%s/t.db", dir), (int)n);
}

/* An agent record: id, state, the 4-byte AK public area and AK name, created at 1000 */
static void agent_rec(struct store_agent *a, const char *id, enum agent_state state, uint8_t ak[4],
                      uint8_t name[4])
{
        snprintf(a->id, sizeof(a->id), "%s", id);
        a->state = state;
        a->ak_public = ak;
        a->ak_public_len = 4;
        a->ak_name = name;
        a->ak_name_len = 4;
        a->created = 1000;
}

static void store_checks(enum store_mode mode)
{
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64];
        struct store *s;
        struct attest_err err = {0};
        struct store_agent a = {0}, *got = NULL;
        struct store_result_head head;
        uint8_t ak[4] = {1, 2, 3, 4}, name[4] = {5, 6, 7, 8};
        int64_t v, id;
        char *body;
        int ver;

        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, mode, 2, &s, &err), 0);
        ck_assert_int_eq(store_schema_version(s, &ver), 0);
        ck_assert_int_eq(ver, STORE_SCHEMA_VERSION);
        agent_rec(&a, "agent1", AGENT_STATE_ACTIVE, ak, name);
        ck_assert_int_eq(store_agent_add(s, &a), 0);
        ck_assert_int_eq(store_agent_add(s, &a), -EEXIST);
        ck_assert_int_eq(store_policy_put(s, "p", "{\"name\":\"p\"}", 1, &v), 0);
        ck_assert_int_eq(v, 1);
        ck_assert_int_eq(store_policy_put(s, "p", "{\"name\":\"p\",\"x\":1}", 2, &v), 0);
        ck_assert_int_eq(v, 2);
        ck_assert_int_eq(store_policy_get(s, "p", 1, &body, &v, NULL), 0);
        ck_assert_str_eq(body, "{\"name\":\"p\"}");
        free(body);
        ck_assert_int_eq(store_agent_set_policy(s, "agent1", "p"), 0);
        ck_assert_int_eq(store_agent_set_policy(s, "agent1", "q"), -ENODATA);
        ck_assert_int_eq(store_agent_set_policy(s, "nobody", "p"), -ENOENT);
        ck_assert_int_eq(store_policy_delete(s, "p"), -EBUSY);
        /* binding a policy is a change of the agent: a round that read it before is stale */
        ck_assert_int_eq(store_agent_get(s, "agent1", &got), 0);
        ck_assert_uint_eq(got->seq, 1);
        store_agent_free(got);
        got = NULL;
        for (int i = 1; i < 6; i++) {
                struct store_result r = {.agent = "agent1",
                                         .time = 2000 + i,
                                         .status = "pass",
                                         .policy = "p@2",
                                         .verdict = "{}",
                                         .next_due = 9000,
                                         .ima_offset = (uint64_t)i,
                                         .replay_state = (const uint8_t *)"{}",
                                         .replay_state_len = 2};

                ck_assert_int_eq(store_result_add(s, &r, (uint64_t)i, 3, &id), 0);
                /* the same seq again: someone else got there first */
                ck_assert_int_eq(store_result_add(s, &r, (uint64_t)i, 3, &id), -ESTALE);
        }
        ck_assert_int_eq(store_agent_get(s, "agent1", &got), 0);
        ck_assert_uint_eq(got->seq, 6);
        ck_assert_uint_eq(got->ima_offset, 5);
        ck_assert_str_eq(got->last_policy, "p@2");
        store_agent_free(got);
        ck_assert_int_eq(store_agent_reset_replay(s, "agent1", 6), 0);
        ck_assert_int_eq(store_agent_get(s, "agent1", &got), 0);
        ck_assert_uint_eq(got->ima_offset, 0);
        ck_assert_ptr_nonnull(got->replay_state);
        store_agent_free(got);
        ck_assert_int_eq(store_result_latest(s, "agent1", &head), 0);
        ck_assert_int_eq(store_agent_delete(s, "agent1", 1000), 0);
        ck_assert_int_eq(store_agent_delete(s, "agent1", 1000), -ENOENT);
        /* its results went with it (on PostgreSQL no foreign key cascades since schema 10):
         * an agent enrolled again under the id has none */
        ck_assert_int_eq(store_agent_add(s, &a), 0);
        ck_assert_int_eq(store_result_latest(s, "agent1", &head), -ENODATA);
        ck_assert_int_eq(store_agent_delete(s, "agent1", 1000), 0);
        ck_assert_int_eq(store_policy_delete(s, "p"), 0);
        ck_assert_int_eq(store_policy_put(s, "p", "{\"name\":\"p\"}", 3, &v), 0);
        ck_assert_int_eq(v, 3);
        store_close(s);
        /* reopening migrates nothing and keeps the data */
        ck_assert_int_eq(store_open(db, mode, 1, &s, &err), 0);
        ck_assert_int_eq(store_policy_get(s, "p", 0, &body, &v, NULL), 0);
        ck_assert_int_eq(v, 3);
        free(body);
        store_close(s);
        rm_rf(dir);
}

/* Pending credentials, EK identity, decommission and consumed nonces. */
START_TEST(test_store_identity_decommission_nonces)
{
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64], replaced[STORE_ID_MAX + 1];
        struct store *s;
        struct attest_err err = {0};
        struct store_agent a = {0}, b = {0}, *got = NULL;
        uint8_t ak[4] = {1, 2, 3, 4}, name[4] = {5, 6, 7, 8}, name2[4] = {9, 9, 9, 9},
                name3[4] = {3, 3, 3, 3}, name4[4] = {4, 4, 4, 4};
        uint8_t ekpub[8] = {0}, h1[32], h2[32], h3[32];
        struct stat st;
        uint64_t count;
        int64_t rid;

        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_WRITER, 1, &s, &err), 0);
        /* the database and its WAL are the verifier's alone */
        if (!store_target_pg()) {
                ck_assert_int_eq(stat(db, &st), 0);
                ck_assert_uint_eq(st.st_mode & 0777, 0600);
        }
        memset(h1, 1, 32);
        memset(h2, 2, 32);
        memset(h3, 3, 32);
        agent_rec(&a, "old", AGENT_STATE_PENDING, ak, name);
        memset(a.ek_id, 0xee, sizeof(a.ek_id));
        a.has_ek_id = true;
        ck_assert_int_eq(store_agent_add_pending(s, &a, ekpub, sizeof(ekpub), h1, 100000), 0);
        /* a second enrolment adds a credential, the first one stays valid */
        ck_assert_int_eq(store_agent_add_pending(s, &a, ekpub, sizeof(ekpub), h2, 100000), 0);
        ck_assert_int_eq(store_agent_activate(s, "old", h3, 2000, replaced), -EKEYREJECTED);
        ck_assert_int_eq(store_agent_activate(s, "old", h1, 2000, replaced), 0);
        ck_assert_str_eq(replaced, "");
        ck_assert_int_eq(store_agent_activate(s, "old", h2, 2000, replaced), -EALREADY);
        ck_assert_int_eq(store_agent_get(s, "old", &got), 0);
        ck_assert_int_eq(got->state, AGENT_STATE_ACTIVE);
        ck_assert(got->has_ek_id);
        store_agent_free(got);
        /* a new AK on the same EK: pending beside the old agent, which it replaces on proof */
        b = a;
        snprintf(b.id, sizeof(b.id), "new");
        b.ak_name = name2;
        ck_assert_int_eq(store_agent_add_pending(s, &b, ekpub, sizeof(ekpub), h3, 100000), 0);
        ck_assert_int_eq(store_agent_get(s, "old", &got), 0);
        ck_assert_int_eq(got->state, AGENT_STATE_ACTIVE);
        store_agent_free(got);
        ck_assert_int_eq(store_agent_activate(s, "new", h3, 3000, replaced), 0);
        ck_assert_str_eq(replaced, "old");
        ck_assert_int_eq(store_agent_get(s, "old", &got), -ENOENT);
        /* at most STORE_PENDING_MAX live credentials per pending agent */
        snprintf(b.id, sizeof(b.id), "third");
        b.ak_name = name3;
        for (int i = 0; i < STORE_PENDING_MAX; i++)
                ck_assert_int_eq(store_agent_add_pending(s, &b, ekpub, sizeof(ekpub), h1, 100000),
                                 0);
        ck_assert_int_eq(store_agent_add_pending(s, &b, ekpub, sizeof(ekpub), h1, 100000), -EBUSY);
        /* decommission: agent and EK refused until readmitted, even after a DELETE */
        ck_assert_int_eq(store_agent_decommission(s, "new", 4000), 0);
        ck_assert_int_eq(store_test_offset(s, "new", &count), -EPERM);
        ck_assert_int_eq(store_ek_refused(s, a.ek_id, replaced, sizeof(replaced)), -EPERM);
        ck_assert_str_eq(replaced, "new");
        ck_assert_int_eq(store_agent_activate(s, "third", h1, 4000, replaced), -EACCES);
        snprintf(b.id, sizeof(b.id), "fourth");
        b.ak_name = name4;
        ck_assert_int_eq(store_agent_add_pending(s, &b, ekpub, sizeof(ekpub), h1, 100000), -EPERM);
        ck_assert_int_eq(store_agent_delete(s, "new", 1000), 0);
        ck_assert_int_eq(store_ek_refused(s, a.ek_id, NULL, 0), -EPERM);
        ck_assert_int_eq(store_agent_readmit(s, "new", 1000), 0);
        ck_assert_int_eq(store_agent_readmit(s, "new", 1000), -ENOENT);
        ck_assert_int_eq(store_ek_refused(s, a.ek_id, NULL, 0), 0);
        ck_assert_int_eq(store_agent_activate(s, "third", h1, 5000, replaced), 0);
        ck_assert_int_eq(store_agent_decommission(s, "third", 6000), 0);
        ck_assert_int_eq(store_agent_readmit(s, "third", 1000), 0);
        ck_assert_int_eq(store_agent_readmit(s, "third", 1000), -EALREADY);
        ck_assert_int_eq(store_test_offset(s, "third", &count), 0);
        /* each verdict stores a result with a new id and makes it the agent's last result
         * (what a nonce is bound to, daemon/nonce.h: a new one makes earlier nonces stale); a
         * verdict on the seq it read twice is refused */
        {
                struct store_result r = {.agent = "third",
                                         .time = 7000,
                                         .status = "pass",
                                         .verdict = "{}",
                                         .replay_state = (const uint8_t *)"{}",
                                         .replay_state_len = 2};
                int64_t rid2;

                ck_assert_int_eq(store_agent_get(s, "third", &got), 0);
                ck_assert_int_eq(store_result_add(s, &r, got->seq, 3, &rid), 0);
                ck_assert_int_eq(store_result_add(s, &r, got->seq, 3, &rid2), -ESTALE);
                store_agent_free(got);
                ck_assert_int_eq(store_agent_get(s, "third", &got), 0);
                ck_assert_int_eq(got->last_result, rid);
                r.time = 8000;
                ck_assert_int_eq(store_result_add(s, &r, got->seq, 3, &rid2), 0);
                ck_assert_int_gt(rid2, rid);
                store_agent_free(got);
                ck_assert_int_eq(store_agent_get(s, "third", &got), 0);
                ck_assert_int_eq(got->last_result, rid2);
                store_agent_free(got);
        }
        store_close(s);
        rm_rf(dir);
}
END_TEST

/* The admin API's queries: ids by prefix (no LIKE patterns), agents by bound policy and their
 * count, the refused EKs after a delete (paged by agent and EK), results since a time. */
struct ids {
        char s[256];
};

static int id_row(const struct store_agent *a, void *arg)
{
        struct ids *l = arg;
        size_t n = strlen(l->s);

        snprintf(l->s + n, sizeof(l->s) - n, "%s%s", n ? " " : "", a->id);
        return 0;
}

static struct ids query_ids(struct store *s, const char *prefix, const char *policy,
                            const char *after, uint64_t limit)
{
        struct store_agent_filter f = {
                .prefix = prefix, .policy = policy, .after = after, .limit = limit};
        struct ids l = {""};

        ck_assert_int_eq(store_agent_query(s, &f, id_row, &l), 0);
        return l;
}

static int refused_row(const uint8_t ek_id[STORE_EK_ID_LEN], const char *agent, int64_t time,
                       bool agent_exists, void *arg)
{
        struct ids *l = arg;
        size_t n = strlen(l->s);

        snprintf(l->s + n, sizeof(l->s) - n, "%s%s:%02x:%lld:%d", n ? " " : "", agent, ek_id[0],
                 (long long)time, agent_exists);
        return 0;
}

static int since_row(const struct store_result_row *row, void *arg)
{
        struct ids *l = arg;
        size_t n = strlen(l->s);

        ck_assert_str_eq(row->verdict, "{}");
        /* the due time each result gave (time + 500 below) */
        ck_assert_int_eq(row->due, row->time + 500);
        snprintf(l->s + n, sizeof(l->s) - n, "%s%lld:%s", n ? " " : "", (long long)row->time,
                 row->status);
        return 0;
}

START_TEST(test_store_admin_queries)
{
        static const char *const ids[] = {"abcd0001", "abcd0002", "abce0003", "ab_d0004"};
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64];
        struct store *s;
        struct attest_err err = {0};
        struct store_agent_filter f = {.policy = "p"};
        uint8_t ak[4] = {1, 2, 3, 4}, names[4][4] = {{1}, {2}, {3}, {4}}, ek[STORE_EK_ID_LEN];
        struct ids l = {""};
        uint64_t n = 0;
        int64_t v, rid;

        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_WRITER, 1, &s, &err), 0);
        ck_assert_int_eq(store_policy_put(s, "p", "{}", 1, &v), 0);
        for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
                struct store_agent a = {0};

                agent_rec(&a, ids[i], AGENT_STATE_ACTIVE, ak, names[i]);
                memset(a.ek_id, (int)(0x10 * (i + 1)), sizeof(a.ek_id));
                a.has_ek_id = true;
                ck_assert_int_eq(store_agent_add(s, &a), 0);
        }
        ck_assert_int_eq(store_agent_set_policy(s, "abcd0002", "p"), 0);
        ck_assert_int_eq(store_agent_set_policy(s, "abce0003", "p"), 0);
        /* prefixes: whole characters, "_" is no wildcard, nothing matches a longer prefix */
        ck_assert_str_eq(query_ids(s, "abcd", NULL, NULL, 10).s, "abcd0001 abcd0002");
        ck_assert_str_eq(query_ids(s, "abce", NULL, NULL, 10).s, "abce0003");
        ck_assert_str_eq(query_ids(s, "ab_d", NULL, NULL, 10).s, "ab_d0004");
        ck_assert_str_eq(query_ids(s, "abcd00011", NULL, NULL, 10).s, "");
        ck_assert_str_eq(query_ids(s, "ABCD", NULL, NULL, 10).s, "");
        ck_assert_str_eq(query_ids(s, "abcd", NULL, "abcd0001", 10).s, "abcd0002");
        ck_assert_str_eq(query_ids(s, "abc", NULL, NULL, 1).s, "abcd0001");
        /* by bound policy, alone and with a prefix; the count ignores after and limit */
        ck_assert_str_eq(query_ids(s, NULL, "p", NULL, 10).s, "abcd0002 abce0003");
        ck_assert_str_eq(query_ids(s, "abcd", "p", NULL, 10).s, "abcd0002");
        ck_assert_str_eq(query_ids(s, NULL, "q", NULL, 10).s, "");
        f.after = "zzzz";
        f.limit = 1;
        ck_assert_int_eq(store_agent_query_count(s, &f, &n), 0);
        ck_assert_uint_eq(n, 2);
        f.prefix = "abce";
        ck_assert_int_eq(store_agent_query_count(s, &f, &n), 0);
        ck_assert_uint_eq(n, 1);
        /* results since a time, oldest first, after a cursor, at most limit */
        for (int i = 1; i <= 5; i++) {
                struct store_agent *a = NULL;
                struct store_result r = {.agent = "abcd0001",
                                         .time = 1000 * i,
                                         .next_due = 1000 * i + 500,
                                         .status = i == 4 ? "fail" : "pass",
                                         .verdict = "{}",
                                         .replay_state = (const uint8_t *)"{}",
                                         .replay_state_len = 2};

                ck_assert_int_eq(store_agent_get(s, "abcd0001", &a), 0);
                ck_assert_int_eq(store_result_add(s, &r, a->seq, 100, &rid), 0);
                store_agent_free(a);
        }
        ck_assert_int_eq(store_results_since(s, "abcd0001", 10, 0, 3000, since_row, &l), 0);
        ck_assert_str_eq(l.s, "3000:pass 4000:fail 5000:pass");
        l.s[0] = '\0';
        ck_assert_int_eq(store_results_since(s, "abcd0001", 2, 0, 0, since_row, &l), 0);
        ck_assert_str_eq(l.s, "1000:pass 2000:pass");
        l.s[0] = '\0';
        ck_assert_int_eq(store_results_since(s, "abcd0001", 10, rid - 1, 0, since_row, &l), 0);
        ck_assert_str_eq(l.s, "5000:pass");
        l.s[0] = '\0';
        ck_assert_int_eq(store_results_since(s, "abcd0001", 10, rid, 0, since_row, &l), 0);
        ck_assert_str_eq(l.s, "");
        ck_assert_int_eq(store_results_since(s, "nobody", 10, 0, 0, since_row, &l), -ENOENT);
        /* refused EKs: listed after the agent is deleted, by agent id, paged, by prefix */
        ck_assert_int_eq(store_ek_refused_list(s, NULL, NULL, NULL, 10, refused_row, &l), 0);
        ck_assert_str_eq(l.s, "");
        ck_assert_int_eq(store_agent_decommission(s, "abce0003", 7000), 0);
        ck_assert_int_eq(store_agent_decommission(s, "abcd0001", 6000), 0);
        ck_assert_int_eq(store_agent_delete(s, "abcd0001", 7500), 0);
        ck_assert_int_eq(store_ek_refused_list(s, NULL, NULL, NULL, 10, refused_row, &l), 0);
        ck_assert_str_eq(l.s, "abcd0001:10:6000:0 abce0003:30:7000:1");
        l.s[0] = '\0';
        memset(ek, 0x10, sizeof(ek));
        ck_assert_int_eq(store_ek_refused_list(s, "abcd0001", ek, NULL, 10, refused_row, &l), 0);
        ck_assert_str_eq(l.s, "abce0003:30:7000:1");
        l.s[0] = '\0';
        ck_assert_int_eq(store_ek_refused_list(s, NULL, NULL, "abcd", 10, refused_row, &l), 0);
        ck_assert_str_eq(l.s, "abcd0001:10:6000:0");
        l.s[0] = '\0';
        ck_assert_int_eq(store_ek_refused_list(s, NULL, NULL, NULL, 1, refused_row, &l), 0);
        ck_assert_str_eq(l.s, "abcd0001:10:6000:0");
        ck_assert_int_eq(store_agent_readmit(s, "abcd0001", 8000), 0);
        l.s[0] = '\0';
        ck_assert_int_eq(store_ek_refused_list(s, NULL, NULL, NULL, 10, refused_row, &l), 0);
        ck_assert_str_eq(l.s, "abce0003:30:7000:1");
        store_close(s);
        rm_rf(dir);
}
END_TEST

/* A schema 2 database (one pending agent with its credential) migrates to 3 and activates. */
START_TEST(test_store_migrates_pending_enrolments)
{
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64], cmd[2048];
        char replaced[STORE_ID_MAX + 1];
        struct store *s;
        struct attest_err err = {0};
        struct store_agent *got = NULL;
        uint8_t h[32];
        int ver;

        sqlite_in_tmp(dir, db, sizeof(db));
        /* the tables of schema 2 as the released migrations 1 and 2 made them */
        snprintf(
                cmd, sizeof(cmd),
                "sqlite3 %s \"CREATE TABLE agents (id TEXT PRIMARY KEY, ak_public BLOB NOT NULL,"
                " ak_name BLOB NOT NULL UNIQUE, ek_cert BLOB, state TEXT NOT NULL, policy TEXT,"
                " created INTEGER NOT NULL, last_seen INTEGER NOT NULL DEFAULT 0,"
                " next_due INTEGER NOT NULL DEFAULT 0, last_status TEXT, last_policy TEXT,"
                " last_result INTEGER NOT NULL DEFAULT 0, ima_offset INTEGER NOT NULL DEFAULT 0,"
                " replay_state TEXT, seq INTEGER NOT NULL DEFAULT 0);"
                " CREATE TABLE policies (name TEXT NOT NULL, version INTEGER NOT NULL,"
                " body TEXT NOT NULL, created INTEGER NOT NULL,"
                " deleted INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (name, version));"
                " CREATE TABLE results (id INTEGER PRIMARY KEY AUTOINCREMENT, agent TEXT NOT NULL"
                " REFERENCES agents(id) ON DELETE CASCADE, time INTEGER NOT NULL,"
                " status TEXT NOT NULL, policy TEXT, verdict TEXT NOT NULL);"
                " CREATE INDEX results_by_agent ON results(agent, id);"
                " CREATE TABLE enrolments (agent TEXT PRIMARY KEY REFERENCES agents(id)"
                " ON DELETE CASCADE, ek_public BLOB NOT NULL, cred_hash BLOB NOT NULL,"
                " expires INTEGER NOT NULL);"
                " INSERT INTO agents (id, ak_public, ak_name, state, created)"
                " VALUES ('p', x'01', x'02', 'pending', 1);"
                " INSERT INTO agents (id, ak_public, ak_name, state, created, ima_offset,"
                " replay_state) VALUES ('j', x'04', x'05', 'active', 1, 7, '{\\\"valid\\\":true}');"
                " INSERT INTO enrolments VALUES ('p', x'03', x'%s', 99999);"
                " PRAGMA user_version = 2;\"",
                db, "0505050505050505050505050505050505050505050505050505050505050505");
        ck_assert_int_eq(system(cmd), 0);
        ck_assert_int_eq(store_open(db, STORE_POOL, 1, &s, &err), 0);
        ck_assert_int_eq(store_schema_version(s, &ver), 0);
        ck_assert_int_eq(ver, STORE_SCHEMA_VERSION);
        /* 3 -> 4 drops the JSON replay states: the agent is asked for its log from entry 0 */
        ck_assert_int_eq(store_agent_get(s, "j", &got), 0);
        ck_assert_ptr_null(got->replay_state);
        ck_assert_uint_eq(got->ima_offset, 0);
        store_agent_free(got);
        memset(h, 5, sizeof(h));
        ck_assert_int_eq(store_agent_activate(s, "p", h, 1000, replaced), 0);
        ck_assert_int_eq(store_agent_get(s, "p", &got), 0);
        ck_assert_int_eq(got->state, AGENT_STATE_ACTIVE);
        ck_assert(!got->has_ek_id);
        store_agent_free(got);
        store_close(s);
        rm_rf(dir);
}
END_TEST

START_TEST(test_store_refuses_a_newer_schema)
{
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64], cmd[160];
        struct store *s;
        struct attest_err err = {0};

        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_POOL, 1, &s, &err), 0);
        store_close(s);
        if (store_target_pg()) {
                snprintf(cmd, sizeof(cmd), "UPDATE schema_version SET version = %d",
                         STORE_SCHEMA_VERSION + 1);
                ck_assert_int_eq(store_target_sql(db, cmd), 0);
        } else {
                snprintf(cmd, sizeof(cmd), "sqlite3 %s 'PRAGMA user_version = %d'", db,
                         STORE_SCHEMA_VERSION + 1);
                ck_assert_int_eq(system(cmd), 0);
        }
        ck_assert_int_eq(store_open(db, STORE_WRITER, 1, &s, &err), -EINVAL);
        ck_assert_int_eq(err.code, AE_STORE_SCHEMA);
        ck_assert_ptr_nonnull(strstr(err.msg, "newer"));
        rm_rf(dir);
}
END_TEST

/* Count the rows a listing hands out. */
static int count_row(const struct store_agent *a, void *arg)
{
        (void)a;
        (*(unsigned *)arg)++;
        return 0;
}

/*
 * The state column through the codec, both ways: what the store's own SQL writes (activation,
 * decommission, readmit) reads back as the state it means, and a row holding a state no one
 * knows is a store error on every path that reads it, never a silent default (-EBADMSG).
 */
START_TEST(test_store_refuses_unknown_agent_state)
{
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64], cmd[192], replaced[STORE_ID_MAX + 1];
        struct store *s;
        struct attest_err err = {0};
        struct store_agent a = {0}, *got = NULL;
        struct store_agent_filter f = {.status = STORE_STATUS_ANY, .limit = 10};
        uint8_t ak[4] = {1, 2, 3, 4}, name[4] = {5, 6, 7, 8}, ekpub[8] = {0}, h[32];
        uint64_t offset = 0;
        unsigned n = 0;

        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_WRITER, 1, &s, &err), 0);
        memset(h, 1, sizeof(h));
        agent_rec(&a, "x", AGENT_STATE_PENDING, ak, name);
        ck_assert_int_eq(store_agent_add_pending(s, &a, ekpub, sizeof(ekpub), h, 100000), 0);
        ck_assert_int_eq(store_agent_get(s, "x", &got), 0);
        ck_assert_int_eq(got->state, AGENT_STATE_PENDING);
        store_agent_free(got);
        ck_assert_int_eq(store_agent_activate(s, "x", h, 2000, replaced), 0);
        ck_assert_int_eq(store_agent_get(s, "x", &got), 0);
        ck_assert_int_eq(got->state, AGENT_STATE_ACTIVE);
        store_agent_free(got);
        ck_assert_int_eq(store_agent_decommission(s, "x", 3000), 0);
        ck_assert_int_eq(store_agent_get(s, "x", &got), 0);
        ck_assert_int_eq(got->state, AGENT_STATE_DECOMMISSIONED);
        store_agent_free(got);
        ck_assert_int_eq(store_agent_readmit(s, "x", 1000), 0);
        ck_assert_int_eq(store_agent_get(s, "x", &got), 0);
        ck_assert_int_eq(got->state, AGENT_STATE_ACTIVE);
        store_agent_free(got);
        got = NULL;
        store_close(s);
        /* a state this attestd does not know (a newer one's, or a hand edit) */
        if (store_target_pg()) {
                ck_assert_int_eq(store_target_sql(db, "UPDATE agents SET state = 'retired'"), 0);
        } else {
                snprintf(cmd, sizeof(cmd), "sqlite3 %s \"UPDATE agents SET state = 'retired'\"",
                         db);
                ck_assert_int_eq(system(cmd), 0);
        }
        ck_assert_int_eq(store_open(db, STORE_WRITER, 1, &s, &err), 0);
        ck_assert_int_eq(store_agent_get(s, "x", &got), -EBADMSG);
        ck_assert_ptr_null(got);
        ck_assert_int_eq(store_test_offset(s, "x", &offset), -EBADMSG);
        ck_assert_int_eq(store_agent_list(s, count_row, &n), -EBADMSG);
        ck_assert_int_eq(store_agent_query(s, &f, count_row, &n), -EBADMSG);
        ck_assert_uint_eq(n, 0);
        ck_assert_int_eq(store_agent_add_pending(s, &a, ekpub, sizeof(ekpub), h, 100000), -EBADMSG);
        ck_assert_int_eq(store_agent_activate(s, "x", h, 4000, replaced), -EBADMSG);
        ck_assert_int_eq(store_agent_decommission(s, "x", 4000), -EBADMSG);
        /* nothing of that was cached: still refused */
        ck_assert_int_eq(store_agent_get(s, "x", &got), -EBADMSG);
        store_close(s);
        rm_rf(dir);
}
END_TEST

/* One SQL statement on a store test's database: a PostgreSQL URL or a SQLite file. */
static void db_sql(const char *db, const char *sql)
{
        char cmd[512];

        if (store_is_url(db)) {
                ck_assert_int_eq(store_target_sql(db, sql), 0);
                return;
        }
        ck_assert_int_lt(snprintf(cmd, sizeof(cmd), "sqlite3 %s \"%s\"", db, sql),
                         (int)sizeof(cmd));
        ck_assert_int_eq(system(cmd), 0);
}

/* A pass or fail result of agent "a" at time t with appraisal ap (NULL: none), at seq. */
static int64_t add_appraised(struct store *s, const char *status, int64_t t,
                             const struct store_appraisal *ap, uint64_t seq)
{
        struct store_result r = {.agent = "a",
                                 .time = t,
                                 .status = status,
                                 .policy = "p@1",
                                 .verdict = "{}",
                                 .appraisal = ap,
                                 .next_due = t + 1000};
        int64_t id = 0;

        ck_assert_int_eq(store_result_add(s, &r, seq, 10, &id), 0);
        return id;
}

static void head_eq(struct store *s, int64_t id, int64_t t, const struct store_appraisal *ap)
{
        struct store_result_head h;

        ck_assert_int_eq(store_result_latest(s, "a", &h), 0);
        ck_assert_int_eq(h.id, id);
        ck_assert_int_eq(h.time, t);
        ck_assert_str_eq(h.policy, "p@1");
        ck_assert_int_eq(h.has_appraisal, ap != NULL);
        if (!ap)
                return;
        ck_assert_int_eq(h.appraisal.status, ap->status);
        for (int i = 0; i < STORE_TV_COUNT; i++)
                ck_assert_int_eq(h.appraisal.tv[i], ap->tv[i]);
}

/*
 * The appraisal columns (schema 8) written by both write paths (on PostgreSQL a changed status
 * takes the statements, an unchanged one attestd_verdict()), NULL when none is given, and read
 * back with the newest result; a row with some of them NULL is refused.
 */
START_TEST(test_store_results_keep_their_appraisal)
{
        static const struct store_appraisal affirming = {2, {2, 2, 3, 2}},
                                            warning = {32, {2, 36, 3, 2}},
                                            contra = {96, {2, 2, 3, 96}};
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64];
        uint8_t ak[4] = {1, 2, 3, 4}, name[4] = {5, 6, 7, 8};
        struct store_agent a = {0};
        struct store_result_head h = {.id = 77};
        struct attest_err err = {0};
        struct store *s;
        int64_t id;

        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_WRITER, 1, &s, &err), 0);
        ck_assert_int_eq(store_result_latest(s, "a", &h), -ENOENT);
        agent_rec(&a, "a", AGENT_STATE_ACTIVE, ak, name);
        ck_assert_int_eq(store_agent_add(s, &a), 0);
        ck_assert_int_eq(store_result_latest(s, "a", &h), -ENODATA);
        ck_assert_int_eq(h.id, 77); /* untouched on failure */

        id = add_appraised(s, "pass", 2000, &affirming, 0);
        head_eq(s, id, 2000, &affirming);
        id = add_appraised(s, "pass", 3000, &warning, 1);
        head_eq(s, id, 3000, &warning);
        id = add_appraised(s, "pass", 4000, NULL, 2);
        head_eq(s, id, 4000, NULL);
        id = add_appraised(s, "fail", 5000, &contra, 3);
        head_eq(s, id, 5000, &contra);
        id = add_appraised(s, "fail", 6000, NULL, 4);
        head_eq(s, id, 6000, NULL);
        id = add_appraised(s, "fail", 7000, &contra, 5);
        head_eq(s, id, 7000, &contra);
        store_close(s);

        /* half an appraisal: not a row attestd writes */
        db_sql(db, "UPDATE results SET ear_tv_hardware = NULL");
        ck_assert_int_eq(store_open(db, STORE_POOL, 1, &s, &err), 0);
        h.id = 77;
        ck_assert_int_eq(store_result_latest(s, "a", &h), -EBADMSG);
        ck_assert_int_eq(h.id, 77);
        store_close(s);
        db_sql(db, "UPDATE results SET ear_status = NULL, ear_tv_instance_identity = NULL,"
                   " ear_tv_configuration = NULL, ear_tv_executables = NULL");
        ck_assert_int_eq(store_open(db, STORE_POOL, 1, &s, &err), 0);
        head_eq(s, id, 7000, NULL);
        store_close(s);
        rm_rf(dir);
}
END_TEST

/* A SQLite database of schema 11 taken back to 10: the results count gone. */
#define SCHEMA_11_UNDONE "ALTER TABLE agents DROP COLUMN results_kept; PRAGMA user_version = 10;"
/* ... and back to 9: the stale scan's tables and column gone. */
#define SCHEMA_10_UNDONE                                                                           \
        SCHEMA_11_UNDONE                                                                           \
        " DROP INDEX results_by_due; ALTER TABLE results DROP COLUMN due;"                         \
        " DROP TABLE stale_watch; DROP TABLE stale_cursor;"                                        \
        " CREATE INDEX agents_by_stale ON agents(stale_since, next_due); PRAGMA user_version = 9;"

/*
 * A SQLite database of schema 9 migrates to the stale scan of 10: the active agents it had are
 * looked at once (the watch list), whether they attested (due as next_due said) or not (created
 * + interval); results written before the migration are not looked at again (due 0).
 */
START_TEST(test_store_migrates_stale_watch)
{
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64];
        uint8_t ak[4] = {1, 2, 3, 4}, name[4] = {5, 6, 7, 8}, ak2[4] = {1, 2, 3, 9},
                name2[4] = {5, 6, 7, 9};
        struct store_agent a = {0}, b = {0};
        struct attest_err err = {0};
        struct store *s;
        int ver;

        sqlite_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_WRITER, 1, &s, &err), 0);
        agent_rec(&a, "a", AGENT_STATE_ACTIVE, ak, name); /* created 1000 */
        ck_assert_int_eq(store_agent_add(s, &a), 0);
        agent_rec(&b, "b", AGENT_STATE_ACTIVE, ak2, name2);
        b.created = 5000;
        ck_assert_int_eq(store_agent_add(s, &b), 0);
        (void)add_appraised(s, "pass", 2000, NULL, 0); /* a: due 3000 */
        store_close(s);
        db_sql(db, SCHEMA_10_UNDONE);
        ck_assert_int_eq(store_open(db, STORE_WRITER, 1, &s, &err), 0);
        ck_assert_int_eq(store_schema_version(s, &ver), 0);
        ck_assert_int_eq(ver, STORE_SCHEMA_VERSION);
        /* grace 50, interval 100: a is stale after 3050, b after 5150 */
        ck_assert_int_eq(store_agent_stale_scan(s, 3050, 50, 100, store_stale_quiet, NULL), 0);
        ck_assert_int_eq(store_agent_stale_scan(s, 3051, 50, 100, store_stale_quiet, NULL), 1);
        ck_assert_int_eq(store_agent_stale_scan(s, 5150, 50, 100, store_stale_quiet, NULL), 0);
        ck_assert_int_eq(store_agent_stale_scan(s, 5151, 50, 100, store_stale_quiet, NULL), 1);
        ck_assert_int_eq(store_agent_stale_scan(s, 9999, 50, 100, store_stale_quiet, NULL),
                         0); /* once */
        store_close(s);
        rm_rf(dir);
}
END_TEST

/* A SQLite database of schema 7 (results without the appraisal) migrates: its rows have none. */
START_TEST(test_store_migrates_results_without_appraisal)
{
        static const struct store_appraisal affirming = {2, {2, 2, 3, 2}};
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64];
        uint8_t ak[4] = {1, 2, 3, 4}, name[4] = {5, 6, 7, 8};
        struct store_agent a = {0};
        struct attest_err err = {0};
        struct store *s;
        int64_t id;
        int ver;

        sqlite_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_WRITER, 1, &s, &err), 0);
        agent_rec(&a, "a", AGENT_STATE_ACTIVE, ak, name);
        ck_assert_int_eq(store_agent_add(s, &a), 0);
        id = add_appraised(s, "pass", 2000, &affirming, 0);
        store_close(s);
        /* the results table as schema 7 had it (schema 10 undone first) */
        db_sql(db, SCHEMA_10_UNDONE);
        db_sql(db, "ALTER TABLE results DROP COLUMN ear_status;"
                   " ALTER TABLE results DROP COLUMN ear_tv_instance_identity;"
                   " ALTER TABLE results DROP COLUMN ear_tv_configuration;"
                   " ALTER TABLE results DROP COLUMN ear_tv_executables;"
                   " ALTER TABLE results DROP COLUMN ear_tv_hardware; PRAGMA user_version = 7;");
        ck_assert_int_eq(store_open(db, STORE_WRITER, 1, &s, &err), 0);
        ck_assert_int_eq(store_schema_version(s, &ver), 0);
        ck_assert_int_eq(ver, STORE_SCHEMA_VERSION);
        head_eq(s, id, 2000, NULL);
        /* the next round's result has one */
        id = add_appraised(s, "pass", 3000, &affirming, 1);
        head_eq(s, id, 3000, &affirming);
        store_close(s);
        rm_rf(dir);
}
END_TEST

/*
 * A verdict text and what the results row keeps of it (api_verdict_text, api_verdict_full): the
 * row's columns and its stored rest give back the answered text byte for byte, a JSON object
 * with the head's four members and every member of the verdict, for hostile strings in the
 * verdict, the policy column and the status; the rest starts with ","; a text stored whole
 * (starting with "{") is left to the caller as it is.
 */
START_TEST(test_verdict_text_split_and_joined)
{
        static const char hostile[] =
                "\"\\\x01\x1f\n\x7f/</script> \xc3\xa9\xe2\x80\xa8\xf0\x9f\x94\x92"
                " ,\"status\":\"pass\"}";
        static const struct {
                const char *status, *policy;
                int64_t time, due;
        } rows[] = {
                {"pass", "prod@2", 1796561604161, 1796561664161},
                {"fail", NULL, 1, 0},
                {"error", hostile, -5, INT64_MAX},
                {hostile, hostile, 1000, 2000},
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                json_t *v = json_pack("{s:s, s:s, s:[{s:s, s:s}], s:s, s:{s:I}}", "status", "x",
                                      "policy", "y", "claims", "name", hostile, "reason", hostile,
                                      "hostname", hostile, "ima", "offset", (json_int_t)i);
                json_t *want = json_deep_copy(v), *got;
                char *full = NULL, *again = NULL;
                const char *stored = NULL;

                ck_assert_ptr_nonnull(v);
                ck_assert_int_eq(api_verdict_text(v, rows[i].status, rows[i].policy, rows[i].time,
                                                  rows[i].due, &full, &stored),
                                 0);
                ck_assert_ptr_nonnull(full);
                ck_assert_int_eq(stored[0], ',');
                ck_assert_ptr_eq(stored, full + strlen(full) - strlen(stored));
                struct store_result_row row = {.id = 7,
                                               .time = rows[i].time,
                                               .due = rows[i].due,
                                               .status = rows[i].status,
                                               .policy = rows[i].policy,
                                               .verdict = stored};

                ck_assert_int_eq(api_verdict_full(&row, &again), 0);
                ck_assert_ptr_nonnull(again);
                ck_assert_str_eq(again, full);
                /* what it means: the head's members from the columns, then the verdict's */
                ck_assert_int_eq(json_object_set_new(want, "status", json_string(rows[i].status)),
                                 0);
                ck_assert_int_eq(json_object_set_new(want, "policy",
                                                     rows[i].policy ? json_string(rows[i].policy)
                                                                    : json_null()),
                                 0);
                ck_assert_int_eq(json_object_set_new(want, "time", api_time_json(rows[i].time)), 0);
                ck_assert_int_eq(json_object_set_new(want, "next_due", api_time_json(rows[i].due)),
                                 0);
                got = json_loads(full, 0, NULL);
                ck_assert_ptr_nonnull(got);
                ck_assert_msg(json_equal(got, want), "%s", full);
                /* a text stored whole is the caller's to give back as it is */
                row.verdict = full;
                free(again);
                again = NULL;
                ck_assert_int_eq(api_verdict_full(&row, &again), 0);
                ck_assert_ptr_null(again);
                json_decref(got);
                json_decref(want);
                json_decref(v);
                free(full);
        }
}
END_TEST

/* One verdict of agent "a" the way a round makes it: its row read first, that row's seq and
 * results_kept passed along (known: as the round has it; not known: as a caller that has not). */
static void verdict_on_row(struct store *s, const char *status, int64_t t, uint64_t retain,
                           bool known)
{
        struct store_agent *a = NULL;

        ck_assert_int_eq(store_agent_get(s, "a", &a), 0);
        struct store_result r = {.agent = "a",
                                 .time = t,
                                 .status = status,
                                 .policy = "p@1",
                                 .verdict = "{}",
                                 .next_due = t + 1000,
                                 .kept_known = known,
                                 .kept = a->results_kept};

        ck_assert_int_eq(store_result_add(s, &r, a->seq, retain, NULL), 0);
        store_agent_free(a);
}

static int result_time(const struct store_result_row *row, void *arg)
{
        char *l = arg;
        size_t n = strlen(l);

        snprintf(l + n, 256 - n, "%s%lld", n ? " " : "", (long long)row->time);
        return 0;
}

/* Agent "a"'s results' times, newest first, and its results_kept, as "t t t / k". */
static const char *kept_state(struct store *s, char buf[256])
{
        struct store_agent *a = NULL;
        size_t n;

        buf[0] = '\0';
        ck_assert_int_eq(store_results_list(s, "a", 100, 0, result_time, buf), 0);
        ck_assert_int_eq(store_agent_get(s, "a", &a), 0);
        n = strlen(buf);
        snprintf(buf + n, 256 - n, " / %lld", (long long)a->results_kept);
        store_agent_free(a);
        return buf;
}

/*
 * Retention with the agent's results count (schema 11): each verdict keeps the newest retain
 * results and the count beside them, through both write paths (on PostgreSQL an unchanged
 * status takes attestd_verdict(s), a changed one the statements): the oldest go in one step
 * when the round knew the count, the newest retain are kept and the count written when it did
 * not (a row from before schema 11: NULL), and a lower retain takes all that are past it.
 */
static void results_kept_checks(enum store_mode mode)
{
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64], buf[256];
        uint8_t ak[4] = {1, 2, 3, 4}, name[4] = {5, 6, 7, 8};
        struct store_agent a = {0};
        struct attest_err err = {0};
        struct store *s;

        db_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, mode, 1, &s, &err), 0);
        agent_rec(&a, "a", AGENT_STATE_ACTIVE, ak, name);
        ck_assert_int_eq(store_agent_add(s, &a), 0);
        ck_assert_str_eq(kept_state(s, buf), " / 0");
        verdict_on_row(s, "pass", 1, 3, true);
        verdict_on_row(s, "pass", 2, 3, true);
        verdict_on_row(s, "pass", 3, 3, true);
        ck_assert_str_eq(kept_state(s, buf), "3 2 1 / 3");
        verdict_on_row(s, "pass", 4, 3, true);
        ck_assert_str_eq(kept_state(s, buf), "4 3 2 / 3");
        verdict_on_row(s, "fail", 5, 3, true); /* the statement path */
        ck_assert_str_eq(kept_state(s, buf), "5 4 3 / 3");
        verdict_on_row(s, "fail", 6, 3, true);
        ck_assert_str_eq(kept_state(s, buf), "6 5 4 / 3");
        /* retain raised: nothing goes until the count reaches it */
        verdict_on_row(s, "fail", 7, 5, true);
        verdict_on_row(s, "fail", 8, 5, true);
        ck_assert_str_eq(kept_state(s, buf), "8 7 6 5 4 / 5");
        /* lowered: every result past it goes with the next verdict, on either path */
        verdict_on_row(s, "fail", 9, 2, true);
        ck_assert_str_eq(kept_state(s, buf), "9 8 / 2");
        verdict_on_row(s, "pass", 10, 5, true);
        verdict_on_row(s, "pass", 11, 5, true);
        verdict_on_row(s, "pass", 12, 5, true);
        ck_assert_str_eq(kept_state(s, buf), "12 11 10 9 8 / 5");
        verdict_on_row(s, "pass", 13, 1, true);
        ck_assert_str_eq(kept_state(s, buf), "13 / 1");
        /* a count not known (a row of schema 10): counted by the next verdict, either path */
        store_close(s);
        db_sql(db, "UPDATE agents SET results_kept = NULL");
        ck_assert_int_eq(store_open(db, mode, 1, &s, &err), 0);
        ck_assert_str_eq(kept_state(s, buf), "13 / -1");
        verdict_on_row(s, "pass", 14, 3, true);
        ck_assert_str_eq(kept_state(s, buf), "14 13 / 2");
        verdict_on_row(s, "pass", 15, 3, false); /* a caller that did not pass it */
        verdict_on_row(s, "pass", 16, 3, false);
        ck_assert_str_eq(kept_state(s, buf), "16 15 14 / 3");
        store_close(s);
        db_sql(db, "UPDATE agents SET results_kept = NULL");
        ck_assert_int_eq(store_open(db, mode, 1, &s, &err), 0);
        verdict_on_row(s, "fail", 17, 2, true);
        ck_assert_str_eq(kept_state(s, buf), "17 16 / 2");
        verdict_on_row(s, "fail", 18, 2, true);
        ck_assert_str_eq(kept_state(s, buf), "18 17 / 2");
        store_close(s);
        rm_rf(dir);
}

/* the writer's group call (attestd_verdicts) and a pooled connection's (attestd_verdict) */
START_TEST(test_store_results_kept)
{
        results_kept_checks(STORE_WRITER);
        results_kept_checks(STORE_POOL);
}
END_TEST

/* A SQLite database of schema 10 migrates to 11: its agents' counts are not known until their
 * next verdict, which keeps the newest retain and counts them. */
START_TEST(test_store_migrates_results_kept)
{
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64], buf[256];
        uint8_t ak[4] = {1, 2, 3, 4}, name[4] = {5, 6, 7, 8};
        struct store_agent a = {0};
        struct attest_err err = {0};
        struct store *s;
        int ver;

        sqlite_in_tmp(dir, db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_WRITER, 1, &s, &err), 0);
        agent_rec(&a, "a", AGENT_STATE_ACTIVE, ak, name);
        ck_assert_int_eq(store_agent_add(s, &a), 0);
        for (int t = 1; t <= 4; t++)
                verdict_on_row(s, "pass", t, 10, true);
        store_close(s);
        db_sql(db, SCHEMA_11_UNDONE);
        ck_assert_int_eq(store_open(db, STORE_WRITER, 1, &s, &err), 0);
        ck_assert_int_eq(store_schema_version(s, &ver), 0);
        ck_assert_int_eq(ver, STORE_SCHEMA_VERSION);
        ck_assert_str_eq(kept_state(s, buf), "4 3 2 1 / -1");
        verdict_on_row(s, "pass", 5, 2, true);
        ck_assert_str_eq(kept_state(s, buf), "5 4 / 2");
        verdict_on_row(s, "pass", 6, 2, true);
        ck_assert_str_eq(kept_state(s, buf), "6 5 / 2");
        store_close(s);
        rm_rf(dir);
}
END_TEST

START_TEST(test_store_writer)
{
        store_checks(STORE_WRITER);
}
END_TEST

START_TEST(test_store_pool)
{
        store_checks(STORE_POOL);
}
END_TEST

/*
 * Group commit under concurrency (writer mode): WRITERS threads submit verdicts for their own
 * agents at once, each round also a stale one (the same seq again), which fails inside a batch
 * shared with the others. Every caller must be woken with its own result: a lost wakeup hangs
 * (the test's timeout), a wrong one shows as a missing or extra verdict.
 */
#define WRITERS 8
#define WRITER_ROUNDS 20
struct writer_arg {
        struct store *s;
        char id[16];
        int ok, stale, other;
};

static void *writer_thread(void *p)
{
        struct writer_arg *w = p;

        for (int i = 0; i < WRITER_ROUNDS; i++) {
                struct store_result r = {.agent = w->id,
                                         .time = 2000 + i,
                                         .status = "pass",
                                         .verdict = "{}",
                                         .next_due = 9000,
                                         .ima_offset = (uint64_t)i,
                                         .replay_state = (const uint8_t *)"{}",
                                         .replay_state_len = 2};
                int64_t id;
                int e;

                e = store_result_add(w->s, &r, (uint64_t)i, 3, &id);
                e == 0 ? w->ok++ : w->other++;
                e = store_result_add(w->s, &r, (uint64_t)i, 3, &id);
                e == -ESTALE ? w->stale++ : w->other++;
        }
        return NULL;
}

START_TEST(test_store_writer_concurrent_callers)
{
        char dir[] = "/tmp/attestd-store.XXXXXX", db[64];
        struct store *s;
        struct attest_err err = {0};
        struct writer_arg w[WRITERS];
        pthread_t th[WRITERS];
        uint64_t commits, writes;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        store_target(dir, "t.db", db, sizeof(db));
        ck_assert_int_eq(store_open(db, STORE_WRITER, 2, &s, &err), 0);
        for (int i = 0; i < WRITERS; i++) {
                struct store_agent a = {0};
                uint8_t ak[4] = {1, 2, 3, 4}, name[4] = {5, 6, 7, (uint8_t)i};

                w[i] = (struct writer_arg){.s = s};
                snprintf(w[i].id, sizeof(w[i].id), "agent%d", i);
                snprintf(a.id, sizeof(a.id), "%s", w[i].id);
                a.state = AGENT_STATE_ACTIVE;
                a.ak_public = ak;
                a.ak_public_len = sizeof(ak);
                a.ak_name = name;
                a.ak_name_len = sizeof(name);
                a.created = 1000;
                ck_assert_int_eq(store_agent_add(s, &a), 0);
        }
        for (int i = 0; i < WRITERS; i++)
                ck_assert_int_eq(pthread_create(&th[i], NULL, writer_thread, &w[i]), 0);
        for (int i = 0; i < WRITERS; i++) {
                struct store_agent *got = NULL;

                ck_assert_int_eq(pthread_join(th[i], NULL), 0);
                ck_assert_int_eq(w[i].ok, WRITER_ROUNDS);
                ck_assert_int_eq(w[i].stale, WRITER_ROUNDS);
                ck_assert_int_eq(w[i].other, 0);
                ck_assert_int_eq(store_agent_get(s, w[i].id, &got), 0);
                ck_assert_uint_eq(got->seq, WRITER_ROUNDS);
                store_agent_free(got);
        }
        store_stats(s, &commits, &writes);
        ck_assert_uint_eq(writes, WRITERS + 2 * WRITERS * WRITER_ROUNDS);
        ck_assert_uint_le(commits, writes);
        store_close(s);
        rm_rf(dir);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("daemon");
        TCase *tc = tcase_create("modules");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_nonce_stateless_mac_ttl_and_binding);
        tcase_add_test(tc, test_nonce_macs_reused_across_threads);
        tcase_add_test(tc, test_nonce_key_file);
        tcase_add_test(tc, test_ratelimit_windows_and_log_lines);
        tcase_add_test(tc, test_rowstash_rows_for_their_nonce);
        tcase_add_test(tc, test_store_identity_decommission_nonces);
        tcase_add_test(tc, test_tokens_roles_and_errors);
        tcase_add_test(tc, test_config_file_then_flags);
        tcase_add_test(tc, test_config_db_urls);
        tcase_add_test(tc, test_metrics_text);
        tcase_add_test(tc, test_store_migrates_pending_enrolments);
        tcase_add_test(tc, test_store_admin_queries);
        tcase_add_test(tc, test_store_refuses_a_newer_schema);
        tcase_add_test(tc, test_store_refuses_unknown_agent_state);
        tcase_add_test(tc, test_store_results_keep_their_appraisal);
        tcase_add_test(tc, test_store_migrates_results_without_appraisal);
        tcase_add_test(tc, test_store_migrates_stale_watch);
        tcase_add_test(tc, test_store_results_kept);
        tcase_add_test(tc, test_verdict_text_split_and_joined);
        tcase_add_test(tc, test_store_migrates_results_kept);
        tcase_add_test(tc, test_store_writer);
        tcase_add_test(tc, test_store_pool);
        tcase_add_test(tc, test_store_writer_concurrent_callers);
        /* Check's default is 4 s; fsync under load and ASan can take longer (a hang guard only) */
        tcase_set_timeout(tc, 30);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
