//! `send` and `import`: entries read as the server reads them (`sluice-ingest`, the format
//! detected the same way), sent gzipped in batches of 100. `import` shows a progress bar on a
//! terminal (plain lines otherwise), keeps up to 4 batches in flight, and records how far the
//! server acknowledged, so a second run resumes there: nothing sent twice, nothing skipped.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use futures_util::StreamExt;
use serde_json::Value;
use sluice_ingest::{Defaults, Format, IngestError, Options};

use super::output::{dim, json_line, line};
use super::{ClientOptions, Failure, client_of};

/// The most one file or stdin may hold for `send`, and a JSON or OBL file for `import` (those
/// are read whole): larger line-based files go through `import`, which streams them.
const MAX_WHOLE_BYTES: u64 = 1 << 30;

/// Lines per batch of a line-based format (one entry per line, at most 100 entries a request).
const LINES_PER_BATCH: usize = sluice_client::BATCH;

/// What `send` and `import` share.
#[derive(Debug, Clone, Args)]
pub(crate) struct Input {
    /// The format: json, jsonl, syslog, text, csv, obl; detected as the server would when absent.
    #[arg(long, value_parser = parse_format)]
    format: Option<Format>,
    /// `source` for entries without one.
    #[arg(long)]
    source: Option<String>,
    /// `environment` for entries without one.
    #[arg(long)]
    environment: Option<String>,
    /// `level` for entries without one.
    #[arg(long)]
    level: Option<String>,
    /// `dataset` for entries without one.
    #[arg(long)]
    dataset: Option<String>,
}

fn parse_format(text: &str) -> Result<Format, String> {
    [Format::Json, Format::Jsonl, Format::Syslog, Format::Text, Format::Csv, Format::Obl]
        .into_iter()
        .find(|format| format.as_str() == text)
        .ok_or_else(|| format!("expected json, jsonl, syslog, text, csv or obl, got '{text}'"))
}

/// `sluice send`.
#[derive(Debug, Args)]
pub(crate) struct SendArgs {
    #[command(flatten)]
    options: ClientOptions,
    #[command(flatten)]
    input: Input,
    /// Files to send; stdin when none.
    files: Vec<PathBuf>,
}

/// `sluice import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    #[command(flatten)]
    options: ClientOptions,
    #[command(flatten)]
    input: Input,
    /// Start over, forgetting how far an earlier run got.
    #[arg(long)]
    restart: bool,
    /// Files to import.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// One batch: its entries, and how far into the input it ends (bytes of a line-based format,
/// entries of a whole document).
struct Chunk {
    entries: Vec<Value>,
    end: u64,
}

impl Input {
    fn options(&self) -> Options {
        let mut options = Options::new(sluice_http::unix_now_ms());
        options.defaults = Defaults {
            source: self.source.as_deref().map(Into::into),
            environment: self.environment.clone(),
            level: self.level.clone(),
            dataset: self.dataset.as_deref().map(Into::into),
        };
        options
    }
}

/// A refusal of the input as the server would refuse it (exit 2), with where it is.
fn refused(name: &str, first_line: usize, error: IngestError) -> Failure {
    let mut message = match &error {
        IngestError::Parse(parse) => {
            let at = parse.line.map(|line| first_line + line - 1);
            format!("{name}{}: {}", at.map(|line| format!(" line {line}")).unwrap_or_default(), parse.reason)
        }
        IngestError::Invalid(issues) => {
            let listed: Vec<String> = issues
                .iter()
                .take(5)
                .map(|issue| super::issue_line(&serde_json::to_value(issue).unwrap_or_default()))
                .collect();
            format!("{name} from line {first_line}: entries the server would refuse:\n{}", listed.join("\n"))
        }
    };
    if message.contains("source") || message.contains("environment") {
        message.push_str("\n  Entries need a source and an environment: pass --source and --environment.");
    }
    Failure { code: 2, message }
}

fn entries_of(batch: sluice_ingest::Batch) -> Vec<Value> {
    batch.entries.iter().filter_map(|entry| serde_json::to_value(entry).ok()).collect()
}

/// The format of an input whose first bytes are `head` (a file may be longer): as the server
/// sniffs a body, but a JSON document cut off by the end of `head` is still JSON.
fn detect(head: &[u8], given: Option<Format>) -> Format {
    if let Some(format) = given {
        return format;
    }
    let trimmed = head.trim_ascii_start();
    if head.windows(15).any(|window| window == b"open-board-log-") {
        return Format::Obl;
    }
    if trimmed.starts_with(b"[") {
        return Format::Json;
    }
    if trimmed.starts_with(b"{") {
        // One object a line is JSONL; an object that does not end with its first line is a
        // JSON document (pretty-printed, or `{"logs": [...]}` on many lines).
        let first = trimmed.split(|byte| *byte == b'\n').next().unwrap_or_default();
        if serde_json::from_slice::<serde::de::IgnoredAny>(first).is_err() {
            return Format::Json;
        }
    }
    // Up to the last whole line, so a cut-off line does not mislead the guess.
    let whole = head.iter().rposition(|byte| *byte == b'\n').map_or(head, |end| &head[..end]);
    Format::sniff(whole)
}

