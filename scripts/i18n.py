"""Keep the message catalogs in step with the code (Babel), and say what is missing.

  python scripts/i18n.py update        extract every marked string, add the new ones to both catalogs, drop
                                       the ones no code uses; English is filled in (msgstr = msgid)
  python scripts/i18n.py check         what a catalog misses: untranslated, fuzzy, or a {field} lost (exit 1)
  python scripts/i18n.py todo          the Chinese entries still to translate, as .po text
  python scripts/i18n.py merge F.po    fill untranslated Chinese entries from another catalog (a branch's)
  python scripts/i18n.py fill F.json   set Chinese entries from {"English": "中文", ...} (plurals: a list)

Strings are marked with _(), N_(), ngettext() and pgettext() (locales/__init__.py). Only str.format fields can be
translated: an f-string's text is not seen by the extractor, so marked strings are plain literals.
"""
import sys
from datetime import datetime, timezone
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from locales import LANGUAGES, catalog_path, fields  # noqa: E402

SOURCES = ("app.py", "views", "runtime", "viz", "model", "training")  # what a user's strings come from
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2)}
TEAM = "attention visualizer"
_EPOCH = datetime(2026, 11, 23, tzinfo=timezone.utc)


def _python_files(top: Path):
    yield from ([top] if top.is_file() else sorted(top.rglob("*.py")))


def _catalog(lang: str | None = None) -> Catalog:
    # fixed header dates: an update changes a catalog's file only where its messages change
    return Catalog(locale=lang, project=TEAM, version="1", copyright_holder="the attention visualizer's authors",
                   msgid_bugs_address="the project's issues", last_translator="the project's authors",
                   language_team=f"{lang or 'all'} <the project's issues>", creation_date=_EPOCH,
                   revision_date=_EPOCH, fuzzy=False)


def template() -> Catalog:
    """Every marked string of the code, with where it is (file:line)."""
    catalog = _catalog()
    for source in SOURCES:
        path = ROOT / source
        if path.is_file():
            found = ((path.name, *rest) for rest in _extract_file(path))
        else:
            found = extract_from_dir(str(path), method_map=[("**.py", "python")], keywords=KEYWORDS,
                                     comment_tags=("TRANSLATORS:",), strip_comment_tags=True)
            found = ((f"{source}/{name}", *rest) for name, *rest in found)
        for filename, lineno, message, comments, context in found:
            catalog.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return catalog


def _extract_file(path: Path):
    from babel.messages.extract import extract

    with path.open("rb") as f:
        for lineno, message, comments, context in extract("python", f, keywords=KEYWORDS,
                                                          comment_tags=("TRANSLATORS:",), strip_comment_tags=True):
            yield lineno, message, comments, context


def read(lang: str) -> Catalog:
    path = catalog_path(lang)
    if not path.exists():
        return _catalog(lang)
    with path.open("rb") as f:
        return read_po(f, locale=lang)


def write(lang: str, catalog: Catalog) -> None:
    path = catalog_path(lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        write_po(f, catalog, width=120, ignore_obsolete=True, include_previous=False, include_lineno=False)


def update() -> None:
    for lang in LANGUAGES:
        catalog = read(lang)
        catalog.update(template(), no_fuzzy_matching=True)  # a template each: update() shares its messages
        if lang == "en":  # the code is written in English: its catalog says so, and may refine a wording
            for message in catalog:
                if message.id and not _translated(message):
                    message.string = message.id
        write(lang, catalog)


def _translated(message) -> bool:
    strings = message.string if isinstance(message.string, tuple) else (message.string,)
    return all(strings)


def problems(lang: str, tmpl: Catalog | None = None) -> list[str]:
    """Why lang's catalog does not cover the code: each line one message."""
    tmpl = tmpl or template()
    catalog = read(lang)
    out = []
    for message in tmpl:
        if not message.id:
            continue
        key = message.id if message.context is None else (message.id, message.context)
        found = catalog.get(message.id, message.context)
        where = message.locations[0][0] if message.locations else "?"
        if found is None:
            out.append(f"missing ({where}): {key!r}")
        elif not _translated(found):
            out.append(f"untranslated ({where}): {key!r}")
        elif found.fuzzy:
            out.append(f"fuzzy ({where}): {key!r}")
        else:
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            strings = found.string if isinstance(found.string, tuple) else (found.string,)
            want = set().union(*(fields(i) for i in ids))
            for s in strings:
                if fields(s) != want:
                    out.append(f"fields {sorted(fields(s))} instead of {sorted(want)} ({where}): {key!r}")
    used = {(m.id if isinstance(m.id, str) else m.id[0], m.context) for m in tmpl if m.id}
    for message in catalog:
        if message.id and (message.id if isinstance(message.id, str) else message.id[0], message.context) not in used:
            out.append(f"no code uses it: {message.id!r}")
    return out


def todo() -> None:
    catalog = read("zh")
    for message in catalog:
        if message.id and not _translated(message):
            where = ", ".join(f"{f}:{n}" for f, n in message.locations[:2])
            print(f"#: {where}\nmsgid {message.id!r}\n")


def merge(other: Path) -> None:
    with other.open("rb") as f:
        theirs = read_po(f, locale="zh")
    catalog = read("zh")
    filled = 0
    for message in catalog:
        if message.id and not _translated(message):
            found = theirs.get(message.id, message.context)
            if found is not None and _translated(found) and not found.fuzzy:
                message.string = found.string
                filled += 1
    write("zh", catalog)
    print(f"filled {filled} Chinese entries from {other}")


def fill(path: Path) -> None:
    import json

    given = json.loads(path.read_text(encoding="utf-8"))
    catalog = read("zh")
    unknown = []
    for english, chinese in given.items():
        message = catalog.get(english)
        if message is None:  # a plural is found by its singular
            message = next((m for m in catalog if isinstance(m.id, tuple) and m.id[0] == english), None)
        if message is None:
            unknown.append(english)
            continue
        message.string = tuple(chinese) if isinstance(message.id, tuple) else chinese
        message.flags.discard("fuzzy")
    write("zh", catalog)
    print(f"set {len(given) - len(unknown)} Chinese entries; not in the catalog (run update first?): {len(unknown)}")
    for english in unknown:
        print(f"  {english!r}")


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "check"
    if command == "update":
        update()
    elif command == "todo":
        todo()
    elif command == "fill":
        fill(Path(argv[1]))
    elif command == "merge":
        merge(Path(argv[1]))
    elif command == "check":
        tmpl = template()
        bad = {lang: problems(lang, tmpl) for lang in LANGUAGES}
        for lang, lines in bad.items():
            for line in lines:
                print(f"{lang}: {line}")
        print(f"{len(tmpl)} messages; " + ", ".join(f"{lang}: {len(lines)} problems" for lang, lines in bad.items()))
        return 1 if any(bad.values()) else 0
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
