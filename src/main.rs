//! l3fwd-rs: DPDK's l3fwd sample as a Rust application. Same command line
//! (`[EAL args] -- -p PORTMASK --config (port,queue,lcore)...`), same
//! forwarding decisions, same bytes on the wire.

#![forbid(unsafe_code)]

use l3fwd_rs::{app, cli, errln};

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
        .format_timestamp(None)
        .format_target(false)
        .init();
    let argv = match utf8_args() {
        Ok(argv) => argv,
        Err(message) => {
            errln!("l3fwd-rs: {message}");
            std::process::exit(1);
        }
    };
    let (eal_args, mut app_args) = split_args(&argv);
    if argv.len() == 1 {
        errln!(
            "Usage: {}\n\nTry, on virtual ports:\n  {}\n\n`l3fwd-rs --help` lists the options.",
            cli::USAGE,
            cli::EXAMPLE
        );
        std::process::exit(1);
    }
    // `--help`, `-h` and `--version` where EAL's options go: what a new
    // user types first. EAL's own `--help` would exit without l3fwd's.
    if let Some(asked) = eal_args
        .iter()
        .skip(1)
        .find(|a| ["--help", "-h", "--version"].contains(&a.as_str()))
    {
        app_args = vec![argv[0].clone(), asked.clone()];
    }
    if let Some(option) = app_option_before_separator(&argv) {
        errln!(
            "l3fwd-rs: {option} is an l3fwd option, but no '--' separates the EAL options from l3fwd's: \
             l3fwd-rs [EAL options] -- -p PORTMASK [options]"
        );
        std::process::exit(1);
    }
    let args = match cli::parse(&app_args) {
        Ok(a) => a,
        Err(e) if e.use_stderr() => {
            errln!("l3fwd-rs: {}", first_line(&e.to_string()));
            std::process::exit(1);
        }
        Err(e) => e.exit(),
    };
    if let Err(e) = app::run(&eal_args, &args) {
        errln!("l3fwd-rs: {e}");
        std::process::exit(1);
    }
}

/// The command line, every argument UTF-8 (`std::env::args` would panic
/// on one that is not).
fn utf8_args() -> Result<Vec<String>, String> {
    std::env::args_os()
        .enumerate()
        .map(|(i, arg)| {
            arg.into_string().map_err(|arg| {
                let shown = rulefile::quote(&arg.to_string_lossy());
                format!("argument {i} ('{shown}') is not UTF-8 text, which l3fwd-rs takes only")
            })
        })
        .collect()
}

/// EAL arguments (with the program name) and the application's (with the
/// program name), split at the first `--`.
fn split_args(argv: &[String]) -> (Vec<String>, Vec<String>) {
    let prog = argv.first().cloned().unwrap_or_else(|| "l3fwd-rs".into());
    let rest = argv.get(1..).unwrap_or_default();
    match rest.iter().position(|a| a == "--") {
        Some(i) => {
            let eal = std::iter::once(prog.clone()).chain(rest[..i].iter().cloned()).collect();
            let app = std::iter::once(prog).chain(rest[i + 1..].iter().cloned()).collect();
            (eal, app)
        }
        None => (
            std::iter::once(prog.clone()).chain(rest.iter().cloned()).collect(),
            vec![prog],
        ),
    }
}

/// An l3fwd option given when the command line has no `--`: EAL would get
/// it, and l3fwd's parser nothing.
fn app_option_before_separator(argv: &[String]) -> Option<&str> {
    if argv.iter().any(|a| a == "--") {
        return None;
    }
    argv.iter()
        .skip(1)
        .map(String::as_str)
        .find(|a| a.starts_with("-p") || a.starts_with("--config") || a.starts_with("--rule_ipv"))
}

fn first_line(s: &str) -> &str {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(s)
        .trim_start_matches("error: ")
}
