//! `cairn bench mcp` end to end, with few calls: it reaches server-everything through the hub
//! and through the Python SDK over both transports, and prints one row for each. The figures
//! themselves are not checked: a busy machine is not a failure.

use std::process::{Command, Stdio};

use crate::support::{peer_tests, python};

#[test]
fn bench_mcp_prints_a_row_per_client_and_transport() {
    if !peer_tests() {
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["bench", "mcp", "--calls", "20"])
        .env("CAIRN_PYTHON", python())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("| cairn hub") || l.starts_with("| python sdk"))
        .collect();
    assert_eq!(rows.len(), 4, "{stdout}");
    for (client, transport) in [
        ("| cairn hub", "| stdio |"),
        ("| python sdk", "| stdio |"),
        ("| cairn hub", "| streamable http |"),
        ("| python sdk", "| streamable http |"),
    ] {
        assert!(
            rows.iter()
                .any(|r| r.starts_with(client) && r.contains(transport)),
            "no row for {client} over {transport}:\n{stdout}"
        );
    }
}