/// Batches read from an input, or why one could not be.
type Chunks = Box<dyn Iterator<Item = Result<Chunk, Failure>>>;

/// Reads `reader` in batches, starting after `skip` (bytes or entries), until `stop` is set.
fn chunks(
    name: String,
    mut reader: Box<dyn BufRead>,
    input: &Input,
    skip: u64,
    stop: Arc<AtomicBool>,
) -> Result<(Format, Chunks), Failure> {
    let head = reader.fill_buf().map_err(|error| Failure { code: 1, message: format!("{name}: {error}") })?.to_vec();
    let format = detect(&head[..head.len().min(64 * 1024)], input.format);
    let options = input.options();
    if matches!(format, Format::Json | Format::Obl) {
        let mut body = Vec::new();
        #[expect(clippy::disallowed_methods, reason = "bounded by take: a whole JSON or OBL document, at most 1 GiB")]
        let read = reader.take(MAX_WHOLE_BYTES).read_to_end(&mut body);
        read.map_err(|error| Failure { code: 1, message: format!("{name}: {error}") })?;
        let mut whole = options;
        whole.max_entries = usize::MAX;
        let entries =
            entries_of(sluice_ingest::parse(format, &body, &whole).map_err(|error| refused(&name, 1, error))?);
        let total = entries.len() as u64;
        let mut entries = entries.into_iter().skip(usize::try_from(skip).unwrap_or(usize::MAX));
        let mut done = skip.min(total);
        let iterator = std::iter::from_fn(move || {
            if stop.load(Ordering::SeqCst) {
                return None;
            }
            let batch: Vec<Value> = entries.by_ref().take(sluice_client::BATCH).collect();
            done += batch.len() as u64;
            (!batch.is_empty()).then_some(Ok(Chunk { entries: batch, end: done }))
        });
        return Ok((format, Box::new(iterator)));
    }
    // Line-based: a CSV header is read first and repeated before every batch.
    let mut position = 0u64;
    let mut line_number = 0usize;
    let mut header = Vec::new();
    if format == Format::Csv {
        position += reader
            .read_until(b'\n', &mut header)
            .map_err(|error| Failure { code: 1, message: error.to_string() })? as u64;
        line_number += 1;
    }
    if skip > position {
        // Resume: skip to where the server's acknowledgement ended.
        let mut skipped = 0u64;
        let mut discard = Vec::new();
        while position < skip {
            discard.clear();
            let read = reader
                .read_until(b'\n', &mut discard)
                .map_err(|error| Failure { code: 1, message: error.to_string() })?;
            if read == 0 {
                break;
            }
            position += read as u64;
            skipped += 1;
        }
        line_number += usize::try_from(skipped).unwrap_or(usize::MAX);
    }
    let mut failed = false;
    let iterator = std::iter::from_fn(move || {
        if failed || stop.load(Ordering::SeqCst) {
            return None;
        }
        let mut body = header.clone();
        let first = line_number + 1;
        let mut lines = 0;
        while lines < LINES_PER_BATCH {
            let mut next = Vec::new();
            match reader.read_until(b'\n', &mut next) {
                Ok(0) => break,
                Ok(read) => {
                    position += read as u64;
                    line_number += 1;
                    if !next.trim_ascii().is_empty() {
                        lines += 1;
                    }
                    body.extend_from_slice(&next);
                }
                Err(error) => {
                    failed = true;
                    return Some(Err(Failure { code: 1, message: format!("{name}: {error}") }));
                }
            }
        }
        if lines == 0 {
            return None;
        }
        match sluice_ingest::parse(format, &body, &options) {
            Ok(batch) => Some(Ok(Chunk { entries: entries_of(batch), end: position })),
            Err(error) => {
                failed = true;
                Some(Err(refused(&name, first.saturating_sub(usize::from(format == Format::Csv)), error)))
            }
        }
    });
    Ok((format, Box::new(iterator)))
}

/// Sends every chunk with `in_flight` requests at most, in order; `acknowledged` hears the end
/// of each chunk the server stored, in input order. Ctrl-C stops reading new chunks and lets
/// those in flight finish. Returns the entries sent and whether it was interrupted.
async fn pump(
    client: &sluice_client::Client,
    chunks: Chunks,
    stop: &Arc<AtomicBool>,
    in_flight: usize,
    mut acknowledged: impl FnMut(u64, u64) -> Result<(), Failure>,
) -> Result<(u64, bool), Failure> {
    let sends = futures_util::stream::iter(chunks.map(|chunk| async move {
        let chunk = chunk?;
        let accepted = client.ingest(&chunk.entries).await?;
        Ok::<_, Failure>((chunk.end, accepted.count))
    }))
    .buffered(in_flight);
    let mut sends = std::pin::pin!(sends);
    let mut sent = 0;
    let mut interrupted = false;
    // Listening from here on: a Ctrl-C that comes between two answers is kept, not lost.
    let mut interrupt = interrupt_signal()?;
    loop {
        let next = tokio::select! {
            next = sends.next() => next,
            _ = interrupt.recv(), if !interrupted => {
                interrupted = true;
                stop.store(true, Ordering::SeqCst);
                eprintln!("{}", dim("interrupted: finishing the batches in flight..."));
                continue;
            }
        };
        match next {
            None => return Ok((sent, interrupted)),
            Some(Ok((end, count))) => {
                sent += count;
                acknowledged(end, count)?;
            }
            Some(Err(failure)) => {
                return Err(Failure {
                    code: failure.code,
                    message: format!("{} ({sent} entries were sent before)", failure.message),
                });
            }
        }
    }
}

