//! The control socket `l3fwd-ctl` talks to: a Unix socket in the
//! instance's DPDK runtime directory (found from its `--file-prefix`),
//! mode 0600 like DPDK's telemetry socket. One command per line, one
//! answer line per command: `ok`, a value, or `error: why`.
//!
//! Served from the control thread's loop without ever waiting on a
//! client: every socket is non-blocking, a line is at most [`MAX_LINE`]
//! bytes (a longer one is answered with an error and the client closed),
//! and a client that does not read its answers is dropped once
//! `MAX_UNREAD` (1 MiB) of them are waiting. Idle connections never keep
//! a command out: at most [`MAX_CLIENTS`] are served at once, and a new
//! one takes the place of the longest idle (one with nothing pending), as
//! it does when the process runs out of file descriptors; one that sends
//! nothing for [`IDLE_TIMEOUT`] is closed anyway. Only when every client
//! has work pending is a new one told to try again, and closed.
//!
//! `trace N` is answered as the lcores record the packets: one line each
//! (each beginning with [`MORE`]), then a last line; one client traces at
//! a time, and its later commands wait for the trace to end.
//!
//! The socket is the instance's own: one that answers at the path means
//! another instance runs with the same prefix (which EAL does not always
//! refuse: `--no-shconf`, `--in-memory`), and l3fwd-rs refuses to start;
//! at exit it removes the path only if it is still its socket.

use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::control::live::{Tables, RELOAD_READ_TIMEOUT};
use crate::control::protocol::{parse_line, Answer, Command, MORE};
use crate::control::trace;
use crate::dataplane::trace::TraceReader;

/// The socket's name in the runtime directory.
pub const SOCKET_NAME: &str = "l3fwd_ctl";

/// Where the instance started with `--file-prefix prefix` listens: in
/// EAL's runtime folder.
pub fn socket_path(prefix: &str) -> PathBuf {
    dpdk::runtime_dir_of(prefix).join(SOCKET_NAME)
}

/// The longest command line, newline included.
pub const MAX_LINE: usize = 4096;

/// Answers waiting for a client that does not read them, at most.
const MAX_UNREAD: usize = 1 << 20;

/// Bytes read from one client per serve, at most: many clients share it.
const READ_PER_SERVE: usize = 1 << 20;

/// Clients served at once, at most.
pub const MAX_CLIENTS: usize = 64;

/// A client that sends nothing and has no answer waiting for this long is
/// closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// A trace ends after this long without all its packets (the traffic
/// stopped, or never came).
pub const TRACE_TIMEOUT: Duration = Duration::from_secs(10);

/// Trace lines written per serve, at most: each looks its rule up in the
/// rules, which a large table makes slow, and other clients wait.
const TRACE_LINES_PER_SERVE: usize = 64;

/// The listening socket and its clients.
pub struct Socket {
    listener: UnixListener,
    path: PathBuf,
    /// The bound socket file's device and inode: at exit the path is
    /// removed only if it is still this file.
    file: (u64, u64),
    clients: Vec<Client>,
    /// A descriptor held in reserve (`/dev/null`): given up when accept
    /// finds none left, to take the connection and say why it is closed.
    spare: Option<std::fs::File>,
    /// The lcores' records for `trace`.
    trace: TraceReader,
}

/// A client's `trace` under way.
struct Tracing {
    wanted: u32,
    shown: u32,
    /// When the lcores were asked (none yet: the commands before it are
    /// run first).
    since: Option<Instant>,
}

struct Client {
    stream: UnixStream,
    /// When it last sent something (or connected).
    heard: Instant,
    /// Its lines from a `reload` on, waiting for the rule files' read.
    backlog: std::collections::VecDeque<Result<Command, String>>,
    /// When its waiting `reload` began waiting.
    reload_since: Option<Instant>,
    /// Bytes received and not yet a whole line.
    input: Vec<u8>,
    /// Answers not yet written.
    output: Vec<u8>,
    /// The client is done sending (or sent a line too long): close once
    /// its answers are out.
    closing: bool,
    tracing: Option<Tracing>,
}

