"""Moves and events in words: every listed move, every event and every history entry of whole
random games on every map reads as a sentence that names its seat's player and every place as
players do (places.py), never a coordinate."""

from __future__ import annotations

import copy
import random
import re

import orjson
import pytest

from service.engine import game
from service.engine import words as engine_words
from service.engine.maps import MAP_IDS, load_map
from service.engine.places import places
from service.engine.playout import play_random_game
from service.engine.words import Teller, listing, listing_json, with_texts

COORDINATES = re.compile(r"\(|-?\d+\s*,\s*-?\d+\s*\)|\bq\b|\br\b")
NAMES = ["Ann", "Bob", "Cat", "Dan"]


def assert_answers_as_orjson(state: dict, seat: int, listed: list) -> None:
    """listing_json, the answer of GET legal-moves joined from the listing's texts, is the
    answer orjson writes of the listing worded move by move, byte for byte."""
    fields = {"version": 7, "seat": seat, "phase": state["phase"]}
    assert listing_json(state, seat, fields) == orjson.dumps({**fields, "moves": listed})
    assert listing_json(state, seat, {}) == orjson.dumps({"moves": listed})


def check(text: str, name: str | None, what: object) -> None:
    assert text and text[0].isupper(), (text, what)
    assert not COORDINATES.search(text), (text, what)
    if name is not None:
        assert name in text, (text, what)


@pytest.mark.parametrize("map_id", MAP_IDS)
def test_every_move_event_and_entry_of_random_games_is_in_words(map_id: str) -> None:
    seen_moves: set[str] = set()
    seen_events: set[str] = set()
    players = 3 if map_id == "holland" else 4

    def words_of(before: dict, seat: int, move: dict, options: list, after: dict, events: list) -> None:
        teller = Teller.of(before)
        name = before["players"][seat]["name"]
        listed = with_texts(before, seat, options)
        assert [{k: v for k, v in m.items() if k != "text"} for m in listed] == options
        # The listing worded as it is made answers the same JSON, byte for byte.
        assert orjson.dumps(listing(before, seat)) == orjson.dumps(listed)
        assert_answers_as_orjson(before, seat, listed)
        for m, plain in zip(listed, options, strict=True):
            check(m["text"], name, m)
            seen_moves.add(m["type"])
            if m["type"] != "deliver":  # the listing's shortcuts say what the full wording says
                assert m["text"] == teller.move(seat, plain, before)
        # tell() words the events and the entry as events() then entry() do, each event once.
        told = copy.deepcopy(events)
        sentence = teller.tell(seat, move, told)
        teller.events(events)
        assert told == events
        assert sentence == teller.entry(seat, move, events)
        for e in events:
            seat_named = before["players"][e["seat"]]["name"] if isinstance(e.get("seat"), int) else None
            check(e["text"], seat_named, e)
            seen_events.add(e["type"])
        check(teller.entry(seat, move, events), name, move)

    for g, cash in enumerate((None, 40)):
        state, _ = play_random_game(map_id, players, f"words-{g}", random.Random(g), on_move=words_of,
                                    cash=cash)
        for p, name in zip(state["players"], [f"P{i}" for i in range(players)], strict=True):
            assert p["name"] == name
    # Every kind of move was listed and every common event told.
    assert {"issue_shares", "bid", "drop_out", "select_action", "build", "end_build", "deliver",
            "pass"} <= seen_moves
    assert {"shares_issued", "turn_order_set", "action_selected", "track_built", "good_delivered",
            "income_collected", "expenses_paid", "income_reduced", "dice_rolled", "goods_grown",
            "round_started", "game_finished"} <= seen_events


@pytest.mark.parametrize("map_id", MAP_IDS)
def test_every_hex_has_a_label_of_its_own_made_of_names(map_id: str) -> None:
    board = load_map(map_id)
    label = places(map_id).label
    assert set(label) == set(board.terrain)
    assert len(set(label.values())) == len(label)
    names = set(board.towns.values()) | {c.name for c in board.cities.values()}
    for h, words in label.items():
        assert not COORDINATES.search(words), (h, words)
        if h in board.cities:
            assert words == board.cities[h].name
        elif h in board.towns:
            assert words == board.towns[h]
        else:
            assert re.fullmatch(r"(\d hexes )?[a-z-]+ of (.+)", words), words
            assert words.split(" of ", 1)[1] in names, words


