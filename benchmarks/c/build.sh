#!/bin/sh
# Builds the C floor servers into benchmarks/c/bin/: epoll_echo and uring_echo.
# uring_echo needs liburing (Debian/Ubuntu: apt-get install liburing-dev).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/bin"
CC=${CC:-cc}
$CC -O2 -Wall -Wextra -o "$here/bin/epoll_echo" "$here/epoll_echo.c"
if ! $CC -O2 -Wall -Wextra -o "$here/bin/uring_echo" "$here/uring_echo.c" -luring; then
    echo "build.sh: uring_echo needs liburing: apt-get install liburing-dev" >&2
    exit 1
fi
echo "built $here/bin/epoll_echo $here/bin/uring_echo"
