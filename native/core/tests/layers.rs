//! The core's files form no import circle: each `crate::<module>` a file names is a dependency,
//! and the graph of the files has no cycle (a file that needs another's helper and is needed by
//! it means a third module is missing).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn modules() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(&src).expect("src") {
        let path = entry.expect("entry").path();
        let name = path.file_stem().expect("a name").to_string_lossy().into_owned();
        if name == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file");
        let mut uses = BTreeSet::new();
        for (at, _) in text.match_indices("crate::") {
            let rest = &text[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inside = &group[..group.find('}').unwrap_or(0)];
                uses.extend(inside.split(',').map(|m| m.trim().split("::").next().unwrap_or("").to_owned()));
            } else {
                uses.insert(rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect());
            }
        }
        uses.remove(&name);
        uses.retain(|m| !m.is_empty());
        graph.insert(name, uses);
    }
    graph
}

#[test]
fn no_file_of_the_core_imports_one_that_imports_it_back() {
    let graph = modules();
    for used in graph.values().flatten() {
        assert!(graph.contains_key(used), "crate::{used} is no file of the core");
    }
    // depth-first search for a back edge
    fn visit(
        at: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if done.contains(at) {
            return;
        }
        if let Some(start) = path.iter().position(|m| m == at) {
            panic!("an import circle: {} -> {at}", path[start..].join(" -> "));
        }
        path.push(at.to_owned());
        for next in &graph[at] {
            visit(next, graph, path, done);
        }
        path.pop();
        done.insert(at.to_owned());
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        visit(module, &graph, &mut Vec::new(), &mut done);
    }
}

#[test]
fn the_core_crate_knows_no_python() {
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .expect("Cargo.toml");
    assert!(!manifest.contains("pyo3"), "the core crate depends on PyO3");
}
