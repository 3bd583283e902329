//! The layers of `src/features` import downwards only (see the `//!` docs of
//! `src/features/mod.rs`): every `crate::features::<module>` path in a file names a layer at
//! or below the file's own. Paths across layers are written from `crate::features`, so reading
//! them is enough; comments are skipped (a doc link may point anywhere).
#![allow(clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first: a file's layer is its folder (or, at the top, its module).
const LAYERS: [&[&str]; 6] = [
    &["error", "spec", "value"],
    &["primitives"],
    &["kernels"],
    &["registry"],
    &["engine"],
    &["universe"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Every `.rs` file below `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).expect("the source folder is readable");
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The modules named by `crate::features::<module>` on the code lines of `text`, with their
/// line numbers.
fn imports(text: &str) -> Vec<(usize, String)> {
    const PREFIX: &str = "crate::features::";
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for (at, _) in line.match_indices(PREFIX) {
            let rest = &line[at + PREFIX.len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            found.push((n + 1, rest[..end].to_owned()));
        }
    }
    found
}

#[test]
fn feature_layers_import_downwards_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/features");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap_or(file);
        let first = relative.components().next();
        let module = first.map_or(String::new(), |c| c.as_os_str().to_string_lossy().into());
        let module = module.trim_end_matches(".rs");
        if module == "mod" {
            continue; // the table of contents re-exports every layer
        }
        let Some(own) = layer_of(module) else {
            wrong.push(format!("{}: in no layer", relative.display()));
            continue;
        };
        let text = fs::read_to_string(file).expect("a source file is readable");
        for (line, imported) in imports(&text) {
            checked += 1;
            match layer_of(&imported) {
                Some(layer) if layer <= own => {}
                Some(_) => wrong.push(format!(
                    "{}:{line}: imports {imported}, a layer above {module}",
                    relative.display()
                )),
                None => wrong.push(format!(
                    "{}:{line}: crate::features::{imported} names no layer; name its module",
                    relative.display()
                )),
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} imports found: is the path right?"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn an_upward_import_is_caught() {
    let text = "use crate::features::engine::state::FeatureState;\n// crate::features::universe\n";
    assert_eq!(imports(text), [(1, "engine".to_owned())]);
    assert!(layer_of("engine") > layer_of("kernels"));
}
