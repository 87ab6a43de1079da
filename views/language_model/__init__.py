"""The Language model page: a decoder-only GPT writes the next word, and an induction head copies from context."""