/// SIGINT (Ctrl-C) as a stream that keeps a signal until it is read.
pub(crate) fn interrupt_signal() -> Result<tokio::signal::unix::Signal, Failure> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|error| Failure { code: 1, message: format!("cannot watch for Ctrl-C: {error}") })
}

pub(crate) async fn send(args: SendArgs) -> Result<(), Failure> {
    let client = client_of(&args.options)?;
    let stop = Arc::new(AtomicBool::new(false));
    let mut total = 0;
    let inputs: Vec<(String, Box<dyn BufRead>)> = if args.files.is_empty() {
        vec![("stdin".to_owned(), Box::new(BufReader::new(std::io::stdin().take(MAX_WHOLE_BYTES))))]
    } else {
        args.files.iter().map(|path| Ok((path.display().to_string(), open(path)?))).collect::<Result<_, Failure>>()?
    };
    for (name, reader) in inputs {
        let (_, chunks) = chunks(name, reader, &args.input, 0, stop.clone())?;
        let (sent, interrupted) = pump(&client, chunks, &stop, 1, |_, _| Ok(())).await?;
        total += sent;
        if interrupted {
            return Err(Failure { code: 1, message: format!("interrupted after {total} entries were sent") });
        }
    }
    if args.options.json {
        json_line(&serde_json::json!({"sent": total}));
    } else {
        line(format!("sent {total} entries to {}", client.base_url()));
    }
    Ok(())
}

fn open(path: &Path) -> Result<Box<dyn BufRead>, Failure> {
    let file = std::fs::File::open(path)
        .map_err(|error| Failure { code: 1, message: format!("{}: {error}", path.display()) })?;
    Ok(Box::new(BufReader::with_capacity(256 * 1024, file)))
}

pub(crate) async fn import(args: ImportArgs) -> Result<(), Failure> {
    let client = client_of(&args.options)?;
    let stop = Arc::new(AtomicBool::new(false));
    let mut total = 0;
    for path in &args.files {
        let progress = super::progress::Progress::load(client.base_url(), args.options.workspace.as_deref(), path)?;
        let progress = if args.restart { progress.restarted() } else { progress };
        let size = std::fs::metadata(path)
            .map_err(|error| Failure { code: 1, message: format!("{}: {error}", path.display()) })?
            .len();
        let skip = if progress.done > size && progress.unit_is_bytes { 0 } else { progress.done };
        let (format, chunks) = chunks(path.display().to_string(), open(path)?, &args.input, skip, stop.clone())?;
        let whole = matches!(format, Format::Json | Format::Obl);
        let mut progress = progress.with_unit(!whole);
        if skip > 0 && !args.options.json {
            eprintln!(
                "{}",
                dim(&format!(
                    "{}: resuming after {} {}",
                    path.display(),
                    skip,
                    if whole { "entries" } else { "bytes" }
                ))
            );
        }
        let bar = super::progress::Bar::new(path, if whole { None } else { Some(size) }, skip, args.options.json);
        let (sent, interrupted) = pump(&client, chunks, &stop, 4, |end, count| {
            bar.advance(end, count);
            progress.done = end;
            progress.save()
        })
        .await?;
        bar.finish(sent);
        total += sent;
        if interrupted {
            return Err(Failure {
                code: 1,
                message: format!("interrupted after {total} entries were sent; run the same command again to resume"),
            });
        }
        progress.forget()?;
    }
    if args.options.json {
        json_line(&serde_json::json!({"imported": total}));
    } else {
        line(format!("imported {total} entries to {}", client.base_url()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_document_cut_off_by_the_first_read_is_still_detected() {
        let array =
            format!("[{}", r#"{"level":"info","message":"x","source":"a","environment":"production"},"#.repeat(500));
        assert_eq!(detect(&array.as_bytes()[..8192], None), Format::Json);
        let pretty = "{\n  \"logs\": [\n    {\"message\": \"x\"},\n";
        assert_eq!(detect(pretty.as_bytes(), None), Format::Json);
        let lines = "{\"message\":\"a\"}\n{\"message\":\"b\"}\n{\"mess";
        assert_eq!(detect(lines.as_bytes(), None), Format::Jsonl);
        assert_eq!(detect(b"2026-11-25 10:00:00 INFO started\nINFO cut", None), Format::Text);
        assert_eq!(detect(b"level,message\ninfo,hi\n", None), Format::Csv);
        assert_eq!(detect(b"{\"format\":\"open-board-log-0.1\"", None), Format::Obl);
        assert_eq!(detect(b"anything", Some(Format::Syslog)), Format::Syslog);
    }
}
