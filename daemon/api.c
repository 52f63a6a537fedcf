/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <openssl/rand.h>

#include "daemon/api.h"
#include "daemon/api-internal.h"
#include "evidence/credential.h"
#include "evidence/ekcert.h"
#include "util/hex.h"
#include "daemon/log.h"
#include "evidence/quote.h"
#include "util/tok.h"
#include "evidence/tpmkey.h"

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

static int query_check(struct attestd *d, const struct api_req *req, struct api_resp *r,
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

static int query_u64(struct attestd *d, const struct api_req *req, struct api_resp *r,
                     const char *key, uint64_t min, uint64_t max, uint64_t *v)
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
        uint64_t consumed = 0;
        char *text;
        size_t len;
        int e;

        (void)req;
        (void)id;
        if ((e = store_agent_counts(d->store, attestd_now_ms(), (int64_t)d->cfg.grace * 1000,
                                    (int64_t)d->cfg.interval * 1000, &c)) < 0) {
                api_store_error(d, r, e, "agent counts");
                return;
        }
        a = (struct metrics_agents){c.active, c.stale, c.failing, c.never};
        store_stats(d->store, &st.commits, &st.writes);
        if ((e = store_nonces_used_count(d->store, &consumed)) < 0) {
                api_store_error(d, r, e, "nonce count");
                return;
        }
        if (metrics_render(&d->metrics, &a, &st, consumed, &text, &len) < 0) {
                api_nomem(d, r);
                return;
        }
        api_resp_text(r, 200, "text/plain; version=0.0.4", text, len);
}

/* ---- agents ---- */

bool api_agent_stale(const struct attestd *d, const struct store_agent *a, int64_t now)
{
        /* never attested: due one interval after enrolment */
        int64_t due = a->next_due ? a->next_due : a->created + (int64_t)d->cfg.interval * 1000;

        return now > due + (int64_t)d->cfg.grace * 1000;
}

static json_t *agent_json(const struct attestd *d, const struct store_agent *a, int64_t now)
{
        bool stale = api_agent_stale(d, a, now);

        return json_pack("{s:s, s:s, s:b, s:s?, s:o, s:o, s:o, s:s?, s:s?, s:I}", "id", a->id,
                         "state", stale ? "stale" : a->state, "stale", stale, "policy", a->policy,
                         "created", api_time_json(a->created), "last_seen",
                         api_time_json(a->last_seen), "next_due", api_time_json(a->next_due),
                         "last_status", a->last_status, "last_policy", a->last_policy, "ima_offset",
                         (json_int_t)a->ima_offset);
}

struct agents_list {
        const struct attestd *d;
        json_t *arr;
        int64_t now;
};

static int agents_list_one(const struct store_agent *a, void *arg)
{
        struct agents_list *l = arg;
        json_t *o = agent_json(l->d, a, l->now);

        if (!o || json_array_append_new(l->arr, o) < 0)
                return -ENOMEM;
        return 0;
}

static void h_agents_list(struct attestd *d, const struct api_req *req, struct api_resp *r,
                          const char *id)
{
        struct agents_list l = {d, json_array(), attestd_now_ms()};
        int e;

        (void)req;
        (void)id;
        if (!l.arr) {
                api_nomem(d, r);
                return;
        }
        if ((e = store_agent_list(d->store, agents_list_one, &l)) < 0) {
                json_decref(l.arr);
                api_store_error(d, r, e, "agent list");
                return;
        }
        if (api_json(r, 200, json_pack("{s:o}", "agents", l.arr)) < 0)
                api_nomem(d, r);
}

/*
 * The identity of an EK: SHA-256 of its public key as DER SubjectPublicKeyInfo, so two encodings
 * of one key (other attributes, policy, unique padding) are the same EK.
 */
