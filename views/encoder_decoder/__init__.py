"""The Encoder-decoder page (page.py): the random encoder-decoder or the translator (translator_part.py), both as one
recorded pass of three attentions (run.py)."""
