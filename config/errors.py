"""The one exception type of config problems, in a module of its own so that every config module can raise it."""


class ConfigError(ValueError):
    """A user-facing config problem; the message is one line saying what would be right."""
