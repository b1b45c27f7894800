"""A domain's templates, found by name: the hand-written ones (the domain's `templates_module`)
and the composed ones, rebuilt from their structure's name (composition.py)."""

from __future__ import annotations

from .composition import composed_template
from .spec import Task
from .template_api import Template, templates_for


def template_named(domain_name: str, name: str) -> Template | None:
    """The domain's template called `name`: a hand-written one, or a composed one rebuilt from its
    structure's name (composition.py)."""
    found = next((t for t in templates_for(domain_name) if t.name == name), None)
    if found is None:
        found = composed_template(domain_name, name)
    return found


def task_template(task: Task) -> Template | None:
    """The template a task file names (`generator.template`), if this ebench has it."""
    return template_named(task.domain, str(task.generator.get("template", "")))
