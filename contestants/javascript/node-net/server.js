'use strict';
// node-net: the net module; one event loop per process, `workers` processes through cluster.

const net = require('node:net');
const { runWorkers, parseArgs } = require('../common/cluster');

const HELLO = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!');
const TIMEOUT_MS = Number(process.env.SB_TIMEOUT_MS ?? 5000);

const handlers = {
  hello(socket) {
    socket.on('data', () => socket.write(HELLO));
  },
  'hello-timeout'(socket) {
    // 'timeout' fires after TIMEOUT_MS with neither a read nor a finished write. Reading stops
    // while the send buffer is full, so a write the peer does not drain also runs into it.
    socket.setTimeout(TIMEOUT_MS, () => socket.destroy());
    socket.on('data', () => {
      if (!socket.write(HELLO)) socket.pause();
    });
    socket.on('drain', () => socket.resume());
  },
  echo(socket) {
    socket.pipe(socket);
  },
};

const { scenario, host, port, workers } = parseArgs('node-net', Object.keys(handlers));
runWorkers(workers, () => {
  net
    .createServer({ noDelay: true }, (socket) => {
      socket.on('error', () => socket.destroy());
      handlers[scenario](socket);
    })
    .listen({ host, port, backlog: 4096 });
});
