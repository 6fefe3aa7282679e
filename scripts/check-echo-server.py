#!/usr/bin/env python3
"""Checks that a server at HOST:PORT is a byte-exact echo server (RFC 862).

    scripts/check-echo-server.py HOST:PORT [--connections N] [--timeout S]

For each message size (1 B, 1 KiB, 1 MiB) it opens N connections at once; each
sends random bytes (binary, all 256 values) three times and reads back exactly what
it sent each time (a closed loop, as the load generator does), then half-closes:
sends one more message, shuts down its write side, and must get that message back
followed by the server's close. Sending runs in its own thread, so a 1 MiB message
cannot deadlock on full socket buffers.

Exit status: 0 when every byte came back in order and every half-close was
finished and closed by the server; 1 otherwise, with the reason on stderr; 2 for a
usage error.
"""

import argparse
import os
import socket
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

SIZES = [1, 1024, 1024 * 1024]
ROUNDS = 3


class EchoError(Exception):
    pass


def send_in_background(sock, data, then_shutdown=False):
    """Sends `data` (and optionally shuts down the write side) in a thread; returns a join."""
    failure = []

    def run():
        try:
            sock.sendall(data)
            if then_shutdown:
                sock.shutdown(socket.SHUT_WR)
        except OSError as e:
            failure.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def join():
        thread.join()
        if failure:
            raise EchoError("sending failed: %s" % failure[0])

    return join


def receive_exactly(sock, count):
    received = bytearray()
    while len(received) < count:
        chunk = sock.recv(min(1 << 20, count - len(received)))
        if not chunk:
            raise EchoError("server closed after %d of %d echoed bytes" % (len(received), count))
        received += chunk
    return bytes(received)


def compare(sent, received, what):
    if received == sent:
        return
    at = next((i for i, (a, b) in enumerate(zip(sent, received)) if a != b), min(len(sent), len(received)))
    raise EchoError("%s: %d bytes sent, %d received, first difference at byte %d" % (what, len(sent), len(received), at))


def check_connection(address, size, index, timeout):
    what = "%d B message, connection %d" % (size, index)
    try:
        with socket.create_connection(address, timeout=timeout) as sock:
            for round_ in range(ROUNDS):
                message = os.urandom(size)
                join = send_in_background(sock, message)
                received = receive_exactly(sock, size)
                join()
                compare(message, received, "%s, round %d" % (what, round_ + 1))
            # Half-close: the server must echo everything, then close its side.
            message = os.urandom(size)
            join = send_in_background(sock, message, then_shutdown=True)
            received = receive_exactly(sock, size)
            join()
            compare(message, received, "%s, after half-close" % what)
            extra = sock.recv(1)
            if extra:
                raise EchoError("%s: server sent bytes nobody sent after the half-close" % what)
    except socket.timeout:
        raise EchoError("%s: no progress for %s s (echo incomplete, or no close after half-close)" % (what, timeout))
    except OSError as e:
        raise EchoError("%s: %s" % (what, e))
    return (ROUNDS + 1) * size


def parse_address(text):
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT, not %r" % text)
    return (host.strip("[]"), int(port))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("address", type=parse_address, metavar="HOST:PORT")
    parser.add_argument("--connections", type=int, default=4, help="concurrent connections per size (default 4)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds without progress that fail a check (default 10)")
    args = parser.parse_args()

    checked = 0
    try:
        for size in SIZES:
            with ThreadPoolExecutor(max_workers=args.connections) as pool:
                jobs = [pool.submit(check_connection, args.address, size, i, args.timeout) for i in range(args.connections)]
                checked += sum(job.result() for job in jobs)
    except EchoError as e:
        print("check-echo-server: FAILED: %s" % e, file=sys.stderr)
        return 1
    print(
        "check-echo-server: ok: %d bytes echoed exactly over %d connections (%s B messages, %d rounds and a half-close each)"
        % (checked, args.connections * len(SIZES), ", ".join(map(str, SIZES)), ROUNDS)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
