// A Node.js workload with a known split: spinA and spinB, called from
// main through two levels (stage, work), each run for its share of the
// thread's CPU time by its own clock (75:25), until the seconds given
// (default 30) are over.  Prints "ready" after its first second (V8 has
// compiled spinA and spinB by then), and "own split A:B" (nanoseconds of
// the thread's CPU time in each) at the end.
//   node split.js SECS            on the main thread
//   node split.js SECS worker     in a worker_threads worker, main waiting
//   node split.js SECS tiers      coldC in spinB's place, never optimized,
//                                 and prints how V8 ran spinA and coldC
//                                 (needs --allow-natives-syntax): spinA by
//                                 TurboFan, coldC as baseline code, or
//                                 interpreted with --no-sparkplug
'use strict';
const fs = require('fs');
const { Worker, isMainThread, workerData } = require('worker_threads');

// The thread's CPU time in ns: schedstat's first field, the kernel's own
// count of the time this thread ran (thread-self: a worker's is its own).
function cpuNs() {
	return Number(fs.readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);
}

let sink = 1;

// A line out: a worker's through its parent, which is waiting.
function say(line) {
	if (isMainThread)
		console.log(line);
	else
		require('worker_threads').parentPort.postMessage(line);
}

function spinA(n) {
	let x = n;
	for (let i = 0; i < 100000; i++) // spinA body
		x = (x * 1103515245 + 12345) % 2147483648;
	return x;
}

function spinB(n) {
	let x = n;
	for (let i = 0; i < 100000; i++) // spinB body
		x = (x ^ (x >>> 7)) * 31 % 2147483647;
	return x;
}

// Called only where it is kept interpreted (tiers): a loop of its own.
function coldC(n) {
	let x = n;
	for (let i = 0; i < 30000; i++) // coldC body
		x = (x + i * 7) % 1000003;
	return x;
}

// Each phase runs 3 and 1 ms of real time; the split is of the thread's
// CPU time in each, as a profiler sees it.
function work(until, tiers) {
	const ready = Date.now() + 1000;
	let a = 0, b = 0, told = false;
	while (Date.now() < until) {
		if (!told && Date.now() >= ready) {
			told = true;
			say('ready');
		}
		const t0 = process.hrtime.bigint(), c0 = cpuNs();
		while (process.hrtime.bigint() - t0 < 3000000n)
			sink = spinA(sink) + 1;
		const t1 = process.hrtime.bigint(), c1 = cpuNs();
		while (process.hrtime.bigint() - t1 < 1000000n)
			sink = (tiers ? coldC(sink) : spinB(sink)) + 1;
		a += c1 - c0;
		b += cpuNs() - c1;
	}
	return [a, b];
}

function stage(until, tiers) {
	return work(until, tiers);
}

function report(split, tiers) {
	console.log(`own split ${split[0]}:${split[1]}`);
	if (tiers) {
		// %GetOptimizationStatus's bits: 64 TurboFan, 128 interpreted, 32768 baseline
		const s = (f) => eval('%GetOptimizationStatus(f)');
		console.log(`tiers spinA ${s(spinA)} coldC ${s(coldC)}`);
	}
}

function main(secs, mode) {
	const tiers = mode === 'tiers';
	if (tiers)
		eval('%NeverOptimizeFunction(coldC)');
	report(stage(Date.now() + secs * 1000, tiers), tiers);
}

if (isMainThread) {
	const secs = Number(process.argv[2] || 30), mode = process.argv[3] || '';
	if (mode === 'worker') {
		const w = new Worker(__filename, { workerData: { secs } });
		w.on('message', (m) => console.log(m));
		w.on('exit', () => {});
	} else {
		main(secs, mode);
	}
} else {
	const split = stage(Date.now() + workerData.secs * 1000, false);
	say(`own split ${split[0]}:${split[1]}`);
}
