//! The Docker tools against a real engine: containers the tests start themselves (with a unique
//! name prefix each, removed by a guard however the test ends), every tool called as the model
//! calls it, and the refusals with what they leave in place.
//!
//! Gated by `CAIRN_DOCKER_TESTS=1`; the image is `CAIRN_TEST_IMAGE`, default
//! `cairn-test/runtime:2` (`scripts/sandbox-images`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bollard::Docker;
use bollard::models::ContainerCreateBody;
use bollard::query_parameters::{
    CreateContainerOptions, LogsOptions, RemoveContainerOptions, RemoveImageOptions,
    WaitContainerOptions,
};
use cairn_agent::tools::protected_of;
use cairn_config::SandboxConfig;
use cairn_devops::{DevOps, devops_tools};
use cairn_sandbox::Sandbox;
use cairn_test_support::tools::text_of as text;
use cairn_toolkit::ToolSet;
use cairn_workspace::{AccessRules, ExactApprovals, Operation, Workspace};
use futures::StreamExt;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// One test at a time: a prune removes every stopped container cairn made, another test's too.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn enabled() -> bool {
    cairn_test_support::gate(
        "CAIRN_DOCKER_TESTS",
        "with a Docker engine (scripts/sandbox-images)",
    )
}

fn image() -> String {
    std::env::var("CAIRN_TEST_IMAGE").unwrap_or_else(|_| "cairn-test/runtime:2".to_owned())
}

/// The tools over a workspace at `dir` with the user's usual rules (`.env` is protected), and
/// the approvals the agent would hold.
struct Setup {
    tools: ToolSet<DevOps>,
    approvals: Arc<ExactApprovals>,
    docker: Docker,
    /// Containers and images to remove at the end, whatever happens.
    guard: Guard,
    prefix: String,
    /// Held until the guard above has cleaned up (fields drop in order).
    _serial: tokio::sync::MutexGuard<'static, ()>,
}

async fn setup(dir: &Path) -> Setup {
    let serial = SERIAL.lock().await;
    let ws = Workspace::new(vec![dir.to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("ada@example.com", None, None),
            ExactApprovals::new(),
        );
    let sandbox = Sandbox::new(SandboxConfig {
        memory_mib: 512,
        ..SandboxConfig::default()
    });
    let docker = sandbox.engine().await.unwrap().docker().clone();
    let approvals = ExactApprovals::new();
    let tools = devops_tools(DevOps::new(
        sandbox,
        None,
        Some(Arc::new(ws)),
        approvals.clone(),
    ));
    let prefix = format!(
        "cairn-dt-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    Setup {
        tools,
        approvals,
        guard: Guard {
            docker: docker.clone(),
            containers: Vec::new(),
            images: Vec::new(),
        },
        docker,
        prefix,
        _serial: serial,
    }
}

/// Removes what a test made, on drop.
struct Guard {
    docker: Docker,
    containers: Vec<String>,
    images: Vec<String>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let docker = self.docker.clone();
        let containers = std::mem::take(&mut self.containers);
        let images = std::mem::take(&mut self.images);
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async move {
                for c in containers {
                    let options = RemoveContainerOptions {
                        force: true,
                        v: true,
                        ..Default::default()
                    };
                    let _ = docker.remove_container(&c, Some(options)).await;
                }
                for i in images {
                    let options = RemoveImageOptions {
                        force: true,
                        ..Default::default()
                    };
                    let _ = docker.remove_image(&i, Some(options), None).await;
                }
            });
        });
    }
}

