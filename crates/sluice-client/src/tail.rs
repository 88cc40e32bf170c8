//! The live tail (`GET /v1/logs/tail`) as a stream of [`TailEvent`]s, read from the server's
//! Server-Sent Events.

use std::collections::VecDeque;
use std::pin::Pin;

use futures_util::{Stream, StreamExt};
use reqwest::Method;

use crate::{Client, Error, Query, TailEvent};

/// The live tail's events, in the order the server sent them; ends when the server ends it.
pub type TailStream = Pin<Box<dyn Stream<Item = Result<TailEvent, Error>> + Send>>;

/// The most an event may hold before the stream is called broken (a log is at most 1 MiB).
const MAX_EVENT_BYTES: usize = 8 << 20;

impl Client {
    /// Follows the workspace's logs as they are committed, with the list's filters and `q`;
    /// after `last_event_id` (a log id), the server first replays what followed it.
    pub async fn tail(&self, query: &Query<'_>, last_event_id: Option<&str>) -> Result<TailStream, Error> {
        let response = self
            .call(true, || {
                let request =
                    self.request(Method::GET, "/v1/logs/tail").query(query).header("Accept", "text/event-stream");
                match last_event_id {
                    Some(id) => request.header("Last-Event-ID", id),
                    None => request,
                }
            })
            .await?;
        let state = (response.bytes_stream(), Vec::new(), VecDeque::new());
        let events = futures_util::stream::unfold(state, |(mut bytes, mut buffer, mut ready)| async move {
            loop {
                if let Some(event) = ready.pop_front() {
                    return Some((event, (bytes, buffer, ready)));
                }
                match bytes.next().await {
                    None => return None,
                    Some(Err(error)) => {
                        let error =
                            Error::Unavailable { status: None, message: format!("the tail broke off: {error}") };
                        return Some((Err(error), (bytes, Vec::new(), ready)));
                    }
                    Some(Ok(chunk)) => {
                        buffer.extend_from_slice(&chunk);
                        while let Some(end) = buffer.windows(2).position(|pair| pair == b"\n\n") {
                            let block: Vec<u8> = buffer.drain(..end + 2).collect();
                            if let Some(event) = parse_event(&block) {
                                ready.push_back(event);
                            }
                        }
                        if buffer.len() > MAX_EVENT_BYTES {
                            let error = Error::Decode("an event of the tail passed 8 MiB".into());
                            return Some((Err(error), (bytes, Vec::new(), ready)));
                        }
                    }
                }
            }
        });
        Ok(Box::pin(events))
    }
}

/// One event block: `log` and `dropped` events become [`TailEvent`]s; comments (the
/// heartbeat) and unknown events are skipped.
fn parse_event(block: &[u8]) -> Option<Result<TailEvent, Error>> {
    let text = String::from_utf8_lossy(block);
    let mut kind = "message";
    let mut data = String::new();
    for line in text.lines() {
        if let Some(value) = line.strip_prefix("event:") {
            kind = value.trim();
        } else if let Some(value) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(value.strip_prefix(' ').unwrap_or(value));
        }
    }
    match kind {
        "log" => Some(
            serde_json::from_str(&data)
                .map(|log| TailEvent::Log(Box::new(log)))
                .map_err(|error| Error::Decode(format!("a log of the tail: {error}"))),
        ),
        "dropped" => {
            let count = serde_json::from_str::<serde_json::Value>(&data).ok()?["count"].as_u64()?;
            Some(Ok(TailEvent::Dropped(count)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_and_comments_skipped() {
        assert!(parse_event(b": heartbeat\n\n").is_none());
        assert!(matches!(parse_event(b"event: dropped\ndata: {\"count\":3}\n\n"), Some(Ok(TailEvent::Dropped(3)))));
        assert!(matches!(parse_event(b"event: log\ndata: {}\n\n"), Some(Err(Error::Decode(_)))));
    }
}
