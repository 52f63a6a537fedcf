#!/usr/bin/env python3
# Raw HTTP/1.1 framing probes for tests/hostile/test-http-framing.sh (RFC 9112 cases attestd must
# refuse, daemon/http/http-frame.h). Every loop is bounded in count and time; traffic to loopback only.
#   direct PORT CA AGENT_ID            each case over TLS straight to attestd: the exact status,
#                                      {"error","detail"} with the expected code, Connection:
#                                      close, and the connection closed after the one response
#                                      (the canary request sent behind it is never answered)
#   proxy PORT AGENT_ID METRICS_CMD... each case over plain TCP to a reverse proxy in front of
#                                      attestd: refused by the proxy or by attestd, and the canary
#                                      behind it reaches attestd only when the proxy itself
#                                      answered it (METRICS_CMD prints attestd's /metrics)
#   list                               the case names, one a line
#   one PORT CA NAME                   one case to attestd over TLS; prints its status line and
#                                      error code, or "eof" (no answer) (for the before/after run)
import json, socket, ssl, subprocess, sys, time

CANARY_PATH = "/smuggled-canary"
CANARY = b"GET " + CANARY_PATH.encode() + b" HTTP/1.1\r\nHost: a\r\n\r\n"
MAX_RESP = 1 << 20
TIMEOUT = 10.0


def cases(agent):
    """(name, request bytes, expected status, expected error code or None for libmicrohttpd's own
    answer, detail substring). Each request is followed by CANARY in the same write."""
    ev = ("POST /v1/agents/%s/evidence HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
          % agent).encode()
    get = ("GET /v1/agents/%s HTTP/1.1\r\n" % agent).encode()
    return [
        # header names
        ("te-space-before-colon", ev + b"Content-Length: 5\r\nTransfer-Encoding : chunked\r\n\r\n"
         b"0\r\n\r\n", 400, "bad_request", "whitespace at offset 17"),
        ("cl-space-before-colon", ev + b"Content-Length : 2\r\n\r\n{}", 400, "bad_request",
         "whitespace at offset 14"),
        ("tab-in-name", get + b"Host: a\r\nX-A\tB: 1\r\n\r\n", 400, "bad_request", "whitespace"),
        ("name-not-token", get + b"Host: a\r\nX(A): 1\r\n\r\n", 400, "bad_request",
         "not a token character"),
        ("empty-name", get + b": 1\r\nHost: a\r\n\r\n", 400, "bad_request", "empty name"),
        ("leading-space-first-field", get + b" Host: a\r\n\r\n", 400, "bad_request",
         "whitespace at offset 0"),
        # obs-fold (libmicrohttpd appends the continuation to the field's name)
        ("te-folded", ev + b"Content-Length: 5\r\nTransfer-Encoding:\r\n chunked\r\n\r\n"
         b"0\r\n\r\n", 400, "bad_request", "obs-fold"),
        ("cl-folded", ev + b"Content-Length:\r\n 2\r\n\r\n{}", 400, "bad_request", "obs-fold"),
        ("cl-folded-value", ev + b"Content-Length: 2\r\n 0\r\n\r\n{}", 400, "bad_request",
         "obs-fold"),
        ("fold-with-space", get + b"Host: a\r\nX-A: 1\r\n b c\r\n\r\n", 400, "bad_request",
         "whitespace"),
        # Content-Length and Transfer-Encoding
        ("cl-and-te", ev + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
         400, "bad_request", "Content-Length together with Transfer-Encoding"),
        ("two-cl", ev + b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 400, "bad_request",
         "more than one Content-Length"),
        ("te-gzip-chunked", ev + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 400,
         "bad_request", "exactly \\\"chunked\\\""),
        ("te-chunked-space", ev + b"Transfer-Encoding: chunked \r\n\r\n0\r\n\r\n", 400,
         "bad_request", "exactly"),
        ("te-identity", ev + b"Transfer-Encoding: identity\r\n\r\n{}", 400, "bad_request",
         "exactly"),
        ("two-te", ev + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"0\r\n\r\n", 400, "bad_request", "more than one Transfer-Encoding"),
        # Host
        ("http11-no-host", get + b"\r\n", 400, "bad_request", "without Host"),
        ("two-hosts", get + b"Host: a\r\nHost: b\r\n\r\n", 400, "bad_request",
         "more than one Host"),
        # control bytes in values
        ("bare-cr-in-value", get + b"Host: a\r\nX-A: 1\r2\r\n\r\n", 400, "bad_request",
         "control byte 0x0d"),
        ("ctl-in-value", get + b"Host: a\r\nX-A: 1\x012\r\n\r\n", 400, "bad_request",
         "control byte 0x01"),
        ("del-in-value", get + b"Host: a\r\nX-A: 1\x7f2\r\n\r\n", 400, "bad_request",
         "control byte 0x7f"),
        # the request-target
        ("path-enc-slash", b"GET /v1/agents/a%2fb HTTP/1.1\r\nHost: a\r\n\r\n", 400,
         "bad_request", "(%2F)"),
        ("path-enc-slash-upper", b"GET /v1/agents/a%2Fb HTTP/1.1\r\nHost: a\r\n\r\n", 400,
         "bad_request", "(%2F)"),
        ("path-enc-backslash", b"GET /v1/agents/a%5cb HTTP/1.1\r\nHost: a\r\n\r\n", 400,
         "bad_request", "(%5C)"),
        ("path-backslash", b"GET /v1/agents/a\\b HTTP/1.1\r\nHost: a\r\n\r\n", 400,
         "bad_request", "(%5C)"),
        ("path-enc-nul", b"GET /v1/agents/a%00b HTTP/1.1\r\nHost: a\r\n\r\n", 400,
         "bad_request", "%00"),
        ("query-enc-nul", ("GET /v1/agents/%s/results?limit=1%%00 HTTP/1.1\r\nHost: a\r\n\r\n"
                           % agent).encode(), 400, "bad_request", "%00"),
        ("path-bad-escape", b"GET /v1/agents/a%zz HTTP/1.1\r\nHost: a\r\n\r\n", 400,
         "bad_request", "two hex digits"),
        ("path-space", b"GET /v1/agents/a b HTTP/1.1\r\nHost: a\r\n\r\n", 400, "bad_request",
         "not visible ASCII"),
        ("path-fragment", b"GET /v1/agents/a#b HTTP/1.1\r\nHost: a\r\n\r\n", 400,
         "bad_request", "fragment"),
        # what libmicrohttpd 0.9.75 decides before attestd sees the head (docs/SECURITY.md):
        # proxy runs only (status None), where the proxy must refuse or normalise them. A field
        # line starting with ':' after another field ends its head there (the rest is read as the
        # body or the next request); a bare LF ends a line; a NUL cuts a value short.
        ("empty-name-after-field", get + b"Host: a\r\n: x\r\nContent-Length: 30\r\n\r\n"
         + b"GET /smuggled-canary HTTP/1.1\r\n", None, None, None),
        ("bare-lf-te", ev + b"Content-Length: 5\r\nX-A: 1\nTransfer-Encoding: chunked\r\n\r\n"
         b"0\r\n\r\n", None, None, None),
        ("nul-in-value", get + b"Host: a\r\nX-A: 1\x002\r\n\r\n", None, None, None),
        ("nul-in-te", ev + b"Content-Length: 5\r\nTransfer-Encoding: chunked\x00x\r\n\r\n"
         b"0\r\n\r\n", None, None, None),
        # libmicrohttpd's own answers (HTML, no hook): the status only
        ("url-17k", b"GET /" + b"a" * 17000 + b" HTTP/1.1\r\nHost: a\r\n\r\n", 414, None, None),
        ("url-100k", b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\nHost: a\r\n\r\n", 414, None,
         None),
    ]


