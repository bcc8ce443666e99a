//! The file checks against a real Docker engine and the real linters of the devops image: per
//! tool a bad file (the finding the linter reports) and a good one (passes), then what must
//! never happen: a protected file seen by a linter, a path outside the workspace checked, a
//! container left behind, a YAML bomb hanging a check.
//!
//! Gated by `CAIRN_DOCKER_TESTS=1` (`.ci/run` sets it after `scripts/sandbox-images` built the
//! images); the image is `CAIRN_DEVOPS_IMAGE`, default `cairn-test/devops:1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cairn_config::SandboxConfig;
use cairn_devops::{DevOps, devops_tools};
use cairn_sandbox::Sandbox;
use cairn_test_support::tools::Seen;
use cairn_toolkit::ToolSet;
use cairn_workspace::{AccessRules, ExactApprovals, Operation, Workspace};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn enabled() -> bool {
    cairn_test_support::gate(
        "CAIRN_DOCKER_TESTS",
        "with a Docker engine (scripts/sandbox-images)",
    )
}

fn image() -> String {
    std::env::var("CAIRN_DEVOPS_IMAGE").unwrap_or_else(|_| "cairn-test/devops:1".to_owned())
}

/// The sandbox as a user would configure it for the checks, a little tighter.
fn sandbox() -> Arc<Sandbox> {
    let mut config = SandboxConfig {
        timeout_secs: 30,
        memory_mib: 512,
        tmpfs_mib: 64,
        pids_limit: 128,
        output_max_bytes: 256 * 1024,
        pool_size: 0,
        ..SandboxConfig::default()
    };
    config.images.insert("devops".into(), image());
    Sandbox::new(config)
}

struct Fixture {
    dir: tempfile::TempDir,
    sandbox: Arc<Sandbox>,
    approvals: Arc<ExactApprovals>,
    tools: ToolSet<DevOps>,
}

/// A workspace with `files`, under the user's rules as the binary applies them (`.env` and
/// `.git/config` are protected).
fn fixture(files: &[(&str, &str)]) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    let approvals = ExactApprovals::new();
    let ws = Workspace::new(vec![dir.path().to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("ada@example.com", None, None),
            approvals.clone(),
        );
    let sandbox = sandbox();
    let tools = devops_tools(DevOps::new(
        sandbox.clone(),
        None,
        Some(Arc::new(ws)),
        approvals.clone(),
    ));
    Fixture {
        dir,
        sandbox,
        approvals,
        tools,
    }
}

async fn call(f: &Fixture, name: &str, args: Value) -> Seen {
    cairn_test_support::tools::call(&f.tools, name, args).await
}

async fn call_with(f: &Fixture, name: &str, args: Value, cancel: CancellationToken) -> Seen {
    cairn_test_support::tools::call_with(&f.tools, name, args, cancel).await
}

/// No container of this sandbox is left, running or not.
async fn no_container_left(sandbox: &Sandbox) {
    let left = sandbox.engine().await.unwrap().list(true).await.unwrap();
    assert!(left.is_empty(), "containers left behind: {left:?}");
}

fn has_line(text: &str, starts: &str, contains: &str) {
    assert!(
        text.lines()
            .any(|l| l.starts_with(starts) && l.contains(contains)),
        "no line starting {starts:?} with {contains:?} in:\n{text}"
    );
}

