#!/usr/bin/env bash
# The ascii reader's caps over HTTP: an enrolled agent (AK in swtpm, real quotes) posts ascii IMA
# logs built at the caps of the ascii reader (tests/fuzz/mkseeds.c) to a real attestd over TLS.
# The custom-template lines that overflowed the reader's scratch (buf|d-ng|d-ng|buf and
# d-ng|buf at template data cap-1/cap/cap+1) must be answered with the documented JSON and the
# reader's code, attestd alive and without a sanitizer report (the suite's attestd is built with
# ASan: before the fix it died on the first overflowing line). The quote is genuine, so the answer
# is a fail verdict naming the cap (docs/api.md, POST evidence, step 5). Data, name and line caps at
# cap-1/cap/cap+1: below or at the cap the log is read (its replay then fails against PCR 10, or
# passes once PCR 10 holds its entries), above it the reader's cap code. Run under
# tests/lib/swtpm-run with ATTESTD, TOP, EVGEN, MKSEEDS and MKEVIDENCE in the environment.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
: "${ATTESTD:?}" "${EVGEN:?}" "${MKSEEDS:?}" "${MKEVIDENCE:?}"
: "${TPM2TOOLS_TCTI:?run me under tests/lib/swtpm-run}"
test_begin
cd "$work"
persist_ak 0x81010021

token ADMIN admin
start_daemon
api POST /v1/agents "{\"ak_public\":\"$(base64 -w0 ak.pub)\"}" "$ADMIN"
expect 201 "" -- enrol the agent
id=$(jq -r .id <<<"$body")

"$MKSEEDS" seeds ima-ascii >/dev/null
"$EVGEN" gen small.bin files:1 >/dev/null
# PCR 10 holds the entries of the log at the data cap (cap-data-eq). It must not be all zero:
# the verifier takes the shortest prefix of a log that replays to PCR 10, and the empty prefix
# of a fresh TPM would match before the reader looked at any line.
"$MKEVIDENCE" extends seeds/ima-binary/cap-data-eq | xargs -r -n 1 tpm2_pcrextend >/dev/null

alive() {
        kill -0 "$daemon_pid" 2>/dev/null || fail "attestd died after $1"
        api GET /healthz
        [ "$status" = 200 ] || fail "/healthz $status after $1"
        sanitizer_check
}

# post_ascii LOG: challenge, quote, evidence with LOG as the ascii log from entry 0; sets
# $status and $body, and $code to the error code or the verdict's reason code
post_ascii() {
        challenge
        quote "$nonce"
        "$EVGEN" evidence "$nonce" q.attest q.sig q.pcrs small.bin 0 1 >ev.json
        base64 -w0 "$1" >log.b64
        jq --rawfile e log.b64 '.ima.format = "ascii" | .ima.entries = $e' ev.json >ev-ascii.json
        api POST "/v1/agents/$id/evidence" @ev-ascii.json
        code=$(jq -r '.error // .reason.code // empty' <<<"$body" 2>/dev/null || true)
}

# expect_rejected SEED CODE: the quote is genuine, so a log the reader refuses is a verdict on
# the host (docs/api.md, POST evidence step 5): 200, status fail, reason.code the reader's cap
# code with a detail; the replay state does not move (ima.offset stays 0 for the next post)
expect_rejected() {
        post_ascii "seeds/ima-ascii/cap-$1"
        [ "$status" = 200 ] || fail "$1: status $status: $body"
        [ "$(jq -r .status <<<"$body")" = fail ] || fail "$1: not a fail verdict: $body"
        [ "$code" = "$2" ] || fail "$1: code '$code', want $2: $body"
        [ -n "$(jq -r '.reason.detail // empty' <<<"$body")" ] || fail "$1: no detail: $body"
        alive "$1"
        ok "$1: fail verdict $code, attestd alive"
}

# expect_read SEED: within the caps the log is read; PCR 10 does not hold it, so the replay fails
# (cap-data-eq itself passes, last)
expect_read() {
        post_ascii "seeds/ima-ascii/cap-$1"
        [ "$status" = 200 ] || fail "$1: status $status: $body"
        case $code in
        ima_data_too_long | ima_line_too_long | ima_name_too_long | ima_bad_* | ima_truncated)
                fail "$1: rejected by the reader ($code) within its caps: $body" ;;
        esac
        local verdict
        verdict="$(jq -r .status <<<"$body") ${code:-}"
        alive "$1"
        ok "$1: read (verdict $verdict), attestd alive"
}

# the lines that overflowed the scratch buffer, at template data cap-1, cap and cap+1
for d in m1 eq p1; do
        expect_rejected "overflow4-$d" ima_data_too_long
done
expect_read dng-buf-m1
expect_read dng-buf-eq
expect_rejected dng-buf-p1 ima_data_too_long
expect_read data-m1
expect_rejected data-p1 ima_data_too_long
expect_read name-m1
expect_read name-eq
expect_rejected name-p1 ima_name_too_long
expect_rejected line-p1 ima_line_too_long

# the log at the data cap whose entries PCR 10 holds passes: the cap is a limit, not a rejection
post_ascii seeds/ima-ascii/cap-data-eq
[ "$status" = 200 ] && [ "$(jq -r .status <<<"$body")" = pass ] ||
        fail "data at the cap with PCR 10 extended: $status $body"
[ "$(jq -r .ima.new_entries <<<"$body")" = 2 ] || fail "new_entries: $body"
alive "the pass"
ok "template data of exactly 65536 bytes passes when PCR 10 holds it"
stop_daemon
ok "attestd stopped cleanly, no sanitizer report"
