/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "daemon/nonce.h"
#include "util/file.h"

#define NONCE_RAND 6
#define NONCE_EXP 6
#define NONCE_MAC_ISSUE 8
#define NONCE_MAC_AGENT 6
#define NONCE_MAC_ROUND 6
#define NONCE_OFF_EXP NONCE_RAND
#define NONCE_HEAD (NONCE_OFF_EXP + NONCE_EXP) /* what every tag covers: rand | expires */
#define NONCE_OFF_ISSUE NONCE_HEAD
#define NONCE_OFF_AGENT (NONCE_OFF_ISSUE + NONCE_MAC_ISSUE)
#define NONCE_OFF_ROUND (NONCE_OFF_AGENT + NONCE_MAC_AGENT)

_Static_assert(NONCE_OFF_ROUND + NONCE_MAC_ROUND == NONCE_LEN, "nonce layout");

/* keyed HMAC contexts kept for reuse: more threads than this at once dup and free their own */
#define NONCE_POOL 32

static const char label_issue[] = "attestd-nonce-2";
static const char label_agent[] = "attestd-nonce-agent-2";
static const char label_round[] = "attestd-nonce-round-2";

struct nonce_store {
        uint64_t ttl;
        uint8_t key[NONCE_KEY_MAX];
        size_t key_len;
        /* HMAC-SHA256 keyed once (HMAC() fetched the algorithms and re-keyed on every call: 4 %
         * of attestd's CPU in the benchmark). A MAC takes a keyed context from the pool and puts
         * it back: EVP_MAC_init(ctx, NULL key) restarts it from its stored key schedule (2
         * allocations in OpenSSL 3.0) where EVP_MAC_CTX_dup of the template cost 11. A context
         * is used by one thread at a time (lock guards idle/nfree); the template is never used
         * for a MAC, only copied. Each context holds the key: freed (and cleansed by OpenSSL)
         * with the store. */
        EVP_MAC *mac;
        EVP_MAC_CTX *keyed;
        pthread_mutex_t lock;
        EVP_MAC_CTX *idle[NONCE_POOL];
        unsigned nfree;
};

int nonce_store_new(uint64_t ttl_ms, const uint8_t *key, size_t key_len, struct nonce_store **ret)
{
        struct nonce_store *s;

        if (key_len < NONCE_KEY_MIN || key_len > NONCE_KEY_MAX || ttl_ms == 0)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->ttl = ttl_ms;
        pthread_mutex_init(&s->lock, NULL);
        memcpy(s->key, key, key_len);
        s->key_len = key_len;
        {
                OSSL_PARAM params[] = {
                        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256",
                                                         0),
                        OSSL_PARAM_construct_end(),
                };

                s->mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
                s->keyed = s->mac ? EVP_MAC_CTX_new(s->mac) : NULL;
                if (!s->keyed || EVP_MAC_init(s->keyed, s->key, s->key_len, params) != 1) {
                        nonce_store_free(s);
                        return -EIO;
                }
        }
        *ret = s;
        return 0;
}

struct nonce_store *nonce_store_free(struct nonce_store *s)
{
        if (!s)
                return NULL;
        for (unsigned i = 0; i < s->nfree; i++)
                EVP_MAC_CTX_free(s->idle[i]);
        EVP_MAC_CTX_free(s->keyed);
        EVP_MAC_free(s->mac);
        pthread_mutex_destroy(&s->lock);
        OPENSSL_cleanse(s, sizeof(*s));
        free(s);
        return NULL;
}