static int ek_identity(const uint8_t *ekpub, size_t len, uint8_t out[STORE_EK_ID_LEN])
{
        _cleanup_(EVP_PKEY_freep) EVP_PKEY *pk = NULL;
        TPM2B_PUBLIC pub;
        unsigned char *der = NULL;
        int n;

        if (tpmkey_unmarshal(ekpub, len, &pub, NULL) < 0 ||
            tpmkey_pkey(&pub.publicArea, &pk, NULL) < 0)
                return -EBADMSG;
        n = i2d_PUBKEY(pk, &der);
        if (n <= 0)
                return -EIO;
        SHA256(der, (size_t)n, out);
        OPENSSL_free(der);
        return 0;
}

/*
 * POST /v1/agents (role enroll): {"ak_public": b64 TPM2B_PUBLIC, "ek_public": b64 TPM2B_PUBLIC,
 * "ek_cert": b64 DER}. The EK certificate must chain to --ek-ca and certify ek_public; the AK
 * must be a restricted signing key. The answer carries a credential (TPM2_MakeCredential for the
 * EK and the AK's name) that only ActivateCredential in that TPM opens; the agent stays
 * "pending" until POST /v1/agents/{id}/activate returns it. --insecure-trust-ak skips all of
 * that (labs) and is warned about on every use.
 */
