//! The client commands of the real `sluice` binary against a real server (docs/API.md,
//! "Command-line client"): `sluice login` end to end (the test reads the code the command
//! prints and approves it through the API), every command with and without `--json`, the exit
//! codes, the credentials file at mode 0600, and an `import` interrupted by Ctrl-C and resumed
//! with nothing sent twice or lost.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use common::*;

/// Runs the client with its config and state in `home`; returns its exit code, stdout, stderr.
fn sluice(home: &Path, server: &Server, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let output = Command::new(BIN)
        .args(args)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("SLUICE_SERVER", format!("http://127.0.0.1:{}", server.port))
        .env_remove("SLUICE_API_KEY")
        .env_remove("SLUICE_TOKEN")
        .envs(env.iter().copied())
        .output()
        .expect("run the client");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}"))).collect()
}

/// A POST with a session token as bearer, JSON body.
fn post(server: &Server, token: &str, path: &str, body: &Value) -> (u16, Value) {
    server.http("POST", path, Some(token), &body.to_string())
}

/// `sluice login`, approved through the API as the first admin; returns the home folder's
/// credentials file text.
fn log_in(home: &Path, server: &Server, admin_password: &str) -> String {
    let mut child = Command::new(BIN)
        .args(["login"])
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("SLUICE_SERVER", format!("http://127.0.0.1:{}", server.port))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run login");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("the login's first line");
    assert!(first.contains(&format!("http://127.0.0.1:{}/device", server.port)), "{first}");
    let code = first.split_whitespace().last().unwrap_or_default().to_owned();
    assert_eq!(code.len(), 9, "{first}");
    let (status, admin) = sign_in(server, "admin@localhost", admin_password);
    assert_eq!(status, 200);
    let (status, body) = post(server, &admin, "/v1/device/approve", &json!({"userCode": code}));
    assert_eq!(status, 200, "{body}");
    let exit = child.wait().expect("login ends");
    let mut rest = String::new();
    #[expect(clippy::disallowed_methods, reason = "bounded by take: the command's own output")]
    let read = (&mut stdout).take(1 << 20).read_to_string(&mut rest);
    read.expect("stdout");
    assert!(exit.success(), "{rest}");
    assert!(rest.contains("Signed in to") && rest.contains("admin@localhost"), "{rest}");
    let path = home.join("config/sluice/credentials.toml");
    let mode = std::fs::metadata(&path).expect("credentials").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    std::fs::read_to_string(path).expect("credentials")
}

