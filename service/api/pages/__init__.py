"""The pages' own files (HTML, CSS, JavaScript): `play/` for the page a seat plays from,
`watch/` for the spectator's. Their routes are in ..routes (play, live)."""
