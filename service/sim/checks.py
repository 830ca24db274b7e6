"""The checks of the action ids (docs/simulation.md), shared by tests/sim/test_actions.py and the
command `python -m service.sim.check_actions`: at a decision every legal move has exactly one id
(a delivery exactly one sequence of steps), each id decodes to its listed move, the mask is the
listing, and ids that are not legal are refused."""

from __future__ import annotations

from service.engine import game
from service.engine.layout import GivenMove
from service.sim.state import NoSuchAction, SimState


class CheckFailed(AssertionError):
    """A decision where the ids and the engine's listing disagree."""


def _require(ok: bool, message: str) -> None:
    # A plain assert would vanish under `python -O`; the command must check all the same.
    if not ok:
        raise CheckFailed(message)


def delivery_paths_by_walking(state: SimState) -> dict[tuple[int, ...], GivenMove]:
    """Every delivery reached by taking the legal steps from the decision, on clones."""
    found: dict[tuple[int, ...], GivenMove] = {}

    def walk(s: SimState, steps: tuple[int, ...]) -> None:
        for a in s.legal_actions():
            if steps == () and not s.space.is_delivery_step(a):
                continue
            move = s.decode(a)
            if move is not None:
                _require((*steps, a) not in found, f"the steps {(*steps, a)} end twice")
                found[(*steps, a)] = move
            else:
                nxt = s.clone()
                nxt.apply_action(a)
                walk(nxt, (*steps, a))

    walk(state, ())
    return found


def check_decision(state: SimState, walk: bool = True) -> int:
    """Checks one decision (or chance node) of a state that has no delivery under way; returns
    how many listed moves it checked. With `walk`, every sequence of delivery steps is taken on
    clones and must end in exactly the listed deliveries (the costly part). Raises CheckFailed."""
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        _require(bool(outcomes) and abs(sum(p for _, p in outcomes) - 1) < 1e-9,
                 f"chance probabilities {outcomes} do not sum to 1")
        _require(state.legal_actions() == [o for o, _ in outcomes],
                 "the legal actions of a chance node are not its outcomes")
        return 0
    seat = state.current_player()
    listed = game.legal_moves(state.engine, seat)
    space = state.space
    legal = state.legal_actions()
    _require(legal == sorted(set(legal)), "the legal actions are not sorted and distinct")
    _require(all(0 <= a < space.num_distinct_actions for a in legal), "a legal id out of range")
    singles = [m for m in listed if m["type"] != "deliver"]
    deliveries = [m for m in listed if m["type"] == "deliver"]
    ids = [space.encode(m) for m in singles]
    _require(len(set(ids)) == len(ids), "two listed moves share an id")
    for m, a in zip(singles, ids, strict=True):
        _require(state.decode(a) == m, f"id {a} ({space.describe(a)}) decodes to "
                 f"{state.decode(a)!r}, not the listed {m!r}")
    firsts = {state.actions_of(m)[0] for m in deliveries}
    _require(set(legal) == set(ids) | firsts,
             f"the mask is not the listing: {sorted(set(legal) ^ (set(ids) | firsts))[:10]} differ")
    if deliveries and walk:
        walked = delivery_paths_by_walking(state)
        _require(sorted(map(repr, walked.values())) == sorted(map(repr, deliveries)),
                 f"the steps walk to {len(walked)} deliveries, {len(deliveries)} are listed")
        for delivery in deliveries:
            steps = tuple(state.actions_of(delivery))
            _require(walked.get(steps) == delivery,
                     f"the steps {steps} of {delivery!r} do not walk to it")
    legal_set = set(legal)
    for a in (-1, space.num_distinct_actions,
              *(x for x in range(0, space.num_distinct_actions, 997) if x not in legal_set)):
        try:
            state.decode(a)
        except (NoSuchAction, IndexError):
            continue
        raise CheckFailed(f"the id {a}, not legal, decodes")
    return len(listed)
