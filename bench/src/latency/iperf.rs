//! iperf3 (Debian's package) between the two sites: the TCP throughput a
//! user sees through the forwarder, and the UDP packets a second it
//! carries when the sender sends small datagrams as fast as it can. Each
//! run has a one-off server (`-1`) and a client whose JSON is parsed.

use serde::{Deserialize, Serialize};
use std::process::Command;

/// TCP port of the one-off servers (iperf3's default).
pub const PORT: u16 = 5201;
/// UDP payload bytes of the packet-rate run: 64-byte Ethernet frames
/// (FCS counted), `make bench`'s size.
pub const UDP_LEN: u32 = 18;

/// One throughput run's result.
#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Debug)]
pub struct Throughput {
    /// Received at the server, bits a second.
    pub bits_per_sec: f64,
    /// Datagrams received a second (UDP runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_per_sec: Option<f64>,
}

/// What a run sends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stream {
    Tcp,
    /// [`UDP_LEN`]-byte datagrams, unlimited rate.
    UdpFlood,
}

/// The one-off server, bound to `addr`, pinned to `cpu`.
pub fn server(addr: &str, cpu: u32) -> Command {
    let mut cmd = super::sockperf::pinned(cpu);
    cmd.args(["iperf3", "-s", "-1", "-B", addr, "-p", &PORT.to_string()]);
    cmd
}

/// The client: `stream` to `addr` for `secs` seconds, JSON on stdout.
pub fn client(stream: Stream, addr: &str, cpu: u32, secs: u32) -> Command {
    let mut cmd = super::sockperf::pinned(cpu);
    cmd.args(["iperf3", "-c", addr, "-p", &PORT.to_string(), "-J"]);
    cmd.args(["-t", &secs.to_string()]);
    if stream == Stream::UdpFlood {
        cmd.args(["-u", "-b", "0", "-l", &UDP_LEN.to_string()]);
    }
    cmd
}

/// The receiver's side of a client's JSON (`end.sum_received`): its rate,
/// and for UDP the datagrams that arrived (sent less lost) a second.
pub fn parse(stream: Stream, json: &str) -> Result<Throughput, String> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("iperf3 output: {e}"))?;
    if let Some(error) = value["error"].as_str() {
        return Err(format!("iperf3: {error}"));
    }
    let sum = &value["end"]["sum_received"];
    let number = |key: &str| {
        sum[key]
            .as_f64()
            .ok_or_else(|| format!("iperf3 output has no end.sum_received.{key}"))
    };
    let bits_per_sec = number("bits_per_second")?;
    let packets_per_sec = match stream {
        Stream::Tcp => None,
        Stream::UdpFlood => {
            let seconds = number("seconds")?;
            let arrived = number("packets")? - number("lost_packets")?;
            Some(if seconds > 0.0 { arrived / seconds } else { 0.0 })
        }
    };
    Ok(Throughput {
        bits_per_sec,
        packets_per_sec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receiver_rates_from_iperf3_json() {
        let tcp = r#"{"end": {"sum_sent": {"bits_per_second": 3.0e9},
                              "sum_received": {"seconds": 3.0, "bits_per_second": 2.5e9}}}"#;
        assert_eq!(
            parse(Stream::Tcp, tcp),
            Ok(Throughput {
                bits_per_sec: 2.5e9,
                packets_per_sec: None
            })
        );
        // iperf3 3.12: `packets` counts what was sent, `lost_packets` what never came.
        let udp = r#"{"end": {"sum_received": {"seconds": 2.0, "bits_per_second": 5.6e7,
                              "packets": 400000, "lost_packets": 300000}}}"#;
        assert_eq!(parse(Stream::UdpFlood, udp).unwrap().packets_per_sec, Some(50_000.0));
        let refused = r#"{"start": {}, "error": "unable to connect to server: Connection refused"}"#;
        assert_eq!(
            parse(Stream::Tcp, refused),
            Err("iperf3: unable to connect to server: Connection refused".into())
        );
        assert!(parse(Stream::Tcp, "{}").unwrap_err().contains("bits_per_second"));
        assert!(parse(Stream::Tcp, "").is_err());
    }

    #[test]
    fn client_command_lines() {
        let line = |c: Command| {
            let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
            args.join(" ")
        };
        assert_eq!(
            line(client(Stream::Tcp, "198.51.100.2", 0, 3)),
            "-c 0 iperf3 -c 198.51.100.2 -p 5201 -J -t 3"
        );
        assert_eq!(
            line(client(Stream::UdpFlood, "198.51.100.2", 0, 3)),
            "-c 0 iperf3 -c 198.51.100.2 -p 5201 -J -t 3 -u -b 0 -l 18"
        );
        assert_eq!(
            line(server("198.51.100.2", 0)),
            "-c 0 iperf3 -s -1 -B 198.51.100.2 -p 5201"
        );
    }
}
