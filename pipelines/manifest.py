"""The release a launch makes: its identity (which keys the noise), where the workers get the noise key, and
the release manifest written beside the dead letters (``release_manifest.json``), which refuses a release id
reused on other settings or data."""

from __future__ import annotations

import dataclasses
import json
import os
import sys

from pipelines.config.launch import explicit_key_missing, missing_key_message
from pipelines.model import ConfigError
from pipelines.outputs import mechanism_plan, unit_statement
from transforms.core.foundation.noise import ReleaseIdentity
from transforms.records import NoiseKey

__all__ = [
    "MANIFEST",
    "noise_key_for",
    "release_identity",
    "release_manifest",
    "check_folders",
    "write_manifest",
    "check_and_write_manifest",
    "Publication",
]

MANIFEST = "release_manifest.json"


def noise_key_for(cfg, local: bool = True) -> NoiseKey:
    """Where the workers get the secret key (``privacy.noise_key``)."""
    if cfg.disable_noise:
        return NoiseKey.disabled()
    kind, where = cfg.noise_key
    if kind == "file":
        return NoiseKey.from_file(where)
    if kind == "secret":
        return NoiseKey.from_secret_manager(where)
    if not os.environ.get(where):
        if not local:
            raise ConfigError(
                f"privacy.noise_key: the variable {where} is not set; remote workers need the key from "
                "privacy.noise_key {secret: ...} or {file: ...}"
            )
        if explicit_key_missing(cfg):  # only the implicit default may fall back to a one-off key
            raise ConfigError(missing_key_message(where))
        # a local run without a configured key: a fresh one-off key from the OS
        # CSPRNG (releases cannot be recomputed later; set the variable to reuse one)
        os.environ[where] = os.urandom(32).hex()
        print(
            f"WARNING: {where} is not set; using a fresh one-off noise key. Its releases cannot be recomputed, "
            "and every run on the same data is a NEW release that spends a new budget: publishing several runs "
            "lets anyone average their noise away (the budgets of separate releases add up).",
            file=sys.stderr,
        )
    return NoiseKey.from_env(where)


def release_identity(cfg) -> ReleaseIdentity:
    """The release this launch makes: ``privacy.release_id`` (to reproduce or
    continue a release) or a new random id, with the configuration's digest.
    Decided here, at launch, from configuration only; it is fixed in the
    pipeline graph, so retries and restores of this job redraw the same noise."""
    digest = cfg.release_digest()
    return ReleaseIdentity(cfg.release_id, digest) if cfg.release_id else ReleaseIdentity.new(digest)


def release_manifest(cfg, release: ReleaseIdentity) -> dict:
    """What this release is: its id, its configuration's digest, its input and
    its budget (per declared stream, in the configured unit)."""
    budget = cfg.stream_budget()  # the configured budget, or its 1 / max_streams_per_person share
    across = (
        {}
        if cfg.max_streams_per_person is None
        else {
            # a person's updates reach at most max_streams_per_person streams: the configured budget protects them
            # across all streams (PipelineConfig.stream_budget)
            "budget_per_person_all_streams": dict(dataclasses.asdict(cfg.target_budget())),
        }
    )
    return {
        "release_id": release.release_id,
        "config_digest": release.config_digest,
        "input_fingerprint": cfg.source.fingerprint(),
        "mechanism": cfg.mechanism,
        "mechanism_plan": _open_keys_plan(cfg) if cfg.open_keys else mechanism_plan(cfg),
        "release_every_ticks": cfg.every_ticks,
        "streams": list(cfg.streams),
        "budget_per_stream": {k: v for k, v in dataclasses.asdict(budget).items()},
        **across,
        "privacy_unit": cfg.unit
        if cfg.unit == "update"
        else f"person (field {cfg.person_field}, {cfg.unit_text()[len('person, ') :]})"
        if cfg.unit == "person"
        else f"entry (max {cfg.max_mutations_per_entry} mutations)"
        if cfg.mutation_window is None
        else f"entry ({cfg.unit_text()[len('entry, ') :]})",
        "privacy_unit_protects": unit_statement(cfg),  # one line: which unit protects whom
        "noise": "disabled (NOT private)" if cfg.disable_noise else "on",
        "note": "budgets of separate releases add up: a new release id spends a new budget",
    }


def _open_keys_plan(cfg) -> list[str]:
    """The plan lines of an open-key release (issue 33): the open keys, the selection and its cost."""
    from pipelines.open_keys import open_keys_plan

    return open_keys_plan(cfg)


def _read_manifest(folder: str | None) -> tuple[str, dict] | None:
    """``(path, manifest)`` of the release manifest in ``folder`` (an unreadable one is ``{}``), or None."""
    from apache_beam.io.filesystems import FileSystems

    if folder is None:
        return None
    path = FileSystems.join(folder, MANIFEST)
    if not FileSystems.exists(path):
        return None
    with FileSystems.open(path) as fh:
        try:
            old = json.loads(fh.read().decode("utf-8"))
        except ValueError:
            old = {}
    return path, old if isinstance(old, dict) else {}


