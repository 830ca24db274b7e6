"""The game state's layout, as types: what every key of the state dict holds.

The state stays a plain dict (a TypedDict is a dict at run time), so orjson writes it as it is
and a replay gives the same bytes. Hexes are keyed "q,r" (hexgrid.key); seats are ints, but a
seat used as an object key is its str ("0", "1"...), as JSON requires.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from service.engine import contract_types

# The phases a game stands in between moves: the six with decisions, and the end.
DecidingPhase = Literal["issue_shares", "auction", "select_action", "build", "move_goods",
                        "production"]
Phase = DecidingPhase | Literal["finished"]
# The steps of the round that need no decision run between phases and are never stored
# (lifecycle.py).
Step = DecidingPhase | Literal["operations", "growth", "next_round"]
# What lies across one edge of a hex, as a builder sees it (phases/build.py edge_statuses).
# "unowned": an unowned track end whose route runs back to a city or to a town where the builder
# has track; "stranded": any other unowned track end.
EdgeStatus = Literal["off", "closed", "city", "free", "own", "unowned", "stranded", "opponent"]

# A move as the engine lists it and the contract describes it: one of openapi.yaml's move types.
Move = contract_types.Move
# A move as it is given to the engine: any JSON object, which the phase that takes it checks field by
# field (a direct caller and a replayed record skip the HTTP checks). A listed Move is one.
GivenMove = Mapping[str, Any]
Event = contract_types.Event  # what happened: {"type": ..., fields of that type}
TrackEntry = list[Any]  # [edge a, edge b, owner seat | None], a < b
TownExit = list[Any]  # [edge, owner seat | None]
PieceRecord = list[Any]  # [hex key, edge a, edge b] (b is network.CENTRE for a town exit)


class Player(TypedDict):
    name: str
    cash: int
    income: int
    shares: int
    loco: int
    action: str | None  # the action taken this round
    eliminated: bool


class Actions(TypedDict):
    taken: dict[str, int]  # action id -> seat
    locked: list[str]  # action ids no one may take this round


# "in" is a keyword, so the auction is declared the functional way.
Auction = TypedDict("Auction", {
    "order": list[int],  # the turn order the auction started from
    "in": list[int],  # seats still bidding
    "bids": dict[str, int],  # seat -> its last bid
    "high_bid": int,
    "high_bidder": "int | None",
    "dropped": list[int],  # seats in the order they dropped out
    "pass_holder": "int | None",
    "pass_used": bool,
})


class BuildTurn(TypedDict):
    seat: int
    tiles_left: int
    urbanized: bool
    built: list[str]  # hex keys built on this turn
    extended: list[PieceRecord]  # pieces laid this turn
    redirected: dict[str, PieceRecord]  # the old piece ("key|a|b") -> where it turned to
    map_moves: list[str]  # types of the map's own build moves made this turn
    incomplete_at_start: list[list[PieceRecord]]  # the seat's incomplete routes as it began


class MoveGoods(TypedDict):
    round: int  # 1 or 2
    upgraded: list[int]  # seats that upgraded their locomotive this phase
    used: dict[str, int]  # seat -> opportunities used


class Production(TypedDict):
    seat: int
    drawn: list[str]  # colours drawn, waiting to be placed


# A seat's final score, as the view shows it (points None for an eliminated player).
Score = contract_types.Score


class State(TypedDict):
    format: str
    rules_version: str
    map: str
    options: dict[str, Any]  # the map's game options, every one with its value
    seed: str
    seed_given: bool
    seed_commitment: str
    rng: int  # the generator's whole state (rng.py)
    round: int
    last_round: int
    phase: Phase
    queue: list[int]  # seats still to decide in this step; the first decides
    start_players: int
    players: list[Player]
    turn_order: list[int]  # every seat; the eliminated at the end
    pass_holder: int | None  # the seat holding this auction's Turn Order pass
    actions: Actions
    auction: Auction | None
    build: BuildTurn | None
    move_goods: MoveGoods | None
    production: Production | None
    display: dict[str, list[str | None]]  # column in play -> squares, top first
    bag: dict[str, int]  # colour -> cubes left
    cubes: dict[str, list[str]]  # hex key -> the colours of the cubes there
    new_cities: dict[str, str]  # hex key -> new-city letter
    track: dict[str, list[TrackEntry]]
    towns: dict[str, list[TownExit]]
    tiles: dict[str, str]  # hex key -> tile id
    supply: dict[str, int]  # tile id (and "town_disk") -> how many are left
    scores: list[Score] | None
    variant: dict[str, Any]  # the map's own data (its variant module documents it)
