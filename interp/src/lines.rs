//! The line table: which source file and line every code word of a [`crate::program::Program`]
//! came from, for trap lines and the commit-log trace.
//!
//! The table is run-length: a run is a range of consecutive code words that share one
//! `(file, line)`, so an `S.LI` (two words) or the `NOP` padding of an `.align` is one run, and
//! the table has about one run per instruction. File names are kept once, in the order in which
//! code first uses them. The assembler fills the table from the source lines (or from `.file`
//! and `.loc` directives, which override them: that is how `lanejit disasm` output re-assembles
//! to the same table), the container stores it (version 3), and a program built in code has
//! an empty one (no source lines known).
//!
//! A table is **canonical** when [`LineTable::validate`] accepts it: empty, or runs that start
//! at word 0, go strictly up, end at the code's end, name known files, have lines from 1, and
//! differ from their predecessor in file or line; every file used, named once, and listed in
//! order of first use. The assembler only builds canonical tables and the container reader
//! only accepts them, so a table reads back, disassembles and re-assembles to the same bytes.

use std::collections::HashMap;

/// One run of the table: from word `start` up to the next run's start (the last run: up to
/// the end of the code), every word came from `files[file]`, line `line`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LineRun {
    /// First code word (pc / 8).
    pub start: u64,
    /// Index into [`LineTable::files`].
    pub file: u32,
    /// 1-based source line.
    pub line: u32,
}

/// Source file and line of every code word (empty: unknown).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LineTable {
    /// File names, in order of first use.
    pub files: Vec<String>,
    /// Runs, by start.
    pub runs: Vec<LineRun>,
    /// Code words covered (the program's code length; 0 for an empty table).
    pub words: u64,
}

/// Why a line table is not canonical.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineTableError {
    /// Runs but no code, or code not covered to its end.
    #[error("the runs cover {covered} code words, the code has {words}")]
    Coverage {
        /// Words the runs cover.
        covered: u64,
        /// Words of code.
        words: u64,
    },
    /// A run that starts nowhere near where it should.
    #[error("run {0} does not start after the previous one (the first starts at word 0)")]
    Order(usize),
    /// A run naming a file the table does not list.
    #[error("run {0} names a file the table does not list")]
    NoFile(usize),
    /// A run with line 0.
    #[error("run {0} has line 0 (lines count from 1)")]
    LineZero(usize),
    /// A run with the same file and line as the one before it.
    #[error("run {0} repeats the file and line of the run before it")]
    NotCoalesced(usize),
    /// A file listed twice, unused, or out of first-use order.
    #[error("file {0} is listed twice, never used, or not in order of first use")]
    FileOrder(usize),
}

impl LineTable {
    /// Whether the table knows nothing.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The file and line of the code word at `pc`, if `pc` is a word the table covers.
    pub fn at(&self, pc: u64) -> Option<(&str, u32)> {
        if pc % 8 != 0 || pc / 8 >= self.words {
            return None;
        }
        let i = self
            .runs
            .partition_point(|r| r.start <= pc / 8)
            .checked_sub(1)?;
        let run = self.runs[i];
        Some((self.files.get(run.file as usize)?.as_str(), run.line))
    }

    /// The run starting at word `index`, if one does.
    pub fn run_at(&self, index: u64) -> Option<&LineRun> {
        let i = self.runs.partition_point(|r| r.start < index);
        self.runs.get(i).filter(|r| r.start == index)
    }

    /// Check that the table is canonical (module docs) for a program of `words` code words.
    pub fn validate(&self, words: u64) -> Result<(), LineTableError> {
        if self.runs.is_empty() {
            return if self.files.is_empty() && self.words == 0 {
                Ok(())
            } else {
                Err(LineTableError::FileOrder(0))
            };
        }
        if self.words != words {
            return Err(LineTableError::Coverage {
                covered: self.words,
                words,
            });
        }
        // The next file a run may introduce: files appear in order of first use.
        let mut next_file = 0u32;
        for (i, r) in self.runs.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| self.runs[p]);
            let ordered = match prev {
                None => r.start == 0,
                Some(p) => r.start > p.start,
            };
            if !ordered || r.start >= words {
                return Err(LineTableError::Order(i));
            }
            if r.file as usize >= self.files.len() {
                return Err(LineTableError::NoFile(i));
            }
            if r.line == 0 {
                return Err(LineTableError::LineZero(i));
            }
            if prev.is_some_and(|p| (p.file, p.line) == (r.file, r.line)) {
                return Err(LineTableError::NotCoalesced(i));
            }
            if r.file > next_file {
                return Err(LineTableError::FileOrder(next_file as usize));
            }
            if r.file == next_file {
                next_file += 1;
            }
        }
        if next_file as usize != self.files.len() {
            return Err(LineTableError::FileOrder(next_file as usize));
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = self.files.iter().position(|f| !seen.insert(f.as_str())) {
            return Err(LineTableError::FileOrder(dup));
        }
        Ok(())
    }
}

