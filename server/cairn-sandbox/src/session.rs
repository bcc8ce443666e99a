//! A persistent Python session: one container per chat session, with one Python process whose
//! globals last from call to call, under the same limits as a one-shot run.
//!
//! The process reads one JSON request per line on its stdin and answers each with one line
//! that starts with a record separator (`\x1e`): the JSON of what the code printed. Code runs
//! with stdout and stderr redirected; what reaches the real descriptors directly (a subprocess)
//! is returned too.

use std::time::{Duration, Instant};

use bollard::container::LogOutput;
use bollard::exec::{StartExecOptions, StartExecResults};
use bollard::models::ExecConfig;
use futures::StreamExt;
use futures::stream::BoxStream;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::engine::{Engine, Limits};
use crate::error::SandboxError;
use crate::exec::{Ending, RunReport};

/// The Python program that keeps the session's state.
const DRIVER: &str = r#"
import ast, contextlib, io, json, sys, traceback
sys.path.insert(0, "/tmp/.site")
g = {"__name__": "__main__"}
CAP = int(sys.argv[1])
for line in sys.stdin:
    req = json.loads(line)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            tree = ast.parse(req["code"], "<cell>", "exec")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, "<cell>", "exec"), g)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), g)
                if value is not None:
                    print(repr(value))
        except SystemExit:
            pass
        except BaseException:
            traceback.print_exc()
    o, e = out.getvalue(), err.getvalue()
    sys.__stdout__.write("\x1e" + json.dumps({"stdout": o[:CAP], "stderr": e[:CAP], "cut": len(o) + len(e) > CAP}) + "\n")
    sys.__stdout__.flush()
"#;

struct Pipe {
    output: BoxStream<'static, Result<LogOutput, bollard::errors::Error>>,
    input: std::pin::Pin<Box<dyn AsyncWrite + Send>>,
}

/// One session's container and its Python process.
pub struct Session {
    container: String,
    pipe: Mutex<Pipe>,
    pub(crate) started: Instant,
    pub(crate) image: String,
}

impl Session {
    /// Start the Python process in a started container.
    pub async fn start(
        engine: &Engine,
        container: String,
        image: String,
        limits: &Limits,
    ) -> Result<Session, SandboxError> {
        let config = ExecConfig {
            attach_stdin: Some(true),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            cmd: Some(vec![
                "python3".into(),
                "-u".into(),
                "-c".into(),
                DRIVER.into(),
                limits.output_max_bytes.to_string(),
            ]),
            working_dir: Some("/tmp".into()),
            ..Default::default()
        };
        let docker = engine.docker();
        let exec_id = docker.create_exec(&container, config).await?.id;
        let options = StartExecOptions {
            detach: false,
            tty: false,
            output_capacity: Some(64 * 1024),
        };
        let StartExecResults::Attached { output, input } =
            docker.start_exec(&exec_id, Some(options)).await?
        else {
            return Err(SandboxError::Engine(
                "the engine did not attach to the session".into(),
            ));
        };
        Ok(Session {
            container,
            pipe: Mutex::new(Pipe {
                output: output.boxed(),
                input,
            }),
            started: Instant::now(),
            image,
        })
    }

    pub fn container(&self) -> &str {
        &self.container
    }

    /// Run one cell. `Err` only for engine failures; a timeout or a dead process is a report
    /// whose ending says so (the caller then discards the session).
    pub async fn run(
        &self,
        code: &str,
        limits: &Limits,
        cancel: &CancellationToken,
    ) -> Result<RunReport, SandboxError> {
        let started = Instant::now();
        let mut pipe = self.pipe.lock().await;
        let request = serde_json::json!({ "code": code }).to_string() + "\n";
        if let Err(e) = pipe.input.write_all(request.as_bytes()).await {
            return Err(SandboxError::Engine(format!(
                "the session's Python process is gone ({e})"
            )));
        }
        let _ = pipe.input.flush().await;
        let mut direct_out: Vec<u8> = Vec::new();
        let mut direct_err: Vec<u8> = Vec::new();
        let deadline = tokio::time::sleep(limits.timeout);
        tokio::pin!(deadline);
        let cap = limits.output_max_bytes;
        let ending = loop {
            tokio::select! {
                _ = cancel.cancelled() => break Err(Ending::Cancelled),
                _ = &mut deadline => break Err(Ending::Timeout),
                frame = pipe.output.next() => match frame {
                    Some(Ok(LogOutput::StdOut { message })) => {
                        direct_out.extend_from_slice(&message);
                        if let Some(answer) = take_answer(&mut direct_out) {
                            break Ok(answer);
                        }
                        // Direct output (a subprocess) is kept to the cap; the answer line is
                        // searched for in what arrives after.
                        if direct_out.len() > 2 * cap {
                            let keep = direct_out.split_off(direct_out.len() - cap);
                            direct_out = keep;
                        }
                    }
                    Some(Ok(LogOutput::StdErr { message })) => {
                        if direct_err.len() < cap {
                            direct_err.extend_from_slice(&message);
                        }
                    }
                    Some(Ok(_)) => {}
                    // The process died: out of memory, or killed.
                    Some(Err(_)) | None => break Err(Ending::Exited(-1)),
                },
            }
        };
        let elapsed = started.elapsed();
        match ending {
            Ok(answer) => {
                let mut stdout = String::from_utf8_lossy(&direct_out).into_owned();
                stdout.push_str(answer["stdout"].as_str().unwrap_or_default());
                let mut stderr = String::from_utf8_lossy(&direct_err).into_owned();
                stderr.push_str(answer["stderr"].as_str().unwrap_or_default());
                Ok(RunReport {
                    ending: Ending::Exited(0),
                    stdout,
                    stderr,
                    truncated: answer["cut"].as_bool().unwrap_or(false),
                    binary: false,
                    elapsed,
                    applied: None,
                    not_applied: None,
                })
            }
            Err(ending) => Ok(RunReport {
                ending,
                stdout: String::from_utf8_lossy(&direct_out).into_owned(),
                stderr: String::from_utf8_lossy(&direct_err).into_owned(),
                truncated: false,
                binary: false,
                elapsed: elapsed.max(Duration::from_millis(1)),
                applied: None,
                not_applied: None,
            }),
        }
    }
}

/// The answer line, if it arrived: removed from `buf` with everything before it.
fn take_answer(buf: &mut Vec<u8>) -> Option<serde_json::Value> {
    let start = buf.iter().rposition(|b| *b == 0x1e)?;
    let end = buf[start..].iter().position(|b| *b == b'\n')? + start;
    let answer = serde_json::from_slice(&buf[start + 1..end]).ok()?;
    buf.truncate(start);
    Some(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_line_is_found_after_direct_output() {
        let mut buf =
            b"from a subprocess\n\x1e{\"stdout\":\"1\\n\",\"stderr\":\"\",\"cut\":false}\n"
                .to_vec();
        let answer = take_answer(&mut buf).unwrap_or_default();
        assert_eq!(answer["stdout"], "1\n");
        assert_eq!(buf, b"from a subprocess\n");
        let mut half = b"\x1e{\"stdout\":".to_vec();
        assert!(take_answer(&mut half).is_none());
    }
}
