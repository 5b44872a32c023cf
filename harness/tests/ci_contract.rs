//! What CI (scripts/test.sh) relies on: `check --quick` shortens the scale check for all but the
//! contestants of `--full-scale`, whose default names exist in the catalog; `build --require-all` fails
//! for a contestant that was not built unless its manifest says (`unsupported`) that this kind of
//! machine cannot build it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serverbench::catalog::Catalog;
use serverbench::commands::check::{FULL_SCALE_DEFAULT, QUICK_SCALE_CONNECTIONS};

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench")).args(args).output().expect("serverbench runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The scale check of the fixture hello server, with `extra` options; returns its printed line.
fn scale_line(out: &str, extra: &[&str]) -> String {
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check/contestants");
    let out = tmp(out);
    let mut args = vec!["check", "check-good", "--contestants", catalog.to_str().unwrap(), "-o", out.to_str().unwrap()];
    args.extend(["--no-install", "--server-cpus", "0", "--only", "scale"]);
    args.extend(extra);
    let o = serverbench(&args);
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "stdout:\n{stdout}\nstderr:\n{}", text(&o.stderr));
    stdout.lines().find(|l| l.split_whitespace().nth(2) == Some("scale")).unwrap_or_else(|| panic!("no scale line:\n{stdout}")).to_string()
}

#[test]
fn quick_shortens_the_scale_check_except_for_the_full_scale_contestants() {
    // Just above the quick count, so that the two cases differ at little cost.
    let full = (QUICK_SCALE_CONNECTIONS + 100).to_string();
    let quick = scale_line("ci-quick", &["--quick", "--scale-connections", &full]);
    assert!(quick.contains(&format!("{QUICK_SCALE_CONNECTIONS} connections open at once")), "{quick}");
    let kept = scale_line("ci-quick-full", &["--quick", "--full-scale", "check-good", "--scale-connections", &full]);
    assert!(kept.contains(&format!("{full} connections open at once")), "{kept}");
}

#[test]
fn a_full_scale_name_that_is_no_contestant_is_refused() {
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check/contestants");
    let o = serverbench(&["check", "--contestants", catalog.to_str().unwrap(), "--quick", "--full-scale", "check-goood", "--no-install"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("--full-scale check-goood: no such contestant"), "{}", text(&o.stderr));
}

#[test]
fn the_default_full_scale_contestants_are_in_the_catalog() {
    let catalog = Catalog::discover(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../contestants")).unwrap();
    for name in FULL_SCALE_DEFAULT {
        assert!(catalog.contestants.iter().any(|c| c.name == *name), "{name} is not a contestant; update FULL_SCALE_DEFAULT");
    }
}

/// A one-contestant manifest that builds with `true`; `extra` adds fields.
fn manifest(dir: &Path, name: &str, extra: &str) {
    let dir = dir.join("shell").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let toml = format!(
        "name = \"{name}\"\nlanguage = \"c\"\nframework = \"none\"\ncategory = \"micro\"\nmodel = \"per-core\"\n\
         io = \"epoll\"\nscenarios = [\"hello\"]\nbuild = \"true\"\nrun = \"true {{port}}\"\n{extra}"
    );
    std::fs::write(dir.join("contestant.toml"), toml).unwrap();
}

#[test]
fn require_all_accepts_only_a_declared_unsupported_machine() {
    let root = tmp("ci-require-all");
    let catalog = root.join("contestants");
    let here = std::env::consts::ARCH;
    manifest(&catalog, "fake-builds", "");
    manifest(&catalog, "fake-unsupported", &format!("unsupported = {{ {here} = \"no {here} build of its library\" }}\n"));
    let out = root.join("results");
    let build = |extra: &[&str]| {
        let mut args = vec!["build", "--contestants", catalog.to_str().unwrap(), "-o", out.to_str().unwrap(), "--no-install"];
        args.extend(extra);
        serverbench(&args)
    };
    let o = build(&["--require-all"]);
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "stdout:\n{stdout}\nstderr:\n{}", text(&o.stderr));
    let line = stdout.lines().find(|l| l.contains("fake-unsupported")).unwrap();
    assert!(line.contains(&format!("its manifest says it cannot be built on {here}: no {here} build of its library")), "{line}");

    manifest(&catalog, "fake-needs-tool", "requires = [\"sb-no-such-command\"]\n");
    let o = build(&[]);
    assert!(o.status.success(), "without --require-all a skip is not a failure: {}", text(&o.stderr));
    let o = build(&["--require-all"]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = text(&o.stderr);
    assert!(stderr.contains("1 contestant(s) were not built") && stderr.contains("(fake-needs-tool;"), "{stderr}");
}

#[test]
fn an_unknown_machine_is_refused_with_the_allowed_values() {
    let root = tmp("ci-bad-machine");
    let catalog = root.join("contestants");
    manifest(&catalog, "fake-bad-machine", "unsupported = { amd64 = \"why\", riscv64 = \"\" }\n");
    let c = Catalog::discover(&catalog).unwrap();
    let errors: Vec<String> = c.errors.iter().map(|e| e.to_string()).collect();
    assert!(
        errors.iter().any(|e| e.contains("field `unsupported` names the machine \"amd64\"; allowed values: x86_64, aarch64")),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e.contains("field `unsupported.riscv64` is empty")), "{errors:?}");
}
