#!/usr/bin/env python3
# Echo server (RFC 862), one thread, select(2), level-triggered.
# Nonblocking sockets; each turn select() watches the listener, every client that
# may read, and every client with echo still to send. What a socket does not take
# is kept per connection and sent when it becomes writable; a client whose unsent
# echo is over MAX_PENDING is not read until it drains (bounded memory).
# select() cannot watch fds >= FD_SETSIZE (1024): such connections are closed at once.
#
#   python3 examples/servers/python-select.py PORT [BIND_ADDR]   (default 127.0.0.1)
#
# Prints "listening on ADDR:PORT" once ready; exits 0 on SIGTERM or Ctrl-C.

import select
import signal
import socket
import sys

FD_SETSIZE = 1024
MAX_PENDING = 256 * 1024


class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.pending = bytearray()  # echo not yet taken by the socket
        self.eof = False  # the client shut down its write side


def serve(listener):
    conns = {}  # socket -> Conn
    while True:
        readers = [listener] + [s for s, c in conns.items() if not c.eof and len(c.pending) < MAX_PENDING]
        writers = [s for s, c in conns.items() if c.pending]
        readable, writable, _ = select.select(readers, writers, [])
        for sock in readable:
            if sock is listener:
                accept(listener, conns)
            else:
                read(conns[sock])
        for sock in writable:
            conn = conns.get(sock)
            if conn is not None:
                write(conn)
        for sock in [s for s, c in conns.items() if c.sock is None or (c.eof and not c.pending)]:
            # Half-close done (everything echoed after the client's FIN), or an error.
            sock.close()
            del conns[sock]


def accept(listener, conns):
    while True:
        try:
            sock, _ = listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # e.g. EMFILE: keep serving the connections we have
            return
        if sock.fileno() >= FD_SETSIZE:
            sock.close()
            continue
        sock.setblocking(False)
        conns[sock] = Conn(sock)


def read(conn):
    try:
        data = conn.sock.recv(65536)
    except (BlockingIOError, InterruptedError):
        return
    except OSError:
        conn.sock, conn.pending = None, bytearray()
        return
    if not data:
        conn.eof = True
        return
    conn.pending += data
    write(conn)


def write(conn):
    if conn.sock is None:
        return
    try:
        sent = conn.sock.send(conn.pending)
    except (BlockingIOError, InterruptedError):
        return
    except OSError:
        conn.sock, conn.pending = None, bytearray()
        return
    del conn.pending[:sent]


def main():
    port = int(sys.argv[1])
    host = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(1024)
    listener.setblocking(False)
    print("listening on %s:%d" % listener.getsockname()[:2], flush=True)
    try:
        serve(listener)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
