//! The configurations the benchmark compares, and how a user selects them.

/// One forwarder setup whose rate is measured.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Config {
    CLpm,
    RsLpm,
    /// l3fwd-rs LPM with `--c-drain`: C's TX drain timing (timer or full
    /// buffer only), beside the default idle flush, so that one run shows
    /// what flushing when idle costs at full load.
    RsLpmCDrain,
    RsLpmBurst64,
    RsLpmBurst256,
    CFib,
    RsFib,
    CAcl,
    RsAcl,
    CEm,
    RsEm,
    RsEmSeq,
    Io,
    // At a real router's scale: large generated tables and traffic touching
    // many of their entries (see `Scale`).
    CEmScale,
    CEmSeqScale,
    RsEmScale,
    RsEmSeqScale,
    RsLpmScale,
}

/// Every configuration of `make bench`, in the order each round runs them.
pub const ALL: [Config; 13] = [
    Config::CLpm,
    Config::RsLpm,
    Config::RsLpmCDrain,
    Config::RsLpmBurst64,
    Config::RsLpmBurst256,
    Config::CFib,
    Config::RsFib,
    Config::CAcl,
    Config::RsAcl,
    Config::CEm,
    Config::RsEm,
    Config::RsEmSeq,
    Config::Io,
];

/// The configurations of `make bench-scale`. The C sample's LPM tables hold
/// 1024 rules: it has no large-LPM configuration.
pub const SCALE: [Config; 5] = [
    Config::CEmScale,
    Config::CEmSeqScale,
    Config::RsEmScale,
    Config::RsEmSeqScale,
    Config::RsLpmScale,
];

impl Config {
    /// Stable name, used in `--only` and as the key in the JSON file.
    pub fn id(self) -> &'static str {
        match self {
            Config::CLpm => "c-lpm",
            Config::RsLpm => "rs-lpm",
            Config::RsLpmCDrain => "rs-lpm-c-drain",
            Config::RsLpmBurst64 => "rs-lpm-burst64",
            Config::RsLpmBurst256 => "rs-lpm-burst256",
            Config::CFib => "c-fib",
            Config::RsFib => "rs-fib",
            Config::CAcl => "c-acl",
            Config::RsAcl => "rs-acl",
            Config::CEm => "c-em",
            Config::RsEm => "rs-em",
            Config::RsEmSeq => "rs-em-seq",
            Config::Io => "io",
            Config::CEmScale => "c-em-1m",
            Config::CEmSeqScale => "c-em-seq-1m",
            Config::RsEmScale => "rs-em-1m",
            Config::RsEmSeqScale => "rs-em-seq-1m",
            Config::RsLpmScale => "rs-lpm-1m",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Config::CLpm => "C l3fwd LPM",
            Config::RsLpm => "l3fwd-rs LPM",
            Config::RsLpmCDrain => "l3fwd-rs LPM c-drain",
            Config::RsLpmBurst64 => "l3fwd-rs LPM burst 64",
            Config::RsLpmBurst256 => "l3fwd-rs LPM burst 256",
            Config::CFib => "C l3fwd FIB",
            Config::RsFib => "l3fwd-rs FIB",
            Config::CAcl => "C l3fwd ACL",
            Config::RsAcl => "l3fwd-rs ACL",
            Config::CEm => "C l3fwd EM",
            Config::RsEm => "l3fwd-rs EM",
            Config::RsEmSeq => "l3fwd-rs EM seq",
            Config::Io => "testpmd io",
            Config::CEmScale => "C EM 1M",
            Config::CEmSeqScale => "C EM seq 1M",
            Config::RsEmScale => "l3fwd-rs EM 1M",
            Config::RsEmSeqScale => "l3fwd-rs EM seq 1M",
            Config::RsLpmScale => "l3fwd-rs LPM 1M",
        }
    }

    /// Exact-match runs need exact-match traffic and rule files.
    pub fn is_em(self) -> bool {
        matches!(
            self,
            Config::CEm
                | Config::RsEm
                | Config::RsEmSeq
                | Config::CEmScale
                | Config::CEmSeqScale
                | Config::RsEmScale
                | Config::RsEmSeqScale
        )
    }

    /// l3fwd-rs, not the C sample or testpmd.
    pub fn is_rs(self) -> bool {
        matches!(
            self,
            Config::RsLpm
                | Config::RsLpmCDrain
                | Config::RsLpmBurst64
                | Config::RsLpmBurst256
                | Config::RsFib
                | Config::RsAcl
                | Config::RsEm
                | Config::RsEmSeq
                | Config::RsEmScale
                | Config::RsEmSeqScale
                | Config::RsLpmScale
        )
    }

    /// Runs on the large generated tables and traffic.
    pub fn is_scale(self) -> bool {
        SCALE.contains(&self)
    }

    /// Exact match looks packets up one by one.
    pub fn is_sequential(self) -> bool {
        matches!(self, Config::RsEmSeq | Config::CEmSeqScale | Config::RsEmSeqScale)
    }

    /// Sends with C's drain timing (`--c-drain`) instead of flushing when idle.
    pub fn is_c_drain(self) -> bool {
        self == Config::RsLpmCDrain
    }

    /// The `--rx-burst` and `--tx-burst` of the burst-size configurations.
    pub fn burst(self) -> Option<usize> {
        match self {
            Config::RsLpmBurst64 => Some(64),
            Config::RsLpmBurst256 => Some(256),
            _ => None,
        }
    }

    /// The `--lookup` mode.
    pub fn mode(self) -> &'static str {
        match self {
            _ if self.is_em() => "em",
            Config::CFib | Config::RsFib => "fib",
            Config::CAcl | Config::RsAcl => "acl",
            _ => "lpm",
        }
    }

    /// The C sample in the same lookup mode: what this configuration is judged against.
    pub fn reference(self) -> Option<Config> {
        match self {
            Config::RsLpm | Config::RsLpmCDrain | Config::RsLpmBurst64 | Config::RsLpmBurst256 => Some(Config::CLpm),
            Config::RsFib => Some(Config::CFib),
            Config::RsAcl => Some(Config::CAcl),
            Config::RsEm | Config::RsEmSeq => Some(Config::CEm),
            Config::RsEmScale => Some(Config::CEmScale),
            Config::RsEmSeqScale => Some(Config::CEmSeqScale),
            _ => None,
        }
    }
}

