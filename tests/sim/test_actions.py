"""The action ids (service/sim/actions.py, docs/simulation.md): every legal move has exactly one
id (a delivery exactly one sequence of steps), ids decode to the listed moves, the mask is the
listing, and the numbering is fixed per map and player count."""

from __future__ import annotations

import random

import pytest

from service.engine import game
from service.sim.actions import ACTIONS_VERSION, action_space
from service.sim.checks import check_decision
from service.sim.state import SimState
from tests.sim.players import play_game

GAMES = [(m, 3, {}) for m in game.MAP_IDS] + [(m, 4, {}) for m in game.MAP_IDS] + [
    ("holland", 3, {"windmills": True}), ("holland", 4, {"windmills": True})]


@pytest.mark.parametrize(("map_id", "players", "options"), GAMES)
def test_every_legal_move_has_one_id_over_random_games(map_id, players, options):
    """Funded random games through every phase: at each decision the mask is the listing, each
    move's id decodes to it, and the delivery steps walk to exactly the listed deliveries."""
    rnd = random.Random(f"ids-{map_id}-{players}")
    state = SimState.new(map_id, players, f"ids-{map_id}-{players}", cash=60, options=options)
    seen = {"decisions": 0, "deliveries": 0, "chance": 0, "toward": 0, "stop": 0}

    def check(s: SimState) -> None:
        check_decision(s)
        seen["chance" if s.is_chance_node() else "decisions"] += 1
        if not s.is_chance_node() and s.listing().paths:
            seen["deliveries"] += 1
            seen["toward"] += any("toward" in m for m in s.listing().paths.values())
            seen["stop"] += any(s.space.stop in steps for steps in s.listing().next_steps.values())

    play_game(state, rnd, check)
    assert state.is_terminal() and state.engine["round"] > 2
    assert seen["decisions"] > 100 and seen["deliveries"] > 2 and seen["chance"] > 10, seen


def test_the_numbering_is_fixed_per_map_and_player_count():
    """A change of any id is a new ACTIONS_VERSION: these digests say when one happened."""
    assert ACTIONS_VERSION == "aos-actions/1"
    digests = {(m, p): action_space(m, p).digest() for m in game.MAP_IDS for p in (3, 4)}
    sizes = {(m, p): action_space(m, p).num_distinct_actions for m in game.MAP_IDS for p in (3, 4)}
    assert digests == PINNED_DIGESTS, digests
    assert sizes == PINNED_SIZES, sizes


def test_ids_name_what_they_do():
    space = action_space("rust_belt", 3)
    assert space.describe(space.encode({"type": "issue_shares", "count": 2})) == "issue 2 shares"
    assert space.encode({"type": "issue_shares", "count": 0}) == 0
    assert space.describe(space.encode({"type": "bid", "amount": 7})) == "bid $7"
    build = {"type": "build", "hex": {"q": 0, "r": 9}, "tracks": [[3, 0]], "cost": 3}
    assert space.encode(build) == space.encode({**build, "tracks": [[0, 3]], "cost": 9})
    with pytest.raises(ValueError, match="several actions"):
        space.encode({"type": "deliver", "from": {"q": 1, "r": 1}, "color": "red", "links": ["x"]})
    # The bids reach the most cash a player can hold: 10 + 15 shares x $5 + every round's
    # income at most (12 per player per round, cumulative) + a cube's worth per cube.
    assert space.move_space.max_cash == 10 + 75 + sum(36 * r for r in range(1, 11)) + 96


PINNED_DIGESTS = {
    ('rust_belt', 3): '04f5baef4a199589', ('rust_belt', 4): '6cc39eda0919449d',
    ('madagascar', 3): '89713f519fffb165', ('madagascar', 4): 'c3c3c4e1ae14b2f3',
    ('holland', 3): '003f953a65006a12', ('holland', 4): '246a83f8c7a3949e',
    ('iraq', 3): '16c27522ccffc6b8', ('iraq', 4): 'da089e380168faa9',
    ('berlin', 3): '2a229fd778f48ae7', ('berlin', 4): 'f0a798c55b5b5d61'}
PINNED_SIZES = {
    ('rust_belt', 3): 16124, ('rust_belt', 4): 15872, ('madagascar', 3): 13617,
    ('madagascar', 4): 13365, ('holland', 3): 14825, ('holland', 4): 14573, ('iraq', 3): 12194,
    ('iraq', 4): 11942, ('berlin', 3): 16934, ('berlin', 4): 16682}


def test_a_route_that_could_go_on_past_its_city_ends_with_deliver_stop():
    """Iraq's Escort: a yellow cube from Kut may stop at Baghdad or pass it to new city E (yellow,
    at Fallujah): after the step into Baghdad, deliver_stop ends it there, a via goes on."""
    from tests.engine.test_map_iraq import KUT, escort_chain, mover

    engine = escort_chain(mover(cubes={KUT: ["yellow"]}, actions={"us_army_escort": 0}),
                          fallujah_city=True)
    sim = SimState.from_game(engine)
    check_decision(sim)
    space = sim.space
    cube = space.cube_id(KUT, "yellow")
    assert cube in sim.legal_actions() and sim.decode(cube) is None
    sim.apply_action(cube)
    (to_baghdad,) = sim.legal_actions()
    assert sim.decode(to_baghdad) is None  # Baghdad takes yellow, but the cube may pass on
    sim.apply_action(to_baghdad)
    stop_here, *go_on = sim.legal_actions()[::-1]
    assert stop_here == space.stop and len(go_on) == 1
    listed = {len(m["links"]): m for m in game.legal_moves(engine, 0) if m["type"] == "deliver"}
    assert sim.decode(space.stop) == listed[1]  # Kut to Baghdad
    assert sim.decode(go_on[0]) == listed[2]  # on to new city E at Fallujah
    income = sim.engine["players"][1]["income"]
    sim.apply_action(go_on[0])
    assert sim.engine["cubes"][f"{KUT[0]},{KUT[1]}"] == []
    assert sim.engine["players"][1]["income"] == income + 2  # seat 1 owns both links


def test_the_functions_of_the_issue():
    from service.sim.state import decode, encode, legal_mask, num_distinct_actions

    state = SimState.new("madagascar", 5, "names")
    assert num_distinct_actions("madagascar", 5) == state.space.num_distinct_actions
    mask = legal_mask(state)
    assert len(mask) == num_distinct_actions("madagascar", 5)
    assert [a for a, legal in enumerate(mask) if legal] == state.legal_actions()
    move = game.legal_moves(state.engine, state.current_player())[3]
    assert decode(encode(move, state), state) == move