static void h_agent_enroll(struct attestd *d, const struct api_req *req, struct api_resp *r,
                           const char *id)
{
        static const char *const fields[] = {"ak_public", "ek_cert", "ek_public"};
        json_auto_t *o = NULL;
        _cleanup_free_ uint8_t *ak = NULL, *ek = NULL, *ekpub = NULL;
        _cleanup_(quote_ak_freep) struct quote_ak *qak = NULL;
        uint8_t name[QUOTE_NAME_MAX], h[SHA256_DIGEST_LENGTH], secret[32];
        char idhex[33], namehex[2 * QUOTE_NAME_MAX + 1];
        size_t ak_len, ek_len = 0, ekpub_len = 0, name_len;
        struct attest_err err = {0};
        struct store_agent a = {0};
        struct credential cred;
        bool trust = d->cfg.insecure_trust_ak;
        int e;

        (void)id;
        if (api_parse_body(d, req, r, false, &o) < 0 ||
            api_check_fields(d, r, o, "$", fields, ARRAY_SIZE(fields)) < 0 ||
            api_b64_field(d, r, o, "ak_public", true, QUOTE_AK_MAX, &ak, &ak_len) < 0 ||
            api_b64_field(d, r, o, "ek_cert", false, EKCERT_MAX, &ek, &ek_len) < 0 ||
            api_b64_field(d, r, o, "ek_public", !trust, QUOTE_AK_MAX, &ekpub, &ekpub_len) < 0)
                return;
        if ((e = quote_ak_parse(ak, ak_len, &qak, &err)) < 0) {
                api_error(d, r, 400, err.code ? err.code : AE_QUOTE_AK_MALFORMED, "$.ak_public: %s",
                          err.msg);
                return;
        }
        if (ek) {
                const unsigned char *p = ek;
                X509 *x = d2i_X509(NULL, &p, (long)ek_len);

                if (!x || p != ek + ek_len) {
                        X509_free(x);
                        api_error(d, r, 400, AE_BAD_FIELD,
                                  "$.ek_cert: not a DER X.509 certificate");
                        return;
                }
                X509_free(x);
        }
        if (!trust) {
                if (!d->cfg.ek_ca[0]) {
                        api_error(d, r, 403, AE_EK_CA_UNCONFIGURED,
                                  "this verifier has no EK CA (--ek-ca): it cannot enrol agents");
                        return;
                }
                if (!ek) {
                        api_error(d, r, 403, AE_EK_CERT_REQUIRED,
                                  "$.ek_cert: an EK certificate is required to enrol");
                        return;
                }
                if ((e = ekcert_verify(ek, ek_len, d->cfg.ek_ca, ekpub, ekpub_len, &err)) < 0) {
                        api_error(d, r,
                                  e == -EINVAL         ? 500
                                  : e == -EKEYREJECTED ? 403
                                                       : 400,
                                  err.code ? err.code : AE_EK_CERT_UNTRUSTED, "$.ek_cert: %s",
                                  err.msg);
                        return;
                }
        }
        if (quote_ak_name(qak, name, sizeof(name), &name_len) < 0) {
                api_error(d, r, 500, AE_INTERNAL, "AK name");
                return;
        }
        if (ekpub) {
                if (ek_identity(ekpub, ekpub_len, a.ek_id) < 0) {
                        api_error(d, r, 400, AE_CRED_BAD_EK,
                                  "$.ek_public: not an RSA or ECC TPM2B_PUBLIC");
                        return;
                }
                a.has_ek_id = true;
                if ((e = store_ek_refused(d->store, a.ek_id, NULL, 0)) == -EPERM) {
                        api_error(d, r, 403, AE_EK_DECOMMISSIONED,
                                  "this TPM's EK was decommissioned by an administrator");
                        return;
                }
                if (e < 0) {
                        api_store_error(d, r, e, "EK lookup");
                        return;
                }
        }
        /* the id follows from the AK: enrolling one key twice is a conflict */
        SHA256(name, name_len, h);
        hex_encode(h, 16, idhex);
        hex_encode(name, name_len, namehex);
        snprintf(a.id, sizeof(a.id), "%s", idhex);
        a.ak_public = ak;
        a.ak_public_len = ak_len;
        a.ak_name = name;
        a.ak_name_len = name_len;
        a.ek_cert = ek;
        a.ek_cert_len = ek_len;
        a.created = attestd_now_ms();
        if (trust) {
                log_warning("agent %s enrolled WITHOUT EK proof (--insecure-trust-ak)", idhex);
                snprintf(a.state, sizeof(a.state), "active");
                e = store_agent_add(d->store, &a);
        } else {
                if (RAND_bytes(secret, sizeof(secret)) != 1) {
                        api_error(d, r, 500, AE_INTERNAL, "no randomness");
                        return;
                }
                e = cred_make(ekpub, ekpub_len, name, name_len, secret, sizeof(secret), &cred,
                              &err);
                SHA256(secret, sizeof(secret), h);
                OPENSSL_cleanse(secret, sizeof(secret));
                if (e < 0) {
                        api_error(d, r, e == -EIO ? 500 : 400, err.code ? err.code : AE_CRED_BAD_EK,
                                  "$.ek_public: %s", err.msg);
                        return;
                }
                snprintf(a.state, sizeof(a.state), "pending");
                e = store_agent_add_pending(d->store, &a, ekpub, ekpub_len, h,
                                            a.created + (int64_t)d->cfg.credential_ttl * 1000);
        }
        if (e == -EEXIST && trust) {
                _cleanup_(store_agent_freep) struct store_agent *old = NULL;

                if (store_agent_get(d->store, idhex, &old) == 0 &&
                    !strcmp(old->state, "decommissioned"))
                        e = -EPERM;
        }
        if (e == -EPERM) {
                api_error(d, r, 403, AE_EK_DECOMMISSIONED,
                          "this agent or its TPM's EK was decommissioned by an administrator");
                return;
        }
        if (e == -EEXIST) {
                api_error(d, r, 409, AE_AGENT_EXISTS, "an agent with this AK is enrolled as %s",
                          idhex);
                return;
        }
        if (e == -EBUSY) {
                api_error(d, r, 429, AE_ENROLMENT_BUSY,
                          "agent %s has %d unexpired credentials: activate one or wait", idhex,
                          STORE_PENDING_MAX);
                r->retry_after = (unsigned)d->cfg.credential_ttl;
                return;
        }
        if (e < 0) {
                api_store_error(d, r, e, "agent insert");
                return;
        }
        log_info("agent %s enrolled (AK %s), %s", idhex,
                 quote_ak_type(qak) == 0x0023 ? "ECC" : "RSA",
                 trust ? "active" : "pending credential activation");
        json_t *resp =
                json_pack("{s:s, s:s, s:s}", "id", idhex, "state", a.state, "ak_name", namehex);
        if (resp && !trust) {
                char blob[CRED_BLOB_MAX * 2], sec[CRED_ENC_SECRET_MAX * 2];

                b64_encode(cred.blob, cred.blob_len, blob);
                b64_encode(cred.secret, cred.secret_len, sec);
                if (json_object_set_new(resp, "credential",
                                        json_pack("{s:s, s:s}", "blob", blob, "secret", sec)) < 0) {
                        json_decref(resp);
                        resp = NULL;
                }
        }
        if (api_json(r, 201, resp) < 0)
                api_nomem(d, r);
}

