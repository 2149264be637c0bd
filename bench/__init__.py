"""mafiabot's benchmark: the body side by side with its floor and its peers, one run, one client.

Run it with `python -m bench` (or `make bench`); see bench/README.md.
"""
