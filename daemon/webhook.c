/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "daemon/attestd.h"
#include "daemon/webhook-internal.h"
#include "daemon/webhook.h"
#include "util/clock.h"
#include "util/tls.h"
#include "util/file.h"
#include "util/log.h"

/* ---- waiting ---- */

static bool stopping(struct webhook *w)
{
        return atomic_load(&w->stop_flag);
}

/* Sleep ms, or less when stopping: true when stopping. */
static bool nap(struct webhook *w, int64_t ms)
{
        struct timespec ts;
        bool stop;

        ts = mono_deadline_ms(ms);
        pthread_mutex_lock(&w->lock);
        while (!w->stopping && pthread_cond_timedwait(&w->wake, &w->lock, &ts) == 0)
                ;
        stop = w->stopping;
        pthread_mutex_unlock(&w->lock);
        return stop;
}

static uint64_t xorshift(uint64_t *s)
{
        uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ULL;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *s = x;
        return x;
}

/* Attempt n (1, 2, ...) failed: wait 1 s * 2^(n-1), at most the cap, jittered to [1/2, 1]. */
static int64_t backoff_ms(struct receiver *r, unsigned n)
{
        int64_t cap = (int64_t)r->w->cfg->webhook_backoff_max * 1000, d = 1000;

        for (unsigned i = 1; i < n && d < cap; i++)
                d *= 2;
        if (d > cap)
                d = cap;
        return d / 2 + (int64_t)(xorshift(&r->rng) % (uint64_t)(d / 2 + 1));
}

/* ---- one delivery ---- */

struct sink {
        struct webhook *w;
        size_t got;
};

/* The receiver's answer is counted and dropped; past WEBHOOK_RESPONSE_MAX the transfer stops. */
static size_t sink_write(char *p, size_t size, size_t n, void *arg)
{
        struct sink *s = arg;

        (void)p;
        (void)size; /* always 1 */
        if (n > WEBHOOK_RESPONSE_MAX - s->got)
                return 0;
        s->got += n;
        return n;
}

static int sink_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
        struct sink *s = arg;

        (void)dt;
        (void)dn;
        (void)ut;
        (void)un;
        return stopping(s->w) ? 1 : 0;
}