/* POST /v1/agents/{id}/activate: {"proof": b64 of the credential ActivateCredential returned}. */
static void h_agent_activate(struct attestd *d, const struct api_req *req, struct api_resp *r,
                             const char *id)
{
        static const char *const fields[] = {"proof"};
        json_auto_t *o = NULL;
        _cleanup_free_ uint8_t *proof = NULL;
        uint8_t h[SHA256_DIGEST_LENGTH];
        char replaced[STORE_ID_MAX + 1] = "";
        uint64_t now = (uint64_t)attestd_now_ms(), suppressed = 0;
        unsigned retry = 0;
        size_t len;
        int e;

        /* a proof guesser (or a broken agent) gets a few tries a minute, then 429 */
        if (ratelimit_blocked(d->activation_rl, id, now, &retry)) {
                api_error(d, r, 429, AE_ACTIVATION_RATE_LIMITED,
                          "too many failed activation proofs for agent %s: retry in %u s", id,
                          retry);
                r->retry_after = retry;
                return;
        }
        if (api_parse_body(d, req, r, false, &o) < 0 ||
            api_check_fields(d, r, o, "$", fields, ARRAY_SIZE(fields)) < 0 ||
            api_b64_field(d, r, o, "proof", true, CRED_SECRET_MAX, &proof, &len) < 0)
                return;
        SHA256(proof, len, h);
        OPENSSL_cleanse(proof, len);
        e = store_agent_activate(d->store, id, h, (int64_t)now, replaced);
        switch (e) {
        case 0:
                if (replaced[0]) {
                        akcache_drop(d->aks, replaced);
                        log_notice("agent %s took over the EK of agent %s (proved by activation): "
                                   "%s forgotten",
                                   id, replaced, replaced);
                }
                log_info("agent %s activated: its AK is in the TPM of its EK", id);
                if (api_json(r, 200, json_pack("{s:s, s:s}", "id", id, "state", "active")) < 0)
                        api_nomem(d, r);
                return;
        case -ENOENT:
                api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", id);
                return;
        case -EALREADY:
                api_error(d, r, 409, AE_AGENT_NOT_PENDING, "agent %s has no pending enrolment", id);
                return;
        case -ETIME:
                api_error(d, r, 403, AE_CREDENTIAL_EXPIRED,
                          "the enrolment credential expired: enrol again");
                return;
        case -EPERM:
                api_error(d, r, 403, AE_AGENT_DECOMMISSIONED,
                          "agent %s was decommissioned by an administrator", id);
                return;
        case -EACCES:
                api_error(d, r, 403, AE_EK_DECOMMISSIONED,
                          "this TPM's EK was decommissioned by an administrator");
                return;
        case -EKEYREJECTED:
                /* one line per agent per minute, with the count of the ones left out */
                if (ratelimit_fail(d->activation_rl, id, now, &suppressed)) {
                        if (suppressed)
                                log_warning("agent %s: wrong activation proof (%llu more failed "
                                            "or refused attempts not logged)",
                                            id, (unsigned long long)suppressed);
                        else
                                log_warning("agent %s: wrong activation proof", id);
                }
                api_error(d, r, 403, AE_ACTIVATION_FAILED,
                          "$.proof: not the credential wrapped for this agent's EK and AK");
                return;
        default:
                api_store_error(d, r, e, "activation");
        }
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

struct last_result {
        json_t *verdict;
};

static int last_result_one(int64_t rid, int64_t time, const char *status, const char *policy,
                           const char *verdict, void *arg)
{
        struct last_result *l = arg;

        (void)rid;
        (void)time;
        (void)status;
        (void)policy;
        l->verdict = json_loads(verdict, 0, NULL);
        return 0;
}

static void h_agent_get(struct attestd *d, const struct api_req *req, struct api_resp *r,
                        const char *id)
{
        _cleanup_(store_agent_freep) struct store_agent *a = NULL;
        struct last_result l = {NULL};
        char namehex[2 * QUOTE_NAME_MAX + 1] = "";
        json_t *o;
        int e;

        (void)req;
        if (api_agent_load(d, r, id, &a) < 0)
                return;
        if (a->last_result &&
            (e = store_results_list(d->store, id, 1, 0, last_result_one, &l)) < 0 && e != -ENOENT) {
                api_store_error(d, r, e, "result lookup");
                return;
        }
        if (a->ak_name_len <= QUOTE_NAME_MAX)
                hex_encode(a->ak_name, a->ak_name_len, namehex);
        o = agent_json(d, a, attestd_now_ms());
        if (!o || json_object_set_new(o, "ak_name", json_string(namehex)) < 0 ||
            json_object_set_new(o, "last_verdict", l.verdict ? l.verdict : json_null()) < 0) {
                json_decref(o);
                api_nomem(d, r);
                return;
        }
        if (api_json(r, 200, o) < 0)
                api_nomem(d, r);
}

static void h_agent_delete(struct attestd *d, const struct api_req *req, struct api_resp *r,
                           const char *id)
{
        int e = store_agent_delete(d->store, id);

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
static void h_agent_decommission(struct attestd *d, const struct api_req *req, struct api_resp *r,
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
        if (api_json(r, 200, json_pack("{s:s, s:s}", "id", id, "state", "decommissioned")) < 0)
                api_nomem(d, r);
}

/* POST /v1/agents/{id}/readmit (admin): lifts a decommission (also of a deleted agent's EK). */
static void h_agent_readmit(struct attestd *d, const struct api_req *req, struct api_resp *r,
                            const char *id)
{
        _cleanup_(store_agent_freep) struct store_agent *a = NULL;
        json_auto_t *o = NULL;
        int e;

        if (api_parse_body(d, req, r, true, &o) < 0 || api_check_fields(d, r, o, "$", NULL, 0) < 0)
                return;
        e = store_agent_readmit(d->store, id);
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
                     json_pack("{s:s, s:s}", "id", id, "state", e == 0 ? a->state : "forgotten")) <
            0)
                api_nomem(d, r);
}

