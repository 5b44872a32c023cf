'use strict';
// node-net: the net module; one event loop per process, `workers` processes through cluster.
// No `counter`: cluster processes share no memory (see contestant.toml).

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { finished } = require('node:stream/promises');
const { runWorkers, parseArgs } = require('../common/cluster');

const HELLO = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!');
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n';
const NOT_FOUND = 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n';
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
  // A timer per read and per write (setTimeout, node's timer lists), each destroying the socket
  // when its operation has not completed within TIMEOUT_MS. The socket reads whenever it is not
  // paused, so a read starts at the connect and again after each 'data'; reading pauses while
  // writes wait for the peer to drain them, and then only the writes' timers run.
  'hello-timeout'(socket) {
    const expire = () => socket.destroy();
    let readTimer = setTimeout(expire, TIMEOUT_MS);
    socket.on('data', () => {
      clearTimeout(readTimer);
      const writeTimer = setTimeout(expire, TIMEOUT_MS);
      const flushed = socket.write(HELLO, () => clearTimeout(writeTimer));
      if (flushed) readTimer = setTimeout(expire, TIMEOUT_MS);
      else socket.pause();
    });
    socket.on('drain', () => {
      socket.resume();
      clearTimeout(readTimer);
      readTimer = setTimeout(expire, TIMEOUT_MS);
    });
    socket.on('close', () => clearTimeout(readTimer));
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
  // `GET /file/4k`: heads parsed by hand from the socket's async iterator, answered one at a time
  // and in order; any other path is 404.
  file(socket) {
    (async () => {
      let pending = '';
      for await (const chunk of socket) {
        pending += chunk.toString('latin1');
        let end;
        while ((end = pending.indexOf('\r\n\r\n')) !== -1) {
          const line = pending.slice(0, pending.indexOf('\r\n'));
          pending = pending.slice(end + 4);
          if (line === 'GET /file/4k HTTP/1.1') await sendFile(socket, path.join(filesFolder, '4k'));
          else socket.write(NOT_FOUND, 'latin1');
        }
        if (pending.length > MAX_HEAD) return socket.end(BAD_REQUEST, 'latin1');
      }
      socket.end(); // the peer has finished sending (the server allows half-open sockets for this)
    })().catch(() => socket.destroy());
  },
};

// Opens the file for this request and pipes it (fs.createReadStream) into the socket behind its
// head; resolves once it is all read, so the next request waits. A socket that closes first closes
// the file.
async function sendFile(socket, file) {
  const { size } = await fs.promises.stat(file);
  if (socket.destroyed) return;
  socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`, 'latin1');
  const source = fs.createReadStream(file);
  const abort = () => source.destroy();
  socket.once('close', abort);
  source.pipe(socket, { end: false });
  await finished(source);
  socket.off('close', abort);
}

const { scenario, host, port, workers } = parseArgs('node-net', Object.keys(handlers));
const filesFolder = process.env.SB_FILES;
if (scenario === 'file' && !filesFolder) {
  console.error('node-net: the file scenario needs SB_FILES (the folder of its files)');
  process.exit(2);
}
runWorkers(workers, () => {
  net
    // file answers after the peer half-closes (its answers are asynchronous), so it ends the socket
    // itself; the others answer at once and let node end the socket with the peer.
    .createServer({ noDelay: true, allowHalfOpen: scenario === 'file' }, (socket) => {
      socket.on('error', () => socket.destroy());
      handlers[scenario](socket);
    })
    .listen({ host, port, backlog: 4096 });
});
