//! What the traffic tools share on the command line: user errors exit with
//! status 1, as in l3fwd-rs (clap's own is 2); `--help` and `--version`
//! exit with 0.

use clap::Parser;

/// The parsed command line of `T`, or the process exits: 0 after help or
/// version output, 1 after a one-line error naming the program.
pub fn parse_or_exit<T: Parser>(program: &str) -> T {
    T::try_parse().unwrap_or_else(|error| {
        if !error.use_stderr() {
            error.exit();
        }
        // clap's first paragraph, on one line (without usage and tips).
        let rendered = error.render().to_string();
        let paragraph = rendered.trim_start().split("\n\n").next().unwrap_or_default();
        let message = paragraph.lines().map(str::trim).collect::<Vec<_>>().join(" ");
        eprintln!("{program}: {}", message.trim_start_matches("error: "));
        std::process::exit(1);
    })
}