/* POST one event: true when the receiver answered 2xx. *why says otherwise. */
static bool post(struct receiver *r, int64_t id, const char *type, const char *body, size_t len,
                 char *why, size_t why_len)
{
        struct webhook *w = r->w;
        struct curl_slist *h = NULL, *t;
        struct sink sink = {w, 0};
        char sig[7 + WEBHOOK_SIG_HEX], line[64 + WEBHOOK_SIG_HEX];
        long code = 0;
        CURLcode rc;
        bool ok, cut;

        if (webhook_sign((const uint8_t *)w->secret, w->secret_len, body, len, sig) < 0) {
                snprintf(why, why_len, "signing failed");
                return false;
        }
        /* the base headers, then this event's */
        for (struct curl_slist *b = r->headers_base; b; b = b->next) {
                if (!(t = curl_slist_append(h, b->data)))
                        goto nomem;
                h = t;
        }
        snprintf(line, sizeof(line), "X-Attestd-Signature: %s", sig);
        if (!(t = curl_slist_append(h, line)))
                goto nomem;
        h = t;
        snprintf(line, sizeof(line), "X-Attestd-Event-Id: %lld", (long long)id);
        if (!(t = curl_slist_append(h, line)))
                goto nomem;
        h = t;
        snprintf(line, sizeof(line), "X-Attestd-Event: %s", type);
        if (!(t = curl_slist_append(h, line)))
                goto nomem;
        h = t;
        curl_easy_setopt(r->curl, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(r->curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(r->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        curl_easy_setopt(r->curl, CURLOPT_WRITEDATA, &sink);
        curl_easy_setopt(r->curl, CURLOPT_XFERINFODATA, &sink);
        rc = curl_easy_perform(r->curl);
        curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_setopt(r->curl, CURLOPT_HTTPHEADER, NULL);
        curl_slist_free_all(h);
        /* a 2xx whose answer was too long to read (announced or sent) still acknowledges */
        cut = rc == CURLE_WRITE_ERROR || rc == CURLE_FILESIZE_EXCEEDED;
        ok = (rc == CURLE_OK || cut) && code >= 200 && code <= 299;
        if (!ok && rc != CURLE_OK && !cut)
                snprintf(why, why_len, "%s", curl_easy_strerror(rc));
        else if (!ok)
                snprintf(why, why_len, "HTTP status %ld", code);
        return ok;
nomem:
        curl_slist_free_all(h);
        snprintf(why, why_len, "out of memory");
        return false;
}

/* ---- a receiver's thread ---- */

struct pending {
        int64_t id;
        char type[STORE_EVENT_TYPE_MAX];
        char *body;
        size_t len;
};

struct batch {
        struct pending ev[BATCH];
        unsigned n;
};

static void batch_clear(struct batch *b)
{
        for (unsigned i = 0; i < b->n; i++)
                free(b->ev[i].body);
        b->n = 0;
}

static int batch_add(const struct store_event *ev, void *arg)
{
        struct batch *b = arg;
        struct pending *p = &b->ev[b->n];
        int e;

        if (b->n >= BATCH)
                return -E2BIG;
        if ((e = webhook_event_body(ev, &p->body, &p->len)) < 0)
                return e;
        p->id = ev->id;
        snprintf(p->type, sizeof(p->type), "%s", ev->type);
        b->n++;
        return 0;
}

static int first_id(const struct store_event *ev, void *arg)
{
        *(int64_t *)arg = ev->id;
        return 0;
}

/* Whether event id is still in the outbox (the cap may have dropped it meanwhile). */
static bool still_there(struct webhook *w, int64_t id)
{
        int64_t first = 0;

        if (store_outbox_next(w->store, id - 1, 1, first_id, &first) < 0)
                return true; /* cannot tell: keep trying */
        return first == id;
}

/* Deliver one event until acknowledged, dropped by the cap or stopping: false when stopping. */
static bool deliver(struct receiver *r, const struct pending *p)
{
        struct webhook *w = r->w;
        char why[CURL_ERROR_SIZE + 32];

        for (unsigned attempt = 1;; attempt++) {
                int64_t wait;

                if (stopping(w))
                        return false;
                /* the batch may be older than the cap's last drop: never send a dropped event */
                if (!still_there(w, p->id)) {
                        log_warning("webhook %s: event %lld was dropped from the full outbox "
                                    "before delivery",
                                    r->name, (long long)p->id);
                        atomic_store(&r->failing, 0);
                        return true;
                }
                if (post(r, p->id, p->type, p->body, p->len, why, sizeof(why))) {
                        int e = store_outbox_delivered(w->store, r->url, p->id);

                        atomic_fetch_add(&w->delivered, 1);
                        atomic_fetch_add(&r->delivered, 1);
                        atomic_store(&r->failing, 0);
                        atomic_store(&r->acked, p->id);
                        if (e < 0)
                                log_err("webhook %s: event %lld delivered, but recording it "
                                        "failed (%s): it may be sent again after a restart",
                                        r->name, (long long)p->id, strerror(-e));
                        else
                                log_debug("webhook %s: event %lld (%s) delivered", r->name,
                                          (long long)p->id, p->type);
                        return true;
                }
                atomic_fetch_add(&w->failed, 1);
                atomic_fetch_add(&r->failed, 1);
                atomic_fetch_add(&r->failing, 1);
                if (stopping(w))
                        return false;
                wait = backoff_ms(r, attempt);
                log_warning("webhook %s: event %lld not delivered (attempt %u: %s); retrying in "
                            "%lld ms",
                            r->name, (long long)p->id, attempt, why, (long long)wait);
                if (nap(w, wait))
                        return false;
        }
}

static void *receiver_main(void *arg)
{
        struct receiver *r = arg;
        struct webhook *w = r->w;
        struct batch b = {.n = 0};
        bool warned = false;

        bool held = false;

        while (!stopping(w)) {
                int e;

                /* several instances on one PostgreSQL: one of them delivers to this receiver;
                 * taking it over, continue from the cursor the previous holder acknowledged */
                if (!held) {
                        int c = store_claim(w->store, r->url);

                        if (c <= 0) {
                                (void)nap(w, c < 0 ? DUTY_MS : IDLE_MS);
                                continue;
                        }
                        if (store_outbox_cursor(w->store, r->url, &r->cursor) < 0) {
                                (void)nap(w, DUTY_MS);
                                continue;
                        }
                        held = true;
                }
                e = store_outbox_next(w->store, r->cursor, BATCH, batch_add, &b);

                if (e < 0) {
                        batch_clear(&b);
                        if (!warned)
                                log_err("webhook %s: reading the outbox failed: %s", r->name,
                                        strerror(-e));
                        warned = true;
                        (void)nap(w, DUTY_MS);
                        continue;
                }
                warned = false;
                if (b.n == 0) {
                        (void)nap(w, IDLE_MS);
                        continue;
                }
                /* read from a primary, where a commit whose wait for the synchronous standby was
                 * cut short (the primary dying) is visible: delivered only once they would
                 * survive its loss */
                if ((e = store_durable_barrier(w->store)) < 0) {
                        batch_clear(&b);
                        (void)nap(w, DUTY_MS);
                        continue;
                }
                for (unsigned i = 0; i < b.n; i++) {
                        if (b.ev[i].id > r->cursor + 1)
                                log_warning("webhook %s: events %lld..%lld were dropped from the "
                                            "full outbox before delivery",
                                            r->name, (long long)(r->cursor + 1),
                                            (long long)(b.ev[i].id - 1));
                        if (!deliver(r, &b.ev[i]))
                                break;
                        r->cursor = b.ev[i].id;
                }
                batch_clear(&b);
        }
        batch_clear(&b);
        return NULL;
}

/* ---- the duty thread: pruning, the cap's log line ---- */

static void *duty_main(void *arg)
{
        struct webhook *w = arg;
        const struct config *cfg = w->cfg;
        int64_t next_prune = 0;

        while (!stopping(w)) {
                int64_t now = attestd_now_ms();
                struct store_outbox_stats st;
                uint64_t pruned = 0;
                int e;

                if (now >= next_prune) {
                        e = store_outbox_prune(w->store,
                                               now - (int64_t)cfg->webhook_retention * 1000,
                                               PRUNE_BATCH, &pruned);
                        next_prune = pruned == PRUNE_BATCH ? now : now + PRUNE_MS;
                        if (e < 0)
                                log_err("pruning the webhook outbox failed: %s", strerror(-e));
                }
                if (store_outbox_stats(w->store, &st) == 0 && st.dropped > w->dropped_seen) {
                        log_warning("webhook outbox full (--webhook-outbox-max %llu): %llu "
                                    "oldest undelivered events dropped (%llu in all)",
                                    (unsigned long long)cfg->webhook_outbox_max,
                                    (unsigned long long)(st.dropped - w->dropped_seen),
                                    (unsigned long long)st.dropped);
                        w->dropped_seen = st.dropped;
                }
                if (nap(w, DUTY_MS))
                        break;
        }
        return NULL;
}

/* ---- start, stop ---- */

static int secret_load(struct webhook *w, const char *path, struct attest_err *err)
{
        char *buf = NULL;
        size_t len = 0;
        int e;

        if (!path[0])
                return attest_fail(err, -EINVAL, AE_CONFIG,
                                   "--webhook needs --webhook-secret-file (events are signed)");
        if ((e = file_read_alloc(path, WEBHOOK_SECRET_MAX + 2, FILE_SECRET, &buf, &len, err)) < 0) {
                attest_err_prefix(err, "--webhook-secret-file");
                return e == -E2BIG ? -EINVAL : e;
        }
        w->secret = buf;
        w->secret_alloc = len;
        /* the newline an editor or echo leaves is not part of the key */
        if (len && buf[len - 1] == '\n')
                len--;
        if (len && buf[len - 1] == '\r')
                len--;
        w->secret_len = len;
        if (len < WEBHOOK_SECRET_MIN || len > WEBHOOK_SECRET_MAX)
                return attest_fail(err, -EINVAL, AE_CONFIG,
                                   "--webhook-secret-file %s: the key must have %d to %d bytes "
                                   "(it has %zu)",
                                   path, WEBHOOK_SECRET_MIN, WEBHOOK_SECRET_MAX, len);
        return 0;
}

/*
 * "host:port" of url for log lines and metric labels (never the user, path, query or fragment:
 * they may hold secrets); a byte other than [A-Za-z0-9.:_[]-] (none in a host curl accepts) is
 * written as '_', so it can be a Prometheus label value as it is.
 */
static int url_host(const char *url, char *host, size_t n, struct attest_err *err)
{
        CURLU *u = curl_url();
        char *h = NULL, *port = NULL;
        int e = 0;

        if (!u)
                return -ENOMEM;
        if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK || !h || !h[0] ||
            curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK || !port)
                e = attest_fail(err, -EINVAL, AE_CONFIG, "--webhook: not a URL with a host");
        else
                snprintf(host, n, "%s:%s", h, port);
        for (char *c = host; e == 0 && *c; c++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:_[]-",
                            *c))
                        *c = '_';
        curl_free(h);
        curl_free(port);
        curl_url_cleanup(u);
        return e;
}

static size_t min_sz(size_t a, size_t b)
{
        return a < b ? a : b;
}

static int receiver_init(struct webhook *w, struct receiver *r, const char *url,
                         struct attest_err *err)
{
        const struct config *cfg = w->cfg;
        struct tls_client_opts tls;
        const char *refused = "the URL";
        char host[HOST_MAX];
        struct curl_slist *t;
        int e;

        r->w = w;
        r->url = url;
        if ((e = url_host(url, host, sizeof(host), err)) < 0)
                return e;
        memcpy(r->host, host, sizeof(r->host));
        snprintf(r->name, sizeof(r->name), "#%u %s", r->index, host);
        if (getrandom(&r->rng, sizeof(r->rng), 0) != (ssize_t)sizeof(r->rng))
                r->rng = (uint64_t)attestd_now_ms();
        r->curl = curl_easy_init();
        if (!r->curl)
                return -ENOMEM;
        t = curl_slist_append(NULL, "Content-Type: application/json");
        if (t)
                r->headers_base = t;
        t = t ? curl_slist_append(t, "Expect:") : NULL; /* no 100-continue round trip */
        if (!t)
                return -ENOMEM;
        tls = (struct tls_client_opts){
                .ca = cfg->webhook_ca[0] ? cfg->webhook_ca : NULL,
                .connect_timeout_ms = (long)min_sz(cfg->webhook_timeout * 1000, CONNECT_MAX_MS),
                .timeout_ms = (long)(cfg->webhook_timeout * 1000),
                .max_response = WEBHOOK_RESPONSE_MAX,
        };
        /* https only, a redirect is a failure */
        if (curl_easy_setopt(r->curl, CURLOPT_URL, url) != CURLE_OK ||
            tls_client_setup(r->curl, &tls, &refused) < 0)
                return attest_fail(err, -EINVAL, AE_CONFIG, "--webhook %s: %s refused by libcurl",
                                   r->name, refused);
        curl_easy_setopt(r->curl, CURLOPT_WRITEFUNCTION, sink_write);
        curl_easy_setopt(r->curl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(r->curl, CURLOPT_XFERINFOFUNCTION, sink_progress);
        curl_easy_setopt(r->curl, CURLOPT_USERAGENT, "attestd-webhook/1");
        curl_easy_setopt(r->curl, CURLOPT_POST, 1L);
        return 0;
}

static void receiver_done(struct receiver *r)
{
        if (r->curl)
                curl_easy_cleanup(r->curl);
        r->curl = NULL;
        curl_slist_free_all(r->headers_base);
        r->headers_base = NULL;
}

int webhook_start(const struct config *cfg, struct store *store, struct webhook **ret,
                  struct attest_err *err)
{
        const char *urls[CONFIG_WEBHOOKS_MAX];
        struct webhook *w;
        int e;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->cfg = cfg;
        w->store = store;
        w->n = cfg->n_webhooks;
        pthread_mutex_init(&w->lock, NULL);
        {
                pthread_condattr_t ca;

                pthread_condattr_init(&ca);
                pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
                pthread_cond_init(&w->wake, &ca);
                pthread_condattr_destroy(&ca);
        }
        if (w->n) {
                if ((e = secret_load(w, cfg->webhook_secret_file, err)) < 0)
                        goto fail;
                if (cfg->webhook_ca[0]) {
                        char *ca = NULL;
                        size_t ca_len = 0;

                        if ((e = file_read_alloc(cfg->webhook_ca, 1024 * 1024, 0, &ca, &ca_len,
                                                 err)) < 0) {
                                attest_err_prefix(err, "--webhook-ca");
                                goto fail;
                        }
                        free(ca);
                }
                if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                        e = attest_fail(err, -ENOMEM, AE_CONFIG, "libcurl did not initialise");
                        goto fail;
                }
                w->curl_ready = true;
        }
        for (unsigned i = 0; i < w->n; i++) {
                urls[i] = cfg->webhooks[i];
                w->rx[i].index = i + 1;
                if ((e = receiver_init(w, &w->rx[i], cfg->webhooks[i], err)) < 0)
                        goto fail;
        }
        if ((e = store_outbox_setup(store, cfg->webhook_outbox_max, urls, w->n)) < 0) {
                attest_fail(err, e, AE_STORE_IO, "setting up the webhook outbox failed");
                goto fail;
        }
        {
                struct store_outbox_stats st;

                if (store_outbox_stats(store, &st) == 0)
                        w->dropped_seen = st.dropped;
        }
        for (unsigned i = 0; i < w->n; i++) {
                if ((e = store_outbox_cursor(store, w->rx[i].url, &w->rx[i].cursor)) < 0) {
                        attest_fail(err, e, AE_STORE_IO, "reading the webhook cursor failed");
                        goto fail;
                }
                atomic_store(&w->rx[i].acked, w->rx[i].cursor);
        }
        if (pthread_create(&w->duty, NULL, duty_main, w) != 0) {
                e = -ENOMEM;
                goto fail;
        }
        w->duty_started = true;
        for (unsigned i = 0; i < w->n; i++) {
                if (pthread_create(&w->rx[i].thread, NULL, receiver_main, &w->rx[i]) != 0) {
                        e = -ENOMEM;
                        goto fail;
                }
                w->rx[i].started = true;
                log_info("webhook %s: delivering from event %lld on", w->rx[i].name,
                         (long long)w->rx[i].cursor + 1);
        }
        *ret = w;
        return 0;
fail:
        webhook_stop(w);
        return e;
}

struct webhook *webhook_stop(struct webhook *w)
{
        if (!w)
                return NULL;
        pthread_mutex_lock(&w->lock);
        w->stopping = true;
        atomic_store(&w->stop_flag, true);
        pthread_cond_broadcast(&w->wake);
        pthread_mutex_unlock(&w->lock);
        for (unsigned i = 0; i < w->n; i++) {
                if (w->rx[i].started)
                        pthread_join(w->rx[i].thread, NULL);
                receiver_done(&w->rx[i]);
        }
        if (w->duty_started)
                pthread_join(w->duty, NULL);
        if (w->curl_ready)
                curl_global_cleanup();
        file_free_secret(w->secret, w->secret_alloc);
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
}
