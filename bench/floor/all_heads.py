from page import page

page("All heads (floor)")
