//! The tidy rule that no two modules of a crate import each other, directly or around a loop
//! (docs/ARCHITECTURE.md, "No circles"). A module's imports are the paths its file names:
//! `crate::a::b`, `super::x`, `self::x` and its own child modules; each resolves to the deepest
//! module file it reaches. A module naming its own descendants is containment, not an import
//! (a `mod.rs` registering its children's handlers, a `lib.rs` re-exporting them). A circle is
//! a strongly connected set of two or more files. Test modules (`#[cfg(test)]` onwards) and
//! comments are not read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::bail;

/// Fails with every circle of every crate's `src/` under `crates/`, `bins/` and `xtask/`.
pub(crate) fn check(root: &Path) -> anyhow::Result<()> {
    eprintln!("\n$ tidy: no two modules of a crate import each other, directly or around a loop");
    let mut sources = Vec::new();
    for group in ["crates", "bins"] {
        for entry in std::fs::read_dir(root.join(group))? {
            sources.push(entry?.path().join("src"));
        }
    }
    sources.push(root.join("xtask/src"));
    let mut found = Vec::new();
    for src in sources.into_iter().filter(|src| src.is_dir()) {
        for circle in circles_in(&src)? {
            let names: Vec<String> =
                circle.iter().map(|path| path.strip_prefix(root).unwrap_or(path).display().to_string()).collect();
            found.push(names.join(" <-> "));
        }
    }
    if !found.is_empty() {
        bail!("tidy: these modules import each other (move what they share into a module of its own): {found:#?}");
    }
    Ok(())
}

/// The circles among the module files under one crate's `src/`, each sorted.
fn circles_in(src: &Path) -> anyhow::Result<Vec<Vec<PathBuf>>> {
    let mut files = Vec::new();
    collect(src, &mut files)?;
    let modules: Vec<Vec<String>> = files.iter().map(|file| module_path(src, file)).collect();
    let index: BTreeMap<&[String], usize> =
        modules.iter().enumerate().map(|(at, module)| (module.as_slice(), at)).collect();
    let mut edges = vec![Vec::new(); files.len()];
    for (from, file) in files.iter().enumerate() {
        let text = std::fs::read_to_string(file)?;
        let code: String = text
            .lines()
            .take_while(|line| !line.trim_start().starts_with("#[cfg(test)]"))
            .filter(|line| !line.trim_start().starts_with("//"))
            .map(|line| format!("{line}\n"))
            .collect();
        let own = &modules[from];
        for path in paths_in(&code, own, &index) {
            // The deepest module the path reaches.
            let reached = (0..=path.len()).rev().find_map(|len| index.get(&path[..len]).copied());
            let Some(to) = reached else { continue };
            let target = &modules[to];
            let contains = target.len() > own.len() && target.starts_with(own);
            if to != from && !contains && !edges[from].contains(&to) {
                edges[from].push(to);
            }
        }
    }
    Ok(strongly_connected(&edges)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let mut circle: Vec<PathBuf> = component.into_iter().map(|at| files[at].clone()).collect();
            circle.sort();
            circle
        })
        .collect())
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
    files.sort();
    Ok(())
}

/// `src/a/b.rs` and `src/a/b/mod.rs` are module `a::b`; `lib.rs` and `main.rs` the root.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> =
        relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|last| last == "mod") || (parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main"))
    {
        parts.pop();
    }
    parts
}

/// Every path in `code` that starts at `crate`, `super`, `self` or a child module of `own`,
/// made absolute (segments of identifiers only, as far as they go).
fn paths_in(code: &str, own: &[String], modules: &BTreeMap<&[String], usize>) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let is_ident = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    let mut paths = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        // A path starts at an identifier that no `::`, identifier character or `$` precedes.
        let starts = is_ident(bytes[at])
            && (at == 0 || !(is_ident(bytes[at - 1]) || bytes[at - 1] == b'$' || bytes[at - 1] == b':'));
        if !starts {
            at += 1;
            continue;
        }
        let mut segments = Vec::new();
        let mut end = at;
        loop {
            let from = end;
            while end < bytes.len() && is_ident(bytes[end]) {
                end += 1;
            }
            segments.push(code[from..end].to_owned());
            if code[end..].starts_with("::") && bytes.get(end + 2).is_some_and(|byte| is_ident(*byte)) {
                end += 2;
            } else {
                break;
            }
        }
        at = end.max(at + 1);
        // `crate::{a, b::C}`: one path a member of the group.
        let mut group = Vec::new();
        if code[end..].starts_with("::{") {
            let inner = &code[end + 3..];
            let mut depth = 0_usize;
            let close = inner
                .char_indices()
                .find(|(_, character)| match character {
                    '{' => {
                        depth += 1;
                        false
                    }
                    '}' if depth == 0 => true,
                    '}' => {
                        depth -= 1;
                        false
                    }
                    _ => false,
                })
                .map_or(inner.len(), |(close, _)| close);
            for member in inner[..close].split([',', '{', '}']) {
                let member = member.split(" as ").next().unwrap_or("").trim();
                let parts: Vec<String> =
                    member.split("::").map(str::trim).filter(|part| !part.is_empty()).map(str::to_owned).collect();
                if parts.iter().all(|part| part.bytes().all(is_ident)) && !parts.is_empty() {
                    group.push(parts);
                }
            }
        }
        let expanded: Vec<Vec<String>> = if group.is_empty() {
            vec![segments]
        } else {
            group
                .into_iter()
                .map(|member| {
                    let mut path = segments.clone();
                    path.extend(member.into_iter().filter(|part| part != "self"));
                    path
                })
                .collect()
        };
        for segments in expanded {
            if let Some(path) = absolute(&segments, own, modules) {
                paths.push(path);
            }
        }
    }
    paths
}

