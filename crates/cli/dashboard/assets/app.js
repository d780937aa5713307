/*
 * pagent dashboard: the page's script (embedded in the binary).
 *
 * It asks the API once a second (GET /api/loops and /api/teams, or /api/loops/<id> on a
 * loop's page) and updates the page in place: each loop's card is made once and its fields rewritten,
 * so a button is never replaced under a click. Every text that came from a project or an
 * agent is put in a text node (textContent), never parsed as markup; charts are SVG built
 * from numbers. The token comes from the page's own address and goes back in the
 * X-Pagent-Token header, which is how the API knows the caller is this page.
 */
"use strict";

const TOKEN = new URLSearchParams(location.search).get("token") || "";
const POLL_MS = 1000;
const main = document.getElementById("main");
const cards = new Map();
let view = null;
let timer = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

async function api(path, method) {
  const response = await fetch(path, {
    method: method || "GET",
    headers: { "X-Pagent-Token": TOKEN },
    cache: "no-store",
    credentials: "omit",
  });
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  return response.json();
}

function live(ok) {
  const dot = document.getElementById("live");
  dot.className = ok ? "live on" : "live off";
  dot.textContent = ok ? "live" : "not answering";
}

let toastTimer = null;
function toast(text) {
  const box = document.getElementById("toast");
  box.textContent = text;
  box.classList.add("show");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => box.classList.remove("show"), 6000);
}

const ORIGIN = { session: "Claude Code session", loop: "pagent loop", parallel: "pagent parallel" };
const STATUS = { active: "active", paused: "paused", waiting: "usage limit", complete: "complete",
  cancelled: "cancelled", gave_up: "gave up", not_yours: "not yours", unreadable: "unreadable" };
const RUNNING = ["active", "paused", "waiting"];

/* One loop's card: made once, then `update` rewrites its fields. */
function makeCard(id, linked) {
  const f = {};
  const field = (tag, name, cls) => (f[name] = el(tag, { class: cls || "", "data-field": name }));
  const stat = (label, name, bar) => {
    const box = el("div", {}, el("dt", { text: label }), field("dd", name));
    if (bar) box.append(el("div", { class: "bar" }, (f[name + "Bar"] = el("i"))));
    return box;
  };
  const button = (action, label, cls) => {
    const b = el("button", { class: cls || "", "data-action": action, type: "button", text: label });
    b.addEventListener("click", () => act(id, action, b));
    return (f[action] = b);
  };
  const name = linked ? el("a", { class: "name", href: `#/loop/${id}`, "data-field": "name" })
    : el("span", { class: "name", "data-field": "name" });
  f.name = name;
  const root = el("article", { class: "loop", "data-loop": id },
    el("div", { class: "head" }, field("span", "status", "pill"), name, field("span", "kind", "kind"),
      el("span", { class: "spacer" }),
      el("div", { class: "actions" }, button("pause", "Pause"), button("resume", "Resume", "primary"),
        button("cancel", "Cancel", "danger"))),
    field("p", "title", "title"),
    (f.stats = el("dl", { class: "stats" }, stat("Stage", "stage", true), stat("Iteration", "iteration", true),
      stat("Elapsed", "elapsed"), stat("Waiting", "waiting"), stat("Tokens", "tokens"), stat("Cost", "cost"),
      stat("Budget left", "budget"))),
    (f.feedbackBox = el("p", { class: "note" }, el("b", { text: "Last feedback" }), field("span", "feedback"))),
    (f.failureBox = el("p", { class: "note failed" }, el("b", { text: "Last failed run" }), field("span", "failure"))),
    (f.reviewBox = el("p", { class: "note" }, el("b", { text: "Review" }), field("span", "review"))),
    field("p", "result", "result"),
    el("div", { class: "foot" }, field("span", "project", "path mono"),
      linked ? el("a", { href: `#/loop/${id}`, text: "Details →" }) : null));
  f.result.hidden = true;
  f.waiting.parentNode.title = "Since the loop's last step, or since it was paused";
  return { root, f, id, full: !linked };
}

