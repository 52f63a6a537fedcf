#!/usr/bin/env python3
# Load and probe tool for tests/hostile/test-http.sh: attacks on attestd's HTTP front over
# loopback. Every loop is bounded in count and time.
#   hold PORT COUNT FIRST_IP LAST_IP MODE SECONDS STATUS_FILE
#        keep COUNT connections from 127.0.0.FIRST..LAST (round robin) for SECONDS; MODE:
#        idle (TCP, nothing sent), partial (a TLS record header one byte a second, never
#        complete), slow (TLS, then a request head one byte a second), mix (1 % slow, the rest
#        half idle, half partial), busy:PATH (TLS, then a POST head to PATH announcing a
#        1 MB body, none of which is sent: a request in progress), drip:EVERY:CL:PATH (TLS,
#        then a POST head to PATH announcing CL body bytes, then one body byte every EVERY
#        seconds), refused:PATH (TLS, then a POST head to PATH announcing 1 MB, over the
#        route's cap, and 16 KiB of it: refused in the head; the socket is read from and, once
#        the server ends it, kept open 3 s more while the slot reconnects, so lingering closes
#        last as long as the server allows). A closed slot reconnects after 0.2 s. STATUS_FILE gets "open=N connects=N closed=N" every
#        second.
#   bodies PORT CA COUNT SIZE PATH [TOKEN]  COUNT concurrent POSTs of SIZE bytes; prints statuses
#   raw PORT CA HEX|@FILE     send these bytes over TLS, print the response (status line first)
#   fds PID MIN SECONDS  sample PID's open fds every 5 ms until MIN are seen or SECONDS pass;
#        print the most seen (attestd's table under pressure swings between 60 % and 90 % of
#        its cap many times a second: a sample every 0.2 s can miss every top)
#   send PORT CA SRC PATH CL N CHUNK EVERY HOLD
#        from 127.0.0.SRC, POST to PATH a head announcing CL bytes, then N body bytes ("{}" and
#        blanks), CHUNK bytes every EVERY seconds; when N < CL print "held" and wait up to HOLD
#        seconds. Prints "STATUS SECONDS DETAIL": the response's status (or "closed" when the
#        server hung up without one), seconds from the head, the JSON detail (or "-")
import errno, os, selectors, signal, socket, ssl, sys, threading, time

def tls_ctx(ca):
    c = ssl.create_default_context(cafile=ca)
    c.check_hostname = False
    return c

