"""The observation (service/sim/observation.py): a fixed shape per map and player count, public
information only, the same for every seat but the observer's one-hot; and its string form."""

from __future__ import annotations

import random

import numpy as np
import pytest

from service.engine import game
from service.sim.observation import OBSERVATION_VERSION, describe, layout, observation
from service.sim.state import SimState
from tests.sim.players import play_game


@pytest.mark.parametrize("map_id", game.MAP_IDS)
def test_the_shape_is_fixed_and_every_part_is_inside_it(map_id):
    assert OBSERVATION_VERSION == "aos-observation/1"
    lay = layout(map_id, 3)
    parts = lay.describe()
    assert parts[0] == {"name": "hexes", "offset": 0, "size": lay.hex_width * len(lay.hexes)}
    for a, b in zip(parts, parts[1:], strict=False):
        assert b["offset"] == a["offset"] + a["size"]
    assert parts[-1]["offset"] + parts[-1]["size"] == lay.size
    state = SimState.new(map_id, 3, "shape", cash=60)
    shapes = set()

    def check(s: SimState) -> None:
        obs = [observation(s, seat) for seat in range(3)]
        shapes.update(o.shape for o in obs)
        assert all(o.dtype == np.float32 for o in obs)
        # Public information: the seats' vectors differ only in who observes.
        observer = slice(*(lambda o, n: (o, o + n))(*lay.offsets["observer"]))
        for seat, o in enumerate(obs):
            assert o[observer].tolist() == [float(i == seat) for i in range(3)]
            rest = np.delete(o, np.arange(observer.start, observer.stop))
            assert np.array_equal(rest, np.delete(obs[0], np.arange(observer.start, observer.stop)))

    play_game(state, random.Random(map_id), check)
    assert shapes == {(lay.size,)}


def test_the_observation_reads_the_state_it_should():
    state = SimState.new("rust_belt", 3, "read")
    lay = layout("rust_belt", 3)
    obs = observation(state, 0)
    at = lambda name: lay.offsets[name][0]  # noqa: E731
    engine = state.engine
    assert obs[at("cash"):at("cash") + 3].tolist() == [10, 10, 10]
    assert obs[at("shares"):at("shares") + 3].tolist() == [2, 2, 2]
    assert obs[at("bag"):at("bag") + 5].tolist() == [engine["bag"][c] for c in lay.colours]
    assert obs[at("phase")] == 1 and obs[at("round")] == 1 and obs[at("last_round")] == 10
    assert obs[at("active") + game.active_seat(engine)] == 1
    cubes = sum(len(v) for v in engine["cubes"].values())
    width, start = lay.hex_width, lay.hex_offsets["cubes"]
    on_hexes = sum(obs[i * width + start:i * width + start + 5].sum() for i in range(len(lay.hexes)))
    assert on_hexes == cubes
    display = sum(1 for col in engine["display"].values() for c in col if c)
    assert obs[at("display"):at("display") + lay.offsets["display"][1]].sum() == display


def test_no_secret_is_read_the_seed_and_generator_make_no_difference():
    """Two games alike but for their seed and generator observe alike: the bag is its counts."""
    a = game.new_game("iraq", ["A", "B", "C"], "one secret")
    b = dict(a, seed="another secret", rng=12345, seed_commitment=a["seed_commitment"])
    sa, sb = SimState.from_game(a), SimState.from_game(b)
    for seat in range(3):
        assert np.array_equal(observation(sa, seat), observation(sb, seat))
        assert describe(sa, seat) == describe(sb, seat)
    assert "secret" not in describe(sa, 0) and sa.engine["seed"] == "" and sa.engine["rng"] == 0
    assert a["seed"] == "one secret"  # the caller's state is untouched


def test_the_string_form_is_compact_and_names_the_public_state():
    state = SimState.new("berlin", 4, "text")
    text = str(state)
    assert text.splitlines()[0].startswith("berlin round 1/8 issue_shares seat")
    assert "P3 $10 inc 0 sh 2 loco 1" in text and "bag " in text and "display light-1:" in text
    assert len(text) < 2000
