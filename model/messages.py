"""Messages of model/ that a page shows (a source's label and reason, a CheckpointError, a ConfigError), translated
when they are shown, not when they are made.

Sources are listed once a minute for every session and models are loaded once for everyone: a message made then
must not be in the language of whoever came first. A Later is the English text as a str (so `in`, == and + work as
before, and logs stay English), and str(m) or format(m) give it in the language of the session showing it. Its
fields may be Laters themselves (a reason inside an error).
"""
from locales import _


class Later(str):
    """message (a literal marked with N_()) with its str.format fields, translated by str() and format()."""

    def __new__(cls, message: str, **fields):
        english = message.format(**{k: str.__str__(v) if isinstance(v, Later) else v for k, v in fields.items()})
        self = super().__new__(cls, english)
        self.message, self.fields = message, fields
        return self

    def __str__(self) -> str:
        return _(self.message).format(**{k: str(v) if isinstance(v, Later) else v for k, v in self.fields.items()})

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __reduce__(self):
        return _rebuild, (self.message, self.fields)


def _rebuild(message: str, fields: dict) -> "Later":
    return Later(message, **fields)
