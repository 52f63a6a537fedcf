#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A hostile attestd for attestctl's tests: HTTPS on loopback with the test's certificate,
answering the REST API with what a malicious or compromised server could send.

  hostile-attestd.py --cert PEM --key PEM --dir DIR --mode MODE [--pages N]

MODE
  inject  every string attestctl prints (agent ids, host names, states, policies, labels, claim
          names, expected/observed values, reasons, result times, error codes and details, the
          health answer's store) holds terminal escapes: OSC title, clear screen, CR, LF, TAB,
          BEL, an OSC 8 link, C1 CSI (U+009B), RLO (U+202E) and other bidi controls.
          GET /v1/agents/badjson answers 200 with a body that is not JSON (raw ESC and 0x9b).
          DIR/expected.json holds the objects served, for the --json comparisons.
  loop    GET /v1/agents pages of about 8 MiB whose "next" cursors go c1, c2, c3 and then c1
          again (a cursor seen before, not the one just followed); never ends.
  fresh   pages of about 8 MiB with a new cursor each time; after --pages N pages (0: never)
          "next" is null.

DIR/port      the port it listens on (written once listening)
DIR/requests  one line per request: "<method> <path>"
"""
import argparse
import http.server
import json
import os
import urllib.parse

import tls_serve

OSC_TITLE = "\x1b]0;pwned-title\x07"
CLEAR = "\x1b[2J\x1b[H"
OSC8 = "\x1b]8;;https://evil.example/\x1b\\click-me\x1b]8;;\x1b\\"
C1_CSI = "\u009b31m"
RLO = "\u202e"
BIDI = "\u2066\u200f\u061c\u2069"


def hostile(tag):
    """A string with every kind of attack, tagged so a test can find where it went."""
    return tag + OSC_TITLE + CLEAR + "\rover\nline\tTAB" + OSC8 + C1_CSI + RLO + "gpj.exe" + BIDI


AGENT = {
    "id": "host1" + "\x1b[31m",
    "hostname": hostile("hn"),
    "machine_id": hostile("mid"),
    "labels": {"role" + RLO: hostile("lv")},
    "state": "active" + "\r" + CLEAR,
    "last_status": "fail" + C1_CSI,
    "last_policy": hostile("lp"),
    "policy": hostile("pol"),
    "created": "2024-01-01T00:00:00Z" + OSC_TITLE,
    "last_seen": hostile("seen"),
    "next_due": "soon" + OSC8,
    "ak_name": hostile("ak"),
    "stale": False,
    "last_verdict": {
        "status": "fail",
        "reason": {"code": hostile("rc"), "detail": hostile("rd")},
        "sections_unchecked": [hostile("su")],
        "claims": [
            {"name": hostile("cn"), "result": "fail", "expected": hostile("ex"),
             "observed": {"file": hostile("ob")}, "anchored": True, "entry": 42,
             # what a host's measured file name becomes in a claim's reason
             "reason": "file /tmp/" + OSC_TITLE + CLEAR + " is not in the policy"},
            {"name": "ima.ok", "result": "pass", "expected": "x", "observed": "x",
             "reason": hostile("okr")},
        ],
    },
}
AGENTS = {"agents": [AGENT, dict(AGENT, id="agent2" + RLO + "\u009b",
                                 hostname="plain-host")], "next": "cur" + OSC_TITLE}
RESULTS = {"results": [{"id": 7, "time": hostile("time"), "status": "fail" + "\r",
                        "policy": hostile("rp"), "verdict": AGENT["last_verdict"]}],
           "next_before": 6}
ERROR = {"error": "agent_not_found" + CLEAR, "detail": hostile("det")}
POLICIES = {"policies": [{"name": hostile("pn"), "version": 3, "created": hostile("pc")}]}
HEALTH = {"status": "ok", "schema": 1, "store": hostile("store")}
METRICS = ('attestd_agents{state="active"} 1\nattestd_agents{state="failing"} 1\n'
           'attestd_agents{state="stale"} 0\nattestd_agents{state="never_attested"} 0\n'
           'attestd_requests_total 5\n')
BADJSON = b'{"agents": \x1b[2J\x1b]0;pwned-title\x07\x9b31m}'

PAGE_TARGET = 8 * 1024 * 1024 - 128 * 1024  # under attestctl's 8 MiB cap on one answer


def big_agents():
    """The JSON text of an "agents" array of about PAGE_TARGET bytes (many ordinary agents)."""
    pad = "x" * 300
    items, size, i = [], 0, 0
    while size < PAGE_TARGET - 1024:
        a = json.dumps({"id": "agent-%06d" % i, "hostname": "host-%06d-%s" % (i, pad),
                        "state": "active", "last_status": "pass", "policy": "default",
                        "last_seen": "2024-01-01T00:00:00Z"}, separators=(",", ":"))
        items.append(a)
        size += len(a) + 1
        i += 1
    return ("[" + ",".join(items) + "]").encode(), i


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--mode", required=True, choices=["inject", "loop", "fresh"])
    ap.add_argument("--pages", type=int, default=0)
    a = ap.parse_args()
    log = os.path.join(a.dir, "requests")
    big, nbig = (None, 0)
    if a.mode in ("loop", "fresh"):
        big, nbig = big_agents()
        with open(os.path.join(a.dir, "page-agents"), "w") as f:
            f.write("%d\n" % nbig)
    if a.mode == "inject":
        with open(os.path.join(a.dir, "expected.json"), "w") as f:
            json.dump({"agent": AGENT, "agents": AGENTS, "results": RESULTS,
                       "error": ERROR, "policies": POLICIES}, f)

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def send(self, status, body, ctype="application/json"):
            if not isinstance(body, bytes):
                body = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def page(self, cursor):
            if a.mode == "loop":
                nxt = {None: "c1", "c1": "c2", "c2": "c3", "c3": "c1"}.get(cursor, "c1")
            else:
                n = int(cursor[1:]) if cursor and cursor[1:].isdigit() else 0
                nxt = None if a.pages and n + 1 >= a.pages else "f%d" % (n + 1)
            return b'{"agents":' + big + b',"next":' + json.dumps(nxt).encode() + b"}"

        def do_GET(self):
            with open(log, "a") as f:
                f.write("%s %s\n" % (self.command, self.path))
            u = urllib.parse.urlsplit(self.path)
            q = urllib.parse.parse_qs(u.query)
            p = u.path
            if p == "/healthz":
                return self.send(200, HEALTH if a.mode == "inject" else {"status": "ok"})
            if a.mode != "inject":
                if p == "/v1/agents":
                    return self.send(200, self.page(q.get("cursor", [None])[0]))
                return self.send(404, {"error": "not_found", "detail": p})
            if p == "/metrics":
                return self.send(200, METRICS.encode(), "text/plain")
            if p == "/v1/agents":
                return self.send(200, AGENTS)
            if p == "/v1/agents/host1":
                return self.send(200, AGENT)
            if p == "/v1/agents/host1/results":
                return self.send(200, RESULTS)
            if p == "/v1/agents/badjson":
                return self.send(200, BADJSON)
            if p == "/v1/policies":
                return self.send(200, POLICIES)
            return self.send(404, ERROR)

        do_DELETE = do_POST = do_PUT = do_GET

        def log_message(self, *args):
            pass

    tls_serve.serve(H, a.cert, a.key, a.dir)


if __name__ == "__main__":
    main()
