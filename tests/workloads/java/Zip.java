// A JVM workload whose time goes to native code through JNI: Deflater's
// deflate (java.util.zip, native in libzip, then zlib's deflate) on data
// that compresses some, called from compress() under main, until the
// seconds given (default 30) are over.  Prints "ready" after 2 s.
import java.util.zip.Deflater;

public class Zip {
	static volatile long sink;

	static long compress(Deflater d, byte[] in, byte[] out) {
		d.reset();
		d.setInput(in);
		d.finish();
		long n = 0;
		while (!d.finished())
			n += d.deflate(out);
		return n;
	}

	public static void main(String[] args) {
		long secs = args.length > 0 ? Long.parseLong(args[0]) : 30;
		long start = System.nanoTime();
		byte[] in = new byte[1 << 20], out = new byte[1 << 16];
		long x = 88172645463325252L;
		for (int i = 0; i < in.length; i++) {
			x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
			in[i] = (byte) ('a' + (x & 15)); // 16 letters: compressible, not trivially
		}
		Deflater d = new Deflater(6);
		boolean told = false;
		while (System.nanoTime() - start < secs * 1_000_000_000L) {
			sink += compress(d, in, out);
			if (!told && System.nanoTime() - start > 2_000_000_000L) {
				System.out.println("ready");
				System.out.flush();
				told = true;
			}
		}
	}
}
