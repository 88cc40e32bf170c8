//! What the binary's tests share: the real `sluice` binary started on a free port over a
//! database of the test's own, its admin commands, and a plain HTTP client.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_sluice");

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("free port")
}

/// The database of the test whose folder is `dir`: a SQLite file in it, or a PostgreSQL
/// database made on first use (its URL kept in the folder) and dropped with [`Cleanup`].
pub fn database_url(dir: &Path) -> String {
    if std::env::var("SLUICE_TEST_BACKEND").map_or(true, |backend| backend != "postgres") {
        return format!("sqlite://{}", dir.join("data/sluice.db").display());
    }
    let saved = dir.join("postgres-url");
    if let Ok(url) = std::fs::read_to_string(&saved) {
        return url;
    }
    let name = format!("sluice_cli_{}", dir.file_name().and_then(|name| name.to_str()).unwrap_or("x"))
        .to_ascii_lowercase()
        .replace(|character: char| !character.is_ascii_alphanumeric(), "_");
    let url = runtime().block_on(sluice_store_pg::testing::fresh_database(&name));
    std::fs::write(&saved, &url).expect("keep the database URL");
    std::fs::write(dir.join("postgres-name"), &name).expect("keep the database name");
    url
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// Drops the test's PostgreSQL database, if it made one, when the test ends.
pub struct Cleanup(pub tempfile::TempDir);

impl Cleanup {
    pub fn new() -> Cleanup {
        Cleanup(tempfile::tempdir().expect("temp dir"))
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Ok(name) = std::fs::read_to_string(self.0.path().join("postgres-name")) {
            runtime().block_on(sluice_store_pg::testing::drop_database(&name));
        }
    }
}

/// Runs `sluice admin ...` with `stdin`; returns whether it succeeded, stdout and stderr.
pub fn admin_with_input(dir: &Path, args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = Command::new(BIN)
        .arg("admin")
        .args(args)
        .env("SLUICE_DATABASE_URL", database_url(dir))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run admin");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
    let output = child.wait_with_output().expect("admin output");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.success(), text(&output.stdout), text(&output.stderr))
}

/// Runs `sluice admin ...` and returns its stdout as JSON (the command is given `--json`).
pub fn admin(dir: &Path, args: &[&str]) -> Value {
    let output = Command::new(BIN)
        .arg("admin")
        .args(args)
        .arg("--json")
        .env("SLUICE_DATABASE_URL", database_url(dir))
        .output()
        .expect("run admin");
    assert!(output.status.success(), "admin {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.lines().count(), 1, "exactly one line of JSON: {stdout}");
    serde_json::from_str(&stdout).expect("admin prints JSON")
}

pub struct Server {
    pub child: Child,
    pub port: u16,
    pub stdout: BufReader<std::process::ChildStdout>,
}

impl Server {
    pub fn start(dir: &Path) -> Server {
        Server::start_with(dir, &[])
    }

    /// A server with more environment.
    pub fn start_with(dir: &Path, env: &[(&str, &str)]) -> Server {
        let port = free_port();
        let mut child = Command::new(BIN)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .env("SLUICE_DATABASE_URL", database_url(dir))
            .env("SLUICE_LOG", "warn")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn sluice serve");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let server = Server { child, port, stdout };
        let deadline = Instant::now() + Duration::from_secs(20);
        while server.http("GET", "/healthz", None, "").0 != 200 {
            assert!(Instant::now() < deadline, "server did not come up");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// The key printed on first start.
    pub fn first_start_key(&mut self) -> String {
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line).unwrap_or(0) == 0 {
                panic!("no key printed on first start");
            }
            if let Some(key) = line.split_whitespace().find(|word| word.starts_with("slc_live_")) {
                return key.to_owned();
            }
        }
    }

    /// The first admin's password, printed on first start after the key.
    pub fn first_start_password(&mut self) -> String {
        let mut line = String::new();
        let mut announced = false;
        loop {
            line.clear();
            if self.stdout.read_line(&mut line).unwrap_or(0) == 0 {
                panic!("no admin password printed on first start");
            }
            if line.contains("admin@localhost") {
                announced = true;
            } else if announced && !line.trim().is_empty() {
                return line.trim().to_owned();
            }
        }
    }

    /// One HTTP/1.1 request with `Connection: close`; returns status and JSON body.
    pub fn http(&self, method: &str, path: &str, key: Option<&str>, body: &str) -> (u16, Value) {
        Server::client(self.port).http(method, path, key, body)
    }

    /// A handle that only sends requests to the server on `port` (for other threads).
    pub fn client(port: u16) -> Client {
        Client { port }
    }

    /// SIGKILL: the process ends at once, nothing flushed.
    pub fn kill(&mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
    }

    pub fn terminate(&self) {
        let status = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().expect("kill");
        assert!(status.success());
    }

    pub fn wait(mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "server did not stop");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Sends requests to a server by its port; a server's threads each hold one.
pub struct Client {
    pub port: u16,
}

impl Client {
    /// One HTTP/1.1 request with `Connection: close`; returns status and JSON body (status 0
    /// when the server cannot be reached or hangs up).
    pub fn http(&self, method: &str, path: &str, key: Option<&str>, body: &str) -> (u16, Value) {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else { return (0, Value::Null) };
        let auth = key.map(|key| format!("Authorization: Bearer {key}\r\n")).unwrap_or_default();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        if stream.write_all(request.as_bytes()).is_err() {
            return (0, Value::Null);
        }
        read_response(&mut stream)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn read_response(stream: &mut TcpStream) -> (u16, Value) {
    let mut raw = Vec::new();
    #[expect(clippy::disallowed_methods, reason = "bounded by take: a test's answer, never a request body")]
    let read = stream.take(16 << 20).read_to_end(&mut raw);
    if read.is_err() {
        return (0, Value::Null);
    }
    let text = String::from_utf8_lossy(&raw);
    let status = text.split_whitespace().nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, body)| body).unwrap_or("");
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

pub fn entry(message: &str) -> String {
    json!({"level": "info", "message": message, "source": "cli-test", "environment": "development"}).to_string()
}

/// Signs in over HTTP; returns the status and the session token from the cookie.
pub fn sign_in(server: &Server, email: &str, password: &str) -> (u16, String) {
    let body = json!({"email": email, "password": password}).to_string();
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", server.port)) else { return (0, String::new()) };
    let request = format!(
        "POST /v1/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut raw = Vec::new();
    #[expect(clippy::disallowed_methods, reason = "bounded by take: a test's answer")]
    let read = stream.take(1 << 20).read_to_end(&mut raw);
    read.expect("answer");
    let text = String::from_utf8_lossy(&raw);
    let status = text.split_whitespace().nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let token = text
        .lines()
        .find_map(|line| line.strip_prefix("set-cookie: sluice_session="))
        .map(|rest| rest.split(';').next().unwrap_or_default().to_owned())
        .unwrap_or_default();
    (status, token)
}