function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

function update(card, row) {
  const f = card.f;
  const g = row; // the row's figures are flattened into it
  card.root.className = `loop s-${row.status}`;
  setText(f.status, STATUS[row.status] || row.status);
  setText(f.name, row.name);
  f.name.title = row.project;
  setText(f.project, row.project);
  const mine = g.kind !== undefined;
  f.stats.hidden = !mine;
  if (!mine) {
    setText(f.kind, ORIGIN[row.origin] || row.origin);
    setText(f.title, row.problem || "A state not set up by you for this project: pagent ignores it.");
    f.feedbackBox.hidden = f.reviewBox.hidden = f.failureBox.hidden = true;
    for (const a of ["pause", "resume", "cancel"]) f[a].hidden = true;
    return;
  }
  const shape = g.kind === "ralph" ? "ralph loop" : `pipeline ${g.workflow}`;
  const contained = g.contained ? ", contained" : "";
  setText(f.kind, `${shape} · ${ORIGIN[row.origin] || row.origin}${contained}`);
  setText(f.title, g.title);
  setText(f.stage, `${g.stage_number} of ${g.stages} · ${g.stage}`);
  f.stageBar.style.width = `${Math.min(100, (100 * g.stage_number) / Math.max(1, g.stages))}%`;
  setText(f.iteration, `${g.iteration} of ${g.max_iterations}`);
  f.iterationBar.style.width = `${Math.min(100, (100 * g.iteration) / Math.max(1, g.max_iterations))}%`;
  setText(f.elapsed, g.elapsed_text);
  setText(f.waiting, g.paused_because ? `paused ${g.waiting_text}` : g.waiting_text || "—");
  setText(f.tokens, g.tokens ? g.tokens_text : "—");
  setText(f.cost, g.cost_text || "—");
  setText(f.budget, g.budget_left || "no budget");
  f.budget.title = g.budget_left || "";
  // A wait for the agent's usage limit says how long, why, and what then (and what the
  // user must do for it, where nothing goes on by itself).
  const limit = g.limit_wait && !g.paused_because
    ? `Waiting for a usage limit to reset: ${g.limit_wait}${g.limit_then ? `. Then: ${g.limit_then}.` : ""}` : null;
  const feedback = g.end_reason ? `Ended: ${g.end_reason}` : g.paused_because
    ? `Paused because ${g.paused_because}. ${g.go_on || ""}`.trim() : limit || g.last_feedback;
  f.feedbackBox.hidden = !feedback;
  f.feedbackBox.firstChild.textContent = g.end_reason || g.paused_because || limit ? "Now" : "Last feedback";
  setText(f.feedback, feedback || "");
  f.failureBox.hidden = !g.last_failure || !!g.end_reason;
  setText(f.failure, g.last_failure || "");
  f.reviewBox.hidden = !g.review;
  if (g.review) {
    // The list says what the reviewer found first; a loop's page, all of it.
    f.reviewBox.className = `note ${g.review.met ? "met" : "unmet"}`;
    setText(f.review, card.full && g.review.detail ? `${g.review.summary} — ${g.review.detail}` : g.review.summary);
    f.review.title = g.review.detail;
  }
  for (const a of ["pause", "resume", "cancel"]) {
    const shown = g.actions.includes(a);
    if (!shown && f[a].classList.contains("confirm")) disarm(f[a]);
    f[a].hidden = !shown;
  }
}

function disarm(button) {
  button.classList.remove("confirm");
  button.textContent = "Cancel";
  clearTimeout(button.armed);
}

