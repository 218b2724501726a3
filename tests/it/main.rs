//! The root crate's integration tests, as one test binary (one link instead of seven):
//! every engine on the interpreter's tests (`all_engines`), the bench kernels, the command
//! line (`cli`), the debugger (`debug`), the embedding API and its examples (`embed`), the
//! engine harness (`engines`), the fuzz corpus, smoke campaign and shards, launches of many
//! groups (`launches`), and the JIT's profiler symbols, region report and dumps (`observe`).
//! Run one part with `cargo test --test it cli::`. The resource bounds of the CLI are a test
//! binary of their own (`tests/resources.rs`: a child's peak RSS counts its parent's).

mod all_engines;
mod bench_kernels;
mod cli;
mod code_cache;
mod debug;
mod embed;
mod engines;
mod fuzz_corpus;
mod fuzz_shards;
mod fuzz_smoke;
mod launches;
mod observe;

// The interpreter's shared test support calls `crate::run_setup`: here, every engine's.
use all_engines::run_setup;
