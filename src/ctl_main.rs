//! l3fwd-ctl: changes the tables of a running l3fwd-rs. One command on
//! the command line (`l3fwd-ctl route add 198.18.0.0/16 1`), or `-`: one
//! command per line from stdin. Prints one answer line per command (`ok`,
//! a value, or `error: why`); exits 1 if any answer is an error.

#![forbid(unsafe_code)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;

use clap::Parser;
use l3fwd_rs::ctl;
use l3fwd_rs::live::USAGE;

/// Changes the tables of a running l3fwd-rs, over the socket in its DPDK
/// runtime directory.
#[derive(Parser)]
#[command(name = "l3fwd-ctl", after_help = format!("Commands: {USAGE}"))]
struct Cli {
    /// The `--file-prefix` l3fwd-rs was started with.
    #[arg(long, default_value = ctl::DEFAULT_PREFIX)]
    file_prefix: String,
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

/// Sends the commands and prints the answers; whether all were `ok`.
fn run(cli: &Cli) -> Result<bool, String> {
    let path = ctl::socket_path(&cli.file_prefix);
    let stream = UnixStream::connect(&path).map_err(|e| {
        format!(
            "cannot connect to {}: {e} (is l3fwd-rs running with --file-prefix {}?)",
            path.display(),
            cli.file_prefix
        )
    })?;
    let mut to_server = stream.try_clone().map_err(|e| e.to_string())?;
    let one = (cli.command != ["-"]).then(|| cli.command.join(" "));
    // Commands go out on their own thread while answers come back here:
    // neither side's buffer fills waiting for the other.
    let sender = std::thread::spawn(move || -> std::io::Result<()> {
        match one {
            Some(line) => writeln!(to_server, "{line}")?,
            None => {
                for line in std::io::stdin().lock().lines() {
                    let line = line?;
                    if !line.trim().is_empty() {
                        writeln!(to_server, "{line}")?;
                    }
                }
            }
        }
        to_server.shutdown(std::net::Shutdown::Write)
    });
    let mut all_ok = true;
    let mut out = std::io::stdout().lock();
    for answer in BufReader::new(stream).lines() {
        let answer = answer.map_err(|e| e.to_string())?;
        all_ok &= !answer.starts_with("error:");
        writeln!(out, "{answer}").map_err(|e| e.to_string())?;
    }
    match sender.join() {
        Ok(Ok(())) => Ok(all_ok),
        Ok(Err(e)) => Err(format!("sending commands: {e}")),
        Err(_) => Err("sending commands failed".into()),
    }
}
