#!/bin/sh
# What a WebDAV PUT of undeclared length (curl -T - from a pipe: spooled, then copied into the
# store) costs ptkd against a sized PUT of the same bytes (curl -T FILE: Content-Length):
# ptkd's CPU seconds (user + system, /proc/PID/stat) and bytes written to disk
# (/proc/PID/io write_bytes) per GB received, and the wall time. Run from the repository
# after `swift build` (or with PTKD=/path/to/ptkd, PTK=/path/to/ptk for a release build).
#
#   scripts/measure-spool.sh [SIZE_MIB]     (default 1024)
set -eu
size_mib=${1:-1024}
bin=${BIN:-.build/debug}
ptkd=${PTKD:-$bin/ptkd}
ptk=${PTK:-$bin/ptk}
work=$(mktemp -d /tmp/ptk-measure-spool.XXXXXX)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Two JPEGs of SIZE_MIB MiB (a head, zeros as scan data, EOI) that differ in one scan byte,
# so the second is not the first's duplicate.
python3 - "$work" "$size_mib" <<'EOF'
import sys
work, mib = sys.argv[1], int(sys.argv[2])
head = bytes([0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0, 16, 0, 16, 1, 1, 0x11, 0, 0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 0x3F, 0])
size = mib << 20
for name, mark in (("a.jpg", 1), ("b.jpg", 2)):
    with open(f"{work}/{name}", "wb") as f:
        f.write(head + bytes([mark]))
        left = size - len(head) - 1 - 2
        block = bytes(1 << 20)
        while left > 0:
            n = min(left, len(block))
            f.write(block[:n])
            left -= n
        f.write(bytes([0xFF, 0xD9]))
EOF

max=$(( (size_mib + 64) * 1048576 ))
"$ptkd" --config /dev/null --dir "$work/photos" --state-dir "$work/state" --port 0 --listen 127.0.0.1 --no-mdns \
    --localsend off --web on --web-port 0 --max-file-size "$max" --min-free 100M 2>"$work/log" &
pid=$!
port=
for _ in $(seq 1 100); do
    port=$(sed -n 's/.*web interface on port \([0-9]*\).*/\1/p' "$work/log" | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "ptkd did not start:"; cat "$work/log"; exit 1; }
credentials=$("$ptk" --config /dev/null --dir "$work/photos" --state-dir "$work/state" app-password add bench --access full --json |
    python3 -c 'import json,sys; o=json.load(sys.stdin); print(o["user"] + ":" + o["password"])')
url="https://127.0.0.1:$port/dav/"
cert="$work/state/web/tls/cert.pem"

cpu() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
written() { sed -n 's/^write_bytes: //p' "/proc/$pid/io"; }
ticks=$(getconf CLK_TCK)

measure() {  # label, then the command that uploads
    label=$1
    shift
    sync
    c0=$(cpu); w0=$(written); t0=$(date +%s.%N)
    status=$("$@")
    t1=$(date +%s.%N); c1=$(cpu); w1=$(written)
    python3 - "$label" "$status" "$size_mib" "$c0" "$c1" "$w0" "$w1" "$t0" "$t1" "$ticks" <<'EOF'
import sys
label, status, mib, c0, c1, w0, w1, t0, t1, ticks = sys.argv[1:]
gb = int(mib) / 1024
cpu = (int(c1) - int(c0)) / int(ticks)
print(f"{label:<28} HTTP {status}  ptkd CPU {cpu / gb:6.2f} s/GB  disk written {(int(w1) - int(w0)) / 2**30 / gb:5.2f} GB/GB  wall {float(t1) - float(t0):6.1f} s")
EOF
}

sized() { curl -sS --cacert "$cert" -u "$credentials" -T "$work/a.jpg" -o /dev/null -w '%{http_code}' "${url}sized.jpg"; }
piped() { cat "$work/b.jpg" | curl -sS --cacert "$cert" -u "$credentials" -T - -o /dev/null -w '%{http_code}' "${url}piped.jpg"; }

echo "ptkd $ptkd, ${size_mib} MiB photos"
measure "sized PUT (Content-Length)" sized
measure "curl -T - (spooled)" piped
