"""redline-canary: is your automated pull-request reviewer still working?"""

__version__ = "0.1.0"
