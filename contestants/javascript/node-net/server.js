'use strict';
// node-net: the net module; one event loop per process, `workers` processes through cluster.
// No `counter`: cluster processes share no memory (see contestant.toml).

const net = require('node:net');
const { runWorkers, parseArgs } = require('../common/cluster');

const HELLO = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!');
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n';
const TIMEOUT_MS = Number(process.env.SB_TIMEOUT_MS ?? 5000);
const MAX_HEAD = 16384; // a request head longer than this is answered 400
const MAX_WORK_US = 1000000;

// A step of the spin longer than this means the process was not running (descheduled,
// preempted): that time was not spent on the request, so it is not counted.
const WORK_GAP_NS = 50000n;

// Spins on the monotonic clock until `us` microseconds of RUNNING time have passed: CPU work that
// blocks this process's loop. Each step's delta counts only when it is below WORK_GAP_NS.
// (Node users offload such work to worker_threads; the scenario measures it done in the handler.)
function busyWait(us) {
  const goal = BigInt(us) * 1000n;
  let total = 0n;
  let last = process.hrtime.bigint();
  while (total < goal) {
    const now = process.hrtime.bigint();
    const d = now - last;
    if (d < WORK_GAP_NS) total += d; // a longer step: the process was not running
    last = now;
  }
}

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
  // `GET /work/<N>`: heads parsed by hand, pipelined requests answered in order (one write per read).
  work(socket) {
    let pending = '';
    const onData = (chunk) => {
      pending += chunk.toString('latin1');
      let out = '';
      let end;
      while ((end = pending.indexOf('\r\n\r\n')) !== -1) {
        const line = pending.slice(0, pending.indexOf('\r\n'));
        pending = pending.slice(end + 4);
        const m = /^GET \/work\/([0-9]+) HTTP\/1\.1$/.exec(line);
        const n = m ? Number(m[1]) : NaN;
        if (!(n <= MAX_WORK_US)) return badRequest(out);
        busyWait(n);
        const body = String(n);
        out += `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      }
      if (pending.length > MAX_HEAD) return badRequest(out);
      if (out) socket.write(out, 'latin1');
    };
    // Answers what came before, then 400, and closes; what the peer still sends is dropped.
    const badRequest = (out) => {
      socket.off('data', onData);
      socket.end(out + BAD_REQUEST, 'latin1');
    };
    socket.on('data', onData);
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