static void h_agent_policy(struct attestd *d, const struct api_req *req, struct api_resp *r,
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
        json_t *arr;
        int64_t last;
};

static int results_one(int64_t rid, int64_t time, const char *status, const char *policy,
                       const char *verdict, void *arg)
{
        struct results *l = arg;
        json_t *v = json_loads(verdict, 0, NULL);
        json_t *o = json_pack("{s:I, s:o, s:s, s:s?, s:o}", "id", (json_int_t)rid, "time",
                              api_time_json(time), "status", status ? status : "", "policy", policy,
                              "verdict", v ? v : json_null());

        l->last = rid;
        if (!o || json_array_append_new(l->arr, o) < 0)
                return -ENOMEM;
        return 0;
}

static void h_agent_results(struct attestd *d, const struct api_req *req, struct api_resp *r,
                            const char *id)
{
        static const char *const q[] = {"limit", "before"};
        uint64_t limit = 20, before = 0;
        struct results l = {json_array(), 0};
        int e;

        if (!l.arr) {
                api_nomem(d, r);
                return;
        }
        if (query_check(d, req, r, q, ARRAY_SIZE(q)) < 0 ||
            query_u64(d, req, r, "limit", 1, 1000, &limit) < 0 ||
            query_u64(d, req, r, "before", 1, INT64_MAX, &before) < 0) {
                json_decref(l.arr);
                return;
        }
        e = store_results_list(d->store, id, limit, (int64_t)before, results_one, &l);
        if (e < 0) {
                json_decref(l.arr);
                if (e == -ENOENT)
                        api_error(d, r, 404, AE_AGENT_NOT_FOUND, "no agent %s", id);
                else
                        api_store_error(d, r, e, "results");
                return;
        }
        if (api_json(r, 200,
                     json_pack("{s:s, s:o, s:o}", "id", id, "results", l.arr, "next_before",
                               json_array_size(l.arr) == limit ? json_integer(l.last)
                                                               : json_null())) < 0)
                api_nomem(d, r);
}

