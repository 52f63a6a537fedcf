#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Anonymous request flood for the hostile tests: COUNT requests (METHOD PATH [BODY]) over TLS
keep-alive connections from THREADS threads, bounded by COUNT and by DEADLINE seconds. Prints a
JSON summary {"sent": n, "status": {"201": n, ...}, "errors": n, "seconds": s}.

Usage: flood.py HOST PORT CAFILE METHOD PATH COUNT THREADS DEADLINE [BODY]
"""
import http.client
import json
import ssl
import sys
import threading
import time

host, port, cafile, method, path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
count, threads, deadline = int(sys.argv[6]), int(sys.argv[7]), float(sys.argv[8])
body = sys.argv[9].encode() if len(sys.argv) > 9 else None
ctx = ssl.create_default_context(cafile=cafile)
lock = threading.Lock()
state = {"next": 0, "status": {}, "errors": 0}
t0 = time.monotonic()


def take():
    with lock:
        if state["next"] >= count or time.monotonic() - t0 > deadline:
            return False
        state["next"] += 1
        return True


def worker():
    conn = None
    while take():
        try:
            if conn is None:
                conn = http.client.HTTPSConnection(host, port, context=ctx, timeout=10)
            headers = {"Content-Type": "application/json"} if body is not None else {}
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            r.read()
            with lock:
                k = str(r.status)
                state["status"][k] = state["status"].get(k, 0) + 1
            if r.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        except Exception:  # a dropped connection counts and is replaced
            with lock:
                state["errors"] += 1
            if conn is not None:
                conn.close()
            conn = None
    if conn is not None:
        conn.close()


ts = [threading.Thread(target=worker) for _ in range(threads)]
for t in ts:
    t.start()
for t in ts:
    t.join(deadline + 30)
print(json.dumps({"sent": state["next"], "status": state["status"], "errors": state["errors"],
                  "seconds": round(time.monotonic() - t0, 2)}))
