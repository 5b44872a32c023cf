'use strict';
// Prints one line: the node version and the installed version of each package named on the command line.
const versions = process.argv.slice(2).map((name) => `${name} ${require(`${name}/package.json`).version}`);
console.log([`node ${process.version}`, ...versions].join(', '));
