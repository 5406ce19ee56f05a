//! What l3fwd-rs reads of EAL's own arguments before or beside EAL: the
//! values of an option (`--vdev X` or `--vdev=X`), the file prefix, and the
//! network devices `--vdev` creates. The one place that knows DPDK's
//! spellings, so the application holds no driver names of its own.

/// Every value of long option `name` (`--vdev`, `--file-prefix`) in EAL
/// arguments `args`, in order, whichever way each is written: `--name
/// value` or `--name=value`.
pub fn values<'a>(args: &'a [String], name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    let mut args = args.iter();
    std::iter::from_fn(move || {
        for arg in args.by_ref() {
            match arg.strip_prefix(name) {
                Some("") => return args.next().map(String::as_str),
                Some(rest) => {
                    if let Some(value) = rest.strip_prefix('=') {
                        return Some(value);
                    }
                }
                None => {}
            }
        }
        None
    })
}

/// The `--file-prefix` EAL arguments `args` give (the last one counts), if
/// any.
pub fn file_prefix(args: &[String]) -> Option<&str> {
    values(args, "--file-prefix").last()
}

/// One `--vdev` that creates a network port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetworkVdev<'a> {
    /// The device's name, which is also its port's (`net_pcap0`).
    pub name: &'a str,
    /// The whole argument, devargs included (`net_pcap0,rx_pcap=a.pcap`).
    pub spec: &'a str,
}

/// Every `--vdev` of `args` that names a network device: DPDK's `net_*`
/// drivers and their `eth_*` aliases (`eth_pcap0`, `eth_ring0`,
/// `eth_af_packet0`, ...), not crypto, event or other devices.
pub fn network_vdevs(args: &[String]) -> Vec<NetworkVdev<'_>> {
    values(args, "--vdev")
        .map(|spec| NetworkVdev {
            name: spec.split(',').next().unwrap_or_default(),
            spec,
        })
        .filter(|v| v.name.starts_with("net_") || v.name.starts_with("eth_"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn values_are_read_in_either_spelling_and_other_options_are_not() {
        let a = args(&[
            "x",
            "--file-prefix=b",
            "--file-prefix-x=no",
            "--file-prefix",
            "c",
            "--file-prefix",
        ]);
        assert_eq!(values(&a, "--file-prefix").collect::<Vec<_>>(), ["b", "c"]);
        assert_eq!(file_prefix(&a), Some("c"));
        assert_eq!(file_prefix(&args(&["x", "-l", "0"])), None);
    }

    #[test]
    fn network_vdevs_are_the_net_and_eth_devices() {
        let a = args(&[
            "x",
            "--vdev=net_pcap0,rx_pcap=a.pcap",
            "--vdev",
            "eth_ring0",
            "--vdev=event_sw0",
            "--vdev=crypto_null0",
            "--vdev=eth_pcap1,iface=lo",
        ]);
        let found: Vec<_> = network_vdevs(&a).iter().map(|v| (v.name, v.spec)).collect();
        assert_eq!(
            found,
            [
                ("net_pcap0", "net_pcap0,rx_pcap=a.pcap"),
                ("eth_ring0", "eth_ring0"),
                ("eth_pcap1", "eth_pcap1,iface=lo")
            ]
        );
    }
}