impl Setup {
    /// Creates (and starts, when `start`) a container named `{prefix}-{name}` that prints to
    /// both streams and sleeps.
    async fn container(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        start: bool,
    ) -> (String, String) {
        let full = format!("{}-{name}", self.prefix);
        self.guard.containers.push(full.clone());
        let body = ContainerCreateBody {
            image: Some(image()),
            cmd: Some(vec![
                "sh".into(),
                "-c".into(),
                "echo hello; echo err >&2; sleep 300".into(),
            ]),
            env: Some(vec!["API_TOKEN=s3cr3t-value-do-not-show".into()]),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            ..Default::default()
        };
        let options = CreateContainerOptions {
            name: Some(full.clone()),
            ..Default::default()
        };
        let id = self
            .docker
            .create_container(Some(options), body)
            .await
            .unwrap()
            .id;
        if start {
            self.docker.start_container(&id, None).await.unwrap();
            // Wait until both lines are in the log (bounded; the engine is local).
            for _ in 0..100 {
                if engine_logs(&self.docker, &id).await.contains("err") {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        (full, id)
    }

    async fn call(&self, name: &str, args: Value) -> CallToolResult {
        self.call_with(name, args, CancellationToken::new()).await
    }

    async fn call_with(
        &self,
        name: &str,
        args: Value,
        cancel: CancellationToken,
    ) -> CallToolResult {
        cairn_test_support::tools::call_with(&self.tools, name, args, cancel)
            .await
            .result
    }

    async fn ok(&self, name: &str, args: Value) -> String {
        let r = self.call(name, args.clone()).await;
        let t = text(&r);
        assert_ne!(r.is_error, Some(true), "{name} {args}: {t}");
        t
    }

    async fn err(&self, name: &str, args: Value) -> String {
        let r = self.call(name, args.clone()).await;
        let t = text(&r);
        assert_eq!(r.is_error, Some(true), "{name} {args} should fail: {t}");
        t
    }

    async fn state(&self, id: &str) -> Option<String> {
        match self.docker.inspect_container(id, None).await {
            Ok(c) => Some(c.state.unwrap().status.unwrap().to_string()),
            Err(_) => None,
        }
    }
}

async fn engine_logs(docker: &Docker, id: &str) -> String {
    let options = LogsOptions {
        stdout: true,
        stderr: true,
        ..Default::default()
    };
    let mut stream = docker.logs(id, Some(options));
    let mut out = String::new();
    while let Some(Ok(frame)) = stream.next().await {
        out.push_str(&frame.to_string());
    }
    out
}

fn tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

#[tokio::test(flavor = "multi_thread")]
async fn lists_inspect_logs_stats_and_compose_show_the_tests_containers() {
    if !enabled() {
        return;
    }
    let (_dir, root) = tempdir();
    let mut s = setup(&root).await;
    let project = format!("{}-proj", s.prefix);
    let compose = |service: &'static str| {
        vec![
            ("com.docker.compose.project", project.clone()),
            ("com.docker.compose.service", service.to_owned()),
            ("com.docker.compose.container-number", "1".to_owned()),
            (
                "com.docker.compose.project.working_dir",
                "/srv/app".to_owned(),
            ),
        ]
    };
    let web_labels = compose("web");
    let web_labels: Vec<(&str, &str)> = web_labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let db_labels = compose("db");
    let db_labels: Vec<(&str, &str)> = db_labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (web, web_id) = s.container("web", &web_labels, true).await;
    let (db, _) = s.container("db", &db_labels, true).await;
    let (stopped, _) = s.container("stopped", &[], false).await;

    // Lists: running ones by default, the stopped one with `all`.
    let list = s.ok("docker_containers", json!({"name": s.prefix})).await;
    assert!(list.contains(&web) && list.contains(&db), "{list}");
    assert!(!list.contains(&stopped), "{list}");
    let list = s
        .ok("docker_containers", json!({"name": s.prefix, "all": true}))
        .await;
    assert!(
        list.contains(&stopped) && list.contains("created"),
        "{list}"
    );
    let by_label = s
        .ok(
            "docker_containers",
            json!({"label": format!("com.docker.compose.service=web"), "name": s.prefix}),
        )
        .await;
    assert!(
        by_label.contains(&web) && !by_label.contains(&db),
        "{by_label}"
    );
    let bad = s
        .err("docker_containers", json!({"status": "sleepy"}))
        .await;
    assert!(bad.contains("unknown status"), "{bad}");

    // Inspect: state, command, env names but never values.
    let inspected = s.ok("docker_inspect", json!({"name": web})).await;
    assert!(inspected.contains("state: running"), "{inspected}");
    assert!(inspected.contains("API_TOKEN"), "{inspected}");
    assert!(inspected.contains("values are hidden"), "{inspected}");
    assert!(!inspected.contains("s3cr3t"), "{inspected}");
    assert!(inspected.contains("echo hello"), "{inspected}");
    assert!(
        inspected.contains("com.docker.compose.service=web"),
        "{inspected}"
    );
    let by_id = s.ok("docker_inspect", json!({"name": &web_id[..12]})).await;
    assert!(by_id.contains(&web), "{by_id}");
    let img = s
        .ok("docker_inspect", json!({"name": image(), "kind": "image"}))
        .await;
    assert!(img.starts_with("image "), "{img}");
    let net = s.ok("docker_inspect", json!({"name": "bridge"})).await;
    assert!(net.contains("driver: bridge"), "{net}");
    let missing = s
        .err("docker_inspect", json!({"name": format!("{web}x")}))
        .await;
    assert!(missing.contains("no container named"), "{missing}");
    assert!(
        missing.contains(&web),
        "a close name is suggested: {missing}"
    );

    // Logs: both streams marked, stderr only, tail, since.
    let logs = s.ok("docker_logs", json!({"container": web})).await;
    assert!(logs.contains("out| hello"), "{logs}");
    assert!(logs.contains("err| err"), "{logs}");
    let errs = s
        .ok("docker_logs", json!({"container": web, "stream": "stderr"}))
        .await;
    assert!(
        errs.contains("err| err") && !errs.contains("hello"),
        "{errs}"
    );
    let tail = s
        .ok("docker_logs", json!({"container": web, "tail": 1}))
        .await;
    assert_eq!(tail.matches("| ").count(), 1, "{tail}");
    let old = s
        .ok(
            "docker_logs",
            json!({"container": web, "since": "2000-01-01T00:00:00Z", "timestamps": true}),
        )
        .await;
    assert!(old.contains("hello") && old.contains("out| 20"), "{old}");
    let recent = s
        .ok("docker_logs", json!({"container": web, "since": "10m"}))
        .await;
    assert!(recent.contains("out| hello"), "{recent}");
    let future = s
        .ok(
            "docker_logs",
            json!({"container": web, "since": "2037-01-01T00:00:00Z"}),
        )
        .await;
    assert!(future.contains("(no output)"), "{future}");
    let bad_since = s
        .err(
            "docker_logs",
            json!({"container": web, "since": "yesterday"}),
        )
        .await;
    assert!(bad_since.contains("RFC 3339"), "{bad_since}");
    let no_such = s
        .err(
            "docker_logs",
            json!({"container": "cairn-dt-no-such-container"}),
        )
        .await;
    assert!(
        no_such.contains("no container named cairn-dt-no-such-container"),
        "{no_such}"
    );

    // Stats: one snapshot with numbers.
    let stats = s.ok("docker_stats", json!({"container": web})).await;
    assert!(stats.contains(&web), "{stats}");
    assert!(stats.contains("iB / "), "memory used / limit: {stats}");
    let not_running = s.err("docker_stats", json!({"container": stopped})).await;
    assert!(not_running.contains("not running"), "{not_running}");

    // The other lists answer and show what is there.
    let images = s.ok("docker_images", json!({})).await;
    assert!(images.contains(&image()), "{images}");
    let networks = s.ok("docker_networks", json!({})).await;
    assert!(networks.contains("bridge"), "{networks}");
    s.ok("docker_volumes", json!({})).await;

    // Compose: the project from the labels, its services, its logs prefixed by container.
    let projects = s.ok("compose_status", json!({})).await;
    assert!(
        projects.contains(&project) && projects.contains("/srv/app"),
        "{projects}"
    );
    let one = s.ok("compose_status", json!({"project": project})).await;
    assert!(one.contains("| web |") && one.contains("| db |"), "{one}");
    assert!(one.contains("running"), "{one}");
    let missing = s
        .err(
            "compose_status",
            json!({"project": format!("{project}-nope")}),
        )
        .await;
    assert!(missing.contains("no Compose project named"), "{missing}");
    let clogs = s
        .ok(
            "compose_logs",
            json!({"project": project, "services": ["web"]}),
        )
        .await;
    assert!(clogs.contains(&format!("{web} | out| hello")), "{clogs}");
    assert!(!clogs.contains(&db), "{clogs}");
    let bad = s
        .err(
            "compose_logs",
            json!({"project": project, "services": ["api"]}),
        )
        .await;
    assert!(
        bad.contains("no service api") && bad.contains("web"),
        "{bad}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn logs_stop_at_the_byte_cap() {
    if !enabled() {
        return;
    }
    let (_dir, root) = tempdir();
    let mut s = setup(&root).await;
    let name = format!("{}-loud", s.prefix);
    s.guard.containers.push(name.clone());
    // About 2 MiB of output in a few long lines.
    let body = ContainerCreateBody {
        image: Some(image()),
        cmd: Some(vec![
            "sh".into(),
            "-c".into(),
            "head -c 2000000 /dev/zero | tr '\\0' x; echo; echo done".into(),
        ]),
        ..Default::default()
    };
    let options = CreateContainerOptions {
        name: Some(name.clone()),
        ..Default::default()
    };
    let id = s
        .docker
        .create_container(Some(options), body)
        .await
        .unwrap()
        .id;
    s.docker.start_container(&id, None).await.unwrap();
    let mut wait = s.docker.wait_container(&id, None::<WaitContainerOptions>);
    while wait.next().await.is_some() {}
    let logs = s
        .ok("docker_logs", json!({"container": name, "tail": 5000}))
        .await;
    assert!(
        logs.contains("stopped at 256 KiB"),
        "{}",
        &logs[logs.len() - 300..]
    );
    assert!(logs.len() < 300 * 1024, "{}", logs.len());
    assert!(!logs.contains("done"));
}

#[tokio::test(flavor = "multi_thread")]
async fn start_stop_and_restart_change_the_state() {
    if !enabled() {
        return;
    }
    let (_dir, root) = tempdir();
    let mut s = setup(&root).await;
    let (name, id) = s.container("life", &[], true).await;
    let out = s
        .ok("docker_stop", json!({"container": name, "timeout": 1}))
        .await;
    assert!(out.contains("exited"), "{out}");
    assert_eq!(s.state(&id).await.as_deref(), Some("exited"));
    let again = s.ok("docker_stop", json!({"container": name})).await;
    assert!(again.contains("not running"), "{again}");
    let out = s.ok("docker_start", json!({"container": name})).await;
    assert!(out.contains("running"), "{out}");
    assert_eq!(s.state(&id).await.as_deref(), Some("running"));
    let before = s
        .docker
        .inspect_container(&id, None)
        .await
        .unwrap()
        .state
        .unwrap()
        .started_at;
    let out = s
        .ok("docker_restart", json!({"container": name, "timeout": 1}))
        .await;
    assert!(out.contains("running"), "{out}");
    let after = s
        .docker
        .inspect_container(&id, None)
        .await
        .unwrap()
        .state
        .unwrap()
        .started_at;
    assert_ne!(before, after, "restarted");
    let missing = s
        .err("docker_start", json!({"container": format!("{name}-nope")}))
        .await;
    assert!(missing.contains("no container named"), "{missing}");
}

#[tokio::test(flavor = "multi_thread")]
async fn removing_what_cairn_did_not_create_needs_the_exact_approval() {
    if !enabled() {
        return;
    }
    let (_dir, root) = tempdir();
    let mut s = setup(&root).await;
    let (ours, ours_id) = s.container("ours", &[("cairn.sandbox", "1")], false).await;
    let (theirs, theirs_id) = s.container("theirs", &[], true).await;

    // cairn's own: removed without a question.
    let out = s.ok("docker_remove", json!({"name": ours})).await;
    assert!(out.contains("removed container"), "{out}");
    assert_eq!(s.state(&ours_id).await, None);

    // Running: refused without force, still running.
    let r = s.err("docker_remove", json!({"name": theirs})).await;
    assert!(r.contains("is running"), "{r}");
    assert_eq!(s.state(&theirs_id).await.as_deref(), Some("running"));

    // Not cairn's: the strict question, naming the exact container; it still exists.
    let r = s
        .call("docker_remove", json!({"name": theirs, "force": true}))
        .await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("not created by cairn"), "{}", text(&r));
    let asked = protected_of(&r);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].key, format!("docker:container:{theirs_id}"));
    assert_eq!(asked[0].operation, "write");
    assert!(asked[0].path.contains(&theirs), "{:?}", asked[0]);
    assert_eq!(s.state(&theirs_id).await.as_deref(), Some("running"));

