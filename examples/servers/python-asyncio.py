#!/usr/bin/env python3
# Echo server (RFC 862), asyncio streams: one thread, one event loop (epoll on
# Linux), one coroutine per connection. Each connection reads, writes back and
# awaits drain(), so a client that does not read stops being read (bounded memory).
#
#   python3 examples/servers/python-asyncio.py PORT [BIND_ADDR]   (default 127.0.0.1)
#
# Prints "listening on ADDR:PORT" once ready; exits 0 on SIGTERM or Ctrl-C.

import asyncio
import signal
import sys


async def echo(reader, writer):
    try:
        # An empty read is the client's FIN; the stream stays writable (half-close),
        # so the echo is finished before the connection is closed.
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.close()
        await writer.wait_closed()
    except (ConnectionResetError, BrokenPipeError):
        writer.transport.abort()
    except asyncio.CancelledError:
        # Shutdown: asyncio.run cancels every connection's task. Ending the task here,
        # rather than re-raising, keeps Python 3.11's stream callback from logging it.
        writer.transport.abort()


async def main():
    port = int(sys.argv[1])
    host = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    server = await asyncio.start_server(echo, host, port, backlog=1024)
    print("listening on %s:%d" % server.sockets[0].getsockname()[:2], flush=True)
    await stop.wait()
    server.close()  # stop accepting; asyncio.run cancels the open connections' tasks


if __name__ == "__main__":
    asyncio.run(main())
