/* SPDX-License-Identifier: MIT */
/*
 * With IMA_PEER_REV, peer-ima.h (generated, tests/bench/mkpeer-ima.sh) comes first: its renames
 * must be in force when bank.h and the util headers are read, so they declare the peer_ names.
 */
#ifdef IMA_PEER_REV
#include "peer-ima.h"
#endif
#include <errno.h>
#include <string.h>

#include "tests/bench/bench-ima-peer.h"

#ifdef IMA_PEER_REV

const char *peer_rev(void)
{
        return IMA_PEER_REV;
}

int peer_replay(const void *log, size_t len, bool ascii, enum bank b, uint8_t *ret_pcr10,
                uint64_t *ret_entries)
{
        static struct hasher *h; /* the peer's own (its bank.c), made once, never freed */
        static struct ima_replay rp;
        struct ima_log_opts o = {.max_entries = UINT64_MAX};
        struct ima_reader rd;
        struct ima_entry e;
        int x;

        if (!h && (x = hasher_new(&h)) < 0)
                return x;
        if (!ascii) {
                ima_reader_init_binary(&rd, log, len, &o);
        } else if ((x = ima_reader_init_ascii(&rd, log, len, &o)) < 0) {
                return x;
        }
        ima_replay_init(&rp, h, BANK_MASK(b), ascii);
        while ((x = ima_reader_next(&rd, &e, NULL)) > 0)
                if ((x = ima_replay_extend(&rp, &e, rd.idx - 1, NULL)) < 0)
                        break;
        ima_reader_done(&rd);
        if (x < 0)
                return x;
        memcpy(ret_pcr10, rp.pcr[b][10], bank_size(b));
        *ret_entries = rp.entries;
        return 0;
}
#else
const char *peer_rev(void)
{
        return NULL;
}

int peer_replay(const void *log, size_t len, bool ascii, enum bank b, uint8_t *ret_pcr10,
                uint64_t *ret_entries)
{
        (void)log, (void)len, (void)ascii, (void)b, (void)ret_pcr10, (void)ret_entries;
        return -EOPNOTSUPP;
}
#endif
