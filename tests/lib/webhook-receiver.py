#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A webhook receiver for the tests (docs/webhooks.md, "Verifying"): HTTPS on loopback with the
test's certificate, verifies X-Attestd-Signature over the exact body with the shared secret
(constant-time compare), and deduplicates by event id, as a real receiver should.

  webhook-receiver.py --cert PEM --key PEM --secret FILE --dir DIR [--port N] [--status CODE]

DIR/port         the port it listens on (written once listening)
DIR/requests     one line per request: "<id> <signature ok|bad> <status answered>"
DIR/events.jsonl one line per new valid event id: the body as received
--status CODE    answer CODE instead of 204 (and then record nothing as received)
--hang           a hostile receiver: read the request, record it, never answer
--huge           a hostile receiver: answer 200 announcing 1 GiB and send up to 64 MiB of it
"""
import argparse
import hashlib
import hmac
import http.server
import json
import os
import ssl
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--secret", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--status", type=int, default=204)
    ap.add_argument("--hang", action="store_true")
    ap.add_argument("--huge", action="store_true")
    a = ap.parse_args()

    with open(a.secret, "rb") as f:
        key = f.read()
    if key.endswith(b"\n"):
        key = key[:-1]
    if key.endswith(b"\r"):
        key = key[:-1]

    seen = set()
    events = os.path.join(a.dir, "events.jsonl")
    if os.path.exists(events):  # a restarted receiver remembers what it got
        with open(events) as f:
            for line in f:
                seen.add(json.loads(line)["id"])

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            if n < 0 or n > 1 << 20:
                self.send_error(413)
                return
            body = self.rfile.read(n)
            want = "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
            got = self.headers.get("X-Attestd-Signature", "")
            good = hmac.compare_digest(want.encode(), got.encode())
            try:
                ev = json.loads(body)
                eid = int(ev["id"])
                if str(eid) != self.headers.get("X-Attestd-Event-Id"):
                    good = False
            except (ValueError, KeyError, TypeError):
                ev, eid, good = None, -1, False
            status = a.status if good else 401
            with open(os.path.join(a.dir, "requests"), "a") as f:
                f.write("%d %s %d\n" % (eid, "ok" if good else "bad", 0 if a.hang else status))
            if a.hang:
                time.sleep(3600)
                return
            if a.huge:
                self.send_response(200)
                self.send_header("Content-Length", str(1 << 30))
                self.end_headers()
                try:
                    for _ in range(64):
                        self.wfile.write(b"x" * (1 << 20))
                except OSError:
                    pass
                self.close_connection = True
                return
            if good and status < 300 and eid not in seen:
                seen.add(eid)
                with open(events, "a") as f:
                    f.write(body.decode() + "\n")
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

    srv = http.server.HTTPServer(("127.0.0.1", a.port), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = os.path.join(a.dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(a.dir, "port"))
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