def test_labels_read_the_board_as_drawn() -> None:
    # Rust Belt is drawn as stored: Duluth (2, 8) has Minneapolis's hex south-west of it, and
    # the hex straight below Duluth is south of it.
    rust = places("rust_belt")
    assert rust.label[(2, 9)] == "south of Duluth"
    assert rust.label[(1, 9)] == "southwest of Duluth"
    assert rust.label[(2, 18)] == "2 hexes east of Kansas City"
    # Holland is drawn turned a quarter: the stored north edge points west on the page.
    assert places("holland").edge_direction[0] == "west"
    assert places("rust_belt").edge_direction == ("north", "northeast", "southeast", "south",
                                                  "southwest", "northwest")


def test_a_delivery_names_its_cities_and_who_earns_what() -> None:
    teller = Teller("rust_belt", ["Ann", "Bob", "Cat", "Dan"])
    chicago, detroit = (7, 11), (13, 6)
    assert load_map("rust_belt").cities[chicago].name == "Chicago"
    assert load_map("rust_belt").cities[detroit].name == "Detroit"
    event = {"type": "good_delivered", "seat": 2, "from": {"q": 7, "r": 11}, "color": "red",
             "to": {"q": 13, "r": 6}, "links": ["a", "b", "c"], "income": {"0": 1, "2": 2}}
    assert teller.event(event) == ("Cat delivers red from Chicago to Detroit over 3 links: "
                                   "+2 income for Cat, +1 for Ann")


def test_a_build_names_its_tile_place_and_cost() -> None:
    teller = Teller("rust_belt", NAMES)
    built = {"type": "track_built", "seat": 0, "hex": {"q": 2, "r": 9}, "cost": 3, "tile": "gentle",
             "kind": "new", "tracks": [[0, 2]]}
    assert teller.event(built) == "Ann builds a curve south of Duluth for $3"
    # Listed, on an empty hex and then over a straight already there.
    state = game.new_game("rust_belt", NAMES, seed="words")
    move = {"type": "build", "hex": {"q": 2, "r": 9}, "tracks": [[0, 3]], "cost": 2}
    assert with_texts(state, 0, [move])[0]["text"] == "Ann builds a straight south of Duluth for $2"
    state["track"]["2,9"] = [[0, 3, 0]]
    crossing = {"type": "build", "hex": {"q": 2, "r": 9}, "tracks": [[0, 3], [1, 5]], "cost": 3}
    assert with_texts(state, 1, [crossing])[0]["text"] == (
        "Bob adds a curve to the track south of Duluth, making a bow-and-arrow crossing, for $3")


def test_the_end_names_the_winner_and_everyone_s_points() -> None:
    teller = Teller("rust_belt", NAMES)
    scores = [{"seat": 2, "points": 27, "rank": 1}, {"seat": 0, "points": 16, "rank": 2},
              {"seat": 1, "points": 10, "rank": 3}, {"seat": 3, "points": -24, "rank": 4}]
    assert teller.event({"type": "game_finished", "scores": scores}) == (
        "The game is over: Cat wins with 27 points; Ann 16 points, Bob 10 points, Dan -24 points")


def test_a_history_entry_is_told_by_its_own_event() -> None:
    state = game.new_game("rust_belt", NAMES, seed="words")
    seat = game.active_seat(state)
    assert seat is not None
    move = {"type": "issue_shares", "count": 2}
    _, events = game.apply(state, seat, move)
    teller = Teller.of(state)
    assert teller.entry(seat, move, events) == f"{NAMES[seat]} issues 2 shares for $10"
    assert teller.entry(seat, {"type": "resign"}, []) == f"{NAMES[seat]} resigns"
    undo = {"type": "move_undone", "seat": seat, "version": 3, "move": move}
    assert teller.entry(seat, {"type": "undo"}, [undo]) == f"{NAMES[seat]} takes back the move of version 3"


