//! l3fwd-ctl: changes the tables of a running l3fwd-rs. One command on
//! the command line (`l3fwd-ctl route add 198.18.0.0/16 1`), or `-`: one
//! command per line from stdin. Prints each command's answer (`ok`, a
//! value, `error: why`, or `trace`'s lines), or with `--json` each answer
//! as one JSON object on a line of its own; exits 1 if any answer is an
//! error.

#![forbid(unsafe_code)]

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;

use clap::Parser;
use l3fwd_rs::control::protocol::{MORE, USAGE};
use l3fwd_rs::control::socket;

/// Changes the tables of a running l3fwd-rs, over the socket in its DPDK
/// runtime directory.
#[derive(Parser)]
#[command(name = "l3fwd-ctl", after_help = format!("Commands: {USAGE}"))]
struct Cli {
    /// The `--file-prefix` l3fwd-rs was started with.
    #[arg(long, default_value = dpdk::DEFAULT_FILE_PREFIX)]
    file_prefix: String,
    /// Seconds to wait for the next answer before giving up (0: no limit;
    /// a reload of a large table takes seconds)
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// Each answer as one JSON object on a line of its own, for scripts:
    /// {"ok":true,"answer":"ok"}, a list's or trace's lines in "lines",
    /// or {"ok":false,"error":"why"}
    #[arg(long)]
    json: bool,
    /// The command, or `-` to read commands from stdin, one per line.
    #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
    command: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("l3fwd-ctl: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The one command of the command line: its words joined by spaces. A
/// word holding a line break is refused: the socket reads one command per
/// line, so it would smuggle in a second one (no argument holds a NUL).
fn one_command(words: &[String]) -> Result<String, String> {
    match words.iter().find(|w| w.contains(['\n', '\r'])) {
        Some(word) => Err(format!(
            "'{}' holds a line break: give one command per invocation, or several with - (one per line of stdin)",
            rulefile::quote(word)
        )),
        None => Ok(words.join(" ")),
    }
}

/// Sends the commands and prints the answers; whether all were `ok`.
fn run(cli: &Cli) -> Result<bool, String> {
    let one = (cli.command != ["-"]).then(|| one_command(&cli.command)).transpose()?;
    let path = socket::socket_path(&cli.file_prefix);
    let stream = UnixStream::connect(&path).map_err(|e| {
        format!(
            "cannot connect to {}: {e} (is l3fwd-rs running with --file-prefix {}?)",
            path.display(),
            cli.file_prefix
        )
    })?;
    let timeout = (cli.timeout > 0).then(|| std::time::Duration::from_secs(cli.timeout));
    stream.set_read_timeout(timeout).map_err(|e| e.to_string())?;
    let mut to_server = stream.try_clone().map_err(|e| e.to_string())?;
    // Commands go out on their own thread while answers come back here:
    // neither side's buffer fills waiting for the other.
    let sender = std::thread::spawn(move || -> std::io::Result<usize> {
        let sent = match one {
            Some(line) => writeln!(to_server, "{line}").map(|()| 1)?,
            None => send_stdin(&mut to_server)?,
        };
        to_server.shutdown(std::net::Shutdown::Write)?;
        Ok(sent)
    });
    let (mut all_ok, mut answered) = (true, 0);
    // Answers are printed in one write per batch the socket gives.
    let mut answers = BufReader::new(stream);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut answer = String::new();
    let mut json = cli.json.then(JsonAnswer::default);
    let failed = |e: std::io::Error| e.to_string();
    let waited = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => format!(
            "no answer from {} within {} s (--timeout; 0 waits as long as it takes)",
            path.display(),
            cli.timeout
        ),
        _ => e.to_string(),
    };
    while answers.read_line(&mut answer).map_err(waited)? > 0 {
        // A line of a longer answer: its last line is still to come.
        if !answer.starts_with(MORE) {
            answered += 1;
            all_ok &= !answer.starts_with("error:");
        }
        if !answer.ends_with('\n') {
            answer.push('\n');
        }
        let printed = match json.as_mut() {
            Some(json) => json.take(&answer),
            None => Some(std::mem::take(&mut answer)),
        };
        if let Some(printed) = printed {
            out.write_all(printed.as_bytes()).map_err(failed)?;
        }
        answer.clear();
        if answers.buffer().is_empty() {
            out.flush().map_err(failed)?;
        }
    }
    out.flush().map_err(failed)?;
    match sender.join() {
        Ok(Ok(sent)) if answered < sent => Err(format!(
            "{} of {sent} commands unanswered: l3fwd-rs closed the connection (it stopped?)",
            sent - answered
        )),
        Ok(Ok(_)) => Ok(all_ok),
        Ok(Err(e)) => Err(format!("sending commands: {e}")),
        Err(_) => Err("sending commands failed".into()),
    }
}

/// `--json`: the lines of one answer, gathered until its last.
#[derive(Default)]
struct JsonAnswer {
    lines: Vec<String>,
}

impl JsonAnswer {
    /// Takes one line of an answer (with its newline); at the last, the
    /// whole answer as a JSON line.
    fn take(&mut self, line: &str) -> Option<String> {
        let text = line.trim_end_matches('\n');
        if let Some(more) = text.strip_prefix(MORE) {
            self.lines.push(more.to_owned());
            return None;
        }
        let mut object = match text.strip_prefix("error: ") {
            Some(why) => serde_json::json!({ "ok": false, "error": why }),
            None => serde_json::json!({ "ok": true, "answer": text }),
        };
        if !self.lines.is_empty() {
            object["lines"] = std::mem::take(&mut self.lines).into();
        }
        Some(format!("{object}\n"))
    }
}

/// Sends the commands of stdin's lines, blank ones left out, in one write
/// per read: a pipe of many commands goes out in large writes, a line
/// typed at a terminal at once. Returns how many it sent.
fn send_stdin(to_server: &mut impl Write) -> std::io::Result<usize> {
    let mut sent = 0;
    let mut stdin = std::io::stdin().lock();
    let (mut input, mut chunk) = (Vec::new(), vec![0; 64 * 1024]);
    loop {
        let n = match stdin.read(&mut chunk) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            read => read?,
        };
        input.extend_from_slice(&chunk[..n]);
        // At the end, the last line needs no newline.
        let whole = match n {
            0 => input.len(),
            _ => input.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1),
        };
        let mut commands = Vec::with_capacity(whole + 1);
        for line in input[..whole].split(|&b| b == b'\n') {
            if !line.trim_ascii().is_empty() {
                commands.extend_from_slice(line);
                commands.push(b'\n');
                sent += 1;
            }
        }
        to_server.write_all(&commands)?;
        input.drain(..whole);
        if n == 0 {
            return Ok(sent);
        }
    }
}
