// A JVM workload with a known split: spinA and spinB, called from main
// through two levels, each run for its share of the time by its own
// clock (75:25), until the seconds given (default 30) are over.  Prints
// "ready" once each has run long enough to be compiled by C2.
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

	static void work(long until) {
		long a = 0, b = 0;
		while (System.nanoTime() < until) {
			long t0 = System.nanoTime();
			while (System.nanoTime() - t0 < 3_000_000)
				sink += spinA(sink);
			long t1 = System.nanoTime();
			while (System.nanoTime() - t1 < 1_000_000)
				sink += spinB(sink);
			a += t1 - t0;
			b += System.nanoTime() - t1;
		}
		System.out.printf("own split %d:%d%n", a, b);
	}

	static void stage(long until) {
		work(until);
	}

	public static void main(String[] args) throws Exception {
		long secs = args.length > 0 ? Long.parseLong(args[0]) : 30;
		long start = System.nanoTime();
		stage(start + 2_000_000_000L);
		System.out.println("ready");
		System.out.flush();
		stage(start + secs * 1_000_000_000L);
	}
}
