// debatecode dashboard: the session list's refresh, a session's live view, and its buttons.
//
// Everything shown here was written by a model or a job, so it only ever enters the page as text
// (textContent, dataset, attribute values), never as HTML. The one piece of markup the script inserts is
// the transcript, which the server renders with every value escaped; it is parsed with DOMParser (which
// runs no script) and the page's Content-Security-Policy forbids inline scripts anyway.
// The live view applies each event with the same rules as server/session_view.py: keep the two in step.
"use strict";

(() => {
  const root = document.body.dataset.root || "";
  const SNIPPET_CHARS = 240;
  const NOT_AGENTS = ["human", "tool"];

  // -- helpers -------------------------------------------------------------------------------

  function el(tag, options = {}, ...children) {
    const node = document.createElement(tag);
    if (options.className) node.className = options.className;
    for (const [key, value] of Object.entries(options.data || {})) node.dataset[key] = String(value);
    for (const [key, value] of Object.entries(options.attrs || {})) node.setAttribute(key, String(value));
    for (const child of children) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function formatDuration(seconds) {
    if (seconds === null || seconds === undefined || seconds < 0 || Number.isNaN(seconds)) return "-";
    if (seconds < 60) return `${seconds.toFixed(1)} s`;
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60) return `${minutes} m ${String(Math.floor(seconds) % 60).padStart(2, "0")} s`;
    return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} m`;
  }

  function formatTokens(count) {
    return count === null || count === undefined ? "-" : Number(count).toLocaleString("en-US");
  }

  // Times are UTC; one written without a zone would otherwise be read as local time.
  function parseWhen(iso) {
    const text = String(iso || "");
    return new Date(/(Z|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`);
  }

  function formatWhen(iso) {
    const moment = parseWhen(iso);
    return Number.isNaN(moment.getTime()) ? "-" : `${moment.toISOString().slice(0, 19).replace("T", " ")} UTC`;
  }

  function asInt(value) {
    return Number.isInteger(value) ? value : 0;
  }

  function countTests(report) {
    if (!report || typeof report !== "object") return null;
    if (Number.isInteger(report.passed) && Number.isInteger(report.total)) return [report.passed, report.total];
    if (!Array.isArray(report.cases)) return null;
    const passed = report.cases.filter((c) => c && c.outcome === "passed").length;
    return [passed, report.cases.length];
  }

  function replySnippet(content) {
    const collapse = (text) => text.replace(/\s+/g, " ").trim();
    const prose = collapse(content.replace(/```[\s\S]*?(```|$)/g, " ")) || collapse(content.replace(/```\w*/g, " "));
    return prose.length <= SNIPPET_CHARS ? prose : `${prose.slice(0, SNIPPET_CHARS - 1).trimEnd()}…`;
  }

  function byData(container, key, value) {
    return Array.from(container.children).find((child) => child.dataset[key] === String(value)) || null;
  }

  // What the user has typed into the text fields of a part about to be redrawn, by field id, and which field had
  // the focus. An event's redraw (a new round, say) must not wipe a half-written answer such as an escalation's
  // guidance: the choice button would then send the fresh, empty field.
  function typedFields(container) {
    const values = new Map();
    for (const field of container.querySelectorAll("textarea[id], input[id]")) {
      if (field.type === "textarea" || field.type === "text" || field.type === "search") {
        if (field.value !== field.defaultValue) values.set(field.id, field.value);
      }
    }
    const active = document.activeElement;
    const focused = active && container.contains(active) && active.id ? active.id : null;
    return { values, focused };
  }

  function restoreTyped(container, typed) {
    for (const [id, value] of typed.values) {
      const field = container.querySelector(`#${CSS.escape(id)}`);
      if (field) field.value = value;
    }
    if (typed.focused) {
      const field = container.querySelector(`#${CSS.escape(typed.focused)}`);
      if (field) field.focus();
    }
  }

  async function send(method, path, body) {
    const init = { method, headers: { Accept: "application/json" }, credentials: "same-origin" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(root + path, init);
    } catch (error) {
      return { ok: false, status: 0, data: { message: `the server did not answer: ${error}` } };
    }
    let data = null;
    try {
      data = await response.json();
    } catch (_error) {
      data = null;
    }
    return { ok: response.ok, status: response.status, data };
  }

  function problemOf(result) {
    if (result.data && typeof result.data.message === "string") return result.data.message;
    return `the server answered ${result.status}`;
  }

  // -- the session list ------------------------------------------------------------------------

  function sessionRow(s) {
    const link = el("a", { attrs: { href: `${root}/sessions/${encodeURIComponent(s.id)}` } }, s.title || s.id);
    const status = el("td", {}, el("span", { className: `status status-${s.status}` }, s.status));
    if (s.live) status.append(" ", el("span", { className: "badge live" }, "live"));
    const tests = s.tests_total === null || s.tests_total === undefined ? "-" : `${s.tests_passed}/${s.tests_total}`;
    const kind = String(s.kind || "");
    return el(
      "tr",
      { data: { testid: "session-row", session: s.id } },
      el("td", {}, link, el("div", { className: "muted mono" }, s.id)),
      status,
      el("td", {}, el("span", { className: `kind kind-${kind}`, data: { testid: "session-kind" } }, kind)),
      el("td", { className: "mono" }, s.model),
      el("td", {}, tests),
      el(
        "td",
        { className: "num", data: { testid: "session-tokens" } },
        formatTokens(asInt(s.prompt_tokens) + asInt(s.completion_tokens)),
      ),
      el("td", { className: "num", data: { testid: "session-duration" } }, formatDuration(s.duration_s)),
      el("td", {}, formatWhen(s.created_at)),
    );
  }

  function followSessionList() {
    const rows = document.getElementById("session-rows");
    const state = document.getElementById("refresh-state");
    async function refresh() {
      if (document.hidden) return;
      const query = new URLSearchParams({ limit: "200" });
      const shown = new URLSearchParams(window.location.search);
      for (const key of ["kind", "status", "q"]) {
        if (shown.get(key)) query.set(key, shown.get(key));
      }
      const result = await send("GET", `/v1/sessions?${query}`);
      if (!result.ok || !Array.isArray(result.data)) {
        state.textContent = `(refresh failed: ${problemOf(result)})`;
        return;
      }
      state.textContent = "";
      if (result.data.length === 0) return;
      rows.replaceChildren(...result.data.map(sessionRow));
    }
    setInterval(refresh, 3000);
  }

  // -- a session's live view ------------------------------------------------------------------

  class SessionPage {
    constructor(section) {
      this.section = section;
      this.id = section.dataset.session;
      this.base = `/v1/sessions/${encodeURIComponent(this.id)}`;
      this.created = parseWhen(section.dataset.created);
      this.cards = document.getElementById("agent-cards");
      this.cardTemplate = document.getElementById("agent-card-template");
      this.timeline = document.getElementById("timeline");
      this.candidates = document.querySelector("#candidates tbody");
      this.rounds = document.querySelector("#rounds tbody");
      this.votes = document.getElementById("votes");
      this.decisions = document.getElementById("decisions");
      this.message = document.getElementById("action-message");
      this.checkpointPanel = document.getElementById("checkpoint-panel");
      this.gatePanel = document.getElementById("gate-panel");
      this.cancelButton = document.getElementById("cancel-button");
      this.tokens = null;
      this.wire();
      if (section.dataset.live === "true") this.follow(Number(section.dataset.after || 0));
    }

    // The buttons ------------------------------------------------------------------------------

    wire() {
      this.wireDesign();
      this.wireCompare();
      for (const button of this.checkpointPanel.querySelectorAll("button[data-action]")) {
        button.addEventListener("click", () => this.answerCheckpoint(button.dataset.action));
      }
      for (const button of this.gatePanel.querySelectorAll("button[data-decision]")) {
        button.addEventListener("click", () => this.decideGate(button.dataset.decision));
      }
      this.cancelButton.addEventListener("click", () => this.cancel());
    }

    say(text, isError = false) {
      this.message.textContent = text;
      this.message.classList.toggle("error", isError);
    }

    setBusy(panel, busy) {
      for (const button of panel.querySelectorAll("button")) button.disabled = busy;
    }

    async answerCheckpoint(action) {
      const guidance = document.getElementById("checkpoint-guidance").value.trim();
      if (action === "guide" && !guidance) {
        this.say("Write the guidance first: every later prompt shows it.", true);
        return;
      }
      const body = action === "guide" ? { action, guidance } : { action };
      this.setBusy(this.checkpointPanel, true);
      // The session waits from the moment it announces the checkpoint (WebHuman.announced): a 409 means it was
      // already answered or the session ended.
      const result = await send("POST", `${this.base}/checkpoint`, body);
      this.setBusy(this.checkpointPanel, false);
      if (result.ok) {
        this.checkpointPanel.hidden = true;
        this.say(`Checkpoint after round ${result.data.round}: ${result.data.action}.`);
      } else {
        this.say(problemOf(result), true);
      }
    }

    async decideGate(decision) {
      const body = { comment: document.getElementById("gate-comment").value };
      if (this.gatePanel.dataset.gate) body.gate_id = this.gatePanel.dataset.gate;
      this.setBusy(this.gatePanel, true);
      const result = await send("POST", `${this.base}/gates/${decision}`, body);
      this.setBusy(this.gatePanel, false);
      if (result.ok) {
        this.gatePanel.hidden = true;
        this.say(`The ${result.data.phase} gate is ${result.data.status}.`);
      } else {
        this.say(problemOf(result), true);
      }
    }

    async cancel() {
      if (this.cancelButton.dataset.armed !== "true") {
        this.cancelButton.dataset.armed = "true";
        this.cancelButton.textContent = "Click again to cancel";
        setTimeout(() => {
          this.cancelButton.dataset.armed = "false";
          this.cancelButton.textContent = "Cancel";
        }, 5000);
        return;
      }
      this.cancelButton.disabled = true;
      const result = await send("POST", `${this.base}/cancel`);
      this.cancelButton.disabled = false;
      this.say(result.ok ? "Cancelling: the session stops after its current step." : problemOf(result), !result.ok);
    }

    // The stream -------------------------------------------------------------------------------

    follow(after) {
      const source = new EventSource(`${root}${this.base}/events?after=${after}`);
      for (const [type, apply] of Object.entries(this.handlers())) {
        source.addEventListener(type, (message) => {
          let data;
          try {
            data = JSON.parse(message.data);
          } catch (_error) {
            return;
          }
          apply(data);
        });
      }
      source.addEventListener("end", () => {
        source.close();
        this.finish();
      });
      this.clock = setInterval(() => {
        const elapsed = (Date.now() - this.created.getTime()) / 1000;
        document.getElementById("session-time").textContent = formatDuration(elapsed);
      }, 1000);
    }

    handlers() {
      return {
        SessionStarted: (d) => (Array.isArray(d.agents) ? d.agents : []).forEach((a) => this.card(String(a))),
        PhaseStarted: (d) => {
          const step = this.step(String(d.phase || ""), asInt(d.round));
          step.className = "running";
          document.getElementById("session-phase").textContent = String(d.phase || "-");
        },
        PhaseCompleted: (d) => {
          const step = this.step(String(d.phase || ""), asInt(d.round));
          step.className = "done";
          step.querySelector(".phase-summary").textContent = String(d.summary || "");
        },
        AgentStatusChanged: (d) => {
          const card = this.card(String(d.agent_id || ""));
          this.field(card, "status", String(d.status || ""));
          card.dataset.status = String(d.status || "");
          if (d.phase) this.field(card, "phase", String(d.phase));
        },
        TurnCompleted: (d) => {
          this.turnCompleted(d.turn);
          this.reloadDesign();
        },
        TestsRun: (d) => {
          const counts = countTests(d.report);
          if (counts) this.field(this.card(String(d.agent_id || "")), "tests", `${counts[0]}/${counts[1]}`);
        },
        CodeVersionCommitted: (d) => this.versionCommitted(d.version),
        VoteCast: (d) => {
          if (!this.votes) return;
          const voter = String(d.voter || "");
          const line = el("li", { data: { voter } }, `${voter} → ${d.choice === null ? "abstained" : d.choice}`);
          const old = byData(this.votes, "voter", voter);
          if (old) old.replaceWith(line);
          else this.votes.append(line);
        },
        RoundCompleted: (d) => this.roundCompleted(d),
        CheckpointRequested: (d) => {
          // Only a session this server runs can be answered here (one run by `debatecode solve` cannot).
          if (this.section.dataset.here !== "true") return;
          document.getElementById("checkpoint-round").textContent = String(asInt(d.round));
          document.getElementById("checkpoint-summary").textContent = String(d.summary || "");
          this.checkpointPanel.hidden = false;
        },
        CheckpointDecided: (d) => {
          this.checkpointPanel.hidden = true;
          const guidance = d.guidance ? ` (${d.guidance})` : "";
          this.decided(`checkpoint after round ${asInt(d.round)}: ${d.action || ""}${guidance}`);
        },
        GateRequested: (d) => {
          document.getElementById("gate-phase").textContent = String(d.phase || "");
          document.getElementById("gate-summary").textContent = String(d.summary || "");
          this.gatePanel.dataset.gate = String(d.gate_id || "");
          this.gatePanel.hidden = false;
        },
        GateDecided: (d) => {
          this.gatePanel.hidden = true;
          const by = d.reviewer ? ` by ${d.reviewer}` : "";
          const reason = d.reason ? ` (${d.reason})` : "";
          this.decided(`${d.phase || ""} gate: ${d.decision || ""}${by}${reason}`);
        },
        Escalated: (d) => {
          this.decided(`escalated: ${d.reason || ""}`);
          this.reloadDesign();
        },
        EscalationDecided: (d) => {
          const guidance = d.guidance ? ` (${d.guidance})` : "";
          this.decided(`escalation: ${d.choice ? `option ${d.choice} chosen by ${d.decided_by}` : "nobody chose"}${guidance}`);
          this.reloadDesign();
        },
        SessionFinished: (d) => {
          this.checkpointPanel.hidden = true;
          this.gatePanel.hidden = true;
          this.cancelButton.hidden = true;
          this.setStatus(String(d.status || ""));
          const outcome = d.outcome && typeof d.outcome === "object" ? d.outcome : {};
          if (Number.isInteger(outcome.passed) && Number.isInteger(outcome.total)) {
            document.getElementById("session-tests").textContent = `${outcome.passed}/${outcome.total}`;
          }
          if (outcome.winner) document.getElementById("session-leader").textContent = String(outcome.winner);
          if (d.error) {
            const error = document.getElementById("session-error");
            error.textContent = String(d.error);
            error.hidden = false;
          }
        },
      };
    }

    card(agentId) {
      if (!this.cards || !this.cardTemplate) return document.createElement("article");
      let card = byData(this.cards, "agent", agentId);
      if (!card) {
        card = this.cardTemplate.content.firstElementChild.cloneNode(true);
        card.dataset.agent = agentId;
        this.field(card, "agent", agentId);
        this.cards.append(card);
      }
      return card;
    }

    field(card, name, text) {
      const node = card.querySelector(`[data-field="${name}"]`);
      if (node) node.textContent = text;
    }

    step(phase, round) {
      let step = Array.from(this.timeline.children).find(
        (li) => li.dataset.phase === phase && li.dataset.round === String(round),
      );
      if (!step) {
        // Round 0 holds the steps before the first round and those after the last (server/session_view.py).
        const afterRounds = Array.from(this.timeline.children).some((li) => Number(li.dataset.round) > 0);
        const stage = round > 0 ? `round ${round}` : afterRounds ? "after the rounds" : "before the rounds";
        step = el(
          "li",
          { data: { testid: "phase", phase, round } },
          el("span", { className: "phase-name" }, phase),
          " ",
          el("span", { className: "muted", data: { field: "stage" } }, stage),
          el("div", { className: "phase-summary muted" }),
        );
        this.timeline.append(step);
      }
      return step;
    }

    turnCompleted(turn) {
      if (!turn || typeof turn !== "object") return;
      if (this.tokens === null) {
        const shown = document.getElementById("session-tokens").textContent.replace(/[^0-9]/g, "");
        this.tokens = Number(shown || 0);
      }
      this.tokens += asInt(turn.prompt_tokens) + asInt(turn.completion_tokens);
      document.getElementById("session-tokens").textContent = formatTokens(this.tokens);
      if (NOT_AGENTS.includes(turn.provider) || turn.agent_role === "human") return;
      const card = this.card(String(turn.agent_id || ""));
      this.field(card, "snippet", replySnippet(String(turn.content || "")));
      if (turn.phase) this.field(card, "phase", String(turn.phase));
    }

    versionCommitted(version) {
      if (!version || typeof version !== "object" || !this.candidates) return;
      const agent = String(version.agent_id || "");
      const quality = typeof version.quality_score === "number" ? version.quality_score.toFixed(2) : "-";
      const row = el(
        "tr",
        { data: { agent } },
        el("td", {}, agent),
        el("td", {}, `v${asInt(version.version_number)}`),
        el("td", {}, `${asInt(version.tests_passed)}/${asInt(version.tests_total)}`),
        el("td", {}, quality),
        el("td", { className: "mono" }, String(version.commit_sha || "-").slice(0, 10)),
      );
      const old = byData(this.candidates, "agent", agent);
      if (old) old.replaceWith(row);
      else this.candidates.append(row);
    }

    roundCompleted(d) {
      this.reloadDesign();
      if (!this.rounds) return;
      const scores = d.scores && typeof d.scores === "object" ? Object.entries(d.scores) : [];
      const text = scores.length ? scores.map(([who, score]) => `${who} ${score}`).join(", ") : "-";
      this.rounds.append(
        el(
          "tr",
          {},
          el("td", {}, String(asInt(d.round))),
          el("td", {}, d.leader ? String(d.leader) : "-"),
          el("td", {}, text),
          el("td", {}, d.stop_reason ? String(d.stop_reason) : ""),
        ),
      );
      if (d.leader) document.getElementById("session-leader").textContent = String(d.leader);
    }

    decided(line) {
      this.decisions.append(el("li", {}, line));
    }

    setStatus(status) {
      const badge = document.getElementById("session-status");
      badge.textContent = status;
      badge.className = `status status-${status}`;
    }

    async finish() {
      clearInterval(this.clock);
      this.section.dataset.live = "false";
      this.checkpointPanel.hidden = true;
      this.gatePanel.hidden = true;
      this.cancelButton.hidden = true;
      const detail = await send("GET", this.base);
      if (detail.ok && detail.data) {
        const s = detail.data;
        this.setStatus(String(s.status));
        document.getElementById("session-tokens").textContent = formatTokens(
          asInt(s.prompt_tokens) + asInt(s.completion_tokens),
        );
        document.getElementById("session-time").textContent = formatDuration(s.duration_s);
      }
      await this.reloadParts(`/sessions/${encodeURIComponent(this.id)}`, ["transcript", "code-results", "design-body"]);
    }

    // Swap the elements with these ids for the server's fresh rendering of them at `path`.
    async reloadParts(path, ids) {
      let response;
      try {
        response = await fetch(`${root}${path}`, { credentials: "same-origin" });
      } catch (_error) {
        return false;
      }
      if (!response.ok) return false;
      // Server-rendered and escaped markup (see the note at the top); DOMParser never runs scripts.
      const parsed = new DOMParser().parseFromString(await response.text(), "text/html");
      for (const id of ids) {
        const fresh = parsed.getElementById(id);
        const current = document.getElementById(id);
        if (!fresh || !current) continue;
        const imported = document.importNode(fresh, true);
        const typed = typedFields(current);
        current.replaceWith(imported);
        restoreTyped(imported, typed);
      }
      return true;
    }

    // A design debate: its rounds, chart, escalation and record, redrawn by the server as events come in.

    // Reloads are spaced by 500 ms. One asked for while another is pending or in flight is never dropped: the
    // event that asked (an escalation, say) may have come after the server drew the fragment in flight.
    reloadDesign() {
      if (!document.getElementById("design-body")) return;
      if (this.designReload) {
        this.designReloadAgain = true;
        return;
      }
      this.designReloadAgain = false;
      this.designReload = setTimeout(async () => {
        await this.reloadParts(`/sessions/${encodeURIComponent(this.id)}/design`, ["design-body"]);
        this.designReload = null;
        if (this.designReloadAgain) this.reloadDesign();
      }, 500);
    }

    wireDesign() {
      const holder = document.getElementById("design-body-holder");
      if (!holder) return;
      holder.addEventListener("click", (event) => {
        const button = event.target.closest("button[data-choice]");
        if (button) this.chooseOption(button.dataset.choice);
      });
    }

    async chooseOption(choice) {
      const panel = document.getElementById("escalation-panel");
      const guidance = (document.getElementById("escalation-guidance") || { value: "" }).value.trim();
      const body = guidance ? { choice, guidance } : { choice };
      if (panel) this.setBusy(panel, true);
      // The session waits from the moment it announces the escalation (WebHuman.announced): a 409 means it was
      // already decided or the session ended.
      const result = await send("POST", `${this.base}/escalation`, body);
      if (panel) this.setBusy(panel, false);
      if (result.ok) {
        this.say(`Escalation: option ${result.data.choice} chosen.`);
        this.reloadDesign();
      } else {
        this.say(problemOf(result), true);
      }
    }

    // A code debate: two versions side by side, fetched without leaving the page.

    wireCompare() {
      const form = document.getElementById("compare-form");
      if (!form) return;
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const query = new URLSearchParams(new FormData(form));
        await this.reloadParts(`/sessions/${encodeURIComponent(this.id)}/compare?${query}`, ["comparison"]);
      });
    }
  }

  // -- start ------------------------------------------------------------------------------

  const pageKind = document.body.dataset.page;
  if (pageKind === "sessions") followSessionList();
  if (pageKind === "session") {
    const section = document.getElementById("session");
    if (section) window.debatecodeSession = new SessionPage(section);
  }
})();
