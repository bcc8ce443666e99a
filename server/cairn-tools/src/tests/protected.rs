//! The paths each file tool declares are checked against the protected ones before it runs: a
//! protected path without an approval is refused, named with what the call would do to it (for
//! the agent's question), and nothing is touched; the walking tools skip such files instead.

use cairn_agent::tools::protected_of;
use cairn_workspace::{AccessRules, ExactApprovals};

use super::*;

#[tokio::test]
async fn protected_paths_are_refused_before_the_call_naming_the_operation() {
    let f = fixture(&["ws/a.txt => a\\n", "ws/.env => TOKEN=s3cret\\n"]);
    let ws = Workspace::new(vec![f.root()]).unwrap().with_access(
        |_| AccessRules::new("ada", None, None),
        ExactApprovals::new(),
    );
    let f = Fixture {
        tools: file_tools(Arc::new(ws)),
        ..f
    };
    let before = snapshot(&f.root());
    let edit = json!([{"old_string": "TOKEN", "new_string": "X"}]);
    for (name, args, expected) in [
        ("read_file", json!({"path": ".env"}), (".env", "read")),
        ("head_tail", json!({"path": ".env"}), (".env", "read")),
        (
            "read_many",
            json!({"paths": ["a.txt", ".env"]}),
            (".env", "read"),
        ),
        ("count", json!({"paths": [".env"]}), (".env", "read")),
        (
            "diff_files",
            json!({"a": "a.txt", "b": ".env"}),
            (".env", "read"),
        ),
        (
            "edit_file",
            json!({"path": ".env", "old_string": "TOKEN", "new_string": "X"}),
            (".env", "write"),
        ),
        (
            "write_file",
            json!({"path": ".env", "content": "x"}),
            (".env", "write"),
        ),
        (
            "create_file",
            json!({"path": ".env.new", "content": "x"}),
            (".env.new", "write"),
        ),
        (
            "multi_edit",
            json!({"path": ".env", "edits": edit}),
            (".env", "write"),
        ),
        (
            "insert_at_line",
            json!({"path": ".env", "line": 1, "text": "x"}),
            (".env", "write"),
        ),
        ("delete_file", json!({"path": ".env"}), (".env", "write")),
        (
            "make_directory",
            json!({"path": ".env.d"}),
            (".env.d", "write"),
        ),
        (
            "move_file",
            json!({"from": ".env", "to": "b.txt"}),
            (".env", "write"),
        ),
        (
            "move_file",
            json!({"from": "a.txt", "to": ".envrc"}),
            (".envrc", "write"),
        ),
        (
            "copy_file",
            json!({"from": ".env", "to": "b.txt"}),
            (".env", "read"),
        ),
        (
            "copy_file",
            json!({"from": "a.txt", "to": ".vscode/tasks.json"}),
            (".vscode/tasks.json", "write"),
        ),
    ] {
        let Value::Object(map) = args.clone() else {
            unreachable!()
        };
        let result = f.tools.call(name, map, ctx()).await;
        assert_eq!(result.is_error, Some(true), "{name} {args}");
        let protected: Vec<_> = protected_of(&result)
            .into_iter()
            .map(|p| (p.path, p.operation))
            .collect();
        assert_eq!(
            protected,
            [(expected.0.to_owned(), expected.1.to_owned())],
            "{name} {args}"
        );
        assert_eq!(
            snapshot(&f.root()),
            before,
            "{name} {args} changed the disk"
        );
    }
    // apply_patch names its files inside the patch: each protected one is declared with what
    // the patch does to it (read and written when changed, written when created).
    for (patch, expected) in [
        (
            "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-TOKEN=s3cret\n+TOKEN=x\n",
            vec![(".env", "read"), (".env", "write")],
        ),
        (
            "--- /dev/null\n+++ b/.envrc\n@@ -0,0 +1 @@\n+export X=1\n",
            vec![(".envrc", "write")],
        ),
    ] {
        let Value::Object(map) = json!({"patch": patch}) else {
            unreachable!()
        };
        let result = f.tools.call("apply_patch", map, ctx()).await;
        assert_eq!(result.is_error, Some(true), "{patch}");
        let protected: Vec<_> = protected_of(&result)
            .into_iter()
            .map(|p| (p.path, p.operation))
            .collect();
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(p, o)| (p.to_owned(), o.to_owned()))
            .collect();
        assert_eq!(protected, expected, "{patch}");
        assert_eq!(snapshot(&f.root()), before, "{patch} changed the disk");
    }
    // The walking tools are not refused: the walk leaves the protected file out.
    for (name, args) in [
        ("grep", json!({"pattern": "TOKEN|a"})),
        ("count", json!({"paths": ["."]})),
        ("tree", json!({"include_hidden": true})),
    ] {
        let Value::Object(map) = args.clone() else {
            unreachable!()
        };
        let result = f.tools.call(name, map, ctx()).await;
        assert!(protected_of(&result).is_empty(), "{name} {args}");
        let text = format!("{:?}", result.content);
        assert!(!text.contains("s3cret"), "{name} {args}: {text}");
    }
}
