//! The code cache across runs (`--code-cache DIR`, or the `LANEJIT_CODE_CACHE` environment
//! variable): compiled regions stored on disk, so the second run of a kernel compiles nothing.
//!
//! # What makes an entry reusable
//! Compiled code embeds no host address: helpers are called through the context's helper
//! table (`abi::HELPERS`), guest state through the context block, and constants are
//! addressed relative to the code. A region's machine code is therefore the same bytes in
//! every process, and an entry holds just those bytes, the form they were compiled in and the
//! IR size they cost (for the program's compile budget). Code with any relocation is not
//! stored (none is emitted today; the check keeps it so).
//!
//! # Keys
//! An entry's identity is a SHA-256 over: this build of lanejit ([`BUILD_ID`], a digest of
//! the interpreter's and the JIT's sources and of the lock file, so a rebuilt lanejit never
//! reads another build's code), the host's code-generator flags (CPU features), every word
//! of the program, and the region's key (pc, VL, `--strict-align`, limit mode, straight or
//! hot form). The file name is derived from it, and the file repeats it. The hints of the
//! entry that made a region compile (`region::Hints`: whether a loop's tail was compiled into
//! its function, which lane vectors got a contiguous alternative) are not part of the key:
//! every form is exact, and an entry keeps the form of the run that stored it (a later run
//! whose rows have tails then runs them in the straight form of the body; one whose lane
//! vectors differ takes the lanes).
//!
//! # Manifests
//! Besides the entries, a JIT records which regions it had (their start pcs) in a manifest
//! per program and configuration when it is dropped. A later JIT of the same program and
//! configuration installs those regions as soon as it is given the cache, before the run
//! starts, so a tiered run with a warm cache runs compiled code from each region's first entry
//! instead of interpreting until the region is hot; regions the manifest names but the cache
//! no longer holds are left to the usual tier-up (nothing is compiled ahead).
//!
//! # Trust
//! Entries are written to a temporary file in the directory, then renamed: a reader sees a
//! whole entry or none, and two processes may share a directory at the same time (the last
//! rename wins; both entries are correct). On reading, an entry whose magic, format version,
//! identity, lengths or trailing SHA-256 of its contents do not match is ignored (counted in
//! [`DiskStats::rejected`]) and the region is compiled as usual. This protects against
//! truncated, corrupted, foreign and stale files; it is not a defence against someone who can
//! write the directory on purpose (they could as well replace the lanejit binary): the
//! directory must be as trusted as the program itself, as with wasmtime's cache.

use crate::Plan;
use crate::cache::Key;
use sha2::{Digest, Sha256};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A digest of the sources this build of lanejit compiles code with (from `build.rs`).
pub const BUILD_ID: &str = env!("LANEJIT_BUILD_ID");

/// File magic and format version.
const MAGIC: &[u8; 8] = b"LJCODE\x00\x01";
/// Bytes before the code: magic, identity, plan, straight flag, IR size, alignment, length.
const HEADER: usize = 8 + 32 + 1 + 1 + 4 + 4 + 4;
/// Largest code an entry may hold (compiled regions are far smaller).
const MAX_CODE: usize = 64 << 20;

/// Counters of one directory's use, for tests and statistics.
#[derive(Debug, Default)]
pub struct DiskStats {
    /// Entries found and used.
    pub hits: AtomicU64,
    /// Lookups that found no entry.
    pub misses: AtomicU64,
    /// Entries found but ignored (truncated, corrupt, foreign or of another build).
    pub rejected: AtomicU64,
    /// Entries written.
    pub stored: AtomicU64,
    /// Entries that could not be written (the run goes on without them).
    pub store_errors: AtomicU64,
}

/// A code-cache directory.
#[derive(Debug)]
pub struct DiskCache {
    dir: PathBuf,
    /// Use counters.
    pub stats: DiskStats,
}

/// A compiled region as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stored {
    /// The form it was compiled in.
    pub(crate) plan: Plan,
    /// Whether a loop over budget was compiled as the straight-line form of its body.
    pub(crate) straight_body: bool,
    /// Whether it is the `LOOP` alone (`region::loop_alone`).
    pub(crate) loop_alone: bool,
    /// Cranelift IR instructions it cost.
    pub(crate) ir_insts: u32,
    /// Code alignment.
    pub(crate) align: u32,
    /// Machine code.
    pub(crate) code: Vec<u8>,
}

/// The part of an entry's identity common to every region of one JIT (build, host, program).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Prefix([u8; 32]);

impl Prefix {
    /// No prefix yet: a JIT without a disk cache never keys an entry, and one given a cache
    /// makes its prefix then (`Jit::set_disk_cache`).
    pub(crate) const NONE: Prefix = Prefix([0; 32]);

