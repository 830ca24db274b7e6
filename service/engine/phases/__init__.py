"""One module per phase. Each deciding phase offers `start`, `legal` and `apply`; `apply`
checks a move with the same functions `legal` enumerates with, so the two cannot disagree."""
