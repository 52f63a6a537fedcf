# One HTTPS test server on 127.0.0.1 for the tests' stand-in peers (busy-verifier.py,
# hostile-attestd.py): a free port, the certificate given, the port written to DIR/port (through a
# rename, so a reader never sees half a number), then served until killed.
import http.server
import os
import ssl


def serve(handler, cert, key, dir):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(os.path.join(dir, "port.tmp"), "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(os.path.join(dir, "port.tmp"), os.path.join(dir, "port"))
    srv.serve_forever()
