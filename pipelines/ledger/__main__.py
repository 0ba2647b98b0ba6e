"""``python -m pipelines.ledger list|show|events``: what a budget ledger holds.

    python -m pipelines.ledger list --url sqlite:///ledger.db              # every dataset: spent, cap, left
    python -m pipelines.ledger list --url sqlite:///ledger.db --dataset D  # D's releases and what is left
    python -m pipelines.ledger show --config my.yaml RELEASE_ID            # one release (privacy.ledger's store)
    python -m pipelines.ledger events --config my.yaml RELEASE_ID          # its spend as dp_accounting events (JSON)
    python -m pipelines.ledger events --url URL --dataset D [--delta 1e-6] # the dataset's counted releases, composed

``events`` (the ``dp_accounting`` extra; ``pipelines/dp_events.py``) prints JSON: a release as the event of its
budget, or, with ``--config`` naming the configuration the release ran with (the same digest), as the events of its
charges; without a release, the dataset's counted releases composed sequentially. ``--delta D`` adds dp_accounting's
epsilon at D (PLD and RDP accountants) beside ours.

``--config FILE`` reads the URL and dataset from the configuration's ``privacy.ledger``. Exit status: 0; 2 a
bad argument or a ledger that cannot be read (one line).
"""

from __future__ import annotations

import argparse
import json
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


def _events(store, dataset: str, release_id: str | None, config: str | None, delta: float | None) -> int:
    try:
        from pipelines import dp_events
    except ImportError as e:
        raise ConfigError(str(e)) from None
    releases = store.releases(dataset)
    if release_id is None:
        counted = [r for r in releases if r.counted]
        spent = compose(counted[0].kind, [r.budget for r in counted]) if counted else {}
        event = dp_events.dataset_event(releases)
        out = {"dataset": dataset, "releases": [r.release_id for r in counted], "spent": _amounts(spent)}
        stated = _amounts(spent) if counted else None
    else:
        r = next((r for r in releases if r.release_id == release_id), None)
        if r is None:
            raise ConfigError(f"release {release_id} is not in dataset {dataset!r} of {redact(store.url)}")
        out = {"dataset": dataset, "release_id": r.release_id, "kind": r.kind, "budget": _amounts(r.budget)}
        out["counted"] = r.counted
        event, stated, out["source"] = dp_events.budget_event(r.kind, r.budget), _amounts(r.budget), "budget"
        if config:
            from pipelines.config import load_config
            from pipelines.manifest import release_identity

            cfg = load_config(config)
            if release_identity(cfg).config_digest != r.config_digest:
                raise ConfigError(f"{config} is not the configuration release {release_id} ran with (digests differ)")
            rel = dp_events.release_events(cfg)
            event, stated, out["source"] = rel.event, rel.stated, rel.source
            out["mechanism"], out["stated"] = rel.mechanism, rel.stated
    out["event"] = dp_events.to_json(event)
    if delta is not None:
        out["epsilon_at_delta"] = dp_events.compare(event, stated, delta)
    print(json.dumps(out, indent=2))
    return 0


def _amounts(amount: dict) -> dict:
    return {k: float(v) for k, v in amount.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.ledger", description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("list", "show", "events"))
    ap.add_argument("release_id", nargs="?", help="show, events: the release")
    ap.add_argument("--url", help="the ledger: sqlite:///file.db or postgresql://...")
    ap.add_argument("--dataset", help="the dataset (list: its releases; default every dataset)")
    ap.add_argument("--config", help="a configuration whose privacy.ledger names the URL and dataset")
    ap.add_argument("--delta", type=float, help="events: also dp_accounting's epsilon at this delta, beside ours")
    args = ap.parse_intermixed_args(argv)
    try:
        url, dataset = _where(args)
        store = open_store(url)
        if args.command == "list":
            _list(store, dataset)
            return 0
        if args.command == "events":
            if not dataset:
                raise ConfigError("events needs --dataset (or --config)")
            return _events(store, dataset, args.release_id, args.config, args.delta)
        if not dataset or not args.release_id:
            raise ConfigError("show needs --dataset (or --config) and a release id")
        return _show(store, dataset, args.release_id)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
