"""`JsonObject`: a JSON object nested in a record (a session line, a results line, a manifest) whose
known keys are typed and whose other keys are kept.

It dumps as it was given: the keys it was made or read with, in that order, and no key it was not
given (a field left at its default is not written), so a file read and written again is the same
bytes, whichever keys a writer (or a third-party solver) chose to put in it.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)


class JsonObject(BaseModel):
    """Known keys typed, others kept; dumps the keys it was given, in their order."""

    model_config = ConfigDict(extra="allow")

    _order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        model = handler(data)
        if isinstance(data, dict) and isinstance(model, JsonObject):
            model._order = tuple(data)
        return model

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        given = self.model_fields_set | set(self.model_extra or {})
        keys = [k for k in self._order if k in given] + [k for k in dumped if k in given and k not in self._order]
        return {k: dumped[k] for k in keys if k in dumped}

    def to_dict(self) -> dict[str, Any]:
        """The object's JSON, as given (one kept unchecked from a damaged line dumps its values as read)."""
        return self.model_dump(warnings=False)

    def get(self, key: str, default: Any = None) -> Any:
        """A key's JSON value, for code written when the object was a dict (read the attributes instead)."""
        return self.to_dict().get(key, default)
