#!/usr/bin/env bash
# Evidence seeds at cap-1/cap/cap+1, made from a real evidence document with jq: nonce bytes
# (EVIDENCE_NONCE_MAX 64), host.cmdline (EVIDENCE_CMDLINE_MAX 4096), and the ascii IMA logs that
# mkseeds wrote at the reader's caps (DIR/ima-ascii/cap-*) as ima.entries with format ascii, and
# boot_log.data of EVIDENCE_BOOT_LOG_MAX (1 MiB) decoded bytes.
# Usage: mkseeds-evidence.sh DIR EVIDENCE_JSON   (run after mkseeds DIR ima-ascii)
set -euo pipefail
dir=$1 doc=$2
out="$dir/evidence"
mkdir -p "$out"
sfx=(m1 eq p1)
for d in -1 0 1; do
        s=${sfx[$((d + 1))]}
        hex=$(head -c $((64 + d)) /dev/zero | od -An -v -tx1 | tr -d ' \n' | tr 0 a)
        jq -c --arg n "$hex" '.nonce = $n' "$doc" >"$out/cap-nonce-$s"
        head -c $((1048576 + d)) /dev/zero | base64 -w0 >"$dir/b64"
        jq -c --rawfile e "$dir/b64" '.boot_log = {offset: 0, data: $e}' "$doc" \
                >"$out/cap-boot-log-$s"
        cmd=$(head -c $((4096 + d)) /dev/zero | tr '\0' c)
        jq -c --arg c "$cmd" '.host.cmdline = $c' "$doc" >"$out/cap-cmdline-$s"
        for f in "$dir"/ima-ascii/cap-*-"$s"; do
                [ -e "$f" ] || continue
                base64 -w0 "$f" >"$dir/b64"
                jq -c --rawfile e "$dir/b64" '.ima.format = "ascii" | .ima.entries = $e' "$doc" \
                        >"$out/cap-ima-$(basename "$f")"
        done
done
rm -f "$dir/b64"
