/* SPDX-License-Identifier: MIT */
/*
 * A webhook event's JSON body and its HMAC-SHA256 signature (daemon/webhook.h); the delivery
 * (outbox, receivers' threads, back-off) is daemon/webhook.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "daemon/webhook.h"
#include "util/esc.h"
#include "util/hex.h"
#include "util/macro.h"

static void time_text(int64_t ms, char out[32])
{
        struct tm tm;
        time_t t = (time_t)(ms / 1000);

        if (!gmtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm)) {
                snprintf(out, 32, "1970-01-01T00:00:00.000Z");
                return;
        }
        snprintf(out + 19, 32 - 19, ".%03dZ", (int)(ms % 1000));
}

/*
 * Whether the stored failing-claims text has the shape our renderer writes (a JSON array of
 * strings, printable): spliced as is then, never parsed; anything else is sent as [].
 */
static bool claims_spliceable(const char *s)
{
        size_t n = s ? strlen(s) : 0;

        return n >= 2 && n <= WEBHOOK_BODY_MAX && s[0] == '[' && s[n - 1] == ']' &&
               (n == 2 || (s[1] == '"' && s[n - 2] == '"')) && esc_is_text(s, n);
}

int webhook_event_body(const struct store_event *ev, char **ret, size_t *ret_len)
{
        json_auto_t *o = NULL, *reason = NULL;
        _cleanup_free_ char *head = NULL, *rtext = NULL;
        const char *claims = claims_spliceable(ev->claims) ? ev->claims : "[]";
        size_t hn, n;
        char t[32];
        char *text;

        time_text(ev->time, t);
        o = json_pack("{s:I, s:s, s:s, s:s}", "id", (json_int_t)ev->id, "type", ev->type, "time", t,
                      "agent", ev->agent);
        if (!o ||
            (ev->hostname && json_object_set_new(o, "hostname", json_string(ev->hostname)) < 0) ||
            json_object_set_new(o, "status", ev->status ? json_string(ev->status) : json_null()) <
                    0 ||
            json_object_set_new(o, "previous",
                                ev->previous ? json_string(ev->previous) : json_null()) < 0)
                return -ENOMEM;
        if (ev->reason && (!(reason = json_string(ev->reason)) ||
                           !(rtext = json_dumps(reason, JSON_COMPACT | JSON_ENCODE_ANY))))
                return -ENOMEM;
        /* {...head fields, "failing_claims":CLAIMS[, "reason":R]}: the claims spliced as stored */
        head = json_dumps(o, JSON_COMPACT);
        if (!head)
                return -ENOMEM;
        hn = strlen(head) - 1; /* without its '}' */
        n = hn + strlen(",\"failing_claims\":") + strlen(claims) +
            (rtext ? strlen(",\"reason\":") + strlen(rtext) : 0) + 1;
        if (n > WEBHOOK_BODY_MAX)
                return -E2BIG;
        text = malloc(n + 1);
        if (!text)
                return -ENOMEM;
        snprintf(text, n + 1, "%.*s,\"failing_claims\":%s%s%s}", (int)hn, head, claims,
                 rtext ? ",\"reason\":" : "", rtext ? rtext : "");
        *ret_len = n;
        *ret = text;
        return 0;
}

int webhook_sign(const uint8_t *key, size_t key_len, const char *body, size_t len,
                 char ret[7 + WEBHOOK_SIG_HEX])
{
        uint8_t mac[32];
        size_t mac_len = 0;

        if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key, key_len, (const uint8_t *)body, len,
                       mac, sizeof(mac), &mac_len) ||
            mac_len != sizeof(mac))
                return -EIO;
        memcpy(ret, "sha256=", 7);
        hex_encode(mac, sizeof(mac), ret + 7);
        return 0;
}
