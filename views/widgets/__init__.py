"""Widgets bound to the link: each starts from ?name= and writes its value back (state), the model and text pickers,
the special tokens switch, downloads and the names of the files they give."""
