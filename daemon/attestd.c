/* SPDX-License-Identifier: MIT */
#include <time.h>

#include "daemon/attestd.h"

int64_t attestd_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
