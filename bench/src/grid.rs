//! What a sweep covers: lookup tables x packet sizes x flow counts, the
//! cells of that grid, and how a user writes them (`64,1518`, `16,1K,1M`).
//! A cell also names where a run was made for the engine, the report, the
//! traffic generators and callgrind's `--lpm-flows`/`--em-flows` runs.

use crate::configs::{Config, Forwarder, Variant};
pub use crate::mode::Mode;
use crate::mode::RuleFormat;
use crate::pool::Pool;
use std::fmt;

/// Ethernet's frame check sequence: counted in a frame's size, absent from pcap files.
pub const FCS: u32 = 4;
const MIN_SIZE: u32 = 64;
const MAX_SIZE: u32 = 1518;
/// The largest LPM table an ACL cell turns into rules: rte_acl's build
/// grows with the rules, and C's l3fwd_acl holds at most 100000.
pub const ACL_MAX_ROUTES: usize = 1 << 16;

/// The table traffic is forwarded through: one plot and one heat map each.
/// A route table has a fixed number of routes, whatever the flows; an
/// exact-match table has one rule per flow.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Table {
    pub mode: Mode,
    /// Routes of a route table (ACL's: rules made from one); None: a rule
    /// per flow.
    pub routes: Option<usize>,
}

impl Table {
    /// Stable name, in cell keys and file names: `lpm-10K`, `em`.
    pub fn id(self) -> String {
        match self.routes {
            Some(routes) => format!("{}-{}", self.mode.id(), format_count(routes)),
            None => self.mode.id().into(),
        }
    }

    pub fn label(self) -> String {
        let mode = self.mode.label();
        match self.routes {
            Some(routes) => format!("{mode}, {} routes", format_count(routes)),
            None => format!("{mode}, one rule per flow"),
        }
    }

    /// Routes or rules in the IPv4 table of a cell with `flows` flows.
    pub fn rules(self, flows: usize) -> usize {
        self.routes.unwrap_or(flows)
    }
}

/// One measurement point: a table, a frame size and a flow count.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Cell {
    pub table: Table,
    /// Frame size in bytes, FCS included (64..=1518).
    pub size: u32,
    pub flows: usize,
}

impl Cell {
    /// Stable name, the key a baseline is compared by: `lpm-10K/64B/1K`.
    pub fn key(&self) -> String {
        format!("{}/{}B/{}", self.table.id(), self.size, format_count(self.flows))
    }

    pub fn rules(&self) -> usize {
        self.table.rules(self.flows)
    }

    /// What `forwarder` runs in this cell: the table's mode, no variant.
    pub fn config(&self, forwarder: Forwarder) -> Config {
        Config::new(forwarder, self.table.mode, Variant::Default, false)
    }

    /// Frames in each of the two ports' pcap files: half the flows each.
    pub fn frames_per_port(&self) -> usize {
        self.flows.div_ceil(2)
    }

    /// The pool and EAL memory of both forwarders (and testpmd) in this cell.
    pub fn pool(&self) -> Pool {
        Pool::replaying(self.frames_per_port())
    }

    /// mbufs per pool, both forwarders.
    pub fn mbufs(&self) -> usize {
        crate::pool::mbufs_for(self.frames_per_port())
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let (size, flows) = (self.size, format_count(self.flows));
        write!(f, "{}, {size} B, {flows} flows", self.table.label())
    }
}

/// The subset of the grid a sweep runs.
#[derive(Clone, PartialEq, Debug)]
pub struct Grid {
    pub sizes: Vec<u32>,
    pub flows: Vec<usize>,
    pub tables: Vec<Table>,
}

impl Grid {
    /// `modes` with LPM tables of `lpm_routes` routes each.
    pub fn new(sizes: Vec<u32>, flows: Vec<usize>, modes: &[Mode], lpm_routes: &[usize]) -> Result<Grid, String> {
        let mut tables = modes
            .iter()
            .flat_map(|&mode| {
                let routes = lpm_routes.iter().map(move |&routes| Table {
                    mode,
                    routes: Some(routes),
                });
                match mode.rules() {
                    RuleFormat::Routes => routes.collect(),
                    RuleFormat::Acl => routes.filter(|t| t.routes <= Some(ACL_MAX_ROUTES)).collect(),
                    RuleFormat::Flows => vec![Table { mode, routes: None }],
                }
            })
            .collect::<Vec<Table>>();
        tables.sort();
        tables.dedup();
        let grid = Grid {
            sizes: sorted(sizes),
            flows: sorted(flows),
            tables,
        };
        if grid.sizes.is_empty() || grid.flows.is_empty() || grid.tables.is_empty() {
            return Err("the sweep has no cell: give at least one size, flow count, mode (and LPM route count)".into());
        }
        Ok(grid)
    }

    /// Every cell, table by table, then by flows, then by size.
    pub fn cells(&self) -> Vec<Cell> {
        let mut cells = Vec::new();
        for &table in &self.tables {
            for &flows in &self.flows {
                cells.extend(self.sizes.iter().map(|&size| Cell { table, size, flows }));
            }
        }
        cells
    }
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v.dedup();
    v
}

