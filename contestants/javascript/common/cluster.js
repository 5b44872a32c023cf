'use strict';
// Runs a server in this process, or with workers > 1 in that many cluster worker processes that
// share the listening port (on Linux the primary accepts and hands connections out round-robin).

const cluster = require('node:cluster');

function runWorkers(workers, serve) {
  if (workers <= 1 || !cluster.isPrimary) {
    serve();
    return;
  }
  let stopping = false;
  const stop = (code) => {
    stopping = true;
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
    process.exit(code);
  };
  // SIGTERM stops the workers with the primary; workers also exit by themselves if the primary
  // dies without a word, because their IPC channel to it closes.
  process.on('SIGTERM', () => stop(128 + 15));
  // A server that lost a worker would be measured with fewer workers than it claims: stop.
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    console.error(`worker ${worker.process.pid} exited (${signal ?? code}); stopping`);
    stop(1);
  });
  for (let i = 0; i < workers; i++) cluster.fork();
}

// Parses `<scenario> <host> <port> <workers>`; exits 2 for a scenario not in `scenarios`.
function parseArgs(name, scenarios) {
  const [scenario, host, port, workers] = process.argv.slice(2);
  if (workers === undefined) {
    console.error(`usage: ${name} {${scenarios.join('|')}} HOST PORT WORKERS`);
    process.exit(2);
  }
  if (!scenarios.includes(scenario)) {
    console.error(`${name}: unsupported scenario '${scenario}'`);
    process.exit(2);
  }
  return { scenario, host, port: Number(port), workers: Number(workers) };
}

module.exports = { runWorkers, parseArgs };
