"""The server's runtime, shared by every session of a process: one memory budget (budget.py, memory.py), the models
loaded into it (models.py), forward passes kept in it (runs.py), the threads models run on (model_thread.py), and the
one live training a process may run (live_training.py). Below views/, above model/."""
