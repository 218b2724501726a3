//! Build script of `lanejit-jit`: `LANEJIT_BUILD_ID`, a SHA-256 over the sources that decide
//! what compiled code looks like (this crate's and the interpreter's sources, and the lock
//! file, which pins Cranelift), so the on-disk code cache (`src/diskcache.rs`) never hands
//! one build's code to another.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let inputs = [
        here.join("src"),
        here.join("../interp/src"),
        here.join("../Cargo.lock"),
    ];
    let mut all = Vec::new();
    for p in &inputs {
        println!("cargo:rerun-if-changed={}", p.display());
        if p.is_dir() {
            files(p, &mut all);
        } else {
            all.push(p.clone());
        }
    }
    all.sort();
    let mut h = Sha256::new();
    h.update(std::env::var("CARGO_PKG_VERSION").unwrap_or_default());
    h.update(std::env::var("PROFILE").unwrap_or_default());
    for f in &all {
        let rel = f.strip_prefix(&here).unwrap_or(f);
        h.update(rel.to_string_lossy().as_bytes());
        h.update([0]);
        h.update(std::fs::read(f).unwrap_or_default());
    }
    let id: String = h
        .finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=LANEJIT_BUILD_ID={id}");
}
