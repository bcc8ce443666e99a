//! The built-in tools over a real MCP session on an in-memory transport.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::sync::Arc;

use cairn_tools::mcp_server::ToolServer;
use cairn_tools::{FILE_TOOLS, file_tools};
use cairn_workspace::Workspace;
use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::{ClientHandler, ServiceExt};

#[derive(Clone)]
struct Client;

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }
}

#[tokio::test]
async fn file_tools_answer_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").unwrap();
    let workspace = Workspace::new(vec![dir.path().to_path_buf()]).unwrap();
    let server = ToolServer::new("cairn-files", file_tools(Arc::new(workspace)));
    let infos = server.infos();
    assert!(
        infos
            .iter()
            .any(|t| t.tool.name == "edit_file" && t.agent_only)
    );

    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let running = tokio::spawn(async move {
        let service = server.serve(server_io).await.unwrap();
        service.waiting().await.unwrap();
    });
    let client = Client.serve(client_io).await.unwrap();

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let listed: Vec<&str> = FILE_TOOLS.iter().map(|e| e.name()).collect();
    assert_eq!(names, listed);

    let mut params = CallToolRequestParams::new("read_file");
    params.arguments = Some(
        serde_json::json!({"path": "a.txt"})
            .as_object()
            .cloned()
            .unwrap(),
    );
    let result = client.call_tool(params).await.unwrap();
    let text = serde_json::to_string(&result).unwrap();
    assert!(text.contains("beta"), "{text}");

    let mut params = CallToolRequestParams::new("edit_file");
    params.arguments = Some(
        serde_json::json!({"path": "a.txt", "old_string": "beta", "new_string": "gamma"})
            .as_object()
            .cloned()
            .unwrap(),
    );
    let result = client.call_tool(params).await.unwrap();
    let meta = serde_json::to_value(&result).unwrap()["_meta"]["cairn/edits"].clone();
    assert_eq!(meta[0]["applied"], true, "{meta}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "alpha\ngamma\n"
    );

    client.cancel().await.unwrap();
    running.await.unwrap();
}