/// `16`, `1K` (1024), `64k`, `1M` (1048576): a positive count.
pub fn parse_count(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1 << 10),
        Some((i, 'm' | 'M')) => (&t[..i], 1 << 20),
        _ => (t, 1),
    };
    let n: usize = digits
        .parse()
        .map_err(|_| format!("'{s}' is not a count (like 16, 1K or 1M)"))?;
    match n.checked_mul(unit) {
        Some(count) if count > 0 => Ok(count),
        _ => Err(format!("'{s}' is not a positive count")),
    }
}

/// The shortest of `parse_count`'s forms for `n`: 16, 1K, 10K, 1M, 1500.
pub fn format_count(n: usize) -> String {
    match n {
        0 => "0".into(),
        _ if n.is_multiple_of(1 << 20) => format!("{}M", n >> 20),
        _ if n.is_multiple_of(1 << 10) => format!("{}K", n >> 10),
        _ => n.to_string(),
    }
}

/// A frame size in bytes with FCS, 64..=1518.
pub fn parse_size(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(size) if (MIN_SIZE..=MAX_SIZE).contains(&size) => Ok(size),
        _ => Err(format!(
            "'{s}' is not a frame size: {MIN_SIZE}..={MAX_SIZE} bytes, FCS included"
        )),
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    #[test]
    fn counts_with_k_and_m_suffixes() {
        assert_eq!(parse_count("16"), Ok(16));
        assert_eq!(parse_count("1K"), Ok(1024));
        assert_eq!(parse_count("64k"), Ok(65_536));
        assert_eq!(parse_count("10K"), Ok(10_240));
        assert_eq!(parse_count(" 1M"), Ok(1_048_576));
        for bad in ["0", "0K", "", "K", "1G", "-1", "1.5K", "x"] {
            assert!(parse_count(bad).is_err(), "{bad:?} accepted");
        }
        for n in [16, 1024, 10_240, 65_536, 1 << 20, 1500, 3 << 20] {
            assert_eq!(parse_count(&format_count(n)), Ok(n), "{n} round trip");
        }
        assert_eq!(format_count(1 << 20), "1M");
        assert_eq!(format_count(10_240), "10K");
    }

    #[test]
    fn sizes_are_ethernet_frames_with_fcs() {
        assert_eq!(parse_size("64"), Ok(64));
        assert_eq!(parse_size("1518"), Ok(1518));
        assert!(parse_size("63").is_err());
        assert!(parse_size("1519").is_err());
        assert!(parse_size("big").is_err());
    }

    pub use crate::mode::tests::mode;

    #[test]
    fn grid_cells_and_keys() {
        let grid = Grid::new(
            vec![1518, 64],
            vec![1024, 16, 65_536],
            &[mode("em"), mode("lpm")],
            &[10_240],
        )
        .unwrap();
        let cells = grid.cells();
        assert_eq!(cells.len(), 2 * 3 * 2, "quick sweep: 2 sizes x 3 flows x (LPM + EM)");
        assert_eq!(cells[0].key(), "lpm-10K/64B/16");
        assert_eq!(cells[1].key(), "lpm-10K/1518B/16");
        assert_eq!(cells.last().unwrap().key(), "em/1518B/64K");
        assert_eq!(cells[0].rules(), 10_240, "LPM: routes whatever the flows");
        assert_eq!(cells.last().unwrap().rules(), 65_536, "EM: a rule per flow");
        assert_eq!(cells.last().unwrap().frames_per_port(), 32_768);
        let (sizes, flows) = (vec![64, 128, 256, 512, 1024, 1518], vec![16, 1 << 10, 1 << 16, 1 << 20]);
        let all = Grid::new(sizes, flows, &[mode("lpm"), mode("em")], &[16, 10 << 10, 1 << 20]).unwrap();
        assert_eq!(all.cells().len(), 6 * 4 * (3 + 1));
        assert!(Grid::new(vec![64], vec![16], &[mode("lpm")], &[]).is_err());
        let fib = Grid::new(vec![64], vec![16], &[mode("fib")], &[16]).unwrap();
        assert_eq!(fib.cells()[0].key(), "fib-16/64B/16");
        assert_eq!(fib.cells()[0].to_string(), "FIB, 16 routes, 64 B, 16 flows");
        assert_eq!(fib.cells()[0].rules(), 16);
        let acl = Grid::new(
            vec![64],
            vec![16],
            &[Mode::parse("acl").unwrap()],
            &[16, 10 << 10, 1 << 20],
        )
        .unwrap();
        let keys: Vec<String> = acl.cells().iter().map(Cell::key).collect();
        assert_eq!(keys, ["acl-16/64B/16", "acl-10K/64B/16"], "no ACL table of 1M routes");
        assert_eq!(all.tables[3].label(), "EM, one rule per flow");
    }
}