def test_a_listing_written_as_json_escapes_names_as_orjson_does() -> None:
    # The builds of a listing are written from pieces escaped one by one (words.ListedBuilds):
    # names that need escaping, and places that are not ASCII (Berlin's), read the same.
    names = ['Ann "the" \\ builder', "Bö\nb\x01", "Cat \u2028 ü", "D\x00n"]
    state = game.new_game("berlin", names, seed="escapes")
    for seated in state["players"]:
        seated["cash"] = 60
    chooser = random.Random(3)
    builds = 0
    while builds < 6 and not game.is_finished(state):
        seat = game.active_seat(state)
        assert seat is not None
        options = game.legal_moves(state, seat)
        if state["phase"] == "build":
            builds += 1
            assert orjson.dumps(listing(state, seat)) == orjson.dumps(
                with_texts(state, seat, options))
            assert_answers_as_orjson(state, seat, with_texts(state, seat, options))
        state, _ = game.play(state, seat, chooser.choice(options))
    assert builds == 6


def test_builds_kept_from_one_listing_answer_another_player_s_own() -> None:
    # A hex's builds are kept per situation for every listing of the map (ListedBuilds.kept),
    # with the builder's name put in per listing: the same turn listed for players of other
    # names, and for another seat of the same game, reads each one's own words.
    chooser = random.Random(5)
    state = game.new_game("rust_belt", NAMES, seed="kept")
    while state["phase"] != "build" or state["round"] < 2:
        seat = game.active_seat(state)
        assert seat is not None
        state, _ = game.play(state, seat, chooser.choice(game.legal_moves(state, seat)))
    seat = game.active_seat(state)
    assert seat is not None
    for names in (NAMES, ['Zoë "Z"', "Y", "X", "W"], NAMES):
        renamed = {**state, "players": [{**p, "name": n} for p, n in zip(state["players"], names,
                                                                          strict=True)]}
        assert orjson.dumps(listing(renamed, seat)) == orjson.dumps(
            with_texts(renamed, seat, game.legal_moves(renamed, seat)))
        assert_answers_as_orjson(renamed, seat, with_texts(renamed, seat,
                                                           game.legal_moves(renamed, seat)))


def test_a_listing_s_urbanize_moves_read_as_with_texts_words_them() -> None:
    # A build turn's urbanize moves are written as one JSON text, kept per map, new cities left
    # and towns, with the builder's name put in per listing (ListedBuilds.urbanizing): they read
    # as with_texts words them, for names that need escaping and for another player's turn.
    urbanizing = []

    def on_move(before: dict, seat: int, *_: object) -> None:
        options = game.legal_moves(before, seat)
        if before["phase"] == "build" and any(m["type"] == "urbanize" for m in options):
            urbanizing.append(seat)
            for names in (NAMES, ['Zoë "Z"', "Y\n\x01", "X \u2028", "W"]):
                renamed = {**before, "players": [{**p, "name": n} for p, n in
                                                 zip(before["players"], names, strict=True)]}
                assert orjson.dumps(listing(renamed, seat)) == orjson.dumps(
                    with_texts(renamed, seat, options))
                assert_answers_as_orjson(renamed, seat, with_texts(renamed, seat, options))

    play_random_game("rust_belt", 4, "urbanize", random.Random(11), cash=300, on_move=on_move)
    assert len(set(urbanizing)) >= 2


def test_builds_kept_past_the_bound_drop_the_contexts_least_recently_asked_for(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # At the bound the kept builds make room by dropping whole contexts, the least recently
    # asked for first, until half of it is left, not everything at once (ListedBuilds.kept).
    monkeypatch.setattr(engine_words, "_KEPT_BUILDS", {})
    monkeypatch.setattr(engine_words, "_BUILDS_KEPT", 10)
    state = game.new_game("rust_belt", NAMES, seed="room")
    builds = engine_words.ListedBuilds(state, 0)

    def fill(context: str, situations: int) -> None:
        builds.kept(context).update({n: None for n in range(situations)})

    fill("a", 4)
    fill("b", 3)
    fill("c", 2)
    builds.kept("a")  # asked for again: now the most recent
    fill("d", 1)  # 9 + 0 < 10: no room made
    fill("e", 1)  # 10: b, c go (5 left), then e comes
    assert [context for _, (context,) in engine_words._KEPT_BUILDS] == ["a", "d", "e"]
    assert len(builds.kept("a")) == 4