/// Resolves `--only` items (ids or the groups all, lpm, burst, fib, acl, em, io, c, rs, scale) into
/// configurations in run order.
pub fn select(items: &[String]) -> Result<Vec<Config>, String> {
    let mut chosen = Vec::new();
    for item in items.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let group: Vec<Config> = match item {
            "all" => ALL.to_vec(),
            "lpm" => vec![Config::CLpm, Config::RsLpm, Config::RsLpmCDrain],
            "burst" => vec![Config::CLpm, Config::RsLpm, Config::RsLpmBurst64, Config::RsLpmBurst256],
            "fib" => vec![Config::CFib, Config::RsFib],
            "acl" => vec![Config::CAcl, Config::RsAcl],
            "em" => vec![Config::CEm, Config::RsEm, Config::RsEmSeq],
            "c" => vec![Config::CLpm, Config::CFib, Config::CAcl, Config::CEm],
            "rs" => vec![
                Config::RsLpm,
                Config::RsLpmCDrain,
                Config::RsLpmBurst64,
                Config::RsLpmBurst256,
                Config::RsFib,
                Config::RsAcl,
                Config::RsEm,
                Config::RsEmSeq,
            ],
            "scale" => SCALE.to_vec(),
            id => match ALL.iter().chain(&SCALE).find(|c| c.id() == id) {
                Some(&c) => vec![c],
                None => {
                    let ids: Vec<_> = ALL.iter().chain(&SCALE).map(|c| c.id()).collect();
                    return Err(format!(
                        "unknown configuration '{id}': use all, lpm, burst, fib, acl, em, io, c, rs, scale or {}",
                        ids.join(", ")
                    ));
                }
            },
        };
        chosen.extend(group);
    }
    if chosen.is_empty() {
        return Err("--only selects no configuration".into());
    }
    chosen.sort();
    chosen.dedup();
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(s: &str) -> Result<Vec<Config>, String> {
        select(&s.split(',').map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn groups_and_ids_resolve_in_run_order() {
        assert_eq!(
            sel("io,lpm").unwrap(),
            vec![Config::CLpm, Config::RsLpm, Config::RsLpmCDrain, Config::Io]
        );
        assert_eq!(sel("rs-lpm-c-drain").unwrap(), vec![Config::RsLpmCDrain]);
        assert_eq!(
            sel("rs-em-seq,c-em,em").unwrap(),
            vec![Config::CEm, Config::RsEm, Config::RsEmSeq]
        );
        assert_eq!(sel("all").unwrap(), ALL.to_vec());
        assert_eq!(sel("scale").unwrap(), SCALE.to_vec());
        assert_eq!(sel("rs-lpm-1m,io").unwrap(), vec![Config::Io, Config::RsLpmScale]);
        assert_eq!(sel("fib").unwrap(), vec![Config::CFib, Config::RsFib]);
        assert_eq!(sel("rs-lpm-burst256").unwrap()[0].burst(), Some(256));
        assert_eq!(Config::RsFib.mode(), "fib");
        assert_eq!(sel("acl").unwrap(), vec![Config::CAcl, Config::RsAcl]);
        assert_eq!(Config::RsAcl.reference(), Some(Config::CAcl));
        assert!(sel("nat").is_err());
        assert!(sel("").is_err());
    }
}
