/* SPDX-License-Identifier: MIT */
/*
 * attestd benchmark: N simulated agents, each with its own ECC P-256 (or RSA-2048) attestation
 * key, attest over HTTPS keep-alive against one attestd. The quotes are made here by TPM-format
 * code: a TPMS_ATTEST marshalled with Tss2_MU_TPMS_ATTEST_Marshal (PCR selection sha256:0-10,
 * pcrDigest over the simulated PCRs, extraData = the daemon's nonce), signed with OpenSSL into a
 * TPMT_SIGNATURE; each round appends `--entries` IMA entries (imagen) that the simulated PCR 10
 * was extended with. One round = POST challenge + POST evidence. Prints attestations/s, p50/p99
 * round latency, and, with --pid, the daemon's RSS and the CPU time it spent during the timed part
 * (utime + stime from /proc/PID/stat, all its threads) per attestation. Bounded by --seconds and
 * --rounds.
 *
 * Several attestd instances on one database: --url repeated (at most 8); agent i attests at
 * URL i mod n (challenge and evidence to the same one), and is enrolled there. --acks FILE writes
 * one line per 200 the bench saw, "ID ENTRIES MS URL" (the agent's log length the verdict
 * covered, the wall-clock time in ms since the epoch, the instance that answered), for a test to
 * find every acknowledged verdict in the results afterwards. --errors FILE writes one line per
 * answer that was not the one expected (a challenge not 201, evidence not 200), "MS ID STEP STATUS
 * ERROR" (STEP challenge or evidence, STATUS the HTTP status or 0 for no answer, ERROR the JSON
 * error code or -), and
 * --retry-ms MS makes a thread pause that long after a failed round (a database outage:
 * docs/scaling.md "Failover"). A simulated agent whose round failed without the server taking
 * it resends those entries in its next round, from the ima_offset the challenge asks for, as
 * the real agent does. With --pid (repeatable:
 * every attestd, and the PostgreSQL server's processes) the CPU is their sum. Enrolment (not
 * timed) runs on all --threads in parallel. --pid-tree PID (the PostgreSQL postmaster) adds a
 * separate CPU figure for PID and all its children (live ones, and the reaped ones through
 * cutime/cstime). --metric NAME (repeatable) prints the growth of that /metrics counter, summed
 * over its label sets and over every --url, per attestation of the timed part. --hook CMD runs
 * "CMD before" and "CMD after" (sh -c) right at the edges of the timed part. HTTP bytes per
 * attestation (request and answer heads and bodies, without TLS framing) are printed too.
 * --phases 1,2,4: after one enrolment, one timed part per number, each with the agents spread
 * over that many of the first URLs (a scale bench without enrolling again); the hook gets
 * "before-N"/"after-N" then, and each part's figures follow a "phase N" line.
 *
 * Open loop (--rates LIST, docs/scaling.md "Latency under open-loop load"): the timed parts above
 * are a closed loop, --threads clients each starting the next round as soon as the last ended, so
 * at saturation their latency is their own queue. With --rates, after enrolment, one open-loop
 * part per rate of LIST (comma-separated: "N" attestations/s, or "N%" of the capacity that a
 * closed-loop timed part, run first with the usual figures, measured), each --open-seconds long
 * (default --seconds): attestations *start* on a schedule (--arrivals poisson, the default, or
 * even), whether or not earlier ones ended, on a pool of --inflight threads (default 256: the
 * most attestations in flight; each thread a keep-alive connection to every --url, opened
 * before the first part and kept). Latency runs from the scheduled start to the evidence's answer,
 * so a start the client made late still counts from its schedule (no coordinated omission); how
 * late the starts were is reported apart ("client lag"), and a part where more than 0.1 % of starts
 * were over --lag-ms (default 1) late, or where every pool thread was busy at once, is flagged
 * LAGGED. Prints p50/p99/p99.9/max, the achieved rate (attestations ended / time from the first
 * arrival to the last end), errors, and CPU as above. --seed N: the arrival schedule's seed.
 * --warm (with or without --rates): one untimed round of every agent after enrolment, so that
 * every timed part sees following rounds only (the first one also changes the agent's status).
 * --reconnect: every round on a connection of its own, opened for its challenge and closed after
 * its evidence (TCP and a TLS handshake per attestation: an agent that attests once a minute
 * finds its last connection closed by the server's idle timeout); curl offers the TLS session it
 * kept from the last one, which the server resumes if it issued a ticket. "new connections"
 * counts the connections opened in the timed part.
 *
 * bench-daemon --url URL [--url URL]... --ca CA.pem --token ADMIN [--agents N] [--threads T]
 *              [--entries E] [--seconds S] [--rounds R] [--rsa] [--pid PID]... [--acks FILE]
 *              [--rates R[%],...] [--open-seconds S] [--arrivals poisson|even]
 *              [--inflight N] [--lag-ms MS] [--seed N] [--warm] [--errors FILE]
 *              [--retry-ms MS] [--reconnect]
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <tss2/tss2_mu.h>

#include "evidence/evjson.h"
#include "util/hex.h"
#include "tests/lib/imagen.h"

#define URLS_MAX 8
#define PIDS_MAX 64
#define RATES_MAX 16

struct opts {
        const char *urls[URLS_MAX], *ca, *token, *acks, *errors;
        unsigned nurls, agents, threads, entries, seconds, rounds, npids;
        unsigned pids[PIDS_MAX], pid_tree;
        const char *metrics[8], *hook;
        unsigned nmetrics;
        unsigned phases[URLS_MAX], nphases; /* --phases: URLs in use per timed part */
        _Atomic unsigned active;            /* URLs in use now */
        bool rsa, warm;
        bool reconnect; /* a connection (a TLS handshake) per round, closed after its evidence */
        unsigned retry_ms;
        FILE *ackf, *errf;
        pthread_mutex_t ack_lock;
        /* open loop: --rates (pct: of the closed-loop capacity), --open-seconds, --arrivals even,
         * --inflight, --lag-ms (in us), --seed */
        double rates[RATES_MAX];
        bool rate_pct[RATES_MAX], even;
        unsigned nrates, open_seconds, inflight, lag_us;
        uint64_t seed;
};

struct agent {
        char id[65];
        EVP_PKEY *key;
        EVP_PKEY_CTX *sign;  /* initialised once: each round signs a SHA-256 digest with it */
        uint8_t pcr[11][32]; /* sha256 PCRs 0-10 */
        uint64_t clock, entries, rounds;
        /* the entries from acked (the server's ima_offset at the last challenge that matched)
         * to entries, binary: what the next round resends when the server did not take them */
        uint64_t acked;
        uint8_t *pending;
        size_t pending_len;
        atomic_bool busy; /* open loop: a round of this agent is scheduled or under way */
};

struct buf {
        char *p;
        size_t n, cap;
};

struct worker {
        const struct opts *o;
        struct agent *agents;
        unsigned first, step;
        uint64_t *lat; /* round latencies, us */
        size_t nlat, cap;
        uint64_t ok, failed, errors;
        uint64_t up, down; /* HTTP bytes (head and body) of the timed rounds */
        struct hasher *h;
        CURL *curl, *curls[URLS_MAX]; /* one keep-alive connection per instance */
        const char *url;              /* the instance of the agent at hand */
        struct curl_slist *hdr[2]; /* request headers without / with the admin token, built once */
        struct buf resp;
        atomic_bool *stop;
        struct sched *sched; /* open loop: the schedule the pool draws arrivals from */
        uint64_t *lag;       /* open loop: how late each start was, us */
        size_t nlag, caplag;
        uint64_t starved;  /* open loop: arrivals claimed over --lag-ms late (no thread free) */
        uint64_t connects; /* connections opened (a TLS handshake each) */
        pthread_cond_t cv; /* open loop: woken from the idle stack (go) */
        bool go;
};

static uint64_t now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static size_t on_data(char *p, size_t sz, size_t n, void *arg)
{
        struct buf *b = arg;

        if (b->n + sz * n + 1 > b->cap) {
                size_t cap = (b->n + sz * n + 1) * 2;
                char *nb = realloc(b->p, cap);

                if (!nb)
                        return 0;
                b->p = nb;
                b->cap = cap;
        }
        memcpy(b->p + b->n, p, sz * n);
        b->n += sz * n;
        b->p[b->n] = 0;
        return sz * n;
}