def check_folders(cfg, release: ReleaseIdentity, overwrite: bool = False) -> None:
    """Refuse (:class:`ConfigError`, before anything runs) a release into folders that hold another release.

    A release manifest with the same release id but another configuration or input means a release id reused on
    different data or settings, which would give two releases the same noise: refused whatever ``overwrite``
    says. The same id, configuration and input is a replay or a continuation: allowed. A sink folder holding run
    outputs (:func:`pipelines.io.staging.outputs_in`) of another release (its manifest names another id, or there
    is none) is refused unless ``overwrite`` (``--overwrite``: the run replaces them)."""
    from pipelines.io.staging import outputs_in

    for i, sink in enumerate(cfg.sinks):
        found = _read_manifest(sink.manifest_folder)
        old_id = None
        if found is not None:
            path, old = found
            old_id = old.get("release_id")
            if old_id == release.release_id:
                manifest = {"config_digest": release.config_digest, "input_fingerprint": cfg.source.fingerprint()}
                for key, what in (("config_digest", "configuration"), ("input_fingerprint", "input")):
                    if old.get(key) != manifest[key]:
                        raise ConfigError(
                            f"privacy.release_id: release {release.release_id} was already made with another {what} "
                            f"(see {path}); reusing a release id on other data or settings would give two releases "
                            "the same noise. Omit privacy.release_id for a new release (it spends a new budget)"
                        )
                continue
        if overwrite:
            continue
        for key, folder in sink.output_folders.items():
            present = outputs_in(folder)
            if not present:
                continue
            whose = f"release {old_id}" if old_id else "another run (no release manifest)"
            more = f" and {len(present) - 1} more" if len(present) > 1 else ""
            raise ConfigError(
                f"sinks[{i}].{key}: {folder} already holds the outputs of {whose} ({present[0]}{more}); a new "
                "release there would mix two releases: pass --overwrite to replace them"
                + (f", --release-id {old_id} to continue that one" if old_id else "")
                + ", or choose an empty folder"
            )


def write_manifest(cfg, release: ReleaseIdentity) -> list[str]:
    """Write the release manifest into every sink's confidential folder (the file sinks have one); returns the
    paths."""
    from apache_beam.io.filesystems import FileSystems

    manifest = release_manifest(cfg, release)
    paths = []
    for folder in (sink.manifest_folder for sink in cfg.sinks):
        if folder is None:
            continue
        path = FileSystems.join(folder, MANIFEST)
        if not FileSystems.exists(folder):
            FileSystems.mkdirs(folder)
        with FileSystems.create(path) as fh:
            fh.write(json.dumps(manifest, indent=2).encode() + b"\n")
        paths.append(path)
    return paths


def check_and_write_manifest(cfg, release: ReleaseIdentity, overwrite: bool = True) -> list[str]:
    """:func:`check_folders` then :func:`write_manifest` (in place: a streaming run, or a caller that stages
    nothing). ``overwrite`` (default, as before folders were checked): another release's outputs may be
    replaced; a reused release id on other settings or data is refused either way. Returns the paths."""
    check_folders(cfg, release, overwrite=overwrite)
    return write_manifest(cfg, release)


class Publication:
    """Where a launch writes its outputs, and when they appear.

    Checks the sinks' folders (:func:`check_folders`), then a bounded run's file sinks are replaced by hidden
    staging folders (``pipelines.io.staging``) in :attr:`cfg`, the configuration to build the pipeline with (its
    release digest is the same: sinks are not part of it), and the release manifest is written (into the staging
    folder: it appears with the outputs). :meth:`commit` publishes a completed run's outputs; :meth:`discard`
    removes a failed or cancelled run's. A streaming run writes in place (its windows are published as they
    close)."""

    def __init__(self, cfg, release: ReleaseIdentity, overwrite: bool = False):
        from pipelines.io.staging import Staging

        check_folders(cfg, release, overwrite)
        self.cfg, self.staging = cfg, Staging([])
        if not cfg.streaming:
            tag = f"{release.release_id[:16]}-{os.getpid()}"
            staged = [sink.staged(tag) for sink in cfg.sinks]
            self.staging = Staging([pair for _, pairs in staged for pair in pairs])
            if self.staging:
                self.discard()  # a leftover of a killed run with the same tag
                self.cfg = cfg.model_copy(update={"sinks": tuple(sink for sink, _ in staged)})
        write_manifest(self.cfg, release)

    def final_name(self, path) -> str:
        """A path under a staging folder as it is named once published (others unchanged)."""
        return self.staging.final_name(str(path))

    def commit(self) -> None:
        self.staging.commit()

    def discard(self) -> None:
        self.staging.discard()
