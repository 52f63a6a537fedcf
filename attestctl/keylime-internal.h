/* SPDX-License-Identifier: MIT */
/* Shared between the files of the Keylime import (keylime.c, keylime-keys.c); not an API. */
#ifndef ATTESTCTL_KEYLIME_INTERNAL_H
#define ATTESTCTL_KEYLIME_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "attestctl/keylime.h"
#include "util/err.h"
#include "util/macro.h"

/* A note for the operator (n may be NULL; past KEYLIME_NOTES_MAX only counted). */
void keylime_note(struct keylime_notes *n, const char *fmt, ...) _printf_(2, 3);

/*
 * The "verification-keys" string v (Keylime's keyring JSON, or "" for none) as a new array of
 * PEM public keys in *ret (NULL for ""); *ret_keys counts them. Errors name the JSON path.
 */
int keylime_verification_keys(const json_t *v, struct keylime_notes *notes, size_t *ret_keys,
                              json_t **ret, struct attest_err *err) _wur_;

#endif
