"""Re-emit the dead letters that can be fixed and submitted again.

``python -m pipelines.replay 'output-confidential/dead_letters*' [--reason R ...] [--out FILE] [--config CONFIG]``

Reads dead-letter files (JSON lines or Avro, ``pipelines/schemas/dead_letter.avsc``)
and writes the records as received, one per line, for the replayable reasons
(every reason of ``transforms.core.foundation.entries.REASONS`` but those of
``NOT_REPLAYABLE``: outside the release's public time span, refused by the
mechanism, or past the privacy unit's mutation limit, which a replay must not
get around). Text records are written as they were received; records that were
not UTF-8 (``encoding: base64``) are written as their original bytes. A Pub/Sub
record whose event time was in its timestamp attribute gets that time in its
time field (``--config`` names the field; default ``time``), so that the line
stands on its own as a JSON-lines input record. With ``--config`` of a CSV
source the CSV header is written first. Fix the lines, then feed them to a run
(a file source, or ``pipelines.tools.pubsub_tool publish``).

Dead letters are confidential operator data: the output is too. Counts per
reason go to standard error; no record is ever printed there.
"""

from __future__ import annotations

import argparse
import base64
import glob
import json
import sys

from pipelines.config import ConfigError
from transforms.core.foundation.entries import NOT_REPLAYABLE, REASONS

__all__ = ["read_dead_letters", "replayable", "main"]


def read_dead_letters(pattern: str) -> list[dict]:
    """The dead letters of every file matching ``pattern`` (JSON lines or Avro)."""
    files = sorted(f for f in glob.glob(pattern) if not f.endswith(".json"))
    if not files:
        raise ConfigError(f"no dead-letter file matches {pattern}")
    out = []
    for path in files:
        try:
            with open(path, "rb") as fh:
                if fh.read(4) == b"Obj\x01":
                    import fastavro

                    fh.seek(0)
                    out.extend(fastavro.reader(fh))
                    continue
                fh.seek(0)
                for n, line in enumerate(fh.read().decode("utf-8").splitlines(), 1):
                    if not line.strip():
                        continue
                    d = json.loads(line)
                    if not isinstance(d, dict) or "reason" not in d or "record" not in d:
                        raise ConfigError(f"{path} line {n} is not a dead letter")
                    out.append(d)
        except ConfigError:
            raise
        except (ValueError, UnicodeDecodeError) as e:
            raise ConfigError(f"{path} is not a dead-letter file ({type(e).__name__})") from None
        except OSError as e:
            raise ConfigError(f"cannot read {path} ({e.strerror or type(e).__name__})") from None
    return out


def replayable(dead: dict, reasons=None) -> bool:
    """Whether a dead letter is re-emitted (its reason is replayable, and among
    ``reasons`` when given)."""
    reason = dead.get("reason")
    if reasons:
        return reason in reasons and reason not in NOT_REPLAYABLE
    return reason in REASONS and reason not in NOT_REPLAYABLE


def _original(dead: dict, time_field: str, timestamp_attribute: str | None) -> bytes:
    record = dead.get("record", "")
    data = base64.b64decode(record) if dead.get("encoding") == "base64" else str(record).encode("utf-8")
    attrs = dead.get("attributes") or {}
    if attrs and timestamp_attribute and timestamp_attribute in attrs:
        from pipelines.parse import attribute_time

        t = attribute_time(attrs[timestamp_attribute])
        try:
            d = json.loads(data)
        except ValueError:
            d = None
        if t is not None and isinstance(d, dict) and time_field not in d:
            d[time_field] = t
            data = json.dumps(d).encode()
    return data.replace(b"\n", b" ")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.replay", description=__doc__.split("\n\n")[0])
    ap.add_argument("dead_letters", help="glob of dead-letter files (JSON lines or Avro)")
    ap.add_argument("--reason", action="append", choices=sorted(set(REASONS) - NOT_REPLAYABLE), help="only these")
    ap.add_argument("--out", default="-", help="output file (default: standard output)")
    ap.add_argument("--config", default=None, help="the run's configuration (time field, CSV header)")
    args = ap.parse_args(argv)
    time_field, ts_attr, header = "time", "ts", None
    try:
        if args.config:
            from pipelines.config import load_config

            cfg = load_config(args.config)
            time_field, ts_attr = cfg.time_field, cfg.timestamp_attribute
            header = cfg.source.replay_header()
        dead = read_dead_letters(args.dead_letters)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    chosen = [d for d in dead if replayable(d, args.reason)]
    lines = [_original(d, time_field, ts_attr) for d in chosen]
    if header is not None and any(d.get("format") == "csv" for d in chosen):
        import csv
        import io

        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow(header)
        lines.insert(0, buf.getvalue().encode())
    data = b"".join(line + b"\n" for line in lines)
    if args.out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        with open(args.out, "wb") as fh:
            fh.write(data)
    counts: dict[str, int] = {}
    for d in dead:
        key = d.get("reason") if replayable(d, args.reason) else f"{d.get('reason')} (not replayed)"
        counts[key] = counts.get(key, 0) + 1
    print(f"replayed {len(chosen)} of {len(dead)} dead letters: {dict(sorted(counts.items()))}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
