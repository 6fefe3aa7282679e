#!/bin/sh
# Builds the C floors into benchmarks/c/bin/: the servers epoll_echo and uring_echo, the
# clients epoll_client and uring_client. The uring ones need liburing (Debian/Ubuntu:
# apt-get install liburing-dev).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/bin"
CC=${CC:-cc}
for prog in epoll_echo epoll_client; do
    $CC -O2 -Wall -Wextra -o "$here/bin/$prog" "$here/$prog.c"
done
for prog in uring_echo uring_client; do
    if ! $CC -O2 -Wall -Wextra -o "$here/bin/$prog" "$here/$prog.c" -luring; then
        echo "build.sh: $prog needs liburing: apt-get install liburing-dev" >&2
        exit 1
    fi
done
echo "built $here/bin/: epoll_echo uring_echo epoll_client uring_client"
