//! Embedding `sluice-ingest`: read a body in any of sluice's formats and print the entries as
//! JSON lines, exactly as a sluice server would store them.
//!
//! ```sh
//! cargo run -p sluice-ingest --example parse_body -- syslog ../shared/corpus/syslog/rfc3164.txt
//! cargo run -p sluice-ingest --example parse_body -- auto some-body.txt
//! ```
//!
//! Defaults for `source` and `environment` are set here as a server's query string would.

use std::io::Write;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use sluice_ingest::{Defaults, Format, IngestError, Options, parse};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [format, path] = &args[..] else {
        eprintln!("usage: parse_body <json|jsonl|syslog|text|csv|obl|auto> <file>");
        return ExitCode::FAILURE;
    };
    let body = match std::fs::read(path) {
        Ok(body) => body,
        Err(error) => {
            eprintln!("cannot read {path}: {error}");
            return ExitCode::FAILURE;
        }
    };
    let format = if format == "auto" {
        Format::sniff(&body)
    } else {
        match format.parse::<Format>() {
            Ok(format) => format,
            Err(error) => {
                eprintln!("{error}");
                return ExitCode::FAILURE;
            }
        }
    };
    #[expect(clippy::disallowed_methods, reason = "an example program: the time entries without one are stamped with")]
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_millis() as i64);
    let mut options = Options::new(now);
    options.defaults =
        Defaults { source: Some("example".into()), environment: Some("development".into()), ..Defaults::default() };
    // An embedding service may take bigger batches than sluice's 100 per request.
    options.max_entries = usize::MAX;
    match parse(format, &body, &options) {
        Ok(batch) => {
            let mut stdout = std::io::stdout().lock();
            for entry in batch.entries {
                // A closed pipe (`| head`) ends the output quietly.
                if writeln!(stdout, "{}", serde_json::to_string(&entry).unwrap_or_default()).is_err() {
                    break;
                }
            }
            ExitCode::SUCCESS
        }
        Err(IngestError::Invalid(issues)) => {
            for issue in issues {
                eprintln!("{}: {}", serde_json::to_string(&issue.path).unwrap_or_default(), issue.message);
            }
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