    // An approval of another object does not cover it.
    s.approvals
        .hold(Path::new("docker:container:someoneelse"), Operation::Write);
    s.err("docker_remove", json!({"name": theirs, "force": true}))
        .await;
    assert!(s.state(&theirs_id).await.is_some());

    // With the approval held (as the agent holds it after "allow once"), it goes.
    let key = PathBuf::from(&asked[0].key);
    s.approvals.hold(&key, Operation::Write);
    let out = s
        .ok("docker_remove", json!({"name": theirs, "force": true}))
        .await;
    s.approvals.release(&key, Operation::Write);
    assert!(out.contains("removed container"), "{out}");
    assert_eq!(s.state(&theirs_id).await, None);

    let missing = s
        .err("docker_remove", json!({"name": "cairn-dt-no-such"}))
        .await;
    assert!(missing.contains("no container named"), "{missing}");
    let missing = s
        .err(
            "docker_remove",
            json!({"name": "cairn-dt-no-such:1", "kind": "image"}),
        )
        .await;
    assert!(missing.contains("no image named"), "{missing}");
    // A name that would reach another endpoint of the engine's API is refused as a name.
    let odd = s
        .err(
            "docker_remove",
            json!({"name": format!("../images/{}", image()), "force": true}),
        )
        .await;
    assert!(odd.contains("not a valid container name"), "{odd}");
    assert!(s.docker.inspect_image(&image()).await.is_ok());
    // Someone else's image: the strict question, and it stays.
    let r = s
        .call("docker_remove", json!({"name": image(), "kind": "image"}))
        .await;
    assert_eq!(r.is_error, Some(true));
    assert!(protected_of(&r)[0].key.starts_with("docker:image:sha256:"));
    assert!(s.docker.inspect_image(&image()).await.is_ok());
}

