"""One module per page, each with view(page) and declared in views/shell/registry.py."""
