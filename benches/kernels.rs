//! Criterion benches of the bench kernels: element throughput of every kernel on the
//! interpreter, the JIT (steady state, regions cached), the tiered VM (cold, compile included)
//! and the native Rust reference loop (plus memcpy beside copy32), at 16 KiB and 256 KiB of
//! source data. `LANEJIT_BENCH_LARGE=1` adds 64 MiB. See benches/README.md.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use lanejit::bench::report::size_name;
use lanejit::bench::{Kernel, SIZES, Which, Workload};
use std::time::Duration;

fn kernels(c: &mut Criterion) {
    let large = std::env::var_os("LANEJIT_BENCH_LARGE").is_some_and(|v| v != "0");
    let sizes: &[u64] = if large { &SIZES } else { &SIZES[..2] };
    for kernel in Kernel::ALL {
        let mut g = c.benchmark_group(kernel.name());
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1));
        for &size in sizes {
            let mut w = Workload::new(kernel, size, 32).expect("workload");
            w.verify().expect("engines agree with native");
            g.throughput(Throughput::Elements(w.elements()));
            let mut engines = Which::ENGINES.to_vec();
            if kernel == Kernel::Copy32 {
                engines.push(Which::Memcpy);
            }
            for e in engines {
                g.bench_function(BenchmarkId::new(e.name(), size_name(size)), |b| {
                    w.restore();
                    b.iter(|| w.run(e).expect("run"))
                });
            }
        }
        g.finish();
    }
}

// In a private module: `criterion_group!` defines an undocumented `pub fn benches`.
mod group {
    use super::*;
    criterion_group!(benches, kernels);
}
criterion_main!(group::benches);
