'use strict';
// node-express: Express on the http module; one event loop per process, `workers` processes
// through cluster. Run with NODE_ENV=production (the manifest sets it), as Express asks of production.

const express = require('express');
const path = require('node:path');
const { runWorkers, parseArgs } = require('../common/cluster');

const routes = {
  hello(app) {
    app.use((req, res) => res.send('Hello world!'));
  },
  plaintext(app) {
    app.get('/plaintext', (req, res) => res.type('text/plain').send('Hello, World!'));
  },
  json(app) {
    app.use(express.json());
    app.post('/ping', (req, res) => res.json(req.body));
  },
  // res.sendFile stats and opens the file per request and streams it (fs.createReadStream) into the
  // response; other paths, /file/<anything else> too, get Express's own 404.
  file(app) {
    const file = path.resolve(filesFolder, '4k'); // sendFile wants an absolute path
    app.get('/file/4k', (req, res) => res.sendFile(file));
  },
};

const { scenario, host, port, workers } = parseArgs('node-express', Object.keys(routes));
const filesFolder = process.env.SB_FILES;
if (scenario === 'file' && !filesFolder) {
  console.error('node-express: the file scenario needs SB_FILES (the folder of its files)');
  process.exit(2);
}
runWorkers(workers, () => {
  const app = express();
  // Only the headers the contract asks for (and http's Date and Connection): no X-Powered-By, no ETag
  // (a hash of every body; for sendFile one made from the file's size and time). Content-Type keeps
  // Express's `; charset=utf-8`; sendFile adds the caching headers of its `send` (see the manifest).
  app.disable('x-powered-by');
  app.set('etag', false);
  routes[scenario](app);
  const server = app.listen({ host, port, backlog: 4096 });
  // No idle timeout, as the contract asks of these scenarios (only hello-timeout has one); the same
  // setting as node-http, whose server Express runs on (see there).
  server.keepAliveTimeout = 0;
});