/* POST body to url + path; returns the HTTP status, the body in w->resp. */
static long post(struct worker *w, const char *path, const char *body, bool auth)
{
        char url[512], hdr[600];
        long code = 0;

        snprintf(url, sizeof(url), "%s%s", w->url ? w->url : w->o->urls[0], path);
        if (!w->hdr[auth]) {
                w->hdr[auth] = curl_slist_append(NULL, "Content-Type: application/json");
                if (auth) {
                        snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", w->o->token);
                        w->hdr[auth] = curl_slist_append(w->hdr[auth], hdr);
                }
        }
        w->resp.n = 0;
        if (w->resp.p)
                w->resp.p[0] = 0;
        curl_easy_setopt(w->curl, CURLOPT_URL, url);
        curl_easy_setopt(w->curl, CURLOPT_HTTPHEADER, w->hdr[auth]);
        curl_easy_setopt(w->curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(w->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
        if (curl_easy_perform(w->curl) == CURLE_OK) {
                curl_off_t ul = 0, dl = 0;
                long rq = 0, hd = 0, nc = 0;

                curl_easy_getinfo(w->curl, CURLINFO_RESPONSE_CODE, &code);
                curl_easy_getinfo(w->curl, CURLINFO_SIZE_UPLOAD_T, &ul);
                curl_easy_getinfo(w->curl, CURLINFO_SIZE_DOWNLOAD_T, &dl);
                curl_easy_getinfo(w->curl, CURLINFO_REQUEST_SIZE, &rq);
                curl_easy_getinfo(w->curl, CURLINFO_HEADER_SIZE, &hd);
                curl_easy_getinfo(w->curl, CURLINFO_NUM_CONNECTS, &nc);
                w->connects += (uint64_t)nc;
                w->up += (uint64_t)ul + (uint64_t)rq;
                w->down += (uint64_t)dl + (uint64_t)hd;
        }
        return code;
}

static CURL *curl_new(const struct opts *o, struct buf *resp)
{
        CURL *c = curl_easy_init();

        if (!c)
                return NULL;
        curl_easy_setopt(c, CURLOPT_CAINFO, o->ca);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, resp);
        curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
        /* threads: no signals (libcurl's SIGALRM timeouts are not thread safe, and each transfer
         * cost two sigaction calls) */
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
        return c;
}

/* TPM2B_PUBLIC of a restricted signing key (what tpm2_createak writes). */
static int ak_public(const struct opts *o, EVP_PKEY *key, uint8_t *out, size_t *len)
{
        TPM2B_PUBLIC pub = {0};
        TPMT_PUBLIC *p = &pub.publicArea;
        size_t off = 0;

        p->nameAlg = TPM2_ALG_SHA256;
        p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                              TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
                              TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT;
        if (o->rsa) {
                BIGNUM *n = NULL;

                p->type = TPM2_ALG_RSA;
                p->parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_NULL;
                p->parameters.rsaDetail.scheme.scheme = TPM2_ALG_RSASSA;
                p->parameters.rsaDetail.scheme.details.rsassa.hashAlg = TPM2_ALG_SHA256;
                p->parameters.rsaDetail.keyBits = 2048;
                if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_N, &n) != 1)
                        return -EIO;
                p->unique.rsa.size = 256;
                BN_bn2binpad(n, p->unique.rsa.buffer, 256);
                BN_free(n);
        } else {
                uint8_t pt[65];
                size_t pl;

                p->type = TPM2_ALG_ECC;
                p->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
                p->parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
                p->parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
                p->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
                p->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
                if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt),
                                                    &pl) != 1 ||
                    pl != 65)
                        return -EIO;
                p->unique.ecc.x.size = 32;
                memcpy(p->unique.ecc.x.buffer, pt + 1, 32);
                p->unique.ecc.y.size = 32;
                memcpy(p->unique.ecc.y.buffer, pt + 33, 32);
        }
        if (Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, out, 1024, &off) != TSS2_RC_SUCCESS)
                return -EIO;
        *len = off;
        return 0;
}

/* A quote of the agent's PCRs 0-10 over nonce: marshalled TPMS_ATTEST and TPMT_SIGNATURE. */
static int make_quote(const struct opts *o, struct agent *a, const uint8_t *nonce, size_t nlen,
                      struct evidence *ev)
{
        TPMS_ATTEST at = {0};
        TPMT_SIGNATURE sig = {0};
        uint8_t der[600], digest[32];
        size_t off = 0, dl = sizeof(der);
        int e = -EIO;

        at.magic = TPM2_GENERATED_VALUE;
        at.type = TPM2_ST_ATTEST_QUOTE;
        at.qualifiedSigner.size = 34;
        memcpy(at.extraData.buffer, nonce, nlen);
        at.extraData.size = (UINT16)nlen;
        at.clockInfo.clock = ++a->clock;
        at.clockInfo.safe = 1;
        at.firmwareVersion = 0x20240125;
        at.attested.quote.pcrSelect.count = 1;
        at.attested.quote.pcrSelect.pcrSelections[0].hash = TPM2_ALG_SHA256;
        at.attested.quote.pcrSelect.pcrSelections[0].sizeofSelect = 3;
        at.attested.quote.pcrSelect.pcrSelections[0].pcrSelect[0] = 0xff;
        at.attested.quote.pcrSelect.pcrSelections[0].pcrSelect[1] = 0x07;
        SHA256(&a->pcr[0][0], sizeof(a->pcr), at.attested.quote.pcrDigest.buffer);
        at.attested.quote.pcrDigest.size = 32;
        ev->attest = malloc(sizeof(TPMS_ATTEST) + 64);
        ev->sig = malloc(1024);
        if (!ev->attest || !ev->sig ||
            Tss2_MU_TPMS_ATTEST_Marshal(&at, ev->attest, sizeof(TPMS_ATTEST) + 64, &off) !=
                    TSS2_RC_SUCCESS)
                goto out;
        ev->attest_len = off;
        /* what the TPM signs: the SHA-256 of TPMS_ATTEST, with the agent's key (a fresh ECDSA
         * or RSASSA signature every round; only the context is set up once per agent) */
        SHA256(ev->attest, ev->attest_len, digest);
        if (EVP_PKEY_sign(a->sign, der, &dl, digest, sizeof(digest)) != 1)
                goto out;
        if (o->rsa) {
                sig.sigAlg = TPM2_ALG_RSASSA;
                sig.signature.rsassa.hash = TPM2_ALG_SHA256;
                sig.signature.rsassa.sig.size = (UINT16)dl;
                memcpy(sig.signature.rsassa.sig.buffer, der, dl);
        } else {
                const unsigned char *p = der;
                ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)dl);
                const BIGNUM *r, *s;

                if (!es)
                        goto out;
                ECDSA_SIG_get0(es, &r, &s);
                sig.sigAlg = TPM2_ALG_ECDSA;
                sig.signature.ecdsa.hash = TPM2_ALG_SHA256;
                sig.signature.ecdsa.signatureR.size = 32;
                sig.signature.ecdsa.signatureS.size = 32;
                BN_bn2binpad(r, sig.signature.ecdsa.signatureR.buffer, 32);
                BN_bn2binpad(s, sig.signature.ecdsa.signatureS.buffer, 32);
                ECDSA_SIG_free(es);
        }
        off = 0;
        if (Tss2_MU_TPMT_SIGNATURE_Marshal(&sig, ev->sig, 1024, &off) != TSS2_RC_SUCCESS)
                goto out;
        ev->sig_len = off;
        e = 0;
out:
        return e;
}

/* The agent's signing context: sign_init once, SHA-256 as the signature's digest. */
static int sign_ctx(const struct opts *o, struct agent *a)
{
        a->sign = EVP_PKEY_CTX_new_from_pkey(NULL, a->key, NULL);
        if (!a->sign || EVP_PKEY_sign_init(a->sign) != 1 ||
            EVP_PKEY_CTX_set_signature_md(a->sign, EVP_sha256()) != 1 ||
            (o->rsa && EVP_PKEY_CTX_set_rsa_padding(a->sign, RSA_PKCS1_PADDING) != 1))
                return -EIO;
        return 0;
}

