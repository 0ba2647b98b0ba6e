"""The ``mechanism`` section: one model per entry of the mechanism registry (``transforms.core.mechanisms``),
chosen by ``kind`` (default ``auto``). A kind's keys are ``kind``, ``profile``, ``beta`` and the fields of its
registry entry's options dataclass, so a new mechanism needs no line here. Option values are kept exactly as
written (they are part of the release's digest) and checked by the options dataclass itself."""

from __future__ import annotations

import dataclasses
import typing
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, TypeAdapter, WithJsonSchema, create_model, model_validator
from pydantic_core import PydanticCustomError

from pipelines.model import Section, choice, integer, issue, number, tagged_union, unknown_keys
from transforms.core import mechanisms as registry

__all__ = ["MechanismConfig", "MECHANISM_MODELS", "MECHANISMS", "PROFILES"]

MECHANISMS = registry.names()  # the choices come from the mechanism registry
PROFILES = ("paper", "tuned", "tight")  # transforms.core.config.PROFILES
COMMON = ("kind", "profile", "beta")


def _beta(v) -> float:
    beta = number(v, positive=True)
    if beta >= 1:
        raise issue(f"must be < 1; got {beta}")
    return beta


class MechanismBase(Section):
    """The keys every kind takes; a kind's own model adds its options."""

    EXAMPLE: ClassVar[str] = "{kind: auto}"
    NAME: ClassVar[str] = ""
    OPTIONS: ClassVar[tuple[str, ...]] = ()

    kind: str
    profile: Annotated[Literal["paper", "tuned", "tight"], BeforeValidator(lambda v: choice(v, PROFILES))] = "tuned"
    beta: Annotated[float, BeforeValidator(_beta)] = 0.05

    @classmethod
    def unknown(cls, extra: list[str]) -> PydanticCustomError:
        key = extra[0]
        users = [n for n, sp in registry.MECHANISMS.items() if key in registry.option_fields(sp)]
        if users:
            return issue(
                f"does not apply to kind {cls.NAME} (it is an option of {', '.join(users)}); "
                f"{cls.NAME} takes: {', '.join(('profile', 'beta') + cls.OPTIONS)}",
                key,
            )
        return issue(unknown_keys(extra, COMMON + cls.OPTIONS).replace("allowed:", f"allowed for kind {cls.NAME}:"))

    @model_validator(mode="after")
    def _options_valid(self):
        options = dict(self.options)
        if "counter" in options:
            from transforms.core.counters import COUNTER_NAMES

            try:
                choice(options["counter"], COUNTER_NAMES)
            except PydanticCustomError as e:
                raise issue(e.context["message"], "counter") from None
        if options.get("horizon") is not None:
            try:
                integer(options["horizon"])
            except PydanticCustomError as e:
                raise issue(e.context["message"], "horizon") from None
        try:
            self.spec.options(**options)
        except (TypeError, ValueError) as e:
            raise issue(str(e)) from None
        return self

    @property
    def spec(self) -> registry.MechanismSpec:
        return registry.get(self.NAME)

    @property
    def options(self) -> tuple:
        """The options given, as sorted ``(key, value)`` pairs (values as written)."""
        return tuple(sorted((k, getattr(self, k)) for k in self.OPTIONS if k in self.model_fields_set))


def _class_name(name: str) -> str:
    return "".join(part.title() for part in name.split("_")) + "Mechanism"


def _model(spec: registry.MechanismSpec) -> type[MechanismBase]:
    fields: dict[str, Any] = {"kind": (Literal[spec.name], spec.name) if spec.name == "auto" else Literal[spec.name]}
    if dataclasses.is_dataclass(spec.options_cls):
        hints = typing.get_type_hints(spec.options_cls)
        for f in dataclasses.fields(spec.options_cls):
            shown = WithJsonSchema(TypeAdapter(hints[f.name]).json_schema())
            fields[f.name] = (Annotated[Any, shown], f.default)
    model = create_model(_class_name(spec.name), __base__=MechanismBase, __module__=__name__, **fields)
    model.NAME = spec.name
    model.OPTIONS = registry.option_fields(spec)
    model.__doc__ = f"``mechanism: {{kind: {spec.name}}}``: {spec.summary}"
    return model


MECHANISM_MODELS = {name: _model(spec) for name, spec in registry.MECHANISMS.items()}
globals().update({m.__name__: m for m in MECHANISM_MODELS.values()})  # importable by name (pickling)

MechanismConfig = tagged_union(MECHANISM_MODELS, "auto", key="kind")