def hold(port, count, first, last, mode, seconds, status_file):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sel = selectors.DefaultSelector()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ips = ["127.0.0.%d" % i for i in range(first, last + 1)]
    slots = [None] * count          # (socket, kind, next_drip, sent)
    retry_at = [0.0] * count
    tls_head = bytes([0x16, 3, 1, 0x02, 0x00, 0x01])  # a ClientHello that never ends
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 4000
    connects = closed = failed = 0
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *a: stop.__setitem__(0, True))
    end = time.monotonic() + seconds

    busy_head = b""
    drip_every = 1.0
    if mode.startswith("busy:"):
        busy_head = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     "Content-Length: 1000000\r\n\r\n" % mode[5:]).encode()
    elif mode.startswith("refused:"):
        busy_head = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     "Content-Length: 1000000\r\n\r\n" % mode[8:]).encode() + b" " * 16384
    elif mode.startswith("drip:"):
        every, cl, path = mode[5:].split(":", 2)
        drip_every = float(every)
        busy_head = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     "Content-Length: %d\r\n\r\n" % (path, int(cl))).encode()

    def kind_of(i):
        if busy_head:  # refused: held as busy (its head and 16 KiB sent, then read from)
            return "drip" if mode.startswith("drip:") else "busy"
        if mode != "mix":
            return mode
        if i % 100 == 0:
            return "slow"
        return ("idle", "partial")[i % 2]

    def open_slot(i, now):
        nonlocal connects, failed
        kind = kind_of(i)
        s = socket.socket()
        try:
            s.bind((ips[i % len(ips)], 0))
            if kind in ("slow", "busy", "drip"):
                s.settimeout(2)
                s.connect(("127.0.0.1", port))
                s = ctx.wrap_socket(s)
                if kind in ("busy", "drip"):
                    s.sendall(busy_head)
                s.setblocking(False)
            else:
                s.setblocking(False)
                e = s.connect_ex(("127.0.0.1", port))
                if e not in (0, errno.EINPROGRESS):
                    raise OSError(e, "connect")
        except (OSError, ssl.SSLError):
            s.close()
            failed += 1
            retry_at[i] = now + 0.5
            todo.add(i)
            return
        connects += 1
        slots[i] = [s, kind, now + drip_every, 0]
        if kind not in ("idle", "busy"):
            drippers.add(i)
        sel.register(s, selectors.EVENT_READ, i)

    zombies = []  # refused: sockets the server ended, kept open 3 s (past its 2 s linger)

    def close_slot(i, now):
        nonlocal closed
        s = slots[i][0]
        sel.unregister(s)
        if mode.startswith("refused:"):
            zombies.append((now + 3, s))
        else:
            s.close()
        slots[i] = None
        closed += 1
        retry_at[i] = now + 0.2
        todo.add(i)
        drippers.discard(i)

    todo = set(range(count))  # slots to (re)connect
    drippers = set()          # slots that still send a byte a second
    last_status = 0.0
    opened_once = False
    while not stop[0] and time.monotonic() < end:
        now = time.monotonic()
        budget = 2000  # connects per pass, so status and drips keep flowing
        for i in sorted(todo):
            if budget <= 0:
                break
            if retry_at[i] <= now:
                todo.discard(i)
                open_slot(i, now)
                budget -= 1
        for key, ev in sel.select(timeout=0.1):
            i = key.data
            try:
                d = slots[i][0].recv(4096)
            except (ssl.SSLWantReadError, BlockingIOError):
                continue
            except OSError:
                d = b""
            if not d:
                close_slot(i, time.monotonic())
        now = time.monotonic()
        while zombies and zombies[0][0] <= now:
            zombies.pop(0)[1].close()
        for i in list(drippers):
            sl = slots[i]
            if sl is None or sl[2] > now:
                continue
            sl[2] = now + drip_every
            data = head if sl[1] == "slow" else b"{" if sl[1] == "drip" else tls_head
            if sl[1] == "drip":
                sl[3] = 0  # a body byte every time, bounded by SECONDS
            if sl[3] >= len(data):
                drippers.discard(i)
                continue
            try:
                sl[0].send(data[sl[3]:sl[3] + 1])
                sl[3] += 1
            except (ssl.SSLWantWriteError, BlockingIOError):
                pass
            except OSError:
                close_slot(i, now)
        if now - last_status >= 1:
            last_status = now
            n = count - sum(1 for x in slots if x is None)
            with open(status_file + ".tmp", "w") as f:
                f.write("open=%d connects=%d closed=%d failed=%d\n" % (n, connects, closed, failed))
            os.replace(status_file + ".tmp", status_file)
    for i in range(count):
        if slots[i] is not None:
            slots[i][0].close()
    for _, z in zombies:
        z.close()

def bodies(port, ca, count, size, path, token):
    ctx = tls_ctx(ca)
    out = [None] * count
    chunk = b" " * 65536  # whitespace: the JSON parser skips it without copying

    def one(i):
        try:
            s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=60))
            h = "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" \
                "Content-Length: %d\r\n" % (path, size)
            if token:
                h += "Authorization: Bearer %s\r\n" % token
            s.sendall((h + "\r\n").encode())
            sent = 0
            try:
                while sent < size:
                    n = min(len(chunk), size - sent)
                    s.sendall(chunk[:n])
                    sent += n
            except OSError:
                pass  # answered early and closed: what we want
            resp = b""
            try:
                while b"\r\n" not in resp and len(resp) < 65536:
                    d = s.recv(65536)
                    if not d:
                        break
                    resp += d
            except OSError:
                pass
            line = resp.split(b"\r\n", 1)[0].decode(errors="replace")
            out[i] = line.split(" ")[1] if line.startswith("HTTP/") else "000"
        except OSError:
            out[i] = "000"

    ts = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    print(" ".join(x or "000" for x in out))

