"""What a player's name may hold: 1-64 characters (code points), no leading or trailing white
space, and only characters that print: none of Unicode's control (Cc), format (Cf: bidi
overrides, zero-width spaces, the BOM), private-use (Co), surrogate (Cs) or unassigned (Cn)
characters, and so never U+FFFE or U+FFFF. A name is shown to other players, in the picture of
the board and in logs: it must not be able to hide or disguise anything there."""

from __future__ import annotations

import unicodedata

from marshmallow import ValidationError

MIN_LENGTH, MAX_LENGTH = 1, 64
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn"})


def name_problem(name: str) -> str | None:
    """Why `name` is refused, or None if it is fine."""
    if not MIN_LENGTH <= len(name) <= MAX_LENGTH:
        return f"a name is {MIN_LENGTH} to {MAX_LENGTH} characters"
    if name != name.strip():
        return "a name has no leading or trailing white space"
    for char in name:
        category = unicodedata.category(char)
        if category in REFUSED_CATEGORIES:
            return f"a name may not hold U+{ord(char):04X} (a character of category {category})"
    return None


def validate_name(name: str) -> None:
    """marshmallow validator of a player's name."""
    problem = name_problem(name)
    if problem is not None:
        raise ValidationError(problem)
