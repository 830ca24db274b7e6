// The spectator page (GET /v1/games/{id}/watch): the move log from the game's history, then
// live from its events stream; the board is the service's own SVG, fetched again on each move.
// No build step, no outside assets; served as a file so a strict CSP (script-src 'self') holds.
"use strict";

(function () {
  const game = location.pathname.replace(/\/watch$/, "");  // /v1/games/{id}
  const log = document.getElementById("log");
  const board = document.getElementById("board");
  const status = document.getElementById("status");
  let names = [];

  function shown(value) {
    if (value && typeof value === "object" && "q" in value && "r" in value) return `(${value.q}, ${value.r})`;
    if (Array.isArray(value)) return `[${value.map(shown).join(", ")}]`;
    return typeof value === "string" ? value.replace(/_/g, " ") : JSON.stringify(value);
  }

  function describe(move) {
    const fields = Object.entries(move)
      .filter(([key]) => key !== "type" && key !== "seat")
      .map(([key, value]) => `${key.replace(/_/g, " ")} ${shown(value)}`);
    return [move.type.replace(/_/g, " "), ...fields].join(", ");
  }

  function addEntry(entry) {
    const item = document.createElement("li");
    item.value = entry.version;
    item.dataset.version = String(entry.version);
    const who = names[entry.seat] === undefined ? `seat ${entry.seat}` : names[entry.seat];
    item.textContent = `${who}: ${describe(entry.move)}` + (entry.by ? ` (by ${entry.by})` : "");
    const newest = log.querySelector("li.newest");
    if (newest) newest.classList.remove("newest");
    item.classList.add("newest");
    log.appendChild(item);
    item.scrollIntoView({ block: "nearest" });
  }

  function show(view) {
    names = view.players.map((p) => p.name);
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
