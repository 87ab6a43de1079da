"""tests/e2e/test_download_failure.py serves this page: one download whose file cannot be built, in a fragment as on the
heatmap page, and one that works, outside it, as on the masks page."""
from views.widgets import downloads, link_writes


def broken() -> bytes:
    raise RuntimeError("/srv/models/private could not be read")  # a server path: it must not reach the page


@link_writes.fragment
def in_a_fragment() -> None:
    downloads.button("Download the broken file", broken, "broken.npz", "application/octet-stream")


in_a_fragment()
downloads.button("Download the good file", lambda: b"fine", "good.txt", "text/plain")
