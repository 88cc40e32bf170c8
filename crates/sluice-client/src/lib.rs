//! An async client for the sluice HTTP API, the one the `sluice` command line is built on.
//!
//! Typed calls for every endpoint ([`Client`]); entries sent in batches of [`BATCH`], gzipped;
//! a refused or failed call retried as docs/API.md asks (429 after its `retryAfter`, 502, 503
//! and 504 and connection failures with exponential backoff, [`Retries`]); the live tail as a
//! [`futures_util::Stream`] of [`TailEvent`]s; and the device sign-in (RFC 8628) that turns a
//! person's approval into a session token.
//!
//! ```no_run
//! # async fn run() -> Result<(), sluice_client::Error> {
//! let client = sluice_client::Client::new("http://127.0.0.1:8080")?.with_token("slc_live_...");
//! let entries = vec![serde_json::json!({"level": "info", "message": "hello", "source": "docs",
//!     "environment": "development"})];
//! let sent = client.ingest_all(entries, |_| {}).await?;
//! let page = client.search(&[("q", "hello")]).await?;
//! assert_eq!(sent, 1);
//! # Ok(()) }
//! ```
//!
//! Invariant: every call ends in a typed answer or an [`Error`] that says what the server said
//! (4xx: [`Error::Refused`]) or that it could not answer ([`Error::Unavailable`]); nothing is
//! dropped without an error.

mod device;
mod tail;
mod types;

use std::io::Write;
use std::time::Duration;

use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use tail::TailStream;
pub use types::*;

/// Tries of a call whose connection is refused.
const CONNECT_ATTEMPTS: u32 = 3;

/// Entries per `POST /v1/logs` (the server's most).
pub const BATCH: usize = 100;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server refused the request (4xx); `message` is its `error`.
    #[error("{message}")]
    Refused {
        /// The status.
        status: u16,
        /// The server's `error`.
        message: String,
        /// The whole answer (its `issues`, `retryAfter`...).
        body: Value,
    },
    /// The server failed (5xx) or could not be reached.
    #[error("{message}")]
    Unavailable {
        /// The status, when an answer came.
        status: Option<u16>,
        /// What happened.
        message: String,
    },
    /// The answer was not what the API documents.
    #[error("unexpected answer from the server: {0}")]
    Decode(String),
    /// The call was wrongly made (a URL that is not one).
    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// The exit code the command line gives it: 1 usage, 2 refused, 3 unavailable.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 1,
            Error::Refused { .. } => 2,
            Error::Unavailable { .. } | Error::Decode(_) => 3,
        }
    }

    /// The HTTP status of the answer, if one came.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Refused { status, .. } => Some(*status),
            Error::Unavailable { status, .. } => *status,
            _ => None,
        }
    }
}

/// How a call is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retries {
    /// Tries in all, the first included.
    pub attempts: u32,
    /// The wait before the second try; it doubles at each one after.
    pub first_delay: Duration,
    /// The longest wait between tries (a `retryAfter` longer than this is still honoured).
    pub max_delay: Duration,
}

impl Default for Retries {
    /// 6 tries over about 15 seconds of backoff.
    fn default() -> Self {
        Retries { attempts: 6, first_delay: Duration::from_millis(500), max_delay: Duration::from_secs(8) }
    }
}

/// A client of one sluice server, with one credential.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
    workspace: Option<String>,
    retries: Retries,
}

/// Query parameters, as pairs.
pub type Query<'a> = [(&'a str, &'a str)];

