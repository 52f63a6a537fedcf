/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "agent/failover.h"
#include "util/log.h"

void failover_init(struct failover *f, unsigned n, uint32_t retry_max_ms, uint32_t failback_ms)
{
        *f = (struct failover){
                .n = n < 1                     ? 1
                     : n > AGENT_VERIFIERS_MAX ? AGENT_VERIFIERS_MAX
                                               : n,
                .failback_ms = failback_ms,
                .bo = {.base_ms = 1000, .max_ms = retry_max_ms},
        };
}

enum failover_move failover_begin(struct failover *f, uint64_t now_ms)
{
        if (f->cur == 0 || !f->good || now_ms - f->good_since_ms < f->failback_ms ||
            f->not_before_ms[0] > now_ms)
                return FAILOVER_STAY;
        f->cur = 0;
        f->good = false;
        f->failed = 0;
        return FAILOVER_BACK;
}

void failover_ok(struct failover *f, uint64_t now_ms)
{
        f->failed = 0;
        f->not_before_ms[f->cur] = 0;
        backoff_reset(&f->bo);
        if (!f->good) {
                f->good = true;
                f->good_since_ms = now_ms;
        }
}

static uint32_t wait_for(const struct failover *f, unsigned i, uint64_t now_ms)
{
        uint64_t nb = f->not_before_ms[i];

        return nb > now_ms ? (uint32_t)(nb - now_ms) : 0;
}

static void note_retry_after(struct failover *f, uint64_t now_ms, uint32_t retry_after_s)
{
        if (retry_after_s > FAILOVER_RETRY_AFTER_MAX)
                retry_after_s = FAILOVER_RETRY_AFTER_MAX;
        f->not_before_ms[f->cur] = retry_after_s ? now_ms + (uint64_t)retry_after_s * 1000 : 0;
}

enum failover_move failover_down(struct failover *f, uint64_t now_ms, uint32_t retry_after_s,
                                 uint32_t *ret_delay_ms)
{
        uint32_t d, w;

        note_retry_after(f, now_ms, retry_after_s);
        f->failed |= 1u << f->cur;
        f->good = false;
        for (unsigned k = 1; k < f->n; k++) {
                unsigned i = (f->cur + k) % f->n;

                if (!(f->failed & (1u << i))) {
                        f->cur = i;
                        *ret_delay_ms = wait_for(f, i, now_ms);
                        return FAILOVER_NEXT;
                }
        }
        /* all of them since the last success: back off, then start a new pass at the next one */
        f->failed = 0;
        f->cur = (f->cur + 1) % f->n;
        d = backoff_next(&f->bo);
        w = wait_for(f, f->cur, now_ms);
        *ret_delay_ms = w > d ? w : d;
        return FAILOVER_ALL_DOWN;
}

uint32_t failover_refused(struct failover *f, uint64_t now_ms, uint32_t retry_after_s)
{
        uint32_t d = backoff_next(&f->bo), w;

        note_retry_after(f, now_ms, retry_after_s);
        w = wait_for(f, f->cur, now_ms);
        return w > d ? w : d;
}

const char *failover_url_display(const char *url, char *out, size_t max)
{
        const char *auth = strstr(url, "://"), *end, *at;
        char tmp[AGENT_CONFIG_STR_MAX];
        size_t n = 0, len;

        auth = auth ? auth + 3 : url;
        end = auth + strcspn(auth, "/?#");
        at = memchr(auth, '@', (size_t)(end - auth));
        /* scheme://, then the authority from after its last '@' on, then the rest */
        len = (size_t)(auth - url);
        if (len < sizeof(tmp)) {
                memcpy(tmp, url, len);
                n = len;
        }
        if (at) {
                const char *p;

                while ((p = memchr(at + 1, '@', (size_t)(end - at - 1))))
                        at = p;
                auth = at + 1;
        }
        len = strlen(auth);
        if (n + len >= sizeof(tmp))
                len = sizeof(tmp) - n - 1;
        memcpy(tmp + n, auth, len);
        n += len;
        return log_escape(tmp, n, out, max);
}
