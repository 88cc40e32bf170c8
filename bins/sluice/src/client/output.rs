//! What the client commands print: aligned columns for people, levels in colour on a terminal
//! (none when piped or with `NO_COLOR`, which `anstream` strips), one JSON document per line
//! with `--json`.

use std::io::Write;

use anstyle::{AnsiColor, Style};
use serde::Serialize;
use sluice_model::{Level, Log};

/// Prints one JSON document on one line.
pub(crate) fn json_line(value: &impl Serialize) {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
    let mut out = anstream::stdout();
    let _ = writeln!(out, "{text}");
}

/// Prints a line for people.
pub(crate) fn line(text: impl std::fmt::Display) {
    let mut out = anstream::stdout();
    let _ = writeln!(out, "{text}");
}

/// The style of a level.
fn level_style(level: Level) -> Style {
    match level {
        Level::Error => Style::new().fg_color(Some(AnsiColor::Red.into())).bold(),
        Level::Warn => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
        Level::Info => Style::new().fg_color(Some(AnsiColor::Green.into())),
        Level::Debug => Style::new().fg_color(Some(AnsiColor::BrightBlack.into())),
    }
}

/// Dim text (ids, times).
pub(crate) fn dim(text: &str) -> String {
    let style = Style::new().dimmed();
    format!("{style}{text}{style:#}")
}

/// A level, padded to 5 and coloured.
pub(crate) fn level(level: Level) -> String {
    let style = level_style(level);
    format!("{style}{:<5}{style:#}", level.as_str().to_uppercase())
}

/// Unix ms as `2026-11-25 14:03:07.123` (UTC).
pub(crate) fn time(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).map_or_else(
        |_| ms.to_string(),
        |at| {
            format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}",
                at.year(),
                u8::from(at.month()),
                at.day(),
                at.hour(),
                at.minute(),
                at.second(),
                at.millisecond()
            )
        },
    )
}

/// One log on one line: time, level, source, message (its first line).
pub(crate) fn log_line(log: &Log, source_width: usize) -> String {
    let message = log.entry.message.lines().next().unwrap_or_default();
    format!(
        "{}  {}  {:<width$}  {}",
        dim(&time(log.entry.timestamp)),
        level(log.entry.level),
        log.entry.source.as_str(),
        message,
        width = source_width
    )
}

/// Logs as aligned lines, the source column as wide as its widest (up to 24).
pub(crate) fn log_lines(logs: &[Log]) {
    let width = logs.iter().map(|log| log.entry.source.chars().count()).max().unwrap_or(0).min(24);
    for log in logs {
        line(log_line(log, width));
    }
}

/// Rows as aligned columns under a header.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|title| title.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let bold = Style::new().bold();
    let render = |cells: Vec<String>| {
        cells
            .iter()
            .enumerate()
            .map(
                |(at, cell)| {
                    if at + 1 == columns { cell.clone() } else { format!("{cell:<width$}", width = widths[at]) }
                },
            )
            .collect::<Vec<_>>()
            .join("  ")
    };
    line(format!("{bold}{}{bold:#}", render(header.iter().map(|title| (*title).to_owned()).collect())));
    for row in rows {
        line(render(row.clone()));
    }
}
