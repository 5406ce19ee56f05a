//! A client of DPDK's telemetry socket, to read a running process's port
//! counters.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::net::{self, sockopt, AddressFamily, RecvFlags, SendFlags, SocketAddrUnix, SocketType};
use serde_json::Value;

/// Replies are at most `max_output_len` (16 KiB in 22.11); a SEQPACKET
/// read truncates, so leave room.
const REPLY_BUF: usize = 64 * 1024;

/// How long a reply may take unless [`Telemetry::set_timeout`] says.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A connection to the telemetry socket of one DPDK process.
pub struct Telemetry {
    fd: OwnedFd,
}

impl Telemetry {
    /// The telemetry socket of the DPDK process started with
    /// `--file-prefix prefix`.
    pub fn socket_path(prefix: &str) -> PathBuf {
        dpdk::runtime_dir_of(prefix).join("dpdk_telemetry.v2")
    }

    /// Connects to the process of `--file-prefix prefix`.
    pub fn of(prefix: &str) -> io::Result<Telemetry> {
        Telemetry::connect(&Telemetry::socket_path(prefix))
    }

    /// Connects to `socket` and reads the greeting the server sends first
    /// (an error of kind `UnexpectedEof` if it hangs up at once).
    pub fn connect(socket: &Path) -> io::Result<Telemetry> {
        let fd = net::socket(AddressFamily::UNIX, SocketType::SEQPACKET, None)?;
        net::connect(&fd, &SocketAddrUnix::new(socket)?)?;
        let telemetry = Telemetry { fd };
        telemetry.set_timeout(TIMEOUT)?;
        telemetry.reply()?;
        Ok(telemetry)
    }

    /// How long a reply may take (10 s unless set): longer for a process
    /// slowed down by valgrind.
    pub fn set_timeout(&self, timeout: Duration) -> io::Result<()> {
        Ok(sockopt::set_socket_timeout(
            &self.fd,
            sockopt::Timeout::Recv,
            Some(timeout),
        )?)
    }

    fn reply(&self) -> io::Result<Value> {
        let mut buf = vec![0u8; REPLY_BUF];
        let (n, _) = net::recv(&self.fd, &mut buf[..], RecvFlags::empty())?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "telemetry socket closed"));
        }
        serde_json::from_slice(&buf[..n]).map_err(io::Error::other)
    }

    /// The reply to `command` (`/ethdev/stats,0`, ...); an error of kind
    /// `UnexpectedEof` once the process hangs up.
    pub fn query(&self, command: &str) -> io::Result<Value> {
        net::send(&self.fd, command.as_bytes(), SendFlags::empty())?;
        self.reply()
    }

    /// Packets port `port` has sent; None while it is not set up.
    pub fn opackets(&self, port: u16) -> io::Result<Option<u64>> {
        Ok(self.query(&format!("/ethdev/stats,{port}"))?["/ethdev/stats"]["opackets"].as_u64())
    }

    /// Packets received by all the process's ports together.
    pub fn ipackets_of_all(&self) -> io::Result<u64> {
        let list = self.query("/ethdev/list")?;
        let ports = list["/ethdev/list"].as_array().cloned().unwrap_or_default();
        let mut total = 0;
        for port in ports.iter().filter_map(Value::as_u64) {
            let stats = self.query(&format!("/ethdev/stats,{port}"))?;
            total += stats["/ethdev/stats"]["ipackets"].as_u64().unwrap_or(0);
        }
        Ok(total)
    }
}
