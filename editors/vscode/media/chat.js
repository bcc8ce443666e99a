// The chat view's script: renders what the extension sends and posts the user's actions back.
// The HTML comes from src/render.ts in the extension host; the model's text is escaped there.
(function () {
  const vscode = acquireVsCodeApi();
  const log = document.getElementById("log");
  const input = document.getElementById("input");
  const agent = document.getElementById("agent");
  const send = document.getElementById("send");
  const stop = document.getElementById("stop");
  const sessions = document.getElementById("sessions");
  const saved = vscode.getState() || {};
  if (saved.draft) input.value = saved.draft;
  if (saved.agent) agent.checked = true;

  function remember() {
    vscode.setState({ draft: input.value, agent: agent.checked });
  }

  function submit() {
    const text = input.value.trim();
    if (!text) return;
    vscode.postMessage({ type: "send", text, mode: agent.checked ? "agent" : "chat" });
    input.value = "";
    remember();
  }

  window.addEventListener("message", (event) => {
    const m = event.data;
    if (m.type === "render") {
      const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 30;
      // Keep the tool blocks the user opened or closed as they were.
      const open = new Map();
      log.querySelectorAll("details[data-call]").forEach((d) => open.set(d.dataset.call, d.open));
      log.innerHTML = m.html;
      log.querySelectorAll("details[data-call]").forEach((d) => {
        // A block waiting for approval comes open from the extension; otherwise as the user left it.
        if (open.has(d.dataset.call)) d.open = open.get(d.dataset.call) || d.hasAttribute("open");
      });
      if (atBottom) log.scrollTop = log.scrollHeight;
      send.disabled = m.running;
      stop.disabled = !m.running;
    } else if (m.type === "sessions") {
      sessions.innerHTML = m.html;
    } else if (m.type === "focus") {
      input.focus();
    }
  });

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button || button.disabled) return;
    const action = button.dataset.action;
    if (action === "send") return submit();
    vscode.postMessage({
      type: action,
      approvalId: button.dataset.approval,
      decision: button.dataset.decision,
      uri: button.dataset.uri,
    });
    if (action === "approve") {
      button.closest(".approval").querySelectorAll("button").forEach((b) => (b.disabled = true));
    }
  });

  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      submit();
    }
  });
  input.addEventListener("input", remember);
  agent.addEventListener("change", remember);
  sessions.addEventListener("change", () => {
    if (sessions.value) vscode.postMessage({ type: "openSession", sessionId: sessions.value });
  });
  vscode.postMessage({ type: "ready" });
})();
