// SPDX-License-Identifier: MIT
// tests/unit/test_v8.c's workload: functions of every kind at known lines
// (the test finds each by the text after "// @"), each printed by
// %DebugPrint after its label, then a wait inside an interpreted frame
// called from a Sparkplug (baseline) one, itself called through
// node:internal/util's deprecate wrapper.  Node's own functions are printed
// too (their scripts' sources are external strings: fs's one-byte,
// internal/timers' two-byte), and the lines of their starts and of the
// wrapper's call, found in node's own sources ("line_LABEL N"), and two
// strings V8's test extension made external: 100 characters keep their
// data's address (resource_data), 6 are too few for it ("uncached").  Run as
//   node --allow-natives-syntax --expose-externalize-string frames.js
// A non-ASCII character (→) makes this file's source a two-byte string.
'use strict';
const { Worker } = require('node:worker_threads');
const path = require('node:path');
const fs = require('node:fs');
const util = require('node:util');

function named(a, b) { // @named
  return a + b;
}
const arrow = (x) => x * 2; // @arrow
function id(f) { return f; }
const anon = id(function () { return 1; }); // @anon
const o = {};
o.prop = function () { return 4; }; // @inferred
class Klass {
  method(y) { // @method
    return y + 1;
  }
  static st() { return 2; } // @static
}
function outer() {
  function inner() { return 3; } // @inner
  return inner;
}
const selfRef = function fe(n) { return n > 0 ? fe(n - 1) : 0; }; // @fe
function π() { return 5; } // @pi
function lazy() { return 6; } // @lazy
function many() { // @many
  let v0 = 0,v1 = 1,v2 = 2,v3 = 3,v4 = 4,v5 = 5,v6 = 6,v7 = 7,v8 = 8,v9 = 9,v10 = 10,v11 = 11,v12 = 12,v13 = 13,v14 = 14,v15 = 15,v16 = 16,v17 = 17,v18 = 18,v19 = 19,v20 = 20,v21 = 21,v22 = 22,v23 = 23,v24 = 24,v25 = 25,v26 = 26,v27 = 27,v28 = 28,v29 = 29,v30 = 30,v31 = 31,v32 = 32,v33 = 33,v34 = 34,v35 = 35,v36 = 36,v37 = 37,v38 = 38,v39 = 39,v40 = 40,v41 = 41,v42 = 42,v43 = 43,v44 = 44,v45 = 45,v46 = 46,v47 = 47,v48 = 48,v49 = 49,v50 = 50,v51 = 51,v52 = 52,v53 = 53,v54 = 54,v55 = 55,v56 = 56,v57 = 57,v58 = 58,v59 = 59,v60 = 60,v61 = 61,v62 = 62,v63 = 63,v64 = 64,v65 = 65,v66 = 66,v67 = 67,v68 = 68,v69 = 69,v70 = 70,v71 = 71,v72 = 72,v73 = 73,v74 = 74,v75 = 75,v76 = 76,v77 = 77,v78 = 78,v79 = 79;
  return () => v0+v1+v2+v3+v4+v5+v6+v7+v8+v9+v10+v11+v12+v13+v14+v15+v16+v17+v18+v19+v20+v21+v22+v23+v24+v25+v26+v27+v28+v29+v30+v31+v32+v33+v34+v35+v36+v37+v38+v39+v40+v41+v42+v43+v44+v45+v46+v47+v48+v49+v50+v51+v52+v53+v54+v55+v56+v57+v58+v59+v60+v61+v62+v63+v64+v65+v66+v67+v68+v69+v70+v71+v72+v73+v74+v75+v76+v77+v78+v79;
}

function waiter(ms) { // @waiter
  const cell = new Int32Array(new SharedArrayBuffer(4));
  new Error().stack; // V8 collects this function's source positions
  Atomics.wait(cell, 0, 0, ms); // @wait
  return cell[0];
}
function bwaiter(ms) { // @bwaiter
  return waiter(ms) + 1; // @bcall
}

// The 1-based line of @text in node's source of @module, after @after's.
function nodeLine(module, text, after) {
  const src = process.binding('natives')[module];
  const at = src.indexOf(text, after ? src.indexOf(after) : 0);
  return at < 0 ? 0 : src.slice(0, at).split('\n').length;
}

const extCached = 'xy'.repeat(50), extUncached = 'xy'.repeat(3);
externalizeString(extCached);
externalizeString(extUncached);

process.noDeprecation = true;
const deprecated = util.deprecate(() => bwaiter(60000), 'frames.js: a node-internal frame');
const lines = {
  readFileSync: nodeLine('fs', 'function readFileSync('),
  refresh: nodeLine('internal/timers', '  refresh() {', 'class Timeout'),
  deprecated: nodeLine('internal/util', 'function deprecated(', 'function deprecate('),
  deprecatedcall: nodeLine('internal/util', 'return ReflectApply(fn, this, args);',
                           'function deprecate('),
};
for (const [label, line] of Object.entries(lines))
  console.log(`line_${label} ${line}`);

named(1, 2); arrow(1); anon(); o.prop(); new Klass().method(1); Klass.st();
outer()(); selfRef(3); π(); many()();
const fns = { named, arrow, anon, inferred: o.prop, method: Klass.prototype.method,
  static: Klass.st, inner: outer(), fe: selfRef, pi: π, lazy, many, waiter, bwaiter,
  readFileSync: fs.readFileSync, refresh: setTimeout(() => {}, 0).refresh, deprecated };
for (const [label, fn] of Object.entries(fns)) {
  %DebugPrint('label_' + label);
  %DebugPrint(fn);
}
%CompileBaseline(bwaiter);
const w = new Worker(path.join(__dirname, 'worker.js'));
w.on('message', () => {
  // printed last: nothing allocates (nor moves them) before the wait
  %DebugPrint('label_extcached');
  %DebugPrint(extCached);
  %DebugPrint('label_extuncached');
  %DebugPrint(extUncached);
  %DebugPrint('label_ready');
  // the test reads this thread's stack now: a minute at most
  deprecated();
  process.exit(0);
});
