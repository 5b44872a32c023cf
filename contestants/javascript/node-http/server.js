'use strict';
// node-http: the http module (its parser, keep-alive and pipelining); one event loop per process,
// `workers` processes through cluster.

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { pipeline } = require('node:stream');
const { runWorkers, parseArgs } = require('../common/cluster');

function notFound(res) {
  res.writeHead(404, { 'Content-Length': 0 });
  res.end();
}

const handlers = {
  hello(req, res) {
    res.writeHead(200, { 'Content-Length': 12 });
    res.end('Hello world!');
  },
  plaintext(req, res) {
    if (req.method !== 'GET' || req.url !== '/plaintext') return notFound(res);
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 13 });
    res.end('Hello, World!');
  },
  json(req, res) {
    if (req.method !== 'POST' || req.url !== '/ping') return notFound(res);
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      let body;
      try {
        body = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString()));
      } catch {
        res.writeHead(400, { 'Content-Length': 0 });
        return res.end();
      }
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(body),
      });
      res.end(body);
    });
  },
  // The file is opened and streamed per request: fs.createReadStream piped into the response
  // (stream.pipeline, which also closes the file if the client goes away first).
  file(req, res) {
    if (req.method !== 'GET' || req.url !== '/file/4k') return notFound(res);
    const file = path.join(filesFolder, '4k');
    fs.stat(file, (err, stats) => {
      if (req.destroyed) return; // the client went away (pipelined requests of a reset connection)
      if (err) return notFound(res);
      res.writeHead(200, { 'Content-Length': stats.size });
      pipeline(fs.createReadStream(file), res, () => {});
    });
  },
};

const { scenario, host, port, workers } = parseArgs('node-http', Object.keys(handlers));
const filesFolder = process.env.SB_FILES;
if (scenario === 'file' && !filesFolder) {
  console.error('node-http: the file scenario needs SB_FILES (the folder of its files)');
  process.exit(2);
}
runWorkers(workers, () => {
  // http adds Date and keep-alive headers by itself.
  const server = http.createServer(handlers[scenario]);
  // No idle timeout, as the contract asks of these scenarios (only hello-timeout has one). Node closes a
  // keep-alive connection after 5 s idle by default, which makes holding many connections a matter of
  // throughput: 20,000 of them need at least 4,000 requests per second only to stay open, and Express,
  // on one core while holding them, fell behind and lost hundreds.
  server.keepAliveTimeout = 0;
  server.listen({ host, port, backlog: 4096 });
});