int nonce_key_load(const char *path, bool create, uint8_t key[NONCE_KEY_MAX], size_t *ret_len,
                   struct attest_err *err)
{
        uint8_t buf[NONCE_KEY_MAX];
        size_t got = 0;
        int fd, e;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 && errno == ENOENT && create) {
                uint8_t k[NONCE_KEY_MIN];
                size_t put = 0;

                fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (fd < 0)
                        return attest_fail(err, -errno, AE_NONCE_KEY, "creating %s: %s", path,
                                           strerror(errno));
                if (RAND_bytes(k, sizeof(k)) != 1) {
                        close(fd);
                        unlink(path);
                        return attest_fail(err, -EIO, AE_NONCE_KEY, "no randomness for %s", path);
                }
                while (put < sizeof(k)) {
                        ssize_t n = write(fd, k + put, sizeof(k) - put);

                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n <= 0) {
                                e = n < 0 ? -errno : -EIO;
                                OPENSSL_cleanse(k, sizeof(k));
                                close(fd);
                                unlink(path);
                                return attest_fail(err, e, AE_NONCE_KEY, "writing %s: %s", path,
                                                   strerror(-e));
                        }
                        put += (size_t)n;
                }
                OPENSSL_cleanse(k, sizeof(k));
                if (fsync(fd) < 0) {
                        e = -errno;
                        close(fd);
                        unlink(path);
                        return attest_fail(err, e, AE_NONCE_KEY, "fsync %s: %s", path,
                                           strerror(-e));
                }
                close(fd);
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        }
        if (fd < 0)
                return attest_fail(err, -errno, AE_NONCE_KEY, "%s: %s", path, strerror(errno));
        /* a secret: group or others may not read it (-EPERM naming the mode) */
        e = file_read_fd(fd, path, buf, NONCE_KEY_MAX, FILE_SECRET, &got, err);
        close(fd);
        if (e < 0 && e != -E2BIG) {
                if (err)
                        err->code = AE_NONCE_KEY;
                return e;
        }
        if (e == -E2BIG || got < NONCE_KEY_MIN) {
                OPENSSL_cleanse(buf, sizeof(buf));
                return attest_fail(err, -EINVAL, AE_NONCE_KEY, "%s: a nonce key is %d to %d bytes",
                                   path, NONCE_KEY_MIN, NONCE_KEY_MAX);
        }
        memcpy(key, buf, got);
        *ret_len = got;
        OPENSSL_cleanse(buf, sizeof(buf));
        return 0;
}

/* A keyed context for one MAC: one from the pool, else a copy of the template (NULL: no memory). */
static EVP_MAC_CTX *mac_take(struct nonce_store *s)
{
        EVP_MAC_CTX *ctx;

        pthread_mutex_lock(&s->lock);
        ctx = s->nfree > 0 ? s->idle[--s->nfree] : NULL;
        pthread_mutex_unlock(&s->lock);
        /* the template is only read (as every thread did before the pool) */
        return ctx ? ctx : EVP_MAC_CTX_dup(s->keyed);
}

/* Back into the pool (or freed when the pool is full or the context failed: ok false). */
static void mac_give(struct nonce_store *s, EVP_MAC_CTX *ctx, bool ok)
{
        if (!ctx)
                return;
        pthread_mutex_lock(&s->lock);
        if (ok && s->nfree < NONCE_POOL) {
                s->idle[s->nfree++] = ctx;
                ctx = NULL;
        }
        pthread_mutex_unlock(&s->lock);
        EVP_MAC_CTX_free(ctx);
}

