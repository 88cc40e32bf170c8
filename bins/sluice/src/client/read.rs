//! Reading: `list`, `get`, `search`, `stats`, `summary`, `tail`, `flows`, `flow`.

use clap::Args;
use futures_util::StreamExt;
use sluice_client::TailEvent;

use super::output::{self, dim, json_line, line, log_lines, table};
use super::{ClientOptions, Failure, client_of};

/// The list's filters, shared by `list`, `search` and `tail`.
#[derive(Debug, Clone, Args)]
pub(crate) struct Filters {
    /// Only this level: debug, info, warn, error.
    #[arg(long)]
    level: Option<String>,
    /// Only this source.
    #[arg(long)]
    source: Option<String>,
    /// Only this environment.
    #[arg(long)]
    environment: Option<String>,
    /// Only this dataset.
    #[arg(long)]
    dataset: Option<String>,
    /// Only this user id.
    #[arg(long)]
    user_id: Option<String>,
    /// Only this session id.
    #[arg(long)]
    session_id: Option<String>,
    /// Only this flow id.
    #[arg(long)]
    flow_id: Option<String>,
    /// From this time: Unix ms or RFC 3339 (`2026-11-25T10:00:00Z`).
    #[arg(long, value_parser = parse_time)]
    from: Option<i64>,
    /// Up to this time: Unix ms or RFC 3339.
    #[arg(long, value_parser = parse_time)]
    to: Option<i64>,
}

/// A time: Unix ms, or RFC 3339.
fn parse_time(text: &str) -> Result<i64, String> {
    if let Ok(ms) = text.parse::<i64>() {
        return Ok(ms);
    }
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map(|at| i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX))
        .map_err(|_| format!("expected Unix ms or an RFC 3339 time such as 2026-11-25T10:00:00Z, got '{text}'"))
}

impl Filters {
    fn query(&self, with_ids: bool) -> Vec<(&'static str, String)> {
        let mut query = Vec::new();
        let mut add = |name: &'static str, value: &Option<String>| {
            if let Some(value) = value {
                query.push((name, value.clone()));
            }
        };
        add("level", &self.level);
        add("source", &self.source);
        add("environment", &self.environment);
        add("dataset", &self.dataset);
        if with_ids {
            add("userId", &self.user_id);
            add("sessionId", &self.session_id);
            add("flowId", &self.flow_id);
        }
        add("from", &self.from.map(|ms| ms.to_string()));
        add("to", &self.to.map(|ms| ms.to_string()));
        query
    }
}

fn pairs<'a>(query: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    query.iter().map(|(name, value)| (*name, value.as_str())).collect()
}

/// Which page of logs.
#[derive(Debug, Clone, Args)]
pub(crate) struct Paging {
    /// How many (at most 1,000).
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// How many to skip.
    #[arg(long, default_value_t = 0)]
    offset: u64,
}

impl Paging {
    fn query(&self) -> [(&'static str, String); 2] {
        [("limit", self.limit.to_string()), ("offset", self.offset.to_string())]
    }
}

/// `sluice list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    options: ClientOptions,
    #[command(flatten)]
    filters: Filters,
    #[command(flatten)]
    paging: Paging,
}

/// `sluice search`.
#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    #[command(flatten)]
    options: ClientOptions,
    /// The query: words, "quoted phrases", -exclusions.
    query: String,
    /// Fields to search: message, errorName, errorStack, data (comma-separated).
    #[arg(long)]
    fields: Option<String>,
    #[command(flatten)]
    filters: Filters,
    #[command(flatten)]
    paging: Paging,
}

fn print_page(options: &ClientOptions, logs: &[sluice_client::Log], pagination: &sluice_client::Pagination) {
    if options.json {
        logs.iter().for_each(json_line);
        return;
    }
    log_lines(logs);
    if logs.is_empty() {
        line(dim("no logs match"));
    } else if pagination.has_more {
        let next = pagination.offset + logs.len() as u64;
        line(dim(&format!("more follow: --offset {next}")));
    }
}

pub(crate) async fn list(args: ListArgs) -> Result<(), Failure> {
    let client = client_of(&args.options)?;
    let mut query = args.filters.query(true);
    query.extend(args.paging.query());
    let page = client.list(&pairs(&query)).await?;
    print_page(&args.options, &page.logs, &page.pagination);
    Ok(())
}

