"""What the tests and the benchmarks share (never imported by the app): servers and Chromium (servers.py), nginx in
front of replicas (proxy.py), AppTest helpers (apptest.py), the catalog coverage of a page (catalog.py), texts of a
known length (texts.py), a chart measured on a projector (projector.py) and a class of scripted students (students/)."""
