//! The catalog: discovery, variants, and validation messages that name the file, the field and what is
//! allowed (snapshots).

use std::path::{Path, PathBuf};

use serverbench::catalog::{Catalog, Selection};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn manifests() -> Catalog {
    Catalog::discover(&fixtures().join("manifests")).unwrap()
}

/// Every error of the manifests in one folder, one per line.
fn errors_of(case: &str) -> String {
    let prefix = format!("manifests/{case}/");
    manifests()
        .errors
        .iter()
        .filter(|e| e.file.starts_with(&prefix))
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_good_manifest_and_its_variant_are_found() {
    let catalog = manifests();
    let names: Vec<&str> = catalog.contestants.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"c-epoll") && names.contains(&"c-epoll-edge"), "{names:?}");
    let edge = catalog.contestants.iter().find(|c| c.name == "c-epoll-edge").unwrap();
    assert_eq!(edge.display, "raw epoll (edge)");
    assert_eq!(edge.family, "c-epoll");
    assert!(edge.dir.ends_with("manifests/good"));
}

#[test]
fn a_style_is_read_and_a_variant_takes_its_manifest_s() {
    let catalog = manifests();
    let style = |name: &str| catalog.contestants.iter().find(|c| c.name == name).unwrap().style.clone();
    assert_eq!(style("c-epoll").as_deref(), Some("callback"));
    assert_eq!(style("c-epoll-edge").as_deref(), Some("callback"));
}

/// The catalog itself (contestants/ and the control): every contestant says how its code is written.
#[test]
fn every_contestant_of_the_catalog_declares_its_style() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for dir in [root.join("contestants"), root.join("harness/control")] {
        let catalog = Catalog::discover(&dir).unwrap();
        assert!(catalog.errors.is_empty(), "{:?}", catalog.errors);
        assert!(!catalog.contestants.is_empty(), "{}", dir.display());
        for c in &catalog.contestants {
            let style = c.style.as_deref().unwrap_or_else(|| panic!("{} declares no style", c.name));
            assert!(serverbench::catalog::manifest::STYLES.contains(&style), "{}: {style}", c.name);
        }
    }
}

#[test]
fn invalid_values_list_what_is_allowed() {
    insta::assert_snapshot!(errors_of("bad-values"));
}

#[test]
fn missing_fields_say_what_they_are_for() {
    insta::assert_snapshot!(errors_of("missing-fields"));
}

#[test]
fn unknown_fields_suggest_the_near_one() {
    insta::assert_snapshot!(errors_of("unknown-fields"));
}

#[test]
fn wrong_types_are_named() {
    insta::assert_snapshot!(errors_of("bad-types"));
}

#[test]
fn placeholders_are_checked_per_field() {
    insta::assert_snapshot!(errors_of("placeholders"));
}

#[test]
fn variant_errors_name_the_variant() {
    insta::assert_snapshot!(errors_of("variants"));
}

#[test]
fn a_toml_syntax_error_points_at_the_line() {
    insta::assert_snapshot!(errors_of("not-toml"));
}

#[test]
fn a_name_used_twice_names_both_files() {
    insta::assert_snapshot!(errors_of("duplicate-b"));
    assert_eq!(errors_of("duplicate-a"), "");
}

#[test]
fn selection_by_name_language_and_fields() {
    let catalog = Catalog::discover(&fixtures().join("catalog")).unwrap();
    assert!(catalog.errors.is_empty(), "{:?}", catalog.errors);
    let names = |sel: Selection| -> Vec<String> {
        catalog.select(&sel).unwrap().iter().map(|c| c.name.clone()).collect()
    };
    assert_eq!(names(Selection { terms: vec!["fake-good".into()], ..Default::default() }), ["fake-good"]);
    assert_eq!(names(Selection::default()).len(), catalog.contestants.len());
    assert_eq!(names(Selection { terms: vec!["python".into()], ..Default::default() }).len(), catalog.contestants.len());
    assert!(names(Selection { io: vec!["epoll".into()], ..Default::default() }).is_empty());
    let err = catalog.select(&Selection { terms: vec!["nope".into()], ..Default::default() }).unwrap_err().to_string();
    assert!(err.starts_with("no contestant matches 'nope'"), "{err}");
    assert!(err.contains("fake-good"), "{err}");
}
