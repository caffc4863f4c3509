"""Scorecards, summaries, annotations, the scoreboard. Pure except html (it writes the files)."""