// A lever's request, or null while a cancel waits for its second click: cancelling takes
// one, so that a loop's or a team's work is not undone by a slip.
async function send(action, button, path, what) {
  if (action === "cancel" && !button.classList.contains("confirm")) {
    button.classList.add("confirm");
    button.textContent = "Confirm cancel";
    button.armed = setTimeout(() => disarm(button), 4000);
    return null;
  }
  if (action === "cancel") disarm(button);
  button.disabled = true;
  let answer;
  try {
    const done = await api(path, "POST");
    answer = { ok: done.ok, text: done.message };
  } catch (err) {
    answer = { ok: false, text: `Could not ${action} ${what}: ${err.message}` };
  }
  button.disabled = false;
  return answer;
}

async function act(id, action, button) {
  const answer = await send(action, button, `/api/loops/${id}/${action}`, "the loop");
  if (!answer) return;
  const { ok, text } = answer;
  for (const card of [cards.get(id), detailCard && detailCard.id === id ? detailCard : null]) {
    if (!card) continue;
    setText(card.f.result, text);
    card.f.result.className = ok ? "result" : "result bad";
    card.f.result.hidden = false;
  }
  toast(text);
  refresh();
}

function renderList(data, teams) {
  const rows = data.loops;
  const active = rows.filter((r) => RUNNING.includes(r.status)).length;
  const teamsSaid = teams ? ` · ${teams} team${teams === 1 ? "" : "s"}` : "";
  setText(document.getElementById("summary"),
    `${rows.length} loop${rows.length === 1 ? "" : "s"} · ${active} active${teamsSaid}`);
  let list = main.querySelector(".list.loops");
  if (!list) {
    main.replaceChildren();
    list = el("div", { class: "list loops" });
    main.append(list);
  }
  const seen = new Set();
  rows.forEach((row, i) => {
    seen.add(row.id);
    let card = cards.get(row.id);
    if (!card) {
      card = makeCard(row.id, true);
      cards.set(row.id, card);
    }
    update(card, row);
    if (list.children[i] !== card.root) list.insertBefore(card.root, list.children[i] || null);
  });
  for (const [id, card] of cards) {
    if (!seen.has(id)) {
      card.root.remove();
      cards.delete(id);
    }
  }
  let empty = main.querySelector(".empty");
  if (!rows.length && !empty) {
    empty = el("p", { class: "empty" }, "No loops on this machine yet. Start one with ",
      el("code", { text: "/pagent:ralph" }), ", ", el("code", { text: "pagent loop" }), " or ",
      el("code", { text: "pagent parallel" }), "; it shows up here.");
    list.after(empty);
  } else if (rows.length && empty) {
    empty.remove();
  }
}


/*
 * The teams this machine knows (`pagent team`), below the loops: what the dashboard last
 * fetched from each team's remote (it fetches in the background; the page never waits
 * for a remote), every story and every worker in the words `pagent team status` uses.
 */
const teamCards = new Map();
const CONTROL = { running: "running", paused: "paused", cancelled: "cancelled", done: "done" };

function makeTeamCard(id) {
  const f = {};
  const field = (tag, name, cls) => (f[name] = el(tag, { class: cls || "", "data-field": name }));
  const button = (action, label, cls) => {
    const b = el("button", { class: cls || "", "data-action": action, type: "button", text: label });
    b.addEventListener("click", () => teamAct(id, action, b));
    return (f[action] = b);
  };
  const root = el("article", { class: "loop team", "data-team": id },
    el("div", { class: "head" }, field("span", "control", "pill"), field("span", "name", "name"),
      field("span", "kind", "kind"), el("span", { class: "spacer" }),
      el("div", { class: "actions" }, button("pause", "Pause"), button("resume", "Resume", "primary"),
        button("cancel", "Cancel", "danger"))),
    field("div", "headline", "title"),
    field("p", "seen", "note"),
    el("table", { class: "stages team-stories" }, (f.stories = el("tbody", { "data-field": "stories" }))),
    field("div", "workers", "workers"),
    field("p", "result", "result"));
  f.result.hidden = true;
  return { root, f, id };
}