pub(crate) async fn search(args: SearchArgs) -> Result<(), Failure> {
    let client = client_of(&args.options)?;
    let mut query = vec![("q", args.query.clone())];
    if let Some(fields) = &args.fields {
        query.push(("fields", fields.clone()));
    }
    query.extend(args.filters.query(false));
    query.extend(args.paging.query());
    let page = client.search(&pairs(&query)).await?;
    print_page(&args.options, &page.logs, &page.pagination);
    Ok(())
}

pub(crate) async fn get(options: &ClientOptions, id: &str) -> Result<(), Failure> {
    let log = client_of(options)?.log(id).await?;
    if options.json {
        json_line(&log);
        return Ok(());
    }
    let value = serde_json::to_value(&log).unwrap_or_default();
    let mut rows = Vec::new();
    for (name, field) in value.as_object().into_iter().flatten() {
        let shown = match field {
            serde_json::Value::String(text) => text.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        };
        let shown =
            if name == "timestamp" { format!("{} UTC ({shown})", output::time(log.entry.timestamp)) } else { shown };
        rows.push(vec![name.clone(), shown]);
    }
    table(&["FIELD", "VALUE"], &rows);
    Ok(())
}

/// `sluice stats`.
#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    #[command(flatten)]
    options: ClientOptions,
    /// First day, YYYY-MM-DD (UTC).
    #[arg(long)]
    from: Option<String>,
    /// Last day, YYYY-MM-DD (UTC).
    #[arg(long)]
    to: Option<String>,
    /// day, hour or source.
    #[arg(long)]
    group_by: Option<String>,
    /// Only this source.
    #[arg(long)]
    source: Option<String>,
    /// Only this environment.
    #[arg(long)]
    environment: Option<String>,
}

pub(crate) async fn stats(args: StatsArgs) -> Result<(), Failure> {
    let client = client_of(&args.options)?;
    let mut query = Vec::new();
    for (name, value) in [
        ("from", &args.from),
        ("to", &args.to),
        ("groupBy", &args.group_by),
        ("source", &args.source),
        ("environment", &args.environment),
    ] {
        if let Some(value) = value {
            query.push((name, value.clone()));
        }
    }
    let stats = client.stats(&pairs(&query)).await?;
    if args.options.json {
        json_line(&stats);
        return Ok(());
    }
    let label = |record: &sluice_client::StatsRecord| match (&record.source, &record.date, record.hour) {
        (Some(source), _, _) => source.clone(),
        (None, Some(date), Some(hour)) => format!("{date} {hour:02}:00"),
        (None, Some(date), None) => date.clone(),
        _ => String::new(),
    };
    let counts = |c: &sluice_client::Counts| {
        vec![c.debug.to_string(), c.info.to_string(), c.warn.to_string(), c.error.to_string(), c.total.to_string()]
    };
    let mut rows: Vec<Vec<String>> = stats
        .stats
        .iter()
        .map(|record| std::iter::once(label(record)).chain(counts(&record.counts)).collect())
        .collect();
    rows.push(std::iter::once("total".to_owned()).chain(counts(&stats.totals)).collect());
    let by = stats.period.group_by.to_uppercase();
    table(&[by.as_str(), "DEBUG", "INFO", "WARN", "ERROR", "TOTAL"], &rows);
    Ok(())
}

pub(crate) async fn summary(options: &ClientOptions) -> Result<(), Failure> {
    let summary = client_of(options)?.summary().await?;
    if options.json {
        json_line(&summary);
        return Ok(());
    }
    let today = summary.today;
    line(format!(
        "today: {} logs ({} error, {} warn, {} info, {} debug)",
        today.total, today.error, today.warn, today.info, today.debug
    ));
    let comparison = summary.comparison;
    line(format!(
        "yesterday: {} logs; {:+}% ({})",
        comparison.yesterday_total, comparison.change_percent, comparison.trend
    ));
    Ok(())
}

/// `sluice tail`.
#[derive(Debug, Args)]
pub(crate) struct TailArgs {
    #[command(flatten)]
    options: ClientOptions,
    /// Only logs matching this query.
    #[arg(long, short = 'q')]
    query: Option<String>,
    #[command(flatten)]
    filters: Filters,
    /// Replay what followed this log id first.
    #[arg(long)]
    last_event_id: Option<String>,
}