impl Client {
    /// A client of the server at `base` (`http://host:port`, or `https://...`).
    pub fn new(base: &str) -> Result<Client, Error> {
        let base = base.trim().trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) || base.len() < 10 {
            return Err(Error::Usage(format!("'{base}' is not a server URL: use http://host:port or https://host")));
        }
        let http = reqwest::Client::builder()
            .user_agent(concat!("sluice-client/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|error| Error::Usage(format!("cannot make an HTTP client: {error}")))?;
        Ok(Client { http, base, token: None, workspace: None, retries: Retries::default() })
    }

    /// Sends `token` (an API key or a session token) as `Authorization: Bearer`.
    #[must_use]
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Acts on this workspace (`X-Workspace-Id`).
    #[must_use]
    pub fn with_workspace(mut self, workspace: impl Into<String>) -> Self {
        self.workspace = Some(workspace.into());
        self
    }

    /// Tries calls again this way.
    #[must_use]
    pub fn with_retries(mut self, retries: Retries) -> Self {
        self.retries = retries;
        self
    }

    /// The server's base URL.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(workspace) = &self.workspace {
            request = request.header("X-Workspace-Id", workspace);
        }
        request
    }

    /// Sends what `make` builds, again as [`Retries`] says: 429 after its `retryAfter`; 502,
    /// 503, 504 and connection failures with backoff (timeouts too when `idempotent`).
    async fn call(&self, idempotent: bool, make: impl Fn() -> RequestBuilder) -> Result<Response, Error> {
        let mut delay = self.retries.first_delay;
        let mut attempt = 1;
        loop {
            let last = attempt >= self.retries.attempts;
            let wait = match make().send().await {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status();
                    let retryable = status == StatusCode::TOO_MANY_REQUESTS || matches!(status.as_u16(), 502..=504);
                    let error = error_of(response).await;
                    if !retryable || last {
                        return Err(error);
                    }
                    let advised = match &error {
                        Error::Refused { body, .. } => body["retryAfter"].as_u64(),
                        _ => None,
                    };
                    advised.map_or(delay, Duration::from_secs)
                }
                Err(error) => {
                    // A server that refuses connections is tried 3 times, not for the whole
                    // backoff: it is more often stopped than overloaded.
                    let retryable =
                        (error.is_connect() && attempt < CONNECT_ATTEMPTS) || (idempotent && error.is_timeout());
                    if !retryable || last {
                        return Err(Error::Unavailable { status: None, message: describe(&error, &self.base) });
                    }
                    delay
                }
            };
            tokio::time::sleep(wait).await;
            delay = (delay * 2).min(self.retries.max_delay);
            attempt += 1;
        }
    }

    async fn get<T: DeserializeOwned>(&self, path: &str, query: &Query<'_>) -> Result<T, Error> {
        let response = self.call(true, || self.request(Method::GET, path).query(query)).await?;
        decode(response).await
    }

    async fn send_json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: &impl serde::Serialize,
    ) -> Result<T, Error> {
        let response = self.call(false, || self.request(method.clone(), path).json(body)).await?;
        decode(response).await
    }

    async fn send_empty(&self, method: Method, path: &str) -> Result<(), Error> {
        self.call(false, || self.request(method.clone(), path).header("X-Requested-With", "sluice")).await?;
        Ok(())
    }

    /// Sends at most [`BATCH`] entries (JSON objects) in one gzipped request.
    pub async fn ingest(&self, entries: &[Value]) -> Result<Ingested, Error> {
        let json = serde_json::to_vec(entries).map_err(|error| Error::Decode(error.to_string()))?;
        self.ingest_body(&json, "application/json", &[]).await
    }

    /// Sends one body in any format the server takes (`content_type` names it), gzipped, with
    /// `defaults` as query parameters (`source`, `environment`, `level`, `dataset`).
    pub async fn ingest_body(&self, body: &[u8], content_type: &str, defaults: &Query<'_>) -> Result<Ingested, Error> {
        let gzipped = gzip(body)?;
        let response = self
            .call(false, || {
                self.request(Method::POST, "/v1/logs")
                    .query(defaults)
                    .header("Content-Type", content_type)
                    .header("Content-Encoding", "gzip")
                    .body(gzipped.clone())
            })
            .await?;
        decode(response).await
    }

    /// Sends every entry, in batches of [`BATCH`], one after the other; `progress` hears how
    /// many each accepted batch held. Stops at the first batch refused after its retries, and
    /// says how many were sent before it.
    pub async fn ingest_all(
        &self,
        entries: impl IntoIterator<Item = Value>,
        mut progress: impl FnMut(u64),
    ) -> Result<u64, Error> {
        let mut sent = 0;
        let mut batch = Vec::with_capacity(BATCH);
        let mut entries = entries.into_iter().peekable();
        while entries.peek().is_some() {
            batch.clear();
            batch.extend(entries.by_ref().take(BATCH));
            match self.ingest(&batch).await {
                Ok(accepted) => {
                    sent += accepted.count;
                    progress(accepted.count);
                }
                Err(error) => return Err(after_sent(error, sent)),
            }
        }
        Ok(sent)
    }

    /// `GET /v1/logs` with its filters and paging.
    pub async fn list(&self, query: &Query<'_>) -> Result<LogPage, Error> {
        self.get("/v1/logs", query).await
    }

    /// `GET /v1/logs/search` (`q` among the parameters).
    pub async fn search(&self, query: &Query<'_>) -> Result<SearchPage, Error> {
        self.get("/v1/logs/search", query).await
    }

    /// `GET /v1/logs/{id}`.
    pub async fn log(&self, id: &str) -> Result<Log, Error> {
        let one: OneLog = self.get(&format!("/v1/logs/{}", path_part(id)), &[]).await?;
        Ok(one.log)
    }

    /// `GET /v1/stats`.
    pub async fn stats(&self, query: &Query<'_>) -> Result<Stats, Error> {
        self.get("/v1/stats", query).await
    }

    /// `GET /v1/stats/summary`.
    pub async fn summary(&self) -> Result<Summary, Error> {
        self.get("/v1/stats/summary", &[]).await
    }

    /// `GET /v1/flows`.
    pub async fn flows(&self, query: &Query<'_>) -> Result<FlowPage, Error> {
        self.get("/v1/flows", query).await
    }

    /// `GET /v1/flows/{flowId}`.
    pub async fn flow(&self, id: &str) -> Result<FlowTimeline, Error> {
        self.get(&format!("/v1/flows/{}", path_part(id)), &[]).await
    }

    /// `GET /v1/me`.
    pub async fn me(&self) -> Result<Me, Error> {
        self.get("/v1/me", &[]).await
    }

    /// `GET /v1/keys`.
    pub async fn keys(&self) -> Result<Vec<Key>, Error> {
        Ok(self.get::<Keys>("/v1/keys", &[]).await?.keys)
    }

    /// `POST /v1/keys`: the key's text, shown this once.
    pub async fn create_key(&self, key: &KeyRequest) -> Result<CreatedKey, Error> {
        self.send_json(Method::POST, "/v1/keys", key).await
    }

    /// `DELETE /v1/keys/{keyId}`.
    pub async fn revoke_key(&self, id: &str) -> Result<(), Error> {
        self.send_empty(Method::DELETE, &format!("/v1/keys/{}", path_part(id))).await
    }

    /// `GET /v1/members`.
    pub async fn members(&self) -> Result<Vec<Member>, Error> {
        Ok(self.get::<Members>("/v1/members", &[]).await?.members)
    }

    /// `POST /v1/members`: an existing user, by email, with a role.
    pub async fn add_member(&self, email: &str, role: &str) -> Result<Member, Error> {
        let body = NewMember { email: email.to_owned(), role: role.to_owned() };
        self.send_json(Method::POST, "/v1/members", &body).await
    }

    /// `DELETE /v1/members/{userId}`.
    pub async fn remove_member(&self, user_id: &str) -> Result<(), Error> {
        self.send_empty(Method::DELETE, &format!("/v1/members/{}", path_part(user_id))).await
    }

    /// `PATCH /v1/members/{userId}`: another role for a member.
    pub async fn set_role(&self, user_id: &str, role: &str) -> Result<(), Error> {
        let body = RoleChange { role: role.to_owned() };
        self.send_json::<MemberRole>(Method::PATCH, &format!("/v1/members/{}", path_part(user_id)), &body).await?;
        Ok(())
    }

    /// `POST /v1/flows`: a flow made before its logs, with an optional name.
    pub async fn create_flow(&self, name: Option<&str>) -> Result<CreatedFlow, Error> {
        let body = CreateFlow { name: name.map(str::to_owned) };
        self.send_json(Method::POST, "/v1/flows", &body).await
    }

    /// `GET /v1/workspaces`: the user's workspaces.
    pub async fn workspaces(&self) -> Result<Vec<Membership>, Error> {
        Ok(self.get::<Workspaces>("/v1/workspaces", &[]).await?.workspaces)
    }

    /// `POST /v1/workspaces`: a workspace the user owns.
    pub async fn create_workspace(&self, name: &str) -> Result<Membership, Error> {
        self.send_json(Method::POST, "/v1/workspaces", &NewWorkspace { name: name.to_owned() }).await
    }

    /// `GET /v1/workspace`: plan, limits and this month's usage of the workspace acted on.
    pub async fn workspace(&self) -> Result<WorkspaceInfo, Error> {
        self.get("/v1/workspace", &[]).await
    }

    /// `PUT /v1/workspace/plan` (instance admins): `free`, `pro` or `enterprise`.
    pub async fn set_plan(&self, plan: &str) -> Result<(), Error> {
        let body = SetPlan { plan: plan.to_owned(), ..SetPlan::default() };
        self.send_json::<PlanSet>(Method::PUT, "/v1/workspace/plan", &body).await?;
        Ok(())
    }

    /// `GET /v1/sessions`: the user's working sessions.
    pub async fn sessions(&self) -> Result<Vec<Session>, Error> {
        Ok(self.get::<Sessions>("/v1/sessions", &[]).await?.sessions)
    }

    /// `DELETE /v1/sessions/{sessionId}`.
    pub async fn revoke_session(&self, id: &str) -> Result<(), Error> {
        self.send_empty(Method::DELETE, &format!("/v1/sessions/{}", path_part(id))).await
    }

    /// `POST /v1/device/approve` or `/v1/device/deny`: decides a device sign-in by its code.
    pub async fn decide_device_login(&self, user_code: &str, approve: bool) -> Result<(), Error> {
        let path = if approve { "/v1/device/approve" } else { "/v1/device/deny" };
        self.send_json::<Decided>(Method::POST, path, &UserCode { user_code: user_code.to_owned() }).await?;
        Ok(())
    }

    /// `GET /readyz`: whether the server's database answers.
    pub async fn ready(&self) -> Result<(), Error> {
        self.get::<Health>("/readyz", &[]).await.map(|_| ())
    }

    /// `POST /v1/auth/login`: signs in with email and password; the session token (from the
    /// cookie the server sets) and who signed in. Use the token with [`Client::with_token`].
    pub async fn sign_in(&self, email: &str, password: &str) -> Result<(String, Me), Error> {
        let body = Login { email: email.to_owned(), password: password.to_owned() };
        let response = self.call(false, || self.request(Method::POST, "/v1/auth/login").json(&body)).await?;
        let token = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .find_map(|cookie| cookie.strip_prefix("sluice_session=")?.split(';').next().map(str::to_owned))
            .ok_or_else(|| Error::Decode("the sign-in set no session cookie".into()))?;
        Ok((token, decode(response).await?))
    }

    /// `POST /v1/auth/logout`: ends the session this client signs with.
    pub async fn logout(&self) -> Result<(), Error> {
        self.send_empty(Method::POST, "/v1/auth/logout").await
    }
}

