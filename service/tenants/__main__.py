"""`python -m service.tenants create NAME --scope games:write --scope games:read`: a new key,
printed once; `list`: every key without its secret; `revoke KEY_ID`: at once, on every instance.

Keys are kept where the service looks for them: PostgreSQL when DATABASE_URL is set, else the
Redis of REDIS_URL.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from service.store import StoreUnavailable

from .keys import QUOTA_NAMES, SCOPES, new_key
from .registry import MemoryKeys, registry_from_env


def _quota(text: str) -> tuple[str, int]:
    name, _, value = text.partition("=")
    if name not in QUOTA_NAMES or not value.isdigit():
        raise argparse.ArgumentTypeError(f"NAME=N with NAME one of {', '.join(QUOTA_NAMES)}")
    return name, int(value)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m service.tenants",
        description="Tenant API keys: create (the key is printed once), list, revoke. Keys are kept "
        "in PostgreSQL when DATABASE_URL is set, else in the Redis of REDIS_URL.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create", help="make a key for a tenant and print it once")
    create.add_argument("name", help="the tenant's name (its games belong to it)")
    create.add_argument("--scope", action="append", choices=SCOPES, required=True,
                        help="a scope the key grants; repeat for several")
    create.add_argument("--quota", action="append", type=_quota, default=[], metavar="NAME=N",
                        help=f"a quota of this key, overriding the host's default: {', '.join(QUOTA_NAMES)}")
    listing = commands.add_parser("list", help="every key, without its secret")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    revoke = commands.add_parser("revoke", help="revoke a key at once on every instance")
    revoke.add_argument("key_id", help="the key's id, as `list` shows it")
    return parser


def _when(seconds: float | None) -> str:
    return "-" if seconds is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    registry = registry_from_env()
    if isinstance(registry, MemoryKeys):
        print("python -m service.tenants: set DATABASE_URL or REDIS_URL to the service's own: "
              "a key kept in this command's memory would be gone when it ends", file=sys.stderr)
        return 2
    try:
        if args.command == "create":
            try:
                key, record = new_key(args.name, args.scope, dict(args.quota))
            except ValueError as exc:
                print(f"python -m service.tenants: {exc}", file=sys.stderr)
                return 2
            registry.add(record)
            print(key)
            print(f"# key id {record.key_id} for tenant {record.tenant!r}, scopes "
                  f"{' '.join(record.scopes)}: shown this once, keep it secret", file=sys.stderr)
        elif args.command == "list":
            for record in registry.all():
                if args.json:
                    print(json.dumps(record.public()))
                else:
                    state = "active" if record.active else f"revoked {_when(record.revoked_at)}"
                    print(f"{record.key_id}  {record.tenant}  {','.join(record.scopes)}  "
                          f"created {_when(record.created_at)}  {state}")
        else:
            revoked = registry.revoke(args.key_id)
            if revoked is None:
                print(f"python -m service.tenants: no key {args.key_id!r}", file=sys.stderr)
                return 1
            print(f"revoked {revoked.key_id} ({revoked.tenant}) at {_when(revoked.revoked_at)}")
    except StoreUnavailable as exc:
        where = "DATABASE_URL" if os.environ.get("DATABASE_URL") else "REDIS_URL"
        print(f"python -m service.tenants: cannot reach {where}: {exc}", file=sys.stderr)
        return 1
    finally:
        registry.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
