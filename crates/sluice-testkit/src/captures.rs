//! The requests real clients sent, as `../shared/corpus/client-captures` keeps them: each
//! `=== <time> <METHOD> <path> HTTP/1.1` line, its headers, then a `--- body (N bytes) repr:`
//! line followed by the body as a Python bytes literal.

/// One captured request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// `POST`, as sent.
    pub method: String,
    /// The path and query, as sent.
    pub path: String,
    /// Each header, its name in lower case.
    pub headers: Vec<(String, String)>,
    /// The body's bytes.
    pub body: Vec<u8>,
}

/// The requests of capture file `name`; panics when it cannot be read or holds none.
pub fn captures(name: &str) -> Vec<Captured> {
    let path = format!("{}/../../../shared/corpus/client-captures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    let mut found = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(request_line) = line.strip_prefix("=== ") else { continue };
        let mut words = request_line.split(' ').skip(1);
        let (method, path) = (words.next().unwrap_or_default(), words.next().unwrap_or_default());
        let mut headers = Vec::new();
        for line in lines.by_ref() {
            if line.starts_with("--- body") {
                break;
            }
            if let Some((name, value)) = line.split_once(": ") {
                headers.push((name.to_ascii_lowercase(), value.to_owned()));
            }
        }
        let body = unrepr(lines.next().unwrap_or_default());
        found.push(Captured { method: method.to_owned(), path: path.to_owned(), headers, body });
    }
    assert!(!found.is_empty(), "{name} holds no request");
    found
}

/// The bodies of capture file `name`, in order.
pub fn bodies(name: &str) -> Vec<Vec<u8>> {
    captures(name).into_iter().map(|captured| captured.body).collect()
}

/// A Python `b'...'` literal's bytes.
fn unrepr(literal: &str) -> Vec<u8> {
    let inner = literal.trim().strip_prefix("b'").and_then(|rest| rest.strip_suffix('\'')).unwrap_or_default();
    let mut bytes = Vec::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buffer = [0; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            continue;
        }
        match chars.next() {
            Some('n') => bytes.push(b'\n'),
            Some('r') => bytes.push(b'\r'),
            Some('t') => bytes.push(b'\t'),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                bytes.push(u8::from_str_radix(&hex, 16).unwrap_or_else(|_| panic!("a \\x escape: {hex}")));
            }
            Some(other) => bytes.push(u8::try_from(other).unwrap_or_else(|_| panic!("an ASCII escape: {other}"))),
            None => {}
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_literals_give_their_bytes() {
        assert_eq!(unrepr(r"b'a\n\x00\\\'z'"), b"a\n\x00\\'z");
    }
}