impl Socket {
    /// Listens on `SOCKET_NAME` in `dir`, mode 0600. A socket left there
    /// by an instance that died is replaced; one that answers belongs to a
    /// live instance and is left alone: an error. `trace` brings the
    /// lcores' records for `trace`.
    pub fn bind(dir: &Path, trace: TraceReader) -> Result<Socket, String> {
        let path = dir.join(SOCKET_NAME);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                return Err(format!("{} is a directory, not a socket: remove it", path.display()))
            }
            Ok(_) if UnixStream::connect(&path).is_ok() => {
                return Err(format!(
                    "another l3fwd-rs answers on {}: one runs with this --file-prefix already \
                     (give this one another)",
                    path.display()
                ))
            }
            Ok(_) => std::fs::remove_file(&path).map_err(|e| format!("cannot replace {}: {e}", path.display()))?,
            Err(_) => {}
        }
        let fail = |e: io::Error| format!("cannot listen on {}: {e}", path.display());
        let listener = UnixListener::bind(&path).map_err(fail)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(fail)?;
        listener.set_nonblocking(true).map_err(fail)?;
        let meta = std::fs::symlink_metadata(&path).map_err(fail)?;
        Ok(Socket {
            listener,
            path,
            file: (meta.dev(), meta.ino()),
            clients: Vec::new(),
            spare: std::fs::File::open("/dev/null").ok(),
            trace,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Accepts new clients, reads every whole line they sent, runs them
    /// on `tables` as one batch, and writes what each client will take.
    /// Returns whether there was anything to do.
    pub fn serve(&mut self, tables: &mut dyn Tables) -> bool {
        self.accept_clients();
        // Each line, by client: a command for the batch or its error. A
        // client's lines from a `reload` on wait (in its backlog) until
        // the rule files are read, off this thread; other clients go on.
        let mut lines: Vec<(usize, Result<Command, String>)> = Vec::new();
        let mut read_taken = false;
        let mut traced = self.clients.iter().any(|c| c.tracing.is_some());
        for (c, client) in self.clients.iter_mut().enumerate() {
            let read = client.read_lines();
            client.backlog.extend(read);
            while let Some(line) = client.backlog.front() {
                if client.tracing.is_some() {
                    break; // its trace first
                }
                if let Ok(Command::Trace(packets)) = *line {
                    client.backlog.pop_front();
                    if traced {
                        lines.push((c, Err("another client's trace is under way; try again".into())));
                        continue;
                    }
                    // Starts once the lines before it are answered (below).
                    client.tracing = Some(Tracing {
                        wanted: packets,
                        shown: 0,
                        since: None,
                    });
                    traced = true;
                    break;
                }
                if !matches!(line, Ok(Command::Reload)) {
                    lines.extend(client.backlog.pop_front().map(|l| (c, l)));
                    continue;
                }
                let since = *client.reload_since.get_or_insert_with(Instant::now);
                let line = if !read_taken && tables.rules_read() {
                    // One reload per batch takes the rules read.
                    read_taken = true;
                    client.backlog.pop_front()
                } else if since.elapsed() >= RELOAD_READ_TIMEOUT {
                    tables.abandon_read();
                    client.backlog.pop_front();
                    Some(Err(format!(
                        "the rule files were not read within {} s (a FIFO without a writer?); \
                         the tables in use are unchanged",
                        RELOAD_READ_TIMEOUT.as_secs()
                    )))
                } else {
                    break; // still reading
                };
                client.reload_since = None;
                lines.extend(line.map(|l| (c, l)));
            }
        }
        let waiting = self
            .clients
            .iter()
            .any(|c| !c.backlog.is_empty() || c.tracing.is_some());
        let busy = !lines.is_empty() || waiting;
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
        self.show_trace(tables);
        self.clients.retain_mut(Client::write_and_keep);
        if traced && !self.clients.iter().any(|c| c.tracing.is_some()) {
            self.trace.stop(); // its client left
        }
        busy
    }

    /// Starts the trace a client asked for, or writes it the records that
    /// came, and its last line once the trace is over.
    fn show_trace(&mut self, tables: &mut dyn Tables) {
        let Some(client) = self.clients.iter_mut().find(|c| c.tracing.is_some()) else {
            return;
        };
        let Some(t) = client.tracing.as_mut() else {
            return;
        };
        let since = *t.since.get_or_insert_with(|| {
            self.trace.start(t.wanted);
            Instant::now()
        });
        for record in std::iter::from_fn(|| self.trace.next()).take(TRACE_LINES_PER_SERVE) {
            let line = trace::line(&record, &tables.explain(record.frame_before()));
            client.output.extend_from_slice(format!("{MORE}{line}\n").as_bytes());
            t.shown += 1;
        }
        let last = if t.shown >= t.wanted {
            format!("traced {} packet{}", t.shown, if t.shown == 1 { "" } else { "s" })
        } else if since.elapsed() >= TRACE_TIMEOUT {
            format!(
                "traced {} of {} packets: no more came within {} s",
                t.shown,
                t.wanted,
                TRACE_TIMEOUT.as_secs()
            )
        } else {
            return;
        };
        client.output.extend_from_slice(format!("{last}\n").as_bytes());
        client.tracing = None;
        self.trace.stop();
    }
}

impl Socket {
    /// At the stop: commands still waiting (behind a reload whose rules
    /// were not read) are answered so, not dropped unanswered.
    pub fn stop(&mut self) {
        for client in &mut self.clients {
            if let Some(t) = client.tracing.take() {
                let line = format!(
                    "error: l3fwd-rs stopped before the trace was done ({} of {} packets shown)\n",
                    t.shown, t.wanted
                );
                client.output.extend_from_slice(line.as_bytes());
            }
            for _ in client.backlog.drain(..) {
                client
                    .output
                    .extend_from_slice(b"error: l3fwd-rs stopped before running this command\n");
            }
            client.closing = true;
        }
        self.clients.retain_mut(Client::write_and_keep);
    }

    /// Takes every connection waiting: each in place of the longest idle
    /// client when [`MAX_CLIENTS`] are served or the descriptors ran out;
    /// told to try again and closed when no client is idle.
    fn accept_clients(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => self.admit(stream),
                Err(e) if out_of_descriptors(&e) => {
                    if self.drop_longest_idle() {
                        continue;
                    }
                    // None idle: the reserve takes the connection to say so.
                    drop(self.spare.take());
                    if let Ok((stream, _)) = self.listener.accept() {
                        refuse(
                            stream,
                            "l3fwd-rs is out of file descriptors, every client busy; try again",
                        );
                    }
                    self.spare = std::fs::File::open("/dev/null").ok();
                    return;
                }
                Err(_) => return, // WouldBlock: none waiting
            }
        }
    }

    fn admit(&mut self, stream: UnixStream) {
        if self.clients.len() >= MAX_CLIENTS && !self.drop_longest_idle() {
            return refuse(stream, &format!("{MAX_CLIENTS} clients are busy already; try again"));
        }
        if stream.set_nonblocking(true).is_ok() {
            self.clients.push(Client {
                stream,
                heard: Instant::now(),
                backlog: Default::default(),
                reload_since: None,
                input: Vec::new(),
                output: Vec::new(),
                closing: false,
                tracing: None,
            });
        }
    }

    /// Closes the client that has been idle longest (nothing read but
    /// not answered, no answer waiting); whether there was one.
    fn drop_longest_idle(&mut self) -> bool {
        let idle = self.clients.iter().enumerate().filter(|(_, c)| c.is_idle());
        match idle.min_by_key(|(_, c)| c.heard) {
            Some((i, _)) => {
                self.clients.swap_remove(i);
                true
            }
            None => false,
        }
    }
}

