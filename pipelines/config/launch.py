"""What can be checked before the pipeline starts beyond the YAML itself (kept apart from the models: these
read files, folders, the environment and the network): each source and sink checks itself
(``pipelines.io``), and a local run checks its noise key."""

from __future__ import annotations

import os

from pipelines.model import ConfigError

__all__ = [
    "check_environment",
    "check_runner",
    "check_kafka_runner",
    "explicit_key_missing",
    "missing_key_message",
]


def check_environment(cfg, local: bool = True, required: tuple | None = None, noise_key: bool = True) -> None:
    """The source's files exist and are readable in their format (or its services answer), every sink can be
    written, and (``local``: the key is read here, not on remote workers) the noise key is present and
    well-formed. ``required``: the fields every record must have (None: an update's). Raises ConfigError with
    one line; never shows a record of the input (a payload in a message would be a leak)."""
    cfg.source.check_launch(cfg, local, required)
    for i, sink in enumerate(cfg.sinks):
        sink.check_launch(cfg, i, local)
    if noise_key and local and not cfg.disable_noise:
        _check_noise_key(cfg)


def check_runner(cfg, runner: str) -> None:
    """Whether the runner can run the configured source and sinks (the Java KafkaIO needs a portable runner:
    Flink, or a job server; the Python DirectRunner cannot run a Java transform)."""
    cfg.source.check_runner(runner)
    for i, sink in enumerate(cfg.sinks):
        sink.check_runner(runner, i)


check_kafka_runner = check_runner  # its former name


def explicit_key_missing(cfg) -> bool:
    """``privacy.noise_key: {env: VAR}`` written in the configuration with ``VAR`` unset (or empty): an error.
    Only the implicit default may fall back to a one-off key."""
    kind, where = cfg.noise_key
    return kind == "env" and cfg.privacy.noise_key_explicit and not os.environ.get(where)


def missing_key_message(where: str) -> str:
    return (
        f"privacy.noise_key.env: the variable {where} is not set, and the configuration names it explicitly "
        "(set it to the release's hex key, or remove privacy.noise_key for a one-off key on a local run)"
    )


def _check_noise_key(cfg) -> None:
    """The key this launch (a local runner) will use: present and well-formed hex
    of at least 16 bytes. Never shows the key."""
    kind, where = cfg.noise_key
    if kind == "env":
        text = os.environ.get(where)
        if text is None:
            if explicit_key_missing(cfg):
                raise ConfigError(missing_key_message(where))
            return  # the implicit default: a local run makes a one-off key (with a warning)
        origin = f"the variable {where}"
    elif kind == "file":
        try:
            with open(where, encoding="ascii") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(
                f"privacy.noise_key.file: cannot read {where} ({getattr(e, 'strerror', None) or type(e).__name__})"
            ) from None
        origin = f"the file {where}"
    else:
        from transforms.records import NoiseKey

        try:
            NoiseKey.from_secret_manager(where).load()
        except Exception as e:  # noqa: BLE001 - credentials, network, permissions, format
            raise ConfigError(
                f"privacy.noise_key.secret: cannot read {where} from Secret Manager on this machine "
                f"({type(e).__name__}; credentials? the secret must hold the key as hex)"
            ) from None
        return
    text = text.strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise ConfigError(
            f"privacy.noise_key.{kind}: {origin} does not hold a hex key (make one with "
            'python -c "import os; print(os.urandom(32).hex())")'
        ) from None
    if len(key) < 16:
        raise ConfigError(
            f"privacy.noise_key.{kind}: the key in {origin} is {len(key)} bytes; it must be at least 16 "
            "(32 random bytes recommended)"
        )