def recv_all(s, first_only):
    """Read until EOF (or one whole response when first_only); bounded in size and time."""
    buf = b""
    deadline = time.monotonic() + TIMEOUT
    eof = False
    while len(buf) < MAX_RESP and time.monotonic() < deadline:
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        except (ssl.SSLError, OSError):
            eof = True
            break
        if not d:
            eof = True
            break
        buf += d
        if first_only and len(split(buf)) >= 1 and not split(buf)[-1][2]:
            break
    return buf, eof


def split(buf):
    """The HTTP responses in buf: [(status, headers dict, body, partial)], bounded."""
    out = []
    for _ in range(16):
        if not buf.startswith(b"HTTP/"):
            break
        head, sep, rest = buf.partition(b"\r\n\r\n")
        if not sep:
            out.append((0, {}, b"", True))
            break
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        hdr = {}
        for l in lines[1:]:
            k, _, v = l.partition(b":")
            hdr[k.strip().lower().decode()] = v.strip().decode("latin-1")
        n = int(hdr.get("content-length", "0"))
        out.append((status, hdr, rest[:n], len(rest) < n))
        buf = rest[n:]
    return out


def tls_conn(port, ca):
    c = ssl.create_default_context(cafile=ca)
    c.check_hostname = False
    s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    return c.wrap_socket(s)


def send(s, data):
    try:
        s.sendall(data)
        return None
    except OSError as e:
        return str(e)


def err_code(body):
    try:
        j = json.loads(body)
    except ValueError:
        return None, None
    if not isinstance(j, dict):
        return None, None
    return j.get("error"), j.get("detail")


