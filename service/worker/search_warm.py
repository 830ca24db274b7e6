"""Imported by the search processes' fork server (searches.PRELOAD), once: the engine's warm-up
games played and the collector settled there (engine/warm.py), so that every search process
forked from it lists its build turns with the common surroundings known and without full
collections over the kept geometry. AOS_WARM_UP_GAMES sets the games (0: none, as in tests)."""

from service.engine import warm
from service.referee.settings import Settings

warm.warm_up(Settings.from_env().warm_up_games)