#[tokio::test(flavor = "multi_thread")]
async fn prune_removes_only_cairns_by_default_and_asks_for_the_rest() {
    if !enabled() {
        return;
    }
    let (_dir, root) = tempdir();
    let mut s = setup(&root).await;
    let (ours, ours_id) = s.container("p-ours", &[("cairn.built", "1")], false).await;
    let (theirs, theirs_id) = s.container("p-theirs", &[], false).await;

    let dry = s
        .ok(
            "docker_prune",
            json!({"what": ["containers"], "include_others": true, "dry_run": true}),
        )
        .await;
    assert!(dry.contains(&ours) && dry.contains(&theirs), "{dry}");
    assert!(s.state(&ours_id).await.is_some());

    // With others: the strict question keyed on the exact set, nothing removed.
    let r = s
        .call(
            "docker_prune",
            json!({"what": ["containers"], "include_others": true}),
        )
        .await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    let asked = protected_of(&r);
    assert!(asked[0].key.starts_with("docker:prune:"), "{asked:?}");
    assert!(text(&r).contains(&theirs), "{}", text(&r));
    assert!(s.state(&ours_id).await.is_some());
    assert!(s.state(&theirs_id).await.is_some());

    // By default: only cairn's.
    let out = s.ok("docker_prune", json!({"what": ["containers"]})).await;
    assert!(out.contains(&ours), "{out}");
    assert!(out.contains("left alone"), "{out}");
    assert_eq!(s.state(&ours_id).await, None);
    assert!(s.state(&theirs_id).await.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn build_sends_no_protected_file_and_has_no_network_unless_granted() {
    if !enabled() {
        return;
    }
    let (_dir, root) = tempdir();
    std::fs::write(
        root.join("Dockerfile"),
        format!(
            "FROM {}\nCOPY . /ctx\nRUN ls -a /ctx > /ctx-listing.txt\nCMD [\"cat\", \"/ctx-listing.txt\"]\n",
            image()
        ),
    )
    .unwrap();
    std::fs::write(root.join("app.txt"), "the app\n").unwrap();
    std::fs::write(root.join(".env"), "SECRET=hunter2\n").unwrap();
    // .dockerignore filters the context; a file over the workspace's 8 MiB read cap still goes.
    std::fs::write(
        root.join(".dockerignore"),
        "# not these\nignored.txt\nlogs/\n",
    )
    .unwrap();
    std::fs::write(root.join("ignored.txt"), "no\n").unwrap();
    std::fs::create_dir(root.join("logs")).unwrap();
    std::fs::write(root.join("logs/a.log"), "no\n").unwrap();
    std::fs::write(root.join("big.bin"), vec![7u8; 9 * 1024 * 1024]).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/Dockerfile.net"), format!(
        "FROM {}\nRUN python3 -c \"import urllib.request; urllib.request.urlopen('http://example.com', timeout=5)\"\n",
        image()
    ))
    .unwrap();
    let mut s = setup(&root).await;
    let tag = format!("{}-img:1", s.prefix);
    s.guard.images.push(tag.clone());

    let out = s.ok("docker_build", json!({"tag": tag})).await;
    assert!(out.contains("built image") && out.contains(&tag), "{out}");
    assert!(out.contains(".env"), "the left-out file is named: {out}");
    let inspected = s.docker.inspect_image(&tag).await.unwrap();
    let labels = inspected.config.unwrap().labels.unwrap();
    assert_eq!(labels.get("cairn.built").map(String::as_str), Some("1"));

    // What the image holds: app.txt, never .env.
    let name = format!("{}-ls", s.prefix);
    s.guard.containers.push(name.clone());
    let options = CreateContainerOptions {
        name: Some(name.clone()),
        ..Default::default()
    };
    let body = ContainerCreateBody {
        image: Some(tag.clone()),
        ..Default::default()
    };
    let id = s
        .docker
        .create_container(Some(options), body)
        .await
        .unwrap()
        .id;
    s.docker.start_container(&id, None).await.unwrap();
    let mut wait = s.docker.wait_container(&id, None::<WaitContainerOptions>);
    while wait.next().await.is_some() {}
    let listing = engine_logs(&s.docker, &id).await;
    assert!(listing.contains("app.txt"), "{listing}");
    assert!(listing.contains("Dockerfile"), "{listing}");
    assert!(!listing.contains(".env"), "{listing}");
    assert!(listing.contains("big.bin"), "{listing}");
    assert!(
        !listing.contains("ignored.txt") && !listing.contains("logs"),
        "{listing}"
    );

    // A RUN that needs the network fails, and says why.
    let net_tag = format!("{}-net:1", s.prefix);
    s.guard.images.push(net_tag.clone());
    let failed = s
        .err(
            "docker_build",
            json!({"context": "sub", "dockerfile": "Dockerfile.net", "tag": net_tag}),
        )
        .await;
    assert!(failed.contains("the build failed"), "{failed}");
    assert!(failed.contains("no network"), "{failed}");
    assert!(s.docker.inspect_image(&net_tag).await.is_err());

    // A missing Dockerfile and a context outside the workspace are refused.
    let missing = s.err("docker_build", json!({"dockerfile": "Nope"})).await;
    assert!(missing.contains("no Dockerfile Nope"), "{missing}");
    s.err("docker_build", json!({"context": "/etc"})).await;

    // cairn built it: removed without a question.
    let out = s
        .ok(
            "docker_remove",
            json!({"name": tag, "kind": "image", "force": true}),
        )
        .await;
    assert!(out.contains("removed image"), "{out}");
}

