"""The Ask page: a student asks a real chat model a question and sees where each word of its answer came from."""