/*
 * The string value of "key" in a flat JSON object attestd wrote (no escapes in the values the
 * bench reads: hex nonces, status words), into out (n bytes): 0, or -1 when absent or too long.
 */
static int json_str(const char *doc, const char *key, char *out, size_t n)
{
        char pat[64];
        const char *p, *q;

        snprintf(pat, sizeof(pat), "\"%s\":\"", key);
        if (!doc || !(p = strstr(doc, pat)))
                return -1;
        p += strlen(pat);
        if (!(q = strchr(p, '"')) || (size_t)(q - p) >= n)
                return -1;
        memcpy(out, p, (size_t)(q - p));
        out[q - p] = 0;
        return 0;
}

/* The unsigned integer value of "key": 0, or -1. */
static int json_u64(const char *doc, const char *key, uint64_t *ret)
{
        char pat[64];
        const char *p;
        char *end;

        snprintf(pat, sizeof(pat), "\"%s\":", key);
        if (!doc || !(p = strstr(doc, pat)))
                return -1;
        p += strlen(pat);
        if (*p < '0' || *p > '9')
                return -1;
        errno = 0;
        *ret = strtoull(p, &end, 10);
        return errno || end == p ? -1 : 0;
}

/* Append entries to the agent's log (first round: SELinux state too), extend PCR 10. */
static int grow_log(struct worker *w, struct agent *a, struct evidence *ev)
{
        struct imagen g;
        struct ima_reader rd;
        struct ima_entry e;
        struct attest_err err = {0};
        static const char sel[] = "initialized=1;enforcing=1;checkreqprot=0;";
        int r = 0;

        if (imagen_init(&g) < 0)
                return -ENOMEM;
        if (a->entries == 0)
                r = imagen_buf(&g, 10, "selinux-state", sel, strlen(sel));
        for (unsigned i = 0; i < w->o->entries && r == 0; i++) {
                uint8_t d[32];
                char name[96];

                snprintf(name, sizeof(name), "/usr/lib/agent-%s/file-%llu", a->id,
                         (unsigned long long)(a->entries + i));
                SHA256((const uint8_t *)name, strlen(name), d);
                r = imagen_ng(&g, 10, "sha256", d, 32, name);
        }
        if (r < 0) {
                imagen_done(&g);
                return r;
        }
        ima_reader_init_binary(&rd, g.bin, g.bin_len, NULL);
        while ((r = ima_reader_next(&rd, &e, &err)) > 0) {
                uint8_t th[32];

                if (ima_tmpl_hash(w->h, BANK_SHA256, &e, th) < 0 ||
                    hasher_extend(w->h, BANK_SHA256, a->pcr[10], th) < 0) {
                        r = -EIO;
                        break;
                }
        }
        ima_reader_done(&rd);
        /* the evidence: every entry the server has not taken yet, the new ones last */
        if (r >= 0) {
                uint8_t *np = realloc(a->pending, a->pending_len + g.bin_len);

                if (!np || !(ev->ima = malloc(a->pending_len + g.bin_len))) {
                        if (np)
                                a->pending = np;
                        imagen_done(&g);
                        return -ENOMEM;
                }
                a->pending = np;
                memcpy(a->pending + a->pending_len, g.bin, g.bin_len);
                a->pending_len += g.bin_len;
                memcpy(ev->ima, a->pending, a->pending_len);
                ev->ima_len = a->pending_len;
                ev->ima_offset = a->acked;
                ev->ima_format = IMA_FORMAT_BINARY;
                a->entries += g.entries;
        }
        imagen_done(&g);
        return r;
}

static uint64_t wall_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* --errors: one line for an answer that was not the one expected */
static void log_error(struct worker *w, const struct agent *a, const char *step, long code)
{
        char e[64];

        if (!w->o->errf)
                return;
        if (json_str(w->resp.p, "error", e, sizeof(e)) < 0)
                snprintf(e, sizeof(e), "-");
        pthread_mutex_lock((pthread_mutex_t *)&w->o->ack_lock);
        fprintf(w->o->errf, "%llu %s %s %ld %s\n", (unsigned long long)wall_ms(), a->id, step, code,
                e);
        fflush(w->o->errf);
        pthread_mutex_unlock((pthread_mutex_t *)&w->o->ack_lock);
}

static int one_round(struct worker *w, struct agent *a)
{
        char path[160], nhex[2 * EVIDENCE_NONCE_MAX + 1], status[16];
        struct evidence ev = {0};
        char *body = NULL;
        uint64_t offset;
        long code;
        int r = -EIO;

        snprintf(path, sizeof(path), "/v1/agents/%s/challenges", a->id);
        /* --reconnect: the round's own connection, opened for its challenge, closed after its
         * evidence (an agent every minute, whose last connection the server's idle timeout
         * closed); curl offers the TLS session it kept, the server resumes it or not */
        curl_easy_setopt(w->curl, CURLOPT_FRESH_CONNECT, w->o->reconnect ? 1L : 0L);
        code = post(w, path, "{}", false);
        curl_easy_setopt(w->curl, CURLOPT_FRESH_CONNECT, 0L);
        if (code != 201) {
                log_error(w, a, "challenge", code);
                return -EIO;
        }
        if (json_str(w->resp.p, "nonce", nhex, sizeof(nhex)) < 0 ||
            hex_decode(nhex, strlen(nhex), ev.nonce, sizeof(ev.nonce), &ev.nonce_len) < 0 ||
            json_u64(w->resp.p, "ima_offset", &offset) < 0)
                return -EIO;
        /* the server took every entry (the last round was judged, answered or not): none is
         * pending; it asks from the first pending one (the last round was not taken): they
         * are sent again; anything else the bench cannot make */
        if (offset == a->entries) {
                a->acked = offset;
                a->pending_len = 0;
        } else if (offset != a->acked) {
                log_error(w, a, "offset", 0);
                return -EIO;
        }
        if (grow_log(w, a, &ev) < 0 || make_quote(w->o, a, ev.nonce, ev.nonce_len, &ev) < 0)
                goto out;
        for (int i = 0; i <= 10; i++)
                memcpy(ev.pcrs.v[BANK_SHA256][i], a->pcr[i], 32);
        ev.pcrs.have[BANK_SHA256] = 0x7ff;
        if (evidence_to_json(&ev, &body) < 0)
                goto out;
        snprintf(path, sizeof(path), "/v1/agents/%s/evidence", a->id);
        curl_easy_setopt(w->curl, CURLOPT_FORBID_REUSE, w->o->reconnect ? 1L : 0L);
        code = post(w, path, body, false);
        curl_easy_setopt(w->curl, CURLOPT_FORBID_REUSE, 0L);
        if (code == 200) {
                a->acked = a->entries;
                a->pending_len = 0;
        } else {
                log_error(w, a, "evidence", code);
        }
        if (code == 200 && w->o->ackf) {
                pthread_mutex_lock((pthread_mutex_t *)&w->o->ack_lock);
                fprintf(w->o->ackf, "%s %llu %llu %s\n", a->id, (unsigned long long)a->entries,
                        (unsigned long long)wall_ms(), w->url ? w->url : w->o->urls[0]);
                fflush(w->o->ackf);
                pthread_mutex_unlock((pthread_mutex_t *)&w->o->ack_lock);
        }
        if (code == 200) {
                r = json_str(w->resp.p, "status", status, sizeof(status)) == 0 &&
                                    !strcmp(status, "pass")
                            ? 0
                            : 1;
        } else {
                fprintf(stderr, "bench: evidence %ld: %.200s\n", code, w->resp.p ? w->resp.p : "");
        }
out:
        free(body);
        free(ev.attest);
        free(ev.sig);
        free(ev.ima);
        return r;
}

