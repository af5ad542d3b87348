// SPDX-License-Identifier: MIT
// A worker_threads worker of frames.js: its own isolate, in the same process.
'use strict';
const { parentPort } = require('node:worker_threads');

function workerFn(n) { // @workerFn
  return n * 3;
}
workerFn(1);
%DebugPrint('label_workerFn');
%DebugPrint(workerFn);
setTimeout(() => parentPort.postMessage('ok'), 100);
setInterval(() => workerFn(2), 1000); // alive while the test reads it
