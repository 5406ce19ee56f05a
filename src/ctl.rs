//! The control socket `l3fwd-ctl` talks to: a Unix socket in the
//! instance's DPDK runtime directory (found from its `--file-prefix`),
//! mode 0600 like DPDK's telemetry socket. One command per line, one
//! answer line per command: `ok`, a value, or `error: why`.
//!
//! Served from the control thread's loop without ever waiting on a
//! client: every socket is non-blocking, a line is at most [`MAX_LINE`]
//! bytes (a longer one is answered with an error and the client closed),
//! and a client that does not read its answers is dropped once
//! [`MAX_UNREAD`] bytes of them are waiting.

use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use crate::live::{Answer, Command, Tables};

/// The socket's name in the runtime directory.
pub const SOCKET_NAME: &str = "l3fwd_ctl";

/// DPDK's default `--file-prefix`.
pub const DEFAULT_PREFIX: &str = "rte";

/// Where the instance started with `--file-prefix prefix` listens: EAL's
/// runtime directory is `/var/run/dpdk/PREFIX` for root, else under
/// `$XDG_RUNTIME_DIR` (or `/tmp`) (`eal_create_runtime_dir`).
pub fn socket_path(prefix: &str) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    let base = match std::env::var_os("XDG_RUNTIME_DIR") {
        _ if root => PathBuf::from("/var/run"),
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from("/tmp"),
    };
    base.join("dpdk").join(prefix).join(SOCKET_NAME)
}

/// The longest command line, newline included.
pub const MAX_LINE: usize = 4096;

/// Answers waiting for a client that does not read them, at most.
const MAX_UNREAD: usize = 1 << 20;

/// Bytes read from one client per serve, at most: many clients share it.
const READ_PER_SERVE: usize = 1 << 20;

/// The listening socket and its clients.
pub struct Socket {
    listener: UnixListener,
    path: PathBuf,
    clients: Vec<Client>,
}

struct Client {
    stream: UnixStream,
    /// Bytes received and not yet a whole line.
    input: Vec<u8>,
    /// Answers not yet written.
    output: Vec<u8>,
    /// The client is done sending (or sent a line too long): close once
    /// its answers are out.
    closing: bool,
}

impl Socket {
    /// Listens on `SOCKET_NAME` in `dir`, mode 0600; a socket left there
    /// by an instance that died is replaced (EAL has already refused a
    /// second live instance of one prefix).
    pub fn bind(dir: &Path) -> io::Result<Socket> {
        let path = dir.join(SOCKET_NAME);
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        listener.set_nonblocking(true)?;
        Ok(Socket {
            listener,
            path,
            clients: Vec::new(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Accepts new clients, reads every whole line they sent, runs them
    /// on `tables` as one batch, and writes what each client will take.
    /// Returns whether there was anything to do.
    pub fn serve(&mut self, tables: &mut dyn Tables) -> bool {
        while let Ok((stream, _)) = self.listener.accept() {
            if stream.set_nonblocking(true).is_ok() {
                self.clients.push(Client {
                    stream,
                    input: Vec::new(),
                    output: Vec::new(),
                    closing: false,
                });
            }
        }
        // Each line, by client: a command for the batch or its error.
        let mut lines: Vec<(usize, Result<Command, String>)> = Vec::new();
        for (c, client) in self.clients.iter_mut().enumerate() {
            lines.extend(client.read_lines().into_iter().map(|l| (c, l)));
        }
        let busy = !lines.is_empty();
        let commands: Vec<Command> = lines.iter().filter_map(|(_, l)| l.as_ref().ok().cloned()).collect();
        let mut answers = tables.execute(&commands).into_iter();
        for (c, line) in lines {
            let answer: Answer = match line {
                Ok(_) => answers.next().unwrap_or_else(|| Err("no answer".into())),
                Err(e) => Err(e),
            };
            let out = &mut self.clients[c].output;
            match answer {
                Ok(text) => out.extend_from_slice(text.as_bytes()),
                Err(e) => out.extend_from_slice(format!("error: {e}").as_bytes()),
            }
            out.push(b'\n');
        }
        self.clients.retain_mut(Client::write_and_keep);
        busy
    }
}

impl Client {
    /// The whole lines received since the last call, parsed. A line
    /// longer than [`MAX_LINE`] is answered with an error, and the client
    /// is read no more.
    fn read_lines(&mut self) -> Vec<Result<Command, String>> {
        let mut buf = [0u8; 16 * 1024];
        let mut read = 0;
        while !self.closing && read < READ_PER_SERVE {
            match self.stream.read(&mut buf) {
                Ok(0) => self.closing = true,
                Ok(n) => {
                    self.input.extend_from_slice(&buf[..n]);
                    read += n;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => self.closing = true,
            }
        }
        let input = std::mem::take(&mut self.input);
        let mut lines = Vec::new();
        let mut rest = &input[..];
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            if end >= MAX_LINE {
                break;
            }
            lines.push(parse_line(&rest[..end]));
            rest = &rest[end + 1..];
        }
        if rest.len() >= MAX_LINE {
            lines.push(Err(format!("a line longer than {MAX_LINE} bytes; closing")));
            self.closing = true;
        } else if self.closing && !rest.is_empty() {
            lines.push(parse_line(rest)); // the last line, without its newline
        } else {
            self.input = rest.to_vec();
        }
        lines
    }

    /// Writes what the client will take now; whether to keep it.
    fn write_and_keep(&mut self) -> bool {
        while !self.output.is_empty() {
            match self.stream.write(&self.output) {
                Ok(0) => return false,
                Ok(n) => drop(self.output.drain(..n)),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => return false,
            }
        }
        let done = self.closing && self.output.is_empty();
        !done && self.output.len() <= MAX_UNREAD
    }
}

/// One line of the protocol, as the socket reads it: UTF-8, then a
/// [`Command`].
pub fn parse_line(line: &[u8]) -> Result<Command, String> {
    std::str::from_utf8(line).map_err(|_| "not UTF-8".to_string())?.parse()
}

impl Drop for Socket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