/* big endian, 8 bytes */
static void put64(uint8_t *p, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/*
 * HMAC-SHA256(key, label NUL | head | agent | round), its first n bytes into out: head the
 * nonce's first NONCE_HEAD bytes, agent NULL for none, round NULL for none (else its last result
 * and its enrolment time, 8 bytes each, big endian).
 */
static int nonce_mac(struct nonce_store *s, const char *label, const uint8_t *head,
                     const char *agent, const struct nonce_round *round, uint8_t *out, size_t n)
{
        uint8_t msg[32 + NONCE_HEAD + NONCE_AGENT_MAX + 16], md[EVP_MAX_MD_SIZE];
        size_t ll = strlen(label) + 1, al = agent ? strlen(agent) : 0, len;
        size_t mdlen = 0;
        EVP_MAC_CTX *ctx;
        int ok;

        if (ll > 32 || al > NONCE_AGENT_MAX)
                return -EINVAL;
        memcpy(msg, label, ll);
        memcpy(msg + ll, head, NONCE_HEAD);
        len = ll + NONCE_HEAD;
        if (al)
                memcpy(msg + len, agent, al);
        len += al;
        if (round) {
                put64(msg + len, (uint64_t)round->last_result);
                put64(msg + len + 8, (uint64_t)round->created);
                len += 16;
        }
        /* restarted from the key given at creation (NULL key: the stored one), whatever MAC the
         * context computed last */
        ctx = mac_take(s);
        ok = ctx && EVP_MAC_init(ctx, NULL, 0, NULL) == 1 && EVP_MAC_update(ctx, msg, len) == 1 &&
             EVP_MAC_final(ctx, md, &mdlen, sizeof(md)) == 1 && mdlen >= n;
        mac_give(s, ctx, ok);
        if (!ok)
                return -EIO;
        memcpy(out, md, n);
        OPENSSL_cleanse(md, sizeof(md));
        return 0;
}

int nonce_issue(struct nonce_store *s, const char *agent, const struct nonce_round *round,
                uint64_t now_ms, uint8_t ret_nonce[NONCE_LEN], uint64_t *ret_expires_ms)
{
        uint64_t exp = now_ms + s->ttl;
        int e;

        if (strlen(agent) > NONCE_AGENT_MAX || exp >= (UINT64_C(1) << 48))
                return -EINVAL;
        if (RAND_bytes(ret_nonce, NONCE_RAND) != 1)
                return -EIO;
        for (int i = 0; i < NONCE_EXP; i++)
                ret_nonce[NONCE_OFF_EXP + i] = (uint8_t)(exp >> (8 * (NONCE_EXP - 1 - i)));
        if ((e = nonce_mac(s, label_issue, ret_nonce, NULL, NULL, ret_nonce + NONCE_OFF_ISSUE,
                           NONCE_MAC_ISSUE)) < 0 ||
            (e = nonce_mac(s, label_agent, ret_nonce, agent, NULL, ret_nonce + NONCE_OFF_AGENT,
                           NONCE_MAC_AGENT)) < 0 ||
            (e = nonce_mac(s, label_round, ret_nonce, agent, round, ret_nonce + NONCE_OFF_ROUND,
                           NONCE_MAC_ROUND)) < 0)
                return e;
        *ret_expires_ms = exp;
        return 0;
}

int nonce_check(struct nonce_store *s, const char *agent, const uint8_t *nonce, size_t len,
                uint64_t now_ms, uint64_t *ret_expires_ms, struct attest_err *err)
{
        uint8_t mac[NONCE_MAC_ISSUE];
        uint64_t exp = 0;
        int e;

        if (len != NONCE_LEN)
                return attest_fail(err, -ESTALE, AE_NONCE_UNKNOWN, "nonce is %zu bytes, not %d",
                                   len, NONCE_LEN);
        if (strlen(agent) > NONCE_AGENT_MAX)
                return attest_fail(err, -ESTALE, AE_NONCE_WRONG_AGENT, "agent id too long");
        if ((e = nonce_mac(s, label_issue, nonce, NULL, NULL, mac, NONCE_MAC_ISSUE)) < 0)
                return attest_fail(err, e, AE_INTERNAL, "HMAC failed");
        if (CRYPTO_memcmp(mac, nonce + NONCE_OFF_ISSUE, NONCE_MAC_ISSUE) != 0)
                return attest_fail(err, -ESTALE, AE_NONCE_UNKNOWN,
                                   "nonce was not issued by this verifier (or was altered)");
        if ((e = nonce_mac(s, label_agent, nonce, agent, NULL, mac, NONCE_MAC_AGENT)) < 0)
                return attest_fail(err, e, AE_INTERNAL, "HMAC failed");
        if (CRYPTO_memcmp(mac, nonce + NONCE_OFF_AGENT, NONCE_MAC_AGENT) != 0)
                return attest_fail(err, -ESTALE, AE_NONCE_WRONG_AGENT,
                                   "nonce was issued to another agent");
        for (int i = 0; i < NONCE_EXP; i++)
                exp = exp << 8 | nonce[NONCE_OFF_EXP + i];
        if (now_ms >= exp)
                return attest_fail(err, -ESTALE, AE_NONCE_EXPIRED, "nonce expired %llu ms ago",
                                   (unsigned long long)(now_ms - exp));
        if (ret_expires_ms)
                *ret_expires_ms = exp;
        return 0;
}

int nonce_check_round(struct nonce_store *s, const char *agent, const struct nonce_round *round,
                      const uint8_t nonce[NONCE_LEN], struct attest_err *err)
{
        uint8_t mac[NONCE_MAC_ROUND];
        int e;

        if (strlen(agent) > NONCE_AGENT_MAX)
                return attest_fail(err, -ESTALE, AE_NONCE_WRONG_AGENT, "agent id too long");
        if ((e = nonce_mac(s, label_round, nonce, agent, round, mac, NONCE_MAC_ROUND)) < 0)
                return attest_fail(err, e, AE_INTERNAL, "HMAC failed");
        if (CRYPTO_memcmp(mac, nonce + NONCE_OFF_ROUND, NONCE_MAC_ROUND) != 0)
                return attest_fail(err, -ESTALE, AE_NONCE_REUSED,
                                   "a round of this agent was judged since this nonce was issued "
                                   "(over this nonce or another)");
        return 0;
}