/// Whether accept failed for want of a file descriptor (the process's or
/// the system's).
fn out_of_descriptors(e: &io::Error) -> bool {
    matches!(
        rustix::io::Errno::from_io_error(e),
        Some(rustix::io::Errno::MFILE | rustix::io::Errno::NFILE)
    )
}

/// One error line to a client that is not served, then closes it.
fn refuse(mut stream: UnixStream, why: &str) {
    // Best effort: the socket is new, its buffer empty.
    let _ = writeln!(stream, "error: {why}");
}

impl Client {
    /// Nothing half-read or waiting, no answer waiting.
    fn is_idle(&self) -> bool {
        self.input.is_empty()
            && self.backlog.is_empty()
            && self.output.is_empty()
            && !self.closing
            && self.tracing.is_none()
    }

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
                    self.heard = Instant::now();
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
        let done = self.closing && self.output.is_empty() && self.backlog.is_empty() && self.tracing.is_none();
        let timed_out = self.is_idle() && self.heard.elapsed() >= IDLE_TIMEOUT;
        !done && !timed_out && self.output.len() <= MAX_UNREAD
    }
}

impl Drop for Socket {
    /// Removes the path if it is still this socket (not one that replaced
    /// it, nor anything else since put there).
    fn drop(&mut self) {
        let ours = std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.file);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