def raw(port, ca, data):
    ctx = tls_ctx(ca)
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10))
    try:
        s.sendall(data)
    except OSError:
        pass
    resp = b""
    deadline = time.monotonic() + 10
    try:
        while len(resp) < 1 << 20 and time.monotonic() < deadline:
            d = s.recv(65536)
            if not d:
                break
            resp += d
            if b"\r\n\r\n" in resp:
                h, _, b = resp.partition(b"\r\n\r\n")
                cl = [l for l in h.split(b"\r\n") if l.lower().startswith(b"content-length:")]
                if cl and len(b) >= int(cl[0].split(b":")[1]):
                    break
    except OSError:
        pass
    sys.stdout.buffer.write(resp)

def send(port, ca, src, path, cl, n, chunk, every, hold_s):
    ctx = tls_ctx(ca)
    raw_s = socket.socket()
    raw_s.bind(("127.0.0.%d" % src, 0))
    raw_s.settimeout(10)
    raw_s.connect(("127.0.0.1", port))
    s = ctx.wrap_socket(raw_s)
    body = (b"{}" + b" " * max(0, n - 2))[:n]
    t0 = time.monotonic()
    s.sendall(("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               "Content-Length: %d\r\n\r\n" % (path, cl)).encode())
    resp = b""
    try:
        off = 0
        while off < n:
            s.settimeout(10)
            s.sendall(body[off:off + chunk])
            off += chunk
            if off < n and every > 0:
                time.sleep(every)
            s.settimeout(0.001)
            try:  # answered early (503 at the head) or closed: stop sending
                d = s.recv(65536)
                resp += d
                if not d or resp:
                    break
            except (ssl.SSLWantReadError, socket.timeout, BlockingIOError):
                pass
        if n < cl:
            print("held", flush=True)
    except OSError:
        pass
    s.settimeout(hold_s if n < cl else 30)
    try:
        while b"\r\n\r\n" not in resp or not resp.rstrip().endswith(b"}"):
            d = s.recv(65536)
            if not d:
                break
            resp += d
    except (OSError, socket.timeout):
        pass
    secs = time.monotonic() - t0
    line = resp.split(b"\r\n", 1)[0].decode(errors="replace")
    status = line.split(" ")[1] if line.startswith("HTTP/") else "closed"
    detail = "-"
    if b"\r\n\r\n" in resp:
        import json
        try:
            detail = json.loads(resp.split(b"\r\n\r\n", 1)[1]).get("detail", "-")
        except ValueError:
            pass
    try:
        print("%s %.2f %s" % (status, secs, detail), flush=True)
    except BrokenPipeError:  # the holder's reader (the test) has moved on
        pass

def fds(pid, want, seconds):
    end = time.monotonic() + seconds
    most = 0
    while time.monotonic() < end and most < want:
        try:
            most = max(most, len(os.listdir("/proc/%d/fd" % pid)))
        except OSError:
            break
        time.sleep(0.005)
    print(most)

def main():
    a = sys.argv[1:]
    if a and a[0] == "hold":
        hold(int(a[1]), int(a[2]), int(a[3]), int(a[4]), a[5], float(a[6]), a[7])
    elif a and a[0] == "bodies":
        bodies(int(a[1]), a[2], int(a[3]), int(a[4]), a[5], a[6] if len(a) > 6 else "")
    elif a and a[0] == "raw":
        data = open(a[3][1:], "rb").read() if a[3].startswith("@") else bytes.fromhex(a[3])
        raw(int(a[1]), a[2], data)
    elif a and a[0] == "fds":
        fds(int(a[1]), int(a[2]), float(a[3]))
    elif a and a[0] == "send":
        send(int(a[1]), a[2], int(a[3]), a[4], int(a[5]), int(a[6]), int(a[7]), float(a[8]),
             float(a[9]))
    else:
        sys.exit("usage: see the header of " + sys.argv[0])

main()
