from page import page

page("All heads (floor)", all_heads=True)
