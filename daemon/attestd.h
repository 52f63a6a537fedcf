/* SPDX-License-Identifier: MIT */
/*
 * The daemon's context: everything a request handler needs, handed to libmicrohttpd as the
 * closure pointer (STYLE "State": no mutable globals).
 */
#ifndef ATTESTD_H
#define ATTESTD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "daemon/akcache.h"
#include "daemon/auth.h"
#include "daemon/config.h"
#include "daemon/metrics.h"
#include "daemon/nonce.h"
#include "daemon/policy-cache.h"
#include "evidence/pcrsel.h"
#include "daemon/ratelimit.h"
#include "daemon/rowstash.h"
#include "daemon/store/store.h"

struct ear_signer;
struct webhook; /* daemon/webhook.h */

struct attestd {
        struct config cfg;
        struct store *store;
        struct nonce_store *nonces;
        struct ratelimit *activation_rl; /* failed activation proofs per agent */
        struct ratelimit *enrol_log_rl;  /* log lines of refused enrolments (api-enrol.c) */
        struct akcache *aks;
        struct rowstash *rows;         /* challenge rows for their evidence; NULL: none kept */
        struct policy_cache *policies; /* parsed policies by name@version */
        struct metrics metrics;
        struct pcr_sel pcr_sel; /* what challenges ask agents to quote */
        char pcr_sel_text[PCR_SEL_TEXT_MAX];
        pthread_rwlock_t tokens_lock; /* SIGHUP swaps tokens */
        struct auth_tokens *tokens;
        struct ear_signer *ear; /* --ear-key; NULL: EAR endpoints answer 503 */
        atomic_bool draining;
        atomic_uint in_flight;
        struct webhook *webhooks; /* delivery and stale scan threads (docs/webhooks.md) */
};

/* Wall clock in ms since the epoch. */
int64_t attestd_now_ms(void);

#endif
