"""Which webhook deliveries a change of a game makes, and what each one says.

- `move`: every new version, to every registration for `move` (whatever its seat): the history
  entry of that version (`by` says when the server made the move for the seat).
- `finished`: the version that finished the game, with the scores.
- `turn`: to the registrations of the seat whose decision it now is, when the decision passed to
  it from another seat, or the server moved for it (its clock or its orders) and it still decides.
  It is judged against the game as it is when the change is handled: a decision that has already
  passed by then is not announced (the `move` deliveries still say what happened).

Each delivery's id is made of the registration, the version and the event, so a change handled
twice (a worker died before acknowledging it) makes the same ids, and a receiver can drop the
repeats. Payloads follow the Standard Webhooks shape `{type, timestamp, data}`.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

EVENTS = ("turn", "move", "finished")


@dataclass(frozen=True, slots=True)
class Planned:
    hook: str
    event: str
    message_id: str
    payload: bytes


def message_id(hook: str, version: int, event: str) -> str:
    return f"msg_{hook}_{version}_{event}"


def _payload(event: str, timestamp: str, data: dict) -> bytes:
    return orjson.dumps({"type": event, "timestamp": timestamp, "data": data})


def plan(game_id: str, version: int, entries: list[dict], hooks: list[dict],
         view: dict | None) -> list[Planned]:
    """The deliveries of one change that made `version` with `entries` (one per version, the last
    made `version`), for the game's registrations `hooks`; `view` is the game's view if it is
    still at `version` (else None: no `turn` is announced)."""
    planned: list[Planned] = []
    first = version - len(entries) + 1
    for offset, entry in enumerate(entries):
        made = first + offset
        data = {"game_id": game_id, "version": made, "index": entry["index"], "seat": entry["seat"],
                "move": entry["move"], "events": entry["events"], "at": entry["at"]}
        for extra in ("by", "text"):  # who made it for the seat; the entry in words
            if extra in entry:
                data[extra] = entry[extra]
        finished = next((e for e in entry["events"] if e.get("type") == "game_finished"), None)
        for hook in hooks:
            if "move" in hook["events"]:
                planned.append(Planned(hook["id"], "move", message_id(hook["id"], made, "move"),
                                       _payload("move", entry["at"], data)))
            if finished is not None and "finished" in hook["events"]:
                body = {"game_id": game_id, "version": made, "scores": finished.get("scores")}
                planned.append(Planned(hook["id"], "finished", message_id(hook["id"], made, "finished"),
                                       _payload("finished", entry["at"], body)))
    if view is not None and entries and view.get("version") == version:
        seat = view.get("active_seat")
        last = entries[-1]
        if seat is not None and (last["seat"] != seat or "by" in last):
            body = {"game_id": game_id, "version": version, "seat": seat, "phase": view["phase"],
                    "round": view["round"], "deadline": view.get("deadline")}
            for hook in hooks:
                if hook["seat"] == seat and "turn" in hook["events"]:
                    planned.append(Planned(hook["id"], "turn", message_id(hook["id"], version, "turn"),
                                           _payload("turn", last["at"], body)))
    return planned
