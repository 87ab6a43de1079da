from page import page

page("Attention heatmap (floor)")
