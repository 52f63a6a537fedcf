#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Peak private memory of a process over a stretch of time, for the agent memory bench and test.

Usage: memsample.py PID STOPFILE MAX_SECONDS [READYFILE]

Resets the process's peak RSS (VmHWM, "5" to /proc/PID/clear_refs), takes a first sample and
creates READYFILE (the caller waits for it before it lets the process work), then samples
RssAnon of /proc/PID/status about every 0.2 ms until STOPFILE exists, the process is gone or
MAX_SECONDS passed (bounded). Prints one line, kB: "anon_peak VmHWM RssFile samples".
"""
import os
import sys
import time


def status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("RssAnon", "VmHWM", "RssFile"):
                out[k] = int(v.split()[0])
    return out


def main():
    pid, stop, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    peak, n, last = 0, 0, {}
    end = time.monotonic() + limit
    try:
        last = status(pid)
        peak = last.get("RssAnon", 0)
    except OSError:
        pass
    if len(sys.argv) > 4:
        open(sys.argv[4], "w").close()
    while time.monotonic() < end and not os.path.exists(stop):
        try:
            last = status(pid)
        except OSError:
            break
        peak = max(peak, last.get("RssAnon", 0))
        n += 1
        time.sleep(0.0002)
    try:
        last = status(pid)
        peak = max(peak, last.get("RssAnon", 0))
    except OSError:
        pass
    print(peak, last.get("VmHWM", 0), last.get("RssFile", 0), n)


if __name__ == "__main__":
    main()
