"""The base of the record models that replaced dataclasses (`RowChange`, `WrongValue`, `Grade`,
`Step`): pydantic models that are also made with positional arguments, as the dataclasses were, so
templates, plug-ins and scripts that write `Step("favourite_song", {"song_id": 7})` keep working.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


class PositionalModel(BaseModel):
    """A model made with keywords, or with positional arguments in the order `_positional` names
    (the field order when empty). Validation (`model_validate`, a field of another model) passes
    keywords only, so it reports missing and unknown fields as pydantic does. Each subclass declares
    its signature for the type checker (`if TYPE_CHECKING: def __init__(...)`)."""

    _positional: ClassVar[tuple[str, ...]] = ()  # the positional order, when not the fields'

    def __init__(self, /, *args: Any, **data: Any) -> None:
        if args:
            names = self._positional or tuple(type(self).model_fields)
            if len(args) > len(names):
                raise TypeError(f"{type(self).__name__} takes at most {len(names)} positional arguments ({len(args)} given)")
            for name, value in zip(names, args):
                if name in data:
                    raise TypeError(f"{type(self).__name__} got two values for {name!r}")
                data[name] = value
        super().__init__(**data)

    # Validation passes keywords only, so it need not go through this `__init__`: pydantic skips an
    # `__init__` so marked (its own is), which keeps validating at pydantic's speed. Were the mark
    # ever ignored, validation would call this `__init__`, which does the same, slower.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


def trusted(cls: type[M], values: dict[str, Any]) -> M:
    """A model of `cls` made of values already checked, every field given (`values` becomes its
    `__dict__`): not validated. For hot code only (the tracker's rows, a loaded task's steps): it
    costs less than half of validating, and `model_construct` costs more than validating."""
    model = _new_object(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", set(values))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


_new_object = object.__new__
_set = object.__setattr__
