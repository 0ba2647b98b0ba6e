"""``python -m pipelines.ledger list|show``: what a budget ledger holds.

    python -m pipelines.ledger list --url sqlite:///ledger.db              # every dataset: spent, cap, left
    python -m pipelines.ledger list --url sqlite:///ledger.db --dataset D  # D's releases and what is left
    python -m pipelines.ledger show --config my.yaml RELEASE_ID            # one release (privacy.ledger's store)

``--config FILE`` reads the URL and dataset from the configuration's ``privacy.ledger``. Exit status: 0; 2 a
bad argument or a ledger that cannot be read (one line).
"""

from __future__ import annotations

import argparse
import os
import sys

from pipelines.ledger.backends import open_store
from pipelines.ledger.compose import FIELDS, compose, left, text
from pipelines.ledger.sqlite import sqlite_path
from pipelines.ledger.store import redact
from pipelines.model import ConfigError

__all__ = ["main"]


def _where(args) -> tuple[str, str | None]:
    url, dataset = args.url, args.dataset
    if args.config:
        from pipelines.config import load_config

        ledger = load_config(args.config).privacy.ledger
        if ledger is None:
            raise ConfigError(f"{args.config}: no privacy.ledger in this configuration")
        url, dataset = url or ledger.url, dataset or ledger.dataset
    if not url:
        raise ConfigError("give --url URL (sqlite:///file.db or postgresql://...) or --config FILE")
    if url.startswith("sqlite:///") and not os.path.exists(sqlite_path(url)):
        raise ConfigError(f"no ledger at {url} (the file does not exist)")
    return url, dataset


def _status(store, dataset: str) -> tuple[list, dict, dict | None]:
    releases = store.releases(dataset)
    if not releases:
        return releases, {}, None
    kind = releases[0].kind
    spent = compose(kind, [r.budget for r in releases if r.counted])
    cap = max(releases, key=lambda r: r.started).cap  # the cap of the latest launch
    return releases, spent, cap


def _list(store, dataset: str | None) -> None:
    if dataset is None:
        rows = store.datasets()
        if not rows:
            print(f"no datasets in {redact(store.url)}")
        for name, unit, kind in rows:
            releases, spent, cap = _status(store, name)
            summary = f"spent {text(spent)} of cap {text(cap)}, left {text(left(spent, cap))}" if cap else "no releases"
            print(f"{name}: {len(releases)} release(s), {kind}, unit {unit}; {summary}")
        return
    releases, spent, cap = _status(store, dataset)
    if not releases:
        print(f"dataset {dataset!r}: no releases in {redact(store.url)}")
        return
    print(f"dataset {dataset!r} ({redact(store.url)}): unit {releases[0].unit}, budget kind {releases[0].kind}")
    print(f"{'release_id':<34} {'status':<10} {'counted':<7} {'budget':<28} {'started':<21} ended")
    for r in releases:
        print(
            f"{r.release_id:<34} {r.status:<10} {'yes' if r.counted else 'no':<7} {text(r.budget):<28} "
            f"{r.started:<21} {r.ended or '-'}"
        )
    print(f"spent {text(spent)} of cap {text(cap)}; left {text(left(spent, cap))}")


def _show(store, dataset: str, release_id: str) -> int:
    for r in store.releases(dataset):
        if r.release_id == release_id:
            fields = ("release_id", "dataset", "status", "config_digest", "unit", "kind", "runs", "started", "ended")
            for field in fields:
                print(f"{field + ':':<15} {getattr(r, field)}")
            print(f"{'budget:':<15} {text(r.budget)}")
            print(f"{'counted:':<15} {'yes' if r.counted else 'no'}")
            print(f"{'outputs:':<15} {'atomic (published at completion)' if r.atomic else 'published as they go'}")
            print(f"{'cap:':<15} {text(r.cap)} (at its last launch; fields {', '.join(FIELDS[r.kind])})")
            return 0
    raise ConfigError(f"release {release_id} is not in dataset {dataset!r} of {redact(store.url)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.ledger", description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("list", "show"))
    ap.add_argument("release_id", nargs="?", help="show: the release")
    ap.add_argument("--url", help="the ledger: sqlite:///file.db or postgresql://...")
    ap.add_argument("--dataset", help="the dataset (list: its releases; default every dataset)")
    ap.add_argument("--config", help="a configuration whose privacy.ledger names the URL and dataset")
    args = ap.parse_intermixed_args(argv)
    try:
        url, dataset = _where(args)
        store = open_store(url)
        if args.command == "list":
            _list(store, dataset)
            return 0
        if not dataset or not args.release_id:
            raise ConfigError("show needs --dataset (or --config) and a release id")
        return _show(store, dataset, args.release_id)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