static void *worker_main(void *arg)
{
        struct worker *w = arg;
        unsigned n = 0;

        for (;;) {
                for (unsigned i = w->first; i < w->o->agents; i += w->step) {
                        struct agent *a = &w->agents[i];
                        uint64_t t0;
                        int r;

                        if (atomic_load(w->stop) || a->rounds >= w->o->rounds)
                                return NULL;
                        t0 = now_us();
                        w->curl = w->curls[i % w->o->active];
                        w->url = w->o->urls[i % w->o->active];
                        r = one_round(w, a);
                        if (r < 0) {
                                w->errors++;
                                if (w->o->retry_ms) {
                                        struct timespec ts = {
                                                .tv_sec = w->o->retry_ms / 1000,
                                                .tv_nsec = (long)(w->o->retry_ms % 1000) * 1000000};

                                        nanosleep(&ts, NULL);
                                }
                                continue;
                        }
                        a->rounds++;
                        r == 0 ? w->ok++ : w->failed++;
                        if (w->nlat == w->cap) {
                                w->cap = w->cap ? w->cap * 2 : 4096;
                                w->lat = realloc(w->lat, w->cap * sizeof(*w->lat));
                        }
                        w->lat[w->nlat++] = now_us() - t0;
                        n++;
                }
        }
        return NULL;
}

/* Keys and enrolment of the worker's agents (agent i at URL i mod n); not timed. */
static void *enrol_main(void *arg)
{
        struct worker *w = arg;
        const struct opts *o = w->o;

        for (unsigned i = w->first; i < o->agents; i += w->step) {
                struct agent *a = &w->agents[i];
                uint8_t pub[1024];
                size_t pl;
                char *b64, *body = NULL;
                json_t *j;

                w->curl = w->curls[i % o->nurls];
                w->url = o->urls[i % o->nurls];
                a->key = o->rsa ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256");
                if (!a->key || sign_ctx(o, a) < 0 || ak_public(o, a->key, pub, &pl) < 0)
                        return NULL;
                for (int p = 0; p < 10; p++)
                        memset(a->pcr[p], p + 1, 32);
                b64 = malloc(b64_encoded_size(pl));
                if (!b64)
                        return NULL;
                b64_encode(pub, pl, b64);
                if (asprintf(&body, "{\"ak_public\":\"%s\"}", b64) < 0) {
                        free(b64);
                        return NULL;
                }
                if (post(w, "/v1/agents", body, true) != 201) {
                        fprintf(stderr, "bench: enrol: %s\n", w->resp.p ? w->resp.p : "");
                        free(body);
                        free(b64);
                        return NULL;
                }
                j = json_loads(w->resp.p, 0, NULL);
                snprintf(a->id, sizeof(a->id), "%s", json_string_value(json_object_get(j, "id")));
                json_decref(j);
                free(body);
                free(b64);
        }
        return NULL;
}

/* /proc/NAME/stat after the command name's closing parenthesis (a name may hold any bytes), in
 * buf; NULL when unreadable. */
static const char *proc_stat(const char *name, char *buf, size_t size)
{
        char path[64], *p;
        size_t n;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%.20s/stat", name);
        if (!(f = fopen(path, "re")))
                return NULL;
        n = fread(buf, 1, size - 1, f);
        fclose(f);
        buf[n] = 0;
        return (p = strrchr(buf, ')')) ? p + 1 : NULL;
}

/* utime + stime of the process (all threads), in clock ticks; 0 when unknown. */
static unsigned long long cpu_ticks(unsigned pid)
{
        char name[16], buf[1024];
        unsigned long long ut = 0, st = 0;
        const char *p;

        snprintf(name, sizeof(name), "%u", pid);
        /* after the command name: state is field 3, utime 14, stime 15 */
        if (!pid || !(p = proc_stat(name, buf, sizeof(buf))) ||
            sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
                return 0;
        return ut + st;
}

/* CPU ticks of pid and its descendants one level down: its own, its reaped children's
 * (cutime + cstime) and its live children's (utime + stime). */
static unsigned long long tree_ticks(unsigned pid)
{
        char name[16], buf[1024];
        unsigned long long ut, st, cut, cst, sum = 0;
        struct dirent *de;
        const char *p;
        DIR *dir;

        snprintf(name, sizeof(name), "%u", pid);
        if (!pid || !(p = proc_stat(name, buf, sizeof(buf))) ||
            sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &ut, &st,
                   &cut, &cst) != 4)
                return 0;
        sum = ut + st + cut + cst;
        if (!(dir = opendir("/proc")))
                return sum;
        while ((de = readdir(dir))) {
                unsigned ppid;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                if ((p = proc_stat(de->d_name, buf, sizeof(buf))) &&
                    sscanf(p, " %*c %u %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ppid, &ut,
                           &st) == 3 &&
                    ppid == pid)
                        sum += ut + st;
        }
        closedir(dir);
        return sum;
}

/* The sum of every sample of counter name on every instance's /metrics; -1 when absent. */
static double metric_sum(const struct opts *o, const char *name)
{
        double sum = 0;
        bool found = false;
        size_t nl = strlen(name);

        for (unsigned u = 0; u < o->nurls; u++) {
                struct buf b = {0};
                char url[512];
                CURL *c = curl_new(o, &b);
                const char *line;

                if (!c)
                        return -1;
                snprintf(url, sizeof(url), "%s/metrics", o->urls[u]);
                curl_easy_setopt(c, CURLOPT_URL, url);
                if (curl_easy_perform(c) == CURLE_OK && b.p)
                        for (line = b.p; line && *line;
                             line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                                const char *sp;

                                if (strncmp(line, name, nl) != 0 ||
                                    (line[nl] != ' ' && line[nl] != '{'))
                                        continue;
                                if ((sp = strchr(line, ' ')) && sp < strchrnul(line, '\n')) {
                                        sum += strtod(sp + 1, NULL);
                                        found = true;
                                }
                        }
                curl_easy_cleanup(c);
                free(b.p);
        }
        return found ? sum : -1;
}

static void run_hook(const struct opts *o, const char *when)
{
        char *cmd = NULL;

        if (!o->hook || asprintf(&cmd, "%s %s", o->hook, when) < 0)
                return;
        if (system(cmd) != 0)
                fprintf(stderr, "bench: hook %s failed\n", when);
        free(cmd);
}