/// A path made absolute from the module `own`, when it starts at `crate`, `self`, `super` or a
/// child module of `own`, and names more than its first segment.
fn absolute(segments: &[String], own: &[String], modules: &BTreeMap<&[String], usize>) -> Option<Vec<String>> {
    if segments.len() < 2 {
        return None;
    }
    let mut base: Vec<String> = match segments[0].as_str() {
        "crate" => Vec::new(),
        "self" | "super" => own.to_vec(),
        first => {
            let mut child = own.to_vec();
            child.push(first.to_owned());
            if !modules.contains_key(child.as_slice()) {
                return None;
            }
            own.to_vec()
        }
    };
    let skip = usize::from(matches!(segments[0].as_str(), "crate" | "self"));
    let mut rest = segments[skip..].iter().peekable();
    // `super::super::x`: each `super` is one module up.
    while rest.next_if(|segment| *segment == "super").is_some() {
        base.pop();
    }
    base.extend(rest.cloned());
    Some(base)
}

/// Tarjan's strongly connected components of a directed graph given as adjacency lists.
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        components: Vec<Vec<usize>>,
    }
    fn visit(state: &mut State<'_>, node: usize) {
        state.index[node] = Some(state.next);
        state.low[node] = state.next;
        state.next += 1;
        state.stack.push(node);
        state.on_stack[node] = true;
        for &next in &state.edges[node] {
            match state.index[next] {
                None => {
                    visit(state, next);
                    state.low[node] = state.low[node].min(state.low[next]);
                }
                Some(index) if state.on_stack[next] => state.low[node] = state.low[node].min(index),
                Some(_) => {}
            }
        }
        if Some(state.low[node]) == state.index[node] {
            let mut component = Vec::new();
            while let Some(top) = state.stack.pop() {
                state.on_stack[top] = false;
                component.push(top);
                if top == node {
                    break;
                }
            }
            state.components.push(component);
        }
    }
    let count = edges.len();
    let mut state = State {
        edges,
        index: vec![None; count],
        low: vec![0; count],
        on_stack: vec![false; count],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for node in 0..count {
        if state.index[node].is_none() {
            visit(&mut state, node);
        }
    }
    state.components
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let src = std::env::temp_dir().join(format!("xtask-circles-{name}-{}", std::process::id())).join("src");
        let _ = std::fs::remove_dir_all(&src);
        for (path, text) in files {
            let file = src.join(path);
            std::fs::create_dir_all(file.parent().expect("a folder")).expect("folder");
            std::fs::write(file, text).expect("write");
        }
        src
    }

    fn names(src: &Path) -> Vec<Vec<String>> {
        circles_in(src)
            .expect("read")
            .into_iter()
            .map(|circle| {
                circle.iter().map(|file| file.strip_prefix(src).expect("inside").display().to_string()).collect()
            })
            .collect()
    }

    #[test]
    fn two_siblings_that_import_each_other_are_a_circle() {
        let src = tree(
            "siblings",
            &[
                ("lib.rs", "mod a;\nmod b;\npub use a::A;\n"),
                ("a.rs", "//! A.\nuse crate::b::B;\npub struct A;\n"),
                ("b.rs", "//! B.\npub struct B;\nfn f() -> crate::a::A { crate::a::A }\n"),
            ],
        );
        assert_eq!(names(&src), [["a.rs", "b.rs"]]);
    }

    #[test]
    fn a_loop_through_super_and_a_child_is_a_circle() {
        let src = tree(
            "loop",
            &[
                ("lib.rs", "mod routes;\nmod doc;\n"),
                ("routes/mod.rs", "mod logs;\nfn table() { logs::list(); }\n"),
                ("routes/logs.rs", "pub fn list() { crate::doc::Errors; }\n"),
                ("doc.rs", "fn paths() { crate::routes::logs::list(); }\n"),
            ],
        );
        assert_eq!(names(&src), [["doc.rs", "routes/logs.rs"]]);
    }

    #[test]
    fn a_member_of_an_import_group_is_an_import() {
        let src = tree(
            "group",
            &[
                ("lib.rs", "mod a;\nmod b;\n"),
                ("a.rs", "use crate::{b::{self, B}, Other};\npub struct A;\n"),
                ("b.rs", "use crate::a::A as Renamed;\npub struct B;\n"),
            ],
        );
        assert_eq!(names(&src), [["a.rs", "b.rs"]]);
    }

    #[test]
    fn a_parent_naming_its_children_and_tests_using_super_are_not_circles() {
        let src = tree(
            "containment",
            &[
                ("main.rs", "mod search;\nfn main() { search::run(); }\npub fn quantile() {}\n"),
                (
                    "search.rs",
                    "use crate::quantile;\npub fn run() { super::quantile(); }\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
                ),
            ],
        );
        assert!(names(&src).is_empty(), "{:?}", names(&src));
    }
}
