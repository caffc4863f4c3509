"""Running targets: the cycle, the runner, history files, corpus files, crash logs."""