pub(crate) async fn tail(args: TailArgs) -> Result<(), Failure> {
    let client = client_of(&args.options)?;
    let mut query = args.filters.query(true);
    if let Some(q) = &args.query {
        query.push(("q", q.clone()));
    }
    let mut interrupt = super::send::interrupt_signal()?;
    let mut events = client.tail(&pairs(&query), args.last_event_id.as_deref()).await?;
    if !args.options.json {
        eprintln!("{}", dim(&format!("following {} (Ctrl-C ends)", client.base_url())));
    }
    let width = 12;
    loop {
        let event = tokio::select! {
            event = events.next() => event,
            _ = interrupt.recv() => return Ok(()),
        };
        match event {
            None => {
                eprintln!("{}", dim("the server ended the tail"));
                return Ok(());
            }
            Some(Err(error)) => return Err(error.into()),
            Some(Ok(TailEvent::Log(log))) if args.options.json => json_line(&log),
            Some(Ok(TailEvent::Log(log))) => line(output::log_line(&log, width)),
            Some(Ok(TailEvent::Dropped(count))) => {
                eprintln!("{}", dim(&format!("{count} logs were dropped: this terminal read too slowly")));
            }
        }
    }
}

/// `sluice flows`.
#[derive(Debug, Args)]
pub(crate) struct FlowsArgs {
    #[command(flatten)]
    options: ClientOptions,
    /// Only flows with this source.
    #[arg(long)]
    source: Option<String>,
    /// Only flows with this environment.
    #[arg(long)]
    environment: Option<String>,
    /// Only flows with (true) or without (false) an error.
    #[arg(long)]
    has_errors: Option<bool>,
    /// How many (at most 500).
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// How many to skip.
    #[arg(long, default_value_t = 0)]
    offset: u64,
}

pub(crate) async fn flows(args: FlowsArgs) -> Result<(), Failure> {
    let client = client_of(&args.options)?;
    let mut query = vec![("limit", args.limit.to_string()), ("offset", args.offset.to_string())];
    if let Some(source) = &args.source {
        query.push(("source", source.clone()));
    }
    if let Some(environment) = &args.environment {
        query.push(("environment", environment.clone()));
    }
    if let Some(has_errors) = args.has_errors {
        query.push(("hasErrors", has_errors.to_string()));
    }
    let page = client.flows(&pairs(&query)).await?;
    if args.options.json {
        page.flows.iter().for_each(json_line);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = page
        .flows
        .iter()
        .map(|flow| {
            vec![
                flow.flow_id.clone(),
                flow.name.clone().unwrap_or_default(),
                flow.steps.to_string(),
                flow.logs.to_string(),
                flow.levels.error.to_string(),
                format!("{:.1}s", flow.duration_ms as f64 / 1000.0),
                output::time(flow.last_timestamp),
            ]
        })
        .collect();
    table(&["FLOW", "NAME", "STEPS", "LOGS", "ERRORS", "DURATION", "LAST (UTC)"], &rows);
    Ok(())
}

pub(crate) async fn flow(options: &ClientOptions, id: &str) -> Result<(), Failure> {
    let timeline = client_of(options)?.flow(id).await?;
    if options.json {
        timeline.logs.iter().for_each(json_line);
        return Ok(());
    }
    let flow = &timeline.flow;
    line(format!(
        "flow {} {}: {} steps, {} logs over {:.1}s",
        flow.summary.flow_id,
        flow.summary.name.as_deref().map(|name| format!("({name})")).unwrap_or_default(),
        flow.summary.steps,
        flow.summary.logs,
        flow.summary.duration_ms as f64 / 1000.0
    ));
    if !flow.missing_steps.is_empty() {
        line(format!("missing steps: {:?}", flow.missing_steps));
    }
    if !flow.duplicate_steps.is_empty() {
        line(format!("steps logged more than once: {:?}", flow.duplicate_steps));
    }
    let mut previous: Option<i64> = None;
    for log in &timeline.logs {
        let step = log.entry.step_index.map_or_else(|| "  -".to_owned(), |step| format!("{step:>3}"));
        let gap = previous.map_or_else(String::new, |at| format!("+{}ms", log.entry.timestamp - at));
        previous = Some(log.entry.timestamp);
        line(format!("{step}  {:>9}  {}", dim(&gap), output::log_line(log, 12)));
    }
    if timeline.truncated {
        line(dim("only the first 2,000 logs are shown"));
    }
    Ok(())
}
