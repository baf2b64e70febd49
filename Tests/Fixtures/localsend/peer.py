#!/usr/bin/env python3
"""A LocalSend app's discovery, for ptk's tests: run it inside a private network namespace
(only `lo`, multicast on), never on a real network.

It listens on the LocalSend multicast group (224.0.0.167:53317) through 127.0.0.1 and serves
HTTPS on --port with a certificate of its own (made with openssl). Once it hears a receiver's
announcement it announces itself (`announce` true, protocol https, the SHA-256 of its
certificate, its port), which the receiver answers with POST /api/localsend/v2/register; then
it announces from 127.0.0.2 as a second device on port 9, outside the ports a receiver calls,
which the receiver must answer by multicast (`announce` false). It prints one JSON line per event:
  {"event": "heard", "message": {...}}       a multicast message from someone else
  {"event": "register", "message": {...}}    a register call's body
and exits when it has seen all three, or after --timeout seconds.
"""
import argparse, hashlib, json, os, socket, ssl, struct, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, HTTPServer

GROUP, PORT = "224.0.0.167", 53317
args = argparse.ArgumentParser()
args.add_argument("--port", type=int, required=True)
args.add_argument("--timeout", type=float, default=20)
opts = args.parse_args()

events = []
lock = threading.Lock()
done = threading.Event()

def emit(event, message):
    with lock:
        events.append((event, message))
        print(json.dumps({"event": event, "message": message}), flush=True)
        kinds = [(e, m.get("announce")) for e, m in events]
        if ("heard", True) in kinds and ("register", None) in kinds and ("heard", False) in kinds:
            done.set()

work = tempfile.mkdtemp(prefix="ls-peer")
cert, key = work + "/cert.pem", work + "/key.pem"
subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=LocalSend", "-keyout", key, "-out", cert], check=True, capture_output=True)
FINGERPRINT = hashlib.sha256(ssl.PEM_cert_to_DER_cert(open(cert).read())).hexdigest().upper()
GHOST = "0" * 64
ME = {"alias": "Test Phone", "version": "2.1", "deviceModel": None, "deviceType": "mobile",
      "fingerprint": FINGERPRINT, "port": opts.port, "protocol": "https", "download": False}

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/api/localsend/v2/register":
            emit("register", json.loads(body))
        answer = json.dumps(ME).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
    def log_message(self, *a):
        pass

server = HTTPServer(("127.0.0.1", opts.port), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
threading.Thread(target=server.serve_forever, daemon=True).start()

sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
sock.bind(("", PORT))
sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton(GROUP) + socket.inet_aton("127.0.0.1"))
sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
sock.settimeout(0.2)
print(json.dumps({"event": "ready"}), flush=True)

def announce(info, source=None):
    s = sock
    if source:
        # Another device: another address (a receiver answers each address once every few seconds).
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((source, 0))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
    s.sendto(json.dumps(dict(info, announce=True, announcement=True)).encode(), (GROUP, PORT))

announced = False
deadline = time.time() + opts.timeout
while time.time() < deadline and not done.is_set():
    try:
        data, sender = sock.recvfrom(65536)
    except socket.timeout:
        continue
    message = json.loads(data)
    if message.get("fingerprint") in (FINGERPRINT, GHOST):
        continue
    emit("heard", message)
    if message.get("announce") and not announced:
        announced = True
        announce(ME)
        # A second device on port 9, which a receiver does not call: it must answer by multicast.
        time.sleep(0.5)
        announce(dict(ME, alias="Ghost", fingerprint=GHOST, port=9), source="127.0.0.2")
sys.exit(0 if done.is_set() else 1)
