//! Client for DPDK's telemetry socket, to read port counters of a running forwarder.

use serde_json::Value;
use socket2::{Domain, SockAddr, Socket, Type};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Replies are at most `max_output_len` (16 KiB in 22.11); a SEQPACKET read truncates, so leave room.
const REPLY_BUF: usize = 64 * 1024;

/// The telemetry socket of the DPDK process started with `--file-prefix prefix`.
pub fn socket_path(prefix: &str) -> PathBuf {
    dpdk::runtime_dir_of(prefix).join("dpdk_telemetry.v2")
}

pub struct Telemetry {
    socket: Socket,
}

impl Telemetry {
    /// Connects and consumes the greeting the server sends first.
    pub fn connect(path: &Path) -> io::Result<Self> {
        // std's UnixStream cannot connect to a SOCK_SEQPACKET socket.
        let socket = Socket::new(Domain::UNIX, Type::SEQPACKET, None)?;
        socket.connect(&SockAddr::unix(path)?)?;
        socket.set_read_timeout(Some(Duration::from_secs(2)))?;
        let telemetry = Telemetry { socket };
        telemetry.read_json()?;
        Ok(telemetry)
    }

    /// How long a reply may take (2 s from [`Telemetry::connect`]): longer
    /// for a process slowed down by valgrind.
    pub fn set_timeout(&self, timeout: Duration) -> io::Result<()> {
        self.socket.set_read_timeout(Some(timeout))
    }

    fn read_json(&self) -> io::Result<Value> {
        let mut buf = vec![0; REPLY_BUF];
        let n = (&self.socket).read(&mut buf)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "telemetry socket closed"));
        }
        serde_json::from_slice(&buf[..n]).map_err(io::Error::other)
    }

    fn query(&self, command: &str) -> io::Result<Value> {
        (&self.socket).write_all(command.as_bytes())?;
        self.read_json()
    }

    /// Packets sent, summed over ports 0..ports; None while a port is not set up yet.
    pub fn opackets(&self, ports: u16) -> io::Result<Option<u64>> {
        let mut total = 0;
        for port in 0..ports {
            let reply = self.query(&format!("/ethdev/stats,{port}"))?;
            match reply["/ethdev/stats"]["opackets"].as_u64() {
                Some(n) => total += n,
                None => return Ok(None),
            }
        }
        Ok(Some(total))
    }
}