/* ---- policies ---- */

static int policy_list_one(const char *name, int64_t version, int64_t created, void *arg)
{
        json_t *o = json_pack("{s:s, s:I, s:o}", "name", name, "version", (json_int_t)version,
                              "created", api_time_json(created));

        if (!o || json_array_append_new(arg, o) < 0)
                return -ENOMEM;
        return 0;
}

static void h_policies_list(struct attestd *d, const struct api_req *req, struct api_resp *r,
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

static void h_policy_put(struct attestd *d, const struct api_req *req, struct api_resp *r,
                         const char *name)
{
        json_auto_t *o = NULL;
        _cleanup_free_ char *canon = NULL;
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
        canon = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        if (!canon) {
                api_nomem(d, r);
                return;
        }
        if ((e = api_policy_validate(canon, strlen(canon), &err)) < 0) {
                api_error(d, r, 400, err.code ? err.code : AE_POLICY_INVALID, "%s", err.msg);
                return;
        }
        if ((e = store_policy_put(d->store, name, canon, attestd_now_ms(), &version)) < 0) {
                api_store_error(d, r, e, "policy insert");
                return;
        }
        log_info("policy %s version %lld stored", name, (long long)version);
        if (api_json(r, 201,
                     json_pack("{s:s, s:I}", "name", name, "version", (json_int_t)version)) < 0)
                api_nomem(d, r);
}

static void h_policy_get(struct attestd *d, const struct api_req *req, struct api_resp *r,
                         const char *name)
{
        static const char *const q[] = {"version"};
        _cleanup_free_ char *body = NULL;
        uint64_t want = 0;
        int64_t version, created;
        json_t *p;
        int e;

        if (query_check(d, req, r, q, ARRAY_SIZE(q)) < 0 ||
            query_u64(d, req, r, "version", 1, INT64_MAX, &want) < 0)
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

static void h_policy_delete(struct attestd *d, const struct api_req *req, struct api_resp *r,
                            const char *name)
{
        int e = store_policy_delete(d->store, name);

        (void)req;
        if (e == -ENOENT) {
                api_error(d, r, 404, AE_POLICY_NOT_FOUND, "no policy %s", name);
                return;
        }
        if (e == -EBUSY) {
                api_error(d, r, 409, AE_POLICY_IN_USE, "policy %s is bound to an agent", name);
                return;
        }
        if (e < 0) {
                api_store_error(d, r, e, "policy delete");
                return;
        }
        log_info("policy %s deleted", name);
        api_resp_text(r, 204, NULL, NULL, 0);
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
        {"/healthz", "GET", {{"GET", AUTH_NONE, h_healthz, false}}},
        {"/metrics", "GET", {{"GET", AUTH_NONE, h_metrics, false}}},
        {"/v1/agents",
         "GET, POST",
         {{"GET", AUTH_READER, h_agents_list, false},
          {"POST", AUTH_ENROLL, h_agent_enroll, false}}},
        {"/v1/agents/*",
         "GET, DELETE",
         {{"GET", AUTH_READER, h_agent_get, false}, {"DELETE", AUTH_ADMIN, h_agent_delete, false}}},
        {"/v1/agents/*/activate", "POST", {{"POST", AUTH_NONE, h_agent_activate, false}}},
        {"/v1/agents/*/challenges", "POST", {{"POST", AUTH_NONE, api_challenge, false}}},
        {"/v1/agents/*/evidence", "POST", {{"POST", AUTH_NONE, api_evidence, true}}},
        {"/v1/agents/*/results", "GET", {{"GET", AUTH_READER, h_agent_results, false}}},
        {"/v1/agents/*/policy", "PUT", {{"PUT", AUTH_ADMIN, h_agent_policy, false}}},
        {"/v1/agents/*/decommission", "POST", {{"POST", AUTH_ADMIN, h_agent_decommission, false}}},
        {"/v1/agents/*/readmit", "POST", {{"POST", AUTH_ADMIN, h_agent_readmit, false}}},
        {"/v1/policies", "GET", {{"GET", AUTH_READER, h_policies_list, false}}},
        {"/v1/policies/*",
         "GET, PUT, DELETE",
         {{"GET", AUTH_READER, h_policy_get, false},
          {"PUT", AUTH_ADMIN, h_policy_put, false},
          {"DELETE", AUTH_ADMIN, h_policy_delete, false}}},
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

size_t api_body_limit(const struct attestd *d, const char *method, const char *path)
{
        char id[API_ID_MAX + 1];
        bool bad;
        const struct route *rt = route_find(path, id, sizeof(id), &bad);
        const struct method *m = rt ? method_find(rt, method) : NULL;

        return m && m->evidence ? d->cfg.max_evidence : d->cfg.max_body;
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
        if (m->fn == api_evidence || m->fn == api_challenge)
                ret->gate = API_GATE_ACTIVE;
        else if (m->fn == h_agent_activate)
                ret->gate = API_GATE_EXISTS;
}

void api_handle(struct attestd *d, const struct api_req *req, struct api_resp *r)
{
        char id[API_ID_MAX + 1] = "";
        const struct route *rt;
        const struct method *m;
        bool bad_id;

        memset(r, 0, sizeof(*r));
        metrics_request(&d->metrics);
        rt = route_find(req->path, id, sizeof(id), &bad_id);
        if (!rt) {
                api_error(d, r, 404, AE_NOT_FOUND, "no such resource");
                return;
        }
        m = method_find(rt, req->method);
        if (!m) {
                api_error(d, r, 405, AE_METHOD_NOT_ALLOWED, "%s is not allowed here; allowed: %s",
                          strcmp(req->method, "OPTIONS") ? "this method" : "OPTIONS", rt->allow);
                r->allow = rt->allow;
                return;
        }
        if (m->role != AUTH_NONE) {
                enum auth_role have = bearer_role(d, req->authorization);

                if (have == AUTH_NONE) {
                        api_error(d, r, 401, AE_UNAUTHORIZED,
                                  req->authorization ? "unknown bearer token"
                                                     : "a bearer token is required");
                        r->www_authenticate = true;
                        return;
                }
                if (!auth_allows(have, m->role)) {
                        api_error(d, r, 403, AE_FORBIDDEN, "this token's role may not do this");
                        return;
                }
        }
        if (bad_id) {
                api_error(d, r, 400, AE_BAD_ID,
                          "ids are 1-64 of [A-Za-z0-9_.-], not starting with . or -");
                return;
        }
        if (req->body_len > (m->evidence ? d->cfg.max_evidence : d->cfg.max_body)) {
                api_error(
                        d, r, 413, AE_BODY_TOO_LARGE, "body larger than %llu bytes",
                        (unsigned long long)(m->evidence ? d->cfg.max_evidence : d->cfg.max_body));
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
        if (!strcmp(req->method, "GET") && m->fn != h_agent_results && m->fn != h_policy_get &&
            (req->nquery || req->query_overflow)) {
                api_error(d, r, 400, AE_BAD_QUERY, "this resource takes no query parameters");
                return;
        }
        m->fn(d, req, r, id);
}