/* Context switches of all the process's threads (voluntary + involuntary); 0 when unknown. */
static unsigned long long ctx_switches(unsigned pid)
{
        char path[96], line[256];
        unsigned long long sum = 0, v;
        struct dirent *de;
        DIR *dir;

        snprintf(path, sizeof(path), "/proc/%u/task", pid);
        if (!pid || !(dir = opendir(path)))
                return 0;
        while ((de = readdir(dir))) {
                FILE *f;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/proc/%u/task/%.20s/status", pid, de->d_name);
                if (!(f = fopen(path, "re")))
                        continue;
                while (fgets(line, sizeof(line), f))
                        if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
                            sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
                                sum += v;
                fclose(f);
        }
        closedir(dir);
        return sum;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

static void rss(unsigned pid, unsigned long *cur, unsigned long *peak)
{
        char path[64], line[256];
        FILE *f;

        *cur = *peak = 0;
        snprintf(path, sizeof(path), "/proc/%u/status", pid);
        if (!(f = fopen(path, "re")))
                return;
        while (fgets(line, sizeof(line), f)) {
                sscanf(line, "VmRSS: %lu kB", cur);
                sscanf(line, "VmHWM: %lu kB", peak);
        }
        fclose(f);
}

/*
 * Which pool thread takes which arrival: a thread takes the next arrival (and sleeps until it is
 * due) only when no thread holds one yet or it is due within SCHED_AHEAD; the others wait on a
 * stack, and the thread that came free last is woken first (each arrival that starts wakes one,
 * and a thread that took one wakes another while the next is also that near). So the threads
 * at work are the few hot ones, in flight + those holding the next SCHED_AHEAD of arrivals, and
 * their keep-alive connections stay open at any rate, where 256 threads taking turns would let
 * the server's idle timeout close them at a low one.
 */
#define SCHED_AHEAD 20000 /* us */

/*
 * The open loop's arrival schedule, which the pool's threads draw from in turn. Poisson arrivals
 * by default: an operator's fleet is many agents, each on its own timer (the attestation
 * interval, the agent's jitter, boot times spread over the day), and the superposition of many
 * independent sparse arrival streams tends to a Poisson process (Palm-Khintchine): exponential
 * gaps, and the bursts that come with them, which are what builds a queue at a server below its
 * capacity. Evenly spaced arrivals (--arrivals even) are the gentlest load of a given rate and
 * understate that queue; they are there for comparison.
 */
struct sched {
        pthread_mutex_t lock;
        pthread_barrier_t ready; /* the pool's threads (connections open) and main */
        const struct opts *o;
        struct agent *agents;
        double rate;          /* attestations/s */
        uint64_t t0;          /* the schedule's origin, us (CLOCK_MONOTONIC); 0 until first claim */
        double next, span;    /* the next arrival's offset from t0, and the part's length, us */
        uint64_t n;           /* arrivals handed out */
        uint64_t rng;         /* splitmix64 state */
        unsigned next_agent;  /* round robin over the agents, passing over busy ones */
        uint64_t skipped;     /* agents passed over: their previous round was still on */
        unsigned holders;     /* threads holding an arrival not yet started */
        bool done;            /* every arrival handed out */
        struct worker *scout; /* the thread that took the latest arrival */
        struct worker **idle; /* the waiting threads, the last one to come free on top */
        unsigned nidle;
        atomic_uint inflight, inflight_max;
        _Atomic uint64_t last_end; /* the latest end of an attestation, us */
};

static uint64_t splitmix64(uint64_t *x)
{
        uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

/* Under the lock: should a free thread take the next arrival now (also: none is left)? */
static bool sched_near(const struct sched *s)
{
        return !s->holders || !s->t0 || s->next >= s->span ||
               s->t0 + (uint64_t)s->next <= now_us() + SCHED_AHEAD;
}

/* Under the lock: wake the waiting thread that came free last. */
static void sched_wake(struct sched *s)
{
        struct worker *w;

        if (!s->nidle)
                return;
        w = s->idle[--s->nidle];
        w->go = true;
        pthread_cond_signal(&w->cv);
}

/*
 * Under the lock: the next arrival, its due time (us) and an idle agent for it, marked busy
 * (one round of an agent at a time: its log and quote clock move on each round). false once
 * the part's arrivals are all handed out.
 */
static bool sched_claim(struct sched *s, uint64_t *due, unsigned *agent)
{
        if (!s->t0)
                s->t0 = now_us() + 20000; /* the first claim sets the origin, 20 ms ahead */
        if (s->next >= s->span)
                return false;
        *due = s->t0 + (uint64_t)s->next;
        s->n++;
        if (s->o->even) {
                s->next = (double)s->n * 1e6 / s->rate;
        } else {
                /* an exponential gap of mean 1/rate: u uniform in (0, 1] */
                double u = (double)((splitmix64(&s->rng) >> 11) + 1) * 0x1p-53;

                s->next += -log(u) * 1e6 / s->rate;
        }
        /* ends: while this thread claims, at most --inflight - 1 agents are busy (held or in a
         * round by the other threads), and there are at least --inflight agents */
        while (atomic_exchange(&s->agents[s->next_agent].busy, true)) {
                s->skipped++;
                s->next_agent = (s->next_agent + 1) % s->o->agents;
        }
        *agent = s->next_agent;
        s->next_agent = (s->next_agent + 1) % s->o->agents;
        return true;
}

static bool push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 4096;
                uint64_t *nv = realloc(*v, c * sizeof(*nv));

                if (!nv)
                        return false;
                *v = nv;
                *cap = c;
        }
        (*v)[(*n)++] = x;
        return true;
}

