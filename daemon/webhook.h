/* SPDX-License-Identifier: MIT */
/*
 * Webhooks (docs/webhooks.md): the outbox's duties in the daemon's background.
 *   - one delivery thread per receiver (--webhook URL): events in id order, one at a time,
 *     each POSTed as JSON signed with HMAC-SHA256 (--webhook-secret-file), retried with capped,
 *     jittered exponential back-off until the receiver answers 2xx; its cursor in the database
 *     moves only then, so a restart resumes where delivery stopped (a receiver may see an event
 *     twice, with the same id, never lose one);
 *   - one duty thread: pruning of delivered events after --webhook-retention, a log line when
 *     the outbox cap dropped events. (agent.stale events come from the stale scan of the main
 *     loop, store_agent_stale_scan(), in the transaction of its mark.)
 * None of it runs on the HTTP serving threads, and each receiver has its own thread, so a
 * hostile receiver (hangs, slow or huge responses, redirects) costs at most its own attempt's
 * --webhook-timeout.
 */
#ifndef ATTESTD_WEBHOOK_H
#define ATTESTD_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/config.h"
#include "daemon/store/store.h"
#include "util/err.h"

#define WEBHOOK_SECRET_MIN 16 /* bytes of the key, without a trailing newline */
#define WEBHOOK_SECRET_MAX 1024
#define WEBHOOK_RESPONSE_MAX 65536 /* bytes of a receiver's answer read at most, then dropped */
#define WEBHOOK_BODY_MAX 65536     /* an event's JSON */
#define WEBHOOK_SIG_HEX (2 * 32 + 1)

struct webhook;

/*
 * Check the webhook settings of cfg (URLs, CA file, secret file: FILE_SECRET, its length), set up
 * the outbox (cap, receivers) and start the threads. cfg and store must outlive the result.
 * -EINVAL / -EPERM / -ENOENT with err saying which setting and why (never the secret).
 */
int webhook_start(const struct config *cfg, struct store *store, struct webhook **ret,
                  struct attest_err *err) _wur_;
/* Stop the threads (an attempt in flight is aborted) and wipe the secret. NULL is fine. */
struct webhook *webhook_stop(struct webhook *w);

/*
 * Append the webhook metrics (Prometheus text) to the malloc'ed *text of *len bytes; the outbox's
 * series (pending, events, dropped) only when read_outbox is set and the database answered for
 * them (the caller clears it when the database just could not be read: no second wait for the
 * pool). -ENOMEM only.
 */
int webhook_metrics_append(struct webhook *w, bool read_outbox, char **text, size_t *len) _wur_;

/* The event's JSON as sent (docs/webhooks.md), malloc'ed. */
int webhook_event_body(const struct store_event *ev, char **ret, size_t *ret_len) _wur_;
/* "sha256=" and the hex HMAC-SHA256 of body under key. */
int webhook_sign(const uint8_t *key, size_t key_len, const char *body, size_t len,
                 char ret[7 + WEBHOOK_SIG_HEX]) _wur_;

#endif
