"""Helpers the test tiers share: the sandbox, the CLI, record factories, the action runner."""
