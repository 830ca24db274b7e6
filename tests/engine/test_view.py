"""The views clients draw from: the game view's shape and the maps' features."""

from __future__ import annotations

from service.engine import game

VIEW_KEYS = {"map", "status", "round", "last_round", "phase", "active_seat", "players",
             "turn_order", "auction", "actions", "build", "move_goods", "production",
             "goods_display", "bag", "board", "scores", "seed_commitment"}


def test_game_view_has_every_contract_field():
    state = game.new_game("rust_belt", ["Ann", "Bob", "Cat"], "view")
    view = game.view(state)
    assert set(view) >= VIEW_KEYS
    assert view["status"] == "active" and view["phase"] == "issue_shares"
    assert view["players"][0] == {"seat": 0, "name": "Ann", "cash": 10, "income": 0, "shares": 2,
                                  "locomotive": 1, "action": None, "eliminated": False}
    assert sum(view["bag"].values()) + 52 + 2 * 10 + 3 * 2 == 96  # display, 10 cities of 2, 2 of 3
    assert len(view["seed_commitment"]) == 64 and "seed" not in view


def test_map_features_name_each_maps_own_rules():
    berlin = game.map_info("berlin")["features"]
    assert len(berlin["wall"]) == 19
    assert berlin["wall_falls_in_round"] == {"3": 9, "4": 7, "5": 6, "6": 5}
    assert berlin["tiles_per_turn"] == 2
    iraq = game.map_info("iraq")["features"]
    assert len(iraq["oil_fields"]) == 3
    assert {f["name"] for f in iraq["flags"]} == {"EU", "USA"}
    assert "us_army_escort" in iraq["actions"] and iraq["flag_link_cost"] == 5
    assert game.map_info("rust_belt")["features"]["actions"] == [
        "first_move", "first_build", "engineer", "locomotive", "urbanization", "production",
        "turn_order"]


def test_map_features_of_holland_and_madagascar():
    holland = game.map_info("holland")["features"]
    assert holland["polders_open_in_round"] == {"3": 5, "4": 4}
    assert len(holland["polders"]) == 45 and len(holland["windmills"]) == 5
    madagascar = game.map_info("madagascar")["features"]
    assert madagascar["action_chart"][0] == "last_build" and len(madagascar["actions"]) == 8


def test_the_board_kept_per_track_is_the_board_made_again():
    """board_json keeps the tracks and links of the last tracks seen: each state's board, made
    with them kept from the states before, is the board made with nothing kept."""
    import random

    import orjson

    from service.engine import view
    from service.engine.playout import play_random_game
    from service.engine.variants import rules_for

    for map_id in ("iraq", "berlin"):  # trackless stops; the map's own features
        states: list = []
        play_random_game(map_id, 3, f"kept-{map_id}", random.Random(map_id), cash=80,
                         on_move=lambda *args, states=states: states.append(args[4]))
        rules = rules_for(map_id)
        kept = [view.board_json(s, rules) for s in states]
        for state, board in zip(states, kept, strict=True):
            view._BOARDS.clear()
            assert view.board_json(state, rules) == board
            assert orjson.dumps(game.view_to_write(state)) == orjson.dumps(game.view(state))


def test_the_board_made_from_another_boards_tracks_is_the_board_made_again():
    """A board whose track changed is made from its game's last tracks made (_BoardJson.traced):
    made so, after the game's own board before it, or after or before another of its boards,
    it is the board made with nothing kept."""
    import random

    import orjson

    from service.engine import view
    from service.engine.playout import play_random_game
    from service.engine.variants import rules_for

    states: list = []
    for map_id, seed in (("rust_belt", 1), ("rust_belt", 2), ("holland", 1)):
        play_random_game(map_id, 3, f"traced-{seed}", random.Random(seed), cash=80,
                         on_move=lambda *args: states.append(orjson.loads(orjson.dumps(args[4]))))
    mixed = states[:]
    random.Random(0).shuffle(mixed)
    made = []
    for order in (states, mixed):
        view._BOARDS.clear()
        made += [view.board_json(s, rules_for(s["map"])) for s in order]
    for state, board in zip([*states, *mixed], made, strict=True):
        view._BOARDS.clear()
        assert view.board_json(state, rules_for(state["map"])) == board


def test_each_game_s_boards_are_made_from_its_own_last_and_a_few_games_are_kept():
    """Games played in turn each start from their own last board (by seed), not from whichever
    board was made last; at most KEPT_TRACED games' are kept, the oldest going first."""
    import random

    import orjson

    from service.engine import view
    from service.engine.playout import play_random_game
    from service.engine.variants import rules_for

    games: list[list] = []
    for seed in range(3):
        games.append([])
        play_random_game("rust_belt", 3, f"own-{seed}", random.Random(seed), cash=80,
                         on_move=lambda *args: games[-1].append(orjson.loads(orjson.dumps(args[4]))))
    rules = rules_for("rust_belt")
    view._BOARDS.clear()
    for turn in zip(*games, strict=False):  # in turn, while all three last
        for state in turn:
            view.board_json(state, rules)
    boards = view._BOARDS["rust_belt"]
    assert list(boards.traced) == ["own-0", "own-1", "own-2"]
    last = {seed: made_of for seed, (made_of, _) in boards.traced.items()}
    for seed, played in zip(("own-0", "own-1", "own-2"), games, strict=True):
        at = len(min(games, key=len)) - 1
        assert orjson.loads(last[seed][0])[0] == played[at]["track"]

    boards.KEPT_TRACED = 4
    track = list(games[0][-1]["track"].items())
    for n in range(6):  # boards not made before (each with a hex more), of games of their own
        view.board_json({**games[0][-1], "seed": f"other-{n}", "track": dict(track[:n + 1])},
                        rules)
    assert list(boards.traced) == [f"other-{n}" for n in range(2, 6)]


def test_what_is_kept_is_bounded_and_the_oldest_goes_first():
    from service.engine.view import _Kept

    kept = _Kept(2)
    made: list[str] = []

    def make(text: str):  # type: ignore[no-untyped-def]
        return lambda: made.append(text) or text.encode()

    assert [kept.made(k, make(k)) for k in ("a", "b", "a", "c", "a")] == [b"a", b"b", b"a", b"c", b"a"]
    assert made == ["a", "b", "c", "a"] and list(kept.texts) == ["c", "a"]
