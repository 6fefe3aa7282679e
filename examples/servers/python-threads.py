#!/usr/bin/env python3
# Echo server (RFC 862), thread per client: the "traditional" server.
# socketserver.ThreadingTCPServer accepts in the main thread and starts one thread
# per connection, which reads and writes back with blocking calls until the client
# closes. Every connection costs a thread, idle or not.
#
#   python3 examples/servers/python-threads.py PORT [BIND_ADDR]   (default 127.0.0.1)
#
# Prints "listening on ADDR:PORT" once ready; exits 0 on SIGTERM or Ctrl-C.

import signal
import socketserver
import sys


class EchoHandler(socketserver.BaseRequestHandler):
    def handle(self):
        try:
            # An empty read is the client's FIN: everything read has been sent back
            # (sendall blocks until it is), so returning closes the connection.
            while data := self.request.recv(65536):
                self.request.sendall(data)
        except (ConnectionResetError, BrokenPipeError):
            pass


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True  # connection threads must not keep the process alive on exit
    request_queue_size = 1024  # listen backlog; socketserver's default of 5 drops SYNs under load


def main():
    port = int(sys.argv[1])
    host = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with Server((host, port), EchoHandler) as server:
        print("listening on %s:%d" % server.server_address[:2], flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