/// An id as one path segment: characters that would change the path are escaped.
fn path_part(id: &str) -> String {
    let mut escaped = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            escaped.push(char::from(byte));
        } else {
            escaped.push_str(&format!("%{byte:02X}"));
        }
    }
    escaped
}

fn gzip(body: &[u8]) -> Result<Vec<u8>, Error> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::with_capacity(body.len() / 4), flate2::Compression::fast());
    encoder.write_all(body).and_then(|()| encoder.finish()).map_err(|error| Error::Decode(error.to_string()))
}

/// An error after `sent` entries went through: its message says so.
fn after_sent(error: Error, sent: u64) -> Error {
    if sent == 0 {
        return error;
    }
    let note = |message: String| format!("{message} (after {sent} entries were accepted)");
    match error {
        Error::Refused { status, message, body } => Error::Refused { status, message: note(message), body },
        Error::Unavailable { status, message } => Error::Unavailable { status, message: note(message) },
        other => other,
    }
}

/// What a failed connection means for a person.
fn describe(error: &reqwest::Error, base: &str) -> String {
    if error.is_connect() {
        format!("cannot reach the server at {base}: is it running? (`sluice serve`, or pass --server)")
    } else if error.is_timeout() {
        format!("the server at {base} did not answer in time")
    } else {
        format!("the request to {base} failed: {error}")
    }
}

/// The error an unsuccessful answer stands for.
async fn error_of(response: Response) -> Error {
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    let message =
        body["error"].as_str().map_or_else(|| status.canonical_reason().unwrap_or("error").to_owned(), str::to_owned);
    if status.is_client_error() {
        Error::Refused { status: status.as_u16(), message, body }
    } else {
        Error::Unavailable { status: Some(status.as_u16()), message: format!("the server failed: {message}") }
    }
}

async fn decode<T: DeserializeOwned>(response: Response) -> Result<T, Error> {
    let bytes =
        response.bytes().await.map_err(|error| Error::Unavailable { status: None, message: error.to_string() })?;
    serde_json::from_slice(&bytes).map_err(|error| Error::Decode(error.to_string()))
}