/// Builds a canonical [`LineTable`] as code words are laid out, one after another.
#[derive(Debug, Default)]
pub struct LineTableBuilder {
    table: LineTable,
    index: HashMap<String, u32>,
}

impl LineTableBuilder {
    /// The next `n` code words came from `file`, line `line` (at least 1).
    pub fn push(&mut self, n: u64, file: &str, line: u32) {
        if n == 0 {
            return;
        }
        let t = &mut self.table;
        let file = match self.index.get(file) {
            Some(&i) => i,
            None => {
                let i = t.files.len() as u32;
                t.files.push(file.to_string());
                self.index.insert(file.to_string(), i);
                i
            }
        };
        if t.runs
            .last()
            .is_none_or(|r| (r.file, r.line) != (file, line))
        {
            t.runs.push(LineRun {
                start: t.words,
                file,
                line,
            });
        }
        t.words += n;
    }

    /// The table.
    pub fn finish(self) -> LineTable {
        self.table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> LineTable {
        let mut b = LineTableBuilder::default();
        b.push(2, "a.s", 3); // an S.LI
        b.push(1, "a.s", 3); // same line: one run
        b.push(1, "b.s", 3);
        b.push(0, "c.s", 9); // no words: no file
        b.push(4, "a.s", 7);
        b.finish()
    }

    #[test]
    fn builder_coalesces_and_orders_files() {
        let t = table();
        assert_eq!(t.files, ["a.s", "b.s"]);
        let runs: Vec<_> = t.runs.iter().map(|r| (r.start, r.file, r.line)).collect();
        assert_eq!(runs, [(0, 0, 3), (3, 1, 3), (4, 0, 7)]);
        assert_eq!(t.words, 8);
        assert_eq!(t.validate(8), Ok(()));
        assert_eq!(t.at(0x10), Some(("a.s", 3)));
        assert_eq!(t.at(0x18), Some(("b.s", 3)));
        assert_eq!(t.at(0x38), Some(("a.s", 7)));
        assert_eq!((t.at(0x40), t.at(4)), (None, None));
        assert_eq!(t.run_at(3).map(|r| r.line), Some(3));
        assert_eq!(t.run_at(2), None);
    }

    #[test]
    fn validate_refuses_what_the_builder_never_makes() {
        assert_eq!(LineTable::default().validate(5), Ok(()));
        let t = table();
        assert!(matches!(
            t.validate(9),
            Err(LineTableError::Coverage { .. })
        ));
        let with = |f: &dyn Fn(&mut LineTable)| {
            let mut t = table();
            f(&mut t);
            t.validate(8)
        };
        assert_eq!(
            with(&|t| t.runs[0].start = 1),
            Err(LineTableError::Order(0))
        );
        assert_eq!(
            with(&|t| t.runs[2].start = 3),
            Err(LineTableError::Order(2))
        );
        assert_eq!(
            with(&|t| t.runs[2].start = 8),
            Err(LineTableError::Order(2))
        );
        assert_eq!(
            with(&|t| t.runs[1].file = 2),
            Err(LineTableError::NoFile(1))
        );
        assert_eq!(
            with(&|t| t.runs[1].line = 0),
            Err(LineTableError::LineZero(1))
        );
        assert_eq!(
            with(&|t| t.runs[1] = LineRun {
                start: 3,
                file: 0,
                line: 3
            }),
            Err(LineTableError::NotCoalesced(1))
        );
        assert_eq!(with(&|t| t.files.swap(0, 1)), Ok(()), "names are free");
        assert_eq!(
            with(&|t| t.files[1] = "a.s".into()),
            Err(LineTableError::FileOrder(1))
        );
        assert_eq!(
            with(&|t| t.files.push("c.s".into())),
            Err(LineTableError::FileOrder(2))
        );
        assert_eq!(
            with(&|t| {
                t.runs[0].file = 1;
                t.runs[1].file = 0;
            }),
            Err(LineTableError::FileOrder(0))
        );
        let files_only = LineTable {
            files: vec!["a.s".into()],
            ..LineTable::default()
        };
        assert!(files_only.validate(0).is_err());
    }
}
