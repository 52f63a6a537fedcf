/* SPDX-License-Identifier: MIT */
/*
 * The monotonic clock (CLOCK_MONOTONIC: never steps with the wall clock, does not count suspend)
 * in the units the tree measures with, and deadlines on it for waits that take an absolute time
 * (pthread_cond_timedwait on a condition variable set to CLOCK_MONOTONIC). Durations, timeouts and
 * cache ages only; times stored or shown to people are wall-clock (attestd_now_ms()).
 */
#ifndef ATTEST_CLOCK_H
#define ATTEST_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t mono_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* CLOCK_MONOTONIC ms milliseconds (>= 0) from now, as a normalised timespec. */
static inline struct timespec mono_deadline_ms(int64_t ms)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += (time_t)(ms / 1000);
        ts.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
        }
        return ts;
}

#endif
