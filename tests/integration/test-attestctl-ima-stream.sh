#!/usr/bin/env bash
# attestctl ima show | replay | hashes read the log through a 1 MiB window (evidence/ima-stream.c),
# from a file or from standard input ("-"):
#  1. logs larger than the window, made of the real logs of tests/data one after another (binary
#     ~1.7 MB, ascii ~2.5 MB, so entries straddle the window's end): the replay equals an
#     independent one (python3 hashlib over the binary log), the ascii log replays to the same
#     PCRs, and every command (text and --json, auto and named formats, --big-endian) prints the
#     same bytes and exits the same from the file and from a pipe;
#  2. every real log of tests/data: file and pipe give the same output, and so does policy
#     runtime-check;
#  3. a log cut inside its last entry (past the first window): exit 1, the entry's index and byte
#     offset named (binary: the field, as the whole-buffer reader always did; ascii: the line,
#     and the entry and offset added), from a file and from a pipe; a log cut between entries
#     reads to its end; a changed byte in the last entry fails its sha1, named the same way;
#  4. the file errors: a missing file, a directory and a FIFO path exit 2; an empty stdin is an
#     empty log;
#  5. policy from-host --runtime --ima-log streams the same way: for a log of repeated paths past
#     the window (binary and ascii) it writes byte for byte the policy python3 computes from the
#     entries it wrote; the log of part 1 gives the policy of one copy of its boots, its entries
#     and violations counted; file and pipe print the same for every log of this test; a cut or
#     malformed log exits 2 naming the entry and its byte offset (ascii: the line, and the entry
#     and offset added); peak RSS under 64 MiB on a 128 MiB log, from the file and from a pipe
#     (the whole-file read it replaced peaked at 141 MB there); 1,000,000 entries are read, one
#     more is refused (the entry and its offset named), as before.
# Usage: test-attestctl-ima-stream.sh ATTESTCTL TOP
set -euo pipefail
[ $# = 2 ] || { grep -m1 '^# Usage: ' "$0" | sed 's/^# //' >&2; exit 2; }
ATTESTCTL=$(realpath "$1") TOP=$(realpath "$2")
export TOP
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$TOP/tests/lib/common.sh"
need python3 cmp jq /usr/bin/time
work=$(mktemp -d /tmp/attestd-ima-stream.XXXXXX)
trap 'rc=$?; [ $rc -eq 0 ] && rm -rf "$work" || echo "# work dir kept: $work" >&2' EXIT
cd "$work"
D=$TOP/tests/data

# ---- 1. larger than the window -----------------------------------------------------------------
boots=(qemu61-good ima-sig-qemu ima-buf-runtime qemu61-tcb custom-fmt)
: >big.bin
: >big.txt
for _ in $(seq 200); do
        for b in "${boots[@]}"; do
                cat "$D/$b/binary_runtime_measurements" >>big.bin
                cat "$D/$b/ascii_runtime_measurements" >>big.txt
        done
done
[ "$(stat -c %s big.bin)" -gt $((3 * 1024 * 1024 / 2)) ] || fail "big.bin is not past the window"
[ "$(stat -c %s big.txt)" -gt $((2 * 1024 * 1024)) ] || fail "big.txt is not past the window"

# The reference: the binary log parsed and replayed by python3 (PCR 10, sha1 and sha256 banks),
# and the offsets of the last entry (its start and its data length field) for part 3.
cat >ref.py <<'PY'
import hashlib, struct, sys
log = open(sys.argv[1], "rb").read()
pcr = {"sha1": bytes(20), "sha256": bytes(32)}
off = n = nviol = 0
while off < len(log):
    start = off
    _, sha1 = struct.unpack_from("<I", log, off)[0], log[off + 4:off + 24]
    tlen = struct.unpack_from("<I", log, off + 24)[0]
    data_off = off + 28 + tlen
    dlen = struct.unpack_from("<I", log, data_off)[0]
    data = log[data_off + 4:data_off + 4 + dlen]
    assert len(data) == dlen and log[off + 28:data_off] != b"ima"
    viol = sha1 == bytes(20)
    nviol += viol
    assert viol or hashlib.sha1(data).digest() == sha1
    th1 = b"\xff" * 20 if viol else sha1
    th256 = b"\xff" * 32 if viol else hashlib.sha256(data).digest()
    pcr["sha1"] = hashlib.sha1(pcr["sha1"] + th1).digest()
    pcr["sha256"] = hashlib.sha256(pcr["sha256"] + th256).digest()
    off = data_off + 4 + dlen
    n += 1
print(n, nviol, pcr["sha1"].hex(), pcr["sha256"].hex(), start, data_off)
PY
read -r n nviol ref1 ref256 last_start last_data < <(python3 ref.py big.bin)
[ "$n" -gt 10000 ] || fail "the reference read only $n entries"
"$ATTESTCTL" ima replay --bank sha1,sha256 big.bin >replay-bin.txt
grep -qx "$n entries ($nviol violations)" replay-bin.txt ||
        fail "big.bin: $(head -1 replay-bin.txt), want $n entries ($nviol violations)"
grep -qx "sha1:10 $ref1" replay-bin.txt && grep -qx "sha256:10 $ref256" replay-bin.txt ||
        fail "big.bin replays to $(cat replay-bin.txt), python3 to sha1 $ref1 sha256 $ref256"
"$ATTESTCTL" ima replay --bank sha1,sha256 big.txt >replay-txt.txt
cmp -s replay-bin.txt replay-txt.txt || fail "big.txt replays otherwise: $(cat replay-txt.txt)"
ok "$n entries past the 1 MiB window, binary and ascii: PCR 10 as python3 replays it"

# same CMD...: the file and a pipe ("-") give the same stdout and exit status; stderr the same but
# for the name of the log
same() {
        local log=${*: -1} rf=0 rp=0
        "$ATTESTCTL" "$@" >f.out 2>f.err || rf=$?
        "$ATTESTCTL" "${@:1:$#-1}" - <"$log" >p.out 2>p.err || rp=$?
        [ "$rf" = "$rp" ] || fail "$*: exit $rf from the file, $rp from a pipe"
        cmp -s f.out p.out || fail "$*: the file and a pipe print different output"
        sed "s|^attestctl: -: |attestctl: $log: |" p.err | cmp -s f.err - ||
                fail "$*: stderr differs: $(cat f.err) / $(cat p.err)"
}
cmds=("ima show" "ima show --json" "ima replay" "ima replay --json" "ima hashes"
        "ima hashes --json" "ima replay --bank sha384 --format binary"
        "ima hashes --format ascii" "ima replay --big-endian")
for log in big.bin big.txt; do
        for c in "${cmds[@]}"; do
                # shellcheck disable=SC2086 # the words of the command
                same $c "$log"
        done
done
[ "$("$ATTESTCTL" ima show --json big.bin | wc -l)" = "$n" ] || fail "show printed other than $n entries"
[ "$("$ATTESTCTL" ima hashes --json big.txt | tail -1 | jq .index)" = $((n - 1)) ] ||
        fail "hashes --json: the last index is not $((n - 1))"
ok "show, replay, hashes (text, --json, --format, --big-endian): a pipe prints what the file does"

# ---- 2. the real logs ---------------------------------------------------------------------------
nlogs=0
for f in "$D"/*/binary_runtime_measurements "$D"/*/ascii_runtime_measurements; do
        for c in "ima show --json" "ima replay" "ima hashes"; do
                # shellcheck disable=SC2086
                same $c "$f"
        done
        nlogs=$((nlogs + 1))
done
ok "the $nlogs real logs of tests/data: a pipe prints what the file does"
# policy runtime-check streams the same way (a Keylime policy of the qemu61-tcb boot)
"$ATTESTCTL" policy import-keylime "$D/keylime/tcb-sha256.json" -o tcb.json 2>/dev/null
for f in "$D"/qemu61-tcb/*_runtime_measurements big.txt; do
        same policy runtime-check tcb.json --entries "$f"
done
"$ATTESTCTL" policy runtime-check tcb.json - <"$D/qemu61-tcb/ascii_runtime_measurements" |
        grep -q "^entries $(wc -l <"$D/qemu61-tcb/ascii_runtime_measurements") " ||
        fail "runtime-check from a pipe did not read every entry"
ok "policy runtime-check: a pipe prints what the file does"

# ---- 3. cut inside the last entry ---------------------------------------------------------------
want_cut() { # LOG WHAT MESSAGE: exit 1 and that message, from the file and from a pipe
        local rc=0
        "$ATTESTCTL" ima replay "$1" >/dev/null 2>err.txt || rc=$?
        [ "$rc" = 1 ] || fail "$2: exit $rc, want 1: $(cat err.txt)"
        [ "$(cat err.txt)" = "attestctl: $1: $3" ] || fail "$2: '$(cat err.txt)', want '$3'"
        rc=0
        "$ATTESTCTL" ima replay - <"$1" >/dev/null 2>err.txt || rc=$?
        [ "$rc" = 1 ] && [ "$(cat err.txt)" = "attestctl: -: $3" ] ||
                fail "$2 from a pipe: exit $rc, '$(cat err.txt)'"
        ok "$2: exit 1, $3"
}
size=$(stat -c %s big.bin)
head -c $((size - 5)) big.bin >cut-data.bin
want_cut cut-data.bin "binary, cut in the last entry's data" \
        "ima_truncated: entry $((n - 1)) at byte $last_data: template data truncated"
head -c $((last_start + 10)) big.bin >cut-head.bin
want_cut cut-head.bin "binary, cut in the last entry's header" \
        "ima_truncated: entry $((n - 1)) at byte $last_start: entry header truncated"
head -c "$last_start" big.bin >cut-between.bin
"$ATTESTCTL" ima replay cut-between.bin | grep -q "^$((n - 1)) entries (" ||
        fail "a log cut between entries does not read to its end"
# a byte of the last entry's name changed: its logged sha1 no longer matches (sha1 bank replayed)
python3 - big.bin "$(($(stat -c %s big.bin) - 3))" >bad-sha1.bin <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[int(sys.argv[2])] ^= 1
sys.stdout.buffer.write(b)
PY
want_cut bad-sha1.bin "binary, the last entry's data changed" \
        "ima_sha1_mismatch: entry $((n - 1)): logged sha1 template hash does not match the template data (entry $((n - 1)) at byte $last_start)"
tsize=$(stat -c %s big.txt)
head -c $((tsize - 1)) big.txt >cut-nl.txt
tlast=$(($(head -n $((n - 1)) big.txt | wc -c)))
want_cut cut-nl.txt "ascii, the last line without its newline" \
        "ima_truncated: line $n field 1: last line has no newline (entry $((n - 1)) at byte $tlast)"

# ---- 4. file errors -----------------------------------------------------------------------------
rc=0
"$ATTESTCTL" ima replay missing.bin >/dev/null 2>err.txt || rc=$?
[ "$rc" = 2 ] && grep -q "missing.bin: No such file or directory" err.txt ||
        fail "a missing file: exit $rc, $(cat err.txt)"
rc=0
"$ATTESTCTL" ima show . >/dev/null 2>err.txt || rc=$?
[ "$rc" = 2 ] && grep -q "not a regular file" err.txt || fail "a directory: exit $rc, $(cat err.txt)"
mkfifo fifo
rc=0
timeout 10 "$ATTESTCTL" ima show fifo >/dev/null 2>err.txt || rc=$?
[ "$rc" = 2 ] && grep -q "not a regular file" err.txt || fail "a FIFO path: exit $rc, $(cat err.txt)"
[ "$("$ATTESTCTL" ima replay - </dev/null)" = "0 entries (0 violations)" ] || fail "an empty stdin"
ok "a missing file, a directory and a FIFO path exit 2; an empty stdin is an empty log"

# ---- 5. policy from-host --runtime --ima-log ----------------------------------------------------
fh() { "$ATTESTCTL" policy from-host --runtime --name gen --ima-log "$@"; }
# gen.py paths OUT N: N ima-ng entries, a quarter of them a path seen before with another digest
# (~3.6 MB binary for 30000: past the window three times), as OUT.bin and OUT.txt, and the policy
# expected, compact. gen.py big OUT MB: ima-buf events of 60,000 bytes under 16 names (one digest
# each), past MB megabytes; the number of entries. gen.py many - N: N entries of 100 bytes on
# standard output.
cat >gen.py <<'EOF'
import hashlib, json, struct, sys

def field(b):
    return struct.pack("<I", len(b)) + b

def entry(tmpl, data):
    return struct.pack("<I", 10) + hashlib.sha1(data).digest() + field(tmpl) + field(data)

mode, out, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "many":
    # k entries of 100 bytes (ima-ng, 1000 paths) on standard output
    chunk = b""
    for j in range(1000):
        d = hashlib.sha256(b"%d" % j).digest()
        data = field(b"sha256:\0" + d) + field(b"/lib/f%05d.a\0" % j)
        chunk += entry(b"ima-ng", data)
    assert len(chunk) == 100 * 1000
    for _ in range(k // 1000):
        sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.write(chunk[:100 * (k % 1000)])
elif mode == "paths":
    digests = {}
    with open(out + ".bin", "wb") as b, open(out + ".txt", "w") as t:
        for i in range(k):
            name = "/usr/lib/stream/%06d/lib.so" % (i % (k * 3 // 4))
            d = hashlib.sha256(b"%d" % i).digest()
            data = field(b"sha256:\0" + d) + field(name.encode() + b"\0")
            b.write(entry(b"ima-ng", data))
            t.write("10 %s ima-ng sha256:%s %s\n" % (hashlib.sha1(data).hexdigest(), d.hex(), name))
            digests.setdefault(name, []).append("sha256:" + d.hex())
    pol = {"name": "gen", "ima": {"runtime": {"digests": digests, "violations": "fail"}}}
    print(json.dumps(pol, separators=(",", ":")))
else:
    chunk = b""
    for j in range(16):
        buf = bytes((i * (j + 3)) & 0xff for i in range(60000))
        d = hashlib.sha256(buf).digest()
        chunk += entry(b"ima-buf", field(b"sha256:\0" + d) + field(b"ev-%d\0" % j) + field(buf))
    copies = k * 1024 * 1024 // len(chunk) + 1
    with open(out, "wb") as f:
        for _ in range(copies):
            f.write(chunk)
    print(copies * 16)
EOF
python3 gen.py paths paths 30000 >paths-want.json
[ "$(stat -c %s paths.bin)" -gt $((3 * 1024 * 1024)) ] || fail "paths.bin is not past the window"
for f in paths.bin paths.txt; do
        fh "$f" >pol.json 2>err.txt || fail "from-host $f: exit $?: $(cat err.txt)"
        jq -c . pol.json | cmp -s - paths-want.json ||
                fail "from-host $f: not the policy python3 wrote: $(jq -c . pol.json | head -c 300)"
        grep -q "^attestctl: runtime policy from 30000 entries: 30000 file measurements," err.txt ||
                fail "from-host $f: $(cat err.txt)"
done
ok "from-host --ima-log, 30000 entries past the window (binary, ascii): the policy python3 wrote"

# the log of part 1 (200 times five boots) gives the policy of the five boots once, but for the
# violations: as many as python3 counted
for b in "${boots[@]}"; do cat "$D/$b/binary_runtime_measurements"; done >once.bin
fh once.bin >once.json 2>/dev/null || fail "from-host once.bin: exit $?"
for f in big.bin big.txt; do
        fh "$f" >pol.json 2>err.txt || fail "from-host $f: exit $?: $(cat err.txt)"
        [ "$(jq -c 'del(.ima.runtime.violations)' pol.json)" = \
                "$(jq -c 'del(.ima.runtime.violations)' once.json)" ] ||
                fail "from-host $f: not the policy of one copy of its boots"
        [ "$(jq -c .ima.runtime.violations pol.json)" = "{\"allow\":$nviol}" ] ||
                fail "from-host $f: $(jq -c .ima.runtime.violations pol.json), want $nviol"
        grep -q "^attestctl: runtime policy from $n entries: " err.txt ||
                fail "from-host $f: $(cat err.txt)"
done
ok "from-host --ima-log on the $n entries of part 1: one copy's policy, $nviol violations allowed"

# file and pipe: the same stdout, stderr and exit status for every log here
for f in paths.bin paths.txt big.bin big.txt cut-data.bin cut-head.bin cut-nl.txt cut-between.bin \
        "$D"/*/binary_runtime_measurements "$D"/*/ascii_runtime_measurements; do
        same policy from-host --runtime --exclude '/usr/lib/stream/0.*' --ima-log "$f"
done
ok "from-host --ima-log: a pipe prints what the file does (every log of this test)"

# malformed logs: exit 2, nothing on stdout, the entry and its byte offset named
want_fh() { # LOG WHAT MESSAGE: from the file and from a pipe
        local rc src
        for src in file pipe; do
                rc=0
                if [ $src = file ]; then
                        fh "$1" >out.txt 2>err.txt || rc=$?
                else
                        fh - <"$1" >out.txt 2>err.txt || rc=$?
                fi
                [ "$rc" = 2 ] && [ ! -s out.txt ] ||
                        fail "from-host $2 ($src): exit $rc, $(head -c 200 out.txt)"
                [ "$(cat err.txt)" = "attestctl policy from-host: the IMA log: $3" ] ||
                        fail "from-host $2 ($src): '$(cat err.txt)', want '$3'"
        done
        ok "from-host $2: exit 2, $3"
}
want_fh cut-data.bin "binary, cut in the last entry's data" \
        "ima_truncated: entry $((n - 1)) at byte $last_data: template data truncated"
want_fh cut-head.bin "binary, cut in the last entry's header" \
        "ima_truncated: entry $((n - 1)) at byte $last_start: entry header truncated"
want_fh cut-nl.txt "ascii, the last line without its newline" \
        "ima_truncated: line $n field 1: last line has no newline (entry $((n - 1)) at byte $tlast)"
# a bad hex digit in the digest of line 20001 of paths.txt (every line as long), past the window
tline=$(head -1 paths.txt | wc -c)
python3 - paths.txt $((20000 * tline + 60)) >bad-hex.txt <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[int(sys.argv[2])] = ord("x")
sys.stdout.buffer.write(b)
EOF
at=$((20000 * tline))
want_fh bad-hex.txt "ascii, a bad hex digit in line 20001" \
        "ima_bad_field: line 20001 field 4: digest is not algo:hex (entry 20000 at byte $at)"

# entries: up to 1,000,000, as runtime-check reads (and attestd takes in one submission)
python3 gen.py many - 1000000 | fh - >pol.json 2>err.txt || fail "1,000,000 entries: $(cat err.txt)"
grep -q "^attestctl: runtime policy from 1000000 entries: 1000000 file measurements," err.txt &&
        [ "$(jq '.ima.runtime.digests | length' pol.json)" = 1000 ] ||
        fail "1,000,000 entries: $(cat err.txt)"
want_many="attestctl policy from-host: the IMA log: ima_too_many_entries: entry 1000000 at byte"
want_many="$want_many 100000000: more than 1000000 entries"
rc=0
python3 gen.py many - 1000001 | fh - >pol.json 2>err.txt || rc=$?
[ "$rc" = 2 ] && [ ! -s pol.json ] && [ "$(cat err.txt)" = "$want_many" ] ||
        fail "1,000,001 entries: exit $rc, $(cat err.txt)"
ok "from-host --ima-log: 1,000,000 entries read, one more refused (entry 1000000, its offset)"

# memory: flat in the log's size, from the file and from a pipe
entries=$(python3 gen.py big big.log 128)
want_big="0 file measurements, 0 key and $entries ima-buf measurements"
[ "$(stat -c %s big.log)" -gt $((128 * 1024 * 1024)) ] || fail "big.log is under 128 MiB"
for src in file pipe; do
        rc=0
        if [ $src = file ]; then
                /usr/bin/time -o rss.txt -f %M "$ATTESTCTL" policy from-host --runtime \
                        --ima-log big.log >pol.json 2>err.txt || rc=$?
        else
                /usr/bin/time -o rss.txt -f %M "$ATTESTCTL" policy from-host --runtime \
                        --ima-log - <big.log >pol.json 2>err.txt || rc=$?
        fi
        [ "$rc" = 0 ] || fail "from-host on big.log ($src): exit $rc: $(cat err.txt)"
        rss=$(tail -1 rss.txt)
        [ "$rss" -lt $((64 * 1024)) ] ||
                fail "from-host on a 128 MiB log ($src): peak RSS $rss kB, over 64 MiB"
        [ "$(jq '.ima.runtime.ima_buf | length' pol.json)" = 16 ] &&
                grep -q "^attestctl: runtime policy from $entries entries: $want_big" err.txt ||
                fail "from-host on big.log ($src): $(cat err.txt)"
        ok "from-host --ima-log on a 128 MiB log ($src): peak RSS $rss kB (under 64 MiB)"
done
rm -f big.log