fn clean(seen: &Seen) {
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.contains("0 errors, 0 warnings"),
        "expected a clean result:\n{}",
        seen.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lint_shell_reports_an_unquoted_argument_and_passes_a_clean_script() {
    if !enabled() {
        return;
    }
    let f = fixture(&[
        ("bin/bad.sh", "#!/bin/sh\nrm -rf $1\n"),
        ("bin/good.sh", "#!/bin/sh\nrm -rf -- \"$1\"\n"),
    ]);
    let r = call(&f, "lint_shell", json!({"paths": ["bin/bad.sh"]})).await;
    assert!(!r.is_error, "{}", r.text);
    has_line(&r.text, "bin/bad.sh:2:8 info SC2086 ", "Double quote");
    assert!(r.text.contains("(shellcheck 0.9.0)"), "{}", r.text);
    // At severity warning the info finding is not reported.
    let w = call(
        &f,
        "lint_shell",
        json!({"paths": ["bin/bad.sh"], "severity": "warning", "shell": "bash"}),
    )
    .await;
    clean(&w);
    clean(&call(&f, "lint_shell", json!({"paths": ["bin/good.sh"]})).await);
    no_container_left(&f.sandbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lint_dockerfile_reports_the_latest_tag_and_passes_a_pinned_image() {
    if !enabled() {
        return;
    }
    let f = fixture(&[
        ("Dockerfile", "FROM debian:latest\nCMD [\"true\"]\n"),
        ("ok/Dockerfile", "FROM debian:12.5\nCMD [\"true\"]\n"),
    ]);
    let r = call(&f, "lint_dockerfile", json!({"paths": ["Dockerfile"]})).await;
    assert!(!r.is_error, "{}", r.text);
    has_line(&r.text, "Dockerfile:1:1 warning DL3007 ", "latest");
    assert!(r.text.contains("Haskell Dockerfile Linter"), "{}", r.text);
    clean(&call(&f, "lint_dockerfile", json!({"paths": ["ok/Dockerfile"]})).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lint_yaml_reports_a_duplicate_key_uses_the_workspace_config_and_survives_a_bomb() {
    if !enabled() {
        return;
    }
    let mut bomb = String::from(
        "---\na: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n",
    );
    for (name, prev) in ["b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .zip(["a", "b", "c", "d", "e", "f", "g", "h"])
    {
        let refs = vec![format!("*{prev}"); 9].join(", ");
        bomb.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let f = fixture(&[
        ("bad.yaml", "---\nname: a\nname: b\n"),
        ("good.yaml", "---\nname: a\nitems:\n  - 1\n"),
        // The workspace's config turns the document-start rule off: a good file without `---`.
        (
            ".yamllint",
            "extends: default\nrules:\n  document-start: disable\n",
        ),
        ("nostart.yaml", "name: a\n"),
        ("bomb.yaml", &bomb),
    ]);
    let r = call(&f, "lint_yaml", json!({"paths": ["bad.yaml"]})).await;
    assert!(!r.is_error, "{}", r.text);
    has_line(
        &r.text,
        "bad.yaml:3:1 error key-duplicates ",
        "duplication of key \"name\"",
    );
    clean(
        &call(
            &f,
            "lint_yaml",
            json!({"paths": ["good.yaml", "nostart.yaml"]}),
        )
        .await,
    );
    let b = call(&f, "lint_yaml", json!({"paths": ["bomb.yaml"]})).await;
    assert!(!b.is_error, "{}", b.text);
    assert!(b.text.contains("in bomb.yaml (yamllint"), "{}", b.text);
    no_container_left(&f.sandbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_ci_workflow_reads_github_and_gitlab_files_by_their_paths() {
    if !enabled() {
        return;
    }
    let f = fixture(&[
        (
            ".github/workflows/bad.yml",
            "on: push\njobs:\n  build:\n    runs-on: ubuntu-latset\n    steps:\n      - run: echo ${{ github.evnt }}\n",
        ),
        (
            ".github/workflows/good.yml",
            "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n",
        ),
        (
            ".gitlab-ci.yml",
            "build:\n  script: echo hi\n  when: sometimes\n",
        ),
        ("ok/.gitlab-ci.yml", "build:\n  script:\n    - echo hi\n"),
        ("ci.yml", "x: 1\n"),
    ]);
    let r = call(
        &f,
        "check_ci_workflow",
        json!({"paths": [".github/workflows/bad.yml"]}),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    has_line(
        &r.text,
        ".github/workflows/bad.yml:4:14 error runner-label ",
        "ubuntu-latset",
    );
    has_line(&r.text, ".github/workflows/bad.yml:6:", "evnt");
    clean(
        &call(
            &f,
            "check_ci_workflow",
            json!({"paths": [".github/workflows/good.yml"]}),
        )
        .await,
    );
    let g = call(
        &f,
        "check_ci_workflow",
        json!({"paths": [".gitlab-ci.yml"]}),
    )
    .await;
    assert!(!g.is_error, "{}", g.text);
    has_line(
        &g.text,
        ".gitlab-ci.yml:3:9 error schema at $.build.when",
        "sometimes",
    );
    clean(
        &call(
            &f,
            "check_ci_workflow",
            json!({"paths": ["ok/.gitlab-ci.yml"]}),
        )
        .await,
    );
    // A file the path does not tell about is refused with what to do.
    let u = call(&f, "check_ci_workflow", json!({"paths": ["ci.yml"]})).await;
    assert!(u.is_error && u.text.contains("pass kind"), "{}", u.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_kubernetes_validates_manifests_and_renders_kustomize() {
    if !enabled() {
        return;
    }
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n        - name: web\n          image: nginx\n";
    let good = deployment.replace(
        "  replicas: 1\n",
        "  replicas: 1\n  selector:\n    matchLabels: {app: web}\n",
    );
    let f = fixture(&[
        ("k8s/bad.yaml", deployment),
        ("k8s/good.yaml", &good),
        (
            "base/svc.yaml",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n",
        ),
        ("base/kustomization.yaml", "resources:\n  - svc.yaml\n"),
        (
            "overlay/kustomization.yaml",
            "resources:\n  - ../base\nnamePrefix: prod-\ncommonLabels: {env: prod}\n",
        ),
    ]);
    let r = call(&f, "check_kubernetes", json!({"paths": ["k8s/bad.yaml"]})).await;
    assert!(!r.is_error, "{}", r.text);
    has_line(
        &r.text,
        "k8s/bad.yaml:6:3 error schema ",
        "'selector' is a required property",
    );
    clean(
        &call(
            &f,
            "check_kubernetes",
            json!({"paths": ["k8s/good.yaml"], "version": "1.30"}),
        )
        .await,
    );
    let k = call(
        &f,
        "check_kubernetes",
        json!({"paths": ["overlay"], "show_rendered": true}),
    )
    .await;
    clean(&k);
    assert!(k.text.contains("name: prod-web"), "{}", k.text);
    assert!(k.text.contains("env: prod"), "{}", k.text);
    let v = call(
        &f,
        "check_kubernetes",
        json!({"paths": ["k8s/good.yaml"], "version": "9.99"}),
    )
    .await;
    assert!(
        v.is_error && v.text.contains("does not support version"),
        "{}",
        v.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_kubernetes_refuses_a_yaml_bomb_quickly() {
    if !enabled() {
        return;
    }
    let mut bomb = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nx0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for i in 1..9 {
        let refs = vec![format!("*a{}", i - 1); 9].join(", ");
        bomb.push_str(&format!("x{i}: &a{i} [{refs}]\n"));
    }
    let f = fixture(&[("bomb.yaml", &bomb)]);
    let r = call(&f, "check_kubernetes", json!({"paths": ["bomb.yaml"]})).await;
    assert!(!r.is_error, "{}", r.text);
    has_line(
        &r.text,
        "bomb.yaml:1:1 error too-large ",
        "YAML anchors and aliases",
    );
    no_container_left(&f.sandbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_terraform_reports_syntax_and_undeclared_references() {
    if !enabled() {
        return;
    }
    let f = fixture(&[
        (
            "infra/main.tf",
            "variable \"ami\" {\n  type = string\n}\nresource \"aws_instance\" \"web\" {\n  ami = var.ami\n  tags = { Name = var.name }\n}\n",
        ),
        ("broken/main.tf", "resource \"a\" \"b\" {\n  x = = 1\n}\n"),
        (
            "ok/main.tf",
            "variable \"ami\" {}\nresource \"aws_instance\" \"web\" {\n  ami = var.ami\n}\noutput \"id\" { value = aws_instance.web.id }\n",
        ),
    ]);
    let r = call(&f, "check_terraform", json!({"paths": ["infra"]})).await;
    assert!(!r.is_error, "{}", r.text);
    has_line(&r.text, "infra/main.tf:6:19 error undeclared ", "var.name");
    let s = call(&f, "check_terraform", json!({"paths": ["broken/main.tf"]})).await;
    has_line(
        &s.text,
        "broken/main.tf:2:7 error syntax ",
        "Unexpected token",
    );
    clean(&call(&f, "check_terraform", json!({"paths": ["ok"]})).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_ansible_reports_the_line_of_a_syntax_error() {
    if !enabled() {
        return;
    }
    let f = fixture(&[
        ("bad.yml", "- hosts: all\n  tsks:\n    - debug: msg=hi\n"),
        (
            "good.yml",
            "- hosts: all\n  tasks:\n    - name: hi\n      debug: msg=hi\n",
        ),
    ]);
    let r = call(
        &f,
        "check_ansible",
        json!({"paths": ["bad.yml", "good.yml"]}),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    has_line(
        &r.text,
        "bad.yml:1:3 error syntax-check ",
        "'tsks' is not a valid attribute",
    );
    assert!(
        r.text
            .contains("1 error, 0 warnings in 2 files (ansible-playbook [core 2.14"),
        "{}",
        r.text
    );
    clean(&call(&f, "check_ansible", json!({"paths": ["good.yml"]})).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_systemd_unit_reports_an_unknown_key_with_a_suggestion() {
    if !enabled() {
        return;
    }
    let f = fixture(&[
        (
            "app.service",
            "[Unit]\nDescription=app\n[Service]\nExecStrat=/bin/true\nExecStart=/bin/true\n",
        ),
        (
            "ok.service",
            "[Unit]\nDescription=ok\n[Service]\nExecStart=/bin/true\n",
        ),
    ]);
    let r = call(&f, "check_systemd_unit", json!({"paths": ["app.service"]})).await;
    assert!(!r.is_error, "{}", r.text);
    has_line(
        &r.text,
        "app.service:4:0 warning unknown-key ",
        "Did you mean ExecStart?",
    );
    clean(&call(&f, "check_systemd_unit", json!({"paths": ["ok.service"]})).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_compose_reports_undefined_variables_and_never_shows_env_values() {
    if !enabled() {
        return;
    }
    let compose = "services:\n  web:\n    image: \"nginx:${TAG}\"\n    environment:\n      DB: \"${DB_PASSWORD}\"\n";
    let env = "TAG=1.27\nDB_PASSWORD=hunter2-secret\nthis line is broken\nTAG=1.28\n";
    let f = fixture(&[
        ("compose.yaml", compose),
        (".env", env),
        (
            "bad/compose.yaml",
            "services:\n  web:\n    image: nginx\n    ports: \"80\"\n",
        ),
    ]);
    // Without env_file: both variables undefined, .env untouched.
    let r = call(&f, "check_compose", json!({"path": "compose.yaml"})).await;
    assert!(!r.is_error, "{}", r.text);
    has_line(
        &r.text,
        "compose.yaml:3:19 warning undefined-variable ",
        "${TAG}",
    );
    assert!(r.text.contains("env_file: true"), "{}", r.text);
    // With env_file and no approval: refused as a protected path, asked of the user.
    let refused = call(
        &f,
        "check_compose",
        json!({"path": "compose.yaml", "env_file": true}),
    )
    .await;
    assert!(
        refused.is_error && refused.text.contains(".env"),
        "{}",
        refused.text
    );
    // Approved: names only; the malformed line and the duplicate are reported, no value shown.
    let env_abs = std::fs::canonicalize(f.dir.path().join(".env")).unwrap();
    f.approvals.hold(&env_abs, Operation::Read);
    let a = call(
        &f,
        "check_compose",
        json!({"path": "compose.yaml", "env_file": true}),
    )
    .await;
    f.approvals.release(&env_abs, Operation::Read);
    assert!(!a.is_error, "{}", a.text);
    assert!(!a.text.contains("undefined-variable"), "{}", a.text);
    has_line(&a.text, ".env:3:1 error env-malformed ", "not shown");
    has_line(
        &a.text,
        ".env:4:1 warning env-duplicate ",
        "TAG is set more than once (lines 1, 4)",
    );
    for secret in ["hunter2", "1.27", "1.28", "broken"] {
        assert!(!a.text.contains(secret), "{secret} shown:\n{}", a.text);
    }
    assert_eq!(
        std::fs::read_to_string(f.dir.path().join(".env")).unwrap(),
        env
    );
    let s = call(&f, "check_compose", json!({"path": "bad/compose.yaml"})).await;
    has_line(
        &s.text,
        "bad/compose.yaml:4:12 error schema at $.services.web.ports",
        "not of type 'array'",
    );
    no_container_left(&f.sandbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_files_are_masked_from_the_linters() {
    if !enabled() {
        return;
    }
    // A kustomization that names `.env` and `.git/config` as resources: were they visible,
    // their objects would be rendered; masked, they are empty files with nothing in them.
    let secret =
        "apiVersion: v1\nkind: Secret\nmetadata: {name: leaked}\nstringData: {password: hunter2}\n";
    let f = fixture(&[
        (
            "kustomization.yaml",
            "resources:\n  - .env\n  - .git/config\n",
        ),
        (".env", secret),
        (".git/config", secret),
    ]);
    let r = call(
        &f,
        "check_kubernetes",
        json!({"paths": ["."], "show_rendered": true}),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        !r.text.contains("leaked") && !r.text.contains("hunter2"),
        "{}",
        r.text
    );
    assert!(r.text.contains("0 objects validated"), "{}", r.text);
    no_container_left(&f.sandbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paths_outside_the_workspace_are_refused_before_any_container() {
    if !enabled() {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let script = outside.path().join("x.sh");
    std::fs::write(&script, "#!/bin/sh\necho $1\n").unwrap();
    let f = fixture(&[("a.sh", "#!/bin/sh\necho hi\n")]);
    for path in [
        script.display().to_string(),
        "../x.sh".to_owned(),
        "/etc/passwd".to_owned(),
    ] {
        let r = call(&f, "lint_shell", json!({"paths": [path]})).await;
        assert!(r.is_error, "{path}: {}", r.text);
        assert!(!r.text.contains("SC2086"), "{}", r.text);
    }
    let d = call(&f, "lint_shell", json!({"paths": ["."]})).await;
    assert!(
        d.is_error && d.text.contains("is a directory"),
        "{}",
        d.text
    );
    assert!(Path::new(&script).exists());
    no_container_left(&f.sandbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_check_stops_and_leaves_no_container() {
    if !enabled() {
        return;
    }
    // Twelve playbooks: one ansible-playbook start each, seconds of work in all.
    let names: Vec<String> = (0..12).map(|i| format!("p{i}.yml")).collect();
    let files: Vec<(&str, &str)> = names
        .iter()
        .map(|n| (n.as_str(), "- hosts: all\n  tasks:\n    - debug: msg=hi\n"))
        .collect();
    let f = fixture(&files);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(800)).await;
        trigger.cancel();
    });
    let r = call_with(&f, "check_ansible", json!({"paths": names}), cancel).await;
    assert!(
        r.is_error && r.text.contains("cancelled by the user"),
        "{}",
        r.text
    );
    no_container_left(&f.sandbox).await;
}
