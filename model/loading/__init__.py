"""Where models come from and what they cost: reading a checkpoint without trusting it (checkpoint.py), the operator's
directories (directories.py), the list of sources and loading them (sources.py, source_types.py), and each model's
bytes known before it is built (footprint.py)."""