/* A pool thread of the open loop: open its connections, then take arrivals until none is left. */
static void *open_main(void *arg)
{
        struct worker *w = arg;
        struct sched *s = w->sched;
        const struct opts *o = w->o;
        char url[512];
        uint64_t due;
        unsigned i;

        /* wake at the scheduled time, not up to the default timer slack (50 us) after it */
        prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
        /* the keep-alive connection to every instance, TLS handshake included, before the part */
        for (unsigned u = 0; u < o->nurls; u++) {
                snprintf(url, sizeof(url), "%s/healthz", o->urls[u]);
                curl_easy_setopt(w->curls[u], CURLOPT_URL, url);
                curl_easy_setopt(w->curls[u], CURLOPT_HTTPGET, 1L);
                w->resp.n = 0;
                if (curl_easy_perform(w->curls[u]) != CURLE_OK)
                        fprintf(stderr, "bench: %s did not answer\n", url);
        }
        pthread_barrier_wait(&s->ready);
        pthread_mutex_lock(&s->lock);
        for (;;) {
                struct agent *a;
                struct timespec ts;
                uint64_t claimed, start, end, prev;
                unsigned fl, max;
                int r;

                while (!s->done && !sched_near(s)) {
                        w->go = false;
                        s->idle[s->nidle++] = w;
                        while (!w->go)
                                pthread_cond_wait(&w->cv, &s->lock);
                }
                if (s->done || !sched_claim(s, &due, &i)) {
                        s->done = true;
                        while (s->nidle)
                                sched_wake(s);
                        break;
                }
                claimed = now_us();
                s->holders++;
                s->scout = w;
                /* taken after its time: no thread was free for it (or the one woken for it ran
                 * late); otherwise a late start is this thread's late wake-up */
                if (claimed > due + o->lag_us)
                        w->starved++;
                /* until due; the thread that took the latest arrival (the scout) also wakes when
                 * the next one comes within SCHED_AHEAD, to wake a thread for it */
                for (;;) {
                        uint64_t wake = due;

                        if (sched_near(s))
                                sched_wake(s);
                        else if (s->scout == w && s->t0 + (uint64_t)s->next - SCHED_AHEAD < due)
                                wake = s->t0 + (uint64_t)s->next - SCHED_AHEAD;
                        pthread_mutex_unlock(&s->lock);
                        ts.tv_sec = (time_t)(wake / 1000000);
                        ts.tv_nsec = (long)(wake % 1000000) * 1000;
                        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                                ;
                        if (wake == due)
                                break;
                        pthread_mutex_lock(&s->lock);
                }
                start = now_us();
                pthread_mutex_lock(&s->lock);
                s->holders--;
                sched_wake(s); /* a thread for the next arrival (it waits again if too early) */
                pthread_mutex_unlock(&s->lock);

                fl = atomic_fetch_add(&s->inflight, 1) + 1;
                max = atomic_load(&s->inflight_max);
                while (fl > max && !atomic_compare_exchange_weak(&s->inflight_max, &max, fl))
                        ;
                a = &w->agents[i];
                w->curl = w->curls[i % o->nurls];
                w->url = o->urls[i % o->nurls];
                r = one_round(w, a);
                end = now_us();
                atomic_fetch_sub(&s->inflight, 1);
                if (r >= 0)
                        a->rounds++;
                atomic_store(&a->busy, false);
                prev = atomic_load(&s->last_end);
                while (end > prev && !atomic_compare_exchange_weak(&s->last_end, &prev, end))
                        ;
                /* latency from the schedule: a late start counts its lateness too */
                if (!push_u64(&w->lag, &w->nlag, &w->caplag, start > due ? start - due : 0) ||
                    r < 0 || !push_u64(&w->lat, &w->nlat, &w->cap, end - due))
                        w->errors++;
                else
                        r == 0 ? w->ok++ : w->failed++;
                pthread_mutex_lock(&s->lock);
        }
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

/* utime + stime of this process, us */
static double self_cpu_us(void)
{
        struct rusage u;

        getrusage(RUSAGE_SELF, &u);
        return (double)u.ru_utime.tv_sec * 1e6 + (double)u.ru_utime.tv_usec +
               (double)u.ru_stime.tv_sec * 1e6 + (double)u.ru_stime.tv_usec;
}

static double ms_at(const uint64_t *v, size_t n, size_t num, size_t den)
{
        return n ? (double)v[n * num / den] / 1000 : 0.0;
}

/*
 * One open-loop part (the comment at the top) at rate attestations/s on the pool w (--inflight
 * workers, their connections kept from one part to the next), part: its number (the schedule's
 * seed is --seed + part); cap: the closed-loop capacity rate is a share of, or 0. Its figures on
 * stdout; returns its errors, or -1 when out of memory.
 */
static long long open_part(const struct opts *o, struct agent *agents, struct worker *w,
                           unsigned part, double rate, double cap)
{
        struct sched s = {.o = o,
                          .agents = agents,
                          .rate = rate,
                          .span = (double)o->open_seconds * 1e6,
                          .rng = o->seed + part};
        pthread_t *th = calloc(o->inflight, sizeof(*th));
        struct worker **idle = calloc(o->inflight, sizeof(*idle));
        uint64_t *lat = NULL, *lag = NULL, ok = 0, failed = 0, errors = 0, late = 0, starved = 0,
                 connects = 0;
        size_t nlat = 0, nlag = 0;
        unsigned long long c0 = 0, c1 = 0, p0, p1;
        double u0, u1, span_us, secs;
        long long ret = -1;
        bool lagged;

        if (!th || !idle) {
                free(th);
                free(idle);
                return -1;
        }
        s.idle = idle;
        for (unsigned t = 0; t < o->inflight; t++) {
                w[t].sched = &s;
                w[t].nlat = w[t].nlag = 0;
                w[t].ok = w[t].failed = w[t].errors = w[t].starved = w[t].connects = 0;
        }
        pthread_mutex_init(&s.lock, NULL);
        pthread_barrier_init(&s.ready, NULL, o->inflight + 1);
        for (unsigned t = 0; t < o->inflight; t++)
                if (pthread_create(&th[t], NULL, open_main, &w[t]) != 0) {
                        fprintf(stderr, "bench: no thread for the open loop's pool\n");
                        exit(1); /* the others wait at the barrier */
                }
        pthread_barrier_wait(&s.ready);
        p0 = tree_ticks(o->pid_tree);
        for (unsigned i = 0; i < o->npids; i++)
                c0 += cpu_ticks(o->pids[i]);
        u0 = self_cpu_us();
        for (unsigned t = 0; t < o->inflight; t++)
                pthread_join(th[t], NULL);
        u1 = self_cpu_us();
        for (unsigned i = 0; i < o->npids; i++)
                c1 += cpu_ticks(o->pids[i]);
        p1 = tree_ticks(o->pid_tree);
        pthread_barrier_destroy(&s.ready);
        pthread_mutex_destroy(&s.lock);

        for (unsigned t = 0; t < o->inflight; t++) {
                nlat += w[t].nlat;
                nlag += w[t].nlag;
        }
        lat = malloc((nlat ? nlat : 1) * sizeof(*lat));
        lag = malloc((nlag ? nlag : 1) * sizeof(*lag));
        if (!lat || !lag)
                goto out;
        nlat = nlag = 0;
        for (unsigned t = 0; t < o->inflight; t++) {
                if (w[t].nlat)
                        memcpy(lat + nlat, w[t].lat, w[t].nlat * sizeof(*lat));
                if (w[t].nlag)
                        memcpy(lag + nlag, w[t].lag, w[t].nlag * sizeof(*lag));
                nlat += w[t].nlat;
                nlag += w[t].nlag;
                ok += w[t].ok;
                failed += w[t].failed;
                errors += w[t].errors;
                starved += w[t].starved;
                connects += w[t].connects;
        }
        qsort(lat, nlat, sizeof(*lat), cmp_u64);
        qsort(lag, nlag, sizeof(*lag), cmp_u64);
        for (size_t i = 0; i < nlag; i++)
                late += lag[i] > o->lag_us;
        /* from the schedule's origin to the last attestation's end */
        span_us = s.last_end > s.t0 ? (double)(s.last_end - s.t0) : 1.0;
        secs = span_us / 1e6;
        /* more than 0.1 % of starts late could be the p99.9 itself; a pool all busy at once
         * held arrivals back in the client, not in the server */
        lagged = late * 1000 > s.n || atomic_load(&s.inflight_max) >= o->inflight;
        if (cap > 0)
                printf("open loop: rate=%.0f/s (%.0f %% of %.0f/s closed-loop capacity) ", rate,
                       100.0 * rate / cap, cap);
        else
                printf("open loop: rate=%.0f/s ", rate);
        printf("arrivals=%s seconds=%u inflight=%u\n", o->even ? "even" : "poisson",
               o->open_seconds, o->inflight);
        printf("attestations=%llu pass=%llu fail=%llu errors=%llu achieved=%.0f/s "
               "seconds=%.2f new connections=%llu\n",
               (unsigned long long)s.n, (unsigned long long)ok, (unsigned long long)failed,
               (unsigned long long)errors, (double)(ok + failed) / secs, secs,
               (unsigned long long)connects);
        printf("latency from scheduled start p50=%.2f ms p99=%.2f ms p99.9=%.2f ms max=%.2f ms\n",
               ms_at(lat, nlat, 1, 2), ms_at(lat, nlat, 99, 100), ms_at(lat, nlat, 999, 1000),
               nlat ? (double)lat[nlat - 1] / 1000 : 0.0);
        printf("client lag: late=%llu (%.2f %% of starts more than %.1f ms late; %llu of them "
               "with no pool thread free) start lag p50=%.2f ms p99=%.2f ms max=%.2f ms "
               "inflight max=%u of %u, busy agents passed over=%llu: %s\n",
               (unsigned long long)late, s.n ? 100.0 * (double)late / (double)s.n : 0.0,
               (double)o->lag_us / 1000, (unsigned long long)starved, ms_at(lag, nlag, 1, 2),
               ms_at(lag, nlag, 99, 100), nlag ? (double)lag[nlag - 1] / 1000 : 0.0,
               atomic_load(&s.inflight_max), o->inflight, (unsigned long long)s.skipped,
               lagged ? "LAGGED" : "ok");
        printf("client cpu=%.2f s (%.0f %% of one core) ms/attestation=%.3f\n", (u1 - u0) / 1e6,
               100.0 * (u1 - u0) / span_us, nlat ? (u1 - u0) / 1000.0 / (double)nlat : 0.0);
        if (o->npids) {
                double cpu = (double)(c1 - c0) / (double)sysconf(_SC_CLK_TCK);

                printf("attestd cpu=%.2f s (%.0f %% of one core) ms/attestation=%.3f\n", cpu,
                       100.0 * cpu * 1e6 / span_us, nlat ? cpu * 1000.0 / (double)nlat : 0.0);
        }
        if (o->pid_tree) {
                double cpu = (double)(p1 - p0) / (double)sysconf(_SC_CLK_TCK);

                printf("postgres cpu=%.2f s (%.0f %% of one core) ms/attestation=%.3f\n", cpu,
                       100.0 * cpu * 1e6 / span_us, nlat ? cpu * 1000.0 / (double)nlat : 0.0);
        }
        fflush(stdout);
        ret = (long long)errors;
out:
        free(lat);
        free(lag);
        free(th);
        free(idle);
        return ret;
}

int main(int argc, char **argv)
{
        static const struct option lo[] = {
                {"url", required_argument, NULL, 'u'},
                {"ca", required_argument, NULL, 'c'},
                {"token", required_argument, NULL, 't'},
                {"agents", required_argument, NULL, 'n'},
                {"threads", required_argument, NULL, 'T'},
                {"entries", required_argument, NULL, 'e'},
                {"seconds", required_argument, NULL, 's'},
                {"rounds", required_argument, NULL, 'r'},
                {"rsa", no_argument, NULL, 'R'},
                {"pid", required_argument, NULL, 'p'},
                {"acks", required_argument, NULL, 'A'},
                {"pid-tree", required_argument, NULL, 'P'},
                {"metric", required_argument, NULL, 'M'},
                {"hook", required_argument, NULL, 'H'},
                {"phases", required_argument, NULL, 'F'},
                {"rates", required_argument, NULL, 'O'},
                {"open-seconds", required_argument, NULL, 'S'},
                {"arrivals", required_argument, NULL, 'a'},
                {"inflight", required_argument, NULL, 'I'},
                {"lag-ms", required_argument, NULL, 'L'},
                {"seed", required_argument, NULL, 'z'},
                {"warm", no_argument, NULL, 'W'},
                {"errors", required_argument, NULL, 'E'},
                {"retry-ms", required_argument, NULL, 'Y'},
                {"reconnect", no_argument, NULL, 'C'},
                {0},
        };
        struct opts o = {.agents = 64,
                         .threads = 4,
                         .entries = 10,
                         .seconds = 10,
                         .rounds = 1000000,
                         .inflight = 256,
                         .lag_us = 1000,
                         .seed = 1};
        double capacity = 0;
        bool closed = true;
        struct agent *agents;
        struct worker *w;
        pthread_t *th;
        atomic_bool stop = false;
        struct buf resp = {0};
        uint64_t t0, t1, total = 0, ok = 0, failed = 0, errors = 0, *all, up = 0, down = 0;
        uint64_t connects = 0;
        unsigned long r0, h0, r1, h1;
        unsigned long long c0, c1, x0, x1;
        struct rusage u0, u1;
        size_t nall = 0;
        int c;

        /*
         * The simulated agents are the harness, not the product: glibc gave each thread's arena
         * back to the kernel after every round (madvise, 10 % of this process's samples, then
         * sysmalloc to grow it again; `perf record` on bench-daemon). Keep freed memory instead,
         * so the figures are attestd's and not the harness's page faults.
         */
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
        mallopt(M_MMAP_THRESHOLD, 4 << 20);
        while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
                switch (c) {
                case 'u':
                        if (o.nurls == URLS_MAX)
                                return 2;
                        o.urls[o.nurls++] = optarg;
                        break;
                case 'A':
                        o.acks = optarg;
                        break;
                case 'E':
                        o.errors = optarg;
                        break;
                case 'Y':
                        o.retry_ms = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'H':
                        o.hook = optarg;
                        break;
                case 'F': {
                        char *e = optarg;

                        while (*e && o.nphases < URLS_MAX) {
                                o.phases[o.nphases++] = (unsigned)strtoul(e, &e, 10);
                                if (*e == ',')
                                        e++;
                                else if (*e)
                                        return 2;
                        }
                        break;
                }
                case 'O': {
                        char *e = optarg;

                        while (*e) {
                                if (o.nrates == RATES_MAX)
                                        return 2;
                                o.rates[o.nrates] = strtod(e, &e);
                                if (*e == '%') {
                                        o.rate_pct[o.nrates] = true;
                                        e++;
                                }
                                if (!(o.rates[o.nrates++] > 0) || (*e && *e != ','))
                                        return 2;
                                if (*e == ',')
                                        e++;
                        }
                        break;
                }
                case 'S':
                        o.open_seconds = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'a':
                        if (strcmp(optarg, "poisson") && strcmp(optarg, "even"))
                                return 2;
                        o.even = !strcmp(optarg, "even");
                        break;
                case 'I':
                        o.inflight = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'L':
                        o.lag_us = (unsigned)(strtod(optarg, NULL) * 1000);
                        break;
                case 'W':
                        o.warm = true;
                        break;
                case 'C':
                        o.reconnect = true;
                        break;
                case 'z':
                        o.seed = strtoull(optarg, NULL, 10);
                        break;
                case 'P':
                        o.pid_tree = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'M':
                        if (o.nmetrics == ARRAY_SIZE(o.metrics))
                                return 2;
                        o.metrics[o.nmetrics++] = optarg;
                        break;
                case 'c':
                        o.ca = optarg;
                        break;
                case 't':
                        o.token = optarg;
                        break;
                case 'n':
                        o.agents = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'T':
                        o.threads = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'e':
                        o.entries = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 's':
                        o.seconds = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'r':
                        o.rounds = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'R':
                        o.rsa = true;
                        break;
                case 'p':
                        if (o.npids == PIDS_MAX)
                                return 2;
                        o.pids[o.npids++] = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                default:
                        return 2;
                }
        }
        if (o.nrates) {
                /* the open loop: every instance, a closed-loop part first only for a share of
                 * its capacity */
                if (o.nphases || !o.inflight || o.inflight > o.agents) {
                        fprintf(stderr,
                                "bench: --rates: no --phases, and 1..--agents --inflight\n");
                        return 2;
                }
                closed = false;
                for (unsigned i = 0; i < o.nrates; i++)
                        closed |= o.rate_pct[i];
                if (!o.open_seconds)
                        o.open_seconds = o.seconds;
        }
        if (!o.nphases)
                o.phases[o.nphases++] = o.nurls;
        for (unsigned i = 0; i < o.nphases; i++)
                if (!o.phases[i] || o.phases[i] > o.nurls) {
                        fprintf(stderr, "bench: --phases: 1..%u URLs\n", o.nurls);
                        return 2;
                }
        if (!o.nurls || !o.ca || !o.token || !o.agents || !o.threads || o.threads > o.agents) {
                fprintf(stderr, "usage: see the comment at the top of bench-daemon.c\n");
                return 2;
        }
        curl_global_init(CURL_GLOBAL_DEFAULT);
        agents = calloc(o.agents, sizeof(*agents));
        w = calloc(o.threads, sizeof(*w));
        th = calloc(o.threads, sizeof(*th));
        if (!agents || !w || !th)
                return 1;

        /* set-up, not timed: the policy, then keys and enrolment on every thread */
        {
                struct worker s = {.o = &o, .resp = {0}};

                s.curl = curl_new(&o, &s.resp);
                if (post(&s, "/v1/policies/default",
                         "{\"name\":\"default\",\"selinux\":{\"enforcing\":true,"
                         "\"never_permissive\":true}}",
                         true) == 0)
                        return 1;
                curl_easy_cleanup(s.curl);
                curl_slist_free_all(s.hdr[0]);
                curl_slist_free_all(s.hdr[1]);
                free(s.resp.p);
        }
        if (o.acks && !(o.ackf = fopen(o.acks, "we")))
                return 1;
        if (o.errors && !(o.errf = fopen(o.errors, "we")))
                return 1;
        pthread_mutex_init(&o.ack_lock, NULL);
        for (unsigned t = 0; t < o.threads; t++) {
                w[t] = (struct worker){
                        .o = &o, .agents = agents, .first = t, .step = o.threads, .stop = &stop};
                for (unsigned u = 0; u < o.nurls; u++)
                        if (!(w[t].curls[u] = curl_new(&o, &w[t].resp)))
                                return 1;
                if (hasher_new(&w[t].h) < 0)
                        return 1;
                pthread_create(&th[t], NULL, enrol_main, &w[t]);
        }
        for (unsigned t = 0; t < o.threads; t++) {
                pthread_join(th[t], NULL);
                w[t].up = w[t].down = w[t].connects = 0; /* the timed rounds' bytes only */
        }
        for (unsigned i = 0; i < o.agents; i++)
                if (!agents[i].id[0]) {
                        fprintf(stderr, "bench: agent %u not enrolled\n", i);
                        return 1;
                }
        (void)resp;
        double m0[8], m1[8];
        unsigned long long p0, p1;
        unsigned long long all_errors = 0;

        if (o.warm) {
                /* --warm: one round of every agent first (back to back on --threads, each thread
                 * through its own agents once), untimed */
                unsigned rounds = o.rounds;
                uint64_t tw = now_us();

                o.rounds = 1;
                atomic_store(&o.active, o.nurls);
                for (unsigned t = 0; t < o.threads; t++)
                        pthread_create(&th[t], NULL, worker_main, &w[t]);
                for (unsigned t = 0; t < o.threads; t++) {
                        pthread_join(th[t], NULL);
                        all_errors += w[t].errors;
                }
                o.rounds = rounds;
                printf("warm-up: one round of each of %u agents in %.2f s, errors=%llu\n", o.agents,
                       (double)(now_us() - tw) / 1e6, all_errors);
        }

        for (unsigned ph = 0; closed && ph < o.nphases; ph++) {
                char when[32];

                atomic_store(&o.active, o.phases[ph]);
                atomic_store(&stop, false);
                total = ok = failed = errors = up = down = connects = 0;
                nall = 0;
                for (unsigned t = 0; t < o.threads; t++)
                        w[t].nlat = w[t].ok = w[t].failed = w[t].errors = w[t].up = w[t].down =
                                w[t].connects = 0;
                if (o.nphases > 1)
                        printf("phase %u: agents over %u of %u instances\n", o.phases[ph],
                               o.phases[ph], o.nurls);
                if (o.nphases > 1)
                        snprintf(when, sizeof(when), "before-%u", o.phases[ph]);
                else
                        snprintf(when, sizeof(when), "before");

                for (unsigned i = 0; i < o.nmetrics; i++)
                        m0[i] = metric_sum(&o, o.metrics[i]);
                run_hook(&o, when);
                p0 = tree_ticks(o.pid_tree);
                rss(o.pids[0], &r0, &h0);
                c0 = x0 = 0;
                for (unsigned i = 0; i < o.npids; i++) {
                        c0 += cpu_ticks(o.pids[i]);
                        x0 += ctx_switches(o.pids[i]);
                }
                getrusage(RUSAGE_SELF, &u0);
                t0 = now_us();
                for (unsigned t = 0; t < o.threads; t++)
                        pthread_create(&th[t], NULL, worker_main, &w[t]);
                for (;;) {
                        struct timespec ts = {0, 100 * 1000 * 1000};
                        bool all_done = true;

                        nanosleep(&ts, NULL);
                        for (unsigned i = 0; i < o.agents && all_done; i++)
                                all_done = agents[i].rounds >= o.rounds;
                        if (all_done || now_us() - t0 >= (uint64_t)o.seconds * 1000000)
                                break;
                }
                atomic_store(&stop, true);
                for (unsigned t = 0; t < o.threads; t++)
                        pthread_join(th[t], NULL);
                t1 = now_us();
                c1 = x1 = 0;
                for (unsigned i = 0; i < o.npids; i++) {
                        c1 += cpu_ticks(o.pids[i]);
                        x1 += ctx_switches(o.pids[i]);
                }
                getrusage(RUSAGE_SELF, &u1);
                rss(o.pids[0], &r1, &h1);
                p1 = tree_ticks(o.pid_tree);
                if (o.nphases > 1)
                        snprintf(when, sizeof(when), "after-%u", o.phases[ph]);
                else
                        snprintf(when, sizeof(when), "after");
                run_hook(&o, when);
                for (unsigned i = 0; i < o.nmetrics; i++)
                        m1[i] = metric_sum(&o, o.metrics[i]);
                for (unsigned t = 0; t < o.threads; t++)
                        total += w[t].nlat;
                all = malloc((total ? total : 1) * sizeof(*all));
                for (unsigned t = 0; t < o.threads; t++) {
                        memcpy(all + nall, w[t].lat, w[t].nlat * sizeof(*all));
                        nall += w[t].nlat;
                        ok += w[t].ok;
                        failed += w[t].failed;
                        errors += w[t].errors;
                        up += w[t].up;
                        down += w[t].down;
                        connects += w[t].connects;
                }
                qsort(all, nall, sizeof(*all), cmp_u64);
                printf("agents=%u threads=%u entries/round=%u key=%s seconds=%.2f\n", o.agents,
                       o.threads, o.entries, o.rsa ? "rsa2048" : "p256", (double)(t1 - t0) / 1e6);
                printf("attestations=%llu pass=%llu fail=%llu errors=%llu rate=%.0f/s\n",
                       (unsigned long long)nall, (unsigned long long)ok, (unsigned long long)failed,
                       (unsigned long long)errors, (double)nall * 1e6 / (double)(t1 - t0));
                capacity = (double)nall * 1e6 / (double)(t1 - t0);
                if (nall)
                        printf("round latency p50=%.2f ms p99=%.2f ms max=%.2f ms\n",
                               (double)all[nall / 2] / 1000, (double)all[nall * 99 / 100] / 1000,
                               (double)all[nall - 1] / 1000);
                {
                        double us = (double)(u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) * 1e6 +
                                    (double)(u1.ru_utime.tv_usec - u0.ru_utime.tv_usec) +
                                    (double)(u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) * 1e6 +
                                    (double)(u1.ru_stime.tv_usec - u0.ru_stime.tv_usec);

                        /* the client's own cost: when it nears a whole core, it is the bottleneck
                         */
                        printf("client cpu=%.2f s (%.0f %% of one core) ms/attestation=%.3f\n",
                               us / 1e6, 100.0 * us / (double)(t1 - t0),
                               nall ? us / 1000.0 / (double)nall : 0.0);
                }
                if (o.npids) {
                        double cpu = (double)(c1 - c0) / (double)sysconf(_SC_CLK_TCK);

                        if (o.npids > 1)
                                printf("attestd instances=%u (cpu summed; rss of the first)\n",
                                       o.npids);
                        printf("attestd rss before=%lu kB after=%lu kB peak=%lu kB\n", r0, r1, h1);
                        printf("attestd cpu=%.2f s (%.0f %% of one core) ms/attestation=%.3f\n",
                               cpu, 100.0 * cpu * 1e6 / (double)(t1 - t0),
                               nall ? cpu * 1000.0 / (double)nall : 0.0);
                        printf("attestd context switches=%llu per attestation=%.1f\n", x1 - x0,
                               nall ? (double)(x1 - x0) / (double)nall : 0.0);
                }
                printf("http bytes/attestation up=%.0f down=%.0f\n",
                       nall ? (double)up / (double)nall : 0.0,
                       nall ? (double)down / (double)nall : 0.0);
                printf("new connections=%llu per attestation=%.2f\n", (unsigned long long)connects,
                       nall ? (double)connects / (double)nall : 0.0);
                if (o.pid_tree) {
                        double cpu = (double)(p1 - p0) / (double)sysconf(_SC_CLK_TCK);

                        printf("postgres cpu=%.2f s (%.0f %% of one core) ms/attestation=%.3f\n",
                               cpu, 100.0 * cpu * 1e6 / (double)(t1 - t0),
                               nall ? cpu * 1000.0 / (double)nall : 0.0);
                }
                for (unsigned i = 0; i < o.nmetrics; i++) {
                        if (m0[i] < 0 || m1[i] < 0)
                                printf("metric %s: absent\n", o.metrics[i]);
                        else
                                printf("metric %s: +%.0f per attestation=%.2f\n", o.metrics[i],
                                       m1[i] - m0[i], nall ? (m1[i] - m0[i]) / (double)nall : 0.0);
                }
                fflush(stdout);
                free(all);
                all_errors += errors;
        }
        /* the open loop's pool: --inflight workers, each a connection to every instance */
        struct worker *pool = o.nrates ? calloc(o.inflight, sizeof(*pool)) : NULL;

        if (o.nrates && !pool)
                return 1;
        for (unsigned t = 0; t < (o.nrates ? o.inflight : 0); t++) {
                pool[t] = (struct worker){.o = &o, .agents = agents};
                pthread_cond_init(&pool[t].cv, NULL);
                for (unsigned u = 0; u < o.nurls; u++)
                        if (!(pool[t].curls[u] = curl_new(&o, &pool[t].resp)))
                                return 1;
                if (hasher_new(&pool[t].h) < 0)
                        return 1;
        }
        for (unsigned i = 0; i < o.nrates; i++) {
                double rate = o.rate_pct[i] ? o.rates[i] / 100 * capacity : o.rates[i];
                long long e;

                if (!(rate > 0)) {
                        fprintf(stderr, "bench: no capacity measured, no rate for %.0f %%\n",
                                o.rates[i]);
                        return 1;
                }
                printf("open part %u\n", i + 1);
                if ((e = open_part(&o, agents, pool, i, rate, o.rate_pct[i] ? capacity : 0)) < 0)
                        return 1;
                all_errors += (unsigned long long)e;
        }
        for (unsigned t = 0; t < (o.nrates ? o.inflight : 0); t++) {
                for (unsigned u = 0; u < o.nurls; u++)
                        curl_easy_cleanup(pool[t].curls[u]);
                curl_slist_free_all(pool[t].hdr[0]);
                curl_slist_free_all(pool[t].hdr[1]);
                hasher_free(pool[t].h);
                free(pool[t].lat);
                free(pool[t].lag);
                free(pool[t].resp.p);
                pthread_cond_destroy(&pool[t].cv);
        }
        free(pool);
        for (unsigned t = 0; t < o.threads; t++) {
                for (unsigned u = 0; u < o.nurls; u++)
                        curl_easy_cleanup(w[t].curls[u]);
                curl_slist_free_all(w[t].hdr[0]);
                curl_slist_free_all(w[t].hdr[1]);
                hasher_free(w[t].h);
                free(w[t].lat);
                free(w[t].resp.p);
        }
        if (o.ackf)
                fclose(o.ackf);
        if (o.errf)
                fclose(o.errf);
        for (unsigned i = 0; i < o.agents; i++) {
                EVP_PKEY_CTX_free(agents[i].sign);
                EVP_PKEY_free(agents[i].key);
                free(agents[i].pending);
        }
        free(agents);
        free(w);
        free(th);
        curl_global_cleanup();
        return all_errors ? 1 : 0;
}