#[test]
fn a_newcomer_signs_in_from_the_terminal_sends_searches_and_adds_a_teammate_and_a_key() {
    let dir = Cleanup::new();
    let home = tempfile::tempdir().expect("home");
    let mut server = Server::start(dir.path());
    server.first_start_key();
    let password = server.first_start_password();
    let credentials = log_in(home.path(), &server, &password);
    assert!(credentials.contains("slc_sess_") && credentials.contains("admin@localhost"), "{credentials}");

    let (code, stdout, _) = sluice(home.path(), &server, &["whoami", "--json"], &[]);
    assert_eq!(code, 0);
    let me = &json_lines(&stdout)[0];
    assert_eq!((&me["user"]["email"], &me["workspaces"][0]["role"]), (&json!("admin@localhost"), &json!("owner")));

    // Send a text file with defaults, then from stdin as JSON lines.
    let file = home.path().join("app.log");
    std::fs::write(&file, "2026-11-25 10:00:00 ERROR payment declined order=A-77\nINFO started\n").expect("file");
    let file_arg = file.display().to_string();
    let (code, stdout, stderr) =
        sluice(home.path(), &server, &["send", &file_arg, "--source", "shop", "--environment", "production"], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("sent 2 entries"), "{stdout}");
    let mut child = Command::new(BIN)
        .args(["send", "--json"])
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("SLUICE_SERVER", format!("http://127.0.0.1:{}", server.port))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("send from stdin");
    let line = r#"{"level":"warn","message":"disk almost full","source":"node-3","environment":"staging","flowId":"deploy-9","stepIndex":1}"#;
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), line.as_bytes()).expect("write");
    let output = child.wait_with_output().expect("send ends");
    assert_eq!(json_lines(&String::from_utf8_lossy(&output.stdout)), vec![json!({"sent": 1})]);

    // Read it back: search, list one JSON per line, get, stats, summary, flows, flow.
    let (code, stdout, _) = sluice(home.path(), &server, &["search", "A-77", "--json"], &[]);
    assert_eq!(code, 0);
    let found = json_lines(&stdout);
    assert_eq!(found.len(), 1);
    assert_eq!((&found[0]["level"], &found[0]["source"]), (&json!("error"), &json!("shop")));
    let id = found[0]["id"].as_str().unwrap_or_default().to_owned();
    let (_, stdout, _) = sluice(home.path(), &server, &["list", "--json"], &[]);
    assert_eq!(json_lines(&stdout).len(), 3);
    let (code, stdout, _) = sluice(home.path(), &server, &["list", "--level", "error"], &[]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("ERROR") && stdout.contains("payment declined") && !stdout.contains('\u{1b}'),
        "plain when piped: {stdout}"
    );
    let (_, stdout, _) = sluice(home.path(), &server, &["get", &id], &[]);
    assert!(stdout.contains("FIELD") && stdout.contains("order=A-77"), "{stdout}");
    let (_, stdout, _) = sluice(
        home.path(),
        &server,
        &["stats", "--group-by", "source", "--from", "2026-11-20", "--to", "2026-11-30", "--json"],
        &[],
    );
    assert_eq!(json_lines(&stdout)[0]["period"]["groupBy"], "source");
    let (code, stdout, _) = sluice(home.path(), &server, &["summary"], &[]);
    assert!(code == 0 && stdout.contains("today:"), "{stdout}");
    let (_, stdout, _) = sluice(home.path(), &server, &["flows", "--json"], &[]);
    assert_eq!(json_lines(&stdout)[0]["flowId"], "deploy-9");
    let (_, stdout, _) = sluice(home.path(), &server, &["flow", "deploy-9"], &[]);
    assert!(stdout.contains("flow deploy-9") && stdout.contains("disk almost full"), "{stdout}");

    // A teammate and a key, from the terminal.
    let (ok, _, stderr) = admin_with_input(
        dir.path(),
        &["user", "create", "--email", "dev@example.com", "--password-stdin"],
        "a teammate's password\n",
    );
    assert!(ok, "{stderr}");
    let (code, stdout, stderr) =
        sluice(home.path(), &server, &["members", "add", "dev@example.com", "--role", "viewer", "--json"], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json_lines(&stdout)[0]["role"], "viewer");
    let (_, stdout, _) = sluice(home.path(), &server, &["members", "list"], &[]);
    assert!(stdout.contains("EMAIL") && stdout.contains("dev@example.com") && stdout.contains("viewer"), "{stdout}");
    let (code, stdout, _) =
        sluice(home.path(), &server, &["keys", "create", "--name", "ci", "--scopes", "ingest", "--json"], &[]);
    assert_eq!(code, 0);
    let key = json_lines(&stdout)[0].clone();
    let api_key = key["apiKey"].as_str().unwrap_or_default().to_owned();
    let (code, _, stderr) = sluice(
        home.path(),
        &server,
        &["send", &file_arg, "--source", "ci", "--environment", "staging"],
        &[("SLUICE_API_KEY", &api_key)],
    );
    assert_eq!(code, 0, "{stderr}");
    // An ingest-only key may not read: refused, exit 2, with the server's message.
    let (code, _, stderr) = sluice(home.path(), &server, &["list", "--api-key", &api_key], &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("API key lacks the read scope"), "{stderr}");
    let (_, stdout, _) = sluice(home.path(), &server, &["keys", "list"], &[]);
    assert!(stdout.contains("ci") && stdout.contains("active") && !stdout.contains(&api_key), "{stdout}");
    let key_id = key["keyId"].as_str().unwrap_or_default().to_owned();
    assert_eq!(sluice(home.path(), &server, &["keys", "revoke", &key_id], &[]).0, 0);
    let (code, _, stderr) = sluice(
        home.path(),
        &server,
        &["send", &file_arg, "--source", "ci", "--environment", "staging", "--api-key", &api_key],
        &[],
    );
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(sluice(home.path(), &server, &["members", "remove", "dev@example.com"], &[]).0, 0);

    // Exit codes: usage 1, refused 2 (an input the server would refuse), unavailable 3.
    assert_eq!(sluice(home.path(), &server, &["list", "--no-such-flag"], &[]).0, 1);
    std::fs::write(home.path().join("bare.log"), "no source here\n").expect("file");
    let bare = home.path().join("bare.log").display().to_string();
    let (code, _, stderr) = sluice(home.path(), &server, &["send", &bare], &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--source"), "{stderr}");
    let nobody = format!("http://127.0.0.1:{}", free_port());
    let (code, _, stderr) = sluice(home.path(), &server, &["list", "--server", &nobody], &[]);
    assert_eq!(code, 3);
    assert!(stderr.contains("cannot reach the server"), "{stderr}");

    // Signing out ends the session on the server too.
    let token = credentials
        .lines()
        .find_map(|line| line.strip_prefix("token = "))
        .unwrap_or_default()
        .trim_matches('"')
        .to_owned();
    let (code, stdout, _) = sluice(home.path(), &server, &["logout"], &[]);
    assert!(code == 0 && stdout.contains("Signed out"), "{stdout}");
    assert_eq!(server.http("GET", "/v1/me", Some(&token), "").0, 401);
    let (code, _, stderr) = sluice(home.path(), &server, &["whoami"], &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("sluice login"), "{stderr}");
}

