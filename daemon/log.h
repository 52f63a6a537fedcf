/* SPDX-License-Identifier: MIT */
/*
 * The daemon logs through util/log.h (log_err ... log_debug, log_escape). This header only
 * forwards to it so the call sites in files other helpers own this round (api/, http/) keep
 * building; include "util/log.h" directly in new code.
 */
#ifndef ATTESTD_LOG_H
#define ATTESTD_LOG_H

#include "util/log.h"

#endif
