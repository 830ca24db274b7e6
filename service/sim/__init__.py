"""Something to think with, above the engine: action ids, observations, chance outcomes,
what-if simulation, the search bot and the arena. The engine stays pure; this package only
calls its facade (``service.engine.game``)."""
