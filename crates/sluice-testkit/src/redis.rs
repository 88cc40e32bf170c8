//! A throwaway Redis server for a test run: the system's `redis-server` on a free loopback
//! port, keeping nothing on disk, stopped when dropped. `cargo xtask ci` starts one where
//! `SLUICE_TEST_REDIS` is not set and hands its URL to the tests as that variable.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What to install when the binary is missing, in one line.
const INSTALL: &str = "redis-server was not found: install it (Debian: apt-get install redis-server) \
                       or point SLUICE_TEST_REDIS at a server (redis://host:port)";

/// A running server; dropping it stops it.
pub struct Server {
    child: Child,
    port: u16,
}

impl Server {
    /// Starts `redis-server` on a free port and waits until it answers PING.
    pub fn start() -> Result<Server, String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map_err(|error| format!("no free port: {error}"))?
            .port();
        let spawned = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Err(INSTALL.to_owned()),
            Err(error) => return Err(format!("cannot start redis-server: {error}")),
        };
        let server = Server { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !server.answers() {
            if Instant::now() > deadline {
                return Err(format!("redis-server on port {port} did not answer PING within 10 s"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("redis: throwaway server on 127.0.0.1:{port}");
        Ok(server)
    }

    fn answers(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else { return false };
        let mut reply = [0_u8; 7];
        stream.write_all(b"PING\r\n").is_ok() && stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Redis the tests use: `SLUICE_TEST_REDIS` when set, else a throwaway server (kept alive
/// by the returned guard).
pub fn for_tests() -> Result<(String, Option<Server>), String> {
    match std::env::var("SLUICE_TEST_REDIS") {
        Ok(url) if !url.is_empty() => Ok((url, None)),
        _ => {
            let server = Server::start()?;
            Ok((server.url(), Some(server)))
        }
    }
}
