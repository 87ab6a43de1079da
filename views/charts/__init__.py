"""The chart that stays mounted across reruns (mounted.py, its JavaScript in static/), its payload (payload.py, no
Streamlit), and the heatmap with its own Layer and Head sliders (head_chart.py)."""