/// No engine needed: an engine that does not answer is a clear error, for a list and a change.
#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_engine_says_so_and_how_to_check() {
    let (_dir, root) = tempdir();
    let ws = Workspace::new(vec![root.clone()]).unwrap();
    let sandbox = Sandbox::new(SandboxConfig {
        engine: Some(format!("unix://{}/no-docker.sock", root.display())),
        ..SandboxConfig::default()
    });
    let tools = devops_tools(DevOps::new(
        sandbox,
        None,
        Some(Arc::new(ws)),
        ExactApprovals::new(),
    ));
    for (name, args) in [
        ("docker_containers", json!({})),
        ("docker_stop", json!({"container": "web"})),
        ("docker_logs", json!({"container": "web"})),
    ] {
        let r = cairn_test_support::tools::call(&tools, name, args)
            .await
            .result;
        let t = text(&r);
        assert_eq!(r.is_error, Some(true), "{name}: {t}");
        assert!(t.contains("no container engine answers"), "{name}: {t}");
        assert!(t.contains("cairn doctor"), "{name}: {t}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_build_stops_and_makes_no_image() {
    if !enabled() {
        return;
    }
    let (_dir, root) = tempdir();
    std::fs::write(
        root.join("Dockerfile"),
        format!("FROM {}\nRUN sleep 120\n", image()),
    )
    .unwrap();
    let mut s = setup(&root).await;
    let tag = format!("{}-slow:1", s.prefix);
    s.guard.images.push(tag.clone());
    let cancel = CancellationToken::new();
    let later = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        later.cancel();
    });
    let r = s
        .call_with(
            "docker_build",
            json!({"tag": tag, "no_cache": true}),
            cancel,
        )
        .await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(text(&r).contains("cancelled"), "{}", text(&r));
    assert!(s.docker.inspect_image(&tag).await.is_err());
}

/// What the catalog shows the model: every Docker tool with a description, a closed schema and
/// a description on every field (no engine needed).
#[test]
fn every_docker_tool_has_a_described_closed_schema() {
    let docker: Vec<_> = cairn_devops::DEVOPS_TOOLS
        .iter()
        .map(|e| e.info())
        .filter(|i| i.tool.name.starts_with("docker_") || i.tool.name.starts_with("compose_"))
        .collect();
    assert_eq!(docker.len(), 15);
    for info in docker {
        let name = info.tool.name.to_string();
        assert_eq!(info.category, "devops", "{name}");
        let schema = Value::Object((*info.tool.input_schema).clone());
        assert_eq!(schema["additionalProperties"], false, "{name}");
        for (field, property) in schema["properties"].as_object().unwrap() {
            assert!(
                property["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{name}.{field} has no description: {property}"
            );
        }
    }
}
