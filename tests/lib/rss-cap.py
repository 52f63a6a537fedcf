#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a command with a ceiling on its memory and time, and report its peak RSS.

Usage: rss-cap.py LIMIT_KB MAX_SECONDS REPORT -- CMD [ARG...]

CMD inherits stdin, stdout and stderr. Its VmHWM (/proc/PID/status: peak resident set, kB) is
read about every 20 ms; the command is killed (SIGKILL) as soon as it is above LIMIT_KB, or
when MAX_SECONDS have passed (both bounded: the test never waits on a runaway). REPORT gets one
line: "peak_kB exit_status verdict", verdict "ok", "over" (killed over LIMIT_KB) or "timeout";
exit_status is the command's, or 128 + the signal that ended it. rss-cap.py itself exits 0.
"""
import os
import signal
import subprocess
import sys
import time


def hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    limit, secs, report = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    if sys.argv[4] != "--":
        sys.exit("usage: rss-cap.py LIMIT_KB MAX_SECONDS REPORT -- CMD [ARG...]")
    p = subprocess.Popen(sys.argv[5:])
    peak, verdict = 0, "ok"
    end = time.monotonic() + secs
    while p.poll() is None:
        peak = max(peak, hwm(p.pid))
        if peak > limit:
            verdict = "over"
        elif time.monotonic() > end:
            verdict = "timeout"
        if verdict != "ok":
            p.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    rc = p.wait()
    with open(report, "w") as f:
        f.write("%d %d %s\n" % (peak, rc if rc >= 0 else 128 - rc, verdict))


if __name__ == "__main__":
    main()
