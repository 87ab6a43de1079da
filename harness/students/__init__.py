"""A class of scripted students, each speaking Streamlit's websocket protocol: the protocol, the widgets, one student's
session script, the server's CPU and memory, the report, and the classroom that runs them (classroom.py)."""
