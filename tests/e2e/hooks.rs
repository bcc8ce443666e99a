//! Pre-tool hooks fail closed, through the real binary: a hook program that times out, is killed
//! by a signal, exits 1, answers invalid JSON, is missing or is not executable stops the call.
//! The write the model asked for is allowed by the policy, so only the hook stands in its way:
//! each case checks that the file is unchanged, that the model read why, and that the editor
//! heard of the failed hook.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use cairn_test_support::{Format, Reply};
use serde_json::json;

use crate::support::{Editor, Sandbox, of_kind, tool_results};

/// How the hook program is made for one case.
enum Program {
    /// A shell script with this body, executable.
    Script(&'static str),
    /// A script with a valid body but no execute permission.
    NotExecutable,
    /// A path where nothing is.
    Missing,
}

/// Runs one turn whose only call is a `write_file` the policy allows, behind one `pre_tool`
/// hook, and checks the call was refused with a reason containing `why`.
fn refused_by_failing_hook(program: Program, why: &str) {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("write_file", json!({"path": "notes.txt", "content": "new"})),
            Reply::text("The hook stopped it."),
        ],
    );
    sb.write("notes.txt", "old\n");
    let path: PathBuf = sb.dir.path().join("home").join("guard.sh");
    match program {
        Program::Script(body) => {
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Program::NotExecutable => {
            std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        Program::Missing => assert!(!path.exists()),
    }
    sb.user_config(&format!(
        "[policy.effects]\nwrite = \"allow\"\n\n\
         [[hooks]]\nstage = \"pre_tool\"\ncommand = [\"{}\"]\ntimeout_secs = 1\n",
        path.display()
    ));
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let (run, _) = ed.chat(json!({"message": "update the notes", "mode": "agent"}));
    let events = ed.finish(&run);

    // The call did not run.
    assert_eq!(
        sb.read("notes.txt"),
        "old\n",
        "the write ran past a failed hook"
    );
    // The model read why, in the result of that call.
    let requests = sb.model.requests();
    assert_eq!(
        requests.len(),
        2,
        "the model is asked again after the refusal"
    );
    let results = tool_results(&requests[1].body);
    assert_eq!(results.len(), 1, "{results:?}");
    let expected = format!("not run: the user's hook `{}` failed (", path.display());
    assert!(results[0].contains(&expected), "{results:?}");
    assert!(results[0].contains(why), "{results:?}");
    assert!(
        results[0].ends_with("a pre-tool hook that fails stops the call"),
        "{results:?}"
    );
    // The user was told: a failed pre-tool hook event with the same reason, and no approval or
    // result event says the call went ahead.
    let hooks = of_kind(&events, "hook");
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    assert_eq!(hooks[0]["stage"], "preTool", "{hooks:?}");
    assert_eq!(hooks[0]["outcome"], "failed", "{hooks:?}");
    assert!(
        hooks[0]["message"].as_str().unwrap().contains(why),
        "{hooks:?}"
    );
    let result = of_kind(&events, "toolResult");
    assert_eq!(result.len(), 1, "{events:?}");
    assert_eq!(result[0]["isError"], true, "{result:?}");
    ed.shutdown();
}

#[test]
fn a_pre_tool_hook_that_times_out_stops_the_call() {
    // `exec` so the process the timeout kills is the one holding the pipes.
    refused_by_failing_hook(
        Program::Script("exec sleep 600"),
        "timed out after 1 s and was stopped",
    );
}

#[test]
fn a_pre_tool_hook_killed_by_a_signal_stops_the_call() {
    refused_by_failing_hook(
        Program::Script("cat > /dev/null\nkill -KILL $$"),
        "was killed by a signal",
    );
}

#[test]
fn a_pre_tool_hook_that_exits_1_stops_the_call() {
    refused_by_failing_hook(
        Program::Script("cat > /dev/null\necho 'the guard crashed' >&2\nexit 1"),
        "exited with status 1: the guard crashed",
    );
}

#[test]
fn a_pre_tool_hook_that_answers_invalid_json_stops_the_call() {
    // Exit 0 with an answer cut short: before the fix this read as "allowed".
    refused_by_failing_hook(
        Program::Script("cat > /dev/null\nprintf '{\"decision\": \"allow\"'\nexit 0"),
        "answered invalid JSON",
    );
}

#[test]
fn a_pre_tool_hook_that_answers_json_without_a_decision_stops_the_call() {
    refused_by_failing_hook(
        Program::Script("cat > /dev/null\necho '{\"reason\": \"looks fine\"}'\nexit 0"),
        "answered JSON without a `decision`",
    );
}

#[test]
fn a_missing_pre_tool_hook_stops_the_call() {
    refused_by_failing_hook(Program::Missing, "No such file or directory");
}

#[test]
fn a_pre_tool_hook_that_is_not_executable_stops_the_call() {
    refused_by_failing_hook(Program::NotExecutable, "Permission denied");
}
