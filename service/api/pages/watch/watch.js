// The spectator page (GET /v1/games/{id}/watch): the move log from the game's history, then
// live from its events stream; the board is the service's own SVG, fetched again on each move.
// No build step, no outside assets; served as a file so a strict CSP (script-src 'self') holds.
"use strict";

(function () {
  const game = location.pathname.replace(/\/watch$/, "");  // /v1/games/{id}
  const log = document.getElementById("log");
  const board = document.getElementById("board");
  const status = document.getElementById("status");
  const players = document.getElementById("players");
  let names = [];

  function addEntry(entry) {
    const item = document.createElement("li");
    item.value = entry.version;
    item.dataset.version = String(entry.version);
    // The entry in words, as the service tells it (an entry from before words: its move's type).
    const who = names[entry.seat] === undefined ? `seat ${entry.seat}` : names[entry.seat];
    const told = entry.text || `${who}: ${entry.move.type.replace(/_/g, " ")}`;
    item.textContent = told + (entry.by ? ` (by ${entry.by})` : "");
    const newest = log.querySelector("li.newest");
    if (newest) newest.classList.remove("newest");
    item.classList.add("newest");
    log.appendChild(item);
    // The log's own box scrolls to its newest line; the page stays where it is, board in view.
    log.scrollTop = log.scrollHeight;
    log.parentElement.scrollTop = log.parentElement.scrollHeight;  // the box that scrolls when wide
  }

  // The players as a table of the page's own: readable on a phone, where the board's panel is
  // drawn too small to read.
  function showPlayers(view) {
    const body = players.querySelector("tbody");
    body.textContent = "";
    const finished = view.status === "finished";
    const scores = {};
    (view.scores || []).forEach((s) => { scores[s.seat] = s; });
    players.querySelector("th:last-child").textContent = finished ? "Points" : "Action";
    const rows = finished
      ? view.players.slice().sort((a, b) => (scores[a.seat]?.rank ?? 99) - (scores[b.seat]?.rank ?? 99))
      : view.players;
    rows.forEach((p) => {
      const row = document.createElement("tr");
      if (p.seat === view.active_seat) row.classList.add("active");
      const name = document.createElement("td");
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.dataset.seat = String(p.seat);
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

  function show(view) {
    names = view.players.map((p) => p.name);
    showPlayers(view);
    document.body.dataset.version = String(view.version);
    board.src = `board.svg?v=${view.version}`;
    if (view.status === "finished") {
      const ranked = (view.scores || []).slice().sort((a, b) => a.rank - b.rank);
      status.textContent = "Finished. " + ranked
        .map((s) => `${s.rank}. ${names[s.seat]} ${s.points === null ? "(out)" : s.points}`)
        .join(", ");
    } else {
      const who = view.active_seat === null ? "" : `: ${names[view.active_seat]} to play`;
      status.textContent = `Round ${view.round}, ${view.phase.replace(/_/g, " ")}${who}`;
    }
  }

  async function getJson(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    return response.json();
  }

  async function start() {
    const history = await getJson(`${game}/history`);
    const view = await getJson(game);
    names = view.players.map((p) => p.name);
    history.forEach(addEntry);
    show(view);
    if (view.status === "finished") return;
    // EventSource resumes by itself after a drop, sending the last id (the version) it saw.
    const events = new EventSource(`${game}/events?after=${history.length}`);
    events.addEventListener("move", (message) => {
      document.body.classList.remove("reconnecting");
      const event = JSON.parse(message.data);
      addEntry(event);
      show(event.game);
      if (event.game.status === "finished") events.close();
    });
    events.addEventListener("open", () => document.body.classList.remove("reconnecting"));
    events.addEventListener("error", () => {
      if (events.readyState !== EventSource.CLOSED) document.body.classList.add("reconnecting");
    });
  }

  start().catch((error) => { status.textContent = `Cannot show this game: ${error.message}`; });
})();
