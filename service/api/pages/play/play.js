// The play page (GET /v1/games/{id}/play): one seat plays from it. The seat token comes from the
// URL fragment (#token=…, which browsers never send) or is pasted in; it travels only in the
// Authorization header. The page shows the board (the service's own SVG, inline so that its hexes
// can be clicked), whose decision it is, and the seat's legal moves in words; clicking a hex
// narrows them to the moves there; a build is drawn on the board before it is posted; a move is
// posted with If-Match and an Idempotency-Key; the events stream keeps it all up to date; a rule
// error is shown and pointed at on the board. No build step, no outside assets.
"use strict";

(function () {
  const game = location.pathname.replace(/\/play$/, "");  // /v1/games/{id}
  const gameId = decodeURIComponent(game.split("/").pop());
  const SVG = "http://www.w3.org/2000/svg";
  const el = (id) => document.getElementById(id);
  const status = el("status");
  const board = el("board");
  const choices = el("choices");
  const log = el("log");
  let token = null;
  let seat = null;
  let view = null;
  let moves = [];
  let links = {};
  let places = {};
  let filter = null;  // {q, r}: the moves at that hex only
  let chosen = null;  // the move about to be posted
  let shown = -1;     // the version on screen
  let loading = 0;    // the latest refresh asked for; older answers are dropped
  let posting = false;
  let events = null;

  // -- the token ------------------------------------------------------------------------------

  function tokenFromFragment() {
    const fragment = new URLSearchParams(location.hash.slice(1));
    const given = fragment.get("token");
    if (given) {
      sessionStorage.setItem(`aos-token:${gameId}`, given);
      // Out of the address bar and the browser's history too.
      history.replaceState(null, "", location.pathname + location.search);
      return given;
    }
    return sessionStorage.getItem(`aos-token:${gameId}`);
  }

  function sitDown(given) {
    const parts = (given || "").trim().split(".");
    if (parts.length !== 3 || parts[0] !== gameId || !/^[0-9]$/.test(parts[1])) {
      showError({ title: "Not a seat token of this game", detail: "A seat token looks like " +
        `${gameId}.<seat>.<secret>; it was shown once when the game was created.` });
      el("token-form").hidden = false;
      return false;
    }
    token = parts.join(".");
    seat = Number(parts[1]);
    sessionStorage.setItem(`aos-token:${gameId}`, token);
    el("token-form").hidden = true;
    clearError();
    return true;
  }

  // -- talking to the service -----------------------------------------------------------------

  async function getJson(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    return response.json();
  }

  function newKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  async function post(move) {
    posting = true;
    setButtons(false);
    clearError();
    try {
      const response = await fetch(`${game}/moves`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json",
          Authorization: `Bearer ${token}`,
          "If-Match": `"${view.version}"`,
          "Idempotency-Key": newKey(),
        },
        body: JSON.stringify(move),
      });
      const body = await response.json().catch(() => ({}));
      if (response.ok) {
        chosen = null;
        filter = null;
        await refresh(body.game);
      } else if (response.status === 412) {
        showError({ title: "The game moved on", detail: "Someone moved first: here is the game as it is now." });
        await refresh(null);
      } else {
        showError(body);
      }
    } catch (error) {
      showError({ title: "The move was not sent", detail: String(error.message || error) });
    } finally {
      posting = false;
      setButtons(true);
    }
  }

  // Why no move is listed at a hex of a build turn: the rules' own answer, from a dry run of a
  // plain straight there, pointed at on the board.
  async function whyNot(at) {
    const response = await fetch(`${game}/moves/validate`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json",
                 Authorization: `Bearer ${token}` },
      body: JSON.stringify({ type: "build", seat, hex: at, tracks: [[0, 3]] }),
    });
    const verdict = await response.json().catch(() => ({}));
    if (verdict.legal === false) showError({ ...verdict, title: `Nothing to build ${placeOf(at)}` });
  }

  // -- the page -------------------------------------------------------------------------------

  function placeOf(at) {
    const label = places[`${at.q},${at.r}`];
    return label ? (/ of /.test(label) ? label : `at ${label}`) : "there";
  }

  function setButtons(enabled) {
    document.querySelectorAll("#turn button").forEach((b) => { b.disabled = !enabled; });
  }

  function clearError() {
    el("error").hidden = true;
    el("error").textContent = "";
    board.querySelectorAll(".error-mark").forEach((m) => m.remove());
  }

  function showError(problem) {
    const box = el("error");
    box.textContent = "";
    const title = document.createElement("strong");
    title.textContent = problem.title && problem.title !== "Unprocessable request" ? problem.title : "Not allowed";
    const detail = document.createElement("p");
    detail.textContent = problem.detail || "";
    box.append(title, detail);
    if (problem.code) {
      const code = document.createElement("span");
      code.className = "code";
      code.textContent = problem.code;
      box.append(code);
    }
    box.hidden = false;
    pointAt(problem);
  }

  // What a rule error is about, ringed on the board: its hex, its city, its link.
  function pointAt(problem) {
    const svg = board.querySelector("svg");
    if (!svg) return;
    const marks = document.createElementNS(SVG, "g");
    marks.setAttribute("class", "error-mark");
    for (const field of ["hex", "city"]) {
      const at = problem[field];
      if (at && typeof at === "object" && "q" in at) ring(marks, at, field);
    }
    const link = typeof problem.link === "string" ? links[problem.link] : null;
    if (link) {
      const points = [link.stops[0], ...link.hexes, link.stops[1]].map(centre).filter(Boolean);
      const line = document.createElementNS(SVG, "polyline");
      line.setAttribute("points", points.map((p) => `${p[0]},${p[1]}`).join(" "));
      line.setAttribute("fill", "none");
      line.setAttribute("stroke", "#c92a2a");
      line.setAttribute("stroke-width", "6");
      line.setAttribute("stroke-dasharray", "6 4");
      line.setAttribute("data-link", problem.link);
      marks.append(line);
    }
    if (marks.childNodes.length) svg.append(marks);
  }

  function ring(parent, at, field) {
    const c = centre(at);
    if (!c) return;
    const circle = document.createElementNS(SVG, "circle");
    circle.setAttribute("cx", c[0]);
    circle.setAttribute("cy", c[1]);
    circle.setAttribute("r", c[2] * 0.95);
    circle.setAttribute("fill", "none");
    circle.setAttribute("stroke", "#c92a2a");
    circle.setAttribute("stroke-width", "5");
    circle.setAttribute("data-field", field);
    circle.setAttribute("data-q", at.q);
    circle.setAttribute("data-r", at.r);
    parent.append(circle);
  }

  function corners(at) {
    const hex = board.querySelector(`polygon.hex[data-q="${at.q}"][data-r="${at.r}"]`);
    if (!hex) return null;
    return hex.getAttribute("points").trim().split(/\s+/).map((p) => p.split(",").map(Number));
  }

  // A hex's centre and circumradius, from its drawn corners.
  function centre(at) {
    const c = corners(at);
    if (!c) return null;
    const x = c.reduce((s, p) => s + p[0], 0) / c.length;
    const y = c.reduce((s, p) => s + p[1], 0) / c.length;
    return [x, y, Math.hypot(c[0][0] - x, c[0][1] - y)];
  }

  // The middle of a hex's edge e (0 north, clockwise): between the corners either side of it.
  function edgeMiddle(c, e) {
    const a = c[(e + 5) % 6];
    const b = c[e];
    return [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
  }

  // A build drawn on the board before it is posted: its track, dashed, on its hex.
  function preview(move) {
    board.querySelectorAll(".preview").forEach((p) => p.remove());
    const svg = board.querySelector("svg");
    if (!svg || !move || move.type !== "build" || !move.hex) return;
    const c = corners(move.hex);
    const mid = centre(move.hex);
    if (!c || !mid) return;
    const group = document.createElementNS(SVG, "g");
    group.setAttribute("class", "preview");
    group.setAttribute("data-q", move.hex.q);
    group.setAttribute("data-r", move.hex.r);
    const paths = (move.tracks || []).map(([a, b]) => {
      const [ax, ay] = edgeMiddle(c, a);
      const [bx, by] = edgeMiddle(c, b);
      return `M${ax},${ay} Q${mid[0]},${mid[1]} ${bx},${by}`;
    });
    (move.town_exits || []).forEach((e) => {
      const [ex, ey] = edgeMiddle(c, e);
      paths.push(`M${mid[0]},${mid[1]} L${ex},${ey}`);
    });
    for (const [colour, width, dash] of [["#ffffff", 9, ""], ["#1e6b3a", 5, "5 3"]]) {
      paths.forEach((d) => {
        const path = document.createElementNS(SVG, "path");
        path.setAttribute("d", d);
        path.setAttribute("fill", "none");
        path.setAttribute("stroke", colour);
        path.setAttribute("stroke-width", String(width));
        path.setAttribute("stroke-linecap", "round");
        if (dash) path.setAttribute("stroke-dasharray", dash);
        group.append(path);
      });
    }
    svg.append(group);
  }

  // The hexes a move is about: where it builds, the city a cube leaves and every stop and hex
  // of its route, the wall's two sides, the oil field.
  function hexesOf(move) {
    const out = [];
    for (const field of ["hex", "from", "toward", "oil_field"]) {
      if (move[field] && typeof move[field] === "object") out.push(move[field]);
    }
    if (move.edge) out.push(move.edge.a, move.edge.b);
    (move.links || []).forEach((id) => {
      const link = links[id];
      if (link) out.push(...link.stops, ...link.hexes);
    });
    return out;
  }

  function touches(move, at) {
    return hexesOf(move).some((h) => h && h.q === at.q && h.r === at.r);
  }

  function showChoices() {
    choices.textContent = "";
    const mine = view && seat !== null && view.active_seat === seat;
    const listed = filter ? moves.filter((m) => touches(m, filter)) : moves;
    el("filter").hidden = !filter;
    if (filter) {
      el("filter-text").textContent = listed.length
        ? `Your moves ${placeOf(filter)}:` : `No move of yours ${placeOf(filter)}.`;
    }
    listed.forEach((move) => {
      const item = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "choice";
      button.dataset.index = String(moves.indexOf(move));
      button.dataset.type = move.type;
      if (move.count !== undefined) button.dataset.count = String(move.count);
      if (move.hex) { button.dataset.q = String(move.hex.q); button.dataset.r = String(move.hex.r); }
      button.textContent = move.text || move.type;
      if (chosen === move) button.classList.add("selected");
      button.addEventListener("click", () => choose(move));
      item.append(button);
      choices.append(item);
    });
    el("confirm").hidden = !chosen;
    el("chosen").textContent = chosen ? `${chosen.text || chosen.type}?` : "";
    document.body.classList.toggle("my-turn", Boolean(mine));
    document.body.dataset.turn = mine ? "mine" : "theirs";
  }

  function choose(move) {
    chosen = move;
    clearError();
    preview(move);
    showChoices();
    el("play").focus();
  }

  function onHex(target) {
    const at = { q: Number(target.dataset.q), r: Number(target.dataset.r) };
    filter = at;
    chosen = null;
    preview(null);
    clearError();
    const here = moves.filter((m) => touches(m, at));
    showChoices();
    if (!here.length && view.phase === "build" && view.active_seat === seat) whyNot(at);
    else if (here.length === 1) choose(here[0]);
  }

  function showPlayers() {
    const body = el("players").querySelector("tbody");
    body.textContent = "";
    const scores = {};
    (view.scores || []).forEach((s) => { scores[s.seat] = s; });
    const finished = view.status === "finished";
    el("players").querySelector("th:last-child").textContent = finished ? "Points" : "Action";
    const rows = finished
      ? view.players.slice().sort((a, b) => (scores[a.seat]?.rank ?? 99) - (scores[b.seat]?.rank ?? 99))
      : view.players;
    rows.forEach((p) => {
      const row = document.createElement("tr");
      row.dataset.seat = String(p.seat);
      if (p.seat === view.active_seat) row.classList.add("active");
      if (p.seat === seat) row.classList.add("me");
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.dataset.seat = String(p.seat);
      const name = document.createElement("td");
      const rank = finished && scores[p.seat] ? `${scores[p.seat].rank}. ` : "";
      name.append(swatch, `${rank}${p.name}${p.eliminated ? " (out)" : ""}`);
      const last = finished ? (scores[p.seat]?.points ?? "–") : (p.action || "–").replace(/_/g, " ");
      row.append(name, ...[`$${p.cash}`, p.income, p.shares, p.locomotive, last].map((v) => {
        const cell = document.createElement("td");
        cell.textContent = String(v);
        return cell;
      }));
      body.append(row);
    });
  }

  function showStatus() {
    const names = view.players.map((p) => p.name);
    document.body.dataset.version = String(view.version);
    document.body.dataset.status = view.status;
    if (view.status === "finished") {
      const winners = (view.scores || []).filter((s) => s.rank === 1 && s.points !== null);
      status.textContent = winners.length
        ? `Game over: ${winners.map((s) => names[s.seat]).join(" and ")} won with ${winners[0].points} points.`
        : "Game over.";
    } else {
      const phase = view.phase.replace(/_/g, " ");
      const who = view.active_seat === null ? "" : view.active_seat === seat
        ? ` · your decision, ${names[seat]}` : ` · ${names[view.active_seat]} to play`;
      status.textContent = `Round ${view.round} of ${view.last_round}, ${phase}${who}`;
    }
    el("seat").textContent = seat === null ? "" : `You play ${names[seat] ?? `seat ${seat}`}.` +
      (view.status !== "finished" && view.active_seat !== seat && view.active_seat !== null
        ? ` Waiting for ${names[view.active_seat]}…` : "");
  }

  async function drawBoard(version) {
    const response = await fetch(`${game}/board.svg?v=${version}`);
    if (!response.ok) throw new Error(`board.svg: ${response.status}`);
    const text = await response.text();
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    const svg = document.importNode(doc.documentElement, true);
    svg.setAttribute("role", "img");
    return svg;
  }

  // The page for the game at `next` (a view), or as the service has it now (null).
  async function refresh(next) {
    const ticket = ++loading;
    const fresh = next || await getJson(game);
    if (ticket !== loading || (view && fresh.version < view.version)) return;
    const [svg, listed] = await Promise.all([
      drawBoard(fresh.version),
      fresh.active_seat === seat && seat !== null
        ? getJson(`${game}/legal-moves?seat=${seat}`) : Promise.resolve({ moves: [] }),
    ]);
    if (ticket !== loading) return;
    view = fresh;
    shown = fresh.version;
    links = {};
    (view.board.links || []).forEach((link) => { links[link.id] = link; });
    moves = listed.version === undefined || listed.version === fresh.version ? listed.moves : [];
    if (chosen && !moves.some((m) => JSON.stringify(m) === JSON.stringify(chosen))) chosen = null;
    board.textContent = "";
    board.append(svg);
    if (chosen) preview(chosen);
    showStatus();
    showPlayers();
    showChoices();
    if (listed.version !== undefined && listed.version !== fresh.version) refresh(null);
  }

  function addEntry(entry) {
    const item = document.createElement("li");
    item.value = entry.version;
    item.textContent = (entry.text || entry.move.type) + (entry.by ? ` (by ${entry.by})` : "");
    const newest = log.querySelector("li.newest");
    if (newest) newest.classList.remove("newest");
    item.classList.add("newest");
    log.append(item);
    log.scrollTop = log.scrollHeight;  // the log's own box scrolls; the page stays where it is
  }

  function follow(after) {
    // EventSource resumes by itself after a drop, sending the last id (the version) it saw.
    events = new EventSource(`${game}/events?after=${after}`);
    events.addEventListener("move", (message) => {
      document.body.classList.remove("reconnecting");
      const event = JSON.parse(message.data);
      addEntry(event);
      if (event.version > shown && !posting) refresh(event.game);
      if (event.game.status === "finished") events.close();
    });
    events.addEventListener("open", () => document.body.classList.remove("reconnecting"));
    events.addEventListener("error", () => {
      if (events.readyState !== EventSource.CLOSED) document.body.classList.add("reconnecting");
    });
  }

  async function start() {
    const [mapped, history] = await Promise.all([
      getJson(game).then((v) => getJson(`/v1/maps/${v.map}`)),
      getJson(`${game}/history`),
    ]);
    mapped.hexes.forEach((h) => { places[`${h.q},${h.r}`] = h.place || h.city || h.town; });
    history.slice(-100).forEach(addEntry);
    await refresh(null);
    if (view.status !== "finished") follow(history.length);
  }

  board.addEventListener("click", (event) => {
    const hex = event.target.closest ? event.target.closest("polygon.hex") : null;
    if (hex && view) onHex(hex);
  });
  el("play").addEventListener("click", () => { if (chosen && !posting) post(chosen); });
  el("cancel").addEventListener("click", () => { chosen = null; preview(null); showChoices(); });
  el("show-all").addEventListener("click", () => { filter = null; showChoices(); });
  el("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (sitDown(el("token-input").value)) {
      el("token-input").value = "";
      refresh(null).catch((error) => { status.textContent = `Cannot show this game: ${error.message}`; });
    }
  });

  const given = tokenFromFragment();
  if (!given) el("token-form").hidden = false;
  else sitDown(given);
  start().catch((error) => { status.textContent = `Cannot show this game: ${error.message}`; });
})();