function updateTeam(card, team) {
  const f = card.f;
  const control = team.control || "unknown";
  card.root.className = `loop team c-${control}`;
  setText(f.control, team.report ? CONTROL[control] || control : "not seen yet");
  setText(f.name, team.team);
  setText(f.kind, `team · ${team.url}`);
  f.headline.replaceChildren(...(team.headline || []).slice(1).map((line) => el("div", { text: line.trim() })));
  setText(f.seen, team.looked);
  f.seen.className = team.error ? "note failed" : "note";
  const stories = (team.stories || []).map((s) => el("tr", { "data-story": s.name },
    el("td", { class: "st" }, el("span", { class: `tag ${s.state}`, text: s.state.replace("_", " ") })),
    el("td", { class: "nm" }, el("b", { text: s.name })),
    el("td", { class: "prog", "data-field": "said", text: s.said })));
  f.stories.replaceChildren(...stories);
  const workers = team.workers || [];
  const lines = workers.length ? workers.map((w) => el("div", { "data-worker": w.worker, text: w.said }))
    : [el("div", { text: team.no_worker })];
  if (team.ignored) lines.push(el("div", { class: "muted", text: team.ignored }));
  f.workers.replaceChildren(el("b", { text: "Workers" }), ...lines);
  f.workers.hidden = !team.report;
  const actions = team.actions || [];
  for (const a of ["pause", "resume", "cancel"]) {
    const shown = actions.includes(a);
    if (!shown && f[a].classList.contains("confirm")) disarm(f[a]);
    f[a].hidden = !shown;
  }
}

async function teamAct(id, action, button) {
  const answer = await send(action, button, `/api/teams/${id}/${action}`, "the team");
  if (!answer) return;
  const { ok, text } = answer;
  const card = teamCards.get(id);
  if (card) {
    setText(card.f.result, text);
    card.f.result.className = ok ? "result" : "result bad";
    card.f.result.hidden = false;
  }
  toast(text);
  refresh();
}

function renderTeams(data) {
  let box = main.querySelector(".teams");
  if (!box) {
    box = el("div", { class: "list teams" });
    main.append(box);
  }
  const seen = new Set();
  data.teams.forEach((team, i) => {
    seen.add(team.id);
    let card = teamCards.get(team.id);
    if (!card) {
      card = makeTeamCard(team.id);
      teamCards.set(team.id, card);
    }
    updateTeam(card, team);
    if (box.children[i] !== card.root) box.insertBefore(card.root, box.children[i] || null);
  });
  for (const [id, card] of teamCards) {
    if (!seen.has(id)) {
      card.root.remove();
      teamCards.delete(id);
    }
  }
  return data.teams.length;
}

let detailCard = null;
let detailParts = null;

function renderDetail(id, data) {
  if (!detailCard || detailCard.id !== id) {
    detailCard = makeCard(id, false);
    const panel = (title, ...body) => el("section", { class: "panel" }, el("h2", { text: title }), ...body);
    detailParts = {
      stages: el("table", { class: "stages" }),
      charts: el("div", { class: "charts" }),
      timeline: el("ol", { class: "timeline", "data-field": "timeline" }),
      outFile: el("p", { class: "outfile mono" }),
      output: el("pre", { class: "output", "data-field": "output" }),
    };
    detailParts.outPanel = panel("Agent output (live)", detailParts.outFile, detailParts.output);
    main.replaceChildren(el("a", { class: "back", href: "#/", text: "← All loops" }), detailCard.root,
      el("div", { class: "grid" },
        el("div", {}, panel("Stages", detailParts.stages), panel("Over time", detailParts.charts)),
        el("div", {}, panel("Timeline", detailParts.timeline), detailParts.outPanel)));
  }
  update(detailCard, data.row);
  setText(document.getElementById("summary"), data.row.name);
  renderStages(data);
  renderCharts(data.points || []);
  renderTimeline(data.timeline || []);
  const out = data.output;
  detailParts.outPanel.hidden = !out;
  if (out) {
    setText(detailParts.outFile, out.file);
    const text = out.lines.join("\n");
    const pre = detailParts.output;
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
    setText(pre, text || "(nothing yet)");
    if (atEnd) pre.scrollTop = pre.scrollHeight;
  }
}

