#!/usr/bin/env node
// Echo server (RFC 862), Node.js `net`: one process, one event loop (libuv, epoll
// on Linux), a callback per event. Each socket is piped into itself: pipe() pauses
// reading while the socket's write buffer is full (backpressure), and with
// allowHalfOpen the socket stays writable after the client's FIN, so pipe() ends
// it only once everything read has been written (half-close).
//
//   node examples/servers/node-net.js PORT [BIND_ADDR]   (default 127.0.0.1)
//
// Prints "listening on ADDR:PORT" once ready; exits 0 on SIGTERM or Ctrl-C.
'use strict';

const net = require('net');

const port = Number(process.argv[2]);
const host = process.argv[3] || '127.0.0.1';

const server = net.createServer({ allowHalfOpen: true }, (socket) => {
  socket.on('error', () => socket.destroy()); // a reset client: drop it, keep serving
  socket.pipe(socket);
});

server.listen({ port, host, backlog: 1024 }, () => {
  const { address, port: bound } = server.address();
  console.log(`listening on ${address}:${bound}`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });
}
