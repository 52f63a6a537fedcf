#!/usr/bin/env bash
# shellcheck disable=SC2016 # backquotes of Markdown in single-quoted patterns
# Docs that match the program, for attestd and attest-agent (attestctl's man page and
# help are tested by attestctl's own tests, not here):
#  - every flag `--help` prints is documented in the man page's OPTIONS, and every flag OPTIONS
#    documents is in `--help` (attestd(8), attest-agent(8));
#  - `--version` of both prints "NAME VERSION" (the meson project version) and exits 0;
#  - sd-daemon "<N>" prefixes on a pipe and under the journal (JOURNAL_STREAM), none on a terminal
#    (a pty made by script(1)), for both programs;
#  - a missing database directory is named, with what to do;
#  - docs/api.md: the token-hash command it gives makes a token attestd accepts (and the hash of
#    the token with its newline is refused), /healthz answers what api.md shows.
# Usage: test-docs-match.sh ATTESTD AGENT VERSION
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
ATTESTD=$(realpath "$1") AGENT=$(realpath "$2") VERSION=$3
need script sha256sum
test_begin
cd "$work"

# ---- flags: --help <-> man page OPTIONS --------------------------------------------------------
# help_flags BIN: the flags of the option lines of BIN --help (an option line starts with blanks
# and a dash; only the part before the description, which begins after two blanks, counts)
help_flags() {
        "$1" --help | grep -E '^ +-' | sed -E 's/^ +//; s/  .*//' |
                grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}
