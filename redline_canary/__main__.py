from redline_canary.cli import entrypoint

entrypoint()