    /// The prefix for `words` compiled under code-generator flags `host`.
    pub(crate) fn new(words: &[u64], host: &str) -> Prefix {
        let mut h = Sha256::new();
        h.update(b"lanejit code cache\x00");
        h.update(BUILD_ID.as_bytes());
        h.update([0]);
        h.update(host.as_bytes());
        h.update([0]);
        h.update((words.len() as u64).to_le_bytes());
        for w in words {
            h.update(w.to_le_bytes());
        }
        Prefix(h.finalize().into())
    }

    /// The identity of the region of `key`.
    fn identity(&self, key: &Key) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(self.0);
        h.update(key.pc.to_le_bytes());
        h.update(key.vl.to_le_bytes());
        h.update([
            key.strict_align as u8,
            key.budgeted as u8,
            key.straight as u8,
            key.hot as u8,
        ]);
        h.finalize().into()
    }
}

fn plan_byte(p: Plan) -> u8 {
    match p {
        Plan::Registers => 0,
        Plan::Memory => 1,
        Plan::Interpret => 2,
    }
}

fn plan_of(b: u8) -> Option<Plan> {
    Some(match b {
        0 => Plan::Registers,
        1 => Plan::Memory,
        2 => Plan::Interpret,
        _ => return None,
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl DiskCache {
    /// The cache in directory `dir`, created if missing.
    pub fn open(dir: &Path) -> std::io::Result<DiskCache> {
        std::fs::create_dir_all(dir)?;
        Ok(DiskCache {
            dir: dir.to_path_buf(),
            stats: DiskStats::default(),
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, id: &[u8; 32]) -> PathBuf {
        self.dir.join(format!("{}.ljc", hex(&id[..16])))
    }

    /// Whether a file is stored for `key` (valid or not; not counted in the statistics):
    /// then [`DiskCache::load`] is worth trying.
    pub(crate) fn has(&self, prefix: &Prefix, key: &Key) -> bool {
        self.path(&prefix.identity(key)).exists()
    }

    /// The entry of `key`, if a valid one is stored.
    pub(crate) fn load(&self, prefix: &Prefix, key: &Key) -> Option<Stored> {
        let id = prefix.identity(key);
        let bytes = match std::fs::read(self.path(&id)) {
            Ok(b) => b,
            Err(_) => {
                self.stats.misses.fetch_add(1, Ordering::Relaxed);
                return None;
            }
        };
        let got = parse(&bytes, &id);
        let counter = if got.is_some() {
            &self.stats.hits
        } else {
            &self.stats.rejected
        };
        counter.fetch_add(1, Ordering::Relaxed);
        got
    }

    /// Store `entry` as the region of `key` (atomically: a temporary file, then a rename).
    /// Failures are counted and otherwise ignored.
    pub(crate) fn store(&self, prefix: &Prefix, key: &Key, entry: &Stored) {
        let id = prefix.identity(key);
        let counter = match self.write(&id, entry) {
            Ok(()) => &self.stats.stored,
            Err(_) => &self.stats.store_errors,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn write(&self, id: &[u8; 32], e: &Stored) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(HEADER + e.code.len() + 32);
        buf.extend_from_slice(MAGIC);
        buf.extend_from_slice(id);
        buf.push(plan_byte(e.plan));
        buf.push(e.straight_body as u8 | (e.loop_alone as u8) << 1);
        buf.extend_from_slice(&e.ir_insts.to_le_bytes());
        buf.extend_from_slice(&e.align.to_le_bytes());
        buf.extend_from_slice(&(e.code.len() as u32).to_le_bytes());
        buf.extend_from_slice(&e.code);
        let sum: [u8; 32] = Sha256::digest(&buf).into();
        buf.extend_from_slice(&sum);
        // Unique among processes (pid) and among this process's threads and calls (`SEQ`).
        let tmp = self.dir.join(format!(
            ".tmp-{}-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed),
            hex(&id[..8])
        ));
        let written = std::fs::File::create(&tmp).and_then(|mut f| f.write_all(&buf));
        let renamed = written.and_then(|()| std::fs::rename(&tmp, self.path(id)));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        renamed
    }
}

impl DiskCache {
    fn manifest_path(&self, prefix: &Prefix, key: &Key) -> PathBuf {
        let id = prefix.identity(&Key {
            pc: u64::MAX,
            ..*key
        });
        self.dir.join(format!("{}.manifest", hex(&id[..16])))
    }

    /// The region starts a JIT of this program and configuration (`key`'s VL, alignment and
    /// limit mode) compiled or loaded last time, from its manifest (none when missing or
    /// unreadable; malformed lines are skipped).
    pub(crate) fn manifest(&self, prefix: &Prefix, key: &Key) -> Vec<u64> {
        let Ok(text) = std::fs::read_to_string(self.manifest_path(prefix, key)) else {
            return Vec::new();
        };
        let mut lines = text.lines();
        if lines.next() != Some(MANIFEST) {
            return Vec::new();
        }
        lines
            .take(1 << 20)
            .filter_map(|l| u64::from_str_radix(l.trim(), 16).ok())
            .filter(|pc| pc % 8 == 0)
            .collect()
    }

    /// Record `pcs` as the regions of this program and configuration (atomically).
    pub(crate) fn write_manifest(&self, prefix: &Prefix, key: &Key, pcs: &[u64]) {
        let mut text = format!("{MANIFEST}\n");
        for pc in pcs {
            text.push_str(&format!("{pc:x}\n"));
        }
        let path = self.manifest_path(prefix, key);
        let tmp = self.dir.join(format!(
            ".tmp-{}-{}-manifest",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let ok = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &path));
        if ok.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// First line of a manifest (its format).
const MANIFEST: &str = "lanejit region manifest 1";

/// Unique temporary-file numbers within this process.
static SEQ: AtomicU64 = AtomicU64::new(0);

/// The entry in `b` if it is whole, uncorrupted and has identity `id`.
fn parse(b: &[u8], id: &[u8; 32]) -> Option<Stored> {
    if b.len() < HEADER + 32 || &b[..8] != MAGIC || &b[8..40] != id {
        return None;
    }
    let (body, sum) = b.split_at(b.len() - 32);
    if Sha256::digest(body).as_slice() != sum {
        return None;
    }
    let u32_at = |o: usize| u32::from_le_bytes(body[o..o + 4].try_into().expect("4 bytes"));
    let len = u32_at(50) as usize;
    let align = u32_at(46);
    if len == 0 || len > MAX_CODE || body.len() != HEADER + len || !align.is_power_of_two() {
        return None;
    }
    Some(Stored {
        plan: plan_of(body[40])?,
        straight_body: match body[41] {
            0 | 2 => false,
            1 => true,
            _ => return None,
        },
        loop_alone: body[41] == 2,
        ir_insts: u32_at(42),
        align,
        code: body[HEADER..].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(pc: u64) -> Key {
        Key {
            pc,
            vl: 8,
            strict_align: false,
            budgeted: false,
            straight: false,
            hot: false,
        }
    }

    fn entry() -> Stored {
        Stored {
            plan: Plan::Registers,
            straight_body: false,
            loop_alone: false,
            ir_insts: 123,
            align: 16,
            code: vec![0xc3; 40],
        }
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lanejit-dc-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn entries_round_trip_and_are_keyed_by_program_host_and_region() {
        let d = dir("rt");
        let c = DiskCache::open(&d).expect("dir");
        let p = Prefix::new(&[1, 2, 3], "avx2");
        c.store(&p, &key(0x10), &entry());
        assert_eq!(c.load(&p, &key(0x10)), Some(entry()));
        assert_eq!(c.load(&p, &key(0x18)), None);
        assert_eq!(c.load(&Prefix::new(&[1, 2, 4], "avx2"), &key(0x10)), None);
        assert_eq!(c.load(&Prefix::new(&[1, 2, 3], "sse"), &key(0x10)), None);
        let hot = Key {
            hot: true,
            ..key(0x10)
        };
        assert_eq!(c.load(&p, &hot), None);
        assert_eq!(c.stats.hits.load(Ordering::Relaxed), 1);
        assert_eq!(c.stats.misses.load(Ordering::Relaxed), 4);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn truncated_corrupted_and_foreign_entries_are_ignored() {
        let d = dir("bad");
        let c = DiskCache::open(&d).expect("dir");
        let p = Prefix::new(&[7], "h");
        c.store(&p, &key(0), &entry());
        let file = std::fs::read_dir(&d)
            .expect("dir")
            .map(|e| e.expect("entry").path())
            .find(|f| f.extension().is_some_and(|x| x == "ljc"))
            .expect("an entry");
        let good = std::fs::read(&file).expect("read");
        let mut cases: Vec<Vec<u8>> = vec![good[..good.len() - 1].to_vec(), Vec::new()];
        for i in [0, 9, 40, 50, HEADER + 3, good.len() - 1] {
            let mut b = good.clone();
            b[i] ^= 1;
            cases.push(b);
        }
        for (n, bad) in cases.iter().enumerate() {
            std::fs::write(&file, bad).expect("write");
            assert_eq!(c.load(&p, &key(0)), None, "case {n}");
        }
        assert_eq!(c.stats.rejected.load(Ordering::Relaxed), cases.len() as u64);
        // An entry of another region copied over this one's name is foreign.
        c.store(&p, &key(8), &entry());
        let other = std::fs::read_dir(&d)
            .expect("dir")
            .map(|e| e.expect("entry").path())
            .find(|f| *f != file && f.extension().is_some_and(|x| x == "ljc"))
            .expect("the other entry");
        std::fs::copy(&other, &file).expect("copy");
        assert_eq!(c.load(&p, &key(0)), None);
        std::fs::write(&file, &good).expect("write");
        assert_eq!(c.load(&p, &key(0)), Some(entry()));
        let _ = std::fs::remove_dir_all(&d);
    }
}