# man_flags PAGE: the flags of the OPTIONS section's item heads (the line after each .TP)
man_flags() {
        awk '/^\.SH OPTIONS/ { o = 1; next } /^\.SH/ { o = 0 } o && prev == ".TP" { print }
                { prev = $0 }' "$1" | sed 's/\\-/-/g' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}
for pair in "attestd:$ATTESTD:attestd.8" "attest-agent:$AGENT:attest-agent.8"; do
        IFS=: read -r name bin page <<<"$pair"
        help_flags "$bin" >"$name.help"
        man_flags "$TOP/docs/$page" >"$name.man"
        [ "$(wc -l <"$name.help")" -ge 10 ] || fail "$name: only $(wc -l <"$name.help") flags in --help"
        missing=$(comm -23 "$name.help" "$name.man" | paste -sd' ')
        [ -z "$missing" ] || fail "$page lacks what $name --help prints: $missing"
        more=$(comm -13 "$name.help" "$name.man" | paste -sd' ')
        [ -z "$more" ] || fail "$page documents flags $name --help does not print: $more"
        ok "$name: the $(wc -l <"$name.help") flags of --help are exactly those of $page"
done
for f in --ek-ca --insecure-trust-ak --credential-ttl; do
        grep -qx -- "$f" attestd.man || fail "attestd.8 lacks $f"
done
sed 's/\\-/-/g; s/\\f[BIR]//g' "$TOP/docs/attestd.8" | tr '\n' ' ' |
        grep -q 'Without --ek-ca every enrolment is refused' || fail "attestd.8: --ek-ca refusal"
ok "attestd.8 documents --ek-ca (and enrolment refused without it), --insecure-trust-ak, --credential-ttl"

# ---- --version --------------------------------------------------------------------------------
for pair in "attestd:$ATTESTD" "attest-agent:$AGENT"; do
        IFS=: read -r name bin <<<"$pair"
        out=$("$bin" --version) || fail "$name --version exited $?"
        [ "$out" = "$name $VERSION" ] || fail "$name --version: '$out', want '$name $VERSION'"
done
ok "attestd --version and attest-agent --version: 'NAME $VERSION', exit 0"

# ---- log forms: the journal <N>, a pipe or file an ISO 8601 UTC time, a terminal 'error: ' ----
# each program fails at once on a bad start: attestd on an unknown flag, the agent without
# --verifier (a config file of its own, so the machine's is not read)
: >agent.conf
cmds=("$ATTESTD --no-such-flag" "$AGENT --config $work/agent.conf")
iso='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z error: '
for cmd in "${cmds[@]}"; do
        name=$(basename "${cmd%% *}")
        (
                unset JOURNAL_STREAM ATTEST_LOG_FORMAT
                $cmd 2>pipe.txt >/dev/null && fail "$name: started"
                grep -Eq "$iso" pipe.txt || fail "$name on a file: no ISO 8601 time: $(head -1 pipe.txt)"
                grep -q '^<[0-7]>' pipe.txt && fail "$name on a file: sd-daemon prefix: $(head -1 pipe.txt)"
                { $cmd 2>&1 >/dev/null || true; } | cat >pipe2.txt
                grep -Eq "$iso" pipe2.txt || fail "$name on a pipe: no ISO 8601 time: $(head -1 pipe2.txt)"
                # $JOURNAL_STREAM naming another stream (a child of a unit whose stderr moved)
                JOURNAL_STREAM=8:1234 $cmd 2>other.txt >/dev/null && fail "$name: started"
                grep -Eq "$iso" other.txt || fail "$name, JOURNAL_STREAM of another stream: $(head -1 other.txt)"
                # stderr is the stream $JOURNAL_STREAM names (dev:inode, as systemd sets it)
                : >journal.txt
                JOURNAL_STREAM=$(stat -c %d:%i journal.txt) $cmd 2>>journal.txt >/dev/null &&
                        fail "$name: started"
                grep -q '^<3>' journal.txt || fail "$name on the journal's stream: no <3>: $(head -1 journal.txt)"
                # script(1) gives the command a pty for stdin, stdout and stderr
                script -qec "$cmd" /dev/null >tty.txt 2>&1 && fail "$name: started on a terminal"
                tr -d '\r' <tty.txt >tty.log
                grep -q '^error: ' tty.log || fail "$name on a terminal: no 'error: ': $(head -1 tty.log)"
                grep -q '^<[0-7]>' tty.log && fail "$name on a terminal: sd-daemon prefix: $(head -1 tty.log)"
                true
        )
        ok "$name: <3> on the journal's stream, an ISO 8601 time on a file or pipe, 'error: ' on a terminal"
done

# ---- a configuration the program may not read: who needs what, not a usage error ----------------
# run as nobody: the work directory (0700 root) is the first thing it cannot pass
need setpriv
install -m 0600 /dev/null root-only.conf
for bin in "$ATTESTD" "$AGENT"; do
        name=$(basename "$bin")
        rc=0
        (
                unset ATTEST_LOG_FORMAT JOURNAL_STREAM
                exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$bin" --config "$work/root-only.conf"
        ) >/dev/null 2>denied.txt || rc=$?
        [ $rc = 2 ] || fail "$name with a config it may not read: exit $rc: $(cat denied.txt)"
        grep -Eq "error: $work/root-only.conf: Permission denied; $name runs as user nobody \(uid 65534\), group nogroup \(gid 65534\); it cannot enter the directory $work \(root:root 0700\)" denied.txt ||
                fail "$name does not say who needs what: $(cat denied.txt)"
        if grep -q 'see --help' denied.txt; then fail "$name: a permission error sent to --help: $(cat denied.txt)"; fi
        ok "$name: a config it may not read names the user it runs as and the directory it cannot enter (exit 2)"
done

# ---- a missing database directory ------------------------------------------------------------
touch tokens
if "$ATTESTD" --insecure-http --listen 127.0.0.1:0 --tokens tokens \
        --db "$work/no/such/dir/attestd.db" >nodir.log 2>&1; then
        fail "started without its database directory"
fi
grep -q "database directory $work/no/such/dir missing ($work/no does not exist): create it (install -d -m 0700 $work/no/such/dir)" nodir.log ||
        fail "missing directory message: $(cat nodir.log)"
grep -q 'unable to open database file' nodir.log && fail "SQLite's bare message: $(cat nodir.log)"
ok "a missing database directory is named, with what to do"

# ---- docs/api.md: the token hash command, /healthz ---------------------------------------------
# the command between the api.md markers, run as it stands with TOKEN set
sed -n '/<!-- token-hash -->/,/<!-- \/token-hash -->/p' "$TOP/docs/api.md" | sed 's/^ *//' |
        grep -v -e '^<!--' -e '^```' >token-hash.sh || true
[ "$(wc -l <token-hash.sh)" -ge 1 ] || fail "no token-hash command in docs/api.md"
TOKEN=$(openssl rand -hex 32)
hash=$(TOKEN=$TOKEN bash token-hash.sh)
[[ $hash =~ ^[0-9a-f]{64}$ ]] || fail "token-hash command printed '$hash'"
printf 'admin %s\n' "$hash" >"$work/tokens"
start_attestd
api GET /v1/agents "" "$TOKEN"
expect 200 "" -- "the token hashed by api.md's command"
printf 'admin %s\n' "$(echo "$TOKEN" | sha256sum | cut -d' ' -f1)" >"$work/tokens"
kill -HUP "$daemon_pid"
for _ in $(seq 50); do
        api GET /v1/agents "" "$TOKEN"
        [ "$status" = 401 ] && break
        nap 0.1
done
expect 401 unauthorized -- "the hash of the token with its trailing newline"
api GET /healthz
expect 200 "" -- "/healthz"
schema=$(jq -r .schema <<<"$body")
want=$(sed -n 's/^#define STORE_SCHEMA_VERSION \([0-9]*\).*/\1/p' "$TOP/daemon/store/store.h")
[ "$schema" = "$want" ] || fail "/healthz schema $schema, want STORE_SCHEMA_VERSION $want"
grep -qF '`{"status": "ok", "schema": N, "store": "writable"}`' "$TOP/docs/api.md" ||
        fail "api.md does not show /healthz's answer"
[ "$(jq -c 'keys' <<<"$body")" = '["schema","status","store"]' ] || fail "/healthz keys: $body"
ok "/healthz answers {status, schema: $schema, store} as api.md shows"
stop_daemon TERM

# ---- docs/api.md: enrolment flow and the EK CA bundle -----------------------------------------
api_md=$(tr '\n' ' ' <"$TOP/docs/api.md" | tr -s ' ')
grep -q 'come with later issues' <<<"$api_md" && fail "api.md still says activation comes later"
grep -q 'answers `201` with `"state": "pending"` and the credential' <<<"$api_md" ||
        fail "api.md: enrolment answers pending"
grep -q 'Without `--ek-ca` every enrolment is refused' <<<"$api_md" || fail "api.md: --ek-ca"
# where swtpm_setup's local CA keeps the root and issuer: as the installed swtpm configures it
conf=/etc/swtpm-localca.conf
[ -r "$conf" ] || fail "$conf missing (swtpm's local CA configuration)"
statedir=$(sed -n 's/^statedir *= *//p' "$conf")
issuer=$(sed -n 's/^issuercert *= *//p' "$conf")
[ "$issuer" = "$statedir/issuercert.pem" ] || fail "$conf: issuercert $issuer not in $statedir"
grep -qF "\`swtpm-localca-rootca-cert.pem\` and the issuer \`issuercert.pem\` in the local CA's \`statedir\` (\`$statedir\` by default" <<<"$api_md" ||
        fail "api.md: swtpm's EK CA files ($statedir)"
ok "api.md: pending until activation, --ek-ca required, swtpm's EK CA in $statedir"
