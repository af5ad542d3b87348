// SPDX-License-Identifier: MIT
//! sym_rust: CPU time in a generic method inside a module, so its symbol is
//! a mangled Rust path (legacy: `_ZN8sym_rust5outer14Thing$LT$T$GT$6crunch17h..E`,
//! v0: `_RNvMNtCs.._8sym_rust5outerINtB2_5ThingmE6crunchB4_`) that the profile
//! must show demangled.  Built by tests/e2e/test_symbols.sh with rustc.
//! sym_rust [SECONDS]; prints its pid.

mod outer {
    pub struct Thing<T>(pub T);

    impl<T: Copy + Into<u64>> Thing<T> {
        #[inline(never)]
        pub fn crunch(&self, n: u64) -> u64 {
            let mut s = 0u64;
            for i in 0..n {
                s = s.wrapping_add(std::hint::black_box(i ^ self.0.into()));
            }
            s
        }
    }
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10.0);
    let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
    let t = outer::Thing(3u32);
    let mut sink = 0u64;

    println!("{}", std::process::id());
    while std::time::Instant::now() < end {
        sink = sink.wrapping_add(t.crunch(200_000));
    }
    std::process::exit((sink == 42) as i32);
}