def direct(port, ca, agent):
    fails = 0
    for name, req, want, code, detail in cases(agent):
        if want is None:
            print("# %s: libmicrohttpd decides it, attestd cannot see it (proxy run only)" % name)
            continue
        s = tls_conn(port, ca)
        serr = send(s, req + CANARY)
        buf, eof = recv_all(s, False)
        s.close()
        rs = split(buf)
        why = []
        if not rs:
            why.append("no response (%s)" % (serr or "connection ended without one"))
        else:
            st, hdr, body, _ = rs[0]
            if st != want:
                why.append("status %d, want %d" % (st, want))
            if code is not None:
                got, det = err_code(body)
                if got != code:
                    why.append("error %r, want %r (body %r)" % (got, code, body[:200]))
                elif detail and detail not in json.dumps(det):
                    why.append("detail %r lacks %r" % (det, detail))
                if hdr.get("connection", "").lower() != "close":
                    why.append("no Connection: close")
            if len(rs) > 1:
                why.append("%d responses: the canary behind it was answered" % len(rs))
            if not eof:
                why.append("the connection stayed open")
        if why:
            fails += 1
            print("not ok - %s: %s" % (name, "; ".join(why)))
        else:
            print("ok - %s: %d %s" % (name, rs[0][0], (err_code(rs[0][2])[1] or "")[:110]))
    return fails


def canaries_seen(metrics_cmd):
    """How many canaries attestd answered (404 not_found: no other request here makes one)."""
    out = subprocess.run(metrics_cmd, capture_output=True, timeout=TIMEOUT, check=True).stdout
    for l in out.decode().splitlines():
        if l.startswith('attestd_rejected_requests_total{code="not_found"}'):
            return int(l.split()[-1])
    return 0


def proxy(port, agent, metrics_cmd):
    fails = 0
    for name, req, want, code, detail in cases(agent):
        before = canaries_seen(metrics_cmd)
        s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        serr = send(s, req + CANARY)
        buf, _ = recv_all(s, False)
        s.close()
        # a follow-up on a fresh connection: a poisoned upstream connection would answer it
        # with the canary's response
        f = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        send(f, b"GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        fbuf, _ = recv_all(f, False)
        f.close()
        time.sleep(0.05)
        seen = canaries_seen(metrics_cmd) - before
        rs = split(buf)
        why = []
        if not rs:
            why.append("no response from the proxy (%s)" % (serr or "connection ended"))
            who = "-"
        else:
            st, hdr, body, _ = rs[0]
            got, det = err_code(body)
            if got == "bad_request" and st == 400:
                who = "attestd refused it: 400 %s" % (det or "")[:70]
            elif got is not None:
                # the proxy rewrote the head into one well-formed request (joined a fold, dropped
                # Content-Length for chunked, merged equal ones): attestd reads what it meant
                who = "HAProxy normalised it, attestd answered %d %s" % (st, got)
            elif 400 <= st <= 599:
                who = "HAProxy refused it: %d" % st
            else:
                who = "-"
                why.append("neither refused it: %d %r" % (st, body[:120]))
        # the canary may reach attestd only as a request the proxy itself forwarded and answered
        answered = sum(1 for r in rs[1:] if r[0] == 404 and err_code(r[2])[0] == "not_found")
        if seen > answered:
            why.append("SMUGGLED: attestd answered %d canary request(s), the proxy returned %d"
                       % (seen, answered))
        fr = split(fbuf)
        if not fr or fr[0][0] != 200 or b'"status"' not in fr[0][2]:
            why.append("the follow-up GET /healthz got %r" % (fbuf[:120],))
        if why:
            fails += 1
            print("not ok - proxy %s: %s" % (name, "; ".join(why)))
        else:
            print("ok - proxy %s: %s (request behind it: reached attestd %d, answered %d)"
                  % (name, who, seen, answered))
    return fails


def one(port, ca, name):
    for n, req, _, _, _ in cases("probe"):
        if n != name:
            continue
        s = tls_conn(port, ca)
        send(s, req + CANARY)
        buf, _ = recv_all(s, False)
        s.close()
        rs = split(buf)
        if not rs:
            print("eof")
        else:
            print(" ".join("%d %s" % (r[0], err_code(r[2])[0] or "-") for r in rs))
        return 0
    sys.exit("no case " + name)


def main():
    a = sys.argv[1:]
    if a and a[0] == "direct" and len(a) == 4:
        fails = direct(int(a[1]), a[2], a[3])
    elif a and a[0] == "proxy" and len(a) >= 4:
        fails = proxy(int(a[1]), a[2], a[3:])
    elif a and a[0] == "list":
        fails = 0
        for c in cases("x"):
            print(c[0])
    elif a and a[0] == "one" and len(a) == 4:
        fails = one(int(a[1]), a[2], a[3])
    else:
        sys.exit("usage: see the header of " + sys.argv[0])
    sys.exit(1 if fails else 0)


main()
