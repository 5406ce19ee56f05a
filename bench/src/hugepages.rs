//! 2 MB hugepages for the runs, as DPDK is deployed: large tables on 4 KB
//! pages pay a TLB miss per lookup. As root, the bench raises
//! `vm.nr_hugepages` and mounts a hugetlbfs for its lifetime, and gives
//! both back when it ends, on an error or Ctrl-C too (they unwind through
//! `Drop`); elsewhere the runs use `--no-huge`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the runs' hugetlbfs is mounted.
pub const DIR: &str = "target/bench/hugepages";

const NR_HUGEPAGES: &str = "/proc/sys/vm/nr_hugepages";
/// MB per page.
const PAGE_MB: u32 = 2;

/// How the runs' EAL gets its memory.
pub enum Memory {
    /// 4 KB pages (`--no-huge`), and why no hugepages.
    NoHuge(String),
    Huge(Hugepages),
}

/// Reserved hugepages and their mount, given back on drop.
pub struct Hugepages {
    dir: PathBuf,
    pages: u64,
    /// `vm.nr_hugepages` before, restored after.
    before: u64,
    mounted: bool,
}

impl Memory {
    /// Hugepages enough for runs of at most `memory_mb` each (one at a
    /// time), mounted at `dir`; `--no-huge` if they cannot be had, or if
    /// `no_huge` asks for 4 KB pages (to compare the two).
    pub fn for_runs(memory_mb: u32, dir: &Path, no_huge: bool) -> Memory {
        if no_huge {
            return Memory::NoHuge("--no-huge given".into());
        }
        Memory::huge(memory_mb, dir).unwrap_or_else(|why| {
            println!("hugepages: {why}; the runs use --no-huge (4 KB pages)");
            Memory::NoHuge(why)
        })
    }

    /// Hugepages enough for `memory_mb` mounted at `dir`, or why not.
    pub fn huge(memory_mb: u32, dir: &Path) -> Result<Memory, String> {
        Hugepages::reserve(u64::from(memory_mb.div_ceil(PAGE_MB)) + 64, dir).map(Memory::Huge)
    }

    /// The EAL arguments: `--no-huge`, or the mount with each process's
    /// page files unlinked at once, so that a run's pages come back when
    /// it exits, however it exits.
    pub fn eal_args(&self) -> Vec<String> {
        match self {
            Memory::NoHuge(_) => vec!["--no-huge".into()],
            Memory::Huge(h) => vec!["--huge-dir".into(), h.dir.display().to_string(), "--huge-unlink".into()],
        }
    }

    /// Whether the runs get 2 MB pages.
    pub fn is_huge(&self) -> bool {
        matches!(self, Memory::Huge(_))
    }

    /// For the report: `hugepages 2MB x N`, or `no-huge (why)`.
    pub fn describe(&self) -> String {
        match self {
            Memory::NoHuge(why) => format!("no-huge ({why})"),
            Memory::Huge(h) => format!("hugepages {PAGE_MB}MB x {}", h.pages),
        }
    }
}

impl Hugepages {
    fn reserve(pages: u64, dir: &Path) -> Result<Hugepages, String> {
        if !rustix::process::geteuid().is_root() {
            return Err("not root".into());
        }
        // EAL finds the mount by its absolute path in /proc/mounts.
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let dir = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let before = read_nr()?;
        write_nr(before.max(pages))?;
        let mut reserved = Hugepages {
            dir: dir.clone(),
            pages: 0,
            before,
            mounted: false,
        };
        reserved.pages = read_nr()?;
        if reserved.pages < pages {
            return Err(format!("the kernel gave {} of {pages} pages", reserved.pages));
        }
        let dir_arg = dir.display().to_string();
        let mount = ["-t", "hugetlbfs", "-o", "pagesize=2M", "nodev", &dir_arg];
        run("mount", &mount)?;
        reserved.mounted = true;
        println!(
            "hugepages: {} of {PAGE_MB} MB reserved, mounted at {dir_arg}",
            reserved.pages
        );
        Ok(reserved)
    }
}

impl Drop for Hugepages {
    fn drop(&mut self) {
        let dir = self.dir.display().to_string();
        let unmounted = if self.mounted { run("umount", &[&dir]) } else { Ok(()) };
        let _ = std::fs::remove_dir(&self.dir);
        if let Err(e) = unmounted.and_then(|()| write_nr(self.before)) {
            eprintln!("hugepages: could not give them back ({e}): check {NR_HUGEPAGES} and `mount | grep {dir}`");
        }
    }
}

fn read_nr() -> Result<u64, String> {
    let text = std::fs::read_to_string(NR_HUGEPAGES).map_err(|e| format!("{NR_HUGEPAGES}: {e}"))?;
    text.trim().parse().map_err(|e| format!("{NR_HUGEPAGES}: {e}"))
}

fn write_nr(pages: u64) -> Result<(), String> {
    std::fs::write(NR_HUGEPAGES, pages.to_string()).map_err(|e| format!("{NR_HUGEPAGES}: {e}"))
}

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
