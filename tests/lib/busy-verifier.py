#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A verifier that is up but busy, for the agent's failover tests: HTTPS on loopback with the
test's certificate; every request is answered 503 {"error":"store_busy",...} with a Retry-After
header (what attestd answers when its database pool is exhausted).

  busy-verifier.py --cert PEM --key PEM --dir DIR [--retry-after N]

DIR/port      the port it listens on (written once listening)
DIR/requests  one line per request: "<monotonic seconds> <method> <path>"
"""
import argparse
import http.server
import json
import os
import time

import tls_serve


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--retry-after", type=int, default=0)
    a = ap.parse_args()
    log = os.path.join(a.dir, "requests")

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self):
            n = int(self.headers.get("Content-Length", "0") or 0)
            if n > 0:
                self.rfile.read(min(n, 64 << 20))
            with open(log, "a") as f:
                f.write("%.3f %s %s\n" % (time.monotonic(), self.command, self.path))
            body = json.dumps({"error": "store_busy",
                               "detail": "no database connection within the wait"}).encode()
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if a.retry_after:
                self.send_header("Retry-After", str(a.retry_after))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = answer

        def log_message(self, *args):
            pass

    tls_serve.serve(H, a.cert, a.key, a.dir)


if __name__ == "__main__":
    main()