function renderStages(data) {
  const stages = (data.report && data.report.stages) || [];
  const rows = stages.map((s, i) => el("tr", {},
    el("td", { class: "st" }, el("span", { class: `tag ${s.state}`, text: s.state.replace("_", " ") })),
    el("td", { class: "nm" }, el("b", { text: s.name }),
      el("span", { class: "cond", text: (data.conditions || [])[i] || "" })),
    el("td", { class: "st", text: s.iterations ? `${s.iterations} of ${s.max_iterations}` : "" }),
    el("td", { class: "prog", text: `${s.met ? "✓ " : ""}${s.progress}` })));
  detailParts.stages.replaceChildren(...rows);
}

const SVG = "http://www.w3.org/2000/svg";
function chart(label, points, value, show) {
  const w = 300, h = 64;
  // Over time up to now; when the points are closer than a second apart, evenly.
  const t0 = points[0].t, t1 = Math.max(points[points.length - 1].t, Date.now() / 1000);
  const even = t1 - t0 < points.length;
  const x = (p, i) => (even ? (i / points.length) * w : ((p.t - t0) / (t1 - t0)) * w);
  const top = Math.max(1, ...points.map(value));
  const xy = points.map((p, i) => [x(p, i), h - 3 - (value(p) / top) * (h - 8)]);
  const line = xy.map(([x, y], i) => (i ? `H${x.toFixed(1)}V${y.toFixed(1)}` : `M${x.toFixed(1)},${y.toFixed(1)}`)).join("");
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `${label} over time`);
  const area = document.createElementNS(SVG, "path");
  area.setAttribute("class", "area");
  area.setAttribute("d", `${line}H${w}V${h}H0Z`);
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("class", "line");
  path.setAttribute("d", `${line}H${w}`);
  svg.append(area, path);
  return el("div", { class: "chart" },
    el("div", { class: "label" }, el("span", { text: label }), el("b", { text: show(value(points[points.length - 1])) })), svg);
}

function compact(n) {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : `${n}`;
}

function renderCharts(points) {
  if (!points.length) return detailParts.charts.replaceChildren();
  detailParts.charts.replaceChildren(
    chart("Iterations ended", points, (p) => p.iterations, (v) => `${v}`),
    chart("Tokens", points, (p) => p.tokens, compact),
    chart("Cost", points, (p) => p.cost_microusd, (v) => `$${(v / 1e6).toFixed(2)}`));
}

function renderTimeline(events) {
  const items = events.map((e) => el("li", {},
    el("time", { text: e.ts.slice(11, 19), title: e.ts }),
    el("span", { class: `act a-${e.action}`, text: e.words }),
    el("span", { class: "what" },
      e.stage ? el("span", { class: "where", text: e.iteration ? `${e.stage} #${e.iteration}` : e.stage }) : null,
      e.detail)));
  detailParts.timeline.replaceChildren(...items);
}

async function refresh() {
  clearTimeout(timer);
  const here = view;
  try {
    if (here.id) renderDetail(here.id, await api(`/api/loops/${here.id}`));
    else {
      const [loops, teams] = await Promise.all([api("/api/loops"), api("/api/teams")]);
      if (view !== here) return;
      renderList(loops, teams.teams.length);
      renderTeams(teams);
    }
    live(true);
  } catch (err) {
    live(false);
    if (here.id && String(err.message).startsWith("404")) location.hash = "#/";
  }
  if (view === here) timer = setTimeout(refresh, POLL_MS);
}

function route() {
  const match = /^#\/loop\/([0-9a-f]{32})$/.exec(location.hash);
  view = { id: match ? match[1] : null };
  cards.clear();
  teamCards.clear();
  detailCard = null;
  main.replaceChildren(el("p", { class: "empty", text: "Loading…" }));
  refresh();
}

window.addEventListener("hashchange", route);
route();
