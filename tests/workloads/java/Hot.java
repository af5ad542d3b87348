// A JVM workload with a known split: spinA and spinB, called from main
// through two levels, each run for its share of the time by its own
// clock (75:25 of its CPU time), until the seconds given (default 30) are over.  Prints
// "ready" once each has run long enough to be compiled by C2.  With a
// second argument N, N threads (worker-0...) do it at once, each printing
// its own split at the end.
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class Hot {
	static volatile long sink;

	static long spinA(long n) {
		long x = n;
		for (int i = 0; i < 20000; i++) // Hot.spinA body
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static long spinB(long n) {
		long x = n;
		for (int i = 0; i < 20000; i++) // Hot.spinB body
			x = (x ^ (x >>> 7)) * 0x9E3779B97F4A7C15L;
		return x;
	}

	// Each phase runs 3 and 1 ms of real time; the split is of the
	// thread's CPU time in each, as a profiler sees it (on a busy host,
	// or with more threads than CPUs, real time is not CPU time).
	static void work(long until) {
		ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		long a = 0, b = 0;
		while (System.nanoTime() < until) {
			long t0 = System.nanoTime(), c0 = mx.getCurrentThreadCpuTime();
			while (System.nanoTime() - t0 < 3_000_000)
				sink += spinA(sink);
			long t1 = System.nanoTime(), c1 = mx.getCurrentThreadCpuTime();
			while (System.nanoTime() - t1 < 1_000_000)
				sink += spinB(sink);
			a += c1 - c0;
			b += mx.getCurrentThreadCpuTime() - c1;
		}
		System.out.printf("own split %d:%d%n", a, b);
	}

	static void stage(long until) {
		work(until);
	}

	public static void main(String[] args) throws Exception {
		long secs = args.length > 0 ? Long.parseLong(args[0]) : 30;
		int threads = args.length > 1 ? Integer.parseInt(args[1]) : 0;
		long start = System.nanoTime();
		if (threads > 0) {
			// as many threads named worker-N doing the same, main waiting
			Thread[] t = new Thread[threads];
			for (int i = 0; i < threads; i++) {
				t[i] = new Thread(() -> stage(start + secs * 1_000_000_000L), "worker-" + i);
				t[i].start();
			}
			Thread.sleep(2000);
			System.out.println("ready");
			System.out.flush();
			for (Thread x : t)
				x.join();
			return;
		}
		stage(start + 2_000_000_000L);
		System.out.println("ready");
		System.out.flush();
		stage(start + secs * 1_000_000_000L);
	}
}
