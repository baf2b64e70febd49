#!/usr/bin/env python3
"""A LocalSend app's discovery over IPv6 only, for ptk's tests: run it inside a private network
namespace, never on a real network.

It listens on the LocalSend IPv6 group ff12::fd3a:e420 port 53317 on --interface (one socket,
joined there, as the apps do) and serves HTTPS on [::]:--port with a certificate of its own (made
with openssl). Whenever it hears a receiver's announcement it announces itself there (`announce`
true, protocol https, the SHA-256 of its certificate, its port), which the receiver answers with
POST /api/localsend/v2/register over IPv6. It prints one JSON line per event:
  {"event": "ready", "address": "fe80::...%vb"}       listening (its link-local address)
  {"event": "heard", "from": "fe80::...%vb", "message": {...}}   a multicast message from someone else
  {"event": "register", "from": "fe80::...", "message": {...}}    a register call's body
and exits (0) once it has heard an announcement and got a register, or (1) after --timeout seconds.
"""
import argparse, hashlib, json, socket, ssl, struct, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, HTTPServer

GROUP, PORT = "ff12::fd3a:e420", 53317
args = argparse.ArgumentParser()
args.add_argument("--port", type=int, required=True)
args.add_argument("--interface", required=True)
args.add_argument("--timeout", type=float, default=20)
opts = args.parse_args()
index = socket.if_nametoindex(opts.interface)

events = []
lock = threading.Lock()
done = threading.Event()

def emit(event, message, sender):
    with lock:
        events.append((event, message))
        print(json.dumps({"event": event, "from": sender, "message": message}), flush=True)
        kinds = [(e, m.get("announce")) for e, m in events]
        if ("heard", True) in kinds and ("register", None) in kinds:
            done.set()

work = tempfile.mkdtemp(prefix="ls-peer6")
cert, key = work + "/cert.pem", work + "/key.pem"
subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=LocalSend", "-keyout", key, "-out", cert], check=True, capture_output=True)
FINGERPRINT = hashlib.sha256(ssl.PEM_cert_to_DER_cert(open(cert).read())).hexdigest().upper()
ME = {"alias": "IPv6 Phone", "version": "2.1", "deviceModel": None, "deviceType": "mobile",
      "fingerprint": FINGERPRINT, "port": opts.port, "protocol": "https", "download": False}

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/api/localsend/v2/register":
            emit("register", json.loads(body), self.client_address[0])
        answer = json.dumps(ME).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
    def log_message(self, *a):
        pass

class Server6(HTTPServer):
    address_family = socket.AF_INET6

server = Server6(("::", opts.port), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
threading.Thread(target=server.serve_forever, daemon=True).start()

sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
sock.bind(("::", PORT))
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, socket.inet_pton(socket.AF_INET6, GROUP) + struct.pack("@I", index))
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 1)
sock.settimeout(0.2)
print(json.dumps({"event": "ready"}), flush=True)

deadline = time.time() + opts.timeout
while time.time() < deadline and not done.is_set():
    try:
        data, sender = sock.recvfrom(65536)
    except socket.timeout:
        continue
    message = json.loads(data)
    if message.get("fingerprint") == FINGERPRINT:
        continue
    emit("heard", message, sender[0])
    if message.get("announce"):
        sock.sendto(json.dumps(dict(ME, announce=True, announcement=True)).encode(), (GROUP, PORT, 0, index))
time.sleep(0.3)
sys.exit(0 if done.is_set() else 1)
