#!/usr/bin/env node
// Echo server (RFC 862), Node.js `cluster`: one worker process per CPU, all
// serving one port. The primary owns the listening socket and hands each new
// connection to a worker in turn (cluster's round-robin scheduling, the default
// on Linux); each worker is the `net` server of node-net.js.
//
//   node examples/servers/node-cluster.js PORT [BIND_ADDR]   (default 127.0.0.1)
//
// Prints "listening on ADDR:PORT workers=N" once every worker is ready; exits 0 on
// SIGTERM or Ctrl-C after its workers have exited.
'use strict';

const cluster = require('cluster');
const net = require('net');
const os = require('os');

const port = Number(process.argv[2]);
const host = process.argv[3] || '127.0.0.1';

if (cluster.isPrimary) {
  const count = os.availableParallelism ? os.availableParallelism() : os.cpus().length;
  let listening = 0;
  let stopping = false;
  for (let i = 0; i < count; i++) cluster.fork();
  cluster.on('listening', (_worker, address) => {
    if (++listening === count) {
      console.log(`listening on ${address.address}:${address.port} workers=${count}`);
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers).length === 0) process.exit(0);
      return;
    }
    // A worker that dies on its own is replaced: its connections are lost, the port is not.
    console.error(`worker ${worker.process.pid} died (${signal || code}); starting another`);
    cluster.fork();
  });
  for (const signal of ['SIGTERM', 'SIGINT']) {
    process.on(signal, () => {
      stopping = true;
      for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
      if (Object.keys(cluster.workers).length === 0) process.exit(0);
    });
  }
} else {
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  });
  server.listen({ port, host, backlog: 1024 });
  // Ctrl-C in a terminal reaches the whole process group; the primary stops the workers.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => process.exit(0));
}
