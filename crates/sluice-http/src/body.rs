//! The one way a request body is read: decompressed (gzip, deflate, zstd) and capped, so a
//! small compressed body can never become gigabytes in memory.

use actix_web::dev::Decompress;
use actix_web::http::header::{CONTENT_ENCODING, CONTENT_LENGTH, HeaderMap};
use actix_web::web::{Bytes, BytesMut, Payload};
use futures_core::Stream;

use crate::ApiError;

/// Encodings we decode; anything else is refused before a byte is read.
const ENCODINGS: [&str; 5] = ["identity", "gzip", "x-gzip", "deflate", "zstd"];

/// Reads the whole body, decompressing it, and fails with 413 as soon as it passes `limit`
/// bytes (after decompression).
pub async fn read_capped(payload: Payload, headers: &HeaderMap, limit: usize) -> Result<Bytes, ApiError> {
    let encoding = headers
        .get(CONTENT_ENCODING)
        .map(|value| value.to_str().unwrap_or("?").trim().to_ascii_lowercase())
        .unwrap_or_default();
    if !encoding.is_empty() && !ENCODINGS.contains(&encoding.as_str()) {
        return Err(ApiError::UnsupportedEncoding(encoding));
    }
    let declared =
        headers.get(CONTENT_LENGTH).and_then(|value| value.to_str().ok()).and_then(|value| value.parse::<usize>().ok());
    let identity = encoding.is_empty() || encoding == "identity";
    if identity && declared.is_some_and(|length| length > limit) {
        return Err(ApiError::PayloadTooLarge);
    }

    let mut stream = Decompress::from_headers(payload, headers);
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
