//! The one way a request body is read: decompressed (gzip, deflate, zstd) and capped, so a
//! small compressed body can never become gigabytes in memory.

use actix_web::dev::Decompress;
use actix_web::http::header::{CONTENT_ENCODING, CONTENT_LENGTH, ContentEncoding, HeaderMap};
use actix_web::web::{Bytes, BytesMut, Payload};
use futures_core::Stream;

use crate::ApiError;

/// The encoding a `Content-Encoding` value names, among those we decode; anything else is
/// refused before a byte is read. (actix alone does not know the `x-gzip` alias.)
fn encoding(value: &str) -> Option<ContentEncoding> {
    match value {
        "" | "identity" => Some(ContentEncoding::Identity),
        "gzip" | "x-gzip" => Some(ContentEncoding::Gzip),
        "deflate" => Some(ContentEncoding::Deflate),
        "zstd" => Some(ContentEncoding::Zstd),
        _ => None,
    }
}

/// Reads the whole body, decompressing it, and fails with 413 as soon as it passes `limit`
/// bytes (after decompression), and with 408 when it has not arrived in full within `timeout`.
pub async fn read_capped(
    payload: Payload,
    headers: &HeaderMap,
    limit: usize,
    timeout: std::time::Duration,
) -> Result<Bytes, ApiError> {
    actix_web::rt::time::timeout(timeout, read_within(payload, headers, limit))
        .await
        .unwrap_or(Err(ApiError::RequestTimeout))
}

/// [`read_capped`] without its deadline.
async fn read_within(payload: Payload, headers: &HeaderMap, limit: usize) -> Result<Bytes, ApiError> {
    let named = headers
        .get(CONTENT_ENCODING)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).trim().to_ascii_lowercase())
        .unwrap_or_default();
    let encoding = encoding(&named).ok_or(ApiError::UnsupportedEncoding(named))?;
    let declared =
        headers.get(CONTENT_LENGTH).and_then(|value| value.to_str().ok()).and_then(|value| value.parse::<usize>().ok());
    if encoding == ContentEncoding::Identity && declared.is_some_and(|length| length > limit) {
        return Err(ApiError::PayloadTooLarge);
    }

    let mut stream = Decompress::new(payload, encoding);
    let mut body = BytesMut::with_capacity(declared.unwrap_or(0).min(limit));
    while let Some(chunk) = std::future::poll_fn(|context| std::pin::Pin::new(&mut stream).poll_next(context)).await {
        let chunk = chunk.map_err(|error| ApiError::Parse(format!("Body could not be read: {error}")))?;
        if body.len() + chunk.len() > limit {
            return Err(ApiError::PayloadTooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}
