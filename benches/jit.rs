//! Criterion benches of the JIT's costs: region compile latency (every region the JIT compiles
//! for a bench kernel, each compiled into a fresh JIT whose construction is excluded) and
//! tier-up (one cold tiered run of each kernel at 16 KiB: interpretation until the loop is
//! hot, compile, then compiled code). See benches/README.md.

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use lanejit::bench::{JitRunner, Kernel, Which, Workload};

fn compile_latency(c: &mut Criterion) {
    let mut g = c.benchmark_group("compile");
    g.sample_size(20);
    for kernel in Kernel::ALL {
        let mut w = Workload::new(kernel, 16 << 10, 32).expect("workload");
        w.verify().expect("engines agree with native");
        let pcs = w.jit_runner().compiled_pcs().to_vec();
        g.throughput(Throughput::Elements(1));
        for pc in pcs {
            g.bench_function(BenchmarkId::new(kernel.name(), format!("pc{pc:#x}")), |b| {
                b.iter_batched(
                    || JitRunner::new(w.decoded(), w.machine(), 0).expect("jit"),
                    |mut j| {
                        j.jit_mut().compile(pc).expect("compile");
                        j
                    },
                    BatchSize::PerIteration,
                )
            });
        }
    }
    g.finish();
}

fn tier_up(c: &mut Criterion) {
    let mut g = c.benchmark_group("tier_up");
    g.sample_size(20);
    for kernel in Kernel::ALL {
        let mut w = Workload::new(kernel, 16 << 10, 32).expect("workload");
        w.verify().expect("engines agree with native");
        g.throughput(Throughput::Elements(w.elements()));
        g.bench_function(BenchmarkId::new(kernel.name(), "16 KiB"), |b| {
            w.restore();
            b.iter(|| w.run(Which::Tiered).expect("run"))
        });
    }
    g.finish();
}

// In a private module: `criterion_group!` defines an undocumented `pub fn benches`.
mod group {
    use super::*;
    criterion_group!(benches, compile_latency, tier_up);
}
criterion_main!(group::benches);
