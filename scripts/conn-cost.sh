#!/usr/bin/env bash
# What one held connection costs, itemised: the kernel's slab caches (/proc/slabinfo,
# machine-wide, both ends) and the user space of the server and of the load generator
# (RSS of their process trees), from before the load to the middle of its hold, divided
# by the connections held. Loopback only; every connection makes one verified echo and is
# then held idle. Needs root (slabinfo) and 20 000 fds per process.
#
#   sudo scripts/conn-cost.sh MODEL CONNECTIONS [ENGINE]     e.g. epoll 50000
#
# Prints one line per slab cache that grew by 8 bytes or more per connection, then the
# slab total, the server's and the generator's RSS per connection.
set -euo pipefail
model=${1:?model}
conns=${2:?connections}
engine=${3:-epoll}
bin=${ECHOLAB:-target/release/echolab}
port=$((20000 + RANDOM % 20000))
procs=$(((conns + 17999) / 18000))
ramp_s=$((conns / 10000 + 5))
hold_s=$((ramp_s + 15))
out=$(mktemp -d)
trap 'kill $server_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$out"' EXIT
ulimit -n 20000

slab() { # name bytes (active objects x object size) per cache
    awk 'NR > 2 { print $1, $2 * $4 }' /proc/slabinfo | sort
}
tree_rss() { # RSS of a process and its descendants, in bytes
    local pids=$1 all=$1 kids
    while kids=$(pgrep -d, -P "$pids" 2>/dev/null); do all="$all,$kids"; pids=$kids; done
    ps -o rss= -p "$all" | awk '{ s += $1 } END { print s * 1024 }'
}

"$bin" serve --model "$model" --addr "127.0.0.1:$port" --processes "$procs" --workers 1 \
    --backlog 65535 >"$out/server.log" 2>&1 &
server_pid=$!
sleep 2
slab >"$out/before"
server_before=$(tree_rss $server_pid)
"$bin" load -t "127.0.0.1:$port" -c "$conns" -n 1 --hold "${hold_s}s" --processes "$procs" \
    --engine "$engine" --source-addrs 127.0.0.2-127.0.0.9 --connect-rate 10000 \
    --connect-timeout 30s -q -o "$out/load" >"$out/load.log" 2>&1 &
load_pid=$!
sleep 1
load_before=$(tree_rss $load_pid)
sleep $((ramp_s + 4))
slab >"$out/during"
server_during=$(tree_rss $server_pid)
load_during=$(tree_rss $load_pid)
wait $load_pid
established=$(grep -o '"connections_established": *[0-9]*' "$out/load/summary.json" | grep -o '[0-9]*$')
[ "$established" = "$conns" ] || { echo "only $established of $conns established" >&2; exit 1; }

echo "# $model, $conns connections held (generator engine $engine), bytes per connection"
join "$out/before" "$out/during" | awk -v n="$conns" '
    { d = ($3 - $2) / n; total += d; if (d >= 8 || d <= -8) printf "%-24s %8.0f\n", $1, d }
    END { printf "%-24s %8.0f\n", "slab total", total }' | sort -k2 -n -r
echo "server RSS               $(((server_during - server_before) / conns))"
echo "generator RSS            $(((load_during - load_before) / conns))"
