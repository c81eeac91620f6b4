"""Task registry: ``env.task`` in the config names a class registered here."""

from __future__ import annotations

from env.tasks.base import Task

_TASKS: dict[str, type[Task]] = {}


def register_task(name: str):
    """Class decorator: make a Task available to ``load_task_cls(name)``."""

    def add(cls: type[Task]) -> type[Task]:
        _TASKS[name] = cls
        return cls

    return add


def load_task_cls(name: str) -> type[Task]:
    import env.tasks.locomotion  # noqa: F401  (registers the built-in tasks)

    if name not in _TASKS:
        raise ValueError(f"unknown task '{name}'; registered tasks: {', '.join(sorted(_TASKS))}")
    return _TASKS[name]
