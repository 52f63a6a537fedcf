/* SPDX-License-Identifier: MIT */
/* The caps fuzz-util-kv.c parses with, small enough for libFuzzer to reach; mkseeds.c seeds them.
 */
#ifndef ATTEST_FUZZ_UTIL_KV_H
#define ATTEST_FUZZ_UTIL_KV_H

#define FUZZ_KV_FILE_MAX 65536
#define FUZZ_KV_LINE_MAX 512
#define FUZZ_KV_KEY_MAX 32
#define FUZZ_KV_VALUE_MAX 256
#define FUZZ_KV_LINES_MAX 1024

#endif
