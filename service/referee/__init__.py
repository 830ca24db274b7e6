"""The game core: what a request does to a game, with no HTTP in it.

The application service (`games.Games`: create, apply, validate, history, views), the timeline
of a game's log (`timeline`), undo and takeback with consent, programmed orders, the
correspondence-play requests built on them (`correspondence`), seat and admin tokens, clocks,
the live feed's source over the store (`live_source`), putting a game back from the archive
(`restore`), the settings (`settings`), and the refusals, raised as codes (`errors.GameError`).
The HTTP service (service/api), the worker and the archive copier all play through it.
"""
