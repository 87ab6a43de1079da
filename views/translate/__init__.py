"""The Translate page (page.py) and its parts, each a module with section(t) drawn in a fragment: steps, alignment,
heads, forcing, lens, learning, live; run.py is one decoding, computed once and shared by every part."""
