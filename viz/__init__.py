"""Pure figure builders: numpy arrays in, plotly Figures out (no streamlit, no model)."""
