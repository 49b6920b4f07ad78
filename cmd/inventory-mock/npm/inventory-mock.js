#!/usr/bin/env node
// inventory-mock for npm: starts the inventory-mock binary of the platform
// package npm installed beside this one (@petstore/inventory-mock-<os>-<cpu>,
// an optional dependency whose os and cpu match this machine), with this
// command's arguments, standard streams and environment, and ends as it ends.
// Written by cmd/inventory-mock/npm in the kit's repository.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');

const pkg = `@petstore/inventory-mock-${process.platform}-${process.arch}`;
const exe = process.platform === 'win32' ? 'inventory-mock.exe' : 'inventory-mock';

let bin;
try {
  bin = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'bin', exe);
} catch {
  console.error(
    `inventory-mock: ${pkg} is not installed. npm installs it with @petstore/inventory-mock ` +
      `as an optional dependency: reinstall without --omit=optional (or --no-optional). ` +
      `Releases are built for linux, darwin and win32 on x64 and arm64; elsewhere, ` +
      `go run github.com/petstore/inventory-kit/cmd/inventory-mock@latest`
  );
  process.exit(2);
}

const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit' });

// A signal to this process (Ctrl-C, a container's stop) goes to the mock,
// which shuts down cleanly; this process then ends the way the mock did.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => child.kill(sig));
}
child.on('error', (err) => {
  console.error(`inventory-mock: cannot start ${bin}: ${err.message}`);
  process.exit(2);
});
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code);
});
