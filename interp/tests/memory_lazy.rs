//! Guest memory is reserved, not committed: mapping gigabytes (or a page just below the
//! largest memory limit, 2^40) costs no resident memory until the guest touches it.

use lanejit_interp::machine::{Config, Machine};
use lanejit_interp::program::{MAX_MEM_LIMIT, MemPerm, MemRange, Program};

/// Resident set size of this process in bytes (Linux).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("Linux /proc");
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

fn program(start: u64, len: u64) -> Program {
    Program {
        mem_map: vec![MemRange {
            start,
            len,
            perm: MemPerm::Rw,
        }],
        ..Program::default()
    }
}

#[test]
fn mapping_gigabytes_commits_no_memory() {
    let before = rss();
    // Almost the whole default 4 GiB limit.
    let p = program(0x1000, (4u64 << 30) - 0x1000);
    let mut m = Machine::new(&p, Config::default()).expect("4 GiB reserves");
    // Touch two far-apart pages through the host path.
    m.mem_mut()
        .and_then(|mem| mem.bytes_mut(0x1000, 8))
        .unwrap()
        .copy_from_slice(&7u64.to_le_bytes());
    m.mem_mut()
        .and_then(|mem| mem.bytes_mut((4u64 << 30) - 8, 8))
        .unwrap()
        .copy_from_slice(&9u64.to_le_bytes());
    let grown = rss().saturating_sub(before);
    assert!(grown < 16 << 20, "mapping 4 GiB committed {grown} bytes");
    assert_eq!(m.mem.bytes(0x1000, 8).unwrap(), 7u64.to_le_bytes());
    assert_eq!(m.mem.bytes(0x2000, 8).unwrap(), [0; 8]);
}

#[test]
fn a_page_below_the_largest_limit_is_cheap() {
    let before = rss();
    let p = program(MAX_MEM_LIMIT - 0x1000, 0x1000);
    let config = Config {
        mem_limit: MAX_MEM_LIMIT,
        ..Config::default()
    };
    let m = Machine::new(&p, config).expect("2^40 reserves lazily");
    assert!(m.mem.range_mapped(MAX_MEM_LIMIT - 0x1000, 0x1000));
    assert!(!m.mem.range_mapped(MAX_MEM_LIMIT - 0x2000, 1));
    let grown = rss().saturating_sub(before);
    assert!(
        grown < 16 << 20,
        "mapping a page at 2^40 committed {grown} bytes"
    );
}

#[test]
fn mapping_beyond_the_limit_is_refused() {
    let p = program(0x1000, 0x2000);
    let config = Config {
        mem_limit: 0x2000,
        ..Config::default()
    };
    assert!(Machine::new(&p, config).is_err());
}