#[test]
fn an_import_interrupted_by_ctrl_c_resumes_with_nothing_sent_twice_or_lost() {
    let dir = Cleanup::new();
    let home = tempfile::tempdir().expect("home");
    let mut server = Server::start(dir.path());
    let key = server.first_start_key();
    let lines = 60_000;
    let file = home.path().join("big.log");
    let text: String = (0..lines).map(|n| format!("INFO request line-{n:06} served\n")).collect();
    std::fs::write(&file, text).expect("file");
    let file_arg = file.display().to_string();
    let args =
        ["import", file_arg.as_str(), "--source", "batch", "--environment", "production", "--api-key", key.as_str()];

    let mut child = Command::new(BIN)
        .args(args)
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("SLUICE_SERVER", format!("http://127.0.0.1:{}", server.port))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("import");
    // Plain progress lines (stderr is no terminal); at the first, press Ctrl-C.
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut progress = String::new();
    stderr.read_line(&mut progress).expect("a progress line");
    assert!(progress.contains("%"), "{progress}");
    let interrupted = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill");
    assert!(interrupted.success());
    let status = child.wait().expect("import ends");
    let mut rest = String::new();
    #[expect(clippy::disallowed_methods, reason = "bounded by take: the command's own output")]
    let read = (&mut stderr).take(1 << 20).read_to_string(&mut rest);
    read.expect("stderr");
    assert_eq!(status.code(), Some(1), "{rest}");
    assert!(rest.contains("interrupted") && rest.contains("run the same command again"), "{rest}");
    let (_, summary) = server.http("GET", "/v1/stats/summary", Some(&key), "");
    let first_run = summary["today"]["total"].as_u64().unwrap_or_default();
    assert!(first_run > 0 && first_run < lines, "interrupted midway: {first_run}");

    let (code, stdout, stderr) = sluice(home.path(), &server, &args, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("resuming after"), "{stderr}");
    assert!(stdout.contains(&format!("imported {} entries", lines - first_run)), "{stdout}");
    let (_, summary) = server.http("GET", "/v1/stats/summary", Some(&key), "");
    assert_eq!(summary["today"]["total"], json!(lines), "every line once: {summary}");
    // Around where the first run stopped, and at both ends, each line is there exactly once.
    let around = first_run.saturating_sub(2)..(first_run + 2).min(lines);
    for n in [0, lines - 1].into_iter().chain(around) {
        let (status, found) = server.http("GET", &format!("/v1/logs/search?q=line-{n:06}"), Some(&key), "");
        assert_eq!((status, found["logs"].as_array().map(Vec::len)), (200, Some(1)), "line {n}: {found}");
    }
    // Done: a third run starts over (nothing kept) only when asked; here it imports again.
    let (code, stdout, _) = sluice(home.path(), &server, &args, &[]);
    assert!(code == 0 && stdout.contains(&format!("imported {lines} entries")), "{stdout}");
}

#[test]
fn tail_follows_logs_as_they_arrive_and_ends_at_ctrl_c() {
    let dir = Cleanup::new();
    let mut server = Server::start(dir.path());
    let key = server.first_start_key();
    let mut child = Command::new(BIN)
        .args(["tail", "--source", "live", "--api-key", &key])
        .env("SLUICE_SERVER", format!("http://127.0.0.1:{}", server.port))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tail");
    // The tail says it follows once the server accepted it.
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut following = String::new();
    stderr.read_line(&mut following).expect("following");
    assert!(following.contains("following"), "{following}");
    let entries = json!([
        {"level": "info", "message": "not this one", "source": "elsewhere", "environment": "production"},
        {"level": "error", "message": "card declined live", "source": "live", "environment": "production"}
    ]);
    assert_eq!(server.http("POST", "/v1/logs", Some(&key), &entries.to_string()).0, 200);
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("a log");
    assert!(line.contains("ERROR") && line.contains("card declined live") && !line.contains("not this one"), "{line}");
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill").success());
    assert_eq!(child.wait().expect("tail ends").code(), Some(0));
}
